"""Where the forward proxy sends a vendor call itself: the upstream the reverse proxy would pick.

mitmdump (`forward_addon`) makes a vendor call in one hop when this module finds it a
target, else hands it to the reverse proxy as before (two hops). `Routes` is what the
server said when the forward proxy started (`GET /api/forward/exchanges`: its
INSPECTOR_UPSTREAM_* bases, its limits, its session-name and secret rules), so the
upstream, the URL and the Host header are the ones `traces.capture.proxy.plan_call`
would give the same call, and the recorded line is the same.

Only the plain case goes in one hop: a method the reverse proxy takes, a body within its
limit, a valid session name, a path and query that its URL building leaves unchanged,
no Loop Inspector token of the caller's. Anything else (a refusal the reverse proxy
words, a path it would re-escape) takes the two hops, where its one code answers it.
Standard library only: mitmdump loads this beside its script.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

try:  # mitmdump's script loader has this folder on sys.path while the script loads
    from forward_exchange import SecretRule  # type: ignore[import-not-found]
except ImportError:
    from traces.capture.forward_exchange import SecretRule

PLAIN_SEGMENT = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@]+")
"""A path segment `upstream_url` sends on as it is (unreserved, sub-delimiters, ':' '@')."""
RAW_SEGMENT = re.compile(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})*")
"""A Bedrock path segment `bedrock_route` sends on as it is (as its RAW_SEGMENT)."""
PLAIN_QUERY = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@/?%]*")
"""A query string both URL builders leave unchanged."""


@dataclass(frozen=True)
class Target:
    """Where one call goes: the upstream's address, the path (and query) and Host."""

    scheme: str
    host: str
    port: int
    path: str
    host_header: str


@dataclass(frozen=True)
class Routes:
    """The server's word on where vendor calls go and what it records (`load`)."""

    upstreams: Mapping[str, tuple[str, str]]
    """vendor -> (the path its route holds before the rest, e.g. OpenAI's `v1/`; the
    INSPECTOR_UPSTREAM_* base, '' when the vendor is off)."""
    methods: frozenset[str]
    max_request_bytes: int
    max_response_bytes: int
    session_name: re.Pattern[str]
    secrets: SecretRule
    token_prefix: str

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Routes:
        return cls(
            {v: (str(r["fixed"]), str(r["base"])) for v, r in data["upstreams"].items()},
            frozenset(data["methods"]),
            int(data["max_request_bytes"]),
            int(data["max_response_bytes"]),
            re.compile(str(data["session_name"])),
            SecretRule.of(data["secret_rule"]),
            str(data["token_prefix"]),
        )

    @classmethod
    def load(cls, path: str) -> Routes | None:
        """The routes file the forward proxy wrote, or None (two hops for every call)."""
        if not path:
            return None
        return cls.of(json.loads(Path(path).read_text()))

    def target(
        self,
        vendor: str,
        host: str,
        method: str,
        path: str,
        size: int,
        headers: Mapping[str, str],
    ) -> Target | None:
        """The upstream of a vendor call, or None when it goes through the reverse proxy.
        `path`: as received (raw, with its query); Bedrock's starts with its region
        (`forward_addon.vendor_route`); `headers`: looked up case-blind by the caller."""
        fixed, base = self.upstreams.get(vendor, ("", ""))
        if not base or method.upper() not in self.methods or size > self.max_request_bytes:
            return None
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_request_bytes:
            return None
        kind, _, secret = headers.get("authorization", "").strip().partition(" ")
        if kind.lower() == "bearer" and secret.strip().startswith(self.token_prefix):
            return None  # our token in Authorization: the reverse proxy judges it
        raw, _, query = path.partition("?")
        if not PLAIN_QUERY.fullmatch(query):
            return None
        if vendor == "bedrock":
            region, _, rest = raw.lstrip("/").partition("/")
            segments = rest.split("/")
            if any(s in (".", "..") or not RAW_SEGMENT.fullmatch(s) for s in segments):
                return None
            base = base.replace("{region}", region)
        else:
            if not raw.startswith("/" + fixed):
                return None
            rest = raw[1 + len(fixed) :]
            if not rest or any(
                s in (".", "..") or not PLAIN_SEGMENT.fullmatch(s) for s in rest.split("/")
            ):
                return None
        upstream = urlsplit(base)
        scheme = upstream.scheme or "https"
        default = 443 if scheme == "https" else 80
        port = upstream.port or default
        name = upstream.hostname or ""
        if not name:
            return None
        target_path = upstream.path.rstrip("/") + "/" + rest + (f"?{query}" if query else "")
        own = name if port == default else f"{name}:{port}"
        host_header = host if vendor == "bedrock" else own  # Bedrock's: the one it signed
        return Target(scheme, name, port, target_path, host_header)

    def session_of(self, option: str, header: str) -> str | None:
        """The session a call records into ('' for the server's default), None when the
        name given is not a valid one (the reverse proxy answers that)."""
        session = option or header
        if not session:
            return ""
        return session if self.session_name.match(session) else None
