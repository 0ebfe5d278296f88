"""The what-if recomputed from `what_if_source` (what a long trace keeps beside its
report) is the what-if of the whole report: the same basis and, under other parameters,
the same scenarios and series, on real corpus traces of every folder, the sundry run
(every scenario has something to save) and a long generated session."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.conftest import corpus_sample
from tests.core.long_session import make_session
from tests.core.whatif.traces import sundry_run
from traces.core.analysis.ingest import analyze_bytes, analyze_files
from traces.core.analysis.whatif import basis_from_report, build_series, build_what_if
from traces.core.analysis.whatif.params import parse_params
from traces.core.analysis.whatif.source import what_if_source
from traces.core.outputs.report import build_report

FILES = corpus_sample(per_folder=3)

ASKED = [
    None,
    {"clear_after": ["1"], "cache_lifetime": ["1h"]},
    {"batch": ["0"], "drop_unused": ["0"]},
]


def stored(value):
    """As the database gives it back (JSON)."""
    return orjson.loads(orjson.dumps(value))


def assert_same_what_if(report: dict) -> None:
    source = stored(what_if_source(report))
    basis = basis_from_report(report)
    assert basis_from_report(source) == basis
    for asked in ASKED:
        chosen = parse_params(basis, asked)
        assert build_what_if(source, chosen) == build_what_if(report, chosen)
        for loop in (None, *basis.loops):
            assert build_series(basis_from_report(source), chosen, loop) == build_series(
                basis, chosen, loop
            )


def test_the_corpus_has_folders_to_compare(corpus):
    assert len({path.parent for path in FILES}) >= 15


@pytest.mark.corpus
@pytest.mark.parametrize("path", FILES, ids=lambda path: f"{path.parent.name}/{path.name[:30]}")
def test_the_source_gives_the_reports_what_if(path: Path, corpus):
    assert_same_what_if(stored(build_report(analyze_files([(path.name, path.read_bytes())]))))


def test_the_sundry_runs_what_if_saves_in_every_scenario_from_its_source():
    report = stored(build_report(analyze_bytes(sundry_run())))
    assert all(s["calls"] or s["items"] for s in report["what_if"]["scenarios"][:2])
    assert_same_what_if(report)


def test_a_long_sessions_source_is_a_fraction_of_its_report():
    report = stored(build_report(analyze_bytes(make_session(600))))
    assert_same_what_if(report)
    assert len(orjson.dumps(what_if_source(report))) < len(orjson.dumps(report)) / 2


def test_a_report_made_before_the_what_if_has_no_what_if_in_its_source():
    report = stored(build_report(analyze_bytes(sundry_run())))
    del report["what_if"]
    assert "what_if" not in what_if_source(report)
