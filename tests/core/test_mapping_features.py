"""What a mapping expresses beyond one JSON record per event (issue 22, section 4): records
that repeat an id (`dedupe`), tool calls and results without ids (paired by order and
name), values kept as JSON strings (`from_json`), and text logs split by a line pattern.

Every worked example in docs/mapping-examples is run here against the summary beside it
(`<name>.gives.json`, rewritten with UPDATE_GOLDEN=1), so the docs cannot rot.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from traces.core.analysis.ingest import analyze_bytes
from traces.core.model import Trace
from traces.core.reading.limits import InputRejected
from traces.core.reading.mapping import MappingError, load_mapping

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "mapping-examples"
GIVES = sorted(EXAMPLES.glob("*.gives.json"))


def _read(log: str, mapping: str | bytes, name: str = "m.yaml") -> Trace:
    text = (EXAMPLES / mapping).read_bytes() if isinstance(mapping, str) else mapping
    spec = load_mapping(text, mapping if isinstance(mapping, str) else name)
    return analyze_bytes((EXAMPLES / log).read_bytes(), filename=log, mapping=spec)


def summary(trace: Trace) -> dict[str, Any]:
    """What an example gives, in the words of its gives file: calls, tool runs, notes."""
    calls = []
    for call in trace.calls:
        blocks = call.response.blocks if call.response is not None else ()
        calls.append(
            {
                "line": call.line,
                "model": call.model,
                "messages": call.message_count,
                "says": " ".join(b.text or "" for b in blocks if b.kind == "text") or None,
                "asks": [[b.tool_id, b.name, b.input] for b in blocks if b.kind == "tool_use"],
                "stop_reason": call.stop_reason,
                "tokens": None
                if call.usage is None
                else [call.usage.input_tokens, call.usage.output_tokens],
            }
        )
    runs = [
        {
            "id": run.id,
            "name": run.name,
            "status": run.status,
            "is_error": run.is_error,
            "call": run.call,
            "result_call": run.result_call,
            "result": run.result_text,
        }
        for run in trace.tool_runs
    ]
    errors = [f"line {e.line}: {e.message}" for e in trace.line_errors]
    return {"calls": calls, "tool_runs": runs, "notes": list(trace.notes), "line_errors": errors}


def test_every_mapping_example_has_a_gives_file():
    mappings = sorted(p.name for p in EXAMPLES.glob("*.mapping.*"))
    described = sorted(orjson.loads(p.read_bytes())["mapping"] for p in GIVES)
    assert mappings == described


@pytest.mark.parametrize("gives", GIVES, ids=lambda p: p.name)
def test_each_example_gives_what_its_gives_file_says(gives):
    expected = orjson.loads(gives.read_bytes())
    trace = _read(expected["log"], expected["mapping"])
    actual = {"log": expected["log"], "mapping": expected["mapping"], **summary(trace)}
    if os.environ.get("UPDATE_GOLDEN"):
        gives.write_bytes(orjson.dumps(actual, option=orjson.OPT_INDENT_2) + b"\n")
    assert actual == expected


# -- dedupe ----------------------------------------------------------------------------------
def test_dedupe_keeps_the_last_version_of_each_run_in_the_place_of_the_first():
    mapping = (EXAMPLES / "runs.mapping.yaml").read_text()
    undeduped = _read("runs.jsonl", mapping.replace("dedupe: run_id\n", "").encode())
    assert [c.line for c in undeduped.calls] == [1, 2, 6, 7]  # without it: 4 calls
    trace = _read("runs.jsonl", "runs.mapping.yaml")
    assert [c.line for c in trace.calls] == [2, 7]
    assert [c.usage.input_tokens for c in trace.calls] == [512, 580]
    (run,) = trace.tool_runs
    assert (run.status, run.result_text, run.duration_s) == (
        "paired",
        "invoice 443: paid on 2025-05-28",
        pytest.approx(0.6),
    )
    assert trace.notes == (
        "mapping runs.mapping.yaml, line 4: dedupe ('run_id') collapsed 4 repeated "
        "record(s), keeping the last of each",
    )


def test_dedupe_keep_first_keeps_the_first_version():
    mapping = (EXAMPLES / "runs.mapping.yaml").read_text()
    first = mapping.replace("dedupe: run_id\n", "dedupe: {key: run_id, keep: first}\n")
    trace = _read("runs.jsonl", first.encode(), "first.yaml")
    # the first versions are the "started" records: calls without a response
    assert [(c.line, c.response) for c in trace.calls] == [(1, None), (6, None)]
    assert "keeping the first of each" in trace.notes[-1]


def test_records_whose_dedupe_key_is_null_are_never_collapsed():
    lines = b'{"k": "llm", "say": "a"}\n{"k": "llm", "say": "b"}\n{"k": "llm", "id": 1}\n'
    spec = load_mapping(
        b"dedupe: id\ncalls:\n  where: \"k == 'llm'\"\n  response: '@'\nmessages:\n  text: say\n"
    )
    trace = analyze_bytes(lines, mapping=spec)
    assert len(trace.calls) == 3


# -- pairing by order and name ---------------------------------------------------------------
def test_results_without_ids_answer_the_oldest_waiting_call_of_their_tool():
    trace = _read("no-ids.jsonl", "no-ids.mapping.yaml")
    weather, clock = trace.tool_runs
    # clock answered first (line 2), weather second: paired by name, not by position
    assert (weather.id, weather.name, weather.result_text) == ("log:1.1", "weather", "rain, 7 C")
    assert (clock.id, clock.name, clock.result_text) == ("log:1.2", "clock", "10:02")
    assert trace.calls[1].appended[1].blocks[0].tool_id == "log:1.2"


def test_a_result_no_call_waits_for_gets_an_id_of_its_own():
    data = (EXAMPLES / "no-ids.jsonl").read_bytes()
    data += b'{"ev": "result", "tool": "clock", "output": "10:03"}\n'
    trace = _read_bytes(data, "no-ids.mapping.yaml")
    extra = trace.tool_runs[-1]
    assert (extra.id, extra.call, extra.result_text) == ("log:result@5", None, "10:03")
    assert [r.result_text for r in trace.tool_runs[:2]] == ["rain, 7 C", "10:02"]


def _read_bytes(data: bytes, mapping: str) -> Trace:
    spec = load_mapping((EXAMPLES / mapping).read_bytes(), mapping)
    return analyze_bytes(data, mapping=spec)


GEMINI_MAPPING = b"""
calls:
  where: contents
  messages: contents
  response: response.candidates[0].content
