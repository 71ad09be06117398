"""The requests and answers of the conversation API v1 (DESIGN.md, "Public
interfaces"), declared once as pydantic models.

The views validate what they are sent with the request models (``agents.api``), and
the OpenAPI document is generated from all of them (``agents.openapi``), so the
document cannot drift from the checks; the fuzz test (tests/agents/test_api_fuzz.py)
holds the answers to their models. A request model names, for each field, the
detail of the error a bad value gets, so that the error codes of the contract stay:
400 ``bad_request``, and 413 ``too_long`` for a text past its length.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, ClassVar, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

MAX_TEXT = 4000
PAGE_DEFAULT, PAGE_MAX = 50, 100  # messages a read answers
BODY_REFUSED = (
    "The body must be a JSON object whose text has no NUL characters or lone "
    "surrogates."
)


class Asked(BaseModel):
    """What a client sends: strict types (JSON's own, no coercion); fields the API
    does not know are ignored."""

    model_config = ConfigDict(strict=True)

    #: The detail of the 400 a bad value of each field gets ("": the whole).
    refused: ClassVar[dict[str, str]] = {}
    #: The detail of the 413 a text longer than its field takes gets.
    too_long: ClassVar[dict[str, str]] = {}

    @classmethod
    def refusal(cls, error: ValidationError) -> tuple[int, str, str]:
        """The status, code and detail of the error answer to ``error`` (its first
        problem, in the order of the fields)."""
        first = error.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else ""
        if first["type"] == "string_too_long" and field in cls.too_long:
            return 413, "too_long", cls.too_long[field]
        return 400, "bad_request", cls.refused.get(field, BODY_REFUSED)


class StartConversation(Asked):
    """The body of a start: which agent, and who the member is."""

    agent: str = Field(min_length=1, description="The agent's public key.")
    identity_token: str | None = Field(
        default=None,
        description=(
            "A JWT from the gym's backend naming the member (HS256, signed with the "
            "agent's identity secret; claims `sub`, `aud` = the agent's public key, "
            "`exp` at most one hour ahead, optional `name` and `email`). Without it "
            "the conversation is an anonymous visitor's; an invalid one is refused "
            "(401), never downgraded."
        ),
    )

    refused: ClassVar[dict[str, str]] = {
        "agent": "'agent' must be an agent's public key.",
        "identity_token": "'identity_token' must be a string.",
    }


class SendMessage(Asked):
    """The body of a message: the member's text."""

    text: str = Field(
        min_length=1,
        max_length=MAX_TEXT,
        description=(
            f"The member's message, 1 to {MAX_TEXT} characters; a blank text is a "
            f"bad request (400), a longer one is too long (413)."
        ),
    )

    refused: ClassVar[dict[str, str]] = {
        "text": "'text' must be 1 to 4,000 characters."
    }
    too_long: ClassVar[dict[str, str]] = {
        "text": "'text' must be at most 4,000 characters."
    }

    @field_validator("text")
    @classmethod
    def _not_blank(cls, text: str) -> str:
        if not text.strip():
            raise ValueError("blank")
        return text


def _whole_number(value: object) -> object:
    """A query's number: ASCII digits only (no sign, space, point or other
    script's digits), as a message id is."""
    if isinstance(value, str):
        if not (value.isascii() and value.isdigit()):
            raise ValueError("not a whole number")
        return int(value)
    return value


def _absent_when_empty(value: object) -> object:
    """``after=`` names no message: the same as no ``after``."""
    return None if value == "" else value


MessageId = Annotated[
    Annotated[
        str,
        Field(
            pattern=r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
            r"[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
        ),
    ]
    | SkipJsonSchema[None],
    BeforeValidator(_absent_when_empty),
]


class MessagePageQuery(Asked):
    """The query of a read: where the page is, and how long."""

    after: MessageId = Field(
        default=None, description="A message id: the messages created after it."
    )
    before: MessageId = Field(
        default=None,
        description=(
            "A message id: the page just before it (not with `after`). With "
            "neither, the newest page."
        ),
    )
    limit: Annotated[int, BeforeValidator(_whole_number)] = Field(
        default=PAGE_DEFAULT,
        ge=1,
        le=PAGE_MAX,
        description="Messages a page holds at most.",
    )

    refused: ClassVar[dict[str, str]] = {
        "after": "'after' must be a message id.",
        "before": "'before' must be a message id.",
        "limit": f"'limit' must be a whole number from 1 to {PAGE_MAX}.",
        "": "Give 'after' or 'before', not both.",
    }

    @model_validator(mode="after")
    def _one_side(self) -> MessagePageQuery:
        if self.after is not None and self.before is not None:
            raise ValueError("both")
        return self


class Answered(BaseModel):
    """What the API answers: exactly these fields."""

    model_config = ConfigDict(extra="forbid")


class Conversation(Answered):
    """A started conversation and its bearer token."""

    conversation: str = Field(description="The conversation's id.")
    token: str = Field(description="The bearer token of this conversation only.")
    expires_at: datetime = Field(description="When the token stops being accepted.")
    member: str | None = Field(
        description=(
            "The member's external id at the gym, or null for an anonymous visitor."
        )
    )


class Message(Answered):
    """A message of the conversation, as a member sees it."""

    id: str = Field(
        description="Opaque; pass it back as `after` to read what came later."
    )
    role: Literal["member", "assistant", "notice"]
    text: str
    created_at: datetime


class Messages(Answered):
    """The messages a turn added, in order."""

    messages: list[Message]


class MessagePage(Answered):
    """A page of the conversation's messages, oldest first."""

    messages: list[Message]
    more: bool = Field(
        description=(
            "Whether more messages lie beyond this page: later ones with `after`, "
            "earlier ones otherwise."
        )
    )


class Error(Answered):
    """An error answer (or a streamed turn's error event)."""

    error: str = Field(description="A stable code.")
    detail: str = Field(description="Human text.")


class Delta(Answered):
    """A piece of the reply, streamed."""

    text: str


class Empty(Answered):
    """An event with nothing to say but its name."""
