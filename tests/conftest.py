"""Shared fixtures: the public corpus (read in place, never copied) and golden files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.browser_setup import browser_missing

ROOT = Path(__file__).resolve().parent.parent

os.environ["LOOP_INSPECTOR_CACHE_DIR"] = ""
"""No price memo unless a test names its folder: a memo left by an earlier test (or the
developer's own) would answer for the library, and the tests that watch it load would
see nothing (tests/core/test_price_memo.py tests the memo itself)."""
CORPUS = ROOT.parent / "shared" / "corpus"
AGENTS = ROOT.parent / "shared" / "agents"


@pytest.fixture(scope="session", autouse=True)
def originals_folder(tmp_path_factory) -> Path:
    """Originals go to a folder of this test run, never the checkout's ./data: through the
    settings here, and through INSPECTOR_DATA_DIR for the servers and commands tests start."""
    from django.conf import settings
    from django.test import override_settings

    folder = tmp_path_factory.mktemp("inspector-data")
    os.environ["INSPECTOR_DATA_DIR"] = str(folder)
    storages = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(folder), "allow_overwrite": True},
        },
    }
    with override_settings(STORAGES=storages):
        yield folder


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The folder of real public traces beside the checkout; tests skip when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip(f"the public trace corpus is not present at {CORPUS}")
    return CORPUS


@pytest.fixture(scope="session")
def agents() -> Path:
    """The folder of real coding-agent session stores beside the checkout (skips if absent)."""
    if not AGENTS.is_dir():
        pytest.skip(f"the agent session corpus is not present at {AGENTS}")
    return AGENTS


def corpus_files(folder: str, *patterns: str) -> list[Path]:
    """Files of one corpus folder, for parametrising (empty when the corpus is absent)."""
    base = CORPUS / folder
    if not base.is_dir():
        return []
    found: set[Path] = set()
    for pattern in patterns or ("*",):
        found.update(p for p in base.rglob(pattern) if p.is_file())
    return sorted(found)


def corpus_sample(per_folder: int = 3) -> list[Path]:
    """The first files of every corpus folder (not its notes), for a test that compares two
    ways of computing one answer across every format (empty when the corpus is absent)."""
    if not CORPUS.is_dir():
        return []
    return sorted(
        path
        for folder in sorted(CORPUS.glob("*/"))
        for path in sorted(folder.iterdir())[:per_folder]
        if path.is_file() and path.suffix != ".md"
    )


def corpus_id(path: Path) -> str:
    return str(path.relative_to(CORPUS))


def pytest_collection_modifyitems(config, items):
    """Browser tests run last, and are skipped, with the reason and the fix, when no
    Chromium exists (tests/browser_setup.py could not install one): the rest of the suite
    still runs.

    Last, because Playwright's sync API keeps an event loop running in the main thread
    until the session ends: a later test that calls `asyncio.run` or `async_to_sync`
    there would be refused.
    """
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)  # stable
    reason = browser_missing()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=reason)
    for item in items:
        if item.get_closest_marker("browser"):
            item.add_marker(skip)


@pytest.fixture(autouse=True, scope="session")
def queue_runs_tasks_inline():
    """Tests in this process run queue tasks inline with Huey's own immediate mode (set
    explicitly: on the Redis leg the settings queue to Redis for workers). The test that
    needs a real worker turns it off for itself (tests/jobs/test_worker_process.py)."""
    from huey.contrib.djhuey import HUEY

    was = HUEY.immediate
    HUEY.immediate = True
    yield
    HUEY.immediate = was


@pytest.fixture(autouse=True)
def fresh_stores():
    """Each test starts, and leaves, as a fresh process would: every store of the
    process (traces.stores: caches, queues, pools, decisions) cleared."""
    from traces.stores import stores

    stores().clear()
    yield
    stores().clear()
