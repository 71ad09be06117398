"""Text shared by the app: the folded form searches match, choices' labels, and
what a database column can store."""

from __future__ import annotations

import unicodedata
from typing import Any

from django.db.models import Choices
from django.utils.translation import gettext as _

from gymnasia.errors import InvalidValue

#: Typographic apostrophes (phones put them in for "don't"), as typed on a keyboard.
APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})


def fold(text: str) -> str:
    """Lower-case, accent-free form of a text, for matching what members type:
    "don't" typed with a phone's apostrophe (U+2019) is "don't"."""
    decomposed = unicodedata.normalize("NFKD", text.translate(APOSTROPHES))
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(bare.casefold().split())


def choice_labels(choices: type[Choices]) -> dict[str, str]:
    """Each choice's label in the active language, translated once for a page
    that shows many: a model's ``get_<field>_display`` translates every choice of
    the field at each call."""
    return {value: str(label) for value, label in choices.choices}


#: What stands for a character no database column takes.
REPLACEMENT = "\ufffd"


def storable(value: Any) -> bool:
    """Whether every string in a JSON value can be stored: JSON lets a body (or a
    model's tool call) spell lone surrogates and NUL characters, which no database
    column takes. Walked without recursion: a body may nest as deep as a JSON
    parser lets it."""
    waiting = [value]
    while waiting:
        item = waiting.pop()
        if isinstance(item, str):
            if not text_storable(item):
                return False
        elif isinstance(item, dict):
            waiting.extend(item.keys())
            waiting.extend(item.values())
        elif isinstance(item, list):
            waiting.extend(item)
    return True


def text_storable(text: str) -> bool:
    """Whether a string can be stored: no NUL character, no lone surrogate."""
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def storable_text(text: str) -> str:
    """The text with each character no database column takes replaced by U+FFFD."""
    if storable(text):
        return text
    return "".join(
        REPLACEMENT if ch == "\x00" or "\ud800" <= ch <= "\udfff" else ch for ch in text
    )


def storable_json(value: Any) -> Any:
    """A copy of a JSON value (tuples as lists) with its strings, keys too, made
    storable. Walked without recursion, as ``storable`` is: a model's arguments,
    parsed by its SDK, may nest as deep as a JSON parser lets them."""
    top: list[Any] = [None]
    waiting: list[tuple[Any, Any, Any]] = [(value, top, 0)]
    while waiting:
        item, parent, place = waiting.pop()
        if isinstance(item, str):
            parent[place] = storable_text(item)
        elif isinstance(item, dict):
            copy: dict[Any, Any] = {}
            parent[place] = copy
            for key, inner in item.items():
                key = storable_text(key) if isinstance(key, str) else key
                copy[key] = None  # its place, in the original's order
                waiting.append((inner, copy, key))
        elif isinstance(item, list | tuple):
            items: list[Any] = [None] * len(item)
            parent[place] = items
            waiting.extend((inner, items, n) for n, inner in enumerate(item))
        else:
            parent[place] = item
    return top[0]


def text_checked_storable(text: str) -> None:
    """Refuse text people typed that no database column takes (a NUL character),
    with a reason they can read, before anything is changed."""
    if not storable(text):
        raise InvalidValue(
            _("The text cannot contain NUL characters."), code="text_unstorable"
        )


#: What a spreadsheet reads as the start of a formula in a CSV cell (OWASP's
#: CSV-injection guidance).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """A CSV cell that no spreadsheet evaluates: text starting as a formula does
    is written after a single quote; numbers and other text as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return f"'{value}"
    return value
