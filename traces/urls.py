"""URLs of pages and the JSON API."""

from django.urls import path

from traces.api import jobs as job_api
from traces.api import live as live_api
from traces.api import sets as set_api
from traces.api import traces as trace_api
from traces.pages import compare as compare_pages
from traces.pages import exports as export_pages
from traces.pages import machine as machine_pages
from traces.pages import notes as note_pages
from traces.pages import sets as set_pages
from traces.pages import traces as trace_pages
from traces.pages import usage as usage_pages
from traces.pages import whatif as whatif_pages

app_name = "traces"

urlpatterns = [
    path("", trace_pages.trace_list, name="list"),
    path("upload", trace_pages.upload, name="upload"),
    path("traces/<uuid:trace_id>/", trace_pages.trace_detail, name="detail"),
    path("traces/<uuid:trace_id>/calls/<int:index>/", trace_pages.call_detail, name="call"),
    path("traces/<uuid:trace_id>/diagram.json", trace_pages.diagram_json, name="diagram-json"),
    path("traces/<uuid:trace_id>/figures.json", trace_pages.figures_json, name="figures-json"),
    path(
        "traces/<uuid:trace_id>/calls/<int:index>/request.json",
        trace_pages.call_request_json,
        name="call-request",
    ),
    path("traces/<uuid:trace_id>/download", export_pages.download, name="download"),
    path("traces/<uuid:trace_id>/what-if.json", whatif_pages.what_if_json, name="what-if-json"),
    path("traces/<uuid:trace_id>/findings/<int:number>/", trace_pages.finding, name="finding"),
    path("traces/<uuid:trace_id>/postmortem", export_pages.postmortem, name="postmortem"),
    path("traces/<uuid:trace_id>/export.md", export_pages.export_markdown, name="export-md"),
    path("traces/<uuid:trace_id>/export.html", export_pages.export_html, name="export-html"),
    path("traces/<uuid:trace_id>/labels", trace_pages.edit_labels, name="labels"),
    path("traces/<uuid:trace_id>/notes", note_pages.note_create, name="notes"),
    path("traces/<uuid:trace_id>/notes/<int:note_id>", note_pages.note_change, name="note"),
    path("machine/", machine_pages.machine, name="machine"),
    path("usage/", usage_pages.usage, name="usage"),
    path("sets/", set_pages.set_list, name="sets"),
    path("sets/<uuid:set_id>/", set_pages.set_detail, name="set"),
    path("compare/", compare_pages.compare_pick, name="compare-pick"),
    path("compare/<uuid:a>/<uuid:b>/", compare_pages.compare_runs, name="compare"),
    path(
        "compare/<uuid:a>/<uuid:b>/compare.json",
        compare_pages.compare_runs_json,
        name="compare-json",
    ),
    path("compare/sets/<uuid:a>/<uuid:b>/", compare_pages.compare_sets, name="compare-sets"),
    path("api/sets", set_api.sets_collection, name="api-sets"),
    path("api/sets/<uuid:set_id>", set_api.set_detail, name="api-set"),
    path("api/labels", set_api.labels_list, name="api-labels"),
    # POST /api/traces?live=1 and a large body to /api/traces are aliases of the next two.
    path("api/traces", trace_api.traces_collection, name="api-traces"),
    path("api/traces/live", live_api.live_collection, name="api-live"),
    path("api/jobs", job_api.jobs_collection, name="api-jobs"),
    path("api/traces/<uuid:trace_id>", trace_api.trace_report, name="api-trace"),
    path("api/jobs/<uuid:job_id>", job_api.job_detail, name="api-job"),
]
