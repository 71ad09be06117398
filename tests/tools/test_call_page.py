"""A call's own page in admin speaks the reader's words: its outcome, its
verification, what was asked as a sentence, each step with its time in the
reader's notation, what happened after it; the exact result the model received
is a JSON download of that call, for its gym's owners and staff only, with no
secret in it."""

from __future__ import annotations

import json
import re

import pytest

from tests.factories import StaffRoleFactory
from tests.test_plain_words import status_codes_shown, visible_text
from tools.calls import tool_call_decide
from tools.models import ToolCallLog

pytestmark = pytest.mark.django_db


@pytest.fixture
def waiting(world) -> ToolCallLog:
    """A booking of Spinning (tomorrow at 18:00, with Marta) waiting for staff."""
    result = world.call(
        "book_class",
        {"session_id": world.ids["session_id:spinning"]},
        offered={"book_class": "gated"},
    )
    assert result.payload["status"] == "pending_approval"
    return ToolCallLog.objects.get(pk=result.payload["pending_action"])


def _page(client, call: ToolCallLog, language: str, role: str = "owner") -> str:
    user = StaffRoleFactory(business=call.business, role=role).user
    client.force_login(user)
    response = client.get(
        f"/admin/tools/toolcalllog/{call.pk}/change/",
        headers={"Accept-Language": language},
    )
    assert response.status_code == 200
    return response.content.decode()


def test_a_waiting_booking_reads_in_spanish_words(client, waiting):
    page = _page(client, waiting, "es")
    text = visible_text(page)

    assert "esperando aprobación" in text and "no aplicado" in text
    assert re.search(r"Reservar Spinning el \w+ \d+ de \w+.*, 18:00, con Marta", text)
    assert re.search(r"ofrecida \(\d+,\d+ ms\) → argumentos válidos", text)
    assert "Descargar esta llamada" in text
    # Nowhere in the page, not even set apart as code or in an attribute.
    assert "pending_approval" not in page and "not_applied" not in page
    assert status_codes_shown(page, "es") == []


def test_a_waiting_booking_reads_in_english_words(client, waiting):
    text = visible_text(_page(client, waiting, "en"))

    assert "waiting for approval" in text and "not applied" in text
    assert re.search(r"Book Spinning on \w+ \d+ \w+.*, 18:00, with Marta", text)
    assert re.search(r"offered \(\d+\.\d+ ms\) → arguments valid", text)


def test_what_happened_after_reads_in_words(client, waiting):
    """Staff's rejection and its reason, as words: not the record's parameters."""
    assert tool_call_decide(call_id=waiting.pk, to="rejected", reason="Ya no")

    text = visible_text(_page(client, waiting, "es"))

    assert "rechazada" in text and "motivo: Ya no" in text
    assert '"reason"' not in text


def _download(client, call: ToolCallLog):
    return client.get(f"/admin/tools/toolcalllog/{call.pk}/record.json")


@pytest.mark.parametrize("role", ["owner", "staff"])
def test_the_exact_result_is_the_calls_download(client, waiting, role):
    client.force_login(StaffRoleFactory(business=waiting.business, role=role).user)

    response = _download(client, waiting)

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response["Content-Disposition"] == (
        f'attachment; filename="call-{waiting.pk}.json"'
    )
    record = json.loads(response.content)
    assert record["result"] == waiting.result
    assert record["result"]["status"] == "pending_approval"
    assert record["result"]["verification"] == "not_applied"
    assert (record["tool"], record["status"]) == ("book_class", "pending_approval")
    assert record["steps"][0]["step"] == "offered"


def test_another_gyms_call_is_not_found_and_a_stranger_signs_in(client, waiting):
    outsider = StaffRoleFactory(role="owner").user  # the owner of another gym
    client.force_login(outsider)
    assert _download(client, waiting).status_code == 404
    assert _download(client, ToolCallLog(pk=waiting.pk.hex[::-1])).status_code == 404

    client.logout()
    response = _download(client, waiting)
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


def test_the_download_holds_no_secret(client, world, stripe):
    """A refund waiting for staff was checked against the gym's Stripe account
    with its key: neither its record nor its page holds the key."""
    world.connect_stripe(stripe)
    result = world.call(
        "refund_payment",
        {"payment_id": world.ids["payment_id:towel"], "amount": 5},
        offered={"refund_payment": "gated"},
    )
    call = ToolCallLog.objects.get(pk=result.payload["pending_action"])
    client.force_login(StaffRoleFactory(business=world.business, role="owner").user)

    record = _download(client, call).content.decode()
    page = client.get(f"/admin/tools/toolcalllog/{call.pk}/change/").content.decode()

    assert '"refund_payment"' in record
    assert stripe.secret_key not in record and stripe.secret_key not in page
    assert stripe.secret_key[-8:] not in record
