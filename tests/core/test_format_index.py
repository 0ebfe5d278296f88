"""The formats' scoring index (`formats/_index/`) says what the readers say, and detection
through it imports only the reader it picks.

Detection scores a file with each format's index module instead of importing every
reader; these tests fail when an index and its reader disagree (a name, a claim on a real
file), when a module is left out of both the index and `HELPERS`, or when detecting a file
imports a reader it did not choose.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys
from itertools import islice
from pathlib import Path

import pytest

from tests.conftest import AGENTS, CORPUS, ROOT
from traces.core.reading.folders import archive_members
from traces.core.reading.formats import _index
from traces.core.reading.formats.detect import SNIFF_RECORDS, detect
from traces.core.reading.formats.registry import adapters, scorers
from traces.core.reading.limits import DEFAULT_LIMITS
from traces.core.reading.records import Record
from traces.core.reading.sources import stream_source

PACKAGE = "traces.core.reading.formats"
NOT_TRACES = {"SOURCES.md", "AGENTS.md", "counts.json"}


def _reader_modules() -> dict[str, list[str]]:
    """Each module of `formats/` (infrastructure aside) with the adapters it registers."""
    adapters()  # imports every reader
    package = importlib.import_module(PACKAGE)
    found: dict[str, list[str]] = {}
    for module in pkgutil.iter_modules(package.__path__):
        if module.name in {"base", "registry", "detect"} or module.name.startswith("_"):
            continue
        found[module.name] = [
            a.name for a in adapters() if a.__module__ == f"{PACKAGE}.{module.name}"
        ]
    return found


def test_every_reader_has_an_index_module_of_its_name_and_helpers_register_none():
    indexed = {m.name for m in pkgutil.iter_modules(_index.__path__)}
    for module, names in _reader_modules().items():
        if module in _index.HELPERS:
            assert names == [], f"{module} registers {names} but is listed in HELPERS"
            assert module not in indexed, f"{module} is a helper with an index module"
            continue
        assert len(names) == 1, f"{module} registers {names}: add it to _index.HELPERS?"
        assert module in indexed, f"formats/{module}.py has no formats/_index/{module}.py"
        entry = importlib.import_module(f"{PACKAGE}._index.{module}")
        assert names[0] == entry.NAME
    assert set(_reader_modules()) >= _index.HELPERS, "HELPERS names a module that is gone"


def test_scorers_are_the_adapters_in_the_same_order():
    assert [s.name for s in scorers()] == [a.name for a in adapters()]
    modules = {a.name: a.__module__.rsplit(".", 1)[1] for a in adapters()}
    assert {s.name: s.module for s in scorers()} == modules


def _samples(path: Path) -> list[list[object]]:
    """What detection is given for a file: the values of its first records (one list per
    member of a ZIP, as `analyze_bytes` reads it)."""
    data = path.read_bytes()
    members = archive_members(data, DEFAULT_LIMITS)
    files = members if members is not None else [(path.name, data)]
    samples = []
    for name, body in files:
        try:
            source = stream_source(body, name)
        except Exception:  # refused before detection: nothing is scored
            continue
        records = (i for i in source.items if isinstance(i, Record))
        samples.append([r.value for r in islice(records, SNIFF_RECORDS)])
    return samples


def _real_files() -> list[Path]:
    found = []
    for folder in (CORPUS, AGENTS):
        if folder.is_dir():
            found += [p for p in folder.rglob("*") if p.is_file() and p.name not in NOT_TRACES]
    return sorted(found)


def _file_id(path: Path) -> str:
    return str(path.relative_to(ROOT.parent / "shared"))


@pytest.mark.corpus
@pytest.mark.parametrize("path", _real_files(), ids=_file_id)
def test_index_and_reader_make_the_same_claim_on_every_corpus_file(path, corpus):
    by_name = {a.name: a for a in adapters()}
    for sample in _samples(path):
        if not sample:
            continue
        best, best_score = None, 0.0
        for scorer in scorers():
            reader = by_name[scorer.name]
            try:
                claim = reader.sniff(sample)
            except Exception:
                claim = None
            try:
                indexed = scorer.sniff(sample)
            except Exception:
                indexed = None
            assert indexed == claim, f"{scorer.name}: index {indexed} but reader {claim}"
            if claim is not None and claim.score > best_score:
                best, best_score = reader, claim.score
        if best is not None:  # the readers' own choice, as detection made it before
            assert detect(sample).adapter is best


CHILD = """
import json, sys
from traces.core.analysis.ingest import analyze_bytes
line = {"request": {"url": "https://api.anthropic.com/v1/messages", "body": {
    "model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "hi"}]}},
    "response": {"status_code": 200, "body": {"type": "message", "role": "assistant",
    "content": [{"type": "text", "text": "hello"}], "stop_reason": "end_turn",
    "usage": {"input_tokens": 3, "output_tokens": 1}}}}
trace = analyze_bytes(json.dumps(line).encode(), filename="log.jsonl")
print(json.dumps([trace.format, sorted(m for m in sys.modules
    if m.startswith("traces.core.reading.formats.") and "._index" not in m)]))
"""


def test_detecting_a_file_imports_only_the_reader_it_picks():
    """A fresh process: the readers a test run already imported would hide the point."""
    result = subprocess.run(
        [sys.executable, "-c", CHILD],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        check=True,
    )
    chosen, modules = json.loads(result.stdout)
    assert chosen == "anthropic-messages"
    readers = {m.rsplit(".", 1)[1] for m in modules} - _index.HELPERS
    assert readers == {"anthropic_messages", "base", "registry", "detect"}
