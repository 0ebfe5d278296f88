"""Mapping files ("teach it your log"): the two worked examples in docs/, validation, and
the expressions that matched nothing, each named with its line in the mapping file."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.golden import assert_golden
from traces.core.analysis.ingest import analyze_bytes, analyze_files
from traces.core.outputs.report import build_report
from traces.core.reading.limits import InputRejected
from traces.core.reading.mapping import MappingError, load_mapping

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "mapping-examples"


def _example(log: str, mapping: str):
    spec = load_mapping((EXAMPLES / mapping).read_bytes(), mapping)
    return analyze_bytes((EXAMPLES / log).read_bytes(), filename=log, mapping=spec)


def test_chat_log_example_reads_the_whole_requests():
    trace = _example("chat-log.jsonl", "chat-log.mapping.yaml")
    report = build_report(trace)
    assert_golden("mapping/chat-log.report.json", report)
    assert trace.format == "mapping"
    assert report["detection"] == "read with your mapping file room-booker log"
    assert [c["messages"] for c in report["calls"]] == [2, 4, 6]
    assert all(c["extends_previous"] for c in report["calls"][1:])
    look, book = trace.tool_runs
    assert (look.id, look.status, look.result_call) == ("call_1", "paired", 2)
    assert book.is_error and book.input == {"room": "Vega", "at": "10:00"}
    # input_includes_cached: 168 prompt tokens of which 120 cached -> 48 uncached
    assert (trace.calls[1].usage.input_tokens, trace.calls[1].usage.cache_read_tokens) == (48, 120)
    assert trace.calls[0].duration_s == pytest.approx(1.2)
    assert "notes" not in report


def test_events_example_rebuilds_requests_from_responses_and_result_records():
    trace = _example("events.json", "events.mapping.json")
    report = build_report(trace)
    assert_golden("mapping/events.report.json", report)
    first, second = trace.calls
    assert first.response.blocks[0].text == "Let me look at both tickets."
    assert report["parallel_batches"] == [{"call": 1, "tool_call_ids": ["t1", "t2"]}]
    assert [(r["status"], r["is_error"], r["result_call"]) for r in report["tool_runs"]] == [
        ("paired", False, 2),
        ("paired", True, 2),
    ]
    assert report["tool_runs"][1]["duration_s"] == pytest.approx(0.8)
    assert second.extends_previous and [m.role for m in second.appended] == ["assistant", "user"]
    assert report["mapping"]["name"] == "triage events"


def test_expressions_that_matched_nothing_are_named_with_their_line():
    text = (EXAMPLES / "chat-log.mapping.yaml").read_text()
    text = text.replace("cache_read_tokens: tokens.cached", "cache_read_tokens: tokens.cahced")
    spec = load_mapping(text.encode(), "typo.yaml")
    trace = analyze_bytes((EXAMPLES / "chat-log.jsonl").read_bytes(), mapping=spec)
    line = next(n for n, t in enumerate(text.splitlines(), 1) if "tokens.cahced" in t)
    assert trace.notes == (
        f"mapping typo.yaml, line {line}: usage.cache_read_tokens ('tokens.cahced') "
        "matched nothing in 3 evaluation(s)",
    )
    assert build_report(trace)["notes"] == list(trace.notes)


def test_a_call_expression_that_matches_no_record_says_what_the_records_look_like():
    spec = load_mapping(b'{"calls": {"where": "kind == \'LLM\'"}}', "m.json")
    with pytest.raises(InputRejected) as caught:
        analyze_bytes((EXAMPLES / "chat-log.jsonl").read_bytes(), mapping=spec)
    message = str(caught.value)
    assert "calls.where (\"kind == 'LLM'\", line 1) matched none of the 5 records" in message
    assert "record 1 is an object with keys kind (text), session (text), at (text)" in message


@pytest.mark.parametrize(
    "text, fragment",
    [
        (b"calls:\n  where: kind == 'llm'\n  usage: tokens\n", "calls.usage (line 3)"),
        (b"name: x\n", "(top level) (line 1): 'calls' is a required property"),
        (b"calls:\n  where: kind == 'llm'\nusage:\n  input_tokens: 12\n", "usage.input_tokens"),
        (b'calls:\n  where: "kind =="\n', "line 2: calls.where is not a valid JMESPath"),
        (b"calls: [unclosed\n", "not readable JSON or YAML"),
        (b"[1, 2]", "must be an object"),
        (b"calls: &a {where: x}\nmessages: *a\n", "aliases are not accepted"),
    ],
)
def test_invalid_mappings_say_what_and_where(text, fragment):
    with pytest.raises(MappingError) as caught:
        load_mapping(text, "m.yaml")
    assert fragment in str(caught.value)


def test_a_tool_result_record_without_an_id_is_a_line_error():
    spec = load_mapping((EXAMPLES / "events.mapping.json").read_bytes(), "events.mapping.json")
    data = (EXAMPLES / "events.json").read_bytes().replace(b'"call": "t2", "tool"', b'"tool"')
    trace = analyze_bytes(data, mapping=spec)
    (error,) = trace.line_errors
    assert error.line == 3 and "tool_results.id ('call', mapping line" in error.message
    assert [r.status for r in trace.tool_runs] == ["paired", "dangling"]


def test_several_files_with_one_mapping_make_one_trace():
    spec = load_mapping((EXAMPLES / "chat-log.mapping.yaml").read_bytes(), "m.yaml")
    lines = (EXAMPLES / "chat-log.jsonl").read_bytes().splitlines(keepends=True)
    trace = analyze_files(
        [("a.jsonl", b"".join(lines[:3])), ("b.jsonl", b"".join(lines[3:]))], mapping=spec
    )
    assert len(trace.calls) == 3 and len(trace.loops) == 1


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "kind",
                    "request",
                    "messages",
                    "reply",
                    "role",
                    "content",
                    "tool_calls",
                    "id",
                    "function",
                    "name",
                    "arguments",
                    "tokens",
                    "prompt",
                    "t0",
                    "x",
                ]
            ),
            children,
            max_size=5,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(JSON_VALUES, min_size=1, max_size=6))
def test_any_records_read_with_a_mapping_never_crash(records):
    spec = load_mapping((EXAMPLES / "chat-log.mapping.yaml").read_bytes(), "m.yaml")
    llm = [{"kind": "llm", **r} if isinstance(r, dict) else r for r in records]
    data = b"\n".join(orjson.dumps(r) for r in llm)
    try:
        trace = analyze_bytes(data, filename="x.jsonl", mapping=spec)
    except InputRejected:
        return  # one clear message for the whole input is allowed
    build_report(trace)


def _exploding(stages: int, then: str) -> bytes:
    """A mapping under 1 KB whose expression doubles its value `stages` times (issue 26)."""
    source = "@" + " | [@, @]" * stages + f" | {then}"
    return f"calls:\n  where: kind == 'llm'\n  model: \"{source}\"\n".encode()


@pytest.mark.parametrize("then", ["to_string(@)", "[] | [] | [] | length(@)", "@"])
def test_an_expression_that_builds_an_exponential_value_is_stopped_early(then):
    import resource
    import time

    spec = load_mapping(_exploding(22, then), "bomb.yaml")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    with pytest.raises(MappingError) as caught:
        analyze_bytes((EXAMPLES / "chat-log.jsonl").read_bytes(), mapping=spec)
    assert time.perf_counter() - started < 2
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 300 * 1024  # KiB
    message = str(caught.value)
    assert "calls.model (line 3" in message
    assert "would build over 1,000,000 references" in message


def test_multi_selects_within_the_budget_still_give_their_value():
    spec = load_mapping(_exploding(3, "length(@)"), "ok.yaml")
    value = {"kind": "llm"}
    assert spec.get("calls.model").search(value) == 2


@pytest.mark.parametrize(
    "source, fragment",
    [
        ("(" * 30_000 + "a" + ")" * 30_000, "is refused: it is over 4,096 characters"),
        ("(" * 100 + "a" + ")" * 100, "is refused: it nests brackets 100 deep"),
        ("abs(" * 1_000 + "a" + ")" * 1_000, "is refused: it is over 4,096 characters"),
        ("abs(" * 70 + "a" + ")" * 70, "it nests brackets 70 deep"),
    ],
)
def test_deeply_nested_expressions_are_refused_before_compiling(source, fragment):
    text = f'calls:\n  where: "{source}"\n'.encode()
    with pytest.raises(MappingError) as caught:
        load_mapping(text, "deep.yaml")
    assert fragment in str(caught.value)


def test_a_mapping_nested_50000_deep_is_refused_not_a_crash():
    text = b"calls:\n  where: x\nname: " + b"[" * 50_000 + b"]" * 50_000 + b"\n"
    with pytest.raises(MappingError, match=r"nests brackets 50,000 deep"):
        load_mapping(text[: 256 * 1024], "deep.yaml")
