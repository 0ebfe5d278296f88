"""Frames of a Responses socket in, the lines of the HTTP calls they stand for out."""

from __future__ import annotations

import orjson

from traces.core.analysis.ingest import analyze_bytes
from traces.core.reading.capture import CLIENT_LEFT, UPSTREAM_BROKE_OFF
from traces.core.reading.socket_capture import SocketRecorder

URL = "https://api.openai.com/v1/responses"


def recorder(max_bytes: int = 1 << 20) -> SocketRecorder:
    return SocketRecorder(URL, {"Authorization": "Bearer sk-secret"}, max_bytes)


def events(response_id: str, text: str) -> list[str]:
    response = {"id": response_id, "object": "response", "model": "gpt-5", "output": []}
    done = {
        **response,
        "status": "completed",
        "output": [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text}],
            }
        ],
        "usage": {"input_tokens": 12, "output_tokens": 4},
    }
    return [
        orjson.dumps({"type": "response.created", "response": response}).decode(),
        orjson.dumps({"type": "response.output_text.delta", "delta": text}).decode(),
        orjson.dumps({"type": "response.completed", "response": done}).decode(),
    ]


def create(**fields) -> str:
    return orjson.dumps({"type": "response.create", **fields}).decode()


def test_each_response_create_and_its_events_is_one_streamed_call():
    socket = recorder()
    assert socket.client_frame(create(model="gpt-5", input="Say hi."), 1.0)
    lines = [socket.server_frame(frame, 2.0) for frame in events("resp_1", "Hi.")]
    assert lines[:2] == [None, None]
    line = orjson.loads(lines[2])
    assert line["transport"] == "websocket"
    assert line["request"]["body"] == {"model": "gpt-5", "input": "Say hi.", "stream": True}
    assert line["request"]["headers"]["Authorization"] == "[masked]"
    assert line["response"]["body_raw"].startswith("event: response.created\ndata: {")
    (call,) = analyze_bytes(lines[2] + b"\n").calls
    assert call.status == "ok"
    assert call.usage is not None and call.usage.output_tokens == 4


def test_a_continuation_by_previous_response_id_reads_as_the_same_loop():
    socket = recorder()
    lines = []
    socket.client_frame(create(model="gpt-5", input="Say hi."), 1.0)
    lines += [socket.server_frame(frame, 2.0) for frame in events("resp_1", "Hi.")]
    socket.client_frame(create(model="gpt-5", input="Again.", previous_response_id="resp_1"), 3.0)
    lines += [socket.server_frame(frame, 4.0) for frame in events("resp_2", "Hi again.")]
    trace = analyze_bytes(b"".join(line + b"\n" for line in lines if line))
    assert [call.loop for call in trace.calls] == [1, 1]


def test_frames_that_are_not_a_response_create_open_nothing():
    socket = recorder()
    assert not socket.client_frame('{"type": "response.steer", "input": "x"}', 1.0)
    assert not socket.client_frame("not json", 1.0)
    assert not socket.client_frame("[1, 2]", 1.0)
    assert socket.server_frame('{"type": "error", "error": {"message": "bad"}}', 1.0) is None


def test_parameters_nested_under_response_are_read_too():
    socket = recorder()
    socket.client_frame(create(response={"model": "gpt-5", "input": "hi"}), 1.0)
    (*_, last) = [socket.server_frame(frame, 2.0) for frame in events("resp_1", "Hi.")]
    assert orjson.loads(last)["request"]["body"]["model"] == "gpt-5"


def test_an_error_event_ends_the_response_under_way_as_a_failed_call():
    socket = recorder()
    socket.client_frame(create(model="gpt-5", input="hi"), 1.0)
    socket.server_frame(events("resp_1", "x")[0], 1.5)
    line = socket.server_frame(
        '{"type": "error", "error": {"type": "server_error", "message": "overloaded"}}', 2.0
    )
    assert line is not None
    (call,) = analyze_bytes(line + b"\n").calls
    assert call.status == "error"


def test_a_socket_closed_mid_response_leaves_an_interrupted_call():
    socket = recorder()
    socket.client_frame(create(model="gpt-5", input="hi"), 1.0)
    socket.server_frame(events("resp_1", "x")[0], 1.5)
    (line,) = socket.close(2.0, "the client closed the socket mid-response", CLIENT_LEFT)
    recorded = orjson.loads(line)
    assert recorded["interrupted"] == "the client closed the socket mid-response"
    assert recorded["call_outcome"] == "client-left"
    assert socket.close(3.0, "again", CLIENT_LEFT) == []


def test_events_past_the_limit_are_not_kept_and_the_line_says_so():
    socket = recorder(max_bytes=200)
    socket.client_frame(create(model="gpt-5", input="hi"), 1.0)
    *_, line = [socket.server_frame(frame, 2.0) for frame in events("resp_1", "x" * 500)]
    recorded = orjson.loads(line)
    assert recorded["proxy_truncated_at"] <= 200
    assert len(recorded["response"]["body_raw"]) <= 200


def test_a_rate_limited_request_is_forgotten():
    socket = recorder()
    socket.client_frame(create(model="gpt-5", input="hi"), 1.0)
    socket.discard_last()
    assert socket.close(2.0, "closed", UPSTREAM_BROKE_OFF) == []
