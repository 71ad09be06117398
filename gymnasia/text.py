"""Text normalisation shared by the domain's searches."""

from __future__ import annotations

import unicodedata


def fold(text: str) -> str:
    """Lower-case, accent-free form of a text, for matching what members type."""
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(bare.casefold().split())
