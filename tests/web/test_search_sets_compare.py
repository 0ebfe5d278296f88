"""The list's search and filters, labels, run sets and comparisons, through the web."""

from __future__ import annotations

import io
import zipfile

import pytest
from django.apps import apps
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from tests.conftest import CORPUS
from tests.core.builders import log, pair, response, tool_use, user
from traces import models
from traces.core.analysis.ingest import analyze_bytes
from traces.core.outputs.compare import Side, compare_runs, transcript_of
from traces.core.outputs.report import build_report
from traces.core.reading.sample import sample_bytes, serial_sample_bytes
from traces.selectors.compare import stored_transcript
from traces.services import set_ingest
from traces.services.labels import trace_set_labels
from traces.services.upload import trace_upload

pytestmark = pytest.mark.django_db

EVAL = "inspect_ai_eval_log/2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"


def dangling_log() -> bytes:
    return log(pair([user("go")], response([tool_use("t1", name="grep", path="a")], "tool_use")))


def api_error_log() -> bytes:
    return log(
        pair([user("go")], {"type": "error", "error": {"message": "overloaded"}}, status=529)
    )


@pytest.fixture
def stored():
    return {
        "parallel": trace_upload(files=[("", sample_bytes())], name="parallel").trace,
        "serial": trace_upload(files=[("", serial_sample_bytes())], name="serial").trace,
        "dangling": trace_upload(files=[("", dangling_log())], name="dangling").trace,
    }


def names(client, query: str) -> list[str]:
    page = client.get(reverse("traces:list") + query)
    assert page.status_code == 200
    return [trace.name for trace in page.context["traces"]]


def test_summary_columns_are_filled_on_ingest(stored):
    parallel = stored["parallel"]
    assert parallel.model == "claude-sonnet-4-5"
    assert parallel.cost_usd == pytest.approx(0.02358)
    assert parallel.error_results == 1
    assert parallel.tool_names == "check_availability create_event find_free_slots"
    rules = set(stored["dangling"].rule_counts.values_list("rule", "severity", "count"))
    assert ("dangling-tool-call", "error", 1) in rules


def test_filter_by_rule_outcome_search_and_errors(client, stored):
    assert names(client, "?rule=dangling-tool-call") == ["dangling"]
    assert names(client, "?rule=dangling-tool-call&severity=info") == []
    assert names(client, "?outcome=halted") == ["dangling"]
    assert set(names(client, "?outcome=finished")) == {"parallel", "serial"}
    assert set(names(client, "?q=create_event")) == {"parallel", "serial"}  # a tool name
    assert names(client, "?q=GREP") == ["dangling"]
    assert names(client, f"?q={stored['serial'].pk}") == ["serial"]
    assert set(names(client, "?errors=1")) == {"parallel", "serial"}
    assert names(client, "?calls_min=5") == ["serial"]
    assert names(client, "?cost_min=0.025") == ["serial"]
    assert names(client, "?model=claude-sonnet-4-5&calls_max=4&sort=calls") == [
        "dangling",
        "parallel",
    ]


def test_sorting_by_cost_both_ways(client, stored):
    assert names(client, "?sort=-cost") == ["serial", "parallel", "dangling"]
    ascending = names(client, "?sort=cost")
    assert ascending.index("parallel") < ascending.index("serial")


def test_unreadable_filter_values_are_named_not_failed(client, stored):
    page = client.get(reverse("traces:list") + "?cost_min=lots&outcome=exploded&sort=size")
    assert page.status_code == 200
    text = page.content.decode()
    assert "cost ≥: &#x27;lots&#x27; is not a number" in text
    assert "is not an outcome" in text
    assert len(page.context["traces"]) == 3


def test_pages_keep_the_filters(client):
    models.Trace.objects.bulk_create(
        models.Trace(name=f"run {n:03d}", format="anthropic-messages", calls_count=n % 7)
        for n in range(120)
    )
    first = client.get(reverse("traces:list") + "?calls_min=1&sort=calls")
    assert first.context["paginator"].count == 120 - 18  # n % 7 == 0 for 18 of them
    assert len(first.context["traces"]) == 50
    next_href = first.context["pages"]["next"]
    assert "calls_min=1" in next_href and "sort=calls" in next_href and "page=2" in next_href
    last = client.get(reverse("traces:list") + "?calls_min=1&sort=calls&page=99")
    assert last.context["page"].number == 3
    assert len(last.context["traces"]) == 2


def test_labels_on_upload_in_the_api_and_on_the_page(client):
    reply = client.post(
        reverse("traces:api-traces"),
        {"file": SimpleUploadedFile("t.jsonl", sample_bytes()), "labels": "baseline, nightly"},
    )
    assert reply.status_code == 201 and reply.json()["labels"] == ["baseline", "nightly"]
    trace = models.Trace.objects.get(pk=reply.json()["id"])
    assert sorted(trace.labels.values_list("name", flat=True)) == ["baseline", "nightly"]
    assert names(client, "?label=nightly") == [trace.name]
    edit = client.post(reverse("traces:labels", args=[trace.pk]), {"labels": "prompt-v2"})
    assert edit.status_code == 302
    assert list(trace.labels.values_list("name", flat=True)) == ["prompt-v2"]
    assert names(client, "?label=nightly") == []
    assert "prompt-v2" in client.get(reverse("traces:detail", args=[trace.pk])).content.decode()


