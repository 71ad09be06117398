"""Running a call and recording it: the handler with its retry policy, the
verifier, the handoff of what nobody can know, and the call's final row of the
verification log; also a write's check before it waits for approval.

``tools.dispatcher`` decides whether a call runs at all; what runs comes here, and
so does an approved action (``execute_and_verify``).
"""

from __future__ import annotations

import functools
import time
import uuid
from typing import Any

from django.db import transaction
from django.utils import timezone, translation
from tenacity import (
    Retrying,
    retry_if_exception_type,
    retry_if_not_exception_type,
    stop_after_attempt,
    wait_chain,
    wait_fixed,
)

from gymnasia.errors import Conflict, InvalidValue, NotFound
from gymnasia.gyms.models import Business, Member
from tools.calls import MAX_ATTEMPTS, tool_call_late, tool_call_record
from tools.context import CallContext, ClientFactory, Trace, configured_clients
from tools.integrations.errors import (
    CredentialsRefused,
    FailedForMember,
    IntegrationFailed,
    IntegrationUnavailable,
    NotDelivered,
    OutcomeUnknown,
)
from tools.models import Handoff, ToolCallLog
from tools.registry import (
    HandlerContext,
    Tool,
)
from tools.selectors import tool_calls_waiting_arguments
from tools.services import handoff_create, unknown_outcome_result
from tools.types import (
    ERROR_STATUSES,
    FAILED,
    INVALID_ARGUMENTS,
    NOT_APPLIED,
    NOT_FOUND,
    OK,
    UNAVAILABLE,
    UNKNOWN_OUTCOME,
    UNVERIFIABLE,
    VERIFIED,
    Outcome,
    ToolCall,
    ToolResult,
)

#: Results are written for the model, in one language whatever the member speaks.
MODEL_LANGUAGE = "en"
#: The waits between attempts (R6). With every attempt stopped at the execution
#: timeout, a call is surely over within ``tools.calls.surely_over_after()``.
RETRY_BACKOFF_SECONDS = (0.05, 0.2)
#: What may be tried again (R6): a read that got no answer, whatever the reason;
#: a write only when it provably never arrived (a timeout proves nothing).
RETRIED_READ_ERRORS = (NotDelivered, IntegrationUnavailable, OutcomeUnknown)
RETRIED_WRITE_ERRORS = (NotDelivered,)


def execute_and_verify(
    *,
    tool: Tool,
    arguments: dict[str, Any],
    log: ToolCallLog,
    context: CallContext,
    trace: Trace | None = None,
    call: ToolCall | None = None,
) -> ToolResult:
    """Run the handler (with the retry policy), verify a write, hand off the unknown.

    Also the path of an approved action, which skips the earlier steps.
    """
    if trace is None:
        trace = Trace()
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
        return finish_call(context, log, trace, call, UNAVAILABLE, payload, tool=tool)

    with translation.override(MODEL_LANGUAGE):
        return _run(tool, arguments, log, context, trace, call, client)


