"""The SVG sequence diagram and overview strip, read back as XML the way users' scripts
would: arrows by `data-kind` / `data-billed` / `data-call`, coordinates from their lines."""

from __future__ import annotations

import itertools
import math
import xml.etree.ElementTree as ET

import pytest

from tests.conftest import corpus_files, corpus_id
from tests.core.render.reports import call, finding, linear_loop, report, run
from traces.core.analysis.ingest import analyze_bytes
from traces.core.outputs.render import sequence
from traces.core.outputs.render.links import PrefixLinks
from traces.core.outputs.render.sequence import (
    UnknownLoop,
    build_overview,
    build_sequence,
    render_overview,
    render_sequence,
    sequence_view,
    sequence_window,
)
from traces.core.outputs.render.svg import Element, escape_attribute, escape_text, format_number
from traces.core.outputs.report import build_report
from traces.core.reading.sample import sample_bytes

NS = "{http://www.w3.org/2000/svg}"
PREFIX = "/traces/t1/"
HOSTILE = '<script>alert(1)</script>" onmouseover="alert(1) ]]> & \x01\x1f end'


def parse(markup: str) -> ET.Element:
    return ET.fromstring(markup)


def arrows(root: ET.Element, **wanted: str) -> list[ET.Element]:
    """Arrow groups whose data-* attributes match, e.g. arrows(root, kind="request")."""
    found = [e for e in root.iter() if e.get("data-kind") is not None]
    for key, value in wanted.items():
        found = [e for e in found if e.get(f"data-{key.replace('_', '-')}") == value]
    return found


def has_class(element: ET.Element, name: str) -> bool:
    return name in (element.get("class") or "").split()


def line_of(arrow: ET.Element) -> ET.Element:
    return next(e for e in arrow.iter(f"{NS}line") if has_class(e, "arrow-line"))


def span_of(arrow: ET.Element) -> ET.Element:
    """The arrow's full extent, tail to tip (its wide hover line)."""
    return next(e for e in arrow.iter(f"{NS}line") if has_class(e, "arrow-hit"))


def label_of(arrow: ET.Element) -> str:
    return next(e for e in arrow.iter(f"{NS}text") if has_class(e, "arrow-label")).text or ""


def title_of(element: ET.Element) -> str:
    return element.find(f"{NS}title").text or ""


def badges(root: ET.Element) -> list[ET.Element]:
    return [e for e in root.iter(f"{NS}g") if has_class(e, "badge") and e.get("data-rule")]


@pytest.fixture(scope="module")
def sample_report() -> dict:
    return build_report(analyze_bytes(sample_bytes()))


# -- the bundled sample (a real report) ---------------------------------------------------


def test_sample_has_billed_model_arrows_and_unbilled_tool_arrows(sample_report):
    root = parse(render_sequence(sample_report, links=PrefixLinks(PREFIX)))
    # 4 calls: a request and a response each; 4 tool runs: a call and a result each.
    assert len(arrows(root, billed="true")) == 8
    assert len(arrows(root, billed="false")) == 8
    assert [a.get("data-call") for a in arrows(root, kind="request")] == ["1", "2", "3", "4"]
    assert len(arrows(root, kind="response")) == 4
    assert len(arrows(root, kind="tool-call")) == 4
    assert len(arrows(root, kind="tool-result")) == 4
    for arrow in arrows(root, billed="false"):
        assert line_of(arrow).get("stroke-dasharray")
        assert "not billed" in label_of(arrow)
        assert has_class(arrow, "unbilled")
    for arrow in arrows(root, billed="true"):
        assert line_of(arrow).get("stroke-dasharray") is None


def test_every_arrow_is_a_labelled_link_to_its_call_with_a_hover_title(sample_report):
    root = parse(render_sequence(sample_report, links=PrefixLinks(PREFIX)))
    for arrow in arrows(root):
        assert arrow.tag == f"{NS}a"
        assert arrow.get("href") == f"{PREFIX}calls/{arrow.get('data-call')}/"
        assert arrow.get("aria-label")
        assert title_of(arrow)
    request_2 = arrows(root, kind="request", call="2")[0]
    assert "1,260 tokens" in title_of(request_2)
    assert label_of(request_2) == "#2 request · 1,260 in · $0.0056"
    response_1 = arrows(root, kind="response", call="1")[0]
    assert label_of(response_1) == "60 out · tool_use"


