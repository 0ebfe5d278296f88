"""Inspect AI eval logs (.json and the .eval ZIP): corpus, golden report, odd input, ZIP safety."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import Any

import orjson
import pytest
import zstandard

from tests.conftest import corpus_files, corpus_id
from tests.golden import assert_golden, golden_input
from traces.core.analysis.ingest import analyze_bytes
from traces.core.model import LineError, Trace
from traces.core.outputs.report import build_report
from traces.core.reading.dialects.inspect_ai import inspect_usage
from traces.core.reading.formats.inspect_sample import version_tuple
from traces.core.reading.limits import InputRejected, Limits
from traces.core.reading.records import Record
from traces.core.reading.sources import read_source, read_zip

FOLDER = "inspect_ai_eval_log"
BROWSER = "2025-05-12T20-27-36-04-00_browser.json"
SECURITY = "2025-05-12T20-28-26-04-00_security-guide.json"
POPULARITY = "2025-05-12T20-28-13-04-00_popularity.json"
EVAL_ZIP = "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"


def _corpus(corpus: Path, name: str) -> Trace:
    trace = analyze_bytes((corpus / FOLDER / name).read_bytes(), filename=name)
    assert trace.format == "inspect-ai"
    return trace


def _totals(trace: Trace) -> tuple[int, int, int]:
    report = build_report(trace)["totals"]
    return report["input_tokens"], report["cache_read_tokens"], report["output_tokens"]


def _texts(trace: Trace) -> list[str]:
    texts: list[str] = []
    for call in trace.calls:
        messages = [*call.appended, *([call.response] if call.response else [])]
        texts.extend(block.text for message in messages for block in message.blocks)
    return texts


# -- the public corpus -------------------------------------------------------------------
@pytest.mark.corpus
@pytest.mark.parametrize("path", corpus_files(FOLDER), ids=corpus_id)
def test_every_corpus_log_is_read_as_inspect(path: Path) -> None:
    trace = analyze_bytes(path.read_bytes(), filename=path.name)
    assert trace.format == "inspect-ai"
    assert trace.calls
    assert not trace.line_errors
    assert all(call.usage is not None for call in trace.calls)


@pytest.mark.corpus
def test_browser_log_is_one_loop_of_five_calls_with_four_paired_tools(corpus: Path) -> None:
    # SOURCES.md §7: 1 sample, 5 model events, 4 tool events, all 4 ids in the outputs.
    trace = _corpus(corpus, BROWSER)
    assert len(trace.loops) == 1
    assert trace.loops[0].label == "sample 1 (epoch 1)"
    assert len(trace.calls) == 5
    assert [c.stop_reason for c in trace.calls] == ["tool_use"] * 4 + ["end_turn"]
    assert all(c.extends_previous for c in trace.calls[1:])
    assert len(trace.tool_runs) == 4
    assert {run.status for run in trace.tool_runs} == {"paired"}
    assert [run.name for run in trace.tool_runs] == ["web_browser_go"] + ["web_browser_click"] * 3
    # The tool events give the real run time: call_O6fz... ran 20:27:44.890642 -> 46.168466.
    click = next(run for run in trace.tool_runs if run.id == "call_O6fzXOPUvPtYflWdOH94RTWy")
    assert click.duration_s == pytest.approx(1.277824, abs=1e-4)


@pytest.mark.corpus
def test_browser_usage_subtracts_cache_reads_that_openai_counted_in_the_prompt(
    corpus: Path,
) -> None:
    # Second model event: usage 1568 input with 1024 cache_read; call.response has
    # prompt_tokens 1568, so Inspect 0.3.95's input_tokens included the cache.
    trace = _corpus(corpus, BROWSER)
    second = trace.calls[1].usage
    assert second is not None
    assert (second.input_tokens, second.cache_read_tokens, second.output_tokens) == (544, 1024, 17)
    assert trace.calls[1].extra["usage_rule"].startswith("raw provider usage")
    # stats.model_usage: 15235 input (cache included), 9088 cache_read, 281 output.
    assert _totals(trace) == (15235 - 9088, 9088, 281)


@pytest.mark.corpus
def test_browser_attachments_are_resolved_in_messages_and_tools(corpus: Path) -> None:
    # 13 attachment://<hash> references (the task, page snapshots, tool descriptions).
    trace = _corpus(corpus, BROWSER)
    assert not any("attachment://" in text for text in _texts(trace))
    assert trace.calls[0].appended[0].blocks[0].text.startswith("Use the web browser tool")
    descriptions = [tool["description"] for tool in trace.calls[0].tools]
    assert len(descriptions) == 8
    assert not any("attachment://" in d for d in descriptions)
    # The raw messages keep the references: they are what the log holds.
    assert trace.calls[0].appended_raw[0]["content"].startswith("attachment://")


@pytest.mark.corpus
def test_security_guide_scorer_calls_form_their_own_loops(corpus: Path) -> None:
    # 3 samples x (1 generate + 1 model_graded_fact grading call) = 6 model events.
    trace = _corpus(corpus, SECURITY)
    assert len(trace.calls) == 6
    assert len(trace.loops) == 6
    scorer_loops = [loop for loop in trace.loops if loop.label and "scorer" in loop.label]
    assert [loop.label for loop in scorer_loops] == [
        f"sample {n} (epoch 1) · scorer model_graded_fact" for n in (1, 2, 3)
    ]
    for loop in scorer_loops:
        (call_index,) = loop.calls
        call = trace.calls[call_index - 1]
        assert call.message_count == 1  # the grader prompt alone, not the sample's chat
    solver_calls = [trace.calls[loop.calls[0] - 1] for loop in trace.loops[::2]]
    assert all(
        call.system.startswith("\nYou are a computer security expert") for call in solver_calls
    )
    # stats.model_usage covers the grader too: 959 input, 1033 output, no cache.
    assert _totals(trace) == (959, 0, 1033)


@pytest.mark.corpus
def test_cancelled_log_is_read_and_keeps_its_status(corpus: Path) -> None:
    trace = _corpus(corpus, POPULARITY)
    assert len(trace.calls) == 3
    assert len(trace.loops) == 3
    assert {call.extra["log_status"] for call in trace.calls} == {"cancelled"}
    assert _totals(trace) == (192, 0, 6)


@pytest.mark.corpus
def test_eval_zip_reads_header_then_ten_samples_in_id_order(corpus: Path) -> None:
    # The archive stores samples in completion order (9, 6, 10, 5, ...): read by id.
    data = (corpus / FOLDER / EVAL_ZIP).read_bytes()
    source = read_source(data, EVAL_ZIP)
    assert source.layout == "zip"
    members = [item.value["zip_member"] for item in source.items if isinstance(item, Record)]
    assert members == ["header.json"] + [f"samples/{n}_epoch_1.json" for n in range(1, 11)]
    trace = _corpus(corpus, EVAL_ZIP)
    assert len(trace.calls) == 10
    assert [loop.label for loop in trace.loops] == [f"sample {n} (epoch 1)" for n in range(1, 11)]
    assert trace.records_ingested == 11  # the header is read too
    # header.json stats.model_usage: 620 input, 20 output; the log uses step events.
    assert _totals(trace) == (620, 0, 20)
    assert all(call.system.startswith("\nPlease note:") for call in trace.calls)


# -- hand-written golden case ------------------------------------------------------------
def test_tool_loop_golden_report() -> None:
    trace = analyze_bytes(golden_input("inspect-ai/tool_loop.json"), filename="tool_loop.json")
    assert_golden("inspect-ai/tool_loop.report.json", build_report(trace))


def test_tool_loop_details_the_report_does_not_show() -> None:
    trace = analyze_bytes(golden_input("inspect-ai/tool_loop.json"))
    first, second, grader, failed, retry = trace.calls
    assert first.extra["usage_rule"].startswith("raw provider usage")
    assert (
        second.extra["usage_rule"] == "Inspect < 0.3.184 counted cached tokens inside input_tokens"
    )
    assert first.system == (
        "You are a shell agent. Use the bash tool to inspect the machine before you answer."
    )
    result = second.appended[1].blocks[0]
    assert (result.kind, result.tool_id, result.is_error) == ("tool_result", "call_a", True)
    assert result.text == "Error: Command timed out before completing."
    assert [b.kind for b in second.response.blocks] == ["thinking", "text"]
    (run,) = trace.tool_runs
    assert run.duration_s == pytest.approx(10.0)
    assert trace.loops[1].label == "sample q1 (epoch 1) · scorer model_graded_qa"
    assert grader.message_count == 1
    # The pooled messages are shared objects: the retry appends nothing.
    assert failed.status == "error" and "429" in (failed.error or "")
    assert retry.prefix_len == 2 and retry.appended == ()


def test_eval_archives_of_the_golden_log_rebuild_the_same_calls() -> None:
    log = orjson.loads(golden_input("inspect-ai/tool_loop.json"))
    header = {k: v for k, v in log.items() if k != "samples"}
    members = {"header.json": orjson.dumps(header)}
    for sample in log["samples"]:
        members[f"samples/{sample['id']}_epoch_{sample['epoch']}.json"] = orjson.dumps(sample)
    expected = build_report(analyze_bytes(golden_input("inspect-ai/tool_loop.json")))
    for method in (0, 8, 93):
        trace = analyze_bytes(make_zip(members, method), filename="log.eval")
        report = build_report(trace)
        for call in report["calls"]:
            call.pop("line")
        for call in expected["calls"]:
            call.pop("line", None)
        assert report["calls"] == expected["calls"], method
        assert report["tool_runs"] == expected["tool_runs"]


# -- contexts and fallbacks --------------------------------------------------------------
def _model_event(messages: list[Any], reply: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {
        "event": "model",
        "model": "anthropic/claude-sonnet-4-5",
        "input": messages,
        "tools": [],
        "output": {
            "model": "claude-sonnet-4-5",
            "choices": [{"message": {"role": "assistant", **reply}, "stop_reason": "stop"}],
            "usage": {"input_tokens": 10, "output_tokens": 2},
        },
        **more,
    }


def _sample(events: list[Any], **more: Any) -> dict[str, Any]:
    return {"id": 7, "epoch": 2, "input": "x", "events": events, "messages": [], **more}


def _run(*samples: Any, **header: Any) -> Trace:
    log = {"version": 2, "status": "success", "eval": {"task": "t", **header}, "samples": samples}
    return analyze_bytes(orjson.dumps(log))


def test_an_agent_run_as_a_tool_is_its_own_loop_under_that_tool_call() -> None:
    user = {"role": "user", "content": "research this"}
    call = {"id": "toolu_1", "function": "researcher", "arguments": {"q": "x"}}
    inner_user = {"role": "user", "content": "x"}
    events = [
        {"event": "span_begin", "id": "S", "type": "solver", "name": "react"},
        _model_event([user], {"content": "", "tool_calls": [call]}, span_id="S"),
        {"event": "span_begin", "id": "T", "parent_id": "S", "type": "tool", "name": "researcher"},
        {"event": "tool", "span_id": "S", "id": "toolu_1", "function": "researcher"},
        {"event": "span_begin", "id": "A", "parent_id": "T", "type": "agent", "name": "researcher"},
        _model_event([inner_user], {"content": "found it"}, span_id="A"),
        {"event": "span_end", "id": "A"},
        {"event": "span_end", "id": "T"},
        _model_event(
            [
                user,
                {"role": "assistant", "content": "", "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "toolu_1", "content": "found it"},
            ],
            {"content": "done"},
            span_id="S",
        ),
    ]
    trace = _run(_sample(events))
    assert [loop.calls for loop in trace.loops] == [(1, 3), (2,)]
    sub = trace.loops[1]
    assert sub.parent_tool_id == "toolu_1"
    assert sub.label == "sample 7 (epoch 2) · researcher (toolu_1)"
    assert trace.tool_runs[0].status == "paired"


def test_parallel_tool_spans_are_bound_to_their_own_tool_calls() -> None:
    user = {"role": "user", "content": "two lookups"}
    calls = [{"id": f"toolu_{n}", "function": f"agent_{n}", "arguments": {}} for n in "ab"]
    events = [
        _model_event([user], {"content": "", "tool_calls": calls}),
        {"event": "span_begin", "id": "TA", "type": "tool", "name": "agent_a"},
        {"event": "span_begin", "id": "TB", "type": "tool", "name": "agent_b"},
        {"event": "tool", "id": "toolu_b", "function": "agent_b"},
        {"event": "tool", "id": "toolu_a", "function": "agent_a"},
        _model_event([{"role": "user", "content": "b"}], {"content": "B"}, span_id="TB"),
        _model_event([{"role": "user", "content": "a"}], {"content": "A"}, span_id="TA"),
    ]
    trace = _run(_sample(events))
    assert [(loop.calls, loop.parent_tool_id) for loop in trace.loops] == [
        ((1,), None),
        ((2,), "toolu_b"),
        ((3,), "toolu_a"),
    ]


def test_older_step_events_put_scorer_calls_in_their_own_loop() -> None:
    events = [
        {"event": "step", "action": "begin", "type": "solver", "name": "generate"},
        _model_event([{"role": "user", "content": "q"}], {"content": "a"}),
        {"event": "step", "action": "end", "type": "solver", "name": "generate"},
        {"event": "step", "action": "begin", "type": "scorer", "name": "model_graded_qa"},
        _model_event([{"role": "user", "content": "grade"}], {"content": "GRADE: C"}),
        {"event": "step", "action": "end", "type": "scorer", "name": "model_graded_qa"},
    ]
    trace = _run(_sample(events))
    assert [loop.label for loop in trace.loops] == [
        "sample 7 (epoch 2)",
        "sample 7 (epoch 2) · scorer model_graded_qa",
    ]


def test_a_side_call_with_another_first_message_is_a_second_conversation() -> None:
    question = {"role": "user", "content": "q"}
    events = [
        _model_event([question], {"content": "draft"}),
        _model_event([{"role": "user", "content": "critique: draft"}], {"content": "ok"}),
        _model_event([question, {"role": "assistant", "content": "draft"}], {"content": "final"}),
    ]
    trace = _run(_sample(events))
    assert [(loop.calls, loop.label) for loop in trace.loops] == [
        ((1, 3), "sample 7 (epoch 2)"),
        ((2,), "sample 7 (epoch 2) (conversation 2)"),
    ]


def test_a_sample_without_events_is_rebuilt_from_its_messages() -> None:
    messages = [
        {"role": "user", "content": "2+2?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "c", "function": "calc", "arguments": {}}],
        },
        {"role": "tool", "tool_call_id": "c", "content": "4"},
        {"role": "assistant", "content": "4"},
    ]
    sample = {"id": 1, "epoch": 1, "input": "2+2?", "messages": messages}
    trace = _run(sample, model="openai/gpt-4")
    assert [c.message_count for c in trace.calls] == [1, 3]
    assert all(c.tokens_estimated and c.usage is None for c in trace.calls)
    assert trace.calls[0].model == "openai/gpt-4"
    assert trace.tool_runs[0].status == "paired"


def test_a_log_without_samples_is_refused_with_the_reason() -> None:
    log = {
        "version": 2,
        "status": "success",
        "eval": {"task": "t", "config": {"log_samples": False}},
    }
    with pytest.raises(InputRejected, match="log_samples=False"):
        analyze_bytes(orjson.dumps(log))


# -- usage rule --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("version", "model", "usage", "expected_input"),
    [
        ("0.3.95", "openai/gpt-4o", {"input_tokens": 1568, "input_tokens_cache_read": 1024}, 544),
        ("0.3.184", "openai/gpt-4o", {"input_tokens": 544, "input_tokens_cache_read": 1024}, 544),
        (
            "0.3.95",
            "anthropic/claude-3-7-sonnet",
            {"input_tokens": 30, "input_tokens_cache_read": 900},
            30,
        ),
        (
            "0.3.95",
            "anthropic/claude-3-7-sonnet",
            {"input_tokens": 3000, "input_tokens_cache_read": 900},
            3000,
        ),
        ("0.3.95", "openai/gpt-4o", {"input_tokens": 100, "input_tokens_cache_read": 400}, 100),
        (None, "openai/gpt-4o", {"input_tokens": 1000, "input_tokens_cache_write": 200}, 800),
        ("0.3.95", "openai/gpt-4o", {"input_tokens": 70, "output_tokens": 5}, 70),
    ],
)
def test_input_tokens_are_uncached_whatever_the_version(
    version: str | None, model: str, usage: dict[str, int], expected_input: int
) -> None:
    result, _rule = inspect_usage(usage, None, version_tuple(version) if version else None, model)
    assert result is not None
    assert result.input_tokens == expected_input


def test_raw_anthropic_usage_decides_before_the_version() -> None:
    call = {"response": {"usage": {"input_tokens": 30, "cache_read_input_tokens": 900}}}
    usage, rule = inspect_usage(
        {"input_tokens": 30, "input_tokens_cache_read": 900}, call, (0, 3, 95), "x"
    )
    assert usage is not None and usage.input_tokens == 30
    assert "excludes" in rule


def test_version_text_is_read_up_to_its_first_non_number() -> None:
    assert version_tuple("0.3.95.dev16+g6527d0861") == (0, 3, 95)
    assert version_tuple("0.3.184") == (0, 3, 184)
    assert version_tuple("dev") is None


# -- malformed input ---------------------------------------------------------------------
def test_bad_lines_among_bare_samples_become_line_errors() -> None:
    good = _sample([_model_event([{"role": "user", "content": "hi"}], {"content": "hello"})])
    lines = [
        orjson.dumps(good),
        b'{"id": 8, "epoch": 1, "events": [{"event": "model", "inp',
        b'{"unrelated": true}',
        b"[1, 2]",
        orjson.dumps(_sample([_model_event("not a list", {"content": "x"}), 5, "x"])),
        orjson.dumps(_sample([{**_model_event([], {"content": "x"}), "input_refs": [[0, 9]]}])),
    ]
    trace = analyze_bytes(b"\n".join(lines) + b"\n")
    assert trace.format == "inspect-ai"
    assert len(trace.calls) == 1
    errors = {(e.line, e.message.split(":")[0]) for e in trace.line_errors}
    assert (2, "cut off mid-record (the JSON ends before it is complete)") in errors
    messages = {e.line: e.message for e in trace.line_errors if e.line != 2}
    assert "not an Inspect AI eval log" in messages[3]
    assert "expected an Inspect AI log" in messages[4]
    line_five = [e.message for e in trace.line_errors if e.line == 5]
    assert any("'input' that is not a list" in m for m in line_five)
    assert any("2 events are not JSON objects" in m for m in line_five)
    assert "outside the sample's message pool" in messages[6]


def test_a_sample_that_is_not_an_object_is_reported_and_the_others_are_read() -> None:
    good = _sample([_model_event([{"role": "user", "content": "hi"}], {"content": "hello"})])
    trace = _run(good, "oops")
    assert len(trace.calls) == 1
    assert trace.records_ingested == 1  # the log is read although a sample is not
    assert [e.message for e in trace.line_errors] == ["sample #2 is not a JSON object"]


# -- ZIP archives: safety ----------------------------------------------------------------
def make_zip(
    members: dict[str, bytes],
    method: int = 8,
    declared: dict[str, int] | None = None,
    crc: dict[str, int] | None = None,
) -> bytes:
    """A ZIP written by hand, so tests can use Zstandard (method 93) and lie about sizes."""
    local = bytearray()
    central = bytearray()
    for name, payload in members.items():
        if method == 8:
            packer = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
            packed = packer.compress(payload) + packer.flush()
        elif method == 93:
            packed = zstandard.ZstdCompressor().compress(payload)
        else:
            packed = payload
        size = (declared or {}).get(name, len(payload))
        checksum = (crc or {}).get(name, zlib.crc32(payload))
        encoded = name.encode()
        offset = len(local)
        local += (
            struct.pack(
                "<4sHHHHHIIIHH",
                b"PK\x03\x04",
                63,
                0,
                method,
                0,
                0x21,
                checksum,
                len(packed),
                size,
                len(encoded),
                0,
            )
            + encoded
            + packed
        )
        central += (
            struct.pack(
                "<4sHHHHHHIIIHHHHHII",
                b"PK\x01\x02",
                63,
                63,
                0,
                method,
                0,
                0x21,
                checksum,
                len(packed),
                size,
                len(encoded),
                0,
                0,
                0,
                0,
                0,
                offset,
            )
            + encoded
        )
    end = struct.pack(
        "<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(members), len(members), len(central), len(local), 0
    )
    return bytes(local + central + end)


SAMPLE_BYTES = orjson.dumps(
    _sample([_model_event([{"role": "user", "content": "hi"}], {"content": "hello"})])
)


def test_a_damaged_member_is_a_line_error_and_the_rest_is_read() -> None:
    members = {
        "header.json": b'{"version": 2, "status": "success", "eval": {"task": "t"}}',
        "samples/1_epoch_1.json": SAMPLE_BYTES,
        "samples/2_epoch_1.json": SAMPLE_BYTES,
    }
    data = make_zip(members, 8, crc={"samples/1_epoch_1.json": 1234})
    trace = analyze_bytes(data, filename="x.eval")
    assert len(trace.calls) == 1
    assert [(e.line, e.message) for e in trace.line_errors] == [
        (2, "samples/1_epoch_1.json: its checksum does not match (the archive is damaged)")
    ]


def test_a_damaged_zstandard_member_is_a_line_error_and_the_rest_is_read() -> None:
    """zstandard's own error (imported only to read such a member) is the same line error."""
    members = {
        "header.json": b'{"version": 2, "status": "success", "eval": {"task": "t"}}',
        "samples/1_epoch_1.json": SAMPLE_BYTES,
        "samples/2_epoch_1.json": SAMPLE_BYTES,
    }
    data = bytearray(make_zip(members, 93))
    frames = [i for i in range(len(data)) if data.startswith(b"\x28\xb5\x2f\xfd", i)]
    data[frames[1] : frames[1] + 4] = b"nope"  # the first sample's frame loses its magic
    trace = analyze_bytes(bytes(data), filename="x.eval")
    assert len(trace.calls) == 1
    [(line, message)] = [(e.line, e.message) for e in trace.line_errors]
    assert line == 2
    assert message.startswith("samples/1_epoch_1.json: the compressed data is damaged (")


