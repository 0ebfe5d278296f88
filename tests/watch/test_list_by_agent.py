"""The list filters and groups traces by agent and project (the working directory)."""

from __future__ import annotations

import pytest

from tests.watch.fakehome import build_home
from traces.live.watch import watch_pass

pytestmark = pytest.mark.django_db


def test_the_list_filters_and_groups_by_agent_and_project(client, tmp_path, corpus, agents):
    fake = build_home(tmp_path / "home", corpus, agents)
    watch_pass(home=fake.home, env={})
    page = client.get("/", {"agent": "Codex CLI"}).content.decode()
    assert page.count("Codex CLI: ") == 2 and "Claude Code: " not in page
    assert '<option value="Gemini CLI">' in page  # the menu offers every agent found
    page = client.get("/", {"project": "/home/marco/projects/spotter"}).content.decode()
    assert page.count("Claude Code: ") == 2 and "Codex CLI: " not in page
    page = client.get("/", {"group": "agent"}).content.decode()
    headers = [part.split("</th>")[0] for part in page.split('colspan="9">')[1:]]
    assert headers == sorted(headers) and "Claude Code" in headers and "pi" in headers
    assert len(headers) == len(set(headers)) == 10
    page = client.get("/", {"group": "nonsense"}).content.decode()
    assert "is not agent or project" in page
