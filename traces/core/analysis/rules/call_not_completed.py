"""Rules for proxied calls that did not complete and are no answer of the API: the client
hung up, the upstream broke off, the upstream timed out or could not be reached.

The recording proxy says which in the line (`call_outcome`, `reading.capture`); these
were all `api-error` ("rejected by the API") before, which sent readers looking for a bad
request that was never made (issue 23).
"""

from __future__ import annotations

from collections.abc import Iterator

from ...reading.capture import (
    CLIENT_LEFT,
    OUTCOME_KEY,
    TIMEOUT,
    UPSTREAM_BROKE_OFF,
    UPSTREAM_UNREACHABLE,
)
from .base import Finding, LintContext, Rule
from .registry import register


class _NotCompleted(Rule):
    """A proxied call that ended with `outcome` (set by each rule)."""

    outcome = ""

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for call in ctx.trace.calls:
            if call.extra.get(OUTCOME_KEY) == self.outcome:
                problem = call.extra.get("proxy_error") or call.error or "no response"
                yield self.finding(call, problem=problem)


@register
class ClientLeft(_NotCompleted):
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


@register
class UpstreamBrokeOff(_NotCompleted):
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


@register
class UpstreamTimeout(_NotCompleted):
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


@register
class UpstreamUnreachable(_NotCompleted):
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
