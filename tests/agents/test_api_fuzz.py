"""The conversation API v1 fuzzed from its own OpenAPI document.

Schemathesis reads ``/api/v1/openapi.json`` from the Django app and sends every
operation generated requests, valid and invalid (its coverage and fuzzing phases).
The app runs in process as a WSGI application: the async views then do their
database work through ``sync_to_async`` on this thread, inside the test's
transaction, so the demo agent and the conversations made here are what the API
sees. Each request runs in a savepoint rolled back after it, so no example leaves
rows, rate-limit counts or a broken transaction to the next one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
import schemathesis
import time_machine
from django.core import signing
from django.core.cache import cache
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, transaction
from django.urls import clear_script_prefix
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from werkzeug.test import Client

from agents.conversations import (
    TOKEN_SALT,
    conversation_start,
    conversation_token,
    message_add,
)
from agents.models import Agent, Conversation, Message
from tests.agents.api_client import identity

pytestmark = [
    pytest.mark.django_db,
    # In process, WSGI reads a streamed answer whole (production serves it over
    # ASGI); Django warns about that, which is beside the point here.
    pytest.mark.filterwarnings(
        "ignore:StreamingHttpResponse must consume asynchronous iterators:Warning"
    ),
]

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


def fuzz(max_examples: int) -> settings:
    """Bounded generation: the fuzzing phase's examples per operation."""
    return settings(
        max_examples=max_examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )


schema = schemathesis.pytest.from_fixture("api_schema")
MESSAGES = schema.include(path_regex="/messages$")
START = schema.include(method="POST", path="/api/v1/conversations")
SEND = schema.include(method="POST", path_regex="/messages$")


@pytest.fixture
def wsgi_app() -> Iterator[WSGIHandler]:
    """Django as a WSGI application that keeps the test's database connection.

    A WSGI server closes stale connections when a request starts and ends; that
    would close the connection holding the test's transaction, so those handlers
    are off for the test, as Django's own test client turns them off.
    """
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield WSGIHandler()
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture
def api_schema(agent: Agent, wsgi_app: WSGIHandler) -> schemathesis.BaseSchema:
    """The published document, loaded the way a client reads it: over HTTP."""
    return schemathesis.openapi.from_wsgi("/api/v1/openapi.json", wsgi_app)


class _RollBack(Exception):
    """Leaves a savepoint by rolling it back."""


@contextmanager
def rolled_back() -> Iterator[None]:
    """A savepoint undone at the end, whatever the request did to the transaction
    (on PostgreSQL a failed query aborts it until rolled back). The cache starts
    empty too: rate limits are a documented answer (429) but must not hide the
    others from the examples that come after."""
    cache.clear()
    try:
        with transaction.atomic():
            yield
            raise _RollBack
    except _RollBack:
        pass


def new_conversation(agent: Agent, *, with_history: bool = True) -> tuple[str, str]:
    """A conversation of the demo agent and its bearer token; with a message of
    every role, the hidden ones included, so that reads have something to show
    (and to keep hidden)."""
    conversation = conversation_start(agent=agent, member=None)
    if with_history:
        for role in Message.Role:
            message_add(conversation=conversation, role=role, text=f"{role} text")
    token, _ = conversation_token(conversation)
    return str(conversation.pk), token


def with_a_valid_token(case, agent: Agent, headers: dict[str, str]) -> None:
    """Points the case at a new conversation and sends that conversation's token."""
    conversation_id, token = new_conversation(agent)
    case.path_parameters["conversation_id"] = conversation_id
    headers["Authorization"] = f"Bearer {token}"


@pytest.mark.parametrize(
    ("script_name", "server_url"),
    [("", "http://localhost"), ("/chat", "http://localhost/chat")],
)
def test_the_document_is_valid_openapi_naming_this_site(
    wsgi_app, script_name, server_url
):
    """The published document is a valid OpenAPI 3.1 document whose server is the
    site that served it, under whatever prefix the site is mounted."""
    try:
        response = Client(wsgi_app).get(
            "/api/v1/openapi.json", environ_overrides={"SCRIPT_NAME": script_name}
        )
    finally:
        clear_script_prefix()  # the handler set it for this thread
    assert response.status_code == 200
    document = response.json
    assert document["openapi"] == "3.1.0"
    assert document["servers"] == [{"url": server_url}]
    schemathesis.openapi.from_dict(document).validate()


