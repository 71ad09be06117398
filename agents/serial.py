"""One turn at a time in a conversation, in the order turns began.

A member's turn and the continuation of a request staff reviewed both hold the
conversation's turn while they read its history and write to it, so neither
reads the other's rows half-written, and each history is in the order things
happened (a member's message is stored once her turn holds the conversation).
The hold is a lease on the conversation's row, taken by a compare-and-set in the
database (so it holds across web processes and workers) and renewed at each
step; a holder that died lets go when its lease passes. A turn that finds the
conversation held waits for it (``agents.turn`` takes the hold with its first
database work and lets go with its last).
"""

from __future__ import annotations

import datetime
import uuid

from django.db.models import Q
from django.utils import timezone

from agents.models import Conversation

#: How long a turn holds its conversation without renewing it: longer than any
#: step (the provider's retries and a step's tool calls) takes.
TURN_LEASE = datetime.timedelta(seconds=90)
#: Seconds after which a running turn renews its hold.
TURN_RENEW_AFTER = TURN_LEASE.total_seconds() / 3
#: How often a turn waiting for its conversation looks again.
TURN_POLL_SECONDS = 0.05


def conversation_turn_take(*, conversation_id: uuid.UUID, holder: str) -> bool:
    """Hold the conversation's turn for ``holder`` (or renew its hold): False when
    another holder's lease has not passed."""
    now = timezone.now()
    free = Q(turn_until__isnull=True) | Q(turn_until__lt=now) | Q(turn_holder=holder)
    taken = (
        Conversation.objects.filter(pk=conversation_id)
        .filter(free)
        .update(turn_holder=holder, turn_until=now + TURN_LEASE)
    )
    return bool(taken)


def conversation_turn_release(*, conversation_id: uuid.UUID, holder: str) -> None:
    Conversation.objects.filter(pk=conversation_id, turn_holder=holder).update(
        turn_holder="", turn_until=None
    )