def test_request_arrows_get_fatter_as_the_transcript_grows(sample_report):
    root = parse(render_sequence(sample_report, links=PrefixLinks(PREFIX)))
    widths = [float(line_of(a).get("stroke-width")) for a in arrows(root, kind="request")]
    assert widths == sorted(widths) and widths[0] < widths[-1]
    assert widths[-1] == pytest.approx(sequence.MAX_STROKE)  # the loop's largest call
    # Output is tiny next to input: responses stay thin.
    response_widths = [float(line_of(a).get("stroke-width")) for a in arrows(root, kind="response")]
    assert max(response_widths) < widths[0]


def test_parallel_batch_is_a_fan_from_one_point(sample_report):
    root = parse(render_sequence(sample_report, links=PrefixLinks(PREFIX)))
    fan = arrows(root, kind="tool-call", call="2")
    assert len(fan) == 2 and all(has_class(a, "parallel") for a in fan)
    starts = {(line_of(a).get("x1"), line_of(a).get("y1")) for a in fan}
    assert len(starts) == 1  # one origin, same height
    ends = {line_of(a).get("y2") for a in fan}
    assert len(ends) == 2  # spread so both stay visible in the same lane
    # Both results come back into one point before call 3's request.
    back = [a for a in arrows(root, kind="tool-result") if a.get("data-call") == "3"]
    assert len(back) == 2
    assert len({(span_of(a).get("x2"), span_of(a).get("y2")) for a in back}) == 1
    request_3_y = float(line_of(arrows(root, kind="request", call="3")[0]).get("y1"))
    assert all(float(span_of(a).get("y2")) < request_3_y for a in back)


def test_tool_lanes_one_per_name_most_used_first_and_the_rest_grouped(sample_report):
    root = parse(render_sequence(sample_report, links=PrefixLinks(PREFIX)))
    titles = [e.text for e in root.iter(f"{NS}text") if has_class(e, "seq-lane-title")]
    # check_availability runs twice (the parallel batch), the others once, in first use.
    assert titles == ["model", "your code", "check_availability", "find_free_slots", "create_event"]

    calls = [call(n) for n in range(1, 10)]
    runs = [run(f"t{n}", f"tool_{n}", n, n + 1) for n in range(1, 9)]
    root = parse(render_sequence(report(calls, runs), links=PrefixLinks(PREFIX)))
    titles = [e.text for e in root.iter(f"{NS}text") if has_class(e, "seq-lane-title")]
    lanes = sequence.MAX_TOOL_LANES
    assert titles == [
        "model",
        "your code",
        *(f"tool_{n}" for n in range(1, lanes + 1)),
        "other tools",
    ]
    ends = {line_of(a).get("x2") for a in arrows(root, kind="tool-call")}
    assert len(ends) == lanes + 1


# -- states: dangling, orphan, failed call, findings ----------------------------------------


def trouble_report() -> dict:
    calls = [
        call(1),
        call(2),
        call(3, status="error", error="overloaded_error: " + "x" * 200, http_status=529),
        call(4, stop_reason="end_turn"),
    ]
    runs = [
        run("t1", "read_file", 1, 2),
        run("t2a", "grep", 2, 3, batch_size=2, is_error=True),
        run("t2b", "bash", 2, None, status="dangling", batch_size=2),
        run("ghost", None, None, 4, status="orphan"),
    ]
    findings = [
        finding("dangling-tool-call", 2, "error", tool_call_id="t2b"),
        finding("orphan-tool-result", 4, "error", tool_call_id="ghost"),
        finding("api-error", 3, "error"),
        finding("slow-tool", 3, "info"),
        finding("max-tokens-stop", 3, "warning"),
        finding("prefix-changed", 3, "warning"),
        finding("elsewhere", 99, "warning"),
    ]
    return report(calls, runs, findings)


