"""A date or a moment in a template as people write it (``gymnasia.when``):
``{{ action.created_at|written }}`` reads «lunes 7 de diciembre, 10:02» at the
active time zone's clock."""

from __future__ import annotations

import datetime

from django import template

from gymnasia.when import when_written

register = template.Library()


@register.filter
def written(value: datetime.date | None) -> str:
    """``value`` in the active language; nothing for no value."""
    return when_written(value) if value else ""
