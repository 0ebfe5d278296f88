"""The message for a file no format claims: what it looks like, the closest formats and
what each missed, and the two ways in. Never "No supported trace format" alone."""

from __future__ import annotations

import orjson
import pytest

from traces.core.analysis.ingest import analyze_bytes
from traces.core.reading.formats.explain import describe_record, describe_records, is_close
from traces.core.reading.limits import InputRejected


def _refusal(data: bytes, filename: str = "x.jsonl") -> str:
    with pytest.raises(InputRejected) as caught:
        analyze_bytes(data, filename=filename)
    return str(caught.value)


def test_record_shapes_are_described_with_key_types():
    record = {"a": "x", "b": 1, "c": [1, 2], "d": {"e": 1}, "f": None, "g": True}
    assert describe_record(record) == (
        "an object with keys a (text), b (number), c (list of 2), d (object), f (null), "
        "g (true/false)"
    )
    assert (
        describe_record([{"k": 1}]) == "a list of 1 items, the first an object with keys k (number)"
    )
    assert describe_record("hi") == "a text"
    many = {f"key{i}": i for i in range(15)}
    assert describe_record(many).endswith("key11 (number) and 3 more")


def test_records_of_one_shape_are_said_once():
    values = [{"a": 1}, {"a": 2}, {"b": "x"}]
    assert describe_records(values) == (
        "records 1-2 are each an object with keys a (number); "
        "record 3 is an object with keys b (text)"
    )


def test_the_closest_formats_come_first_with_what_they_missed():
    almost_codex = b'{"timestamp": "2025-01-01T00:00:00Z", "payload": {}, "data": {}}\n'
    message = _refusal(almost_codex)
    assert message.startswith("No supported trace format recognised this file. It holds 1 record")
    closest = message.split("Closest formats, and why each refused: ")[1]
    assert closest.startswith(
        "OpenAI Codex CLI session rollout (codex-rollout): has timestamp, payload but not type"
    )
    assert "--format NAME" in message and "--mapping FILE" in message


def test_a_file_sharing_no_key_with_any_format_says_so():
    message = _refusal(orjson.dumps({"hello": "world"}))
    assert "record 1 is an object with keys hello (text)" in message
    assert "None of the known formats (" in message and "langfuse" in message


def test_recorded_http_traffic_names_where_the_requests_went():
    pair = {
        "request": {"url": "https://example.test/v9/generate?key=secret", "body": {}},
        "response": {"status_code": 200, "body": {"out": 1}},
    }
    message = _refusal(orjson.dumps(pair) + b"\n")
    assert "Its HTTP requests go to https://example.test/v9/generate." in message
    assert "secret" not in message


def test_an_unrelated_log_sharing_only_common_keys_names_no_format():
    """A plain application log (type, timestamp, message) used to get Claude Code as its
    nearest format: those keys say nothing about a shape, so no format is named."""
    line = {"type": "info", "timestamp": "2025-01-01T00:00:00Z", "message": "server started"}
    message = _refusal(orjson.dumps(line) + b"\n")
    assert "Closest formats" not in message and "Claude Code" not in message
    assert "None of the known formats (" in message
    assert "is close to it: it shares only keys most JSON logs have (message, timestamp, type)" in (
        message
    )
    assert "--format NAME" in message and "--mapping FILE" in message


def test_a_distinctive_shared_key_names_the_format_it_belongs_to():
    almost_claude = {"type": "user", "parentUuid": None, "text": "hi"}
    message = _refusal(orjson.dumps(almost_claude) + b"\n")
    closest = message.split("Closest formats, and why each refused: ")[1]
    assert closest.startswith("Claude Code session transcript (claude-code): has type, parentUuid")
    assert "Codex" not in closest  # type is one of codex's markers, but a common one


def test_closeness_needs_a_distinctive_key():
    markers = ("timestamp", "type", "payload")
    assert is_close(markers, ["payload"])
    assert not is_close(markers, ["timestamp", "type"])  # two thirds, but both common
    assert not is_close(markers, ["type"])
    claude = ("type", "sessionId", "uuid", "parentUuid", "message", "timestamp")
    assert not is_close(claude, ["type", "message", "timestamp"])  # half, all common
    assert is_close(claude, ["parentUuid"])