messages:
  role: "role == 'model' && 'assistant' || role"
  text: "parts[?text].text | join('', @)"
  tool_calls: "parts[?functionCall].functionCall"
  tool_result_name: "parts[0].functionResponse.name"
  tool_result_content: "parts[0].functionResponse.response.output"
tool_calls:
  name: name
  arguments: args
"""


def _gemini_line(contents: list[Any], reply: list[Any]) -> bytes:
    content = {"role": "model", "parts": reply}
    return orjson.dumps({"contents": contents, "response": {"candidates": [{"content": content}]}})


def test_whole_requests_without_ids_pair_by_order_and_name_with_stable_ids():
    ask = {"role": "user", "parts": [{"text": "Weather and time in Oslo?"}]}
    calls = [
        {"functionCall": {"name": "weather", "args": {"city": "Oslo"}}},
        {"functionCall": {"name": "clock", "args": {"tz": "CET"}}},
    ]
    asked = {"role": "model", "parts": calls}
    clock = {"role": "user", "parts": [{"functionResponse": {"name": "clock", "response": {"output": "10:02"}}}]}  # fmt: skip
    weather = {"role": "user", "parts": [{"functionResponse": {"name": "weather", "response": {"output": "rain"}}}]}  # fmt: skip
    data = b"\n".join(
        [
            _gemini_line([ask], calls),
            _gemini_line([ask, asked, clock, weather], [{"text": "10:02 and rain."}]),
        ]
    )
    trace = analyze_bytes(data, mapping=load_mapping(GEMINI_MAPPING, "gemini.yaml"))
    assert [(r.id, r.name, r.status, r.result_text) for r in trace.tool_runs] == [
        ("log:2.1", "weather", "paired", "rain"),
        ("log:2.2", "clock", "paired", "10:02"),
    ]
    assert trace.calls[1].extends_previous  # the history's ids are those its response had


# -- from_json -------------------------------------------------------------------------------
def test_from_json_reads_columns_that_hold_json_text():
    trace = _read("json-columns.jsonl", "json-columns.mapping.yaml")
    first, second = trace.calls
    assert (first.model, first.stop_reason, first.usage.input_tokens) == ("gpt-4o-mini", "tool_calls", 58)  # fmt: skip
    assert second.response.blocks[0].text == "17 * 23 = 391."
    (run,) = trace.tool_runs
    assert (run.id, run.input, run.result_text) == ("call_a", {"expr": "17*23"}, "391")


@pytest.mark.parametrize(
    "value, expected",
    [
        ('{"a": {"b": 2}}', 2),
        ("not json", None),
        ('{"a": ', None),
        ({"a": {"b": 3}}, 3),  # already decoded: read as it is
        (None, None),
    ],
)
def test_from_json_gives_the_value_a_json_string_holds_and_null_otherwise(value, expected):
    spec = load_mapping(b"calls:\n  where: from_json(v).a.b\n")
    assert spec.get("calls.where").search({"v": value}) == expected


def test_from_json_stays_within_the_text_budget():
    spec = load_mapping(
        b"calls:\n  where: x\n  model: '[from_json(v), from_json(v)] | length(@)'\n"
    )
    expression = spec.get("calls.model")
    assert expression.search({"v": '"' + "a" * 1000 + '"'}) == 2
    with pytest.raises(MappingError, match=r"calls.model \(line 3.*from_json\(\) would read over"):
        expression.search({"v": '"' + "a" * (17 * 1024 * 1024) + '"'})


def test_a_json_string_nested_too_deep_reads_as_null():
    spec = load_mapping(b"calls:\n  where: from_json(v)\n")
    assert spec.get("calls.where").search({"v": "[" * 300 + "]" * 300}) is None


# -- text logs -------------------------------------------------------------------------------
def test_a_text_log_is_split_into_records_by_its_line_pattern():
    trace = _read("agent.log", "agent-log.mapping.yaml")
    assert [c.line for c in trace.calls] == [2, 6, 9]
    usage = trace.calls[0].usage
    assert (usage.input_tokens, usage.output_tokens) == (812, 41)
    df, du = trace.tool_runs
    assert df.input == {"cmd": "df -h /"} and not df.is_error
    assert df.result_text.splitlines()[1].startswith("/dev/sda1        40G")  # continued lines
    assert du.is_error and "Permission denied" in du.result_text
    (note,) = trace.notes
    assert note == (
        "mapping agent-log.mapping.yaml: lines.pattern (line 6) matched 5 of the 9 lines, "
        "3 continued a record; 1 matched no record and were skipped (line 1)"
    )


def test_without_continuation_lines_the_pattern_misses_are_skipped_and_counted():
    mapping = (
        (EXAMPLES / "agent-log.mapping.yaml").read_text().replace("  continuation: text\n", "")
    )
    trace = _read("agent.log", mapping.encode(), "plain.yaml")
    assert [r.result_text for r in trace.tool_runs] == ["", ""]
    skipped = "matched 5 of the 9 lines; 4 matched no record and were skipped (line 1, 4, 5, ...)"
    assert any(skipped in note for note in trace.notes)


def test_a_pattern_that_matches_no_line_says_what_the_lines_look_like():
    spec = load_mapping(b"lines:\n  pattern: '^(?P<at>\\d+) '\ncalls:\n  where: at\n", "t.yaml")
    with pytest.raises(InputRejected) as caught:
        analyze_bytes((EXAMPLES / "agent.log").read_bytes(), mapping=spec)
    message = str(caught.value)
    assert "lines.pattern (line 2) matched none of the 9 lines" in message
    assert "'=== disk-doctor 0.3 started (pid 4121) ==='" in message


def test_a_pattern_that_backtracks_too_long_on_a_line_is_stopped():
    pytest.importorskip("regex")
    import time

    spec = load_mapping(b"lines:\n  pattern: '^(?P<a>[a-z]*)[a-z]*[a-z]*[a-z]*[a-z]*;$'\ncalls:\n  where: a\n")  # fmt: skip
    started = time.perf_counter()
    with pytest.raises(MappingError, match=r"lines.pattern \(line 2\) was stopped: matching one"):
        analyze_bytes(b"a" * 20_000 + b";b\n", mapping=spec)
    assert time.perf_counter() - started < 10


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.text(alphabet=' :=>{}"ab1lmtoinuf-\n', max_size=60), min_size=1, max_size=8))
def test_any_text_read_with_a_line_pattern_never_crashes(lines):
    spec = load_mapping((EXAMPLES / "agent-log.mapping.yaml").read_bytes(), "m.yaml")
    prefix = "2025-06-01T09:00:00Z llm  m in=1 out=2 :: hi\n"
    try:
        analyze_bytes((prefix + "\n".join(lines)).encode(), mapping=spec)
    except InputRejected:
        return


# -- malformed mappings ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, fragment",
    [
        (
            "lines:\n  pattern: '(?P<a>(x+)+)'\n",
            "line 2: lines.pattern is refused: it repeats a repeat",
        ),
        (
            "lines:\n  pattern: '(?P<a>(?:ab|a)*)c'\n",
            "line 2: lines.pattern is refused: it repeats an alternation",
        ),
        ("lines:\n  pattern: '(?P<a>a)(?P=a)'\n", "it uses a back-reference"),
        ("lines:\n  pattern: '(\\d+) (.*)'\n", "it has no named group"),
        ("lines:\n  pattern: '(?P<a>[a-'\n", "it is not a valid regular expression"),
        (
            "lines:\n  pattern: '(?P<a>.*)'\n  continuation: body\n",
            "lines.continuation 'body' is not one of its groups (a)",
        ),
        ("lines:\n  pattern: '" + "a" * 1001 + "'\n", "lines.pattern (line 2): "),
        ("lines:\n  continuation: a\n", "lines (line 1): 'pattern' is a required property"),
        ("dedupe: {keep: first}\n", "dedupe (line 1)"),
        ("dedupe: {key: id, keep: newest}\n", "dedupe.keep (line 1): 'newest' is not one of"),
        ("dedupe: 'id =='\n", "line 1: dedupe is not a valid JMESPath expression"),
        ("tool_results:\n  id: call\n", "tool_results (line 1): 'where' is a required property"),
        (
            "messages:\n  text: form_json(body).text\n",
            "line 2: messages.text calls form_json(), which is no JMESPath function",
        ),
    ],
)
def test_malformed_mappings_name_the_key_and_its_line(text, fragment):
    # the tested keys come first, so their lines are those written above
    with pytest.raises(MappingError) as caught:
        load_mapping(f"{text}calls:\n  where: x\n".encode(), "m.yaml")
    assert fragment in str(caught.value)
