"""The `upstream-timeout` rule: a proxied call that did not complete, and is no
answer of the API (issue 23: these were all `api-error` before)."""

from __future__ import annotations

from ...reading.call_outcomes import TIMEOUT
from ._not_completed import NotCompleted
from .registry import register


@register
class UpstreamTimeout(NotCompleted):
    """The upstream did not answer in time.

    What it finds
    A call through the recording proxy that the upstream did not answer (or went silent
    mid-stream) within the proxy's timeouts (`PROXY_CONNECT_TIMEOUT`,
    `PROXY_READ_TIMEOUT`); the client got a 504.

    Why it matters
    The agent waited the whole timeout for nothing; no answer means no bill, but no
    progress either.

    Example
    `the upstream did not answer within 600 s`.

    How to fix
    Raise the proxy's read timeout for long generations, or check the upstream's health.
    """

    id = "upstream-timeout"
    severity = "error"
    message = "call {call} timed out waiting for the upstream: {problem}"
    outcome = TIMEOUT
