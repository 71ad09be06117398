"""Canonical arguments: the same action has the same key however it is written."""

from __future__ import annotations

import json
import random

from hypothesis import given
from hypothesis import strategies as st

from tools.canonical import action_key, canonical_arguments

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**12), max_value=10**12),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=8),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.text(max_size=5), inner, max_size=3),
    ),
    max_leaves=10,
)
arguments = st.dictionaries(st.text(max_size=8), values, max_size=6)


def shuffled(value, rng):
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {k: shuffled(v, rng) for k, v in items}
    if isinstance(value, list):
        return [shuffled(v, rng) for v in value]
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value) if abs(value) < 2**53 else value
    return value


@given(
    arguments, st.integers(min_value=0, max_value=2**32), st.sampled_from([None, 0, 2])
)
def test_canonical_ignores_key_order_whitespace_and_number_format(args, seed, indent):
    rewritten = json.loads(
        json.dumps(shuffled(args, random.Random(seed)), indent=indent)
    )
    assert canonical_arguments(rewritten) == canonical_arguments(args)


@given(arguments, arguments)
def test_canonical_differs_when_values_differ(first, second):
    if canonical_arguments(first) != canonical_arguments(second):
        assert action_key(
            business_id=1, conversation_key="c", tool_name="t", arguments=first
        ) != action_key(
            business_id=1, conversation_key="c", tool_name="t", arguments=second
        )


def test_canonical_numbers_compare_by_value():
    assert canonical_arguments({"grams": 150}) == canonical_arguments({"grams": 150.0})
    assert canonical_arguments({"grams": 12.5}) == canonical_arguments({"grams": 12.50})
    assert canonical_arguments({"grams": 12.5}) != canonical_arguments(
        {"grams": "12.5"}
    )
    assert canonical_arguments({"flag": True}) != canonical_arguments({"flag": 1})


def test_action_key_depends_on_conversation_and_tool():
    args = {"session_id": 3}
    keys = {
        action_key(business_id=1, conversation_key=c, tool_name=t, arguments=args)
        for c in ("a", "b")
        for t in ("book_class", "cancel_booking")
    }
    assert len(keys) == 4
