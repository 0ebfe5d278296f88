"""Numbers and words people read on the pages (issue 24 part 8): counts with separators, a
fix that costs more said in words, means of counts without cents, no "first 0 messages",
no "?" role, audit lines named and zoned, and an eval's scores on the trace, set and
compare pages. Each test renders a real page of a real upload; the wrong texts must be
absent and the right ones present."""

from __future__ import annotations

import html
import re

import orjson
import pytest
from django.urls import reverse
from django.utils import timezone

from tests.core.builders import TOOLS, response, user
from tests.golden import GOLDEN
from tests.web.test_api_and_pages import upload
from tests.web.test_permission_matrix import world  # noqa: F401  (the shared-mode world)
from traces import models
from traces.core.reading.sample import sample_bytes, serial_sample_bytes
from traces.services import set_ingest
from traces.services.prices import price_set
from traces.services.upload import trace_upload

pytestmark = pytest.mark.django_db


def text_of(page: bytes) -> str:
    """A page's visible text, tags dropped and entities read (what a person reads)."""
    return html.unescape(re.sub(r"<[^>]+>", "", page.decode()))


def unreported_calls(n: int) -> bytes:
    """`n` one-message calls, none reporting usage (every count is an estimate)."""
    lines = []
    for i in range(n):
        body = {"model": "claude-sonnet-4-5", "messages": [user(f"question {i}")]}
        answer = {"type": "message", "role": "assistant", "stop_reason": "end_turn"}
        answer["content"] = [{"type": "text", "text": "ok"}]
        lines.append(orjson.dumps({"request": {"body": body}, "response": {"body": answer}}))
    return b"\n".join(lines) + b"\n"


def test_a_count_of_calls_without_usage_has_its_thousands_separator(client):
    body = upload(client, unreported_calls(1001), "many.jsonl").json()
    page = text_of(client.get(body["url"]).content)
    assert "1,001 calls reported no usage" in page
    assert "1001 calls" not in page


def hours_apart() -> bytes:
    """Three calls two hours apart, no cache used: caching the prefix would write it again
    before each call, so that fix costs more than the trace did."""
    lines, history = [], [user("hello " * 400)]
    for i in range(3):
        body = {"model": "claude-sonnet-4-5", "system": "You help. " * 300}
        body |= {"tools": TOOLS, "messages": history}
        sent = 1759312800 + 7200 * i
        request = {"timestamp": sent, "method": "POST", "body": body}
        request["url"] = "https://api.anthropic.com/v1/messages"
        answer = response([{"type": "text", "text": "ok"}], "end_turn", 2000, 20)
        reply = {"timestamp": sent + 2, "status_code": 200, "body": answer}
        lines.append(orjson.dumps({"request": request, "response": reply}))
        history = [*history, {"role": "assistant", "content": answer["content"]}]
        history.append(user(f"again {i}"))
    return b"\n".join(lines) + b"\n"


def test_a_fix_that_costs_more_says_so_instead_of_a_negative_saving(client):
    body = upload(client, hours_apart(), "apart.jsonl").json()
    report = client.get(reverse("traces:api-trace", args=[body["id"]])).json()
    cache = next(s for s in report["what_if"]["scenarios"] if s["id"] == "prompt-cache")
    assert cache["usd_saved"] < 0  # the case this test is about
    page = client.get(body["url"]).content.decode()
    row = re.search(
        r'<tr class="what-if-row[^"]*" data-scenario="prompt-cache">.*?</tr>', page, re.S
    )
    assert row is not None
    words = text_of(row.group(0).encode())
    more = f"{-cache['usd_saved']:.4f}".rstrip("0")
    assert f"costs ${more}" in words and f"more (+{-cache['percent_usd']:.1f}%)" in words
    assert "-$" not in words and "−$" not in words
    assert not re.search(r"-\d+(\.\d)?%", words)


def test_means_of_counts_across_two_sets_read_without_cents(client):
    before = set_ingest.set_upload(name="before", files=[("a.jsonl", sample_bytes())]).run_set
    after = set_ingest.set_upload(
        name="after", files=[("a.jsonl", sample_bytes()), ("s.jsonl", serial_sample_bytes())]
    ).run_set
    page = client.get(reverse("traces:compare-sets", args=[before.pk, after.pk]))
    calls = next(m for m in page.context["cmp"]["metrics"] if m["metric"] == "calls")
    assert (calls["a"]["mean"], calls["b"]["mean"]) == (4.0, 4.5)
    row = re.search(r'<tr data-metric="calls">.*?</tr>', page.content.decode(), re.S)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(0), re.S)
    values = [text_of(cell.encode()).strip() for cell in cells]
    assert values[:3] == ["4", "4.5", "+0.5"]
    assert not any(re.search(r"\d\.\d\d\b", value) for value in values)


