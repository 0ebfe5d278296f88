"""`POST /api/traces/live`: create an empty live trace, to send its lines to afterwards.

An endpoint of its own (it was `POST /api/traces?live=1`, which stays as an alias), so its
rule is declared where it is routed. The work is `traces.live.api.create_live`; the
lines and close endpoints are traces.live.urls.
"""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from traces.access.rules import Access, access
from traces.live.api import create_live


@csrf_exempt
@access(Access.INGEST, uploads=True)
@require_POST
def live_collection(request: HttpRequest) -> JsonResponse:
    """201 `{"id", "url", "lines_url", "state": "live"}`; `name`, `format` and `project`
    from the query string or form fields; a body with lines is refused (400)."""
    return create_live(request)