@pytest.mark.corpus
def test_an_eval_with_many_samples_is_a_set_of_runs_stored_once(client, corpus):
    data = (CORPUS / EVAL).read_bytes()
    url = reverse("traces:api-sets")
    first = client.post(url, {"name": "popularity", "file": SimpleUploadedFile("pop.eval", data)})
    assert first.status_code == 201
    body = first.json()
    assert len(body["added"]) == 10 and body["duplicates"] == [] and body["rejected"] == []
    run_set = models.RunSet.objects.get(pk=body["id"])
    assert run_set.runs.count() == 10
    kept = run_set.files.get()
    assert (kept.filename, kept.raw_bytes, kept.runs) == ("pop.eval", len(data), 10)
    again = client.post(url, {"name": "popularity", "file": SimpleUploadedFile("p.eval", data)})
    assert again.json()["added"] == [] and again.json()["duplicates"] == ["p.eval"]
    assert run_set.runs.count() == 10
    # One run's download is a small .eval holding the header and its one sample.
    run = run_set.runs.order_by("created_at").first()
    archive = client.get(reverse("traces:download", args=[run.pk])).content
    members = zipfile.ZipFile(io.BytesIO(archive)).namelist()
    assert members[0] in ("header.json", "_journal/start.json") and len(members) == 2
    detail = client.get(reverse("traces:api-set", args=[run_set.pk])).json()
    assert detail["outcomes"] == {"finished": 10} and len(detail["runs"]) == 10
    page = client.get(reverse("traces:set", args=[run_set.pk]))
    assert page.status_code == 200
    assert page.context["runs_total"] == 10
    assert set(page.context["figures"]) >= {"calls", "input_tokens"}


def test_a_zip_and_separate_files_become_runs_and_duplicates_are_recognised(client):
    bundle = io.BytesIO()
    with zipfile.ZipFile(bundle, "w") as archive:
        archive.writestr("runs/parallel.jsonl", sample_bytes())
        archive.writestr("runs/dangling.jsonl", dangling_log())
        archive.writestr("__MACOSX/._parallel.jsonl", b"junk")
    reply = client.post(
        reverse("traces:api-traces") + "?set=nightly",
        {"file": [SimpleUploadedFile("runs.zip", bundle.getvalue())], "labels": "zip"},
    )
    assert reply.status_code == 201
    assert sorted(run["name"] for run in reply.json()["added"]) == [
        "dangling.jsonl",
        "parallel.jsonl",
    ]
    # The same run again, as a loose file: recognised by its content hash.
    again = client.post(
        reverse("traces:api-sets"),
        {"name": "nightly", "file": [SimpleUploadedFile("copy.jsonl", sample_bytes())]},
    )
    assert again.json()["duplicates"] == ["copy.jsonl"] and again.json()["added"] == []
    run_set = models.RunSet.objects.get(name="nightly")
    assert run_set.runs.count() == 2
    assert set(run_set.runs.values_list("labels__name", flat=True)) == {"zip"}
    page = client.get(reverse("traces:set", args=[run_set.pk])).context
    rules = {row["rule"]: row for row in page["rules"]}
    # Each point of the set's charts links to its own run's page.
    run_pages = {run.name: reverse("traces:detail", args=[run.pk]) for run in run_set.runs.all()}
    calls = page["figures"]["calls"]["data"][0]
    assert sorted(zip(calls["text"], calls["customdata"], strict=True)) == sorted(run_pages.items())
    assert rules["dangling-tool-call"]["runs"] == 1
    filtered = client.get(rules["dangling-tool-call"]["href"])
    assert [t.name for t in filtered.context["traces"]] == ["dangling.jsonl"]


def test_a_set_upload_of_nothing_readable_is_a_clear_400(client):
    reply = client.post(
        reverse("traces:api-sets"),
        {"name": "bad", "file": SimpleUploadedFile("x.jsonl", b"not a trace\n")},
    )
    assert reply.status_code == 400
    assert reply.json()["rejected"][0]["file"] == "x.jsonl"