def test_dangling_call_ends_in_a_red_open_head_and_never_returns():
    root = parse(render_sequence(trouble_report(), links=PrefixLinks(PREFIX)))
    dangling = arrows(root, kind="tool-call", tool_id="t2b")
    assert len(dangling) == 1 and has_class(dangling[0], "dangling")
    assert "error" in line_of(dangling[0]).get("stroke")
    heads = [e for e in dangling[0].iter(f"{NS}path") if has_class(e, "arrow-head")]
    assert has_class(heads[0], "open") and heads[0].get("fill") == "none"
    assert arrows(root, kind="tool-result", tool_id="t2b") == []
    assert "no result" in label_of(dangling[0])


def test_orphan_result_arrives_in_red_from_nowhere():
    root = parse(render_sequence(trouble_report(), links=PrefixLinks(PREFIX)))
    orphan = arrows(root, kind="tool-result", tool_id="ghost")
    assert len(orphan) == 1 and has_class(orphan[0], "orphan")
    assert orphan[0].get("data-call") == "4"
    assert "error" in line_of(orphan[0]).get("stroke")
    assert any(has_class(e, "orphan-origin") for e in orphan[0].iter(f"{NS}circle"))
    assert arrows(root, kind="tool-call", tool_id="ghost") == []
    # It starts right of every tool lane: no lane drew it.
    lane_xs = [float(e.get("x1")) for e in root.iter(f"{NS}line") if has_class(e, "lifeline")]
    assert float(line_of(orphan[0]).get("x1")) > max(lane_xs)


def test_failed_call_has_a_red_response_with_the_error_truncated():
    root = parse(render_sequence(trouble_report(), links=PrefixLinks(PREFIX)))
    failed = arrows(root, kind="response", call="3")[0]
    assert has_class(failed, "error")
    assert "error" in line_of(failed).get("stroke")
    label = label_of(failed)
    assert label.startswith("error 529: overloaded_error: ")
    assert label.endswith("…") and len(label) < 70
    assert "x" * 200 in title_of(failed)  # the whole error on hover


def test_error_tool_result_is_marked():
    root = parse(render_sequence(trouble_report(), links=PrefixLinks(PREFIX)))
    result = arrows(root, kind="tool-result", tool_id="t2a")[0]
    assert has_class(result, "tool-error") and label_of(result).startswith("error result")


def test_every_finding_gets_a_badge_linking_to_the_call_findings():
    root = parse(render_sequence(trouble_report(), links=PrefixLinks(PREFIX)))
    found = badges(root)
    # 6 findings in the window: 2 on tool arrows, 4 on call 3 (3 badges + one "+1").
    assert sorted(b.get("data-rule") for b in found) == [
        "api-error",
        "dangling-tool-call",
        "max-tokens-stop",
        "orphan-tool-result",
        "prefix-changed",
    ]
    more = [e for e in root.iter(f"{NS}g") if has_class(e, "more")]
    assert len(more) == 1 and "slow-tool" in title_of(more[0])  # the least severe folded
    links = {e.get("href") for e in root.iter(f"{NS}a") if has_class(e, "badge-link")}
    assert links == {f"{PREFIX}calls/{n}/#findings" for n in (2, 3, 4)}
    dangling_badge = next(b for b in found if b.get("data-rule") == "dangling-tool-call")
    assert dangling_badge.get("data-tool-id") == "t2b"
    assert dangling_badge.get("data-severity") == "error"
    assert "dangling-tool-call on call 2" in title_of(dangling_badge)
    # The tool badge sits at the dangling arrow's end, not on call 2's request.
    arrow_end = span_of(arrows(root, kind="tool-call", tool_id="t2b")[0])
    circle = dangling_badge.find(f"{NS}circle")
    assert abs(float(circle.get("cx")) - float(arrow_end.get("x2"))) < 40


# -- escaping ---------------------------------------------------------------------------


def hostile_report() -> dict:
    calls = [
        call(1, model=HOSTILE),
        call(2, status="error", error=HOSTILE, stop_reason=HOSTILE),
        call(3, stop_reason=HOSTILE),
    ]
    runs = [
        run(HOSTILE, HOSTILE, 1, 2),
        run("orphan" + HOSTILE, HOSTILE, None, 3, status="orphan"),
    ]
    findings = [finding(HOSTILE, 1, HOSTILE, message=HOSTILE, tool_call_id=HOSTILE)]
    return report(calls, runs, findings)


