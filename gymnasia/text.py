"""Text shared by the app: the folded form searches match, and choices' labels."""

from __future__ import annotations

import unicodedata

from django.db.models import Choices

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
