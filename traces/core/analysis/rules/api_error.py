"""Rule api-error."""

from __future__ import annotations

from collections.abc import Iterator

from ...reading.call_outcomes import NOT_THE_API, OUTCOME_KEY
from .base import Finding, LintContext, Rule
from .registry import register


@register
class ApiError(Rule):
    """The API rejected a request.

    What it finds
    A call whose response is an error (HTTP 4xx/5xx, an `error` body or stream event).

    Why it matters
    A rejected request costs a round trip and usually ends the task; 400s mean the
    transcript itself is malformed (a dangling call, an orphan result, a bad schema).

    Example
    `HTTP 400 invalid_request_error: messages.2: tool_use ids were found without
    tool_result blocks immediately after`.

    How to fix
    Read the message: fix the transcript for 400s; retry with backoff for 429/529
    (overloaded) and 5xx; check credentials for 401/403.

    A proxied call that the client abandoned, that the upstream broke off, timed out or
    could not be reached is none of this: `client-left`, `upstream-broke-off`,
    `upstream-timeout` and `upstream-unreachable` report those.
    """

    id = "api-error"
    severity = "error"
    message = "call {call} was rejected by the API: {error}"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for call in ctx.trace.calls:
            if call.status == "error" and call.extra.get(OUTCOME_KEY) not in NOT_THE_API:
                yield self.finding(call, error=call.error or "no response")
