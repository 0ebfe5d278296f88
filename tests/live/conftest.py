"""Live tests: every test starts with no cached session and ends with no report pending."""

from __future__ import annotations

import asyncio
import threading

import pytest

from traces import live


@pytest.fixture(autouse=True)
def settled_live_state(request):
    """Reports are refreshed by a worker thread after commits; wait for it before the
    test database is flushed (so this fixture is set up after the database one)."""
    marker = request.node.get_closest_marker("django_db")
    if marker is not None and marker.kwargs.get("transaction"):
        request.getfixturevalue("transactional_db")
    live.forget_sessions()
    yield
    assert live.wait_for_reports(30), "a live report refresh did not finish"
    live.forget_sessions()


def in_fresh_thread(function, *args, timeout: float = 300.0):
    """Run `function(*args)` in a new thread and return its result (or raise its error).

    Playwright's sync API keeps an event loop running in the main thread for the whole
    session once the browser tests have started it; asyncio code and another Playwright
    need a thread without one.
    """
    outcome: dict = {}

    def target() -> None:
        try:
            outcome["value"] = function(*args)
        except BaseException as exc:  # handed to the test thread
            outcome["error"] = exc

    worker = threading.Thread(target=target, name="live-test")
    worker.start()
    worker.join(timeout)
    assert not worker.is_alive(), f"{function.__name__} did not finish in {timeout} s"
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def run_async(coroutine_function, *args):
    """Run a coroutine function to completion in a fresh thread's own event loop."""
    return in_fresh_thread(lambda: asyncio.run(coroutine_function(*args)))