def test_an_unsupported_compression_method_is_named() -> None:
    data = make_zip(
        {"samples/1_epoch_1.json": SAMPLE_BYTES, "samples/2_epoch_1.json": SAMPLE_BYTES}
    )
    bzip2 = data.replace(
        b"PK\x01\x02\x3f\x00\x3f\x00\x00\x00\x08\x00",
        b"PK\x01\x02\x3f\x00\x3f\x00\x00\x00\x0c\x00",
        1,
    )
    source = read_source(bzip2, "x.eval")
    errors = [item for item in source.items if isinstance(item, LineError)]
    assert [e.message for e in errors] == [
        "samples/1_epoch_1.json: compressed with bzip2, which cannot be read here"
    ]


def test_too_many_members_are_refused_before_any_is_read() -> None:
    data = make_zip({f"samples/{n}_epoch_1.json": b"{}" for n in range(6)})
    with pytest.raises(InputRejected, match="lists 6 members; more than 5"):
        read_zip(data, Limits(), max_members=5)


def test_a_member_declaring_more_than_a_record_may_hold_is_refused() -> None:
    data = make_zip({"samples/1_epoch_1.json": SAMPLE_BYTES}, 8)
    with pytest.raises(InputRejected, match=r"declares .* bytes, over the 100 allowed"):
        read_zip(data, Limits(max_line_bytes=100))


