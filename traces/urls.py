"""URLs of pages and the JSON API."""

from django.urls import path

from traces import api, views

app_name = "traces"

urlpatterns = [
    path("", views.trace_list, name="list"),
    path("upload", views.upload, name="upload"),
    path("traces/<uuid:trace_id>/", views.trace_detail, name="detail"),
    path("traces/<uuid:trace_id>/calls/<int:index>/", views.call_detail, name="call"),
    path("traces/<uuid:trace_id>/download", views.download, name="download"),
    path("api/traces", api.traces_collection, name="api-traces"),
    path("api/traces/<uuid:trace_id>", api.trace_report, name="api-trace"),
]
