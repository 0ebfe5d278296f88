"""The `client-left` rule: a proxied call that did not complete, and is no
answer of the API (issue 23: these were all `api-error` before)."""

from __future__ import annotations

from ...reading.call_outcomes import CLIENT_LEFT
from ._not_completed import NotCompleted
from .registry import register


@register
class ClientLeft(NotCompleted):
    """The client hung up before the answer ended.

    What it finds
    A call through the recording proxy whose client closed the connection (or socket)
    while the upstream was still answering, or before it had answered.

    Why it matters
    The answer was paid for (in part) but the agent never read it: a user's Ctrl-C, an
    agent's own timeout shorter than the model's answer, a crashed client. The API did
    nothing wrong.

    Example
    `the client disconnected mid-response` after the first events of a stream.

    How to fix
    If nobody stopped the agent, raise the client's own timeout (the SDKs' `timeout`) to
    more than the model's longest answers.
    """

    id = "client-left"
    severity = "warning"
    message = "call {call} was abandoned by the client before the answer ended: {problem}"
    outcome = CLIENT_LEFT
