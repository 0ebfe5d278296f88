"""URLs of pages and the JSON API."""

from django.urls import path

from traces import api, compare_views, job_api, set_api, set_views, views, whatif_views

app_name = "traces"

urlpatterns = [
    path("", views.trace_list, name="list"),
    path("upload", views.upload, name="upload"),
    path("traces/<uuid:trace_id>/", views.trace_detail, name="detail"),
    path("traces/<uuid:trace_id>/calls/<int:index>/", views.call_detail, name="call"),
    path("traces/<uuid:trace_id>/diagram.json", views.diagram_json, name="diagram-json"),
    path(
        "traces/<uuid:trace_id>/calls/<int:index>/request.json",
        views.call_request_json,
        name="call-request",
    ),
    path("traces/<uuid:trace_id>/download", views.download, name="download"),
    path("traces/<uuid:trace_id>/what-if.json", whatif_views.what_if_json, name="what-if-json"),
    path("traces/<uuid:trace_id>/findings/<int:number>/", views.finding, name="finding"),
    path("traces/<uuid:trace_id>/postmortem", views.postmortem, name="postmortem"),
    path("traces/<uuid:trace_id>/export.md", views.export_markdown, name="export-md"),
    path("traces/<uuid:trace_id>/export.html", views.export_html, name="export-html"),
    path("traces/<uuid:trace_id>/labels", views.edit_labels, name="labels"),
    path("sets/", set_views.set_list, name="sets"),
    path("sets/<uuid:set_id>/", set_views.set_detail, name="set"),
    path("compare/", compare_views.compare_pick, name="compare-pick"),
    path("compare/<uuid:a>/<uuid:b>/", compare_views.compare_runs, name="compare"),
    path(
        "compare/<uuid:a>/<uuid:b>/compare.json",
        compare_views.compare_runs_json,
        name="compare-json",
    ),
    path("compare/sets/<uuid:a>/<uuid:b>/", compare_views.compare_sets, name="compare-sets"),
    path("api/sets", set_api.sets_collection, name="api-sets"),
    path("api/sets/<uuid:set_id>", set_api.set_detail, name="api-set"),
    path("api/labels", set_api.labels_list, name="api-labels"),
    path("api/traces", api.traces_collection, name="api-traces"),
    path("api/traces/<uuid:trace_id>", api.trace_report, name="api-trace"),
    path("api/jobs/<uuid:job_id>", job_api.job_detail, name="api-job"),
]
