"""An OTLP export answered, then the process storing it killed -9 (issue 25).

The receiver answers once the export is durable: its traces' lines fsynced to
`uploads/<id>.upload`, a job row committed (traces.capture.otlp_queue). Killed right
after the answer, before the queue has stored it all, nothing is lost: the restarted
process's queue recovers the job and stores every trace once. On SQLite the web process
is the queue's worker (embedded); on PostgreSQL with Redis a `run_huey` worker is, and
it is the one killed (tests/hostile/deployment.py).
"""

from __future__ import annotations

import http.client
import json
import time
from urllib.parse import urlsplit

import pytest

from tests.hostile.deployment import STALE_SECONDS, Deployment, wait_for
from traces import models
from traces.models.rows import Call

pytestmark = pytest.mark.django_db(transaction=True)

TRACES = 400
CALLS = 3
"""Chat spans per trace: 1,200 calls, long enough to store that the kill lands first."""


def chat_span(trace: int, call: int) -> dict:
    start = 1_700_000_000_000_000_000 + trace * 1_000_000_000 + call * 10_000_000
    question = [{"role": "user", "parts": [{"type": "text", "content": f"task {trace}"}]}]
    answer = [{"role": "assistant", "parts": [{"type": "text", "content": f"step {call}"}]}]
    return {
        "traceId": f"{trace + 1:032x}",
        "spanId": f"{trace * 100 + call + 1:016x}",
        "name": "chat gpt-4o",
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 5_000_000),
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.request.model", "value": {"stringValue": "gpt-4o"}},
            {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(question)}},
            {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps(answer)}},
            {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "100"}},
            {"key": "gen_ai.usage.output_tokens", "value": {"intValue": "10"}},
        ],
    }


def export_body() -> bytes:
    spans = [chat_span(trace, call) for trace in range(TRACES) for call in range(CALLS)]
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode()


@pytest.fixture
def deployment(tmp_path):
    running = Deployment(tmp_path)
    try:
        yield running
    finally:
        running.close()


def export(base: str, body: bytes) -> tuple[int, bytes]:
    parts = urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        conn.request("POST", "/v1/traces", body=body, headers={"Content-Type": "application/json"})
        reply = conn.getresponse()
        return reply.status, reply.read()
    finally:
        conn.close()


def otlp_traces():
    return models.Trace.objects.filter(capture_key__startswith="otlp:")


def test_the_worker_killed_right_after_the_answer_loses_no_span(deployment):
    """Answered 200, then kill -9 of whatever runs the queue at once: the job is left
    queued or running with fewer traces stored than sent; after the restart every trace
    is there once, with all its calls, and the spooled export is removed."""
    body = export_body()
    base = deployment.start()
    status, answer = export(base, body)
    deployment.kill_worker()
    assert status == 200 and answer == b"{}", answer
    job = models.Job.objects.get(kind=models.Job.Kind.OTLP)
    at_kill = otlp_traces().count()
    print(f"killed after the answer: job {job.state}, {at_kill} of {TRACES} traces stored")
    assert job.state in (models.Job.State.QUEUED, models.Job.State.RUNNING)
    assert at_kill < TRACES
    assert (deployment.folder / "uploads" / f"{job.pk}.upload").exists()

    deployment.restart_worker()  # on PostgreSQL the web process lives on

    def all_stored() -> bool:
        return otlp_traces().filter(calls_count=CALLS).count() == TRACES

    wait_for(all_stored, "every trace stored with its calls", timeout=60 + 2 * STALE_SECONDS)
    keys = list(otlp_traces().values_list("capture_key", flat=True))
    assert len(keys) == len(set(keys)) == TRACES  # none stored twice
    assert Call.objects.filter(trace__capture_key__startswith="otlp:").count() == TRACES * CALLS
    job.refresh_from_db()
    assert job.state == models.Job.State.DONE and job.records_parsed == TRACES
    deadline = time.monotonic() + 10
    while (deployment.folder / "uploads" / f"{job.pk}.upload").exists():
        assert time.monotonic() < deadline, "the spooled export was not removed"
        time.sleep(0.05)


def test_the_worker_killed_between_two_batches_resumes_after_the_last(deployment):
    """Killed once some of the export's batches are committed: the job's count of stored
    traces was committed with them, so the recovered job stores the rest and none twice."""
    deployment.env["INSPECTOR_OTLP_BATCH_TRACES"] = "20"
    body = export_body()
    base = deployment.start()
    status, _ = export(base, body)
    assert status == 200
    jobs = models.Job.objects.filter(kind=models.Job.Kind.OTLP)
    wait_for(
        lambda: jobs.filter(state=models.Job.State.RUNNING, records_parsed__gt=0).exists(),
        "the first batches committed",
        every=0.005,
    )
    deployment.kill_worker()
    stranded = jobs.get()
    at_kill = otlp_traces().count()
    print(f"killed mid-store: job {stranded.state}, {stranded.records_parsed} traces counted")
    assert stranded.state == models.Job.State.RUNNING and stranded.attempts == 1
    assert at_kill == stranded.records_parsed < TRACES  # the count commits with its traces

    deployment.restart_worker()
    wait_for(
        lambda: otlp_traces().filter(calls_count=CALLS).count() == TRACES,
        "every trace stored with its calls",
        timeout=60 + 2 * STALE_SECONDS,
    )
    keys = list(otlp_traces().values_list("capture_key", flat=True))
    assert len(keys) == len(set(keys)) == TRACES
    assert Call.objects.filter(trace__capture_key__startswith="otlp:").count() == TRACES * CALLS
    stranded.refresh_from_db()
    assert (stranded.state, stranded.records_parsed, stranded.attempts) == ("done", TRACES, 2)
