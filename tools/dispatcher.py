"""The dispatcher: what happens to one tool call the model proposed.

Read top to bottom, ``dispatch_tool_call`` is the path of a call:

1. offered? A name outside this turn's offered set runs nothing (R2, R3).
2. valid? The arguments are parsed and checked against the tool's schema (R4).
3. reads run now; writes go on:
4. duplicate? The same action in this conversation within the window answers with
   the first call's result (R7). Decided under a row lock, so concurrent identical
   calls execute once.
5. gated? The call is checked as its handler would check it, and refused now if it
   could not be done (R4); else it is queued for staff approval (R3).
6. execute, retrying reads when the integration is unavailable and writes only when
   the request provably never arrived (R6); domain refusals are ``not_found`` or
   ``invalid_arguments`` (R4, R5).
7. verify: a write's verifier looks again; only ``verified`` is success (R8).
8. unknown or unverifiable outcomes become a staff handoff (R9).

Every step is recorded in the call's row of the verification log.
"""

from __future__ import annotations

import datetime
import json
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone, translation

from gymnasia.errors import Conflict, InvalidValue, NotFound
from gymnasia.gyms.models import Business, Member
from tools.canonical import action_key
from tools.gating import approval_queue
from tools.integrations import client_for
from tools.integrations.errors import (
    IntegrationFailed,
    IntegrationUnavailable,
    NotDelivered,
    OutcomeUnknown,
)
from tools.models import ActionLock, ToolCallLog
from tools.registry import (
    Check,
    HandlerContext,
    Tool,
    ToolRegistry,
    published_registry,
)
from tools.selection import ToolPolicy
from tools.services import handoff_create, unknown_outcome_result
from tools.types import (
    DUPLICATE,
    ERROR_STATUSES,
    FAILED,
    INVALID_ARGUMENTS,
    NOT_APPLIED,
    NOT_FOUND,
    OK,
    PENDING_APPROVAL,
    UNAVAILABLE,
    UNKNOWN_OUTCOME,
    UNKNOWN_TOOL,
    UNVERIFIABLE,
    VERIFIED,
    Outcome,
    ToolCall,
    ToolResult,
)

DUPLICATE_WINDOW = datetime.timedelta(minutes=10)
#: Results are written for the model, in one language whatever the member speaks.
MODEL_LANGUAGE = "en"
MAX_ATTEMPTS = 3
RETRY_BACKOFF_SECONDS = (0.05, 0.2)
MAX_RAW_ARGUMENTS = 20_000
#: Earlier calls that block a repeat: something may have happened (R7).
BLOCKING_STATUSES = (OK, PENDING_APPROVAL, UNKNOWN_OUTCOME, ToolCallLog.EXECUTING)

ClientFactory = Callable[[str, Business], Any]


@dataclass(frozen=True)
class CallContext:
    """Who is calling and what this turn offers; fixed for the turn (R2)."""

    business: Business
    member: Member | None
    conversation_key: str
    offered: Mapping[str, ToolPolicy]
    message_key: str = ""
    registry: ToolRegistry = field(default_factory=published_registry)
    clients: ClientFactory = client_for
    #: When given, the log row of a call that never acted (a read, or a call refused
    #: before it ran) is put here instead of written, for the caller to write with
    #: the rest of its turn's step in one transaction. A write's row is always
    #: stored as it is claimed, before it runs.
    unstored_logs: list[ToolCallLog] | None = None


