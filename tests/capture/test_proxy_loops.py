"""Calls recorded by the proxy land in the loops they belong to (issue 23).

The Anthropic SDK's tool runner over server-held message threads, through the proxy.

The runner asks the server to hold the conversation: later requests carry only the new
turn (`thread: {"type": "continue", "previous_message_id": …}`, no `system`, no
`tools`). The stand-in upstream implements the thread semantics (it keeps each reply's
transcript by id and answers from the whole of it). Recorded, the run must be one loop
whose later calls see the whole transcript, with no false `missing-tool-use-echo`.

Sibling subagents given the same prompt (plain `messages.create` loops, their calls
interleaved as parallel subagents' are) must each stay in their own loop, with no false
`dangling-tool-call`."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import anthropic
import pytest

from tests.capture.conftest import LiveServer, capture_server
from tests.capture.fake_upstream import FakeUpstream, Reply
from tests.capture.scenario import SECRET, ports

CITIES = ("Paris", "Oslo")


class ThreadedMessages:
    """A Messages API that holds threads: `create` keeps the transcript under the reply's
    id, `continue` answers from the stored transcript + the new messages."""

    def __init__(self) -> None:
        self.threads: dict[str, list] = {}
        self.requests: list[dict] = []
        self._lock = threading.Lock()

    def __call__(self, path: str, body: bytes) -> Reply:
        if not path.split("?")[0].endswith("/v1/messages") or not body:
            return Reply(404, chunks=[b'{"type":"error","error":{"type":"not_found_error"}}'])
        request = json.loads(body)
        with self._lock:
            self.requests.append(request)
            thread = request.get("thread") or {}
            transcript = list(request["messages"])
            if thread.get("type") == "continue":
                held = self.threads.get(thread.get("previous_message_id"))
                if held is None:
                    return Reply(
                        404,
                        chunks=[
                            b'{"type":"error","error":{"type":"not_found_error",'
                            b'"message":"thread_not_found"}}'
                        ],
                    )
                transcript = [*held, *transcript]
            reply = self._answer(transcript, len(self.requests))
            if thread:
                self.threads[reply["id"]] = [
                    *transcript,
                    {"role": "assistant", "content": reply["content"]},
                ]
        return Reply(200, chunks=[json.dumps(reply).encode()])

    @staticmethod
    def _answer(transcript: list, number: int) -> dict:
        answered = sum(
            1
            for message in transcript
            if isinstance(message.get("content"), list)
            for block in message["content"]
            if block.get("type") == "tool_result"
        )
        if answered < len(CITIES):
            content = [
                {
                    "type": "tool_use",
                    "id": f"toolu_{number:02d}",
                    "name": "get_weather",
                    "input": {"city": CITIES[answered]},
                }
            ]
            stop = "tool_use"
        else:
            content = [{"type": "text", "text": "Sunny in Paris, snow in Oslo."}]
            stop = "end_turn"
        return {
            "id": f"msg_thread_{number:02d}",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 50 * number, "output_tokens": 12},
        }


@pytest.fixture(scope="module")
def threaded() -> ThreadedMessages:
    return ThreadedMessages()


@pytest.fixture(scope="module")
def thread_server(threaded, tmp_path_factory) -> Iterator[LiveServer]:
    with (
        FakeUpstream(threaded, port=ports()) as upstream,
        capture_server(
            tmp_path_factory.mktemp("thread-server"), INSPECTOR_UPSTREAM_ANTHROPIC=upstream.base
        ) as server,
    ):
        yield server


@anthropic.beta_tool
def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: the city's name
    """
    return {"Paris": "sunny, 21 C", "Oslo": "snow, -3 C"}[city]


def test_the_tool_runners_thread_is_one_loop_rebuilt_from_the_thread(thread_server, threaded):
    client = anthropic.Anthropic(
        api_key=SECRET,
        base_url=f"{thread_server.base}/proxy/s/threads/anthropic",
        max_retries=0,
    )
    runner = client.beta.messages.tool_runner(
        model="claude-sonnet-4-6",
        max_tokens=256,
        system="You answer weather questions.",
        tools=[get_weather],
        messages=[{"role": "user", "content": "Weather in Paris and Oslo?"}],
    )
    final = runner.until_done()
    assert final.content[0].text == "Sunny in Paris, snow in Oslo."
    # The SDK really used the thread: later requests sent only the new turn.
    sent = threaded.requests
    assert [r.get("thread", {}).get("type") for r in sent] == ["create", "continue", "continue"]
    assert [len(r["messages"]) for r in sent] == [1, 1, 1]
    assert "tools" not in sent[1] and "system" not in sent[1]

    trace_id = thread_server.trace_id("proxy:anthropic-messages:threads")
    report = thread_server.wait_report(trace_id, calls=3)
    calls = report["calls"]
    assert len({call["loop"] for call in calls}) == 1  # one loop, not three
    assert [call["messages"] for call in calls] == [1, 3, 5]  # the thread's transcript
    assert [call["extends_previous"] for call in calls[1:]] == [True, True]
    rules = {finding["rule"] for finding in report["findings"]}
    assert "missing-tool-use-echo" not in rules
    assert "dangling-tool-call" not in rules
    runs = report["tool_runs"]
    assert [(run["name"], run["call"], run["result_call"]) for run in runs] == [
        ("get_weather", 1, 2),
        ("get_weather", 2, 3),
    ]


def _step(client: anthropic.Anthropic, messages: list) -> list:
    """One model call of a hand-written agent loop; the transcript after its tools ran."""
    reply = client.messages.create(model="claude-sonnet-4-6", max_tokens=256, messages=messages)
    if reply.stop_reason != "tool_use":
        return []
    results = [
        {"type": "tool_result", "tool_use_id": block.id, "content": get_weather(**block.input)}
        for block in reply.content
        if block.type == "tool_use"
    ]
    return [
        *messages,
        {"role": "assistant", "content": [block.model_dump() for block in reply.content]},
        {"role": "user", "content": results},
    ]


def test_sibling_subagents_with_the_same_prompt_keep_their_own_loops(thread_server):
    client = anthropic.Anthropic(
        api_key=SECRET,
        base_url=f"{thread_server.base}/proxy/s/siblings/anthropic",
        max_retries=0,
    )
    prompt = [{"role": "user", "content": "Weather in Paris and Oslo?"}]
    first = _step(client, prompt)  # sibling A, call 1
    second = _step(client, prompt)  # sibling B, call 1: the same request
    second = _step(client, second)  # B's call 2 comes first...
    first = _step(client, first)  # ...then A's
    assert _step(client, first) == [] and _step(client, second) == []  # A 3, B 3: the answers
    trace_id = thread_server.trace_id("proxy:anthropic-messages:siblings")
    report = thread_server.wait_report(trace_id, calls=6)
    loops = [call["loop"] for call in report["calls"]]
    assert loops[0] != loops[1]
    assert loops == [loops[0], loops[1], loops[1], loops[0], loops[0], loops[1]]
    rules = {finding["rule"] for finding in report["findings"]}
    assert "dangling-tool-call" not in rules
    assert all(run["status"] == "paired" for run in report["tool_runs"])
