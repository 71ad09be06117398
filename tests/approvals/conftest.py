"""What the tests of approvals share: the small gym of the tools' tests, a staff
member of it signed in, approvals kept from the broker, and webhook tasks
recorded instead of sent."""

from __future__ import annotations

import pytest

from approvals.tasks import deliver_webhook
from tests.factories import StaffRoleFactory
from tests.tools.conftest import world  # noqa: F401  (the same small gym)


@pytest.fixture
def staff_client(client, world):  # noqa: F811
    client.force_login(StaffRoleFactory(business=world.business, role="staff").user)
    return client


@pytest.fixture
def no_broker(monkeypatch):
    """Approval messages are recorded instead of sent, for tests where delivery is
    not under test (``pytest.mark.usefixtures("no_broker")``)."""
    sent: list[str] = []
    monkeypatch.setattr(
        "approvals.tasks.execute_approved_action.delay",
        lambda action_id: sent.append(action_id),
    )
    return sent


@pytest.fixture
def sent(monkeypatch) -> list[tuple[str, int | None]]:
    """The task messages webhooks send, recorded instead of sent: (id, countdown)."""
    messages: list[tuple[str, int | None]] = []
    monkeypatch.setattr(
        deliver_webhook, "delay", lambda pk: messages.append((pk, None))
    )
    monkeypatch.setattr(
        deliver_webhook,
        "apply_async",
        lambda args, countdown=None: messages.append((args[0], countdown)),
    )
    return messages


@pytest.fixture
def private_allowed(settings):
    settings.WEBHOOK_ALLOW_PRIVATE = True