class _Trace:
    """The steps of one call, with milliseconds since the call arrived."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.steps: list[dict[str, Any]] = []

    def step(self, name: str, **details: Any) -> None:
        elapsed = round((time.perf_counter() - self.started) * 1000, 3)
        self.steps.append({"step": name, "ms": elapsed, **details})

    def elapsed_ms(self) -> float:
        return round((time.perf_counter() - self.started) * 1000, 3)


def dispatch_tool_call(call: ToolCall, context: CallContext) -> ToolResult:
    """Decide, run, verify and record one proposed tool call; return its result."""
    trace = _Trace()
    log = ToolCallLog(
        business=context.business,
        member=context.member,
        conversation_key=context.conversation_key,
        message_key=context.message_key,
        provider_call_id=call.id[:200],
        tool_name=call.name[:200],
        arguments_raw=_raw_text(call.arguments),
    )
    tool = context.registry.get(call.name) if call.name in context.offered else None
    if tool is None or (tool.needs_member and context.member is None):
        trace.step("offered", offered=False)
        return _finish(
            context,
            log,
            trace,
            call,
            UNKNOWN_TOOL,
            {"message": "This tool is not available here."},
        )
    policy = context.offered[call.name]
    log.offered, log.effect = True, tool.effect
    trace.step("offered", offered=True, mode=policy.mode)

    arguments, errors = parse_arguments(tool, call.arguments)
    log.valid = arguments is not None
    trace.step("validated", valid=log.valid, errors=errors)
    if arguments is None:
        return _finish(
            context, log, trace, call, INVALID_ARGUMENTS, {"errors": errors}, tool=tool
        )
    log.arguments = arguments
    amount = _amount(tool, arguments)
    if (
        amount is not None
        and policy.max_amount is not None
        and amount > policy.max_amount
    ):
        trace.step("limit", amount=str(amount), max_amount=str(policy.max_amount))
        errors = [f"The amount is above this gym's limit of {policy.max_amount}."]
        return _finish(
            context, log, trace, call, INVALID_ARGUMENTS, {"errors": errors}, tool=tool
        )

    if not tool.is_write:
        return execute_and_verify(
            tool=tool,
            arguments=arguments,
            log=log,
            context=context,
            trace=trace,
            call=call,
        )

    gated = policy.gated_for(amount)
    if gated and tool.check is not None:
        refusal = _checked(tool, tool.check, arguments, log, context, trace)
        if refusal is not None:
            return _finish(context, log, trace, call, *refusal, tool=tool)

    log.action_key = action_key(
        business_id=context.business.pk,
        conversation_key=context.conversation_key,
        tool_name=tool.name,
        arguments=arguments,
    )
    first = _claim_action(log)
    if first is not None:
        trace.step("duplicate", first=str(first.pk))
        log.duplicate_of = first
        payload = {
            "first": first.result,
            "verification": first.verification or UNVERIFIABLE,
        }
        return _finish(context, log, trace, call, DUPLICATE, payload, tool=tool)
    trace.step("duplicate", first=None)

    if gated:
        log.gated = True
        pending_id = approval_queue()(
            log=log, arguments=arguments, valid_for=policy.approval_valid_for
        )
        trace.step("gated", pending_action=pending_id)
        payload = {
            "pending_action": pending_id,
            "verification": NOT_APPLIED,
            "message": "Waiting for approval by the gym's staff; nothing has been done yet.",
        }
        return _finish(context, log, trace, call, PENDING_APPROVAL, payload, tool=tool)
    return execute_and_verify(
        tool=tool, arguments=arguments, log=log, context=context, trace=trace, call=call
    )


def _checked(
    tool: Tool,
    check: Check,
    arguments: dict[str, Any],
    log: ToolCallLog,
    context: CallContext,
    trace: _Trace,
) -> tuple[str, dict[str, Any]] | None:
    """A call about to wait for approval, checked as its handler would check it
    (R4): what could not be done is refused now, and staff are never asked to
    approve it. The refusal's status and payload, or None when the call passes."""
    with translation.override(MODEL_LANGUAGE):
        try:
            write_checked(
                tool,
                check,
                arguments,
                business=context.business,
                member=context.member,
                conversation_key=context.conversation_key,
                action_id=log.pk,
                clients=context.clients,
            )
        except NotFound as error:
            trace.step("checked", error="not_found")
            return NOT_FOUND, {"message": str(error)}
        except (InvalidValue, Conflict) as error:
            trace.step("checked", error="refused")
            return INVALID_ARGUMENTS, {"errors": [str(error)]}
        except (IntegrationUnavailable, NotDelivered, OutcomeUnknown) as error:
            trace.step("checked", error=_error_name(error))
            return UNAVAILABLE, {"message": _unavailable_message(tool)}
        except Exception as error:  # a check never acts: nothing was done
            trace.step("checked", error=_error_name(error))
            return FAILED, {
                "message": "The request could not be checked; nothing was done."
            }
    trace.step("checked", passed=True)
    return None


def write_checked(
    tool: Tool,
    check: Check,
    arguments: dict[str, Any],
    *,
    business: Business,
    member: Member | None,
    conversation_key: str,
    action_id: uuid.UUID,
    clients: ClientFactory = client_for,
) -> None:
    """Run a write's check against the integration now: returns, or raises the
    domain's refusal (or the integration's unavailability)."""
    client = clients(tool.integration, business) if tool.integration else None
    check(
        HandlerContext(
            business=business,
            member=member,
            conversation_key=conversation_key,
            action_id=action_id,
            client=client,
        ),
        arguments,
    )


