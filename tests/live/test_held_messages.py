"""Live tail shows the last message of each loop: a real Claude Code session and its
subagent (from the corpus, their lines interleaved by time as one log) tailed line by
line; the responses the adapter still holds are shown at once, marked as possibly still
growing, settled when the log goes quiet, and become calls when the trace closes."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.test import Client, override_settings
from django.utils import timezone

from tests.conftest import CORPUS
from traces import live, models
from traces.conf import inspector_settings

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.corpus]

SESSION = CORPUS / "claude_code_jsonl" / "codemie_incremental-subagents" / "turn-2.jsonl"
SUBAGENT = SESSION.parent / "turn-2" / "subagents" / "agent-a485154.jsonl"


def interleaved_lines() -> list[bytes]:
    """The session's and the subagent's lines in time order, as an older Claude Code
    wrote them into one file (each line names its agentId)."""
    if not SESSION.is_file() or not SUBAGENT.is_file():
        pytest.skip(f"the public trace corpus is not present at {CORPUS}")
    lines = []
    for order, raw in enumerate(
        SESSION.read_bytes().splitlines() + SUBAGENT.read_bytes().splitlines()
    ):
        stamp = json.loads(raw).get("timestamp") or ""
        lines.append((stamp, order, raw))
    lines.sort(key=lambda item: (item[0], item[1]) if item[0] else ("", item[1]))
    return [raw for _, _, raw in lines]


def last_texts(report: dict) -> dict[int, str]:
    return {loop["index"]: loop for loop in report["loops"]}


@pytest.fixture
def settle_after_30_seconds():
    with override_settings(INSPECTOR={"LIVE_SETTLE_SECONDS": 30}):
        inspector_settings.cache_clear()
        yield
    inspector_settings.cache_clear()


def quiet_for(trace, seconds: float) -> None:
    """The log's last line came `seconds` ago."""
    models.Trace.objects.filter(pk=trace.pk).update(
        live_activity_at=timezone.now() - timedelta(seconds=seconds)
    )


def test_the_last_message_of_each_loop_is_shown_while_live(client: Client, settle_after_30_seconds):
    lines = interleaved_lines()
    trace = live.create_live_trace(name="claude code, live")
    sent = 0
    for start in range(0, len(lines), 7):  # a tail's batches
        live.append_lines(trace_id=trace.pk, offset=sent, lines=lines[start : start + 7])
        sent = min(len(lines), start + 7)
    assert live.wait_for_reports(30)

    quiet_for(trace, 1)
    report = client.get(f"/api/traces/{trace.pk}").json()
    assert report["outcome"]["kind"] == "running"
    held = report["held"]
    assert len(held) == 2  # the main session's last response and the subagent's report
    assert {m["loop"].split()[0] for m in held} == {"session", "subagent"}
    assert all(m["growing"] for m in held if not m["complete"])
    assert all(m["text"] for m in held)
    shown_calls = len(report["calls"])

    stored = models.LiveEvent.objects.filter(trace=trace, type="held").order_by("-seq").first()
    assert [m["line"] for m in stored.payload["messages"]] == [m["line"] for m in held]

    quiet_for(trace, 31)  # the log is quiet: each held message is settled
    settled = client.get(f"/api/traces/{trace.pk}").json()["held"]
    assert [m["growing"] for m in settled] == [False, False]

    closed = live.close_live_trace(trace_id=trace.pk)
    final = client.get(f"/api/traces/{trace.pk}").json()
    assert "held" not in final
    assert closed.calls_count == shown_calls + 2 == 17
    assert final["outcome"]["kind"] != "running"
    for message in held:  # each held message became that loop's last call, same text
        call = next(c for c in final["calls"] if c["line"] == message["line"])
        detail = models.Call.objects.get(trace=trace, index=call["index"])
        assert detail.line == message["line"]
