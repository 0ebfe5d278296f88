"""Websocket routes: viewers of a live trace, agents appending lines to one, and the
recording proxy's Responses sockets."""

from django.urls import path

from traces.capture.socket_relay import ResponsesSocketRelay
from traces.live.consumers import TraceIngestConsumer, TraceViewerConsumer

websocket_urlpatterns = [
    path("ws/traces/<uuid:trace_id>/", TraceViewerConsumer.as_asgi(), name="ws-trace"),
    path("ws/ingest/<uuid:trace_id>/", TraceIngestConsumer.as_asgi(), name="ws-ingest"),
    # The Responses API's WebSocket mode through the recording proxy (the Codex CLI's
    # default transport, the OpenAI SDK's `responses.connect()`).
    path("proxy/openai/v1/responses", ResponsesSocketRelay.as_asgi(), name="ws-proxy-responses"),
    path(
        "proxy/s/<str:session>/openai/v1/responses",
        ResponsesSocketRelay.as_asgi(),
        name="ws-proxy-session-responses",
    ),
]
