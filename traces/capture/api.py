"""Where a proxy session's calls went: `GET /api/captures/<session>` and its page link.

`manage.py record` (or a script) names a session before the first call exists; this
says which live traces the session's calls have made so far, so the command can print
the page and close the traces when its agent exits.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_safe

from traces.access.rules import Access, access, principal
from traces.capture.lines import session_traces
from traces.capture.proxy import SESSION_NAME
from traces.capture.recording import recording


@access(Access.READ)
@require_safe
def session_status(request: HttpRequest, session: str) -> JsonResponse:
    if not SESSION_NAME.match(session):
        return JsonResponse({"error": "Not a session name."}, status=400)
    traces = session_traces(session, principal(request))
    return JsonResponse(
        {
            "session": session,
            "recording": recording(session),
            "traces": [
                {
                    "id": str(trace.pk),
                    "url": request.build_absolute_uri(reverse("traces:detail", args=[trace.pk])),
                    "format": trace.format,
                    "state": trace.state,
                    "calls": trace.calls_count,
                }
                for trace in traces
            ],
        }
    )


@access(Access.READ)
@require_safe
def session_page(request: HttpRequest, session: str) -> HttpResponse:
    """The session's newest trace page, or a note that reloads until the first call."""
    if not SESSION_NAME.match(session):
        return HttpResponse("Not a session name.", status=400, content_type="text/plain")
    traces = session_traces(session, principal(request))
    if traces:
        return HttpResponseRedirect(reverse("traces:detail", args=[traces[0].pk]))
    page = reverse("capture:session-page", args=[session])  # the SDKs' base, plus a slash
    base = request.build_absolute_uri(page.rstrip("/"))
    return render(
        request,
        "traces/session_waiting.html",
        {"session": session, "anthropic": f"{base}/anthropic", "openai": f"{base}/openai/v1"},
    )
