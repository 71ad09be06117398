"""R12: credentials are encrypted at rest and never reach a result, a log or a page."""

from __future__ import annotations

import io
import logging
import secrets

import pytest
from cryptography.fernet import Fernet
from django.core.management import call_command

from tests.factories import StaffRoleFactory
from tests.fakes.stripe_server import running_fake_stripe
from tools.crypto import CannotDecrypt, decrypt, encrypt, masked, rotate
from tools.models import Integration, ToolCallLog

pytestmark = pytest.mark.django_db


def test_encryption_round_trips_and_hides_the_text():
    token = encrypt("sk_test_hidden_value_123")
    assert "hidden_value" not in token
    assert decrypt(token) == "sk_test_hidden_value_123"


def test_keys_rotate_without_losing_values(settings):
    old_key = settings.FIELD_ENCRYPTION_KEYS[0]
    token = encrypt("secret")
    settings.FIELD_ENCRYPTION_KEYS = [Fernet.generate_key().decode(), old_key]
    assert decrypt(token) == "secret"
    rotated = rotate(token)
    settings.FIELD_ENCRYPTION_KEYS = settings.FIELD_ENCRYPTION_KEYS[:1]
    assert decrypt(rotated) == "secret"
    with pytest.raises(CannotDecrypt):
        decrypt(token)


def test_masked_shows_at_most_the_last_four_characters():
    assert masked("sk_test_abcdefghijkl1234") == "••••1234"
    assert masked("short") == "••••"


def test_a_canary_credential_never_leaves_the_app(world, client, caplog):
    canary = "sk_test_CANARY" + secrets.token_hex(12)
    caplog.set_level(logging.DEBUG)
    for name in ("httpx", "httpx2", "httpcore", "tools", "agents", "django"):
        caplog.set_level(logging.DEBUG, logger=name)
    with running_fake_stripe(canary) as fake:
        world.connect_stripe(fake)
        listed = world.call("list_payments", {})
        refunded = world.call(
            "refund_payment",
            {"payment_id": world.ids["payment_id:towel"], "amount": 5},
            call_id="call-2",
        )
        fake.forget_refunds = True
        failed = world.call(
            "refund_payment",
            {"payment_id": world.ids["payment_id:towel"], "amount": 6},
            call_id="call-3",
        )
    down = world.call("list_payments", {}, call_id="call-4")  # Stripe is gone now
    assert (listed.status, refunded.status, failed.status) == ("ok", "ok", "failed")
    assert down.status == "unavailable"

    dump = io.StringIO()
    call_command("dumpdata", "tools", "approvals", "agents", stdout=dump)
    owner = StaffRoleFactory(business=world.business, role="owner").user
    client.force_login(owner)
    integration = Integration.objects.get(kind="stripe")
    pages = [
        client.get(url).content.decode()
        for url in (
            "/admin/tools/integration/",
            f"/admin/tools/integration/{integration.pk}/change/",
            "/admin/tools/toolcalllog/",
            *(
                f"/admin/tools/toolcalllog/{log.pk}/change/"
                for log in ToolCallLog.objects.all()
            ),
        )
    ]
    results = [str(r.payload) for r in (listed, refunded, failed, down)]
    places = {
        "tool results": "\n".join(results),
        "database dump": dump.getvalue(),
        "log output": caplog.text,
        "admin pages": "\n".join(pages),
    }
    assert ToolCallLog.objects.count() == 4
    # The HTTP client's own log lines were captured too.
    assert "HTTP Request" in caplog.text
    assert "••••" in pages[1]
    for place, text in places.items():
        assert canary not in text, place
        assert canary[8:] not in text, place
