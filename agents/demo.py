"""The demo gym's assistant, configured to show every state an owner can set.

``nutrition``, ``classes`` and ``memberships`` are connected and ``stripe`` is not
(so its tools are hidden); every tool is enabled; reads, ``handoff_to_staff`` and the
nutrition and class writes run automatically; ``freeze_membership`` (and the refund,
once Stripe is connected) waits for staff approval.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from agents.models import Agent
from agents.services import agent_create, provider_missing_key
from gymnasia.demo import DemoSeed, demo_gym_seed
from gymnasia.errors import InvalidValue
from tools.models import AgentToolSetting, Integration
from tools.registry import published_registry

DEMO_AGENT_NAME = "Asistente de Gymnasia Demo"
DEMO_INSTRUCTIONS = (
    "Eres el asistente del gimnasio Gymnasia Demo. Responde en el idioma del socio, "
    "con frases cortas. Usa las herramientas para cualquier dato: no inventes cifras."
)
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
    *, provider: str | None = None, model: str | None = None
) -> DemoAgentSeed:
    """Create or complete the demo gym and its assistant.

    ``provider`` and ``model`` update the demo agent in place; without them an
    existing agent keeps its own.
    """
    if provider is not None and provider_missing_key(provider):
        raise InvalidValue(
            f"The {provider} provider needs {provider_missing_key(provider)} in the environment."
        )
    gym = demo_gym_seed()
    business = gym.business
    for kind in Integration.Kind.values:
        status = (
            Integration.Status.CONNECTED
            if kind in CONNECTED
            else Integration.Status.DISCONNECTED
        )
        integration, created = Integration.objects.get_or_create(
            business=business, kind=kind, defaults={"status": status}
        )
        if not created and kind in CONNECTED and integration.status != status:
            integration.status = status
            integration.save(update_fields=["status", "updated_at"])
    agent = Agent.objects.filter(business=business, name=DEMO_AGENT_NAME).first()
    if agent is None:
        agent = agent_create(
            business=business,
            name=DEMO_AGENT_NAME,
            language="es",
            instructions=DEMO_INSTRUCTIONS,
            provider=provider or Agent.Provider.OFFLINE,
            model=model or "",
        )
    else:
        changed = []
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
        setting, created = AgentToolSetting.objects.get_or_create(
            agent=agent, tool_name=tool.name, defaults={"enabled": True, "mode": mode}
        )
        if not created and (not setting.enabled or setting.mode != mode):
            setting.enabled, setting.mode = True, mode
            setting.save(update_fields=["enabled", "mode"])
    return DemoAgentSeed(gym=gym, agent=agent)
