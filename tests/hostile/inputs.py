"""Hostile and clumsy inputs, written by hand: each one broke Loop Inspector once (issue 9)."""

from __future__ import annotations

import gzip
import zlib

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
    r1 = response([{"type": "text", "text": text}, tool_use(f"t{text}1", name, path=text)], "tool_use")
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
        "request": {"method": "POST", "url": "https://api.anthropic.com/v1/messages", "headers": {}, "body": body},
        "response": {"status_code": status, "headers": {}, "body": r},
    }
    return orjson.dumps(record) + b"\n"


def deep_yaml(levels: int = 5000) -> bytes:
    return b"interactions:\n- request: " + b"[" * levels + b"]" * levels + b"\n"


SET_YAML = (
    b"interactions:\n- request: !!set {a, b}\n"
    b"  response: {status: {code: 200}, body: {string: ''}}\n"
)


def gzip_array(values: int = 100_000_000) -> bytes:
    """A ~199 KB gzip of a 200 MB JSON array of zeros (issue 9, item 4)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = b"0," * 1_000_000
    parts = [compressor.compress(b"[")]
    parts += [compressor.compress(chunk) for _ in range(values // 1_000_000)]
    parts.append(compressor.compress(b"0]"))
    parts.append(compressor.flush())
    return b"".join(parts)


def gzip_bomb(gib: float = 2.5) -> bytes:
    """Gzip of `gib` GiB of zero bytes (~2.5 MB compressed)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = b"\0" * (1 << 24)
    parts = [compressor.compress(chunk) for _ in range(int(gib * 64))]
    parts.append(compressor.flush())
    return b"".join(parts)


def many_dicts(count: int = 3_000_001) -> bytes:
    """A 9 MB JSON array of `count` empty objects (issue 9, item 4)."""
    return b"[" + b"{}," * (count - 1) + b"{}]"


def gzip_of(data: bytes) -> bytes:
    return gzip.compress(data)
