"""The built-in ``memberships`` integration: memberships and their freezes."""

from __future__ import annotations

import datetime
from typing import Any

from gymnasia.gyms.models import Member
from gymnasia.gyms.selectors import business_today
from gymnasia.memberships.models import MembershipFreeze
from gymnasia.memberships.selectors import membership_current, membership_state_on
from gymnasia.memberships.services import membership_freeze
from tools.integrations.builtin import BuiltinClient


def _freeze(freeze: MembershipFreeze) -> dict[str, Any]:
    return {
        "freeze_id": freeze.pk,
        "start": freeze.start.isoformat(),
        "end": freeze.end.isoformat(),
        "days": freeze.days,
    }


class MembershipsClient(BuiltinClient):
    kind = "memberships"
    writes = frozenset({"freeze"})

    def current(self, *, member: Member) -> dict[str, Any] | None:
        membership = self._read(
            lambda: membership_current(business=self.business, member=member)
        )
        if membership is None:
            return None
        today = business_today(business=self.business)
        return {
            "plan": membership.plan,
            "status": membership_state_on(membership=membership, day=today),
            "starts_on": membership.starts_on.isoformat(),
            "ends_on": membership.ends_on.isoformat(),
            "freezes": [_freeze(f) for f in membership.freezes.all()],
        }

    def freeze(
        self, *, member: Member, start: datetime.date, end: datetime.date
    ) -> dict[str, Any]:
        freeze = self._write(
            lambda: membership_freeze(
                business=self.business, member=member, start=start, end=end
            )
        )
        return {
            **_freeze(freeze),
            "membership_ends_on": freeze.membership.ends_on.isoformat(),
        }

    def find_freeze(self, *, member: Member, freeze_id: int) -> dict[str, Any] | None:
        freeze = self._read(
            lambda: MembershipFreeze.objects.filter(
                business=self.business, membership__member=member, pk=freeze_id
            ).first()
        )
        return _freeze(freeze) if freeze is not None else None
