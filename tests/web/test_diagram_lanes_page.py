"""The trace page's diagram: its wide layout sent and its compact one drawn for the
page's script, the grouped tools named under it with a link that gives every tool its
lane (and back), and the skip link's target after it."""

from __future__ import annotations

import re

import pytest

from tests.conftest import CORPUS
from tests.web.test_api_and_pages import upload
from traces.core.outputs.render.sequence import MAX_TOOL_LANES

pytestmark = pytest.mark.django_db

SESSION = CORPUS / "claude_code_jsonl" / "codemie_session-3fe1b6bc.jsonl"
"""A real Claude Code session with six tools: more than the diagram's lanes."""


def lane_count(svg: str) -> int:
    return len(re.findall(r'class="seq-lane-title tool', svg))


def svgs(page: str) -> list[str]:
    return re.findall(r'<svg[^>]*class="seq (?:wide|compact)[^"]*".*?</svg>', page, re.S)


@pytest.fixture
def trace_url(client) -> str:
    if not SESSION.is_file():
        pytest.skip("corpus absent")
    return upload(client, SESSION.read_bytes(), SESSION.name).json()["url"]


def test_grouped_tools_are_named_and_a_link_gives_each_its_lane(client, trace_url):
    page = client.get(trace_url).content.decode()
    (wide,) = svgs(page)
    (compact,) = svgs(
        client.get(trace_url + "diagram.json?parts=window&layout=compact").json()["svg"]
    )
    assert 'class="seq wide"' in wide and lane_count(wide) == MAX_TOOL_LANES + 1
    assert 'class="seq compact"' in compact and lane_count(compact) == 1
    note = re.search(r'<p class="lane-note[^"]*">(.*?)</p>', page, re.S)
    assert note and "other tools" in note.group(1)
    link = re.search(r'href="([^"]*lanes=all[^"]*)">Give every tool its lane', note.group(1))
    assert link
    expanded = client.get(trace_url + link.group(1).replace("&amp;", "&")).content.decode()
    wide = svgs(expanded)[0]
    assert "all-lanes" in wide and lane_count(wide) == 6
    assert "Group the 2 least used tools" in expanded
    # Moving the window keeps every lane.
    assert (
        re.search(r'id="window-next"', expanded) is None
        or "lanes=all" in expanded.split('id="window-next"')[0].rsplit("href=", 1)[1]
    )


def test_the_skip_link_comes_before_the_diagram_and_its_target_after(client, trace_url):
    page = client.get(trace_url).content.decode()
    skip = page.index('href="#after-sequence">Skip the diagram</a>')
    first, last = page.index('class="seq wide"'), page.rindex("</svg>")
    target = page.index('id="after-sequence"')
    assert skip < first < last < target
    assert 'tabindex="-1"' in page[target - 80 : target + 80]
