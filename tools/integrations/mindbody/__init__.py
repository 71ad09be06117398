"""The ``mindbody`` integration: the gym's own Mindbody site (Public API v6).

A gym that keeps its classes and contracts in Mindbody connects it in admin (site
id, API key, a staff user's name and password, all encrypted) and says which kinds
it serves. The tools of those kinds keep their names, arguments and results; ids
are Mindbody's. ``client.py`` speaks HTTP, ``token.py`` keeps the staff user
token, then one module per kind it serves.
"""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

#: The tools each kind's Mindbody client serves. A tool of the kind not listed
#: (``freeze_membership``) stays on the built-in domain, and the agent's page
#: says why (``STAYS_BUILT_IN``).
SERVED_TOOLS: dict[str, frozenset[str]] = {
    "classes": frozenset(
        {"list_classes", "list_my_bookings", "book_class", "cancel_booking"}
    ),
    "memberships": frozenset({"get_membership"}),
}

#: Why a tool of a kind Mindbody serves stays on the built-in domain (R8): the
#: agent's page says it beside the tool.
STAYS_BUILT_IN = {
    "freeze_membership": _(
        "Mindbody can suspend a contract, but none of its reads shows the days "
        "of a suspension, so a freeze could never be confirmed there: freezes "
        "stay in Gymnasia's own memberships."
    ),
}
