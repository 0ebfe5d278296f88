"""Websocket routes: viewers of a live trace, and agents appending lines to one."""

from django.urls import path

from traces.consumers import TraceIngestConsumer, TraceViewerConsumer

websocket_urlpatterns = [
    path("ws/traces/<uuid:trace_id>/", TraceViewerConsumer.as_asgi(), name="ws-trace"),
    path("ws/ingest/<uuid:trace_id>/", TraceIngestConsumer.as_asgi(), name="ws-ingest"),
]