@pytest.mark.parametrize("spacing", ["step", "time"])
def test_hostile_text_is_escaped_and_the_output_parses(spacing):
    markup = render_sequence(hostile_report(), links=PrefixLinks(PREFIX), spacing=spacing)
    root = parse(markup)
    assert "<script" not in markup
    assert "\x01" not in markup and "\x1f" not in markup
    for element in root.iter():
        assert "onmouseover" not in element.attrib
    # The text survives, as text: hover titles and tool-id attributes round-trip.
    assert any("<script>alert(1)</script>" in (e.text or "") for e in root.iter(f"{NS}title"))
    tool_ids = {a.get("data-tool-id") for a in arrows(root, kind="tool-call")}
    assert tool_ids == {HOSTILE.replace("\x01", "\u2401").replace("\x1f", "\u241f")}


def test_hostile_overview_and_view_parse():
    view = sequence_view(hostile_report(), links=PrefixLinks(PREFIX + '"><script>'))
    for markup in (view["svg"], view["overview"]):
        parse(markup)
        assert "<script" not in markup


def test_svg_builder_escapes_and_checks_names():
    root = Element("svg", {"data-x": '"<&>\n', "skipped": None})
    root.add("text", text="a < b && c > d ]]>")
    markup = root.to_string()
    assert markup == (
        '<svg data-x="&quot;&lt;&amp;&gt;&#10;"><text>a &lt; b &amp;&amp; c &gt; d ]]&gt;</text>'
        "</svg>"
    )
    assert parse(markup).get("data-x") == '"<&>\n'
    with pytest.raises(ValueError):
        Element("svg", {'x" onload="y': 1})
    with pytest.raises(ValueError):
        Element("script>")
    assert escape_text("\x00\ud800") == "\u2400\ufffd"
    assert escape_attribute("plain") == "plain"
    assert [format_number(v) for v in (3.0, 2.5, 1.239, -0.001)] == ["3", "2.5", "1.24", "0"]
    assert root.count() == 2


# -- windowing --------------------------------------------------------------------------


def test_a_two_thousand_call_loop_renders_one_bounded_window():
    long = linear_loop(2000)
    tree = build_sequence(long, links=PrefixLinks(PREFIX), start=1000, window=60)
    root = parse(tree.to_string())
    requests = arrows(root, kind="request")
    assert [int(a.get("data-call")) for a in requests] == list(range(1000, 1060))
    # One result arriving from call 999 (outside the window) plus one per shown call.
    assert len(arrows(root, kind="tool-result")) == 60
    assert tree.count() < 60 * 40
    assert root.get("data-start") == "1000" and root.get("data-end") == "1059"
    assert root.get("data-total") == "2000"


def test_window_metadata():
    long = linear_loop(2000)
    middle = sequence_window(long, start=1000, window=60)
    assert middle.as_dict() == {
        "loop": 1,
        "loops": [1],
        "total": 2000,
        "start": 1000,
        "end": 1059,
        "window": 60,
        "shown": 60,
        "previous_start": 940,
        "next_start": 1060,
        "first_call": 1000,
        "last_call": 1059,
    }
    first = sequence_window(long, start=1, window=60)
    assert first.previous_start is None and first.next_start == 61
    near_start = sequence_window(long, start=30, window=60)
    assert near_start.previous_start == 1
    last = sequence_window(long, start=1990, window=60)
    assert (last.end, last.next_start, last.shown) == (2000, None, 11)
    clamped = sequence_window(long, start=99_999, window=0)
    assert (clamped.start, clamped.end, clamped.window) == (2000, 2000, 1)
    assert sequence_window(long, start=-5).start == 1


def test_loops_are_chosen_by_index():
    calls = [call(1, loop=1), call(2, loop=2), call(3, loop=1), call(4, loop=2)]
    two_loops = report(calls)
    assert sequence_window(two_loops).loop == 1
    root = parse(render_sequence(two_loops, links=PrefixLinks(PREFIX), loop=2))
    assert [a.get("data-call") for a in arrows(root, kind="request")] == ["2", "4"]
    with pytest.raises(UnknownLoop):
        render_sequence(two_loops, links=PrefixLinks(PREFIX), loop=7)


