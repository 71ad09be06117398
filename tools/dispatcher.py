"""The dispatcher: what happens to one tool call the model proposed.

Read top to bottom, ``dispatch_tool_call`` is the path of a call:

1. offered? A name outside this turn's offered set runs nothing (R2, R3).
2. valid? The arguments are parsed and checked against the tool's schema (R4).
3. reads run now; writes go on:
4. duplicate? The same action in this conversation within the window answers with
   the first call's result (R7). Decided under a row lock, so concurrent identical
   calls execute once.
5. gated? The call is checked as its handler would check it, and refused now if it
   could not be done (R4); else it pauses on its own row, waiting for staff (R3):
   ``tools.calls`` holds what happens to it from there.
6. execute, retrying reads when the integration is unavailable and writes only when
   the request provably never arrived (R6); domain refusals are ``not_found`` or
   ``invalid_arguments`` (R4, R5).
7. verify: a write's verifier looks again; only ``verified`` is success (R8).
8. unknown or unverifiable outcomes become a staff handoff (R9).

Every step is recorded in the call's row of the verification log. Steps 6 to 8,
and the check of step 5, are ``tools.execution``'s.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from django.utils import timezone, translation
from django.utils.translation import gettext as _

from gymnasia.errors import InvalidValue, NotFound
from gymnasia.text import storable_text, text_storable
from tools.calls import tool_call_claim, tool_call_start_approved
from tools.canonical import action_key, canonical_arguments
from tools.context import CallContext, Trace
from tools.execution import (
    MODEL_LANGUAGE,
    checked_before_approval,
    execute_and_verify,
    finish_call,
    write_checked,
)
from tools.integrations.errors import IntegrationError
from tools.models import ToolCallLog
from tools.naming import request_facts
from tools.refused import Refused, refused_payload, schema_refused
from tools.registry import Tool, published_registry
from tools.selection import ToolPolicy
from tools.sentences import request_sentence
from tools.types import (
    DUPLICATE,
    FAILED,
    INVALID_ARGUMENTS,
    NOT_APPLIED,
    PENDING_APPROVAL,
    UNKNOWN_TOOL,
    UNVERIFIABLE,
    ToolCall,
    ToolResult,
)

MAX_RAW_ARGUMENTS = 20_000
#: Objects and lists within each other in a call's arguments, at the most.
MAX_DEPTH = 16
TOO_DEEP = f"The arguments nest objects and lists more than {MAX_DEPTH} deep."
UNSTORABLE = "Text in the arguments cannot hold NUL characters or lone surrogates."
AGAIN = "again"
NOT_OFFERED = "This tool is not available here."


def dispatch_tool_call(call: ToolCall, context: CallContext) -> ToolResult:
    """Decide, run, verify and record one proposed tool call; return its result."""
    trace = Trace()
    log = ToolCallLog(
        business=context.business,
        member=context.member,
        conversation_key=context.conversation_key,
        message_key=context.message_key,
        provider_call_id=storable_text(call.id[:200]),
        tool_name=storable_text(call.name[:200]),
        arguments_raw=_raw_text(call.arguments),
    )

    def finish(status: str, payload: dict[str, Any], tool: Tool | None) -> ToolResult:
        return finish_call(context, log, trace, call, status, payload, tool=tool)

    # 1. offered?
    tool = context.registry.get(call.name) if call.name in context.offered else None
    if tool is None or (tool.needs_member and context.member is None):
        trace.step("offered", offered=False)
        return finish(UNKNOWN_TOOL, {"message": NOT_OFFERED}, None)
    policy = context.offered[call.name]
    log.offered, log.effect = True, tool.effect
    trace.step("offered", offered=True, mode=policy.mode)

    # 2. valid? The schema, then the owner's limit on the amount.
    arguments, refused = parse_arguments(tool, call.arguments)
    log.valid = arguments is not None
    trace.step("validated", valid=log.valid, errors=[r.reason for r in refused])
    if arguments is None:
        return finish(INVALID_ARGUMENTS, refused_payload(refused), tool)
    # ``again`` asks for a new action, not another one: it is no part of its key.
    again = bool(arguments.pop(AGAIN, False)) and tool.declaration.repeatable
    log.arguments = arguments
    amount = amount_of(tool, arguments)
    if over_the_limit(amount, policy.max_amount):
        trace.step("limit", amount=str(amount), max_amount=str(policy.max_amount))
        return finish(INVALID_ARGUMENTS, _over_the_limit(tool, policy), tool)

    # 3. reads run now; writes go on.
    if tool.is_write:
        log.action_key = action_key(
            business_id=context.business.pk,
            conversation_key=context.conversation_key,
            tool_name=tool.name,
            arguments=arguments,
        )
        # 4. duplicate? Decided first: a repeat of a request already made (and
        # maybe approved and done since) is that request, not a new one to check.
        again_for = (context.turn_key or context.conversation_key) if again else ""
        first = tool_call_claim(log, again_for)
        if first is not None:
            trace.step("duplicate", first=str(first.pk))
            log.duplicate_of = first
            return finish(DUPLICATE, _duplicate_payload(tool, first), tool)
        trace.step("duplicate", first=None, again=bool(log.again_for))

        # 5. gated? Checked now, then a pause in the call's run on its own row.
        if policy.gated_for(amount):
            refusal = None
            if tool.check is not None:
                refusal = checked_before_approval(tool, arguments, log, context, trace)
            if refusal is not None:
                return finish(*refusal, tool)
            return finish(
                PENDING_APPROVAL, _paused(log, policy, context, arguments, trace), tool
            )
    # 6 to 8: execute, verify, hand off (``tools.execution``).
    return execute_and_verify(
        tool=tool, arguments=arguments, log=log, context=context, trace=trace, call=call
    )


def _over_the_limit(tool: Tool, policy: ToolPolicy) -> dict[str, Any]:
    over = Refused(
        f"The amount is above this gym's limit of {policy.max_amount}.",
        "over_limit",
        tool.declaration.amount_argument,
        {"limit": str(policy.max_amount)},
    )
    return refused_payload([over])


def _duplicate_payload(tool: Tool, first: ToolCallLog) -> dict[str, Any]:
    """A duplicate's answer: the first call's result and verification as they
    stand now (R7); for a tool whose effect adds up, that ``again`` exists."""
    payload = {
        "first": first.result,
        "verification": first.verification or UNVERIFIABLE,
    }
    if tool.declaration.repeatable:
        payload["message"] = AGAIN_POSSIBLE
    return payload


def _paused(
    log: ToolCallLog,
    policy: ToolPolicy,
    context: CallContext,
    arguments: dict[str, Any],
    trace: Trace,
) -> dict[str, Any]:
    """The call waits on its own row, which staff's inbox lists (``approvals``),
    until it is decided or expires; the model is told what it is about."""
    log.gated = True
    log.expires_at = timezone.now() + policy.approval_valid_for
    log.max_amount = policy.max_amount
    trace.step("gated", expires_at=log.expires_at.isoformat())
    return {
        "pending_action": str(log.pk),
        "verification": NOT_APPLIED,
        "message": "Waiting for approval by the gym's staff; nothing has been done yet.",
        **request_named(context.business, context.member, log.tool_name, arguments),
    }


def request_named(
    business: Any, member: Any, tool_name: str, arguments: dict[str, Any]
) -> dict[str, Any]:
    """What a request is about, for the model (in its language) to name it to
    the member: as a sentence (``tools.sentences``) and as facts
    (``tools.naming``)."""
    with translation.override(MODEL_LANGUAGE):
        return {
            "about": request_sentence(
                business=business,
                member=member,
                tool_name=tool_name,
                arguments=arguments,
            ),
            "facts": request_facts(
                business=business, member=member, arguments=arguments
            ),
        }


def parse_arguments(
    tool: Tool, raw: str | Mapping[str, Any]
) -> tuple[dict[str, Any] | None, list[Refused]]:
    """The arguments as a dict valid against the tool's schema, or the refusals
    saying why not."""
    if isinstance(raw, str):
        text = raw.strip() or "{}"
        try:
            value = json.loads(text, parse_constant=_refuse_constant)
        except RecursionError:
            return None, [Refused(TOO_DEEP)]
        except ValueError:
            return None, [Refused("The arguments are not valid JSON.")]
    else:
        value = dict(raw)
    if not isinstance(value, dict):
        return None, [Refused("The arguments must be a JSON object.")]
    refusal = _refused_before_the_schema(value)
    if refusal is not None:
        return None, [Refused(refusal)]
    errors = sorted(
        tool.validator.iter_errors(value), key=lambda e: [str(p) for p in e.path]
    )
    if errors:
        return None, [schema_refused(e) for e in errors]
    properties = tool.declaration.parameters.get("properties", {})
    for name, schema in properties.items():
        if schema.get("type") == "integer" and name in value:
            value[name] = int(value[name])
    return value, []


def over_the_limit(amount: Decimal | None, max_amount: Decimal | None) -> bool:
    """Whether an amount is above the owner's maximum (when both are given)."""
    return amount is not None and max_amount is not None and amount > max_amount


