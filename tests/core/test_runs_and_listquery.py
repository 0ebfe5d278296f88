"""Splitting uploads into runs, the list's query string, and lint across runs."""

from __future__ import annotations

import datetime as dt
import io
import zipfile

import orjson
import pytest

from tests.conftest import CORPUS
from traces.core.analysis.ingest import analyze_bytes
from traces.core.analysis.rules.base import Finding
from traces.core.outputs.lint_summary import LintedRun, aggregate, render_aggregate
from traces.core.outputs.listquery import ListQuery
from traces.core.reading.runs import split_runs
from traces.core.reading.sample import sample_bytes

EVAL = "inspect_ai_eval_log/2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"
JSON_LOG = "inspect_ai_eval_log/2025-05-12T20-28-13-04-00_popularity.json"


@pytest.mark.corpus
def test_an_eval_splits_into_one_small_eval_per_sample(corpus):
    data = (CORPUS / EVAL).read_bytes()
    runs, problems = split_runs([("pop.eval", data)])
    assert problems == [] and len(runs) == 10
    assert runs[0].name == "pop · sample 1 epoch 1"
    assert [r.filename for r in runs[:2]] == [
        "pop_sample-1_epoch-1.eval",
        "pop_sample-2_epoch-1.eval",
    ]
    whole = analyze_bytes(data, filename="pop.eval")
    for run in runs:
        archive = zipfile.ZipFile(io.BytesIO(run.data))
        assert archive.namelist()[0] == "header.json" and len(archive.namelist()) == 2
        sample = archive.namelist()[1]
        original = zipfile.ZipFile(io.BytesIO(data)).read(sample)
        assert archive.read(sample) == original  # the member's bytes, unchanged
    # Each run holds exactly its sample's calls: together, the whole log's.
    assert sum(len(analyze_bytes(r.data, filename=r.filename).calls) for r in runs) == len(
        whole.calls
    )
    again, _ = split_runs([("pop.eval", data)])
    assert [r.sha256 for r in again] == [r.sha256 for r in runs]  # deterministic


@pytest.mark.corpus
def test_a_json_log_with_several_samples_splits_too(corpus):
    runs, _ = split_runs([("pop.json", (CORPUS / JSON_LOG).read_bytes())])
    assert len(runs) == 3
    for run in runs:
        assert len(orjson.loads(run.data)["samples"]) == 1


def test_plain_files_pass_through_and_a_bad_zip_is_named():
    data = sample_bytes()
    runs, problems = split_runs([("a.jsonl", data), ("broken.zip", b"PK\x03\x04 not really")])
    assert [(r.name, r.data) for r in runs] == [("a.jsonl", data)]
    assert [p.name for p in problems] == ["broken.zip"]


def test_query_string_round_trip():
    query = ListQuery.parse(
        {
            "q": "  grep  ",
            "rule": "dangling-tool-call",
            "outcome": "api_error",
            "from": "2026-11-01",
            "cost_min": "0.5",
            "calls_max": "40",
            "errors": "1",
            "sort": "-cost",
            "page": "3",
        }
    )
    assert query.q == "grep" and query.date_from == dt.date(2026, 11, 1)
    assert query.outcome_kind == "api_error" and query.cost_min == 0.5 and query.calls_max == 40
    assert ListQuery.parse(query.params()) == query
    assert query.sorted_by("cost").sort == "cost" and query.sorted_by("cost").page == 1
    assert query.sorted_by("calls").sort == "-calls"
    assert ("rule", "rule", "dangling-tool-call") in query.active_filters()


def test_bad_values_are_dropped_and_named():
    query = ListQuery.parse(
        {
            "calls_min": "-3",
            "to": "yesterday",
            "severity": "fatal",
            "page": "x",
            "outcome": "halted",
        }
    )
    assert query.calls_min is None and query.date_to is None and query.severity == ""
    assert query.page == 1 and query.outcome_kind == "halted_on_tool_use"
    assert len(query.problems) == 3


def test_lint_aggregate_counts_runs_per_rule():
    dangling = Finding("dangling-tool-call", "error", "no result", call=1)
    slow = Finding("slow-tool", "info", "slow", call=2)
    summary = aggregate(
        [
            LintedRun("a.jsonl", "finished", [slow, slow]),
            LintedRun("b.jsonl", "halted_on_tool_use", [dangling]),
            LintedRun("c.jsonl", "finished", []),
        ]
    )
    assert summary["runs"] == 3 and summary["runs_with_findings"] == 2
    assert [(r["rule"], r["run_count"], r["findings"]) for r in summary["rules"]] == [
        ("dangling-tool-call", 1, 1),
        ("slow-tool", 1, 2),
    ]
    text = render_aggregate(summary, "nightly")
    assert "dangling-tool-call  error    fired in 1 of 3 runs  (1 finding)" in text
    assert "Finished 2" in text


def _zip_of(*members: tuple[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for name, content in members:
            archive.writestr(name, content)
    return buffer.getvalue()


def test_an_archive_that_inflates_past_the_ratio_is_refused():
    """Issue 26: 20 MB of newlines is ~20 KB deflated."""
    bomb = _zip_of(("runs.jsonl", b"\n" * (20 * 1024 * 1024)))
    runs, problems = split_runs([("bomb.zip", bomb)])
    assert runs == []
    assert "inflate more than 200 times its 20," in problems[0].message


def test_a_member_that_inflates_past_the_ratio_is_refused():
    """Members had no ratio check of their own: padding the archive with stored,
    incompressible bytes hid a bomb from the archive-wide ratio."""
    import os

    padding = ("padding.bin", os.urandom(2 * 1024 * 1024))
    bomb = ("runs.jsonl", b"\n" * (20 * 1024 * 1024))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(*padding, compress_type=zipfile.ZIP_STORED)
        archive.writestr(*bomb, compress_type=zipfile.ZIP_DEFLATED)
    runs, problems = split_runs([("padded.zip", buffer.getvalue())])
    assert runs == []
    assert "The ZIP member runs.jsonl inflates more than 200 times" in problems[0].message


def test_nested_archives_share_one_budget():
    """Each nested ZIP had its own budget: now what all levels inflate to is counted once."""
    from traces.core.reading.limits import Limits

    text = orjson.dumps([f"{n:08x}" * 4 for n in range(40_000)])  # ~1.5 MB, little repeat
    inner = _zip_of(("a.json", text))
    outer = _zip_of(*((f"inner{n}.zip", inner) for n in range(4)), method=zipfile.ZIP_STORED)
    roomy = Limits(max_decompressed_bytes=len(text) * 8)
    assert len(split_runs([("outer.zip", outer)], roomy)[0]) == 4
    tight = Limits(max_decompressed_bytes=len(text) * 3)  # room for each level, not for all
    runs, problems = split_runs([("outer.zip", outer)], tight)
    assert runs == []
    assert "decompresses to more than" in problems[0].message
