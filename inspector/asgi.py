"""ASGI entry point: HTTP through Django, websockets through Channels (daphne serves both)."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "inspector.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from inspector import nodelay  # noqa: E402
from inspector.daphne_uploads import patch_daphne  # noqa: E402
from traces.crosssite import SameOriginWebsocket  # noqa: E402
from traces.routing import websocket_urlpatterns  # noqa: E402

patch_daphne()
nodelay.enable()

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        # The origin must be this server's own host and port; the session's user (or a
        # bearer token, read by each consumer's @access rule) says who is connecting.
        "websocket": SameOriginWebsocket(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
