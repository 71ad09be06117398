"""The three filters (R3): what an agent offers, and why the rest is hidden."""

from __future__ import annotations

import itertools
from decimal import Decimal

import pytest

from agents.services import agent_create
from gymnasia.gyms.models import Member
from tests.factories import BusinessFactory, MemberFactory
from tools.models import AgentToolSetting, Integration
from tools.registry import ToolDeclaration, build_registry
from tools.selection import ToolPolicy, offered_tools
from tools.types import Outcome

pytestmark = pytest.mark.django_db

INTEGRATION_STATES = ["missing", "disconnected", "failing", "connected"]
SETTINGS = ["none", "disabled", "enabled"]
MODES = ["auto", "gated"]
IDENTITIES = ["member", "anonymous"]
# tool → (integration kind, needs a member)
TOOLS = {
    "search_foods": ("nutrition", False),
    "get_meal_diary": ("nutrition", True),
    "refund_payment": ("stripe", True),
    "handoff_to_staff": (None, False),
    "list_my_requests": (None, True),
}


def expected(tool, state, setting, identity):
    """What DESIGN.md R3 says, filter by filter, in order."""
    kind, needs_member = TOOLS[tool]
    if kind is not None and state == "failing":
        return "integration_failing"
    if kind is not None and state != "connected":
        return "integration_not_connected"
    if setting != "enabled":
        return "disabled"
    if needs_member and identity == "anonymous":
        return "needs_member"
    return None


@pytest.mark.parametrize(
    ("tool", "state", "setting", "mode", "identity"),
    list(itertools.product(TOOLS, INTEGRATION_STATES, SETTINGS, MODES, IDENTITIES)),
)
def test_filter_matrix(tool, state, setting, mode, identity):
    business = BusinessFactory()
    agent = agent_create(business=business, name="A")
    kind = TOOLS[tool][0]
    if kind is not None and state != "missing":
        Integration.objects.create(business=business, kind=kind, status=state)
    if setting != "none":
        AgentToolSetting.objects.create(
            agent=agent, tool_name=tool, enabled=setting == "enabled", mode=mode
        )
    member = MemberFactory(business=business) if identity == "member" else None

    selection = offered_tools(agent, member)

    reason = expected(tool, state, setting, identity)
    if reason is None:
        assert selection.offered[tool] == ToolPolicy(
            mode=mode, approval_valid_for=selection.offered[tool].approval_valid_for
        )
        assert tool not in selection.excluded
    else:
        assert tool not in selection.offered
        assert selection.excluded[tool] == reason
    assert set(selection.offered) | set(selection.excluded) >= set(TOOLS)


def test_amount_limits_are_part_of_the_policy():
    business = BusinessFactory()
    agent = agent_create(business=business, name="A")
    Integration.objects.create(business=business, kind="stripe", status="connected")
    AgentToolSetting.objects.create(
        agent=agent,
        tool_name="refund_payment",
        enabled=True,
        mode="gated",
        auto_limit=Decimal("20"),
        max_amount=Decimal("100"),
    )
    policy = offered_tools(agent, MemberFactory(business=business)).offered[
        "refund_payment"
    ]
    assert (policy.auto_limit, policy.max_amount) == (Decimal("20"), Decimal("100"))
    assert not policy.gated_for(Decimal("20"))
    assert policy.gated_for(Decimal("20.01"))


def test_the_offered_specs_are_only_the_offered_tools():
    business = BusinessFactory()
    agent = agent_create(business=business, name="A")
    Integration.objects.create(business=business, kind="nutrition", status="connected")
    for name in ("search_foods", "get_meal_diary"):
        AgentToolSetting.objects.create(
            agent=agent, tool_name=name, enabled=True, mode="auto"
        )
    specs = offered_tools(agent, None).specs()
    assert [spec.name for spec in specs] == ["search_foods"]
    assert specs[0].parameters["additionalProperties"] is False
    # The same spec object every turn, so what adapters encode of it is kept.
    assert offered_tools(agent, None).specs()[0] is specs[0]


def _registry(size):
    declarations = [
        ToolDeclaration(
            name=f"tool_{n}",
            description="x",
            parameters={
                "type": "object",
                "properties": {},
                "additionalProperties": False,
            },
            effect="read",
            needs_member=n % 2 == 0,
            integration=["nutrition", "classes", "memberships", "stripe"][n % 4],
        )
        for n in range(size)
    ]
    handler = lambda ctx, args: Outcome("ok")  # noqa: E731
    return build_registry(declarations, {d.name: handler for d in declarations}, {})


@pytest.mark.parametrize("size", [5, 50])
def test_offered_tools_uses_a_constant_number_of_queries(
    size, django_assert_max_num_queries
):
    business = BusinessFactory()
    agent = agent_create(business=business, name="A")
    for kind in ("nutrition", "classes", "memberships", "stripe"):
        Integration.objects.create(business=business, kind=kind, status="connected")
    registry = _registry(size)
    for tool in registry:
        AgentToolSetting.objects.create(agent=agent, tool_name=tool.name, enabled=True)
    member = Member.objects.create(business=business, external_id="m")
    with django_assert_max_num_queries(3):
        selection = offered_tools(agent, member, registry=registry)
    assert len(selection.offered) == size
