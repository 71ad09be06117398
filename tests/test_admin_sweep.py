"""A sweep over every registered admin: an owner of gym B gets nothing of gym A.

For each business-scoped ModelAdmin the owner of B requests the changelist, the
change, delete and history views of A's objects, the autocompletes and the list
filters; and posts crafted forms that point at A's objects. The same sweep run by
A's own owner sees A's objects, so the checks can see a leak when there is one.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.contrib import admin
from django.db.models import Model
from django.forms.models import model_to_dict
from django.urls import reverse

from agents.conversations import conversation_start, message_add
from agents.models import ModelPrice, WhatsAppChannel
from agents.services import agent_create
from approvals.models import Decision, Event, WebhookDelivery, WebhookEndpoint
from approvals.services import pending_action_reject
from gymnasia.gyms.admin import BusinessScopedAdmin
from tests.factories import BusinessFactory, StaffRoleFactory
from tests.tools.world import build_world
from tools.crypto import encrypt
from tools.models import AgentToolSetting, Handoff, Integration, ToolCallLog

pytestmark = pytest.mark.django_db

UNSCOPED = {"auth.user", "auth.group"}  # only superusers reach these
#: Sign-in lock-outs belong to a person, not a business: an owner sees those of
#: their own gyms' people (tests/gymnasia/test_sign_in.py).
SCOPED_BY_PERSON = {"axes.accessattempt"}


def scoped_admins() -> list[tuple[type[Model], BusinessScopedAdmin]]:
    return [
        (model, model_admin)
        for model, model_admin in admin.site._registry.items()
        if isinstance(model_admin, BusinessScopedAdmin)
    ]


def test_every_admin_is_business_scoped():
    labels = {model._meta.label_lower for model in admin.site._registry}
    scoped = {model._meta.label_lower for model, _ in scoped_admins()}
    assert labels - scoped == UNSCOPED | SCOPED_BY_PERSON


@pytest.fixture
def gym_a():
    """A gym with at least one row of every business-scoped model."""
    world = build_world()
    agent = agent_create(business=world.business, name="Agent of A")
    AgentToolSetting.objects.create(agent=agent, tool_name="search_foods", enabled=True)
    Integration.objects.create(
        business=world.business, kind="nutrition", status="connected"
    )
    world.call("search_foods", {"query": "arroz"})
    requested = world.call(
        "freeze_membership",
        {"start": world.day(10), "end": world.day(12)},
        offered={"freeze_membership": "gated"},
        call_id="call-2",
    )
    world.call("handoff_to_staff", {"reason": "A person, please."}, call_id="call-3")
    world.call(
        "freeze_membership",
        {"start": world.day(20), "end": world.day(22)},
        call_id="call-4",
    )
    staff = StaffRoleFactory(business=world.business, role="staff").user
    pending_action_reject(
        action_id=requested.payload["pending_action"], user=staff, reason="No."
    )
    conversation = conversation_start(agent=agent, member=world.member)
    message_add(conversation=conversation, role="member", text="hola")
    endpoint = WebhookEndpoint.objects.create(
        business=world.business,
        url="https://8.8.8.8/hooks/a",
        description="CRM of A",
        secret_encrypted=encrypt("s" * 32),
    )
    WebhookDelivery.objects.create(
        business=world.business,
        endpoint=endpoint,
        event=Event.objects.create(business=world.business, type="handoff.opened"),
    )
    ModelPrice.objects.create(
        business=world.business,
        model="gpt-5-mini",
        input=Decimal("0.25"),
        cached_input=Decimal("0.025"),
        output=Decimal("2"),
    )
    WhatsAppChannel.objects.create(
        agent=agent,
        api_base="https://graph.facebook.com",
        phone_number_id="106540352242922",
        business_account_id="102290129340398",
        access_token_encrypted=encrypt("EAAG" + "t" * 40),
        app_secret_encrypted=encrypt("a" * 32),
        verify_token_encrypted=encrypt("v" * 16),
    )
    assert Decision.objects.exists() and Handoff.objects.exists()
    assert ToolCallLog.objects.exists()
    return world


def objects_of(business: Any) -> dict[type[Model], list[Model]]:
    found: dict[type[Model], list[Model]] = {}
    for model, model_admin in scoped_admins():
        path = model_admin.business_path
        lookup = {"pk": business.pk} if path == "pk" else {path: business}
        found[model] = list(model._default_manager.filter(**lookup))
    return found


def sweep(client: Any, owned: dict[type[Model], list[Model]]) -> dict[str, list[str]]:
    """What of ``owned`` the signed-in user can reach, by kind of view."""
    reached: dict[str, list[str]] = {
        "list": [],
        "filter": [],
        "object": [],
        "autocomplete": [],
    }
    pks = {model: {str(obj.pk) for obj in objs} for model, objs in owned.items()}
    for model, model_admin in scoped_admins():
        info = (model._meta.app_label, model._meta.model_name)
        response = client.get(reverse("admin:{}_{}_changelist".format(*info)))
        if response.status_code == 200:
            changelist = response.context["cl"]
            listed = {str(obj.pk) for obj in changelist.result_list}
            if listed & pks[model]:
                reached["list"].append(model._meta.label)
            for spec in changelist.filter_specs:
                field = getattr(spec, "field", None)
                if field is not None and field.is_relation:
                    choices = {str(pk) for pk, _ in spec.lookup_choices}
                    if choices & pks.get(field.related_model, set()):
                        reached["filter"].append(f"{model._meta.label}.{field.name}")
        for obj in owned[model]:
            for view in ("change", "delete", "history"):
                url = reverse("admin:{}_{}_{}".format(*info, view), args=[obj.pk])
                if client.get(url).status_code != 404:
                    reached["object"].append(f"{model._meta.label} {view}")
        for field_name in model_admin.autocomplete_fields:
            related = model._meta.get_field(field_name).related_model
            response = client.get(
                reverse("admin:autocomplete"),
                {"app_label": info[0], "model_name": info[1], "field_name": field_name},
            )
            if response.status_code == 200:
                ids = {str(item["id"]) for item in response.json()["results"]}
                if ids & pks.get(related, set()):
                    reached["autocomplete"].append(f"{model._meta.label}.{field_name}")
    return reached


def test_owner_of_another_gym_reaches_nothing(client, gym_a):
    owner_b = StaffRoleFactory(business=BusinessFactory(), role="owner").user
    client.force_login(owner_b)
    assert sweep(client, objects_of(gym_a.business)) == {
        "list": [],
        "filter": [],
        "object": [],
        "autocomplete": [],
    }


def test_the_sweep_sees_a_gyms_own_objects(client, gym_a):
    owner_a = StaffRoleFactory(business=gym_a.business, role="owner").user
    client.force_login(owner_a)
    reached = sweep(client, objects_of(gym_a.business))
    assert len(reached["list"]) == len(scoped_admins())
    assert reached["filter"] and reached["autocomplete"]
    assert reached["object"]


def test_crafted_posts_with_another_gyms_ids_are_rejected(client, gym_a, row_counts):
    owner_b = StaffRoleFactory(business=BusinessFactory(), role="owner").user
    client.force_login(owner_b)
    before = row_counts()
    for model, objs in objects_of(gym_a.business).items():
        info = (model._meta.app_label, model._meta.model_name)
        for obj in objs[:1]:
            data = {
                key: ("" if value is None else getattr(value, "pk", value))
                for key, value in model_to_dict(obj).items()
            }
            data = {k: v for k, v in data.items() if not isinstance(v, list | dict)}
            client.post(reverse("admin:{}_{}_add".format(*info)), data)
            change = client.post(
                reverse("admin:{}_{}_change".format(*info), args=[obj.pk]), data
            )
            assert change.status_code == 404, model._meta.label
            delete = client.post(
                reverse("admin:{}_{}_delete".format(*info), args=[obj.pk]),
                {"post": "yes"},
            )
            assert delete.status_code == 404, model._meta.label
    assert row_counts() == before


def _state(owned: dict[type[Model], list[Model]]) -> dict[str, Any]:
    """Every field of every row, as stored now."""
    return {
        f"{model._meta.label} {obj.pk}": model_to_dict(
            model._default_manager.get(pk=obj.pk)
        )
        for model, objs in owned.items()
        for obj in objs
    }


def test_owner_at_one_gym_and_staff_at_another_changes_nothing_there(
    client, gym_a, row_counts
):
    """Owner at one gym and staff at A: Django asks an action's permission once,
    without the rows, and "owner anywhere" said yes, so such a user ran "Test
    connection" on A's integrations (which sets their status) and could delete
    A's rows from a list. Every action that changes or deletes, on every admin,
    is refused for A's rows; each change and delete view of A's rows is 403."""
    user = StaffRoleFactory(business=BusinessFactory(), role="owner").user
    StaffRoleFactory(business=gym_a.business, role="staff", user=user)
    client.force_login(user)
    theirs = objects_of(gym_a.business)
    Integration.objects.filter(business=gym_a.business).update(status="failing")
    before, stored = row_counts(), _state(theirs)
    tried = []
    for model, model_admin in scoped_admins():
        info = (model._meta.app_label, model._meta.model_name)
        selected = [str(obj.pk) for obj in theirs[model]]
        for function, name, _ in model_admin._get_base_actions():
            if not set(getattr(function, "allowed_permissions", ())) - {"view"}:
                continue
            tried.append(f"{model._meta.label} {name}")
            client.post(
                reverse("admin:{}_{}_changelist".format(*info)),
                {"action": name, "_selected_action": selected, "post": "yes"},
            )
        for obj in theirs[model][:1]:
            change = client.post(
                reverse("admin:{}_{}_change".format(*info), args=[obj.pk]), {}
            )
            delete = client.post(
                reverse("admin:{}_{}_delete".format(*info), args=[obj.pk]),
                {"post": "yes"},
            )
            assert (change.status_code, delete.status_code) == (403, 403), info
    assert "tools.Integration test_connection" in tried
    assert "gyms.Member delete_selected" in tried
    assert row_counts() == before
    assert _state(theirs) == stored


def test_the_same_user_acts_at_the_gym_they_own(client, gym_a):
    """The refusal is of the other gym's rows, not of the action: at the gym the
    user owns, "Test connection" runs."""
    own = BusinessFactory()
    user = StaffRoleFactory(business=own, role="owner").user
    StaffRoleFactory(business=gym_a.business, role="staff", user=user)
    integration = Integration.objects.create(
        business=own, kind="nutrition", status="failing"
    )
    client.force_login(user)

    client.post(
        reverse("admin:tools_integration_changelist"),
        {"action": "test_connection", "_selected_action": [str(integration.pk)]},
    )

    integration.refresh_from_db()
    assert integration.last_checked_at is not None
