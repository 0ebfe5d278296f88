"""The trace page's "What if" panel and its JSON endpoint (server-side recomputation)."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from tests.core.whatif.traces import sundry_run
from traces import models

pytestmark = pytest.mark.django_db

HOSTILE_TOOL = '<img src=x onerror="window.pwned=1">'


def upload(client, data: bytes, name: str = "sundry.jsonl") -> str:
    reply = client.post(reverse("traces:api-traces"), {"file": SimpleUploadedFile(name, data)})
    assert reply.status_code == 201
    return reply.json()["id"]


def test_the_page_shows_every_scenario_with_the_default_parameters(client):
    trace_id = upload(client, sundry_run())
    html = client.get(reverse("traces:detail", args=[trace_id])).content.decode()
    assert 'id="what-if"' in html and 'name="cap:get_order" value="800"' in html
    for title in (
        "Cap tool results",
        "Batch the serial independent calls",
        "Clear old tool results",
    ):
        assert title in html
    assert 'id="chart-whatif_growth"' in html and 'id="figure-whatif_cost"' in html
    assert "js/whatif.js" in html
    assert "<script>" not in html.replace('<script type="application/json"', "")


def test_without_javascript_the_form_recomputes_on_the_server(client):
    trace_id = upload(client, sundry_run())
    url = reverse("traces:detail", args=[trace_id])
    html = client.get(url, {"cap:get_order": "340", "cap:search_kb": ""}).content.decode()
    assert 'name="cap:get_order" value="340"' in html
    assert "8,100 → 3,060 tokens" in html
    assert (
        "cap get_order at 340 tokens</strong>: saves 5,040 input tokens, $0.015 on this run" in html
    )


def test_the_endpoint_recomputes_with_the_query(client):
    trace_id = upload(client, sundry_run())
    url = reverse("traces:what-if-json", args=[trace_id])
    first = client.get(url, {"cap:get_order": "800"}).json()
    second = client.get(
        url, {"cap:get_order": "340", "clear_after": "", "cache_lifetime": "1h"}
    ).json()
    cap = next(s for s in second["what_if"]["scenarios"] if s["id"] == "cap-results")
    assert cap["tokens_saved"] == 5_040
    assert second["what_if"]["parameters"]["clear_after"] is None
    assert second["what_if"]["parameters"]["cache_lifetime"] == "1h"
    assert "8,100 → 3,060" in second["html"]
    growth = second["figures"]["whatif_growth"]
    assert [trace["name"] for trace in growth["data"]] == ["actual input", "with the fixes"]
    assert (
        growth["layout"]["title"]["text"]
        != first["figures"]["whatif_growth"]["layout"]["title"]["text"]
    )


def test_tool_names_are_escaped_in_the_panel(client):
    data = sundry_run().replace(
        b'"get_order"', b'"' + HOSTILE_TOOL.replace('"', '\\"').encode() + b'"'
    )
    trace_id = upload(client, data)
    html = client.get(reverse("traces:detail", args=[trace_id])).content.decode()
    assert HOSTILE_TOOL not in html
    fragment = client.get(reverse("traces:what-if-json", args=[trace_id])).json()["html"]
    assert HOSTILE_TOOL not in fragment and "&lt;img" in fragment


def test_a_report_from_before_what_if_says_how_to_add_it(client):
    trace_id = upload(client, sundry_run())
    trace = models.Trace.objects.get(pk=trace_id)
    trace.report.pop("what_if")
    trace.save(update_fields=["report"])
    html = client.get(reverse("traces:detail", args=[trace_id])).content.decode()
    assert "manage.py reanalyze" in html
    reply = client.get(reverse("traces:what-if-json", args=[trace_id]))
    assert reply.status_code == 409 and "reanalyze" in reply.json()["error"]


def test_the_post_mortem_lists_the_largest_savings(client):
    trace_id = upload(client, sundry_run())
    html = client.get(reverse("traces:postmortem", args=[trace_id])).content.decode()
    assert "What would have saved the most" in html
    assert "cap get_order at 800 tokens</strong>: saves 900 input tokens" in html


def test_nonsense_parameters_fall_back_instead_of_failing(client):
    trace_id = upload(client, sundry_run())
    url = reverse("traces:what-if-json", args=[trace_id])
    reply = client.get(url, {"cap:get_order": "lots", "clear_after": "-5", "cache_lifetime": "1y"})
    assert reply.status_code == 200
    parameters = reply.json()["what_if"]["parameters"]
    assert parameters["caps"] == {} and parameters["clear_after"] == 1
    assert parameters["cache_lifetime"] == "5m"
    assert (
        client.get(url.replace(trace_id, "00000000-0000-0000-0000-000000000000")).status_code == 404
    )
