"""The demo gym's assistant, configured to show every state an owner can set.

``nutrition``, ``classes`` and ``memberships`` are connected and ``stripe`` is not
(so its tools are hidden); every tool is enabled; reads, ``handoff_to_staff`` and the
nutrition and class writes run automatically; ``freeze_membership`` (and the refund,
once Stripe is connected) waits for staff approval.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import jwt
from django.db import transaction

from agents.embedding import origin_normalized
from agents.models import Agent
from agents.services import agent_create, provider_missing_key
from gymnasia.demo import DEMO_SLUG, DemoSeed, demo_gym_seed
from gymnasia.errors import InvalidValue
from gymnasia.gyms.models import Member
from tools.models import AgentToolSetting, Integration
from tools.registry import published_registry

DEMO_AGENT_NAME = "Asistente de Gymnasia Demo"
DEMO_INSTRUCTIONS = (
    "Eres el asistente del gimnasio Gymnasia Demo. Responde en el idioma del socio, "
    "con frases cortas. Usa las herramientas para cualquier dato: no inventes cifras."
)
DEMO_SITE_ORIGIN = "http://localhost:8000"
GATED_TOOLS = frozenset({"freeze_membership", "refund_payment"})
CONNECTED = (
    Integration.Kind.NUTRITION,
    Integration.Kind.CLASSES,
    Integration.Kind.MEMBERSHIPS,
)


@dataclass
class DemoAgentSeed:
    gym: DemoSeed
    agent: Agent


@transaction.atomic
def demo_seed(
    *,
    provider: str | None = None,
    model: str | None = None,
    site_origin: str = DEMO_SITE_ORIGIN,
) -> DemoAgentSeed:
    """Create what is missing of the demo gym and its assistant; what exists
    stays as the owner left it (an integration disconnected, a tool switched off
    or made automatic survive a restart of ``make run``).

    ``provider`` and ``model`` update the demo agent in place; without them an
    existing agent keeps its own. ``site_origin`` (the demo gym's website, where the
    widget is embedded) joins the agent's allowed origins when it is missing.
    """
    if provider is not None and provider_missing_key(provider):
        raise InvalidValue(
            f"The {provider} provider needs {provider_missing_key(provider)} in the environment."
        )
    origin = origin_normalized(site_origin)
    if origin is None:
        raise InvalidValue(
            f"{site_origin} is not an origin like http://localhost:8000."
        )
    gym = demo_gym_seed()
    business = gym.business
    for kind in Integration.Kind.values:
        if kind == Integration.Kind.MINDBODY:
            continue  # the demo gym keeps its classes in Gymnasia itself
        status = (
            Integration.Status.CONNECTED
            if kind in CONNECTED
            else Integration.Status.DISCONNECTED
        )
        Integration.objects.get_or_create(
            business=business, kind=kind, defaults={"status": status}
        )
    agent = Agent.objects.filter(business=business, name=DEMO_AGENT_NAME).first()
    if agent is None:
        agent = agent_create(
            business=business,
            name=DEMO_AGENT_NAME,
            language="es",
            instructions=DEMO_INSTRUCTIONS,
            provider=provider or Agent.Provider.OFFLINE,
            model=model or "",
            allowed_origins=origin,
        )
    else:
        changed = []
        if origin not in agent.origins():
            agent.allowed_origins = "\n".join([*agent.origins(), origin])
            changed.append("allowed_origins")
        if provider is not None and agent.provider != provider:
            agent.provider = provider
            changed.append("provider")
        if model is not None and agent.model != model:
            agent.model = model
            changed.append("model")
        if changed:
            agent.save(update_fields=changed)
    for tool in published_registry():
        mode = (
            AgentToolSetting.Mode.APPROVAL
            if tool.name in GATED_TOOLS
            else AgentToolSetting.Mode.AUTOMATIC
        )
        AgentToolSetting.objects.get_or_create(
            agent=agent, tool_name=tool.name, defaults={"enabled": True, "mode": mode}
        )
    return DemoAgentSeed(gym=gym, agent=agent)


def demo_agent() -> Agent | None:
    """The demo gym's assistant, when the demo has been seeded."""
    return (
        Agent.objects.select_related("business")
        .filter(business__slug=DEMO_SLUG, name=DEMO_AGENT_NAME)
        .first()
    )


def demo_identity_token(*, agent: Agent, member: Member, expired: bool = False) -> str:
    """What a gym's back end signs for its page when a member is signed in (the
    demo site plays that part); ``expired`` makes one the API must refuse."""
    now = int(time.time())
    claims = {
        "sub": member.external_id,
        "aud": agent.public_key,
        "exp": now - 120 if expired else now + 3600,
        "name": member.name,
    }
    return jwt.encode(claims, agent.identity_secret, algorithm="HS256")
