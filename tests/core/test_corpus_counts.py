"""Every corpus file comes out with the independent counts in ../shared/corpus/counts.json.

The counts were made by people and tools outside this project (their definitions are in
counts.json itself); a figure that is null there is not defined for that file and is not
asserted. How our report maps onto each definition:

- ``model_calls``: the report's calls (a failed call is still a model API response).
- ``tool_calls``: tool runs that a model issued (paired or dangling), each id once. A tool
  run recorded whole by a tool log (an OTel `execute_tool` span: the call with its output)
  is one call, though no model call in the file asked for it.
- ``tool_results``: results that came back (paired runs and orphan results). A result
  recorded before a compaction counts, though no later request carries it.
- ``dangling`` / ``orphan``: tool runs with that status.
- ``error_results``: results flagged as errors by the format (paired or orphan runs whose
  result is an error): Claude `is_error`, Codex `exec_command_end` exit_code != 0 or
  `patch_apply_end` success false (on the command that ran, not on the `write_stdin` polls
  whose output says "Process exited with code 1"), OTel `error.type`. Errors we only
  *infer* from text (`ToolRun.error_inferred`: exit codes in output text, "An error
  occurred while running the tool…") are not flagged errors, except where counts.json
  names a section rule that makes them count (tau-bench results starting with "Error").
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import CORPUS
from traces.core.analysis.ingest import analyze_files
from traces.core.outputs.report import build_report

FIGURES = ("model_calls", "tool_calls", "tool_results", "dangling", "orphan", "error_results")


def _expected() -> dict[str, dict]:
    counts = CORPUS / "counts.json"
    if not counts.is_file():
        return {}
    return json.loads(counts.read_text(encoding="utf-8"))["files"]


def corpus_counts(report: dict) -> dict[str, int]:
    """The six corpus figures read off one report."""
    runs = report["tool_runs"]
    statuses = [run["status"] for run in runs]
    answered = [run for run in runs if run["status"] in ("paired", "orphan")]
    return {
        "model_calls": report["totals"]["calls"],
        "tool_calls": statuses.count("paired") + statuses.count("dangling"),
        "tool_results": len(answered),
        "dangling": statuses.count("dangling"),
        "orphan": statuses.count("orphan"),
        "error_results": sum(1 for run in answered if run.get("is_error")),
    }


EXPECTED = _expected()


def test_every_corpus_file_has_independent_counts(corpus: Path):
    """A file added to the corpus without counts (or counts for a missing file) fails here."""
    on_disk = {
        str(p.relative_to(corpus))
        for p in corpus.rglob("*")
        if p.is_file() and p.name not in {"SOURCES.md", "counts.json"}
    }
    assert on_disk == set(EXPECTED)


@pytest.mark.corpus
@pytest.mark.parametrize("relative", sorted(EXPECTED))
def test_corpus_file_counts_exactly(relative: str, corpus: Path):
    path = corpus / relative
    trace = analyze_files([(path.name, path.read_bytes())])
    actual = corpus_counts(build_report(trace))
    expected = {k: EXPECTED[relative][k] for k in FIGURES if EXPECTED[relative].get(k) is not None}
    assert {k: actual[k] for k in expected} == expected, EXPECTED[relative].get("notes", "")
