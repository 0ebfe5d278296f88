"""URLs of live traces (the HTTP side of live tail); creation is `POST /api/traces/live`
(traces.urls)."""

from django.urls import path

from traces.live import api as live_api

app_name = "live"

urlpatterns = [
    path("api/traces/<uuid:trace_id>/lines", live_api.trace_lines, name="lines"),
    path("api/traces/<uuid:trace_id>/close", live_api.trace_close, name="close"),
]
