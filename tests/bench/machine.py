"""How fast this machine is right now, and figures that its drift leaves alone.

A shared machine's speed drifts during a day (here, by up to half again); the same
fixed loop, timed before a benchmark's figures, tells whether two runs met the
same machine."""

from __future__ import annotations

import asyncio
import statistics
import timeit
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def speed_line() -> str:
    best = min(timeit.repeat("sum(range(1000))", number=20000, repeat=5)) / 20000
    return f"machine: a fixed loop, sum(range(1000)), takes {best * 1e6:.1f} µs"


def run_as_served(main: Coroutine[Any, Any, T]) -> T:
    """``main`` run in the event loop uvicorn gives the app: uvloop where it is
    installed (it is in requirements.txt), asyncio's own otherwise."""
    try:
        from uvicorn.loops.auto import auto_loop_factory
    except ImportError:  # a harness's own environment without uvicorn
        try:
            import uvloop
        except ImportError:
            return asyncio.run(main)
        return uvloop.run(main)
    with asyncio.Runner(loop_factory=auto_loop_factory()) as runner:
        return runner.run(main)


def added_per_call(times: dict[int, list[float]], calls: int) -> float:
    """What ``calls`` calls add to a turn, per call, from the turns' times by their
    number of calls (one of each per repeat, in a row): in each repeat, that turn
    less the turn with no call run just before it, so that the machine's drift
    between repeats cancels out; the median over the repeats."""
    return statistics.median(
        (with_calls - without) / calls
        for with_calls, without in zip(times[calls], times[0], strict=True)
    )