@pytest.mark.parametrize("method", [8, 93])
def test_a_member_inflating_past_its_declared_size_is_stopped(method: int) -> None:
    bomb = b" " * 5_000_000
    data = make_zip(
        {"samples/1_epoch_1.json": bomb}, method, declared={"samples/1_epoch_1.json": 10}
    )
    assert len(data) < 50_000
    with pytest.raises(InputRejected, match="inflates past the 10 bytes it declares"):
        read_source(data, "bomb.eval")


def test_the_archive_total_is_capped() -> None:
    members = {f"samples/{n}_epoch_1.json": b" " * 3_000 + b"{}" for n in range(4)}
    with pytest.raises(InputRejected, match="decompresses to more than 10,000 bytes"):
        read_zip(make_zip(members, 93), Limits(max_decompressed_bytes=10_000))


def test_a_zip_that_is_not_an_inspect_log_or_is_cut_short_is_refused() -> None:
    with pytest.raises(InputRejected, match="holds no Inspect AI log"):
        read_source(make_zip({"notes.txt": b"hello"}), "x.zip")
    data = make_zip({"samples/1_epoch_1.json": SAMPLE_BYTES})
    with pytest.raises(InputRejected, match="end-of-directory record is missing"):
        read_source(data[: len(data) // 2], "x.eval")


def test_the_chunked_eval2_layout_is_named_as_unsupported() -> None:
    header = b'{"version": 2, "status": "success", "eval": {"task": "t"}}'
    chunked = {"header.json": header, "samples/1_epoch_1/sample.json": b"{}"}
    source = read_source(make_zip(chunked), "x.eval2")
    assert [e.message for e in source.items if isinstance(e, LineError)] == [
        "samples/1_epoch_1/sample.json: the chunked '.eval2' sample layout is not supported; "
        "convert the log with `inspect log convert --to eval`"
    ]
    with pytest.raises(InputRejected, match="eval2"):
        read_source(make_zip({"samples/1_epoch_1/sample.json": b"{}"}), "x.eval2")


def test_a_samples_scores_are_read_as_text_and_odd_entries_skipped():
    from traces.core.model import Score
    from traces.core.reading.formats.inspect_ai import sample_scores

    sample = {
        "id": "q7",
        "epoch": 2,
        "scores": {
            "match": {"value": "I", "answer": "No", "explanation": "expected Yes"},
            "f1": {"value": 0.5},
            "broken": "not an object",
            "no_value": {"answer": "x"},
            "metrics": {"value": {"accuracy": 1, "partial": True}, "answer": ["not", "text"]},
        },
    }
    assert list(sample_scores(sample)) == [
        Score("q7 (epoch 2)", "match", "I (incorrect)", "No", "expected Yes"),
        Score("q7 (epoch 2)", "f1", "0.5"),
        Score("q7 (epoch 2)", "metrics", "accuracy: 1, partial: true"),
    ]
    older = {"id": 3, "epoch": 1, "score": {"value": "C"}}
    assert list(sample_scores(older)) == [Score("3", "score", "C (correct)")]
    assert list(sample_scores({"id": 1, "epoch": 1, "scores": ["odd"]})) == []
