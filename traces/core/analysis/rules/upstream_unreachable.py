"""The `upstream-unreachable` rule: a proxied call that did not complete, and is no
answer of the API (issue 23: these were all `api-error` before)."""

from __future__ import annotations

from ...reading.call_outcomes import UPSTREAM_UNREACHABLE
from ._not_completed import NotCompleted
from .registry import register


@register
class UpstreamUnreachable(NotCompleted):
    """The upstream could not be reached.

    What it finds
    A call through the recording proxy that could not be sent on: the upstream's host did
    not resolve or refused the connection (the client got a 502).

    Why it matters
    The request never reached the API: no answer, no bill.

    Example
    `could not reach the upstream (ConnectError)`.

    How to fix
    Check `INSPECTOR_UPSTREAM_*` and the network from the proxy to the vendor.
    """

    id = "upstream-unreachable"
    severity = "error"
    message = "call {call} never reached the upstream: {problem}"
    outcome = UPSTREAM_UNREACHABLE
