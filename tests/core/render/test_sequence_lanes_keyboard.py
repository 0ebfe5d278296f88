"""The diagram shows everything and is one tab stop per call: tool lanes in the whole
trace's order (the rarer tools grouped), error results red, accessible names that start
with the visible labels, no "? out", and a compact layout for phones."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter

import pytest

from tests.conftest import CORPUS
from tests.core.render.reports import call, finding, report, run
from traces.core.analysis.ingest import analyze_bytes
from traces.core.outputs.render.links import PrefixLinks
from traces.core.outputs.render.sequence import (
    COMPACT,
    MAX_TOOL_LANES,
    OTHER_TOOLS,
    render_sequence,
    sequence_view,
    tool_lane_order,
)
from traces.core.outputs.report import build_report

NS = "{http://www.w3.org/2000/svg}"
LINKS = PrefixLinks("/t/1/")
MANY_TOOLS = CORPUS / "claude_code_jsonl" / "codemie_session-3fe1b6bc.jsonl"


def parse(markup: str) -> ET.Element:
    return ET.fromstring(markup)


def classes(element: ET.Element) -> list[str]:
    return (element.get("class") or "").split()


def lane_titles(root: ET.Element) -> dict[str, float]:
    return {
        e.text or "": float(e.get("x") or 0)
        for e in root.iter(f"{NS}text")
        if "seq-lane-title" in classes(e)
    }


def links(root: ET.Element) -> list[ET.Element]:
    return [a for a in root.iter(f"{NS}a") if a.get("href")]


def tab_stops(root: ET.Element) -> list[ET.Element]:
    """What Tab reaches: every link not taken out of the order by a negative tabindex."""
    return [a for a in links(root) if int(a.get("tabindex") or 0) >= 0]


def visible_text(a: ET.Element) -> str:
    return " ".join(t.text or "" for t in a.iter(f"{NS}text"))


def many_tools_report(tools: int = 8, calls: int = 40) -> dict:
    """`calls` calls; call n runs tool ((n * 3) mod tools) + 1: every tool, spread out."""
    runs = [run(f"t{n}", f"tool_{(n * 3) % tools + 1}", n, n + 1) for n in range(1, calls)]
    return report([call(n) for n in range(1, calls + 1)], runs)


@pytest.fixture(scope="module")
def real() -> dict:
    if not MANY_TOOLS.is_file():
        pytest.skip("corpus absent")
    return build_report(analyze_bytes(MANY_TOOLS.read_bytes(), filename=MANY_TOOLS.name))


# -- lanes ------------------------------------------------------------------------------


def test_lane_order_is_the_whole_traces_by_use_and_the_same_in_every_window():
    calls = [call(n) for n in range(1, 21)]
    # Window 1 (calls 1-10) runs only "grep" first then "read"; window 2 only "read",
    # and "read" is the most used over the whole trace.
    runs = [run("g1", "grep", 1, 2), run("g2", "grep", 2, 3)]
    runs += [run(f"r{n}", "read", n, n + 1) for n in range(3, 20)]
    whole = report(calls, runs)
    assert tool_lane_order(whole) == ["read", "grep"]
    first = lane_titles(parse(render_sequence(whole, links=LINKS, start=1, window=10)))
    second = lane_titles(parse(render_sequence(whole, links=LINKS, start=11, window=10)))
    assert first == second
    assert first["read"] < first["grep"]


def test_tools_beyond_the_readable_number_share_one_other_tools_lane():
    data = many_tools_report(tools=8)
    order = tool_lane_order(data)
    root = parse(render_sequence(data, links=LINKS, window=60))
    titles = lane_titles(root)
    tools = [name for name in titles if name not in ("model", "your code")]
    assert tools == [
        name[:17] + "…" if len(name) > 18 else name for name in order[:MAX_TOOL_LANES]
    ] + [OTHER_TOOLS]
    grouped = next(e for e in root.iter(f"{NS}text") if "grouped" in classes(e))
    hover = grouped.find(f"{NS}title")
    assert hover is not None and all(name in (hover.text or "") for name in order[MAX_TOOL_LANES:])
    # A grouped tool's arrows end on the "other tools" lane and still name their tool.
    rare = order[-1]
    to_rare = [
        a
        for a in root.iter(f"{NS}a")
        if a.get("data-kind") == "tool-call" and rare in visible_text(a)
    ]
    assert to_rare and all(
        float(a.find(f"{NS}line[@class='arrow-hit']").get("x2")) == titles[OTHER_TOOLS]
        for a in to_rare
    )
    # Expanded on request: one lane per tool.
    expanded = parse(sequence_view(data, links=LINKS, window=60, all_lanes=True)["svg"])
    assert len(lane_titles(expanded)) == 2 + len(order)


def test_a_real_session_with_more_tools_than_lanes_groups_the_rest(real):
    order = tool_lane_order(real)
    assert len(order) > MAX_TOOL_LANES
    root = parse(render_sequence(real, links=LINKS, window=60))
    assert list(lane_titles(root))[2:] == [*order[:MAX_TOOL_LANES], OTHER_TOOLS]


# -- error results -----------------------------------------------------------------------


def test_error_results_are_drawn_red_as_the_legend_says():
    runs = [run("ok", "grep", 1, 2), run("bad", "grep", 2, 3, is_error=True)]
    root = parse(render_sequence(report([call(1), call(2), call(3)], runs), links=LINKS))
    bad = [a for a in root.iter(f"{NS}a") if a.get("data-tool-id") == "bad"]
    result = next(a for a in bad if a.get("data-kind") == "tool-result")
    assert "tool-error" in classes(result)
    line = result.find(f"{NS}line[@class='arrow-line']")
    head = result.find(f"{NS}path")
    assert "--error" in line.get("stroke") and "--error" in head.get("fill")
    fine = next(
        a
        for a in root.iter(f"{NS}a")
        if a.get("data-tool-id") == "ok" and a.get("data-kind") == "tool-result"
    )
    assert "--error" not in fine.find(f"{NS}line[@class='arrow-line']").get("stroke")


# -- keyboard and names -------------------------------------------------------------------


def assert_one_tab_stop_per_call(root: ET.Element) -> None:
    shown = {int(a.get("data-call")) for a in root.iter(f"{NS}a") if a.get("data-call")}
    stops = Counter(int(a.get("data-call")) for a in tab_stops(root))
    assert stops == Counter(dict.fromkeys(shown, 1))
    assert all(a.get("data-kind") == "request" for a in tab_stops(root))


def test_one_tab_stop_per_call_and_it_tells_the_whole_call():
    calls = [call(1), call(2), call(3, stop_reason="end_turn")]
    runs = [run("a", "grep", 1, 2), run("b", "bash", 2, 3, batch_size=2)]
    runs.append(run("c", "grep", 2, 3, batch_size=2, is_error=True))
    findings = [finding("slow", 2, "warning"), finding("err", 2, "error", tool_call_id="c")]
    root = parse(render_sequence(report(calls, runs, findings), links=LINKS))
    assert_one_tab_stop_per_call(root)
    request_2 = next(a for a in tab_stops(root) if a.get("data-call") == "2")
    name = request_2.get("aria-label") or ""
    assert "60 out" in name and "2 tool calls (bash, grep)" in name and "2 findings" in name


def test_a_real_60_call_window_has_one_tab_stop_per_call(real):
    root = parse(render_sequence(real, links=LINKS, window=60))
    assert_one_tab_stop_per_call(root)
    assert len(tab_stops(root)) == int(root.get("data-end")) - int(root.get("data-start")) + 1


def words(text: str) -> str:
    return " ".join(re.findall(r"[\w≈$.,#]+", text.lower()))


def test_every_links_accessible_name_starts_with_its_visible_text(real):
    for geometry in ("wide", "compact"):
        view = sequence_view(real, links=LINKS, window=60, compact=True)
        root = parse(view["svg" if geometry == "wide" else "compact_svg"])
        arrows = [a for a in links(root) if "arrow" in classes(a)]
        assert arrows
        for a in arrows:
            assert words(a.get("aria-label") or "").startswith(words(visible_text(a))), a.attrib


def test_arrows_never_read_question_mark_out():
    calls = [call(1, output_tokens=None), call(2)]
    markup = render_sequence(report(calls, []), links=LINKS)
    assert "? out" not in markup and "?" not in words(markup)
    response = next(
        a
        for a in parse(markup).iter(f"{NS}a")
        if a.get("data-kind") == "response" and a.get("data-call") == "1"
    )
    assert visible_text(response).startswith("output not reported")


# -- phones -------------------------------------------------------------------------------


def test_the_compact_layout_folds_the_lanes_and_fits_a_phone(real):
    view = sequence_view(real, links=LINKS, window=60, compact=True)
    root = parse(view["compact_svg"])
    width = float(root.get("width"))
    assert "compact" in classes(root) and width <= 440
    assert list(lane_titles(root)) == ["model", "your code", "tools"]
    assert_one_tab_stop_per_call(root)
    # Every label (about 6 units a character at 11 px) stays inside the drawing, its
    # anchor its own or inherited (the arrows' group sets the labels' usual one).
    parents = {child: parent for parent in root.iter() for child in parent}

    def anchor_of(element) -> str:
        while element is not None:
            if element.get("text-anchor"):
                return element.get("text-anchor")
            element = parents.get(element)
        return "start"

    for text in root.iter(f"{NS}text"):
        x, anchor = float(text.get("x") or 0), anchor_of(text)
        half = len(text.text or "") * 6.0 / (2 if anchor == "middle" else 1)
        right = x + half if anchor != "end" else x
        left = x - half if anchor == "middle" else x
        assert left >= 0 and right <= width + 1, (text.text, x, anchor)


def test_the_compact_layout_keeps_lane_titles_short():
    data = many_tools_report(tools=3)
    root = parse(render_sequence(data, links=LINKS, geometry=COMPACT))
    assert list(lane_titles(root)) == ["model", "your code", "tools"]


def test_a_fan_on_a_phone_has_one_label_not_three_on_top_of_each_other():
    runs = [run(f"g{n}", "grep", 1, 2, batch_size=3, is_error=n == 0) for n in range(3)]
    root = parse(render_sequence(report([call(1), call(2)], runs), links=LINKS, geometry=COMPACT))
    kinds = ("tool-call", "tool-result")
    labels = {
        kind: [visible_text(a) for a in root.iter(f"{NS}a") if a.get("data-kind") == kind]
        for kind in kinds
    }
    assert labels["tool-call"] == ["grep ×3", "", ""]
    assert labels["tool-result"] == ["3 results · 1 error", "", ""]
    assert_one_tab_stop_per_call(root)


def test_a_tool_without_a_name_is_called_unnamed_not_a_question_mark():
    markup = render_sequence(report([call(1), call(2)], [run("x", None, 1, 2)]), links=LINKS)
    assert "unnamed tool" in lane_titles(parse(markup))
    assert "run ?" not in markup and "of ?" not in markup
