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
            if "\x00" in item:
                return False
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return False
        elif isinstance(item, dict):
            waiting.extend(item.keys())
            waiting.extend(item.values())
        elif isinstance(item, list):
            waiting.extend(item)
    return True


def storable_text(text: str) -> str:
    """The text with each character no database column takes replaced by U+FFFD."""
    if storable(text):
        return text
    return "".join(
        REPLACEMENT if ch == "\x00" or "\ud800" <= ch <= "\udfff" else ch for ch in text
    )


def storable_json(value: Any) -> Any:
    """A JSON value with its strings (keys too) made storable."""
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, dict):
        return {storable_text(k): storable_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [storable_json(item) for item in value]
    return value


def text_checked_storable(text: str) -> None:
    """Refuse text people typed that no database column takes (a NUL character),
    with a reason they can read, before anything is changed."""
    if not storable(text):
        raise InvalidValue(_("The text cannot contain NUL characters."))