def amount_of(tool: Tool, arguments: dict[str, Any]) -> Decimal | None:
    """The amount of a tool's arguments (a refund's), or None for a tool without."""
    name = tool.declaration.amount_argument
    return Decimal(str(arguments[name])) if name and name in arguments else None


def _refused_before_the_schema(value: dict[str, Any]) -> str | None:
    """Why arguments no tool takes are refused before the schema sees them, or
    None; one walk, without recursion. Text no database column holds (NUL, lone
    surrogates: JSON can spell both). Numbers that are not finite: an SDK that
    hands arguments over parsed can give NaN or an infinity, which every bound of
    a schema lets through. Deep nesting: the schema's messages and the log's JSON
    recurse into it."""
    waiting: list[tuple[Any, int]] = [(value, 1)]
    while waiting:
        item, depth = waiting.pop()
        if isinstance(item, str):
            if not text_storable(item):
                return UNSTORABLE
        elif isinstance(item, float):
            if not math.isfinite(item):
                return "Numbers in the arguments must be finite."
        elif isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                return TOO_DEEP
            if isinstance(item, dict):
                waiting.extend((key, depth) for key in item)
                waiting.extend((inner, depth + 1) for inner in item.values())
            else:
                waiting.extend((inner, depth + 1) for inner in item)
    return None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