def test_compare_page_and_json_match_the_core(client, stored):
    a, b = stored["parallel"], stored["serial"]
    assert stored_transcript(a) == transcript_of(analyze_bytes(sample_bytes()))
    expected = compare_runs(
        Side("parallel", build_report(analyze_bytes(sample_bytes())), stored_transcript(a)),
        Side("serial", build_report(analyze_bytes(serial_sample_bytes())), stored_transcript(b)),
    )
    body = client.get(reverse("traces:compare-json", args=[a.pk, b.pk])).json()
    assert body["delta"] == expected["delta"]
    assert body["calls"] == expected["calls"]
    assert body["divergence"]["message"] == 4
    page = client.get(reverse("traces:compare", args=[a.pk, b.pk]))
    text = page.content.decode()
    assert "+1,620" in text and "6,160" in text and "7,780" in text
    pick = client.get(reverse("traces:compare-pick") + f"?a={a.pk}&b=serial")
    assert pick.status_code == 302 and pick["Location"] == reverse(
        "traces:compare", args=[a.pk, b.pk]
    )
    assert client.get(reverse("traces:compare-pick") + f"?a={a.pk}&b=nobody").status_code == 404
    typed = client.get(reverse("traces:compare-pick") + f"?a={a.pk}&b={a.pk}&b_other=serial")
    assert typed["Location"] == reverse("traces:compare", args=[a.pk, b.pk])


def test_two_sets_compared(client):
    before = set_ingest.set_upload(
        name="before", files=[("a.jsonl", sample_bytes()), ("d.jsonl", dangling_log())]
    ).run_set
    after = set_ingest.set_upload(
        name="after", files=[("a.jsonl", sample_bytes()), ("s.jsonl", serial_sample_bytes())]
    ).run_set
    page = client.get(reverse("traces:compare-sets", args=[before.pk, after.pk]))
    assert page.status_code == 200
    cmp = page.context["cmp"]
    rules = {row["key"]: row for row in cmp["rules"]}
    assert rules["dangling-tool-call"]["a"] == {"runs": 1, "of": 2, "rate": 0.5}
    assert rules["dangling-tool-call"]["delta_rate"] == -0.5
    calls = next(m for m in cmp["metrics"] if m["metric"] == "calls")
    assert (calls["a"]["mean"], calls["b"]["mean"]) == (2.5, 4.5)
    finished = next(o for o in cmp["outcomes"] if o["key"] == "finished")
    assert (finished["a"]["rate"], finished["b"]["rate"]) == (0.5, 1.0)


def test_untrusted_names_are_escaped_on_list_set_and_compare_pages(client):
    hostile = "<img src=x onerror=alert(1)>"
    run_set = set_ingest.set_upload(name=hostile, files=[(hostile, sample_bytes())]).run_set
    trace = run_set.runs.get()
    trace_set_labels(trace=trace, labels=[hostile])
    for url in (
        reverse("traces:list"),
        reverse("traces:set", args=[run_set.pk]),
        reverse("traces:compare", args=[trace.pk, trace.pk]),
        reverse("traces:detail", args=[trace.pk]),
    ):
        text = client.get(url).content.decode()
        assert hostile not in text, url
    figure = client.get(reverse("traces:set", args=[run_set.pk])).context["figures"]["calls"]
    assert figure["data"][0]["text"] == ["&lt;img src=x onerror=alert(1)&gt;"]


def test_backfill_fills_rows_stored_before_the_migration(stored):
    import importlib

    migration = importlib.import_module("traces.migrations.0006_search_sets_compare")
    trace = stored["dangling"]
    models.Trace.objects.filter(pk=trace.pk).update(
        cost_usd=None, model="", tool_names="", stats={}
    )
    trace.rule_counts.all().delete()
    migration.backfill(apps, None)
    trace.refresh_from_db()
    assert trace.model == "claude-sonnet-4-5" and trace.tool_names == "grep"
    assert trace.rule_counts.filter(rule="dangling-tool-call").exists()


def test_list_and_set_pages_never_load_reports_and_do_not_grow_with_rows(client):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    run_set = set_ingest.set_upload(
        name="many", files=[(f"run-{n}.jsonl", sample_bytes() + b"\n" * n) for n in range(12)]
    ).run_set
    for url in (reverse("traces:list"), reverse("traces:set", args=[run_set.pk])):
        with CaptureQueriesContext(connection) as queries:
            assert client.get(url + "?sort=-cost").status_code == 200
        statements = [q["sql"] for q in queries.captured_queries]
        assert len(statements) <= 15, (url, len(statements))
        assert not any('"report"' in sql for sql in statements), url


def test_plain_form_upload_into_a_set_redirects_to_it(client):
    reply = client.post(
        reverse("traces:upload"),
        {
            "file": [
                SimpleUploadedFile("a.jsonl", sample_bytes()),
                SimpleUploadedFile("b.jsonl", serial_sample_bytes()),
            ],
            "set": "form set",
            "labels": "manual",
        },
    )
    run_set = models.RunSet.objects.get(name="form set")
    assert reply.status_code == 302 and reply["Location"] == reverse(
        "traces:set", args=[run_set.pk]
    )
    assert run_set.runs.count() == 2
    assert set(run_set.runs.values_list("labels__name", flat=True)) == {"manual"}
    bad = client.post(
        reverse("traces:upload"),
        {"file": SimpleUploadedFile("x.jsonl", b"nope\n"), "set": "form set"},
    )
    assert bad.status_code == 400 and "x.jsonl" in bad.content.decode()
