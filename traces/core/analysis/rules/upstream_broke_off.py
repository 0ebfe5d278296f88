"""The `upstream-broke-off` rule: a proxied call that did not complete, and is no
answer of the API (issue 23: these were all `api-error` before)."""

from __future__ import annotations

from ...reading.call_outcomes import UPSTREAM_BROKE_OFF
from ._not_completed import NotCompleted
from .registry import register


@register
class UpstreamBrokeOff(NotCompleted):
    """The upstream broke off mid-answer.

    What it finds
    A call through the recording proxy whose upstream connection (or socket) ended before
    the answer did: the stream stopped with no final event.

    Why it matters
    The agent got half an answer (the proxy ends the stream with an error event, so its
    SDK raises); a network fault or an overloaded server, not a rejected request.

    Example
    `the upstream connection failed mid-response (peer closed connection without
    sending complete message body)`.

    How to fix
    Retry the call; if it recurs, check the network between the proxy and the vendor.
    """

    id = "upstream-broke-off"
    severity = "error"
    message = "call {call}: the upstream broke off mid-answer: {problem}"
    outcome = UPSTREAM_BROKE_OFF
