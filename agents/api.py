"""The conversation API v1 (DESIGN.md, "Public interfaces"), used by the widget and by
any client a gym builds. JSON in and out; replies stream as server-sent events when
the client asks for ``text/event-stream``."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import wraps
from typing import Any, TypeVar, cast

from django.core.exceptions import RequestDataTooBig
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseBase,
    JsonResponse,
    StreamingHttpResponse,
)
from django.utils.translation import get_supported_language_variant
from django.utils.translation.trans_real import parse_accept_lang_header
from django.views.decorators.csrf import csrf_exempt
from pydantic import ValidationError

from agents import limits, schemas
from agents.conversations import (
    TokenForAnotherConversation,
    TokenRefused,
    conversation_for_token,
    conversation_start,
    conversation_token,
    message_json,
    messages_page,
)
from agents.cors import cors_agent_set
from agents.database import db_call
from agents.identity import IdentityRefused, identity_member
from agents.models import Agent, Conversation, Message
from agents.schemas import BODY_REFUSED
from agents.turn import turn_run
from gymnasia.text import storable

log = logging.getLogger(__name__)
MESSAGES_PER_MINUTE = 30  # per conversation; the interface promises at least 20
READS_PER_MINUTE = 120  # reads of one conversation's messages (the widget polls)
CONVERSATIONS_PER_MINUTE = 90  # started, per address; the interface promises 60
STARTS_REFUSED_PER_MINUTE = 90  # refused starts (unknown agent, bad token), apart
TOO_LONG = "The body is too long."

#: Turns keep running when a streaming client goes away; their tasks live here.
_running: set[asyncio.Task[Any]] = set()


View = TypeVar("View", bound=Callable[..., Awaitable[HttpResponseBase]])
Asked = TypeVar("Asked", bound=schemas.Asked)


def json_always(view: View) -> View:
    """Every answer of the API is JSON (DESIGN.md): what no view foresaw is a
    JSON 500, logged with its traceback, not Django's error page."""

    @wraps(view)
    async def answered(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        try:
            return await view(request, *args, **kwargs)
        except Exception:
            log.exception("the conversation API failed on %s", request.path)
            return error(500, "internal", "The server could not answer; try again.")

    return cast(View, answered)


def error(status: int, code: str, detail: str) -> JsonResponse:
    response = JsonResponse({"error": code, "detail": detail}, status=status)
    response["Content-Language"] = "en"  # the detail is for developers, in English
    return response


def rate_limited(detail: str) -> JsonResponse:
    """429, with ``Retry-After``: the seconds until the limits' minute ends."""
    response = error(429, "rate_limited", detail)
    response["Retry-After"] = str(limits.seconds_left())
    return response


def _address(request: HttpRequest) -> str:
    """The client's address (a listed proxy's ``X-Forwarded-For``: ``serve``)."""
    return str(request.META.get("REMOTE_ADDR", "unknown"))


def _start_places(address: str) -> tuple[str, str] | None:
    """The places a start from ``address`` takes at once, before any work: one
    among the conversations it may start this minute and one among the refused
    starts (an unknown agent, a bad identity token) it may have; ``None``, with
    nothing held, when either limit is reached. The start gives back the place
    it does not use (``_start_counted``), so a refused start never uses up a
    place of the conversations promised, and starts sent together get at most
    each limit's places."""
    started = limits.place_taken(f"start:{address}", CONVERSATIONS_PER_MINUTE)
    if started is None:
        return None
    refused = limits.place_taken(f"start-refused:{address}", STARTS_REFUSED_PER_MINUTE)
    if refused is None:
        limits.place_given_back(started)
        return None
    return started, refused


def _body(request: HttpRequest, model: type[Asked]) -> Asked | JsonResponse:
    """The body, validated by ``model``, or the error answer when it is not one.
    Only ``application/json`` is read: a form or ``text/plain``, which any site
    may send without asking the browser first, is refused (415)."""
    if request.content_type != "application/json":
        return error(
            415, "unsupported_media_type", "The body must be sent as application/json."
        )
    try:
        raw = request.body
    except RequestDataTooBig:  # past DATA_UPLOAD_MAX_MEMORY_SIZE
        return error(413, "too_long", TOO_LONG)
    try:
        value = json.loads(raw or b"{}")
    except (ValueError, UnicodeDecodeError, RecursionError):
        return error(400, "bad_request", BODY_REFUSED)
    if not isinstance(value, dict) or not storable(value):
        return error(400, "bad_request", BODY_REFUSED)
    return _validated(model, value)


def _validated(model: type[Asked], value: dict[str, Any]) -> Asked | JsonResponse:
    """``value`` as ``model`` declares it, or the error answer the model names."""
    try:
        return model.model_validate(value)
    except ValidationError as refusal:
        return error(*model.refusal(refusal))


def _start(
    asked: schemas.StartConversation, visitor_language: str = ""
) -> tuple[int, dict[str, Any], Agent | None, str]:
    """The answer to a new conversation: its status, body and agent, and the
    language the conversation is held in ("" when none was started)."""
    agent = (
        Agent.objects.select_related("business").filter(public_key=asked.agent).first()
    )
    if agent is None:
        detail = "No agent has that public key."
        return 404, {"error": "not_found", "detail": detail}, None, ""
    member = None
    if asked.identity_token is not None:
        try:
            member = identity_member(agent=agent, token=asked.identity_token)
        except IdentityRefused as refusal:
            return 401, {"error": "unauthorized", "detail": str(refusal)}, agent, ""
    conversation = conversation_start(
        agent=agent, member=member, visitor_language=visitor_language
    )
    token, expires_at = conversation_token(conversation)
    answer = {
        "conversation": str(conversation.pk),
        "token": token,
        "expires_at": expires_at.isoformat(),
        "member": member.external_id if member else None,
    }
    return 201, answer, agent, conversation.language


def _start_counted(
    places: tuple[str, str],
    asked: schemas.StartConversation,
    visitor_language: str,
) -> tuple[int, dict[str, Any], Agent | None, str]:
    """``_start``, keeping the place of what it was (started or refused) and
    giving back the other."""
    started, refused = places
    answer = _start(asked, visitor_language)
    limits.place_given_back(refused if answer[0] == 201 else started)
    return answer


@csrf_exempt
@json_always
async def conversations(request: HttpRequest) -> HttpResponseBase:
    """``POST /api/v1/conversations``: start a conversation with an agent."""
    if request.method == "OPTIONS":  # CORS headers: agents.cors
        return HttpResponse(status=204)
    if request.method != "POST":
        refused = error(405, "bad_request", "Use POST.")
        refused["Allow"] = "POST, OPTIONS"
        return refused
    places = await db_call(_start_places, _address(request))
    if places is None:
        detail = "Too many new conversations; try again in a minute."
        return rate_limited(detail)
    asked = _body(request, schemas.StartConversation)
    if isinstance(asked, JsonResponse):
        await db_call(limits.place_given_back, places[0])
        return asked
    status, answer, agent, language = await db_call(
        _start_counted, places, asked, accepted_language(request)
    )
    response = JsonResponse(answer, status=status)
    if language:
        # The language the assistant will answer in (the member's, else the
        # agent's), so that a client can label itself to match.
        response["Content-Language"] = language
    if agent is not None:
        cors_agent_set(request, agent)
    return response


def accepted_language(request: HttpRequest) -> str:
    """The first language of ``Accept-Language`` that Gymnasia speaks, or "": the
    widget sends the language of the page it is on (a browser sends its own)."""
    for code, _quality in parse_accept_lang_header(
        request.headers.get("Accept-Language", "")[:255]
    ):
        if code == "*":
            continue
        try:
            return get_supported_language_variant(code)
        except LookupError:
            continue
    return ""


def _authorize(
    request: HttpRequest, conversation_id: str
) -> Conversation | JsonResponse:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return error(401, "unauthorized", "A bearer token is required.")
    try:
        return conversation_for_token(
            conversation_id=conversation_id, token=token.strip()
        )
    except TokenRefused as refusal:
        return error(401, "unauthorized", str(refusal).capitalize() + ".")
    except TokenForAnotherConversation:
        return error(403, "forbidden", "This token is not for this conversation.")


def _sse(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


@csrf_exempt
@json_always
async def messages(request: HttpRequest, conversation_id: str) -> HttpResponseBase:
    """``POST``: send a message (a turn); ``GET``: read messages after an id."""
    if request.method == "OPTIONS":  # CORS headers: agents.cors
        return HttpResponse(status=204)
    found = await db_call(_authorize, request, str(conversation_id))
    if isinstance(found, JsonResponse):
        return found
    cors_agent_set(request, found.agent)
    answer = await _answer(request, found)
    if answer.status_code == 200:
        answer["Content-Language"] = found.language
    return answer


async def _answer(request: HttpRequest, conversation: Conversation) -> HttpResponseBase:
    if request.method == "GET":
        return await _read(request, conversation)
    if request.method != "POST":
        refused = error(405, "bad_request", "Use GET or POST.")
        refused["Allow"] = "GET, POST, OPTIONS"
        return refused
    asked = _body(request, schemas.SendMessage)
    if isinstance(asked, JsonResponse):
        return asked
    text = asked.text
    if not await db_call(
        limits.allowed, f"send:{conversation.pk}", MESSAGES_PER_MINUTE
    ):
        return rate_limited("Too many messages; try again in a minute.")
    if "text/event-stream" in request.headers.get("Accept", ""):
        return _stream(conversation, text, _address(request))
    added = await turn_run(conversation, text, address=_address(request))
    return JsonResponse({"messages": [message_json(m) for m in added]})


def _stream(
    conversation: Conversation, text: str, address: str
) -> StreamingHttpResponse:
    queue: asyncio.Queue[tuple[str, dict[str, Any]] | None] = asyncio.Queue()

    async def emit(name: str, data: dict[str, Any]) -> None:
        await queue.put((name, data))

    async def run() -> None:
        try:
            await turn_run(conversation, text, emit, address=address)
        except Exception:  # the client must still get an end
            await queue.put(
                ("error", {"error": "internal", "detail": "The turn failed."})
            )
            raise
        finally:
            await queue.put(None)

    async def events() -> AsyncIterator[bytes]:
        task = asyncio.create_task(run())
        _running.add(task)
        task.add_done_callback(_running.discard)
        while (item := await queue.get()) is not None:
            yield _sse(*item)
        yield _sse("done", {})

    response = StreamingHttpResponse(events(), content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response


def _position(conversation: Conversation, public_id: str) -> int | None:
    """Where the message the API named ``public_id`` stands in the conversation
    (its row's id, which pages follow); ``None`` when it names none of its
    messages."""
    found = Message.objects.filter(conversation=conversation, public_id=public_id)
    return found.values_list("pk", flat=True).first()


async def _read(request: HttpRequest, conversation: Conversation) -> JsonResponse:
    asked = _validated(schemas.MessagePageQuery, request.GET.dict())
    if isinstance(asked, JsonResponse):
        return asked
    limit = asked.limit

    def read() -> JsonResponse:
        """The page, counted as a read."""
        if not limits.allowed(f"read:{conversation.pk}", READS_PER_MINUTE):
            return rate_limited("Too many reads; try again in a minute.")
        at = {}
        for side in ("after", "before"):
            named = getattr(asked, side)
            if named is not None:
                at[side] = _position(conversation, named)
                if at[side] is None:
                    detail = f"'{side}' names no message of this conversation."
                    return error(400, "bad_request", detail)
        page, more = messages_page(conversation=conversation, limit=limit, **at)
        return JsonResponse({"messages": [message_json(m) for m in page], "more": more})

    return await db_call(read)
