"""Several files make one trace: a Claude Code session with its subagent's file."""

from __future__ import annotations

import io
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from tests.conftest import CORPUS

pytestmark = [pytest.mark.django_db, pytest.mark.corpus]

SESSION = "claude_code_jsonl/codemie_incremental-subagents/turn-2.jsonl"
SUBAGENT = "claude_code_jsonl/codemie_incremental-subagents/turn-2/subagents/agent-a485154.jsonl"


def test_session_and_subagent_upload_as_one_trace(client, corpus):
    session, subagent = (CORPUS / SESSION).read_bytes(), (CORPUS / SUBAGENT).read_bytes()
    reply = client.post(
        reverse("traces:api-traces"),
        {
            # The subagent first: the session is still read first, so the link holds.
            "file": [
                SimpleUploadedFile("agent-a485154.jsonl", subagent),
                SimpleUploadedFile("turn-2.jsonl", session),
            ]
        },
    )
    assert reply.status_code == 201
    body = reply.json()
    assert body["format"] == "claude-code" and body["calls"] == 11 + 6
    report = client.get(reverse("traces:api-trace", args=[body["id"]])).json()
    assert len(report["loops"]) == 2
    subagent_loop = next(loop for loop in report["loops"] if loop["parent_tool_id"])
    assert subagent_loop["parent_tool_id"] == "toolu_bdrk_019PUUtqzQg8U5ogfuyQ7yLV"
    assert "a485154" in subagent_loop["label"]
    # Each file downloads as received; all of them come as a ZIP.
    download = reverse("traces:download", args=[body["id"]])
    assert client.get(download + "?file=0").content == subagent
    assert client.get(download + "?file=1").content == session
    bundle = zipfile.ZipFile(io.BytesIO(client.get(download).content))
    assert sorted(bundle.namelist()) == ["agent-a485154.jsonl", "turn-2.jsonl"]
    assert bundle.read("turn-2.jsonl") == session
    assert client.get(download + "?file=7").status_code == 404
