"""The compare forms' target never ends in Django's bare 404 nor silently picks one of
several runs (or sets) that share a name (issue 24, item 7)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from traces import models
from traces.core.reading.sample import sample_bytes, serial_sample_bytes
from traces.services import set_ingest

pytestmark = pytest.mark.django_db

PICK = reverse("traces:compare-pick")


def test_an_ambiguous_set_name_lists_both_sets_and_an_unknown_one_says_so(client):
    first = set_ingest.set_upload(name="before", files=[("a.jsonl", sample_bytes())]).run_set
    other = models.Project.objects.create(slug="other", name="Other")
    twins = [  # set names are unique in a project: the same name in two projects
        set_ingest.set_upload(name="night", files=[("n.jsonl", serial_sample_bytes())], project=p)
        for p in (None, other)
    ]
    page = client.get(PICK, {"kind": "sets", "a": first.pk, "b": "night"})
    assert page.status_code == 200
    text = page.content.decode()
    assert "Which run set is “night”?" in text
    for result in twins:
        link = reverse("traces:compare-sets", args=[first.pk, result.run_set.pk])
        assert f'href="{link}"' in text
    unknown = client.get(PICK, {"kind": "sets", "a": first.pk, "b": "<b>nope</b>"})
    assert unknown.status_code == 404
    body = unknown.content.decode()
    assert "No run set with the id or name “&lt;b&gt;nope&lt;/b&gt;”." in body
    assert 'class="topbar"' in body  # the app's page, escaped


def test_a_missing_side_is_a_page_that_names_it(client):
    page = client.get(PICK, {"b": "x"})
    assert page.status_code == 404
    assert "Choose two runs to compare: the first is missing." in page.content.decode()
