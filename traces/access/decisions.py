"""One access decision for requests without a session, reused for a moment.

The recording proxy's fast path (`traces.capture.proxy_asgi`) serves relays without Django's
request and middleware stack; it still asks exactly what `@access(rule)` and
`ingest_project` would, but once per token and rule for `DECISION_SECONDS` rather than
with three queries per request. Changing a token, membership, project or user in this
process forgets every decision at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db.models.signals import post_delete, post_save

from traces import models
from traces.access.cross_site import local_mode
from traces.access.principals import (
    Access,
    BadToken,
    digest_of,
    ingest_project_of,
    principal_from,
)
from traces.stores import store


@dataclass(frozen=True)
class IngestDecision:
    """What `@access(rule)` (no trace, set or project in the URL) and `ingest_project` say
    about a request that carries no session cookie, only perhaps an API token."""

    refusal: tuple[int, str] | None
    """(401 or 403, message) when the rule refuses the request, as `check` would."""
    project: models.Project | None = None
    token_id: int | None = None
    """The token to charge the request to (`ratelimit_refusal`), if one was sent."""


DECISION_SECONDS = 2.0
"""How long a decision is reused in this process. Changing a token, membership or project
here forgets them at once; another process's change is seen within this time."""

DecisionKey = tuple[Access, str | None, bool]
"""(rule, the token's digest, local mode): what a decision depends on."""

RENEW_AFTER = 1.0
"""A decision this old is looked up again once the request that used it is answered
(`traces.capture.proxy_asgi`), so a caller that keeps calling never waits for the lookup: at one
call every 200 ms, one call in ten used to, and that was the proxy's p95."""


def ingest_decision(rule: Access, secret: str | None) -> IngestDecision:
    """The decision, looked up (principal, rule, project) in one go."""
    try:
        who = principal_from(secret, None, None)
    except BadToken as exc:
        return IngestDecision((401, str(exc)))
    if not who.allows(rule, None):
        if who.token is None:
            return IngestDecision((401, "Log in, or send an API token."))
        return IngestDecision((403, "You do not have access to this."))
    return IngestDecision(
        None, ingest_project_of(who), who.token.pk if who.token is not None else None
    )


def decision_key(rule: Access, secret: str | None) -> DecisionKey:
    return (rule, digest_of(secret) if secret else None, local_mode())


class DecisionStore:
    """This process's recent decisions, and a generation that every change bumps: a
    lookup that overlapped a change is not kept. Plain dict reads and writes (the GIL
    makes each atomic): the event loop reads it without waiting for any lock."""

    def __init__(self) -> None:
        self._decisions: dict[DecisionKey, tuple[float, IngestDecision]] = {}
        """Key -> (when it was looked up, the decision)."""
        self.generation = 0
        """Bumped by every `forget`: read before a lookup, handed to `remember` after it."""

    def cached(self, key: DecisionKey, now: float) -> tuple[IngestDecision, bool] | None:
        """The decision still fresh here, if any, and whether it is due for renewal."""
        found = self._decisions.get(key)
        if found is None or now - found[0] >= DECISION_SECONDS:
            return None
        return found[1], now - found[0] >= RENEW_AFTER

    def remember(
        self, key: DecisionKey, decision: IngestDecision, looked_up_at: float, looked_up_in: int
    ) -> None:
        """Keep a decision looked up from `looked_up_at` on, unless a token, membership,
        project or user changed in this process meanwhile (`looked_up_in` is the
        `generation` read before the lookup): it may have read the state before."""
        if looked_up_in != self.generation:
            return
        if len(self._decisions) > 10_000:
            self._decisions.clear()
        self._decisions[key] = (looked_up_at, decision)

    def entries(self) -> list[tuple[DecisionKey, IngestDecision, float]]:
        """(key, decision, when it was looked up) of each decision kept."""
        return [(key, found[1], found[0]) for key, found in list(self._decisions.items())]

    def forget(self) -> None:
        """Forget every decision, and let no lookup under way be kept."""
        self.generation += 1
        self._decisions.clear()

    clear = forget


def cached_decision(key: DecisionKey, now: float) -> tuple[IngestDecision, bool] | None:
    """The decision still fresh in this process's cache, if any, and whether it is due
    for renewal."""
    return store(DecisionStore).cached(key, now)


def generation() -> int:
    """Read before a lookup, handed to `remember_decision` after it."""
    return store(DecisionStore).generation


def remember_decision(
    key: DecisionKey,
    decision: IngestDecision,
    looked_up_at: float,
    looked_up_in: int,
) -> None:
    """`DecisionStore.remember` on this process's store."""
    store(DecisionStore).remember(key, decision, looked_up_at, looked_up_in)


def forget_decisions(**_: Any) -> None:
    """Forget every decision of this process (a token, membership, project or user
    changed)."""
    store(DecisionStore).forget()


for _model in (models.ApiToken, models.Membership, models.Project):
    post_save.connect(forget_decisions, sender=_model, dispatch_uid=f"decisions-{_model.__name__}")
    post_delete.connect(
        forget_decisions, sender=_model, dispatch_uid=f"decisions-del-{_model.__name__}"
    )
post_save.connect(forget_decisions, sender=settings.AUTH_USER_MODEL, dispatch_uid="decisions-user")
