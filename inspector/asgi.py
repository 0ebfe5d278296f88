"""ASGI entry point: HTTP through Django, websockets through Channels (daphne serves both)."""

import gc
import os
import sys

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "inspector.settings")
django.setup(set_prefix=False)
from traces.checks import refuse_to_serve  # noqa: E402

# Daphne runs no system checks: ours run here, and an error (unsafe shared-mode settings,
# a variable that does not parse) stops the server before it serves anything.
refuse_to_serve()
from inspector.middleware import InlineASGIHandler  # noqa: E402

# Django's get_asgi_application(), with the middleware's hooks inline on the event loop.
django_asgi_app = InlineASGIHandler()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from inspector import nodelay  # noqa: E402
from inspector.daphne_denial import patch_daphne_denial  # noqa: E402
from inspector.daphne_uploads import patch_daphne  # noqa: E402
from traces.access.cross_site import SameOriginWebsocket  # noqa: E402
from traces.capture.proxy_asgi import ProxyFastPath  # noqa: E402
from traces.mcp_server.http import McpEndpoint  # noqa: E402
from traces.routing import websocket_urlpatterns  # noqa: E402

patch_daphne()
patch_daphne_denial()
nodelay.enable()
# The event loop shares the GIL with threads that work while it serves (recording proxied
# calls, live report refreshes, sync views): a loop woken by a socket waits for the GIL at
# most this long, not CPython's default 5 ms, before relaying the next bytes.
sys.setswitchinterval(0.0005)


def _warm_up() -> None:
    """Load now what the first requests would: every format adapter and lint rule (the
    first OTLP export or upload imports them all) and the URL patterns' views. Then the
    objects of the start-up are moved out of the cycle collector's reach (`gc.freeze`):
    they live as long as the process, and each full collection would walk them again."""
    from django.template.loader import get_template
    from django.urls import get_resolver

    from traces.core.analysis.rules.registry import rules
    from traces.core.reading.formats.registry import adapters, scorers

    adapters()
    scorers()
    rules()
    get_resolver().url_patterns  # noqa: B018  (imports the URL modules and their views)
    # The template engine and its tag libraries (the first live call row a page is sent
    # would load them); the row template is compiled once, then cached.
    get_template("traces/_call_rows.html")
    gc.collect()
    gc.freeze()


_warm_up()

from traces.capture.otlp_queue import recover_at_start  # noqa: E402

# OTLP exports answered but not yet stored when a process was killed: stored now (the
# embedded queue starts at once to recover them).
recover_at_start()
application = ProtocolTypeRouter(
    {
        # `/mcp` is the MCP server for agents (traces.mcp_server.http, its own access check);
        # `/proxy/…` model calls skip Django's request and middleware (traces.capture.proxy_asgi);
        # everything else, and any proxy request it does not serve as Django would, goes on.
        "http": McpEndpoint(ProxyFastPath(django_asgi_app)),
        # The origin must be this server's own host and port; the session's user (or a
        # bearer token, read by each consumer's @access rule) says who is connecting.
        "websocket": SameOriginWebsocket(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
