"""A 1,200-call Claude Code session uploaded once for a whole test module (more calls
than PARTS_FROM_CALLS: stored with window parts and a page summary), one busy tool named
with markup, and everything it made removed afterwards.

It is made outside any test's transaction, so what the upload leaves beside the trace
(shared blobs, which only the deletion service removes, and the audit trail) would
otherwise stay for the modules after it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.test import Client

from tests.core.long_session import make_session
from tests.web.test_api_and_pages import upload
from traces import models
from traces.services.deletion import trace_delete

HOSTILE = "<img src=x onerror=alert(1)>"


@contextmanager
def uploaded_long_session(django_db_blocker) -> Iterator[tuple[models.Trace, str]]:
    data = make_session(1200).replace(b'"name":"tool_3"', f'"name":"{HOSTILE}"'.encode())
    with django_db_blocker.unblock():
        last_event = models.AuditEvent.objects.order_by("-pk").values_list("pk", flat=True)
        after = last_event.first() or 0
        url = upload(Client(HTTP_HOST="127.0.0.1"), data, "session.jsonl").json()["url"]
        trace = models.Trace.objects.defer("report").get(pk=url.rstrip("/").split("/")[-1])
        try:
            yield trace, url
        finally:
            trace_delete(trace=trace, who="test")
            models.AuditEvent.objects.filter(pk__gt=after).delete()
