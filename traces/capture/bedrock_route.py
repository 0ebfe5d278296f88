"""Bedrock Runtime through the recording proxy: the call goes on exactly as it was signed.

A Bedrock request is signed (AWS SigV4) for its own host, `bedrock-runtime.<region>.
amazonaws.com`, over its method, its path as the client percent-encoded it, the signed
headers and the body. The forward proxy keeps the host (`forward_addon` routes it to
`/proxy/s/<session>/bedrock/<region>/<path>`), so the signature stays valid as long as
nothing of that changes on the way: this module gives the upstream the raw path (the
one the ASGI server received, not the decoded one: a model id's `%3A` must stay `%3A`)
and the Host header the client signed. Nothing is re-signed, and no credential is
added or kept here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

REGION = re.compile(r"^[a-z]{2}(?:-[a-z]+)+-\d{1,2}$")
"""An AWS region name (`us-east-1`, `ap-southeast-2`, `us-gov-west-1`)."""
HOST = "bedrock-runtime.{region}.amazonaws.com"
RAW_SEGMENT = re.compile(r"^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})*$")
"""A path segment as a client may send it: unreserved, sub-delimiters, ':', '@' and
percent-escapes only (RFC 3986), so what goes upstream is the segment as it was sent."""


@dataclass(frozen=True)
class BedrockTarget:
    """Where a Bedrock call goes on: the upstream URL and the Host header it was signed for."""

    url: str
    host: str


def bedrock_target(base: str, path: str, raw_path: str | None, query: str) -> BedrockTarget | str:
    """The upstream of a `/proxy/…/bedrock/<region>/<path>` call, or why there is none.

    `path` is the decoded path after `bedrock/`; `raw_path` the whole request path as
    received (None where the server gives none: Django's test client), from which the
    path after the region is taken as it was sent. `base` is INSPECTOR_UPSTREAM_BEDROCK,
    whose `{region}` is the region named in the path."""
    region, _, rest = path.partition("/")
    if not REGION.match(region):
        return (
            f"{region!r} is not an AWS region: the Bedrock route is "
            "/proxy/s/<session>/bedrock/<region>/model/<model id>/converse."
        )
    segments = _raw_segments(raw_path) if raw_path else None
    if segments is None:  # re-encoded as botocore encodes a URI label
        segments = [quote(part, safe="~") for part in rest.split("/")]
    if any(part in (".", "..") or not RAW_SEGMENT.match(part) for part in segments):
        return "the Bedrock path holds a segment that cannot be sent on as it is"
    url = base.replace("{region}", region).rstrip("/") + "/" + "/".join(segments)
    if query:
        url += "?" + quote(query, safe="!$&'()*+,;=:@/?%~")
    return BedrockTarget(url, HOST.format(region=region))


def _raw_segments(raw_path: str) -> list[str] | None:
    """The segments after `…/bedrock/<region>/` of the raw path, or None if it is not one."""
    parts = raw_path.split("?", 1)[0].split("/")
    if parts[1:3] == ["proxy", "bedrock"]:
        return parts[4:]
    if parts[1:3] == ["proxy", "s"] and len(parts) > 5 and parts[4] == "bedrock":
        return parts[6:]
    return None


def raw_path_of(scope: dict[str, Any] | None) -> str | None:
    """The request path as received (ASGI's `raw_path`), or None."""
    raw = (scope or {}).get("raw_path")
    return raw.decode("latin-1") if isinstance(raw, bytes) else None
