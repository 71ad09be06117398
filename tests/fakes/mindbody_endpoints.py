"""The fake Mindbody's endpoints: the routes of the v6 document that Gymnasia
uses, the user token's endpoints and the site's; the class and client
endpoints are mixed in from their own modules.

Only the standard library is used so the fake adds no dependency to the suite.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from tests.fakes.mindbody_classes import ClassEndpoints
from tests.fakes.mindbody_clients import ClientEndpoints
from tests.fakes.mindbody_wire import (
    PAGING,
    Refusal,
    Request,
    Response,
    check_names,
    error,
    int_list,
    invalid,
    json_body,
    ok,
    page,
)

if TYPE_CHECKING:
    from tests.fakes.mindbody_server import MindbodyFake

#: path -> (method, handler, token, site): the staff token "required",
#: "optional" (checked when sent) or "ignored"; whether the ``SiteId`` header
#: is required (the document leaves it out of ``GET /site/sites`` only).
ROUTES: dict[str, tuple[str, str, str, bool]] = {
    "/usertoken/issue": ("POST", "_issue", "ignored", True),
    "/usertoken/renew": ("POST", "_renew", "required", True),
    "/usertoken/revoke": ("DELETE", "_revoke", "required", True),
    "/site/sites": ("GET", "_sites", "optional", False),
    "/class/classes": ("GET", "_classes", "optional", True),
    "/class/classvisits": ("GET", "_class_visits", "required", True),
    "/class/addclienttoclass": ("POST", "_add_client_to_class", "required", True),
    "/class/removeclientfromclass": (
        "POST",
        "_remove_client_from_class",
        "required",
        True,
    ),
    "/client/clients": ("GET", "_clients", "required", True),
    "/client/clientvisits": ("GET", "_client_visits", "required", True),
    "/client/clientcontracts": ("GET", "_client_contracts", "required", True),
    "/client/activeclientmemberships": ("GET", "_memberships", "required", True),
    "/client/clientservices": ("GET", "_client_services", "required", True),
    "/client/suspendcontract": ("POST", "_suspend_contract", "required", True),
}

#: Renewals the document allows a token (each adds a lifetime).
MAX_RENEWALS = 7


class Endpoints(ClassEndpoints, ClientEndpoints):
    """Mixed into :class:`MindbodyFake`; handlers take their lock themselves."""

    # -------------------------------------------------------------- user token

    def _token_answer(self: MindbodyFake, token: str, expires: float) -> Response:
        """The ``IssueResponse``: ``Expires`` is UTC, ``Z`` in the utc style."""
        moment = datetime.fromtimestamp(expires, UTC).replace(microsecond=0)
        written = moment.replace(tzinfo=None).isoformat()
        return ok(
            {
                "TokenType": "Bearer",
                "AccessToken": token,
                "Expires": written + ("Z" if self.datetime_style == "utc" else ""),
                "User": {
                    "Id": 100000001,
                    "FirstName": "Gym",
                    "LastName": "Owner",
                    "Type": "Staff",
                },
            }
        )

    def _issue(self: MindbodyFake, request: Request) -> Response:
        """``POST /usertoken/issue`` with the staff user's name and password."""
        body = json_body(request, {"Username": str, "Password": str})
        if not body.get("Username") or not body.get("Password"):
            raise invalid("Username and Password are required.")
        same_user = body["Username"] == self.staff_username
        if not same_user or body["Password"] != self.staff_password:
            raise Refusal(
                error(401, "InvalidLoginCredentials", "Invalid staff credentials.")
            )
        token, expires = self._issue_token()
        return self._token_answer(token, expires)

    def _renew(self: MindbodyFake, request: Request) -> Response:
        """``POST /usertoken/renew``: one more lifetime, at most seven times."""
        token = self._presented_token(request)
        with self._lock:
            renewed = self._renewals.get(token, 0)
            if renewed >= MAX_RENEWALS:
                raise Refusal(
                    error(400, "InvalidParameter", "The token cannot be renewed again.")
                )
            self._renewals[token] = renewed + 1
            self._tokens[token] += self.token_lifetime
            expires = self._tokens[token]
        return self._token_answer(token, expires)

    def _revoke(self: MindbodyFake, request: Request) -> Response:
        """``DELETE /usertoken/revoke``: the token in ``Authorization`` ends."""
        token = self._presented_token(request)
        with self._lock:
            self._tokens.pop(token, None)
        return ok({})

    # -------------------------------------------------------------------- site

    def _sites(self: MindbodyFake, request: Request) -> Response:
        """``GET /site/sites``: the one site this key is activated for."""
        check_names(
            request.query,
            PAGING
            | {
                "request.includeLeadChannels",
                "request.includePerStaffPricing",
                "request.siteIds",
            },
        )
        wanted = int_list(request.query, "request.siteIds")
        chosen = page(request.query)
        site = {
            "Id": int(self.site_id),
            "Name": "Gymnasia Test Studio",
            "Description": "A fake Mindbody site.",
            "ContactEmail": "studio@example.com",
            "TimeZone": self.time_zone,
            "CurrencyIsoCode": "EUR",
            "CountryCode": "ES",
            "AcceptsVisa": True,
            "AcceptsMasterCard": True,
            "AcceptsAmericanExpress": False,
            "AcceptsDiscover": False,
            "AcceptsDirectDebit": False,
            "AllowsDashboardAccess": False,
            "PricingLevel": "Accelerate",
            "SmsPackageEnabled": False,
            "TaxInclusivePrices": True,
            "LogoUrl": None,
            "PageColor1": "#000000",
            "PageColor2": "#ffffff",
            "PageColor3": "#000000",
            "PageColor4": "#ffffff",
        }
        sites = [site] if not wanted or int(self.site_id) in wanted else []
        items, pagination = chosen.cut(sites)
        return ok({"PaginationResponse": pagination, "Sites": items})
