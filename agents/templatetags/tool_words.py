"""Template words for the tools an agent may use, as the owner reads them."""

from __future__ import annotations

from django import template

from tools.presentation import tool_title as title_of

register = template.Library()


@register.filter
def tool_title(name: str | None) -> str:
    """A tool's title in the active language (``""`` for no tool): the admin's
    rows of tool settings name each control by it, so a screen reader says
    which tool a control sets, not only "combo box"."""
    return title_of(name) if name else ""
