"""The diagram's repeated presentation attributes are set once and inherited: the arrow
labels' size, colour and usual anchor on the arrows' group, the hit lines' wide
transparent stroke in the page's stylesheet. A 60-call window is hundreds of arrows, and
each attribute written on each is markup the browser parses and styles for nothing."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from tests.core.long_session import make_session
from traces.core.analysis.ingest import analyze_bytes
from traces.core.outputs.render.links import PrefixLinks
from traces.core.outputs.render.sequence import COMPACT, WIDE, render_sequence
from traces.core.outputs.render.sequence.arrows import HIT_CSS, LABEL_DEFAULTS
from traces.core.outputs.report import build_report

NS = "{http://www.w3.org/2000/svg}"
APP_CSS = Path(__file__).resolve().parents[3] / "traces" / "static" / "css" / "app.css"


def window(geometry) -> ET.Element:
    report = build_report(analyze_bytes(make_session(80), filename="session.jsonl"))
    markup = render_sequence(report, links=PrefixLinks("/t/"), window=60, geometry=geometry)
    return ET.fromstring(markup)


def test_labels_inherit_their_size_colour_and_anchor_from_the_arrows_group():
    for geometry in (WIDE, COMPACT):
        root = window(geometry)
        body = root.find(f"{NS}g[@class='seq-body']")
        assert body is not None
        assert {name: body.get(name) for name in LABEL_DEFAULTS} == {
            name: str(value) for name, value in LABEL_DEFAULTS.items()
        }
        labels = list(body.iter(f"{NS}text"))
        arrow_labels = [t for t in labels if t.get("class") == "arrow-label"]
        assert len(arrow_labels) > 100
        for label in arrow_labels:
            assert label.get("font-size") is None and label.get("fill") is None
            assert label.get("text-anchor") in (None, "start")  # middle is inherited
        if geometry is WIDE:  # a wide fan's labels start at their arrows' ends
            assert any(label.get("text-anchor") == "start" for label in arrow_labels)


def test_hit_lines_carry_only_their_geometry_and_the_stylesheet_their_stroke():
    root = window(WIDE)
    hits = [line for line in root.iter(f"{NS}line") if line.get("class") == "arrow-hit"]
    assert len(hits) > 100
    for hit in hits:
        assert set(hit.keys()) == {"class", "x1", "y1", "x2", "y2"}
    assert HIT_CSS in APP_CSS.read_text()
