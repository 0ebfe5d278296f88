"""Where a form may send the browser next: only to this site (no open redirect).

Every `next=` a page honours goes through `next_url`; a value naming another host, a
scheme-relative `//host` or a `javascript:` URL falls back to the page's own default
(issue 26: revoking a token redirected to any `next=`).
"""

from __future__ import annotations

from django.http import HttpRequest
from django.utils.http import url_has_allowed_host_and_scheme


def next_url(request: HttpRequest, default: str) -> str:
    """The request's `next` (POST, then GET) when it stays on this site, else `default`."""
    wanted = request.POST.get("next") or request.GET.get("next") or ""
    if wanted and url_has_allowed_host_and_scheme(
        wanted, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return wanted
    return default
