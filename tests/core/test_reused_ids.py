"""Call ids reused across responses (providers numbering calls per response, `call_0` in
every one): pair per response, report duplicate-tool-call-id once, invent no dangling call."""

from __future__ import annotations

from typing import Any

import orjson

from traces.core.analysis.accounting import account
from traces.core.analysis.ingest import analyze_bytes
from traces.core.analysis.rules.registry import run_rules

RULE = "duplicate-tool-call-id"
Q = [{"role": "user", "content": "read a, b, c and d"}]


def _chat(messages: list[dict[str, Any]], message: dict[str, Any]) -> bytes:
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    choice = {"index": 0, "message": message, "finish_reason": finish}
    reply = {"id": "chatcmpl-x", "object": "chat.completion", "model": "m", "choices": [choice]}
    return orjson.dumps({"request": {"model": "m", "messages": messages}, "response": reply})


def _ask(*calls: tuple[str, str]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {
                    "name": "read_file",
                    "arguments": orjson.dumps({"path": path}).decode(),
                },
            }
            for call_id, path in calls
        ],
    }


def _result(call_id: str, text: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


DONE = {"role": "assistant", "content": "done"}


def _findings(data: bytes) -> tuple[Any, list[tuple[Any, ...]]]:
    trace = analyze_bytes(data)
    found = run_rules(trace, account(trace), select=[RULE])
    return trace, [(f.call, f.tool_call_id, f.message) for f in found]


def test_call_0_in_every_response_pairs_per_response_and_is_reported_once():
    a1, a2, a3 = _ask(("call_0", "a")), _ask(("call_0", "b")), _ask(("call_0", "c"))
    h2 = [*Q, a1, _result("call_0", "A")]
    h3 = [*h2, a2, _result("call_0", "B")]
    h4 = [*h3, a3, _result("call_0", "C")]
    data = b"\n".join([_chat(Q, a1), _chat(h2, a2), _chat(h3, a3), _chat(h4, DONE)]) + b"\n"
    trace, findings = _findings(data)
    runs = trace.tool_runs
    assert [(r.call, r.result_call, r.status, r.result_text) for r in runs] == [
        (1, 2, "paired", "A"),
        (2, 3, "paired", "B"),
        (3, 4, "paired", "C"),
    ]
    assert findings == [
        (
            2,
            "call_0",
            "tool call id 'call_0' is reused by call 2 (read_file) and 1 later call after call 1"
            " (read_file); results pair with the newest; give every call its own id",
        )
    ]


def test_parallel_ids_restarting_per_response_pair_and_nothing_dangles():
    a1 = _ask(("call_0", "a"), ("call_1", "b"))
    a2 = _ask(("call_0", "c"), ("call_1", "d"))
    h2 = [*Q, a1, _result("call_1", "B"), _result("call_0", "A")]
    h3 = [*h2, a2, _result("call_0", "C"), _result("call_1", "D")]
    data = b"\n".join([_chat(Q, a1), _chat(h2, a2), _chat(h3, DONE)]) + b"\n"
    trace, findings = _findings(data)
    assert [(r.id, r.input["path"], r.result_text, r.status) for r in trace.tool_runs] == [
        ("call_0", "a", "A", "paired"),
        ("call_1", "b", "B", "paired"),
        ("call_0", "c", "C", "paired"),
        ("call_1", "d", "D", "paired"),
    ]
    assert [(call, tool_id) for call, tool_id, _ in findings] == [(2, "call_0"), (2, "call_1")]


def test_ids_the_client_re_keyed_pair_with_the_calls_they_echo():
    # The provider answers call_0 / call_1; the client sends them back as unique ids.
    a1 = _ask(("call_0", "a"), ("call_1", "b"))
    a1_echo = _ask(("run1-0", "a"), ("run1-1", "b"))
    a2 = _ask(("call_0", "c"))
    a2_echo = _ask(("run2-0", "c"))
    h2 = [*Q, a1_echo, _result("run1-0", "A"), _result("run1-1", "B")]
    h3 = [*h2, a2_echo, _result("run2-0", "C")]
    data = b"\n".join([_chat(Q, a1), _chat(h2, a2), _chat(h3, DONE)]) + b"\n"
    trace, findings = _findings(data)
    runs = trace.tool_runs
    # Three calls, each asked by a response and answered: no dangling call_0 and no
    # second run for the re-keyed echo.
    assert [(r.id, r.call, r.result_call, r.status, r.result_text) for r in runs] == [
        ("call_0", 1, 2, "paired", "A"),
        ("call_1", 1, 2, "paired", "B"),
        ("call_0", 2, 3, "paired", "C"),
    ]
    assert findings == []  # the client made the ids unique: nothing is ambiguous


def test_a_different_call_under_a_new_id_is_not_taken_for_a_re_key():
    a1 = _ask(("call_0", "a"))
    other = _ask(("run1-0", "z"))  # not the call the response asked for
    h2 = [*Q, other, _result("run1-0", "Z")]
    data = b"\n".join([_chat(Q, a1), _chat(h2, DONE)]) + b"\n"
    trace, _ = _findings(data)
    assert [(r.id, r.call, r.status) for r in trace.tool_runs] == [
        ("call_0", 1, "dangling"),
        ("run1-0", None, "paired"),
    ]