def parse_arguments(
    tool: Tool, raw: str | Mapping[str, Any]
) -> tuple[dict[str, Any] | None, list[str]]:
    """The arguments as a dict valid against the tool's schema, or the reasons why not."""
    if isinstance(raw, str):
        text = raw.strip() or "{}"
        try:
            value = json.loads(text, parse_constant=_refuse_constant)
        except ValueError:
            return None, ["The arguments are not valid JSON."]
    else:
        value = dict(raw)
    if not isinstance(value, dict):
        return None, ["The arguments must be a JSON object."]
    errors = sorted(
        tool.validator.iter_errors(value), key=lambda e: [str(p) for p in e.path]
    )
    if errors:
        return None, [
            f"{'/'.join(str(p) for p in e.absolute_path) or 'arguments'}: {e.message}"
            for e in errors
        ]
    properties = tool.declaration.parameters.get("properties", {})
    for name, schema in properties.items():
        if schema.get("type") == "integer" and name in value:
            value[name] = int(value[name])
    return value, []


def _amount(tool: Tool, arguments: dict[str, Any]) -> Decimal | None:
    name = tool.declaration.amount_argument
    return Decimal(str(arguments[name])) if name and name in arguments else None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _claim_action(log: ToolCallLog) -> ToolCallLog | None:
    """Record this write as executing, unless an earlier call of the same action
    blocks it; then return that earlier call (waiting while it is still running)."""
    wait_until = time.monotonic() + settings.TOOLS_EXECUTION_TIMEOUT + 5
    while True:
        with transaction.atomic():
            ActionLock.objects.bulk_create(
                [ActionLock(key=log.action_key, touched_at=timezone.now())],
                update_conflicts=True,
                unique_fields=["key"],
                update_fields=["touched_at"],
            )
            first = (
                ToolCallLog.objects.filter(
                    action_key=log.action_key,
                    created_at__gte=timezone.now() - DUPLICATE_WINDOW,
                )
                .filter(Q(status__in=BLOCKING_STATUSES) | Q(verification=UNVERIFIABLE))
                .order_by("created_at")
                .first()
            )
            if first is None:
                log.status = ToolCallLog.EXECUTING
                log.save(force_insert=True)
                return None
        if first.status != ToolCallLog.EXECUTING or time.monotonic() > wait_until:
            return first
        time.sleep(0.05)


def execute_and_verify(
    *,
    tool: Tool,
    arguments: dict[str, Any],
    log: ToolCallLog,
    context: CallContext,
    trace: _Trace | None = None,
    call: ToolCall | None = None,
) -> ToolResult:
    """Run the handler (with the retry policy), verify a write, hand off the unknown.

    Also the path of an approved action, which skips the earlier steps.
    """
    if trace is None:
        trace = _Trace()
        trace.steps = list(log.steps)  # an approved action keeps its earlier steps
    call = call or ToolCall(
        id=log.provider_call_id, name=tool.name, arguments=arguments
    )
    try:
        client = (
            context.clients(tool.integration, context.business)
            if tool.integration
            else None
        )
    except IntegrationUnavailable:
        trace.step("attempt", number=0, error="unavailable")
        payload = {"message": _unavailable_message(tool)}
        return _finish(context, log, trace, call, UNAVAILABLE, payload, tool=tool)

    with translation.override(MODEL_LANGUAGE):
        return _run(tool, arguments, log, context, trace, call, client)


def _run(
    tool: Tool,
    arguments: dict[str, Any],
    log: ToolCallLog,
    context: CallContext,
    trace: _Trace,
    call: ToolCall,
    client: Any,
) -> ToolResult:
    def finish(status: str, payload: dict[str, Any]) -> ToolResult:
        return _finish(context, log, trace, call, status, payload, tool=tool)

    handler_context = HandlerContext(
        business=context.business,
        member=context.member,
        conversation_key=context.conversation_key,
        action_id=log.pk,
        client=client,
    )
    outcome: Outcome | None = None
    while outcome is None:
        log.attempts += 1
        try:
            outcome = tool.handler(handler_context, arguments)
        except NotFound as error:
            trace.step("attempt", number=log.attempts, error="not_found")
            return finish(NOT_FOUND, {"message": str(error)})
        except (InvalidValue, Conflict) as error:
            trace.step("attempt", number=log.attempts, error="refused")
            return finish(INVALID_ARGUMENTS, {"errors": [str(error)]})
        except (NotDelivered, IntegrationUnavailable, OutcomeUnknown) as error:
            # Reads may be retried; writes only when non-delivery is provable (R6).
            trace.step("attempt", number=log.attempts, error=_error_name(error))
            retry = not tool.is_write or isinstance(error, NotDelivered)
            if retry and log.attempts < MAX_ATTEMPTS:
                _backoff(log.attempts)
                continue
            if tool.is_write and isinstance(error, OutcomeUnknown):
                known = "The request was sent and no answer came back; it may have been done."
                return _unknown(log, trace, call, tool, context, arguments, known)
            return finish(UNAVAILABLE, {"message": _unavailable_message(tool)})
        except IntegrationFailed as error:
            trace.step("attempt", number=log.attempts, error=_error_name(error))
            return finish(
                FAILED, {"message": "The request failed and nothing was changed."}
            )
        except Exception as error:  # a handler bug: for a write, nobody knows
            trace.step("attempt", number=log.attempts, error=_error_name(error))
            if not tool.is_write:
                return finish(FAILED, {"message": "The request failed."})
            known = (
                f"The handler stopped with {type(error).__name__}; it may have acted."
            )
            return _unknown(log, trace, call, tool, context, arguments, known)
    trace.step("attempt", number=log.attempts, status=outcome.status)

    if not tool.is_write or tool.verifier is None:
        return finish(outcome.status, dict(outcome.data))

    try:
        verdict = tool.verifier(handler_context, arguments, outcome)
    except Exception as error:
        trace.step("verified", verification=UNVERIFIABLE, error=_error_name(error))
        verdict = UNVERIFIABLE
    else:
        trace.step("verified", verification=verdict)
    if verdict == VERIFIED:
        return finish(OK, {**outcome.data, "verification": VERIFIED})
    if verdict == NOT_APPLIED:
        return finish(
            FAILED,
            {
                "message": "The change was not saved: looking again did not find it.",
                "verification": NOT_APPLIED,
            },
        )
    known = "The integration answered that it was done, but looking again could not confirm it."
    return _unknown(log, trace, call, tool, context, arguments, known)