def _run(
    tool: Tool,
    arguments: dict[str, Any],
    log: ToolCallLog,
    context: CallContext,
    trace: Trace,
    call: ToolCall,
    client: Any,
) -> ToolResult:
    """The handler with R6's retries, each way it can end told apart (R5), then
    a write's verification (R8); what nobody can know goes to a person (R9)."""

    def finish(status: str, payload: dict[str, Any]) -> ToolResult:
        return finish_call(context, log, trace, call, status, payload, tool=tool)

    def unknown(cause: Handoff.Cause, error: str = "") -> ToolResult:
        return _unknown(log, trace, call, tool, context, arguments, cause, error=error)

    handler_context = HandlerContext(
        business=context.business,
        member=context.member,
        conversation_key=context.conversation_key,
        action_id=log.pk,
        client=client,
    )
    try:
        outcome = _attempts(tool, handler_context, arguments, log, trace)
    except (NotFound, InvalidValue, Conflict) as error:
        status, payload, _word = _refused(error)
        return finish(status, payload)
    except (NotDelivered, IntegrationUnavailable, OutcomeUnknown) as error:
        if tool.is_write and isinstance(error, OutcomeUnknown):
            return unknown(Handoff.Cause.NO_ANSWER)
        return finish(UNAVAILABLE, {"message": _unavailable_message(tool)})
    except FailedForMember as error:  # told in the member's words
        return finish(FAILED, {"message": str(error), "refusals": [error.refusal()]})
    except IntegrationFailed:
        return finish(
            FAILED, {"message": "The request failed and nothing was changed."}
        )
    except Exception as error:  # a handler bug: for a write, nobody knows
        if not tool.is_write:
            return finish(FAILED, {"message": "The request failed."})
        return unknown(Handoff.Cause.HANDLER_FAILED, _error_name(error))
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
    return unknown(Handoff.Cause.NOT_CONFIRMED)


def _attempts(
    tool: Tool,
    handler_context: HandlerContext,
    arguments: dict[str, Any],
    log: ToolCallLog,
    trace: Trace,
) -> Outcome:
    """The handler's outcome, tried again as R6 allows: a read while the
    integration could not answer, a write only when it provably never arrived
    (``NotDelivered``); at most ``MAX_ATTEMPTS``, waiting ``RETRY_BACKOFF_SECONDS``
    between them. Each failed attempt is a step of the trace; the last error is
    raised as it came."""

    def attempt() -> Outcome:
        log.attempts += 1
        try:
            return tool.handler(handler_context, arguments)
        except Exception as error:
            trace.step("attempt", number=log.attempts, error=_attempt_error(error))
            raise

    retried = RETRIED_WRITE_ERRORS if tool.is_write else RETRIED_READ_ERRORS
    retrying = Retrying(
        stop=stop_after_attempt(MAX_ATTEMPTS),
        wait=wait_chain(*(wait_fixed(s) for s in RETRY_BACKOFF_SECONDS)),
        # Credentials refused stay refused: asking again only spends calls.
        retry=retry_if_exception_type(retried)
        & retry_if_not_exception_type(CredentialsRefused),
        sleep=_pause,
        reraise=True,
    )
    return retrying(attempt)


def _pause(seconds: float) -> None:
    """Wait before retrying a call that provably did nothing."""
    time.sleep(seconds)


def _unknown(
    log: ToolCallLog,
    trace: Trace,
    call: ToolCall,
    tool: Tool,
    context: CallContext,
    arguments: dict[str, Any],
    cause: Handoff.Cause,
    *,
    error: str = "",
) -> ToolResult:
    """Nobody can know whether it happened: a person takes it (R9), told why by
    a code (and the error's name, for a fault of the handler). Only writes get
    here, and a write's row was stored when it was claimed."""
    tried = {"tool": tool.name, "arguments": arguments, "attempts": log.attempts}
    if error:
        tried["error"] = error
    # The case and the outcome together, or neither: a call the sweep handed over
    # meanwhile (its lease passed) keeps its one case.
    with transaction.atomic():
        handoff = handoff_create(
            business=context.business,
            member=context.member,
            conversation_key=context.conversation_key,
            cause=cause,
            tried=tried,
            tool_call=log,
        )
        trace.step("handoff", handoff=str(handoff.pk))
        payload = unknown_outcome_result(handoff)
        result = finish_call(
            context, log, trace, call, UNKNOWN_OUTCOME, payload, tool=tool
        )
        late = result.payload.get("handoff") != str(handoff.pk)
        if late:
            transaction.set_rollback(True)
    if late:  # what it found, kept in its trail outside what was undone
        tool_call_late(log=log, found=payload)
    return result


