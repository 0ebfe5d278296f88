"""Every lint rule and the token accounting grow linearly with the loop: a test on
operations, not seconds.

The probe counts what the interpreter reports while a rule runs: every line of Python
executed (`sys.settrace` line events, so plain loops count) and every call into C
(`sys.setprofile` c_call events). A loop of 10x the calls must cost at most 11x the
operations; a rule that rescans the transcript at every call (quadratic) costs ~100x.
The one blind spot is work done inside one C call (a `str.find` over a growing text).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest

from tests.core.long_session import make_session
from traces.core.analysis.accounting import account
from traces.core.analysis.ingest import analyze_bytes
from traces.core.analysis.rules.base import LintContext
from traces.core.analysis.rules.registry import rules
from traces.core.model import Trace

SMALL = 60
GROWTH = 10
ALLOWED = 11


def count_operations(work: Callable[[], Any]) -> int:
    """Lines of Python executed plus calls into C while `work` runs."""
    counted = 0

    def lines(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal counted
        if event == "line":
            counted += 1
        return lines

    def c_calls(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal counted
        if event == "c_call":
            counted += 1

    # A debugger's or coverage's hooks are put back afterwards (not counted meanwhile).
    tracer, profiler = sys.gettrace(), sys.getprofile()
    sys.settrace(lines)
    sys.setprofile(c_calls)
    try:
        work()
    finally:
        sys.setprofile(profiler)
        sys.settrace(tracer)
    return counted


_TRACES: dict[int, Trace] = {}


def _trace(calls: int) -> Trace:
    if calls not in _TRACES:
        _TRACES[calls] = analyze_bytes(make_session(calls))
    return _TRACES[calls]


def _rule_operations(rule_id: str, calls: int) -> int:
    trace = _trace(calls)
    accounting = account(trace)
    (rule_class,) = [r for r in rules() if r.id == rule_id]
    ctx = LintContext(trace, accounting)
    return count_operations(lambda: list(rule_class().check(ctx)))


def test_the_sessions_have_the_calls_they_were_made_with():
    assert len(_trace(SMALL).calls) == SMALL
    assert len(_trace(SMALL * GROWTH).calls) == SMALL * GROWTH


@pytest.mark.parametrize("rule_id", [r.id for r in rules()])
def test_ten_times_the_calls_costs_at_most_eleven_times_the_operations(rule_id):
    small = _rule_operations(rule_id, SMALL)
    large = _rule_operations(rule_id, SMALL * GROWTH)
    assert small > 0
    assert large <= ALLOWED * small, (rule_id, small, large, large / small)


def test_accounting_grows_linearly():
    small = count_operations(lambda: account(_trace(SMALL)))
    large = count_operations(lambda: account(_trace(SMALL * GROWTH)))
    assert large <= ALLOWED * small, (small, large, large / small)


def test_the_probe_sees_a_quadratic_loop():
    """The probe itself: rescanning a list at every step is caught, one pass is not."""

    def quadratic(n: int) -> None:
        items = list(range(n))
        for i in items:
            for j in items:
                if j > i:
                    break

    def linear(n: int) -> None:
        for _ in range(n):
            pass

    assert count_operations(lambda: quadratic(600)) > ALLOWED * count_operations(
        lambda: quadratic(60)
    )
    assert count_operations(lambda: linear(600)) <= ALLOWED * count_operations(lambda: linear(60))
