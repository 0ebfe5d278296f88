"""Every agent session store file uploads through the API as a user would send it.

A session file is detected as its agent's format, its trace page renders, and its
original downloads byte-identical; a session kept as a folder (OpenHands v1) is sent as
its files together; an index or metadata file beside the sessions is refused with what it
is (never a 500, never "no supported trace format").
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from tests.conftest import AGENTS

pytestmark = [pytest.mark.django_db, pytest.mark.corpus]

FORMAT_OF_FOLDER = {
    "aider_history": "aider-chat",
    "cline_sdk_sessions": "cline-sdk",
    "continue_sessions": "continue",
    "copilot_cli_events": "copilot-cli",
    "gemini_cli_chats": "gemini-cli",
    "iflow_cli": "iflow-cli",
    "kimi_code_wire": "kimi-wire",
    "openhands_sdk_conversations": "openhands-sdk",
    "pi_sessions": "pi-session",
    "vscode_copilot_chatreplay": "vscode-copilot-chatreplay",
}
FIGURES = ("model_calls", "tool_calls", "tool_results", "dangling", "orphan", "error_results")


def _entries() -> dict[str, dict]:
    counts = AGENTS / "counts.json"
    if not counts.is_file():
        return {}
    return json.loads(counts.read_text(encoding="utf-8"))["files"]


def _cases(kind: str) -> list[str]:
    cases = []
    for name, entry in sorted(_entries().items()):
        figures = [entry.get(k) for k in FIGURES]
        if all(f is None for f in figures):
            continue  # a part of a session folder: sent with its folder
        folder = entry.get("notes", "").startswith("computed (over the whole session folder")
        empty = not any(figures)
        if (kind == "folder") == folder and (kind == "empty") == (empty and not folder):
            cases.append(name)
    return cases


def test_the_agent_folders_are_all_known(agents):
    assert {name.split("/")[0] for name in _entries()} == set(FORMAT_OF_FOLDER)


@pytest.mark.parametrize("relative", _cases("file"))
def test_an_agent_session_uploads_renders_and_downloads(client, relative, agents):
    path = agents / relative
    data = path.read_bytes()
    reply = client.post(reverse("traces:api-traces"), {"file": SimpleUploadedFile(path.name, data)})
    assert reply.status_code == 201, reply.content[:300]
    body = reply.json()
    assert body["format"] == FORMAT_OF_FOLDER[relative.split("/")[0]]
    assert client.get(reverse("traces:detail", args=[body["id"]])).status_code == 200
    assert client.get(reverse("traces:download", args=[body["id"]])).content == data


@pytest.mark.parametrize("relative", _cases("folder"))
def test_a_session_folder_uploads_as_its_files(client, relative, agents):
    folder = (agents / relative).parent
    files = [
        SimpleUploadedFile(str(p.relative_to(folder)), p.read_bytes())
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    ]
    reply = client.post(reverse("traces:api-traces"), {"file": files})
    assert reply.status_code == 201, reply.content[:300]
    body = reply.json()
    assert body["format"] == FORMAT_OF_FOLDER[relative.split("/")[0]]
    assert body["calls"] == _entries()[relative]["model_calls"]
    assert client.get(reverse("traces:detail", args=[body["id"]])).status_code == 200


@pytest.mark.parametrize("relative", _cases("empty"))
def test_an_index_or_unanswered_file_is_refused_with_what_it_is(client, relative, agents):
    path: Path = agents / relative
    reply = client.post(
        reverse("traces:api-traces"), {"file": SimpleUploadedFile(path.name, path.read_bytes())}
    )
    assert 400 <= reply.status_code < 500, reply.content[:300]
    message = reply.json()["error"]
    assert "no supported trace format" not in message.lower()
    assert "Read as" in message or "index" in message or "upload" in message, message
