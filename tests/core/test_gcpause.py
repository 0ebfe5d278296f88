"""The cycle collector pauses while a trace is analysed and comes back afterwards."""

from __future__ import annotations

import gc
import threading

import pytest

from traces.core.analysis.ingest import analyze_bytes
from traces.core.gcpause import (
    cycle_collector_paused,
    without_cycle_collection,
)
from traces.core.reading.sample import sample_bytes


@pytest.fixture(autouse=True)
def collector_on():
    gc.enable()
    yield
    gc.enable()


def test_paused_inside_and_back_after_nested_pauses():
    with cycle_collector_paused():
        assert not gc.isenabled()
        with cycle_collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer analysis is still running
    assert gc.isenabled()


def test_a_collector_switched_off_by_the_host_stays_off():
    gc.disable()
    with cycle_collector_paused():
        pass
    assert not gc.isenabled()


def test_the_decorator_restores_the_collector_when_the_analysis_raises():
    @without_cycle_collection
    def failing():
        assert not gc.isenabled()
        raise ValueError("bad trace")

    with pytest.raises(ValueError):
        failing()
    assert gc.isenabled()


def test_overlapping_analyses_in_threads_restore_the_collector_once_all_end():
    inside = threading.Barrier(3)  # both analyses and this test
    leave = threading.Event()

    def analysis():
        with cycle_collector_paused():
            inside.wait(timeout=5)
            leave.wait(timeout=5)

    first = threading.Thread(target=analysis)
    second = threading.Thread(target=analysis)
    first.start()
    second.start()
    try:
        inside.wait(timeout=5)
        assert not gc.isenabled()
    finally:
        leave.set()
        first.join()
        second.join()
    assert gc.isenabled()


def test_analysing_a_trace_leaves_the_collector_as_it_was():
    trace = analyze_bytes(sample_bytes())
    assert len(trace.calls) == 4
    assert gc.isenabled()


FREEZER_SCENARIO = """
import gc, weakref
from traces.core.gcpause import LongLivedFreezer

class Node:
    pass

freezer = LongLivedFreezer()
freezer.freeze()  # the first freeze sets the floor
node = Node()
node.self = node  # a cycle: only the collector frees it
alive = weakref.ref(node)
freezer.freeze()  # frozen while alive
del node
gc.collect()
frozen_while_garbage = alive() is not None  # frozen: the collector cannot see it
kept = [[] for _ in range(gc.get_freeze_count() + 1)]  # the frozen set doubles
freezer.freeze()
print(frozen_while_garbage, alive() is None)
"""


def test_a_freeze_does_not_keep_cyclic_garbage_forever():
    """What was alive at a freeze and became cyclic garbage later is freed once the
    frozen set has doubled (issue 26: a request's objects, frozen at a cache miss). In a
    process of its own: freezing is process-wide, and other tests' threads freeze too."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", FREEZER_SCENARIO], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True"]
