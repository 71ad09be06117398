"""Text normalisation shared by the domain's searches."""

from __future__ import annotations

import unicodedata

#: Typographic apostrophes (phones put them in for "don't"), as typed on a keyboard.
APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})


def fold(text: str) -> str:
    """Lower-case, accent-free form of a text, for matching what members type:
    "don't" typed with a phone's apostrophe (U+2019) is "don't"."""
    decomposed = unicodedata.normalize("NFKD", text.translate(APOSTROPHES))
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(bare.casefold().split())