@schema.parametrize()
@fuzz(30)
def test_every_operation_answers_as_documented(case, agent):
    """Every operation answers only the statuses and bodies its document states and
    never a server error, whatever the body and the query; the messages of a
    conversation are asked with its valid token, so the fuzz reaches the turn and
    the reads (schemathesis still drops the token from some negative cases)."""
    headers: dict[str, str] = {}
    with rolled_back():
        if "conversation_id" in case.path_parameters:
            with_a_valid_token(case, agent, headers)
        case.call_and_validate(headers=headers, checks=CHECKS)


@SEND.parametrize()
@fuzz(30)
def test_a_streamed_turn_answers_as_documented(case, agent):
    """A turn asked as server-sent events streams only documented events (or
    answers a documented error) and never a server error, whatever the body."""
    headers = {"Accept": "text/event-stream"}
    with rolled_back():
        with_a_valid_token(case, agent, headers)
        case.call_and_validate(headers=headers, checks=CHECKS)


@pytest.fixture(params=["visitor", "member"])
def who(request: pytest.FixtureRequest) -> str:
    """Who starts: whoever the generated body names, or a demo member."""
    return request.param


@START.parametrize()
# Schemathesis's wrapper hides the test's arguments from pytest; this mark makes
# pytest run the test once per parameter of the fixture.
@pytest.mark.usefixtures("who")
@fuzz(30)
def test_starting_with_the_demo_agent_answers_as_documented(case, who, agent):
    """Starting a conversation with an existing agent, as whatever visitor or member
    the body names, answers as documented and never a server error: the generated
    body's agent key is the demo agent's, and for a member its identity token is a
    valid one."""
    if isinstance(case.body, dict) and isinstance(case.body.get("agent"), str):
        case.body["agent"] = agent.public_key
        if who == "member" and isinstance(case.body.get("identity_token"), str):
            case.body["identity_token"] = identity(agent)
    with rolled_back():
        case.call_and_validate(checks=CHECKS)


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _expired(conversation_id: str) -> str:
    conversation = Conversation.objects.get(pk=conversation_id)
    with time_machine.travel(time.time() - 13 * 3600, tick=False):
        token, _ = conversation_token(conversation)
    return token


#: Credentials other than the conversation's valid token: functions of (this
#: conversation's id, a valid token of another existing conversation) giving the
#: headers to send. The path names this existing conversation, except for the
#: credentials sent to any id the fuzz makes up.
REFUSED: dict[str, Callable[[str, str], dict[str, str]]] = {
    "no token": lambda mine, theirs: {},
    "no token, any id": lambda mine, theirs: {},
    "not bearer": lambda mine, theirs: {"Authorization": "Basic dXNlcjpwYXNz"},
    "empty bearer": lambda mine, theirs: {"Authorization": "Bearer "},
    "random string": lambda mine, theirs: _bearer("x7Gq2-not.a:token"),
    "forged": lambda mine, theirs: _bearer(
        signing.dumps({"c": mine}, key="not-the-secret-key", salt=TOKEN_SALT)
    ),
    "signed for another purpose": lambda mine, theirs: _bearer(
        signing.dumps({"c": mine})
    ),
    "expired": lambda mine, theirs: _bearer(_expired(mine)),
    "another conversation's": lambda mine, theirs: _bearer(theirs),
    "another conversation's, any id": lambda mine, theirs: _bearer(theirs),
}


@pytest.fixture(params=sorted(REFUSED))
def credential(request: pytest.FixtureRequest) -> str:
    """The name of a credential of ``REFUSED``."""
    return request.param


@MESSAGES.parametrize()
@pytest.mark.usefixtures("credential")  # once per credential, as above
@fuzz(8)
def test_messages_without_a_valid_token_are_refused(
    case, credential, agent, row_counts
):
    """Every request for a conversation's messages without that conversation's
    valid bearer token is refused (401 or 403, as documented) and writes no row,
    whether the id in the path is an existing conversation's or any string, and
    whatever the body, the query and the method (a CORS preflight, which carries
    no token, answers nothing)."""
    with rolled_back():
        mine, _ = new_conversation(agent)
        _, theirs = new_conversation(agent, with_history=False)
        if not credential.endswith("any id"):
            case.path_parameters["conversation_id"] = mine
        headers = REFUSED[credential](mine, theirs)
        before = row_counts()
        response = case.call_and_validate(headers=headers, checks=CHECKS)
        if case.method.upper() == "OPTIONS":  # a CORS preflight needs no token
            assert response.content == b""
        else:
            assert response.status_code in (401, 403)
        assert row_counts() == before
