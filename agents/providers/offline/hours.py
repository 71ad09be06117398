"""The hours members name: a time of day ("a las 7 de la tarde", "19:30", "7pm")
and a part of the day ("por la tarde", "in the morning")."""

from __future__ import annotations

import re
from typing import NamedTuple

from agents.providers.offline.words import THE_MORNING

#: What says that an hour just said is after noon ("a las 7 de la tarde", "7pm").
AFTER_NOON = re.compile(r"\s*(?:(?:de|por) la (?:tarde|noche)\b|p\.?m\b\.?)")


def time_named(said: str) -> tuple[int, int | None] | None:
    """The time of day a (folded) message names: "07:30", "19.00", "a las 7",
    "at 7", "la de las 7", "a las 7 de la tarde", "7pm"; the minutes are None
    when only the hour is said."""
    exact = re.search(r"\b([01]?\d|2[0-3])[:.h]([0-5]\d)\b", said)
    found = exact or (
        re.search(r"\b(?:a las|a la|de las|de la|at)\s+([01]?\d|2[0-3])\b", said)
        or re.search(r"\b(1[0-2]|0?[1-9])(?=\s*[ap]\.?m\b)", said)
    )
    if found is None:
        return None
    hour = int(found.group(1))
    if hour < 12 and AFTER_NOON.match(said, found.end()):
        hour += 12
    return hour, int(exact.group(2)) if exact else None


class PartOfDay(NamedTuple):
    """A part of the day ("por la tarde"): the hours a class that starts in it
    starts at (from, up to but not including), and how it is said."""

    start: int
    end: int
    spanish: str
    english: str


#: The parts of a day members name ("good morning" greets, naming none).
MORNING = PartOfDay(0, 12, "por la mañana", "in the morning")
PARTS_OF_DAY = (
    (THE_MORNING, MORNING),
    (re.compile(r"(?<!good )\bmornings?\b"), MORNING),
    (
        re.compile(r"\b(?:(?:por|de|en|a) la|esta) tarde\b|(?<!good )\bafternoons?\b"),
        PartOfDay(12, 21, "por la tarde", "in the afternoon"),
    ),
    (
        re.compile(r"(?<!good )\bevenings?\b"),
        PartOfDay(17, 24, "por la tarde", "in the evening"),
    ),
    (
        re.compile(
            r"\b(?:(?:por|de|en|a) la|esta) noche\b|(?<!good )\bnights?\b|\btonight\b"
        ),
        PartOfDay(20, 24, "por la noche", "at night"),
    ),
)


def part_of_day_named(said: str) -> PartOfDay | None:
    """The part of the day a (folded) message names ("por la tarde", "in the
    morning"), if any."""
    return next((part for words, part in PARTS_OF_DAY if words.search(said)), None)
