"""The README lists every supported format and the two commands on its first screen, and
the documents (README, CONTRIBUTING, docs/) name only files, modules and anchors that exist.

The shell was moved from flat modules into packages once; a document that still names
`traces/ingest.py` sends the next engineer nowhere, so every path is checked here.
"""

import importlib
import re
from pathlib import Path

import pytest

from traces.core.reading.formats.registry import adapters

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
DOCUMENTS = sorted([ROOT / "README.md", ROOT / "CONTRIBUTING.md", *(ROOT / "docs").glob("*.md")])

REPO_PATH = re.compile(
    r"(?<![\w/.~-])((?:traces|inspector|tests|bench|scripts|clients|docs)/[\w./<>*{}\[\]:-]*)"
)
"""A path from the repository's root, as the documents write them (`traces/live/api.py`)."""
DOTTED_MODULE = re.compile(r"(?<![\w/.-])(traces(?:\.[a-z_]+)+)")
"""A module by its import name (`traces.access.rules`), perhaps with one attribute after it."""
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} (.+)$", re.MULTILINE)


def test_every_format_is_listed_with_where_to_find_it():
    for adapter in adapters():
        assert f"`{adapter.name}`" in README, f"README does not list {adapter.name}"
        assert adapter.where, f"{adapter.name} does not say where users find its files"


def test_first_screen_says_make_serve_and_make_test():
    first_screen = "\n".join(README.splitlines()[:15])
    assert "make serve" in first_screen and "make test" in first_screen


def test_the_readme_links_to_the_developer_documents():
    for document in ("docs/architecture.md", "CONTRIBUTING.md"):
        assert f"]({document})" in README, f"README does not link to {document}"


def _named_paths(text: str) -> set[str]:
    """Concrete repository paths in a document: placeholders (`<id>`) and globs (`*.py`)
    name no one file and are left out."""
    found = set()
    for match in REPO_PATH.finditer(text):
        path = match.group(1).rstrip(".,:;")
        if not any(mark in path for mark in "<>*{}[]"):
            found.add(path)
    return found


def _module_exists(dotted: str) -> bool:
    """A module of ours, or an attribute of one (`traces.live.append_lines`)."""
    try:
        importlib.import_module(dotted)
        return True
    except ModuleNotFoundError:
        module, _, attribute = dotted.rpartition(".")
        try:
            return hasattr(importlib.import_module(module), attribute)
        except ModuleNotFoundError:
            return False


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = heading.strip().lower().replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(document: Path) -> set[str]:
    return {_slug(heading) for heading in HEADING.findall(document.read_text())}


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_path_a_document_names_exists(document: Path):
    text = document.read_text()
    missing = sorted(path for path in _named_paths(text) if not (ROOT / path).exists())
    assert not missing, f"{document.name} names paths that do not exist: {missing}"
    modules = {match.group(1) for match in DOTTED_MODULE.finditer(text)}
    unknown = sorted(
        name for name in modules if not name.endswith(".py") and not _module_exists(name)
    )
    assert not unknown, f"{document.name} names modules that do not exist: {unknown}"


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_link_of_a_document_leads_somewhere(document: Path):
    broken = []
    for target in LINK.findall(document.read_text()):
        if re.match(r"[a-z]+:", target):  # http(s), mailto: not ours to check
            continue
        path, _, anchor = target.partition("#")
        linked = (document.parent / path).resolve() if path else document
        unknown_anchor = bool(anchor) and linked.suffix == ".md" and linked.exists()
        if not linked.exists() or (unknown_anchor and anchor not in _anchors(linked)):
            broken.append(target)
    assert not broken, f"{document.name} has links to nothing: {broken}"


def test_the_path_checks_see_a_stale_path():
    """The checks above find what they are for: an old flat module, a missing anchor."""
    assert _named_paths("see `traces/ingest.py`, `traces/<id>/` and `docs/*.md`.") == {
        "traces/ingest.py"
    }
    assert not (ROOT / "traces/ingest.py").exists()
    assert not _module_exists("traces.job_api") and _module_exists(
        "traces.live.writes.append_lines"
    )
    assert _slug("Background work: the task queue") == "background-work-the-task-queue"
    assert _slug("The shell: one `layers` contract") == "the-shell-one-layers-contract"
