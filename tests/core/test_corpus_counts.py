"""Every corpus file comes out with the independent counts in ../shared/corpus/counts.json,
and every agent session file with those in ../shared/agents/counts.json.

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

Agents' stores (../shared/agents) add two kinds of entry. A session kept as a folder
(OpenHands SDK: base_state.json + events/) is counted over the whole folder on its anchor
file; its other files have null figures and are read with it. A file with all-zero
figures (an index such as Continue's sessions.json, a session with no answered request)
must be recognised and say what it is (`NotATrace`), never be refused as unknown.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import AGENTS, CORPUS
from traces.core.analysis.ingest import analyze_files
from traces.core.outputs.report import build_report
from traces.core.reading.limits import NotATrace

FIGURES = ("model_calls", "tool_calls", "tool_results", "dangling", "orphan", "error_results")


FOLDER_ANCHOR = "computed (over the whole session folder"
"""How counts.json marks the file that carries a session folder's figures."""


def _expected(root: Path) -> dict[str, dict]:
    counts = root / "counts.json"
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


EXPECTED = _expected(CORPUS)
AGENT_EXPECTED = _expected(AGENTS)
NOT_DATA = {"SOURCES.md", "AGENTS.md", "counts.json"}


def _on_disk(root: Path) -> set[str]:
    return {
        str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and p.name not in NOT_DATA
    }


def test_every_corpus_file_has_independent_counts(corpus: Path):
    """A file added to the corpus without counts (or counts for a missing file) fails here."""
    assert _on_disk(corpus) == set(EXPECTED)


def test_every_agent_file_has_independent_counts(agents: Path):
    assert _on_disk(agents) == set(AGENT_EXPECTED)


def test_every_folder_part_is_counted_on_its_anchor(agents: Path):
    """Files with no figures of their own are parts of a session folder whose anchor is
    counted (so every file is read, with its folder)."""
    anchors = {
        str(Path(name).parent)
        for name, entry in AGENT_EXPECTED.items()
        if entry.get("notes", "").startswith(FOLDER_ANCHOR)
    }
    for name, entry in AGENT_EXPECTED.items():
        if all(entry.get(k) is None for k in FIGURES):
            assert any(name.startswith(anchor + "/") for anchor in anchors), name


def _check(root: Path, relative: str, entry: dict) -> None:
    path = root / relative
    if entry.get("notes", "").startswith(FOLDER_ANCHOR):
        parts = sorted(p for p in path.parent.rglob("*") if p.is_file())
        files = [(str(p.relative_to(path.parent)), p.read_bytes()) for p in parts]
    else:
        files = [(path.name, path.read_bytes())]
    expected = {k: entry[k] for k in FIGURES if entry.get(k) is not None}
    if expected and not any(expected.values()):
        try:
            trace = analyze_files(files)
        except NotATrace as notice:  # recognised, and says what the file is
            assert "Read as" in str(notice) or "index" in str(notice), str(notice)
            return
    else:
        trace = analyze_files(files)
    actual = corpus_counts(build_report(trace))
    assert {k: actual[k] for k in expected} == expected, entry.get("notes", "")


@pytest.mark.corpus
@pytest.mark.parametrize("relative", sorted(EXPECTED))
def test_corpus_file_counts_exactly(relative: str, corpus: Path):
    _check(corpus, relative, EXPECTED[relative])


@pytest.mark.corpus
@pytest.mark.parametrize(
    "relative",
    [
        name
        for name, entry in sorted(AGENT_EXPECTED.items())
        if any(entry.get(k) is not None for k in FIGURES)
    ],
)
def test_agent_session_counts_exactly(relative: str, agents: Path):
    """Every agent store file: the figures of ../shared/agents/counts.json, exactly."""
    _check(agents, relative, AGENT_EXPECTED[relative])
