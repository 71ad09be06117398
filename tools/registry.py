"""The closed registry of tools (R2).

A tool is published in ``tools.specs`` (name, description, schema, effect, whether
it needs a member, the integration kind it needs) and handled in ``tools.handlers``
(its handler; for a write, its verifier, and maybe its check). ``build_registry``
joins the two and refuses any mismatch, so a published tool without a handler, or a
handler without a published tool, cannot start.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from gymnasia.gyms.models import Business, Member
from tools.types import Effect, Outcome, ToolSpec


@dataclass(frozen=True)
class HandlerContext:
    """What a handler may know: who (from the session, never from arguments), where,
    the action's id, and the client of the integration it needs."""

    business: Business
    member: Member | None
    conversation_key: str
    action_id: uuid.UUID
    client: Any
    #: For a check: the arguments of the member's other requests of the same tool
    #: that wait for staff (staff may approve them first), read when asked for.
    waiting: Callable[[], list[dict[str, Any]]] = list

    @property
    def required_member(self) -> Member:
        if self.member is None:
            raise LookupError("this tool needs an identified member")
        return self.member


Handler = Callable[[HandlerContext, dict[str, Any]], Outcome]
Verifier = Callable[[HandlerContext, dict[str, Any], Outcome], str]
#: A write's business checks without its effect: raises the domain's refusals
#: (``NotFound``, ``InvalidValue``, ``Conflict``) as the handler would, or returns.
Check = Callable[[HandlerContext, dict[str, Any]], None]


@dataclass(frozen=True)
class ToolDeclaration:
    name: str
    description: str
    parameters: Mapping[str, Any]
    effect: Effect
    needs_member: bool
    integration: str | None
    #: The argument that is an amount of money, bounded by the owner's limits.
    amount_argument: str | None = None
    #: A write whose effect adds up: it takes ``again`` (R7), which makes a call
    #: identical to an earlier one a new action, at most once per member message.
    repeatable: bool = False


@dataclass(frozen=True)
class Tool:
    declaration: ToolDeclaration
    handler: Handler
    verifier: Verifier | None
    validator: Draft202012Validator
    #: Run before a call is queued for staff approval, so that staff are never
    #: asked to approve what could not be done (R4).
    check: Check | None = None

    @property
    def name(self) -> str:
        return self.declaration.name

    @property
    def effect(self) -> Effect:
        return self.declaration.effect

    @property
    def is_write(self) -> bool:
        return self.declaration.effect == "write"

    @property
    def needs_member(self) -> bool:
        return self.declaration.needs_member

    @property
    def integration(self) -> str | None:
        return self.declaration.integration

    def spec(self) -> ToolSpec:
        return self._spec

    @functools.cached_property
    def _spec(self) -> ToolSpec:
        """One spec per tool, so that what adapters encode of it is kept."""
        return ToolSpec(
            name=self.declaration.name,
            description=self.declaration.description,
            parameters=self.declaration.parameters,
        )


class RegistryMismatch(Exception):
    """The published tools and the handled tools do not match."""


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool]) -> None:
        self._tools = {tool.name: tool for tool in tools}

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def names(self) -> list[str]:
        return list(self._tools)


HANDLERS: dict[str, Handler] = {}
VERIFIERS: dict[str, Verifier] = {}
CHECKS: dict[str, Check] = {}
F = TypeVar("F", Handler, Verifier, Check)


def _registering(into: dict[str, F], what: str, name: str) -> Callable[[F], F]:
    def register(function: F) -> F:
        if name in into:
            raise RegistryMismatch(f"two {what}s for {name!r}")
        into[name] = function
        return function

    return register


def handles(name: str) -> Callable[[Handler], Handler]:
    """Register the handler of a tool."""
    return _registering(HANDLERS, "handler", name)


def verifies(name: str) -> Callable[[Verifier], Verifier]:
    """Register the verifier of a write tool."""
    return _registering(VERIFIERS, "verifier", name)


def checks(name: str) -> Callable[[Check], Check]:
    """Register the check of a write tool."""
    return _registering(CHECKS, "check", name)


def rehearsed(handler: Handler) -> Check:
    """A built-in write's check: its handler, with every write of its client run
    and then rolled back, so that every rule of the gym's own code applies and
    nothing changes."""

    def check(ctx: HandlerContext, args: dict[str, Any]) -> None:
        with ctx.client.rolled_back():
            handler(ctx, args)

    return check


def build_registry(
    declarations: Iterable[ToolDeclaration],
    handlers: Mapping[str, Handler],
    verifiers: Mapping[str, Verifier],
    checks: Mapping[str, Check] | None = None,
) -> ToolRegistry:
    """Join declarations with their handlers, verifiers and checks, refusing any
    mismatch."""
    checks = checks or {}
    declared = {d.name: d for d in declarations}
    problems = [
        f"published without a handler: {n}" for n in declared if n not in handlers
    ]
    problems += [
        f"handler without a published tool: {n}" for n in handlers if n not in declared
    ]
    for name, declaration in declared.items():
        if declaration.effect == "write" and name not in verifiers:
            problems.append(f"write without a verifier: {name}")
        if declaration.effect == "read" and name in verifiers:
            problems.append(f"verifier of a read: {name}")
        schema = declaration.parameters
        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as error:
            problems.append(f"invalid schema of {name}: {error.message}")
        if (
            schema.get("type") != "object"
            or schema.get("additionalProperties") is not False
        ):
            problems.append(
                f"schema of {name} must be an object without additional properties"
            )
    problems += [
        f"verifier without a published tool: {n}"
        for n in verifiers
        if n not in declared
    ]
    problems += [
        f"check of a tool that is not a published write: {n}"
        for n in checks
        if n not in declared or declared[n].effect != "write"
    ]
    if problems:
        raise RegistryMismatch("; ".join(problems))
    return ToolRegistry(
        Tool(
            declaration=declaration,
            handler=handlers[name],
            verifier=verifiers.get(name),
            check=checks.get(name),
            validator=Draft202012Validator(
                declaration.parameters,
                format_checker=Draft202012Validator.FORMAT_CHECKER,
            ),
        )
        for name, declaration in declared.items()
    )


@functools.cache
def published_registry() -> ToolRegistry:
    """The registry of every published tool, built once per process."""
    import tools.handlers  # noqa: F401  (registers the handlers)
    from tools.specs import PUBLISHED

    return build_registry(PUBLISHED, HANDLERS, VERIFIERS, CHECKS)
