"""Server-sent event streams are reassembled into whole messages."""

from __future__ import annotations

from traces.core.reading.dialects.anthropic import assemble_stream

STREAM = """event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":12,"cache_read_input_tokens":100,"output_tokens":1}}   }

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Need the "}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"file."}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}}

event: ping
data: {"type": "ping"}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Reading it."}}

event: content_block_start
data: {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"Read","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\\"pa"}}

event: content_block_delta
data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"th\\": \\"a.py\\"}"}}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":42}}

event: message_stop
data: {"type":"message_stop"}

"""


def test_stream_reassembles_thinking_text_and_tool_use():
    message, error = assemble_stream(STREAM)
    assert error is None
    assert [b["type"] for b in message["content"]] == ["thinking", "text", "tool_use"]
    assert message["content"][0]["thinking"] == "Need the file."
    assert message["content"][0]["signature"] == "sig"
    assert message["content"][1]["text"] == "Reading it."
    assert message["content"][2]["input"] == {"path": "a.py"}
    assert message["stop_reason"] == "tool_use"
    assert message["usage"] == {
        "input_tokens": 12,
        "cache_read_input_tokens": 100,
        "output_tokens": 42,
    }


def test_cut_stream_is_an_error_but_keeps_what_arrived():
    cut = STREAM.split("event: message_delta")[0]
    message, error = assemble_stream(cut)
    assert "cut short" in error
    assert message["content"][2]["name"] == "Read"


def test_error_event_is_reported():
    stream = STREAM.split("event: message_delta")[0] + (
        'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    )
    _, error = assemble_stream(stream)
    assert error == "overloaded_error: Overloaded"


def test_malformed_partial_json_is_kept_as_text():
    broken = STREAM.replace('th\\": \\"a.py\\"}', "th")
    assert broken != STREAM
    message, _ = assemble_stream(broken)
    assert message["content"][2]["input"] == '{"path'
