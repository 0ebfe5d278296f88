"""The queued OTLP store (issue 25) on the test database, its queue run inline: a new
trace stored in bulk is the live trace an append makes (same calls, tool runs, report,
original bytes), the next export's spans append to it, and the export's job and spool
file say what happened."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.test import Client

from traces import live, models
from traces.capture import otlp_queue
from traces.core.reading import otlp
from traces.models.rows import Call, ToolRun
from traces.selectors.traces import trace_source_bytes

pytestmark = pytest.mark.django_db(transaction=True)

BASE = 1_700_000_000_000_000_000


def attrs(**values) -> list[dict]:
    out = []
    for key, value in values.items():
        name = key.replace("__", ".")
        kind = "intValue" if isinstance(value, int) else "stringValue"
        out.append({"key": name, "value": {kind: str(value) if kind == "intValue" else value}})
    return out


def loop_spans(trace_id: str, first: int, last: int) -> list[dict]:
    """Chat spans `first`..`last` of a tool loop, each chat followed by its tool span."""
    spans = []
    messages: list[dict] = [{"role": "user", "parts": [{"type": "text", "content": "go"}]}]
    for call in range(last + 1):
        tool_id = f"call_{call}"
        reply = {
            "role": "assistant",
            "parts": [{"type": "tool_call", "id": tool_id, "name": "search", "arguments": {}}],
        }
        start = BASE + call * 1_000_000_000
        chat = {
            "traceId": trace_id,
            "spanId": f"{2 * call + 1:016x}",
            "name": "chat gpt-4o",
            "startTimeUnixNano": str(start),
            "endTimeUnixNano": str(start + 100_000_000),
            "attributes": attrs(
                gen_ai__operation__name="chat",
                gen_ai__request__model="gpt-4o",
                gen_ai__input__messages=json.dumps(messages),
                gen_ai__output__messages=json.dumps([reply]),
                gen_ai__usage__input_tokens=100 + 10 * call,
                gen_ai__usage__output_tokens=5,
            ),
        }
        tool = {
            "traceId": trace_id,
            "spanId": f"{2 * call + 2:016x}",
            "name": "execute_tool search",
            "startTimeUnixNano": str(start + 200_000_000),
            "endTimeUnixNano": str(start + 300_000_000),
            "attributes": attrs(
                gen_ai__operation__name="execute_tool",
                gen_ai__tool__name="search",
                gen_ai__tool__call__id=tool_id,
            ),
        }
        if call >= first:
            spans += [chat, tool]
        messages.append(reply)
        result = {"type": "tool_call_response", "id": tool_id, "response": f"found {call}"}
        messages.append({"role": "tool", "parts": [result]})
    return spans


def export_of(*spans: dict) -> bytes:
    return json.dumps(
        {
            "resourceSpans": [
                {
                    "resource": {"attributes": attrs(service__name="agent")},
                    "scopeSpans": [{"spans": list(spans)}],
                }
            ]
        }
    ).encode()


def post(body: bytes):
    return Client().post("/v1/traces", body, content_type="application/json")


def rows_of(trace: models.Trace) -> tuple:
    calls = list(
        Call.objects.filter(trace=trace)
        .order_by("index")
        .values_list("index", "status", "input_tokens", "response_digest", "tool_call_ids")
    )
    runs = list(
        ToolRun.objects.filter(trace=trace)
        .order_by("position")
        .values_list("position", "tool_call_id", "status", "call", "result_call")
    )
    return calls, runs


def report_shape(report: dict) -> tuple:
    calls = [(c["index"], c["input_tokens"], c["stop_reason"]) for c in report["calls"]]
    runs = [(r["id"], r["status"]) for r in report["tool_runs"]]
    rules = sorted(f["rule"] for f in report["findings"])
    return calls, runs, rules, report["totals"]["input_tokens"]


def test_a_new_trace_stored_in_bulk_is_the_trace_an_append_makes(settings, tmp_path):
    settings.INSPECTOR_DATA_DIR = tmp_path
    trace_id = "ab" * 16
    body = export_of(*loop_spans(trace_id, 0, 2))
    reply = post(body)
    assert reply.status_code == 200 and reply.json() == {}
    queued = models.Trace.objects.get(capture_key=f"otlp:{trace_id}")

    # The same export through the live path, as the receiver stored it before.
    split = otlp.split_by_trace(json.loads(body))
    (group,) = split.groups.values()
    appended = live.create_live_trace(name="append", format_name="otel-genai")
    live.append_lines(trace_id=appended.pk, offset=None, lines=[otlp.export_line(group)])
    appended.refresh_from_db()

    assert (queued.state, queued.lines_total, queued.report_lines) == ("live", 1, 1)
    assert queued.calls_count == appended.calls_count == 3
    assert rows_of(queued) == rows_of(appended)
    assert report_shape(queued.report) == report_shape(appended.report)
    assert trace_source_bytes(trace=queued) == trace_source_bytes(trace=appended)

    def usage(trace: models.Trace) -> tuple:
        slots = models.UsageSlot.objects.filter(trace=trace)
        return (
            sorted(slots.values_list("hour", "model", "calls", "input_tokens", "cost_usd")),
            sorted(models.UsageFinding.objects.filter(trace=trace).values_list("rule", "count")),
            sorted(
                models.UsageSaving.objects.filter(trace=trace).values_list("lever", "usd_saved")
            ),
        )

    assert usage(queued)[0] and usage(queued) == usage(appended)
    rules = models.TraceRule.objects.values_list("rule", "severity", "count")
    assert sorted(rules.filter(trace=queued)) == sorted(rules.filter(trace=appended))
    job = models.Job.objects.get(kind=models.Job.Kind.OTLP)
    assert (job.state, job.records_parsed) == ("done", 1)
    assert not Path(job.path).exists()  # the spooled export is removed once stored


def test_the_next_exports_spans_append_to_the_bulk_trace(settings, tmp_path):
    """A run's spans split across two exports (the SDK's batches): one trace, whose
    session replays the bulk-stored line before the new one; its report covers both."""
    settings.INSPECTOR_DATA_DIR = tmp_path
    trace_id = "cd" * 16
    assert post(export_of(*loop_spans(trace_id, 0, 1))).status_code == 200
    assert post(export_of(*loop_spans(trace_id, 2, 3))).status_code == 200
    (trace,) = models.Trace.objects.filter(capture_key=f"otlp:{trace_id}")
    assert (trace.lines_total, trace.calls_count) == (2, 4)
    assert [c[0] for c in rows_of(trace)[0]] == [1, 2, 3, 4]
    assert trace.report_lines == 2 and len(trace.report["calls"]) == 4
    assert models.LiveEvent.objects.filter(trace=trace, type="call").count() == 2
    done = models.Job.objects.filter(kind=models.Job.Kind.OTLP, state="done")
    assert done.count() == 2


def test_spans_without_genai_are_left_out_before_anything_is_queued(settings, tmp_path):
    settings.INSPECTOR_DATA_DIR = tmp_path
    plain = {
        "traceId": "ef" * 16,
        "spanId": "0000000000000001",
        "name": "GET /",
        "startTimeUnixNano": str(BASE),
        "endTimeUnixNano": str(BASE + 1),
    }
    reply = post(export_of(plain))
    assert reply.status_code == 200
    assert "no GenAI span" in reply.json()["partialSuccess"]["errorMessage"]
    assert not models.Job.objects.exists()  # nothing to store: nothing queued
    assert not list(tmp_path.glob("uploads/*"))  # and nothing spooled


def test_a_spooled_export_reads_back_as_written(settings, tmp_path):
    settings.INSPECTOR_DATA_DIR = tmp_path
    traces = [
        otlp_queue.QueuedTrace("otlp:1", "OTel · a · 1", True, b'{"resourceSpans":[]}'),
        otlp_queue.QueuedTrace("p3:otlp:2", "OTel · b · \n2", False, b'{"x":"\\n"}'),
    ]
    received = otlp_queue.spool(traces)
    assert received.path.suffix == ".upload" and received.path.exists()
    assert otlp_queue.read_spool(received.path) == traces


def _queued_without_running(body: bytes) -> None:
    """An export spooled and its job committed, as the receiver leaves it, its store
    not run yet (the queue's worker is busy)."""
    from traces.capture import otlp as receiver

    project = models.Project.default()
    kept = receiver._keep(otlp.split_by_trace(json.loads(body)), project)
    received = receiver._spool(kept.traces)
    models.Job.objects.create(
        id=received.job_id,
        kind=models.Job.Kind.OTLP,
        project=project,
        filename="OTLP export",
        path=str(received.path),
        bytes_total=received.size,
        options={"traces": len(kept.traces)},
    )


def test_an_export_that_comes_while_reports_are_built_is_stored_before_the_rest(
    settings, tmp_path, monkeypatch
):
    """New traces' reports are built a part at a time, the queue looked at between parts:
    a later export's calls are viewable before the earlier exports' remaining reports."""
    settings.INSPECTOR_DATA_DIR = tmp_path
    settings.INSPECTOR = {**getattr(settings, "INSPECTOR", {}), "OTLP_BATCH_TRACES": 1}
    order: list[tuple[str, list[str]]] = []
    real_insert, real_report = otlp_queue.insert_live_rows, otlp_queue.report_live_traces

    def insert(built):  # the new traces' rows, built before the transaction, written
        order.append(("stored", list(built.keys)))
        return real_insert(built)

    def report(created, prices):
        order.append(("reported", [item.key for _, item in created]))
        if len(order) == 3:  # while the first report is built, another export comes
            _queued_without_running(export_of(*loop_spans("03" * 16, 0, 1)))
        return real_report(created, prices)

    monkeypatch.setattr(otlp_queue, "insert_live_rows", insert)
    monkeypatch.setattr(otlp_queue, "report_live_traces", report)
    _queued_without_running(export_of(*loop_spans("01" * 16, 0, 1), *loop_spans("02" * 16, 0, 1)))
    otlp_queue._store_queued()
    first, second, third = (f"otlp:{f'{n:02d}' * 16}" for n in (1, 2, 3))
    assert order == [
        ("stored", [first]),
        ("stored", [second]),
        ("reported", [first]),
        ("stored", [third]),
        ("reported", [second]),
        ("reported", [third]),
    ]
    traces = models.Trace.objects.filter(capture_key__in=[first, second, third])
    assert sorted(t.report_lines for t in traces) == [1, 1, 1]
    assert not otlp_queue.pending_exports()


def test_a_trace_that_turns_live_while_its_rows_are_built_gets_its_spans_appended(
    settings, tmp_path, monkeypatch
):
    """The new traces' rows are built before the storing transaction: one that another
    writer made live in between is appended to instead, the others stored from the rows
    built for them, and none stored twice."""
    from traces.capture.lines import record_lines

    settings.INSPECTOR_DATA_DIR = tmp_path
    first, second = "0a" * 16, "0b" * 16
    body = export_of(*loop_spans(first, 0, 1), *loop_spans(second, 0, 1))
    real_prepare = otlp_queue.prepare_live_rows

    def prepare(staged, project):
        built = real_prepare(staged, project)
        (group,) = otlp.split_by_trace(
            json.loads(export_of(*loop_spans(second, 2, 2)))
        ).groups.values()
        record_lines(
            key=f"otlp:{second}",
            format_name="otel-genai",
            name="made live meanwhile",
            lines=[otlp.export_line(group)],
            sweep=False,
        )
        return built

    monkeypatch.setattr(otlp_queue, "prepare_live_rows", prepare)
    _queued_without_running(body)
    otlp_queue._store_queued()
    one = models.Trace.objects.get(capture_key=f"otlp:{first}")
    two = models.Trace.objects.get(capture_key=f"otlp:{second}")
    assert (one.lines_total, one.calls_count, one.report_lines) == (1, 2, 1)
    assert two.name == "made live meanwhile" and (two.lines_total, two.calls_count) == (2, 3)
    assert [c[0] for c in rows_of(one)[0]] == [1, 2]
    assert [c[0] for c in rows_of(two)[0]] == [1, 2, 3]
    assert Call.objects.count() == 5 and models.Trace.objects.count() == 2
    assert models.Job.objects.get(kind=models.Job.Kind.OTLP).state == "done"
