"""A Codex session tailed live shows its last response at once: Codex writes a response
as several lines and the adapter emits it at its `token_count` event, the next response
or the end of the file, so a session whose last response has no count yet (the one in
the corpus) holds it until the trace closes. While live it is shown as held, marked as
possibly still growing, and it becomes the session's last call at close."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.conftest import CORPUS
from tests.live.test_held_messages import quiet_for, settle_after_30_seconds  # noqa: F401
from traces import live, models

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.corpus]

SESSION = (
    CORPUS
    / "codex_rollout_jsonl"
    / "rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl"
)


@pytest.mark.usefixtures("settle_after_30_seconds")
def test_the_last_response_of_a_codex_session_is_shown_while_live(client: Client):
    if not SESSION.is_file():
        pytest.skip(f"the public trace corpus is not present at {CORPUS}")
    lines = SESSION.read_bytes().splitlines()
    trace = live.create_live_trace(name="codex, live", format_name="codex-rollout")
    for start in range(0, len(lines), 5):  # a tail's batches
        live.append_lines(trace_id=trace.pk, offset=start, lines=lines[start : start + 5])
    assert live.wait_for_reports(30)

    quiet_for(trace, 1)
    report = client.get(f"/api/traces/{trace.pk}").json()
    assert report["outcome"]["kind"] == "running"
    shown_calls = len(report["calls"])
    [held] = report["held"]
    assert held["loop"].startswith("Codex session")
    assert held["growing"] and not held["complete"]
    assert held["text"] or held["tool_uses"]
    stored = models.LiveEvent.objects.filter(trace=trace, type="held").order_by("-seq").first()
    assert [m["line"] for m in stored.payload["messages"]] == [held["line"]]

    quiet_for(trace, 31)  # the file has been quiet: settled
    assert [m["growing"] for m in client.get(f"/api/traces/{trace.pk}").json()["held"]] == [False]

    closed = live.close_live_trace(trace_id=trace.pk)
    final = client.get(f"/api/traces/{trace.pk}").json()
    assert "held" not in final
    assert closed.calls_count == shown_calls + 1
    last = next(c for c in final["calls"] if c["line"] == held["line"])
    assert last["index"] == closed.calls_count
