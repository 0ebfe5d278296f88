"""One access decision for requests without a session, reused for a moment.

The recording proxy's fast path (`traces.proxy_asgi`) serves relays without Django's
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
from traces.access import Access, BadToken, digest_of, ingest_project_of, local_mode, principal_from


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

_decisions: dict[tuple[Access, str | None, bool], tuple[float, IngestDecision]] = {}


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


def cached_decision(rule: Access, secret: str | None, now: float) -> IngestDecision | None:
    """The decision still fresh in this process's cache, if any."""
    found = _decisions.get((rule, digest_of(secret) if secret else None, local_mode()))
    if found is None or found[0] < now:
        return None
    return found[1]


def remember_decision(
    rule: Access, secret: str | None, decision: IngestDecision, now: float
) -> None:
    if len(_decisions) > 10_000:
        _decisions.clear()
    key = (rule, digest_of(secret) if secret else None, local_mode())
    _decisions[key] = (now + DECISION_SECONDS, decision)


def forget_decisions(**_: Any) -> None:
    _decisions.clear()


for _model in (models.ApiToken, models.Membership, models.Project):
    post_save.connect(forget_decisions, sender=_model, dispatch_uid=f"decisions-{_model.__name__}")
    post_delete.connect(
        forget_decisions, sender=_model, dispatch_uid=f"decisions-del-{_model.__name__}"
    )
post_save.connect(forget_decisions, sender=settings.AUTH_USER_MODEL, dispatch_uid="decisions-user")
