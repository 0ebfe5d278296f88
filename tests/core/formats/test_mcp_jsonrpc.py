"""MCP JSON-RPC traffic in cassettes: kept as other HTTP traffic, and each `tools/call`
placed on the tool run of the model call that asked for it."""

from __future__ import annotations

import orjson
import pytest
import yaml

from tests.golden import assert_golden, golden_input
from traces.core.analysis.ingest import analyze_bytes
from traces.core.outputs.report import build_report

MCP = "https://mcp.example.com/mcp"
CHAT = "https://api.openai.com/v1/chat/completions"
USER = {"role": "user", "content": "look it up"}


class _NoAliases(yaml.SafeDumper):
    def ignore_aliases(self, data) -> bool:
        return True


def _cassette(*interactions) -> bytes:
    document = {"interactions": list(interactions), "version": 1}
    return yaml.dump(document, Dumper=_NoAliases).encode()


def _rpc(body: dict, reply_text: str, status: int = 200) -> dict:
    return {
        "request": {"headers": {}, "method": "POST", "parsed_body": body, "uri": MCP},
        "response": {"body": {"string": reply_text}, "headers": {}, "status": {"code": status}},
    }


def _tools_call(rpc_id: int, name: str, arguments: dict, reply: dict | None) -> dict:
    body = {"jsonrpc": "2.0", "id": rpc_id, "method": "tools/call"}
    body["params"] = {"name": name, "arguments": arguments}
    return _rpc(body, "" if reply is None else orjson.dumps(reply).decode())


def _asks(name: str, arguments: dict, call_id: str = "call_1") -> dict:
    tool_call = {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": orjson.dumps(arguments).decode()},
    }
    reply = {
        "object": "chat.completion",
        "model": "gpt-4.1",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None, "tool_calls": [tool_call]},
                "finish_reason": "tool_calls",
            }
        ],
    }
    return {
        "request": {
            "headers": {},
            "method": "POST",
            "parsed_body": {"messages": [USER]},
            "uri": CHAT,
        },
        "response": {"headers": {}, "parsed_body": reply, "status": {"code": 200}},
    }


def _read(data: bytes):
    return analyze_bytes(data, filename="cassette.yaml")


# -- corpus -----------------------------------------------------------------------------
# SOURCES.md §13: 9 interactions, 7 MCP posts (two sessions: initialize, initialized,
# tools/list; then initialize, initialized, tools/call, tools/list) and 2 LLM calls.
@pytest.mark.corpus
def test_mcp_posts_are_traffic_and_the_tools_call_runs_the_model_s_call(corpus):
    path = corpus / "mcp_jsonrpc" / "pydantic-ai_test_mcptoolset_in_temporal_workflow.yaml"
    trace = analyze_bytes(path.read_bytes(), filename=path.name)
    assert trace.format == "openai-chat" and len(trace.calls) == 2
    assert [t.rpc_method for t in trace.other_traffic] == [
        "initialize",
        "notifications/initialized",
        "tools/list",
        "initialize",
        "notifications/initialized",
        "tools/call",
        "tools/list",
    ]
    assert [t.session for t in trace.other_traffic] == [1, 1, 1, 2, 2, 2, 2]
    # JSON-RPC ids restart in each session: both initialize requests are id 0
    assert [t.rpc_id for t in trace.other_traffic if t.rpc_method == "initialize"] == [0, 0]
    (run,) = trace.tool_runs
    assert (run.name, run.status, run.call, run.result_call) == ("ask_question", "paired", 1, 2)
    assert run.transport == {
        "kind": "mcp",
        "traffic": 6,
        "line": 7,
        "session": 2,
        "rpc_id": 1,
        "is_error": False,
    }
    # the log notification before the result in the SSE stream is skipped
    (call,) = [t for t in trace.other_traffic if t.rpc_method == "tools/call"]
    assert call.result_text.startswith("Pydantic AI is a Python framework")
    assert build_report(trace)["totals"]["failed_calls"] == 0


# -- golden -----------------------------------------------------------------------------
def test_tools_over_mcp_report_matches_golden():
    """Two parallel calls of one tool run in two MCP sessions in the opposite order (ids
    restarting at 0 each time); one result is `isError`, after a log notification."""
    trace = _read(golden_input("mcp/tools_over_mcp.yaml"))
    runs = {run.id: run for run in trace.tool_runs}
    # matched by arguments, not by order
    assert runs["call_a"].transport["session"] == 3 and not runs["call_a"].is_error
    assert runs["call_b"].transport["session"] == 2 and runs["call_b"].is_error
    assert [r.status for r in trace.tool_runs] == ["paired", "paired"]
    report = build_report(trace)
    assert len(report["other_traffic"]) == 9
    assert report["other_traffic"][5]["summary"] == "MCP tools/call search_docs (isError)"
    assert_golden("mcp/tools_over_mcp.report.json", report)


# -- edge cases -------------------------------------------------------------------------
def test_a_json_rpc_error_is_an_error_result():
    reply = {"jsonrpc": "2.0", "id": 3, "error": {"code": -32602, "message": "unknown tool"}}
    trace = _read(_cassette(_asks("lookup", {"q": 1}), _tools_call(3, "lookup", {"q": 1}, reply)))
    (run,) = trace.tool_runs
    assert run.is_error and run.transport["is_error"] is True
    # no later request carried it, but the server's answer is the result
    assert (run.status, run.result_text, run.result_call) == ("paired", "unknown tool", None)


