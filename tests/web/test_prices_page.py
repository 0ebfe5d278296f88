"""Prices set in the UI (issue 27 item 1, issue 24 item 9): an unpriced model is named,
with a link to the form, on every page that shows cost; a member sets its price there
(stored per project, audit-logged); the project's traces are re-priced and later
ingests use it; exports say it in words."""

from __future__ import annotations

import html
import io
from urllib.parse import quote

import pytest

from tests.core.test_library_prices import AFTER, dated_calls
from tests.web.test_permission_matrix import world  # noqa: F401  (the shared-mode world)
from traces import models
from traces.services.upload import trace_upload

MODEL = "acme-frontier-9"


@pytest.fixture
def unpriced(world):  # noqa: F811
    trace = trace_upload(
        files=[("acme.jsonl", dated_calls(MODEL, AFTER, AFTER + 60))],
        name="acme run",
        project=world.alpha,
        run_set=world.run_set,
    ).trace
    assert trace.cost_usd is None and trace.model == MODEL
    return trace


def pages(world, trace) -> dict[str, str]:  # noqa: F811
    return {
        "trace": f"/traces/{trace.pk}/",
        "call": f"/traces/{trace.pk}/calls/1/",
        "list": "/",
        "set": f"/sets/{world.run_set.pk}/",
        "compare": f"/compare/{world.trace.pk}/{trace.pk}/",
        "post-mortem": f"/traces/{trace.pk}/postmortem",
    }


def test_every_page_with_cost_names_the_unpriced_model_and_links_to_the_form(world, unpriced):  # noqa: F811
    form = f"/projects/{world.alpha.slug}/prices/?model={quote(MODEL)}"
    for page, url in pages(world, unpriced).items():
        response = world.clients["member"].get(url)
        assert response.status_code == 200, page
        body = html.unescape(response.content.decode())
        assert MODEL in body, page
        assert f'href="{form}"' in body, page
    for url in (f"/traces/{unpriced.pk}/export.md", f"/traces/{unpriced.pk}/export.html"):
        text = world.clients["member"].get(url).content.decode()
        assert "Cost unknown for" in text and MODEL in text, url
        assert "/prices/" not in text  # words, no link


def test_a_member_sets_a_price_and_the_project_is_repriced(world, unpriced):  # noqa: F811
    client = world.clients["member"]
    form = client.get(f"/projects/{world.alpha.slug}/prices/?model={MODEL}")
    assert form.status_code == 200 and f'value="{MODEL}"' in form.content.decode()
    bad = client.post(
        f"/projects/{world.alpha.slug}/prices/", {"model": MODEL, "input": "lots", "output": "8"}
    )
    assert bad.status_code == 400 and "is not a number" in html.unescape(bad.content.decode())
    assert not models.ModelPrice.objects.exists()
    saved = client.post(
        f"/projects/{world.alpha.slug}/prices/",
        {"model": MODEL, "input": "4", "output": "8", "reprice": "1"},
    )
    assert saved.status_code == 302
    row = models.ModelPrice.objects.get(project=world.alpha)
    assert (row.model, row.input, row.output, row.cache_read) == (MODEL, 4.0, 8.0, None)
    event = models.AuditEvent.objects.filter(action="price.set").get()
    assert event.project == world.alpha and event.target == MODEL and event.actor == "member"
    # The reanalysis job ran inline (tests run the queue immediately): priced now.
    unpriced.refresh_from_db()
    assert unpriced.cost_usd == pytest.approx(2 * (1000 * 4 + 100 * 8) / 1e6)
    assert unpriced.report["accounting"]["unpriced_models"] == []
    page = html.unescape(client.get(f"/traces/{unpriced.pk}/").content.decode())
    assert "Cost unknown" not in page and "prices set in the project" in page
    # A later ingest of that project uses it; another project does not.
    later = trace_upload(
        files=[("b.jsonl", dated_calls(MODEL, AFTER))], name="later", project=world.alpha
    ).trace
    assert later.cost_usd == pytest.approx((1000 * 4 + 100 * 8) / 1e6)
    other = trace_upload(
        files=[("c.jsonl", dated_calls(MODEL, AFTER))], name="beta", project=world.beta
    ).trace
    assert other.cost_usd is None


def test_a_viewer_may_not_set_a_price(world, unpriced):  # noqa: F811
    response = world.clients["viewer"].post(
        f"/projects/{world.alpha.slug}/prices/", {"model": MODEL, "input": "1", "output": "1"}
    )
    assert response.status_code == 403
    assert not models.ModelPrice.objects.exists()


def test_removing_a_price_is_audit_logged(world):  # noqa: F811
    client = world.clients["owner"]
    url = f"/projects/{world.alpha.slug}/prices/"
    client.post(url, {"model": MODEL, "input": "1", "output": "2"})
    client.post(url, {"model": MODEL, "input": "1.5", "output": "2"})
    assert models.ModelPrice.objects.get().input == 1.5
    client.post(url, {"action": "delete", "model": MODEL})
    assert not models.ModelPrice.objects.exists()
    actions = list(
        models.AuditEvent.objects.filter(action__startswith="price.").values_list(
            "action", flat=True
        )
    )
    assert sorted(actions) == ["price.change", "price.delete", "price.set"]


def test_a_viewer_sees_the_unpriced_model_named_without_a_link_to_a_form_it_cannot_use(
    world,  # noqa: F811
    unpriced,
):
    for page, url in pages(world, unpriced).items():
        body = html.unescape(world.clients["viewer"].get(url).content.decode())
        assert MODEL in body, page
        assert "/prices/" not in body, page
    trace_page = html.unescape(
        world.clients["viewer"].get(pages(world, unpriced)["trace"]).content.decode()
    )
    assert "A member of the project can set its price." in trace_page


def test_a_hostile_model_name_stays_text_in_the_note_and_the_link(world):  # noqa: F811
    hostile = '<img src=x onerror="alert(1)">'
    trace = trace_upload(
        files=[("h.jsonl", dated_calls(hostile, AFTER))], name="hostile", project=world.alpha
    ).trace
    body = world.clients["member"].get(f"/traces/{trace.pk}/").content.decode()
    assert hostile not in body
    assert "Cost unknown for &lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in body
    assert f"?model={quote(hostile)}" in body


def test_reanalyze_picks_up_a_price_set_without_re_pricing(world, unpriced):  # noqa: F811
    from django.core.management import call_command

    from traces.services.prices import price_set

    price_set(
        who="test",
        project=world.alpha,
        model=MODEL,
        values={
            "input": 3.0,
            "output": 15.0,
            "cache_write": None,
            "cache_read": None,
            "cache_write_1h": None,
        },
    )
    unpriced.refresh_from_db()
    assert unpriced.cost_usd is None  # stored traces keep their cost until re-priced
    call_command("reanalyze", str(unpriced.pk), stdout=io.StringIO())
    unpriced.refresh_from_db()
    assert unpriced.cost_usd == pytest.approx(2 * (1000 * 3 + 100 * 15) / 1e6)
