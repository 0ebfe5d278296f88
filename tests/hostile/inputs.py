"""Hostile and clumsy inputs, written by hand: each one broke Loop Inspector once (issue 9)."""

from __future__ import annotations

import gzip
from functools import cache

import orjson

from tests.core.builders import log, pair, response, tool_result, tool_use, user

LONG = "A" * 200_000
"""An unbroken 200,000-character string (no space to wrap at)."""
NUL = "bin\x00ary"


def with_text(
    text: str, *, model: str = "claude-sonnet-4-5", name: str = "read_file", error: bool = True
) -> bytes:
    """Two calls of one loop with `text` in the system prompt, a tool's id, name, input
    and (error) result, the model's reply and the model name."""
    q = [user(f"Read {text}")]
    r1 = response(
        [{"type": "text", "text": text}, tool_use(f"t{text}1", name, path=text)], "tool_use"
    )
    r1["model"] = model
    echo = {"role": "assistant", "content": r1["content"]}
    results = {"role": "user", "content": [tool_result(f"t{text}1", f"out: {text}", error)]}
    r2 = response([{"type": "text", "text": f"done {text}"}], "end_turn")
    first = orjson.loads(pair(q, r1, system=text))
    first["request"]["model"] = model
    return log(orjson.dumps(first), pair([*q, echo, results], r2, system=text))


def usage_trace(**usage: int) -> bytes:
    """One call whose reported usage holds the given (out-of-range) numbers."""
    r = response([{"type": "text", "text": "hi"}], "end_turn")
    r["usage"] = {"input_tokens": 10, "output_tokens": 5, **usage}
    return log(pair([user("hi")], r))


def http_status_trace(status: int) -> bytes:
    """One call recorded as an HTTP pair with the given status code."""
    r = response([{"type": "text", "text": "hi"}], "end_turn")
    body = {"model": "claude-sonnet-4-5", "messages": [user("hi")]}
    record = {
        "request": {
            "method": "POST",
            "url": "https://api.anthropic.com/v1/messages",
            "headers": {},
            "body": body,
        },
        "response": {"status_code": status, "headers": {}, "body": r},
    }
    return orjson.dumps(record) + b"\n"


def deep_yaml(levels: int = 5000) -> bytes:
    return b"interactions:\n- request: " + b"[" * levels + b"]" * levels + b"\n"


SET_YAML = (
    b"interactions:\n- request: !!set {a, b}\n"
    b"  response: {status: {code: 200}, body: {string: ''}}\n"
)


def _member(data: bytes) -> bytes:
    return gzip.compress(data, 9, mtime=0)


@cache
def gzip_array(megabytes: int = 200) -> bytes:
    """A ~199 KB gzip of a 200 MB JSON array of zeros (issue 9, item 4), written as one
    gzip member per 2 MB so it is quick to build (readers must accept several members)."""
    chunk = _member(b"0," * 1_000_000)
    members = [_member(b"["), *([chunk] * (megabytes // 2)), _member(b"0]")]
    return b"".join(members)


@cache
def gzip_bomb(gib: float = 2.5) -> bytes:
    """A ~2.6 MB gzip of `gib` GiB of zero bytes."""
    return _member(bytes(1 << 24)) * int(gib * 64)


def many_dicts(count: int = 3_000_001) -> bytes:
    """A 9 MB JSON array of `count` empty objects (issue 9, item 4)."""
    return b"[" + b"{}," * (count - 1) + b"{}]"
