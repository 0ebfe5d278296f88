"""VS Code Copilot Chat prompt-log exports (`vscode-copilot-chatreplay`).

Facts from SOURCES.md section 25, re-read by hand in the real export: 4 `request` logs
(the calls), 2 `toolCall` logs whose ids end in `__vscode-<n>` while the history that
answers them does not, response text only in `response.message`, numeric roles. The
golden input `tests/golden/vscode-copilot-chatreplay/small.chatreplay.json` is
hand-written following the real export's shape (element, request and toolCall logs,
cache breakpoints that move between requests, a model switch).
"""

from __future__ import annotations

import orjson
import pytest

from tests.conftest import AGENTS
from tests.golden import assert_golden, golden_input
from traces.core.analysis.ingest import analyze_bytes
from traces.core.outputs.report import build_report
from traces.core.reading.formats.detect import detect
from traces.core.reading.formats.vscode_chatreplay import plain_id
from traces.core.reading.limits import NotATrace

REAL = AGENTS / "vscode_copilot_chatreplay" / "vscode-copilot-chat_spec.chatreplay.json"
GOLDEN = "vscode-copilot-chatreplay/small.chatreplay.json"


def _real():
    if not REAL.is_file():
        pytest.skip("the real .chatreplay.json is absent")
    return analyze_bytes(REAL.read_bytes(), filename=REAL.name)


def _golden() -> dict:
    return orjson.loads(golden_input(GOLDEN))


def _read(document: dict):
    return analyze_bytes(orjson.dumps(document), filename="x.chatreplay.json")


@pytest.mark.corpus
def test_real_export_tool_calls_come_from_the_toolcall_logs_and_pair_by_plain_id():
    trace = _real()
    assert trace.format == "vscode-copilot-chatreplay"
    assert [run.name for run in trace.tool_runs] == ["create_file", "replace_string_in_file"]
    assert all("__vscode-" not in run.id and run.status == "paired" for run in trace.tool_runs)
    assert [run.call for run in trace.tool_runs] == [
        1,
        3,
    ]  # the calls whose text said nothing of them
    assert [c.model for c in trace.calls] == [
        "claude-sonnet-4",
        "claude-sonnet-4",
        "claude-sonnet-4.5",
        "claude-sonnet-4.5",
    ]
    # prompt_tokens 18212 of which 17278 cached: the cached part is a cache read
    usage = trace.calls[1].usage
    assert usage is not None and (usage.input_tokens, usage.cache_read_tokens) == (934, 17278)


def test_golden_export():
    trace = analyze_bytes(golden_input(GOLDEN), filename="small.chatreplay.json")
    assert_golden("vscode-copilot-chatreplay/small.report.json", build_report(trace))
    _, second, third = trace.calls
    # cache breakpoints move between requests: without them each request extends the last
    assert (second.prefix_len, third.prefix_len) == (2, 4)
    assert not any(c.history_rewritten for c in trace.calls)
    assert third.extra["model_change"] == {"from": "claude-sonnet-4", "to": "claude-sonnet-4.5"}
    assert [e["name"] for e in third.extra["prompt_elements"]] == ["Gh", "Kve"]
    (run,) = trace.tool_runs
    assert run.input == {"filePath": "c:\\ws\\hello.txt", "content": "hello"}
    assert run.duration_s == 2.0  # response end 16:04:51 -> toolCall time 16:04:53


def test_tool_calls_come_from_the_next_history_when_no_toolcall_log_exists():
    document = _golden()
    logs = document["prompts"][0]["logs"]
    del logs[2]  # the toolCall log
    trace = _read(document)
    (run,) = trace.tool_runs
    assert (run.id, run.call, run.result_call, run.status) == ("toolu_vrtx_A1", 1, 2, "paired")


def test_suffix_is_removed_only_at_the_end():
    assert plain_id("toolu_x__vscode-17") == "toolu_x"
    assert plain_id("toolu__vscode-x") == "toolu__vscode-x"


def test_unparsable_args_stay_raw():
    document = _golden()
    document["prompts"][0]["logs"][2]["args"] = "{not json"
    document["prompts"][0]["logs"][3]["requestMessages"]["messages"][2]["toolCalls"][0]["function"][
        "arguments"
    ] = "{not json"
    (run,) = _read(document).tool_runs
    assert run.input == "{not json"


def test_malformed_logs_are_reported_with_their_number_and_the_rest_is_read():
    document = _golden()
    logs = document["prompts"][0]["logs"]
    logs[0] = {"id": "no kind"}  # log 1
    logs[2].pop("id")  # log 3: a toolCall without its id
    document["prompts"][1]["logs"][2]["requestMessages"] = {"messages": "gone"}  # log 7
    document["prompts"].append("not a prompt")
    trace = _read(document)
    errors = [(e.line, e.message) for e in trace.line_errors]
    assert [line for line, _ in errors] == [1, 1, 3, 7]
    assert "prompt 3 has no logs list" in errors[0][1]  # the document is record 1
    assert "no kind" in errors[1][1]
    assert "toolCall without an id" in errors[2][1]
    assert "requestMessages" in errors[3][1]
    assert len(trace.calls) == 2


def test_failed_requests_are_failed_calls():
    document = _golden()
    request = document["prompts"][1]["logs"][2]
    request["type"] = "ChatMLFailure"
    request["response"] = {"type": "failed", "reason": "Rate limit exceeded", "message": []}
    call = _read(document).calls[-1]
    assert call.status == "error" and call.error == "ChatMLFailure: Rate limit exceeded"


def test_an_export_without_requests_says_what_it_is():
    document = _golden()
    for prompt in document["prompts"]:
        prompt["logs"] = [log for log in prompt["logs"] if log["kind"] == "element"]
    with pytest.raises(NotATrace, match="no request log"):
        _read(document)


def test_detection():
    assert detect([_golden()]).adapter.name == "vscode-copilot-chatreplay"
    one_prompt = _golden()["prompts"][0]
    assert detect([one_prompt]).adapter.name == "vscode-copilot-chatreplay"
