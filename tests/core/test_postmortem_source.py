"""A post-mortem built from `postmortem_source` (what a long trace keeps beside its report,
traces.storage.report_views) is the post-mortem built from the whole report: on real
corpus traces of every folder and on long generated sessions whose first error sits in
the middle, at the start and at the end of the loop."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.conftest import corpus_sample
from tests.core.long_session import make_session
from traces.core.analysis.ingest import analyze_bytes, analyze_files
from traces.core.outputs.postmortem import build_postmortem, postmortem_source
from traces.core.outputs.report import build_report

FILES = corpus_sample(per_folder=3)


def stored(value):
    """As the database gives it back (JSON)."""
    return orjson.loads(orjson.dumps(value))


def assert_same_postmortem(report: dict) -> dict:
    source = stored(postmortem_source(report))
    assert build_postmortem(source, "run") == build_postmortem(report, "run")
    return source


def test_the_corpus_has_folders_to_compare(corpus):
    assert len({path.parent for path in FILES}) >= 15


@pytest.mark.corpus
@pytest.mark.parametrize("path", FILES, ids=lambda path: f"{path.parent.name}/{path.name[:30]}")
def test_the_source_gives_the_reports_postmortem(path: Path, corpus):
    report = stored(build_report(analyze_files([(path.name, path.read_bytes())])))
    assert_same_postmortem(report)


@pytest.fixture(scope="module")
def long_report() -> dict:
    return stored(build_report(analyze_bytes(make_session(600))))


def test_a_long_sessions_source_holds_only_the_calls_it_shows(long_report):
    source = assert_same_postmortem(long_report)
    assert 0 < len(source["calls"]) <= 5 < len(long_report["calls"])  # the last calls
    assert source["findings"] == long_report["findings"]


@pytest.mark.parametrize("where", [0, 1, 300, -3, -1])
def test_a_first_error_anywhere_in_the_loop_keeps_its_neighbours(long_report, where):
    report = dict(long_report)
    call = report["calls"][where]
    error = {"rule": "dangling-tool-call", "severity": "error", "call": call["index"]}
    report["findings"] = [error, *report["findings"]]
    source = assert_same_postmortem(report)
    assert call["index"] in {c["index"] for c in source["calls"]}
    assert len(source["calls"]) <= 10


def test_a_report_without_calls_or_what_if_keeps_its_shape():
    report = {"format": "x", "calls": [], "findings": [], "tool_runs": [], "lines": {}}
    source = assert_same_postmortem(report)
    assert "what_if" not in source
