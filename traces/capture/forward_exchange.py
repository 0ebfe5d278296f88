"""The forward proxy's hand-over: one exchange mitmdump made, as it travels to Loop Inspector.

mitmdump sends a vendor call straight to its upstream (`forward_addon`) and, once the
answer's last byte has reached the client, posts a copy of the exchange on loopback to
`/api/forward/exchanges` (`traces.capture.forwarded`), which records it with the reverse
proxy's own code. Both ends read the format from here, so this module imports the
standard library only: mitmdump loads it beside its script, in its own environment.

The format is one JSON line of metadata, then the request body, then the kept response
body (their lengths in the metadata): bodies go as the bytes they are, never re-encoded,
so a hand-over costs mitmdump a copy and a write. No credential is in it: header values
and query parameters that the secret rule names are masked before it is built
(`SecretRule`, the core's rule as the server sends it), and the receiver masks again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode

CONTENT_TYPE = "application/vnd.loop-inspector.exchange"
MASK = "[masked]"
"""What a credential's value becomes (as `traces.core.reading.credentials.MASK`)."""
COMPLETED = "completed"
"""`ended` of an exchange whose answer ended as the upstream meant it to."""
MAX_META_BYTES = 4 * 1024 * 1024
"""The metadata line's largest size (headers and a path): past it, not a hand-over."""


@dataclass(frozen=True)
class SecretRule:
    """Which header and query parameter names hold a credential: the server's rule
    (`traces.core.reading.secret_rule.secret_name`, and the proxy's secret query keys
    and SigV4 signing headers), sent as data because mitmdump cannot import it."""

    words: re.Pattern[str]
    fields: frozenset[str]
    account: frozenset[str]
    query_keys: frozenset[str]
    signing: frozenset[str]

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> SecretRule:
        return cls(
            re.compile(str(data["words"]), re.IGNORECASE),
            frozenset(data["fields"]),
            frozenset(data["account"]),
            frozenset(data["query_keys"]),
            frozenset(data["signing"]),
        )

    def secret(self, name: str) -> bool:
        text = name.lower()
        squashed = text.replace("-", "").replace("_", "")
        return (
            text in self.account
            or text in self.signing
            or squashed in self.fields
            or bool(self.words.search(text))
        )

    def masked_headers(self, pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
        return [(name, MASK if self.secret(name) else value) for name, value in pairs]

    def masked_query(self, query: str) -> str:
        """The query with its secret parameters' values masked (unchanged without any)."""
        pairs = parse_qsl(query, keep_blank_values=True)
        if not any(self.secret(k) or k.lower() in self.query_keys for k, _ in pairs):
            return query
        masked = [
            (k, MASK if self.secret(k) or k.lower() in self.query_keys else v) for k, v in pairs
        ]
        return urlencode(masked)


def encode(meta: Mapping[str, Any], request_body: bytes, response_body: bytes) -> bytes:
    """One hand-over's bytes."""
    head = dict(meta, request_bytes=len(request_body), response_bytes=len(response_body))
    return json.dumps(head, separators=(",", ":")).encode() + b"\n" + request_body + response_body


def decode(data: bytes) -> tuple[dict[str, Any], bytes, bytes]:
    """(metadata, request body, response body); ValueError saying why for anything else."""
    end = data.find(b"\n", 0, MAX_META_BYTES)
    if end < 0:
        raise ValueError("a hand-over starts with one line of JSON metadata")
    try:
        meta = json.loads(data[:end])
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"the metadata line is not JSON ({exc.__class__.__name__})") from None
    if not isinstance(meta, dict):
        raise ValueError("the metadata line is not a JSON object")
    sizes = meta.get("request_bytes"), meta.get("response_bytes")
    if not all(isinstance(n, int) and n >= 0 for n in sizes):
        raise ValueError("the metadata gives no body lengths")
    request_bytes, response_bytes = sizes
    if end + 1 + request_bytes + response_bytes != len(data):
        raise ValueError("the bodies' lengths do not add up to the hand-over's")
    start = end + 1
    middle = start + request_bytes
    return meta, data[start:middle], data[middle:]


# How an exchange ended (`ended`): the core's CALL_OUTCOMES names, which the receiver
# checks these against (this module cannot import them).
CLIENT_LEFT = "client-left"
UPSTREAM_BROKE_OFF = "upstream-broke-off"
UPSTREAM_UNREACHABLE = "upstream-unreachable"
ENDINGS = (COMPLETED, CLIENT_LEFT, UPSTREAM_BROKE_OFF, UPSTREAM_UNREACHABLE)
