"""Normalised messages survive storage as JSON with every field the call page shows."""

from __future__ import annotations

import dataclasses

import orjson
import pytest

from tests.golden import GOLDEN
from traces.core.analysis.ingest import analyze_bytes
from traces.core.model import Block, Message
from traces.core.stored_message import RAW_SHOWN_FOR, message_from_json, message_json

INPUTS = sorted(
    path
    for path in GOLDEN.rglob("*")
    if path.is_file() and not path.name.endswith(".report.json") and "exports" not in path.parts
)


def _shown(message: Message) -> Message:
    """The message as the page sees it: provider JSON only where the page prints it."""
    return Message(
        message.role,
        tuple(
            dataclasses.replace(b, raw=b.raw if b.kind in RAW_SHOWN_FOR else None)
            for b in message.blocks
        ),
    )


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: str(p.relative_to(GOLDEN)))
def test_every_golden_message_round_trips(path):
    # Every golden input is a trace (mappings and expected outputs are filtered out
    # above): one that no longer reads is a failure here, never a skip.
    trace = analyze_bytes(path.read_bytes(), filename=path.name)
    messages = [m for call in trace.calls for m in (*call.appended, call.response) if m]
    for message in messages:
        stored = orjson.loads(orjson.dumps(message_json(message)))
        assert message_from_json(stored) == _shown(message)


def test_defaults_are_left_out_and_raw_kept_only_where_shown():
    message = Message(
        "user",
        (
            Block("text", text="hi", raw={"type": "text", "text": "hi"}),
            Block("image", raw={"type": "image", "source": "…"}),
            Block("tool_result", tool_id="t1", text="", is_error=True, raw={"x": 1}),
        ),
    )
    assert message_json(message) == {
        "role": "user",
        "blocks": [
            {"kind": "text", "text": "hi"},
            {"kind": "image", "raw": {"type": "image", "source": "…"}},
            {"kind": "tool_result", "tool_id": "t1", "is_error": True},
        ],
    }
    assert message_from_json(None) is None
    assert message_from_json("not a message") is None
