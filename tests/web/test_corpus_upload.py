"""Every corpus file uploads through the API with its format detected, and downloads back
byte-identical."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from tests.conftest import CORPUS, corpus_id
from tests.core.test_detection_corpus import EXPECTED_FORMAT

pytestmark = [pytest.mark.django_db, pytest.mark.corpus]


def _files():
    if not CORPUS.is_dir():
        return []
    return sorted(
        p for p in CORPUS.rglob("*") if p.is_file() and p.name not in {"SOURCES.md", "counts.json"}
    )


@pytest.mark.parametrize("path", _files(), ids=corpus_id)
def test_corpus_file_uploads_and_downloads(client, path, corpus):
    data = path.read_bytes()
    reply = client.post(reverse("traces:api-traces"), {"file": SimpleUploadedFile(path.name, data)})
    assert reply.status_code == 201, reply.content[:300]
    body = reply.json()
    assert body["format"] == EXPECTED_FORMAT[path.relative_to(corpus).parts[0]]
    assert client.get(reverse("traces:detail", args=[body["id"]])).status_code == 200
    assert client.get(reverse("traces:download", args=[body["id"]])).content == data