def test_empty_report_renders_a_note():
    root = parse(render_sequence(report([]), links=PrefixLinks(PREFIX)))
    assert arrows(root) == []
    assert any(has_class(e, "seq-empty") for e in root.iter(f"{NS}text"))
    parse(render_overview(report([])))


def test_a_result_carried_after_the_window_is_named_on_the_tool_arrow():
    root = parse(render_sequence(linear_loop(10), links=PrefixLinks(PREFIX), window=3))
    last_tool = arrows(root, kind="tool-call", call="3")[0]
    assert "result in call 4" in label_of(last_tool)


# -- time spacing -----------------------------------------------------------------------


def timed_report(starts: list[float]) -> dict:
    calls = [call(n, started_at=t, duration_s=1.0) for n, t in enumerate(starts, start=1)]
    runs = [run(f"t{n}", "read_file", n, n + 1) for n in range(1, len(starts))]
    return report(calls, runs)


def request_ys(root: ET.Element) -> list[float]:
    return [float(line_of(a).get("y1")) for a in arrows(root, kind="request")]


def test_time_spacing_is_monotone_and_shows_long_pauses():
    starts = [0.0, 3.0, 6.0, 126.0, 129.0, 132.0]
    timed = timed_report(starts)
    root = parse(render_sequence(timed, links=PrefixLinks(PREFIX), spacing="time"))
    assert root.get("data-spacing") == "time"
    ys = request_ys(root)
    assert ys == sorted(ys) and len(set(ys)) == len(ys)
    gaps = [b - a for a, b in itertools.pairwise(ys)]
    assert gaps[2] > 3 * max(gaps[0], gaps[1], gaps[3], gaps[4])  # the two-minute pause
    all_ys = [float(line_of(a).get("y1")) for a in arrows(root)]
    assert all(math.isfinite(y) for y in all_ys)
    step = parse(render_sequence(timed, links=PrefixLinks(PREFIX), spacing="step"))
    step_gaps = {round(b - a, 3) for a, b in itertools.pairwise(request_ys(step))}
    assert len(step_gaps) == 1  # even steps
    gutter = [e.text for e in root.iter(f"{NS}text") if (e.text or "").startswith("+")]
    assert gutter[:2] == ["+0.0 s", "+3.0 s"]


def test_time_spacing_falls_back_to_steps_without_timings():
    partly = timed_report([0.0, 3.0, 6.0])
    partly["calls"][1]["started_at"] = None
    root = parse(render_sequence(partly, links=PrefixLinks(PREFIX), spacing="time"))
    assert root.get("data-spacing") == "step"
    assert request_ys(root) == sorted(request_ys(root))


# -- overview strip ---------------------------------------------------------------------


def test_overview_strip_marks_every_call_or_pixel_column_and_links_each_window():
    short = parse(build_overview(linear_loop(500), start=1, window=60).to_string())
    marks = {e.get("class"): e.get("d") for e in short.iter(f"{NS}path")}
    assert marks["ov-mark"].count("M") == 500  # fewer calls than pixels: one mark a call
    long = linear_loop(2000)
    long["calls"][499]["status"] = "error"
    long["findings"] = [finding("api-error", 700, "error"), finding("slow", 800, "warning")]
    tree = build_overview(long, start=121, window=60, window_href=lambda s: f"?start={s}")
    root = parse(tree.to_string())
    assert tree.count() < 120  # not one element per call
    paths = {e.get("class"): e.get("d") for e in root.iter(f"{NS}path")}
    # 2,000 calls on 960 px: one mark a pixel column, red where one of its calls is.
    assert paths["ov-mark"].count("M") == 958
    assert paths["ov-mark error"].count("M") == 2  # call 500 failed, call 700 has an error
    links = [e.get("href") for e in root.iter(f"{NS}a")]
    assert len(links) == math.ceil(2000 / 60)
    assert links[:3] == ["?start=1", "?start=61", "?start=121"]
    current = next(e for e in root.iter(f"{NS}rect") if has_class(e, "ov-current"))
    slot = 960 / 2000
    assert float(current.get("x")) == pytest.approx(120 * slot, abs=0.01)
    assert float(current.get("width")) == pytest.approx(60 * slot, abs=0.01)