AGAIN_POSSIBLE = (
    "The same call was made in this conversation moments ago (its result is "
    '"first"); it was not repeated. If the member asks for it once more, call the '
    'tool again with "again": true.'
)


def _raw_text(arguments: str | Mapping[str, Any]) -> str:
    """The arguments as they came, for the log, with what no column takes replaced."""
    if isinstance(arguments, str):
        return storable_text(arguments[:MAX_RAW_ARGUMENTS])
    try:
        text = json.dumps(arguments, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(arguments)
    except RecursionError:
        text = TOO_DEEP
    return storable_text(text[:MAX_RAW_ARGUMENTS])


def correction_checked(
    *, call: ToolCallLog, arguments: dict[str, Any]
) -> dict[str, Any]:
    """Arguments staff give a waiting call in place of the member's, checked as the
    member's were (R4: the schema, the owner's maximum when it was proposed, the
    tool's own checks); raises ``InvalidValue`` saying why not."""
    max_amount = call.max_amount
    tool = published_registry().get(call.tool_name)
    if tool is None:
        raise NotFound(_("No such pending action."))
    corrected, refused = parse_arguments(tool, arguments)
    if corrected is None:
        raise InvalidValue("; ".join(r.reason for r in refused))
    if canonical_arguments(corrected) == canonical_arguments(call.arguments or {}):
        raise InvalidValue(_("The corrected request is the same as the original."))
    if over_the_limit(amount_of(tool, corrected), max_amount):
        raise InvalidValue(
            _("The amount is above this gym's limit of %(limit)s.")
            % {"limit": max_amount}
        )
    try:
        write_checked(
            tool,
            corrected,
            business=call.business,
            member=call.member,
            conversation_key=call.conversation_key,
            action_id=call.pk,
            action_key=call.action_key,  # the request corrected
        )
    except NotFound as error:
        raise InvalidValue(str(error)) from None
    except IntegrationError:
        raise InvalidValue(
            _("The corrected request cannot be checked right now; try again.")
        ) from None
    return corrected


def dispatch_approved(*, call_id: Any) -> ToolResult | None:
    """Run an approved call, after its pause: claim it (approved → executing,
    with a lease), then the remaining steps of a call (execute, verify, hand off:
    ``execute_and_verify``) on its own row. None when it is not approved
    any more: running or done by another delivery, which is left as it is."""
    if not tool_call_start_approved(call_id=call_id):
        return None
    call = ToolCallLog.objects.select_related("business", "member").get(pk=call_id)
    tool = published_registry().get(call.tool_name)
    context = CallContext(
        business=call.business,
        member=call.member,
        conversation_key=call.conversation_key,
        message_key=call.message_key,
        offered={call.tool_name: ToolPolicy(mode="gated", max_amount=call.max_amount)},
    )
    trace = Trace()
    trace.steps = [*call.steps, {"step": "approved", "ms": 0}]
    proposed = ToolCall(
        id=call.provider_call_id, name=call.tool_name, arguments=call.arguments or {}
    )
    if tool is None:  # unpublished since it was asked: nothing can run it
        payload = {"message": "This tool is not available any more; nothing was done."}
        return finish_call(
            context,
            call,
            trace,
            proposed,
            FAILED,
            {**payload, "verification": NOT_APPLIED},
        )
    return execute_and_verify(
        tool=tool,
        arguments=dict(call.arguments or {}),
        log=call,
        context=context,
        trace=trace,
        call=proposed,
    )
