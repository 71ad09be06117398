"""Read an HTML form the way a browser submits it, so tests can post admin pages
with every field (inline formsets included) and change only what a person would."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any


class _FormReader(HTMLParser):
    def __init__(self, form_id: str) -> None:
        super().__init__(convert_charrefs=True)
        self.form_id = form_id
        self.inside = False
        self.data: dict[str, Any] = {}
        self._select: str | None = None
        self._select_first: str | None = None
        self._option_value: str | None = None
        self._textarea: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.inside = a.get("id") == self.form_id
            return
        if not self.inside or "disabled" in a:
            return
        name = a.get("name")
        if tag == "input" and name:
            kind = a.get("type", "text")
            if kind in ("checkbox", "radio"):
                if "checked" in a:
                    self.data[name] = a.get("value", "on")
            elif kind not in ("submit", "button", "file", "image", "reset"):
                self.data[name] = a.get("value", "")
        elif tag == "select" and name:
            self._select, self._select_first = name, None
        elif tag == "option" and self._select:
            value = a.get("value", "")
            if self._select_first is None:
                self._select_first = value
            if "selected" in a:
                self.data[self._select] = value
        elif tag == "textarea" and name:
            self._textarea = name
            self.data[name] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self.inside = False
        elif tag == "select" and self._select:
            self.data.setdefault(self._select, self._select_first or "")
            self._select = None
        elif tag == "textarea":
            self._textarea = None

    def handle_data(self, data: str) -> None:
        if self._textarea:
            self.data[self._textarea] += (
                data.lstrip("\n") if not self.data[self._textarea] else data
            )


def form_data(html: str, form_id: str) -> dict[str, Any]:
    reader = _FormReader(form_id)
    reader.feed(html)
    return reader.data


def inline_prefix_for(data: dict[str, Any], field: str, value: str) -> str:
    """The form prefix (e.g. ``tool_settings-3``) whose ``field`` has ``value``."""
    for key, current in data.items():
        if key.endswith(f"-{field}") and current == value:
            return key[: -len(field) - 1]
    raise KeyError(f"no inline form with {field}={value}")