def test_overview_mark_height_follows_input_tokens(sample_report):
    root = parse(render_overview(sample_report))
    heights = [
        float(part.split("v")[1].split("h")[0])
        for part in root.find(f"{NS}path").get("d").split("z")
        if part
    ]
    assert heights == sorted(heights) and heights[-1] > heights[0]
    assert root.find(f"{NS}g/{NS}a").get("href") == "?loop=1&start=1&window=60"


def test_sequence_view_bundles_diagram_overview_and_window(sample_report):
    view = sequence_view(sample_report, links=PrefixLinks(PREFIX), start=3, window=2)
    assert view["window"]["start"] == 3 and view["window"]["end"] == 4
    root = parse(view["svg"])
    assert [a.get("data-call") for a in arrows(root, kind="request")] == ["3", "4"]
    assert parse(view["overview"]).get("data-start") == "3"


def test_a_tool_finding_on_the_carrying_call_sits_on_the_result_arrow():
    calls = [call(1), call(2), call(3)]
    runs = [run("big", "read_file", 1, 2), run("t2", "grep", 2, 3)]
    findings = [
        finding("oversized-tool-result", 2, tool_call_id="big"),
        finding("slow-tool", 1, "info", tool_call_id="big"),
        finding("unknown-tool", 2, tool_call_id="not-in-the-window"),
    ]
    root = parse(render_sequence(report(calls, runs, findings), links=PrefixLinks(PREFIX)))
    placed = {b.get("data-rule"): b for b in badges(root)}
    result_line = span_of(arrows(root, kind="tool-result", tool_id="big")[0])
    call_line = span_of(arrows(root, kind="tool-call", tool_id="big")[0])
    request_2 = span_of(arrows(root, kind="request", call="2")[0])

    def y_of(rule: str) -> float:
        return float(placed[rule].find(f"{NS}circle").get("cy"))

    assert abs(y_of("oversized-tool-result") - float(result_line.get("y1"))) <= 10
    assert abs(y_of("slow-tool") - float(call_line.get("y2"))) <= 10
    assert y_of("unknown-tool") == pytest.approx(float(request_2.get("y1")))


def test_results_of_calls_made_before_the_trace_and_pending_calls():
    calls = [call(1), call(2)]
    runs = [
        run("earlier", "read_file", None, 1),  # asked in history the trace does not hold
        run("waiting", "bash", 2, None, status="pending"),  # a live trace, result not yet in
    ]
    root = parse(render_sequence(report(calls, runs), links=PrefixLinks(PREFIX)))
    history = arrows(root, kind="tool-result", tool_id="earlier")
    assert len(history) == 1 and has_class(history[0], "history")
    assert history[0].get("data-call") == "1"
    assert arrows(root, kind="tool-call", tool_id="earlier") == []
    pending = arrows(root, kind="tool-call", tool_id="waiting")[0]
    assert has_class(pending, "pending") and "waiting for result" in label_of(pending)
    assert "error" not in line_of(pending).get("stroke")
    assert arrows(root, kind="tool-result", tool_id="waiting") == []


@pytest.mark.corpus
@pytest.mark.parametrize("path", corpus_files("codex_rollout_jsonl", "*.jsonl"), ids=corpus_id)
def test_real_rollouts_render_every_call_tool_run_and_finding(path):
    real = build_report(analyze_bytes(path.read_bytes(), filename=path.name))
    meta = sequence_window(real, window=30)
    root = parse(render_sequence(real, links=PrefixLinks(PREFIX), window=30, spacing="time"))
    shown = set(range(meta.first_call, meta.last_call + 1))
    assert {int(a.get("data-call")) for a in arrows(root, kind="request")} == shown
    asked = [r for r in real["tool_runs"] if r["call"] in shown]
    assert len(arrows(root, kind="tool-call")) == len(asked) > 0
    # Every finding of the window is drawn: one badge each, or folded into a "+n" badge.
    expected = [f for f in real["findings"] if f["call"] in shown]
    folded = sum(
        int(e.find(f"{NS}text").text.lstrip("+"))
        for e in root.iter(f"{NS}g")
        if has_class(e, "more")
    )
    assert len(badges(root)) + folded == len(expected)
