"""The shared check of the rules for proxied calls that did not complete and are no
answer of the API: the client hung up, the upstream broke off, the upstream timed out or
could not be reached (one rule a module: client_left, upstream_broke_off,
upstream_timeout, upstream_unreachable).

The recording proxy says which in the line (`call_outcome`, `reading.capture`); these
were all `api-error` ("rejected by the API") before, which sent readers looking for a bad
request that was never made (issue 23).
"""

from __future__ import annotations

from collections.abc import Iterator

from ...reading.call_outcomes import OUTCOME_KEY
from .base import Finding, LintContext, Rule


class NotCompleted(Rule):
    """A proxied call that ended with `outcome` (set by each rule)."""

    outcome = ""

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for call in ctx.trace.calls:
            if call.extra.get(OUTCOME_KEY) == self.outcome:
                problem = call.extra.get("proxy_error") or call.error or "no response"
                yield self.finding(call, problem=problem)
