"""The closed registry: published names, handlers and verifiers match one to one."""

from __future__ import annotations

import pytest
from django.core import checks

from tools.registry import (
    HANDLERS,
    VERIFIERS,
    RegistryMismatch,
    ToolDeclaration,
    build_registry,
)
from tools.specs import PUBLISHED
from tools.types import Outcome

DESIGN_TOOLS = {
    "search_foods": ("read", "nutrition", False),
    "get_meal_diary": ("read", "nutrition", True),
    "add_food_to_meal": ("write", "nutrition", True),
    "remove_meal_entry": ("write", "nutrition", True),
    "list_classes": ("read", "classes", False),
    "list_my_bookings": ("read", "classes", True),
    "book_class": ("write", "classes", True),
    "cancel_booking": ("write", "classes", True),
    "get_membership": ("read", "memberships", True),
    "freeze_membership": ("write", "memberships", True),
    "list_payments": ("read", "stripe", True),
    "refund_payment": ("write", "stripe", True),
    "list_my_requests": ("read", None, True),
    "handoff_to_staff": ("write", None, False),
}


def test_registry_publishes_the_design_names_with_their_kind_and_scope():
    published = {d.name: (d.effect, d.integration, d.needs_member) for d in PUBLISHED}
    assert published == DESIGN_TOOLS


def test_registry_published_and_handled_tools_match():
    assert set(HANDLERS) == {d.name for d in PUBLISHED}
    assert set(VERIFIERS) == {d.name for d in PUBLISHED if d.effect == "write"}


def test_registry_check_passes():
    errors = [m for m in checks.run_checks() if m.id == "tools.E001"]
    assert errors == []


def test_registry_never_takes_who_from_arguments():
    forbidden = {"member", "member_id", "business", "business_id", "user", "user_id"}
    for declaration in PUBLISHED:
        assert not forbidden & set(declaration.parameters["properties"]), (
            declaration.name
        )


def _declaration(name: str, effect: str = "read") -> ToolDeclaration:
    return ToolDeclaration(
        name=name,
        description="x",
        parameters={"type": "object", "properties": {}, "additionalProperties": False},
        effect=effect,  # type: ignore[arg-type]
        needs_member=False,
        integration=None,
    )


def _handler(ctx, args):
    return Outcome("ok")


def _verifier(ctx, args, outcome):
    return "verified"


@pytest.mark.parametrize(
    ("declarations", "handlers", "verifiers", "problem"),
    [
        ([_declaration("a")], {}, {}, "published without a handler: a"),
        ([], {"a": _handler}, {}, "handler without a published tool: a"),
        (
            [_declaration("w", "write")],
            {"w": _handler},
            {},
            "write without a verifier: w",
        ),
        (
            [_declaration("a")],
            {"a": _handler},
            {"a": _verifier},
            "verifier of a read: a",
        ),
    ],
)
def test_registry_refuses_a_mismatch(declarations, handlers, verifiers, problem):
    with pytest.raises(RegistryMismatch, match=problem):
        build_registry(declarations, handlers, verifiers)


def test_registry_refuses_open_schemas():
    loose = ToolDeclaration(
        name="loose",
        description="x",
        parameters={"type": "object", "properties": {}},
        effect="read",
        needs_member=False,
        integration=None,
    )
    with pytest.raises(RegistryMismatch, match="without additional properties"):
        build_registry([loose], {"loose": _handler}, {})