def test_a_tools_call_no_model_asked_for_stays_traffic_only():
    ok = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "x"}]}}
    trace = _read(_cassette(_asks("lookup", {"q": 1}), _tools_call(1, "other_tool", {}, ok)))
    (run,) = trace.tool_runs
    assert run.transport is None and run.status == "dangling"
    assert trace.other_traffic[0].tool_name == "other_tool"


def test_an_unreadable_mcp_answer_is_no_result_and_no_crash():
    trace = _read(
        _cassette(
            _asks("lookup", {"q": 1}),
            _tools_call(1, "lookup", {"q": 1}, None),
            _rpc({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": "bad"}, "data: {"),
        )
    )
    (run,) = trace.tool_runs
    assert run.transport["rpc_id"] == 1 and run.status == "dangling"
    first, second = trace.other_traffic
    assert (first.result_text, first.is_error) == (None, None)
    assert second.tool_name is None and second.summary == "MCP tools/call ?"


# -- A2A --------------------------------------------------------------------------------
AGENT = "https://travel-agent.example.com/a2a"


def _a2a(rpc_id, method: str, params: dict, reply: dict | str) -> dict:
    body = {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}
    text = reply if isinstance(reply, str) else orjson.dumps(reply).decode()
    return {
        "request": {"headers": {}, "method": "POST", "parsed_body": body, "uri": AGENT},
        "response": {"body": {"string": text}, "headers": {}, "status": {"code": 200}},
    }


def _a2a_calls() -> list[dict]:
    """An agent card fetch, then A2A 0.3 JSON-RPC calls as the a2a-python client sends
    them: a message answered by a task, a stream ending failed, a tasks/get, an error."""
    card = {
        "request": {
            "headers": {},
            "method": "GET",
            "body": None,
            "uri": AGENT.replace("/a2a", "/.well-known/agent-card.json"),
        },
        "response": {
            "body": {"string": '{"name": "travel"}'},
            "headers": {},
            "status": {"code": 200},
        },
    }
    message = {"role": "user", "parts": [{"kind": "text", "text": "book Oslo"}], "messageId": "m1"}
    task = {"kind": "task", "id": "t1", "contextId": "c1", "status": {"state": "completed"}}
    stream = "".join(
        f"data: {orjson.dumps({'jsonrpc': '2.0', 'id': 'r2', 'result': event}).decode()}\n\n"
        for event in (
            {"kind": "status-update", "taskId": "t2", "status": {"state": "working"}},
            {"kind": "status-update", "taskId": "t2", "status": {"state": "failed"}},
        )
    )
    error = {"jsonrpc": "2.0", "id": 4, "error": {"code": -32001, "message": "Task not found"}}
    return [
        card,
        _a2a(
            "r1",
            "message/send",
            {"message": message},
            {"jsonrpc": "2.0", "id": "r1", "result": task},
        ),
        _a2a("r2", "message/stream", {"message": message}, stream),
        _a2a(3, "tasks/get", {"id": "t1"}, {"jsonrpc": "2.0", "id": 3, "result": task}),
        _a2a(4, "tasks/cancel", {"id": "t9"}, error),
    ]


def test_a2a_calls_to_other_agents_are_a2a_not_mcp(corpus):
    """The corpus's MCP cassette with an agent's A2A calls recorded after it: the MCP posts
    stay MCP (same sessions), the A2A ones say what they are, the model calls are the same."""
    path = corpus / "mcp_jsonrpc" / "pydantic-ai_test_mcptoolset_in_temporal_workflow.yaml"
    document = yaml.safe_load(path.read_bytes())
    document["interactions"].extend(_a2a_calls())
    trace = analyze_bytes(yaml.dump(document, Dumper=_NoAliases).encode(), filename=path.name)
    assert len(trace.calls) == 2 and len(trace.tool_runs) == 1
    kinds = [(t.kind, t.rpc_method) for t in trace.other_traffic]
    assert kinds[:7] == [("mcp", m) for m in (
        "initialize", "notifications/initialized", "tools/list",
        "initialize", "notifications/initialized", "tools/call", "tools/list",
    )]  # fmt: skip
    assert kinds[7:] == [
        ("a2a", None),
        ("a2a", "message/send"),
        ("a2a", "message/stream"),
        ("a2a", "tasks/get"),
        ("a2a", "tasks/cancel"),
    ]
    a2a = trace.other_traffic[7:]
    assert [t.summary for t in a2a] == [
        "A2A agent card travel-agent.example.com → 200",
        "A2A message/send → completed",
        "A2A message/stream → failed",
        "A2A tasks/get → completed",
        "A2A tasks/cancel → error: Task not found",
    ]
    assert [t.is_error for t in a2a] == [None, False, True, False, True]
    assert all(t.session is None and t.tool_name is None for t in a2a)
    report = build_report(trace)
    assert [t["kind"] for t in report["other_traffic"]].count("a2a") == 5
    assert report["totals"]["failed_calls"] == 0


def test_task_methods_both_protocols_name_are_told_apart_by_params():
    mcp_get = _rpc(
        {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"taskId": "x"}}, ""
    )
    a2a_get = _a2a(2, "tasks/get", {"id": "t1"}, "")
    bare = _a2a(3, "tasks/list", {}, "")
    trace_bytes = _cassette(mcp_get, a2a_get, bare, _asks("lookup", {"q": "x"}))
    kinds = [t.kind for t in analyze_bytes(trace_bytes, filename="c.yaml").other_traffic]
    # a bare tasks/list follows the file: A2A was seen and no MCP session began
    assert kinds == ["mcp", "a2a", "a2a"]