def finish_call(
    context: CallContext,
    log: ToolCallLog,
    trace: Trace,
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
    if not tool_call_record(log, context.unstored_logs):
        # Too late: its lease passed and the sweep gave it to staff (R9). What
        # it found stays in the trail; the call's result is the recorded one.
        tool_call_late(log=log, found=result)
        status, result = log.status, dict(log.result)
    return ToolResult(
        call_id=call.id,
        status=status,
        payload=result,
        is_error=status in ERROR_STATUSES,
    )


def checked_before_approval(
    tool: Tool,
    arguments: dict[str, Any],
    log: ToolCallLog,
    context: CallContext,
    trace: Trace,
) -> tuple[str, dict[str, Any]] | None:
    """A call about to wait for approval, checked as its handler would check it
    (R4): what could not be done is refused now, and staff are never asked to
    approve it. The refusal's status and payload, or None when the call passes."""
    with translation.override(MODEL_LANGUAGE):
        try:
            write_checked(
                tool,
                arguments,
                business=context.business,
                member=context.member,
                conversation_key=context.conversation_key,
                action_id=log.pk,
                action_key=log.action_key,
                clients=context.clients,
            )
        except (NotFound, InvalidValue, Conflict) as error:
            status, payload, word = _refused(error)
            trace.step("checked", error=word)
            return status, payload
        except (IntegrationUnavailable, NotDelivered, OutcomeUnknown) as error:
            trace.step("checked", error=_error_name(error))
            return UNAVAILABLE, {"message": _unavailable_message(tool)}
        except FailedForMember as error:
            trace.step("checked", error=_error_name(error))
            return FAILED, {"message": str(error), "refusals": [error.refusal()]}
        except Exception as error:  # a check never acts: nothing was done
            trace.step("checked", error=_error_name(error))
            return FAILED, {
                "message": "The request could not be checked; nothing was done."
            }
    trace.step("checked", passed=True)
    return None


def write_checked(
    tool: Tool,
    arguments: dict[str, Any],
    *,
    business: Business,
    member: Member | None,
    conversation_key: str,
    action_id: uuid.UUID,
    action_key: str,
    clients: ClientFactory | None = None,
) -> None:
    """Run a write's check, if it has one, against the integration now, able to
    read the member's other requests of the tool that wait for staff (all but
    ``action_key``'s): returns, or raises the domain's refusal (or the
    integration's unavailability)."""
    if tool.check is None:
        return
    clients = clients or configured_clients()
    client = clients(tool.integration, business) if tool.integration else None
    waiting = functools.partial(
        tool_calls_waiting_arguments,
        business_id=business.pk,
        member_id=member.pk if member else None,
        tool_name=tool.name,
        other_than=action_key,
    )
    tool.check(
        HandlerContext(
            business=business,
            member=member,
            conversation_key=conversation_key,
            action_id=action_id,
            client=client,
            waiting=waiting,
        ),
        arguments,
    )


def _refused(
    error: NotFound | InvalidValue | Conflict,
) -> tuple[str, dict[str, Any], str]:
    """A refusal of the gym's own rules (R4, R5): the result's status and payload,
    and the word the call's step records. The model reads the reason; the
    refusal's code and parameters beside it are what a member is told from."""
    refusals = [error.refusal()]
    if isinstance(error, NotFound):
        return NOT_FOUND, {"message": str(error), "refusals": refusals}, "not_found"
    return INVALID_ARGUMENTS, {"errors": [str(error)], "refusals": refusals}, "refused"


def _error_name(error: BaseException) -> str:
    return type(error).__name__


def _attempt_error(error: BaseException) -> str:
    """The word an attempt's step records: a refusal's, or the error's name."""
    if isinstance(error, (NotFound, InvalidValue, Conflict)):
        return _refused(error)[2]
    return _error_name(error)


def _unavailable_message(tool: Tool) -> str:
    if tool.is_write:
        return "The service is unavailable right now; nothing was changed."
    return "The service is unavailable right now; nothing could be read."
