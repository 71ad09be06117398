"""What no log line may hold: the token of a decision link (``approvals.links``).

A link's first request carries its token in the address, and a web server logs
the address of every request (uvicorn's access log). This filter writes such an
address with the token left out, in every record it sees: installed on the
access log by ``gymnasia.asgi`` and on the console handler by the settings.
"""

from __future__ import annotations

import logging
import re
from typing import Any

#: A decision link's address (the page it redirects to names no token).
_LINK = re.compile(r"(/inbox/link/)(?!page/)[^\s/?#\"']+")
HIDDEN = r"\1…"


def link_tokens_hidden(value: Any) -> Any:
    """``value`` with every decision link's token left out, when it is text."""
    return _LINK.sub(HIDDEN, value) if isinstance(value, str) else value


class LinkTokensHidden(logging.Filter):
    """Leaves decision links' tokens out of a record's message and arguments,
    keeping their shape (uvicorn's access log formats its arguments itself)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = link_tokens_hidden(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(link_tokens_hidden(a) for a in record.args)
        elif isinstance(record.args, dict):
            record.args = {k: link_tokens_hidden(v) for k, v in record.args.items()}
        return True


def access_log_tokens_hidden() -> None:
    """Install the filter on uvicorn's access log (its own handler, not ours)."""
    access = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, LinkTokensHidden) for f in access.filters):
        access.addFilter(LinkTokensHidden())
