"""Rows written with plain SQL (traces.storage.row_writer) read back exactly as the ORM would
have stored them: NUL, non-ASCII text, JSON lists, nulls and booleans included."""

from __future__ import annotations

import orjson
import pytest

from traces import models
from traces.services.upload import trace_upload
from traces.storage.rows import BlobBatch, call_row, store_tool_runs, tool_run_row

FIELDS_SKIPPED = {"id", "trace"}


def transcript() -> bytes:
    messages: list[dict] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Read the binary file, then the notes (café ☕)."},
    ]
    for n, result in enumerate(["ELF\x00\x01\x02 binary", "notes: naïve ✓", "ok"]):
        call_id = f"call_{n}_é"
        messages.append(
            {
                "role": "assistant",
                "content": f"Step {n}",
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "read_file", "arguments": '{"path": "a\\u0000b"}'},
                    }
                ],
            }
        )
        messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
    messages.append({"role": "assistant", "content": "Done."})
    return orjson.dumps({"messages": messages}) + b"\n"


def model_values(row: models.Model) -> dict:
    return {
        field.attname: getattr(row, field.attname)
        for field in row._meta.concrete_fields
        if field.name not in FIELDS_SKIPPED
    }


@pytest.mark.django_db
def test_plain_sql_rows_read_back_as_the_orm_would_store_them():
    result = trace_upload(files=[("rows.json", transcript())], name="rows")
    trace, core = result.trace, result.core
    assert trace.calls_count == 4 and trace.tool_runs_count == 3

    batch = BlobBatch()
    expected_calls = [model_values(call_row(trace, c, batch)) for c in core.calls]
    stored_calls = [model_values(row) for row in trace.calls.order_by("index")]
    assert stored_calls == expected_calls

    expected_runs = [
        model_values(tool_run_row(trace, position, run, batch))
        for position, run in enumerate(core.tool_runs, start=1)
    ]
    stored_runs = [model_values(row) for row in trace.tool_runs.order_by("position")]
    assert stored_runs == expected_runs
    assert "\x00" in stored_runs[0]["result_preview"]  # NUL kept (escaped on PostgreSQL)
    assert stored_calls[0]["tool_call_ids"] == ["call_0_é"]


@pytest.mark.django_db
def test_live_rows_replace_tool_runs_by_position():
    result = trace_upload(files=[("rows.json", transcript())], name="rows")
    trace, core = result.trace, result.core
    store_tool_runs(trace, [(1, core.tool_runs[0])])
    assert trace.tool_runs.count() == 3
    assert list(trace.tool_runs.order_by("position").values_list("position", flat=True)) == [
        1,
        2,
        3,
    ]


def test_a_blob_batch_stores_each_value_once_as_encode_would():
    """put() compresses a digest's value once: what it keeps is `blobs.encode`'s answer,
    a large value (compressed) and a small one (kept raw) alike, and reads back."""
    from traces.core.reading import blobs

    large = {"text": "naïve ✓ " * 100, "n": [1, 2, 3]}
    small = ["read_file", "a\x00b"]
    batch = BlobBatch()
    digests = [batch.put(value) for value in (large, small, large, small, None)]
    assert digests[:2] == digests[2:4] and digests[4] == ""
    assert len(batch.pending) == 2
    for digest, value in zip(digests[:2], (large, small), strict=True):
        pending = batch.pending[digest]
        assert (pending.digest, pending.data) == blobs.encode(value)
        assert pending.size == len(pending.data)
        assert blobs.decode(pending.data) == value
    assert batch.pending[digests[0]].data[:1] == b"s" and batch.pending[digests[1]].data[:1] == b"r"


@pytest.mark.django_db
def test_rows_stored_a_part_at_a_time_are_the_rows_stored_at_once(monkeypatch):
    """store_trace_rows writes ROWS_AT_ONCE calls (then runs) at a time: two a part here
    (calls 2 + 2, runs 2 + 1), blobs shared across parts (the system prompt, the tool
    list) stored once; every row reads back as the row functions make it, every digest
    a row names is stored and holds its value."""
    from traces.core.reading import blobs
    from traces.storage import rows

    monkeypatch.setattr(rows, "ROWS_AT_ONCE", 2)
    result = trace_upload(files=[("rows.json", transcript())], name="parts")
    trace, core = result.trace, result.core
    batch = BlobBatch()
    expected_calls = [model_values(call_row(trace, c, batch)) for c in core.calls]
    expected_runs = [
        model_values(tool_run_row(trace, position, run, batch))
        for position, run in enumerate(core.tool_runs, start=1)
    ]
    assert [model_values(row) for row in trace.calls.order_by("id")] == expected_calls
    assert [model_values(row) for row in trace.tool_runs.order_by("id")] == expected_runs
    stored = {blob.digest: bytes(blob.data) for blob in models.Blob.objects.all()}
    assert set(batch.pending) <= set(stored)
    for digest, pending in batch.pending.items():
        assert blobs.decode(stored[digest]) == blobs.decode(pending.data)


@pytest.mark.django_db
def test_a_value_repeated_in_a_column_is_stored_for_every_row():
    """The writer prepares a repeated immutable value once (the trace id of every row);
    a mutable one is prepared again at each row, so a list changed between rows is stored
    as it was at each (below)."""
    from traces.storage.row_writer import insert_rows

    trace = trace_upload(files=[("rows.json", transcript())], name="rows").trace
    other = trace_upload(files=[("rows.json", transcript())], name="other").trace
    before = models.LineError.objects.count()
    insert_rows(
        models.LineError,
        ["trace_id", "line", "message"],
        [(trace.pk, 1, "a"), (trace.pk, 2, "b"), (other.pk, 3, "c"), (trace.pk, 4, "d")],
    )
    stored = models.LineError.objects.order_by("line").values_list("trace_id", "line")
    assert list(stored)[before:] == [(trace.pk, 1), (trace.pk, 2), (other.pk, 3), (trace.pk, 4)]


def test_a_list_changed_between_rows_is_prepared_again():
    """Only immutable values are remembered: the same list object, changed after its
    first row, is prepared afresh for the next."""
    from traces.storage.row_writer import _repeats_remembered

    prepared = _repeats_remembered(lambda value: orjson.dumps(value).decode())
    shared = ["one"]
    first = prepared(shared)
    shared.append("two")
    assert (first, prepared(shared)) == ('["one"]', '["one","two"]')
    text = "same"
    assert prepared(text) == prepared(text) == '"same"'
