"""Credentials in recorded HTTP metadata are masked before anything shows them.

Headers are recorded in many shapes: a dict, a list of `{name, value}` pairs (HAR), a
list of `[name, value]` pairs, OpenTelemetry `http.request.header.<name>` attributes
(string arrays), and keys in request URLs' query strings (`?key=` for Gemini). A header,
attribute or query parameter is masked when its name contains a word that marks a
secret (key, auth, token, secret, cookie, session, signature, password, credential).

Only the copy kept for display is masked: the original file stays byte-identical.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

MASK = "[masked]"
SECRET_WORDS = re.compile(
    r"key|auth|token|secret|cookie|session|signature|password|passwd|credential|"
    r"^sig$|^code$|x-amz-security",
    re.IGNORECASE,
)
EXTRA_SECRET_HEADERS = frozenset({"openai-organization", "openai-project"})
"""Not secret by name, but they identify the account."""
HEADER_CONTAINERS = re.compile(r"headers?$", re.IGNORECASE)
ATTRIBUTE_CONTAINERS = frozenset({"attributes", "span_attributes", "resource_attributes"})
OTEL_HEADER = re.compile(r"^http\.(request|response)\.header\.", re.IGNORECASE)
SECRET_FIELDS = frozenset(
    {"api_key", "apikey", "access_token", "refresh_token", "client_secret", "password"}
)
"""Fields masked wherever they appear (outside headers too)."""


def secret_name(name: Any) -> bool:
    """Whether a header, attribute or query parameter of this name holds a credential."""
    text = str(name).lower()
    return text in EXTRA_SECRET_HEADERS or SECRET_WORDS.search(text) is not None


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
            hidden = secret_name(OTEL_HEADER.sub("", name))
            return {**item, "value": _mask_all(item["value"])} if hidden else item
    if isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], str):
        return [item[0], _masked(item[1])] if secret_name(item[0]) else list(item)
    return mask_secrets(item)


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
        elif lower in SECRET_FIELDS or (
            OTEL_HEADER.match(name) and secret_name(OTEL_HEADER.sub("", name))
        ):
            kind = _SECRET
        else:
            kind = _PLAIN
        if len(_KINDS) < _KINDS_KEPT:
            _KINDS[name] = kind
    return kind


def mask_secrets(value: Any, depth: int = 0) -> Any:
    """Recorded metadata (a call's other fields) with every credential masked."""
    if depth > 64:
        return value
    if isinstance(value, str):
        return mask_url(value) if "?" in value and value.startswith(("http", "ws")) else value
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            kind = _kind(str(key))
            if kind == _PLAIN:
                # Numbers, booleans and nulls come back as they are: no call for them.
                out[key] = (
                    mask_secrets(item, depth + 1) if isinstance(item, str | dict | list) else item
                )
            elif kind == _HEADERS:
                out[key] = mask_headers(item)
            elif kind == _ATTRIBUTES and isinstance(item, dict):
                out[key] = {
                    k: (_masked(v) if secret_name(k) else mask_secrets(v, depth + 1))
                    for k, v in item.items()
                }
            elif kind == _SECRET:
                out[key] = _masked(item)
            else:
                out[key] = mask_secrets(item, depth + 1)
        return out
    if isinstance(value, list):
        return [
            _mask_pair(item) if isinstance(item, dict) else mask_secrets(item, depth + 1)
            for item in value
        ]
    return value
