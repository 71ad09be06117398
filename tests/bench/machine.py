"""How fast this machine is right now, for reading benchmark figures.

A shared machine's speed drifts during a day (here, by up to half again); the same
fixed loop, timed before a benchmark's figures, tells whether two runs met the
same machine."""

from __future__ import annotations

import timeit


def speed_line() -> str:
    best = min(timeit.repeat("sum(range(1000))", number=20000, repeat=5)) / 20000
    return f"machine: a fixed loop, sum(range(1000)), takes {best * 1e6:.1f} µs"
