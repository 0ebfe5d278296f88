"""Credentials in recorded HTTP metadata are masked before anything shows them.

Headers are recorded in many shapes: a dict, a list of `{name, value}` pairs (HAR), a
list of `[name, value]` pairs, OpenTelemetry `http.request.header.<name>` attributes
(string arrays), and keys in request URLs' query strings (`?key=` for Gemini). What is
secret is `secret_rule`'s one rule, the same `redact` applies to stored originals: a
header, attribute or query parameter whose name marks a secret, a field such as
`api_key` or `password` anywhere, and a key-shaped text (`sk-…`, a JWT) anywhere.

Only the copy kept for display is masked; the original is kept as the mode says
(`redact`: redacted in shared mode, byte-identical in local mode).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from .secret_rule import (
    ATTRIBUTE_CONTAINERS,
    HEADER_CONTAINERS,
    SHAPES_TEXT,
    secret_field,
    secret_name,
    shape_start,
)

__all__ = ["MASK", "mask_headers", "mask_secrets", "mask_text", "mask_url", "secret_name"]

MASK = "[masked]"


def mask_text(text: str) -> str:
    """A text with every secret of a known shape (`SHAPES_TEXT`) masked."""
    if not SHAPES_TEXT.search(text):
        return text
    return SHAPES_TEXT.sub(lambda match: text_before_secret(match) + MASK, text)


def text_before_secret(match: re.Match[str]) -> str:
    return match.group()[: shape_start(match) - match.start()]


def _masked(value: Any) -> Any:
    """A secret's value masked: text, and lists of text (VCR and OTel header arrays)."""
    if isinstance(value, str):
        return MASK
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return MASK
    return value


def mask_headers(headers: Any) -> Any:
    """Headers in any recorded shape (dict, `{name, value}` list, pair list), masked."""
    if isinstance(headers, dict):
        return {k: (_masked(v) if secret_name(k) else mask_secrets(v)) for k, v in headers.items()}
    if isinstance(headers, list):
        return [_mask_pair(item) for item in headers]
    return headers


def _mask_all(value: Any) -> Any:
    """Every text inside a value masked (an OTLP `{"stringValue": ...}` or array value)."""
    if isinstance(value, str):
        return MASK
    if isinstance(value, dict):
        return {k: _mask_all(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask_all(v) for v in value]
    return value


def _mask_pair(item: Any) -> Any:
    """A `{name, value}` (HAR) or `{key, value}` (OTLP attribute) entry, or a pair."""
    if isinstance(item, dict) and "value" in item:
        name = item.get("name", item.get("key"))
        if isinstance(name, str):
            hidden = secret_name(name)
            return {**item, "value": _mask_all(item["value"])} if hidden else item
    if isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], str):
        return [item[0], _masked(item[1])] if secret_name(item[0]) else list(item)
    return mask_secrets(item)


def mask_query(target: str) -> str:
    """A path or URL with the values of secret query parameters masked (for log lines:
    a proxied `?key=` must not reach the access log)."""
    path, mark, query = target.partition("?")
    if not mark:
        return target
    try:
        pairs = parse_qsl(query, keep_blank_values=True)
    except ValueError:
        return path + "?" + MASK
    if not any(secret_name(name) for name, _ in pairs):
        return target
    return (
        path + "?" + urlencode([(n, MASK if secret_name(n) else v) for n, v in pairs], safe="[]/")
    )


def mask_url(url: str) -> str:
    """A URL with the values of secret query parameters masked."""
    if "?" not in url or "://" not in url[:12]:
        return url
    try:
        parts = urlsplit(url)
        pairs = parse_qsl(parts.query, keep_blank_values=True)
    except ValueError:
        return url
    if not any(secret_name(name) for name, _ in pairs):
        return url
    query = urlencode([(n, MASK if secret_name(n) else v) for n, v in pairs], safe="[]")
    return urlunsplit(parts._replace(query=query))


_PLAIN, _HEADERS, _ATTRIBUTES, _SECRET = range(4)
_KINDS: dict[str, int] = {}
"""What a key name is to `mask_secrets`, remembered (record keys repeat at every call)."""
_KINDS_KEPT = 4096


def _kind(name: str) -> int:
    kind = _KINDS.get(name)
    if kind is None:
        lower = name.lower()
        if HEADER_CONTAINERS.search(name):
            kind = _HEADERS
        elif lower in ATTRIBUTE_CONTAINERS:
            kind = _ATTRIBUTES
        elif secret_field(name):
            kind = _SECRET
        else:
            kind = _PLAIN
        if len(_KINDS) < _KINDS_KEPT:
            _KINDS[name] = kind
    return kind


MEMO_TEXT_CHARS = 256
"""Texts up to this long are remembered in a `mask_secrets` memo (ids, paths, versions:
what a call's metadata repeats at every call); longer ones are masked each time."""
MEMO_TEXTS = 4096


def mask_secrets(value: Any, depth: int = 0, memo: dict[str, str] | None = None) -> Any:
    """Recorded metadata (a call's other fields) with every credential masked.

    `memo`: the caller's own text -> masked text, kept across calls (a rebuild's: a
    session id or working folder comes back at every call, and the pattern that looks
    for every shape of secret is the cost). It lives as long as the caller, never in the
    module, so no text outlives the trace that holds it."""
    if depth > 64:
        return value
    if isinstance(value, str):
        if memo is None or len(value) > MEMO_TEXT_CHARS:
            return _masked_text(value)
        masked = memo.get(value)
        if masked is None:
            masked = _masked_text(value)
            if len(memo) < MEMO_TEXTS:
                memo[value] = masked
        return masked
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            kind = _kind(str(key))
            if kind == _PLAIN:
                # Numbers, booleans and nulls come back as they are: no call for them, nor
                # for a text the memo knows (a call's ids and versions, at every call).
                known = memo.get(item) if memo is not None and type(item) is str else None
                if known is not None:
                    out[key] = known
                elif isinstance(item, (str, dict, list)):
                    out[key] = mask_secrets(item, depth + 1, memo)
                else:
                    out[key] = item
            elif kind == _HEADERS:
                out[key] = mask_headers(item)
            elif kind == _ATTRIBUTES and isinstance(item, dict):
                out[key] = {
                    k: (_masked(v) if secret_name(k) else mask_secrets(v, depth + 1, memo))
                    for k, v in item.items()
                }
            elif kind == _SECRET:
                out[key] = _masked(item)
            else:
                out[key] = mask_secrets(item, depth + 1, memo)
        return out
    if isinstance(value, list):
        return [
            _mask_pair(item)
            if isinstance(item, dict)
            else _mask_named_pair(item)
            if _named_pair(item)
            else mask_secrets(item, depth + 1, memo)
            for item in value
        ]
    return value


def _masked_text(value: str) -> str:
    if "?" in value and value.startswith(("http", "ws")):
        value = mask_url(value)
    return mask_text(value)


def _named_pair(item: Any) -> bool:
    """A `[name, value]` pair outside a header container, named as a credential is
    wherever it appears (`secret_field`)."""
    return (
        isinstance(item, list)
        and len(item) == 2
        and isinstance(item[0], str)
        and secret_field(item[0])
    )


def _mask_named_pair(item: list[Any]) -> list[Any]:
    return [item[0], _masked(item[1])]
