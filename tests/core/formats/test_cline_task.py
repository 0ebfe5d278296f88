"""Cline / Roo Code / Kilo Code task folders (cline-task).

No real task folder is shared: tests/golden/cline-task/ is hand-written after Cline's
source (src/shared/ExtensionMessage.ts ClineApiReqInfo, src/core/task's
api_conversation_history.json / ui_messages.json) and Roo Code's.
"""

from __future__ import annotations

import orjson
import pytest

from tests.golden import assert_golden, golden_input
from traces.core.analysis.ingest import analyze_files
from traces.core.outputs.report import build_report
from traces.core.reading.limits import NotATrace

TASK = "globalStorage/saoudrizwan.claude-dev/tasks/1700000000000"

# ui_messages.json lives here, not in tests/golden (every golden input must hold calls).
UI_MESSAGES = [
    {"ts": 1700000000000, "type": "say", "say": "task", "text": "fix the typo in README.md"},
    {
        "ts": 1700000000100,
        "type": "say",
        "say": "api_req_started",
        "text": '{"request":"<task>fix the typo</task>","tokensIn":1200,"tokensOut":40,"cacheWrites":1100,"cacheReads":0,"cost":0.0102}',
    },
    {"ts": 1700000002900, "type": "say", "say": "text", "text": "I'll read it."},
    {
        "ts": 1700000003000,
        "type": "say",
        "say": "tool",
        "text": '{"tool":"readFile","path":"README.md"}',
    },
    {
        "ts": 1700000003600,
        "type": "say",
        "say": "api_req_started",
        "text": '{"request":"[read_file] Result","tokensIn":30,"tokensOut":60,"cacheWrites":20,"cacheReads":1100,"cost":0.0013}',
    },
    {
        "ts": 1700000006000,
        "type": "ask",
        "ask": "tool",
        "text": '{"tool":"editedExistingFile","path":"README.md"}',
    },
    {
        "ts": 1700000009100,
        "type": "say",
        "say": "api_req_started",
        "text": '{"request":"[replace_in_file] Result","tokensIn":25,"tokensOut":35,"cacheWrites":0,"cacheReads":1120,"cost":0.0009}',
    },
    {
        "ts": 1700000011000,
        "type": "say",
        "say": "completion_result",
        "text": "I left README.md as it is.",
    },
]


def _files() -> list[tuple[str, bytes]]:
    return [
        (
            f"{TASK}/api_conversation_history.json",
            golden_input("cline-task/api_conversation_history.json"),
        ),
        (f"{TASK}/ui_messages.json", orjson.dumps(UI_MESSAGES)),
    ]


def test_golden_report() -> None:
    assert_golden("cline-task/task.report.json", build_report(analyze_files(_files())))


@pytest.mark.parametrize("reverse", [False, True])
def test_ui_messages_give_each_call_usage_cost_and_start_in_either_order(reverse: bool) -> None:
    files = _files()
    trace = analyze_files(files[::-1] if reverse else files)
    first, second, _third = trace.calls
    assert first.usage is not None and first.usage.input_tokens == 1200
    assert first.usage.cache_write_tokens == 1100 and not first.tokens_estimated
    assert second.usage is not None and second.usage.cache_read_tokens == 1100
    assert first.extra["cost_usd"] == 0.0102
    assert first.started_at == 1700000000.1 and first.ended_at == 1700000003.0
    assert first.extra["agent_session"] == {
        "agent": "Cline",
        "session_id": "1700000000000",
        "project": "/home/dev/site",
    }
    statuses = {run.id: (run.status, run.is_error) for run in trace.tool_runs}
    assert statuses == {"toolu_a": ("paired", False), "toolu_b": ("paired", True)}


def test_history_alone_has_estimated_tokens() -> None:
    trace = analyze_files(_files()[:1])
    assert len(trace.calls) == 3
    assert all(call.tokens_estimated for call in trace.calls)
    assert trace.calls[0].started_at == 1700000000.0


def test_ui_messages_alone_is_recognised_and_says_what_to_upload() -> None:
    with pytest.raises(NotATrace, match=r"3 API request.*api_conversation_history\.json"):
        analyze_files(_files()[1:])


def test_task_metadata_alone_is_recognised_and_adds_nothing_beside_the_others() -> None:
    metadata = orjson.dumps({"files_in_context": [], "model_usage": [], "environment_history": []})
    with pytest.raises(NotATrace, match="task_metadata"):
        analyze_files([("task_metadata.json", metadata)])
    trace = analyze_files([*_files(), (f"{TASK}/task_metadata.json", metadata)])
    assert len(trace.calls) == 3 and not trace.line_errors


def test_roo_code_is_named_from_its_extension_folder() -> None:
    folder = "globalStorage/rooveterinaryinc.roo-cline/tasks/t9"
    files = [(name.replace(TASK, folder), data) for name, data in _files()]
    trace = analyze_files(files)
    assert trace.calls[0].extra["agent_session"]["agent"] == "Roo Code"


def test_malformed_records_are_reported_with_their_item_number() -> None:
    history = orjson.loads(golden_input("cline-task/api_conversation_history.json"))
    history.insert(1, {"role": "user"})
    history[3]["content"].append({"type": "tool_result", "content": "no id"})
    ui = orjson.loads(orjson.dumps(UI_MESSAGES))
    ui[1]["text"] = "{not json"
    trace = analyze_files(
        [
            (f"{TASK}/api_conversation_history.json", orjson.dumps(history)),
            (f"{TASK}/ui_messages.json", orjson.dumps(ui)),
        ]
    )
    assert len(trace.calls) == 3
    reasons = {(e.line, e.message.split(": ", 1)[-1]) for e in trace.line_errors}
    assert (2, "api_req_started text is not JSON") in reasons
    assert (2, "expected a message {role, content} or a UI message") in reasons
    assert (4, "a tool_result without a tool_use_id") in reasons
