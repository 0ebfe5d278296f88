"""The post-mortem pages each rule's findings as the trace page pages its own (issue 24):
a long loop's "All findings, by rule" shows 50 of a rule's findings per page, links to
the rule's next and previous pages, and keeps every finding's permalink (its place in
the report), instead of listing them all."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from django.urls import reverse

from tests.core.long_session import make_session
from traces.pages.accounting_presenter import FINDINGS_PER_PAGE
from traces.services.upload import trace_upload

pytestmark = pytest.mark.django_db

GROUP = re.compile(r'<details class="rule-group" id="(rule-\d+)"[^>]*>(.*?)</details>', re.S)
PERMALINK = re.compile(r'href="/traces/[0-9a-f-]+/findings/(\d+)/"')


@pytest.fixture
def long_trace():
    return trace_upload(files=[("long.jsonl", make_session(600))], name="long").trace


def test_a_long_rule_shows_one_page_and_links_the_next(client, long_trace):
    findings = long_trace.report["findings"]
    rule, count = Counter(f["rule"] for f in findings).most_common(1)[0]
    assert count > FINDINGS_PER_PAGE  # the fixture is long enough to page
    url = reverse("traces:postmortem", args=[long_trace.pk])
    page = client.get(url).content.decode()
    groups = {anchor: body for anchor, body in GROUP.findall(page)}
    body = next(body for body in groups.values() if f'<span class="rule-id">{rule}</span>' in body)
    numbers = [int(n) for n in PERMALINK.findall(body)]
    assert len(numbers) == FINDINGS_PER_PAGE
    positions = [n for n, f in enumerate(findings, start=1) if f["rule"] == rule]
    assert numbers == positions[:FINDINGS_PER_PAGE]  # permalinks: places in the report
    assert f"1–{FINDINGS_PER_PAGE} of {count:,} shown" in body
    next_href = re.search(r'<a href="(\?[^"]+)">next 50</a>', body).group(1).replace("&amp;", "&")

    second = client.get(url + next_href.split("#")[0]).content.decode()
    anchor = next_href.split("#")[1]
    opened = re.search(
        rf'<details class="rule-group" id="{anchor}" open>(.*?)</details>', second, re.S
    )
    assert opened, "the paged rule's group opens"
    numbers = [int(n) for n in PERMALINK.findall(opened.group(1))]
    assert numbers == positions[FINDINGS_PER_PAGE : 2 * FINDINGS_PER_PAGE]
    assert "previous 50" in opened.group(1)
    # A permalink still leads to its finding on its call's page.
    reply = client.get(f"/traces/{long_trace.pk}/findings/{numbers[0]}/")
    call = findings[numbers[0] - 1]["call"]
    assert reply.status_code == 302 and reply["Location"].endswith(
        f"/calls/{call}/#finding-{numbers[0]}"
    )


def test_every_rule_is_listed_with_its_count(client, long_trace):
    counts = Counter(f["rule"] for f in long_trace.report["findings"])
    page = client.get(reverse("traces:postmortem", args=[long_trace.pk])).content.decode()
    assert len(GROUP.findall(page)) == len(counts)
    assert len(PERMALINK.findall(page)) == sum(min(n, FINDINGS_PER_PAGE) for n in counts.values())