@pytest.mark.corpus
def test_a_history_replaced_whole_shares_no_message_rather_than_the_first_0(client, corpus):
    path = corpus / "claude_code_jsonl" / "codemie_session-624a4a58.jsonl"
    trace = trace_upload(files=[(path.name, path.read_bytes())], name="codemie").trace
    call = trace.calls.get(index=38)
    assert call.history_rewritten and call.prefix_len == 0  # the case this test is about
    page = text_of(client.get(reverse("traces:call", args=[trace.pk, 38])).content)
    assert "first 0 message" not in page
    assert f"Shares no message with call {call.base_call}: its whole history was replaced." in page


@pytest.mark.corpus
def test_codex_items_without_a_role_are_named_by_their_reader_never_by_a_question_mark(
    client, corpus
):
    path = (
        corpus
        / "codex_rollout_jsonl"
        / ("rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl")
    )
    trace = trace_upload(files=[(path.name, path.read_bytes())], name="codex").trace
    page = client.get(reverse("traces:call", args=[trace.pk, 2])).content.decode()
    roles = re.findall(
        r'<span class="role">([^<]*)</span> <span class="muted small">message (\d+)', page
    )
    assert ("tool", "4") in roles and ("assistant", "2") in roles
    assert not re.search(r">\?</span>\s*<span class=\"muted small\">message", page)
    assert "? message" not in text_of(page.encode())


def test_the_audit_log_names_each_event_and_the_time_zone(world, settings):  # noqa: F811
    settings.TIME_ZONE = "Europe/Paris"
    price_set(who="cli", project=world.alpha, model="acme-9", values={"input": 1, "output": 2})
    page = world.clients["owner"].get(f"/projects/{world.alpha.slug}/")
    assert page.status_code == 200
    body = page.content.decode()
    table = re.search(r'<table class="data audit">.*?</table>', body, re.S).group(0)
    assert "Price set" in text_of(table.encode())
    assert ">price.set<" not in table  # the code stays in the title only
    event = models.AuditEvent.objects.filter(action="price.set").get()
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d CES?T", text_of(table.encode()))
    assert f'datetime="{timezone.localtime(event.at).isoformat(timespec="seconds")}"' in table
    assert timezone.localtime(event.at).isoformat().endswith("+01:00")


@pytest.mark.corpus
def test_inspect_scores_show_on_the_trace_set_and_compare_pages(client, corpus):
    path = corpus / "inspect_ai_eval_log" / "2025-05-12T20-28-13-04-00_popularity.json"
    run_set = set_ingest.set_upload(name="popularity", files=[(path.name, path.read_bytes())])
    runs = list(run_set.run_set.runs.order_by("name"))
    assert len(runs) == 3
    first = text_of(client.get(reverse("traces:detail", args=[runs[0].pk])).content)
    assert "Scores" in first and "match" in first
    assert re.search(r"match\s*[CI] \((in)?correct\)", first)
    set_page = client.get(reverse("traces:set", args=[run_set.run_set.pk]))
    scores = {(s["scorer"], s["value"]): s["count"] for s in set_page.context["scores"]}
    assert scores == {("match", "C (correct)"): 2, ("match", "I (incorrect)"): 1}
    set_text = text_of(set_page.content)
    assert "C (correct)" in set_text and "I (incorrect)" in set_text
    a, b = runs[0], runs[-1]
    compare = client.get(reverse("traces:compare", args=[a.pk, b.pk])).content.decode()
    row = re.search(r'<tr data-score="match">.*?</tr>', compare, re.S)
    assert row is not None
    values = re.findall(r'data-side="[ab]">([^<]*)<', row.group(0))
    assert values == [a.stats["scores"][0]["value"], b.stats["scores"][0]["value"]]


HOSTILE = '<img src=x onerror="alert(1)">'


def test_hostile_scores_stay_text_on_the_trace_set_and_compare_pages(client):
    log = orjson.loads(GOLDEN.joinpath("inspect-ai", "tool_loop.json").read_bytes())
    for sample in log["samples"]:
        sample["scores"] = {HOSTILE: {"value": HOSTILE, "answer": HOSTILE, "explanation": "x"}}
    run_set = set_ingest.set_upload(name="hostile", files=[("log.json", orjson.dumps(log))])
    runs = list(run_set.run_set.runs.order_by("name"))
    pages = [
        client.get(reverse("traces:detail", args=[runs[0].pk])),
        client.get(reverse("traces:set", args=[run_set.run_set.pk])),
        client.get(reverse("traces:compare", args=[runs[0].pk, runs[-1].pk])),
    ]
    for page in pages:
        body = page.content.decode()
        assert page.status_code == 200
        assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in body
        assert HOSTILE not in body