def _backoff(attempt: int) -> None:
    """Wait before retrying a call that provably did nothing."""
    time.sleep(RETRY_BACKOFF_SECONDS[attempt - 1])


def _unknown(
    log: ToolCallLog,
    trace: _Trace,
    call: ToolCall,
    tool: Tool,
    context: CallContext,
    arguments: dict[str, Any],
    known: str,
) -> ToolResult:
    """Nobody can know whether it happened: a person takes it (R9). Only writes get
    here, and a write's row was stored when it was claimed."""
    handoff = handoff_create(
        business=context.business,
        member=context.member,
        conversation_key=context.conversation_key,
        reason=f"Could not confirm {tool.name}.",
        tried={"tool": tool.name, "arguments": arguments, "attempts": log.attempts},
        known=known,
        tool_call=log,
    )
    trace.step("handoff", handoff=str(handoff.pk))
    payload = unknown_outcome_result(handoff)
    return _finish(context, log, trace, call, UNKNOWN_OUTCOME, payload, tool=tool)


def _finish(
    context: CallContext,
    log: ToolCallLog,
    trace: _Trace,
    call: ToolCall,
    status: str,
    payload: dict[str, Any],
    *,
    tool: Tool | None = None,
) -> ToolResult:
    """Write the call's final row of the verification log and build its result."""
    result: dict[str, Any] = {"status": status, **payload}
    if tool is not None and tool.is_write:
        result.setdefault("verification", NOT_APPLIED)
    log.status = status
    log.verification = result.get("verification", "")
    log.result = result
    log.steps = trace.steps
    log.finished_at = timezone.now()
    log.duration_ms = trace.elapsed_ms()
    _record(log, context)
    return ToolResult(
        call_id=call.id,
        status=status,
        payload=result,
        is_error=status in ERROR_STATUSES,
    )


FINAL_FIELDS = [
    "status",
    "verification",
    "result",
    "steps",
    "finished_at",
    "duration_ms",
    "attempts",
    "gated",
    "duplicate_of",
]


def _record(log: ToolCallLog, context: CallContext) -> None:
    """Write the call's row of the verification log (one statement): an update when
    the row was stored earlier (a claimed write), else its insert, unless the caller
    keeps unstored rows to write them itself."""
    if not log._state.adding:
        log.save(update_fields=FINAL_FIELDS)
    elif context.unstored_logs is not None:
        context.unstored_logs.append(log)
    else:
        log.save(force_insert=True)


def _raw_text(arguments: str | Mapping[str, Any]) -> str:
    if isinstance(arguments, str):
        return arguments[:MAX_RAW_ARGUMENTS]
    try:
        return json.dumps(arguments, ensure_ascii=False, default=str)[
            :MAX_RAW_ARGUMENTS
        ]
    except (TypeError, ValueError):
        return repr(arguments)[:MAX_RAW_ARGUMENTS]


def _error_name(error: BaseException) -> str:
    return type(error).__name__


def _unavailable_message(tool: Tool) -> str:
    if tool.is_write:
        return "The service is unavailable right now; nothing was changed."
    return "The service is unavailable right now; nothing could be read."
