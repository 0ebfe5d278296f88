"""Find the session files and folders of every known store under a home (and more roots).

Pure file-system reading: no database, no parsing of whole sessions. The watcher
(`traces.live.watch`) compares what is found with what it has read; the "On this
machine" page counts it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import orjson

from traces.core.records import dataclass, field

from ..reading.folders import folder_files, is_left_out
from .stores import INDEX_FILES, STORES, SessionKind, Store


@dataclass(frozen=True, slots=True)
class Candidate:
    """One session on disk: its path, the store it belongs to, its size and last change."""

    store: Store
    location: Path
    """The store's folder this session was found in."""
    path: Path
    kind: SessionKind
    size: int
    """Bytes: the file's, or the sum of a folder's files."""
    mtime: float
    """Latest modification time of the file or of any file of the folder (or of its
    subagents' files)."""
    companions: tuple[Path, ...] = ()
    """Claude Code: the session's subagents' files, read with it (`Store.subagents`)."""

    @property
    def appends(self) -> bool:
        return self.store.appends and self.kind == "file" and self.path.suffix == ".jsonl"


@dataclass(frozen=True, slots=True)
class StoreScan:
    """One store's folder as found: its sessions, or why none could be listed."""

    store: Store
    location: Path
    sessions: tuple[Candidate, ...] = ()
    problem: str = ""
    overridden: bool = False
    """The folder was named by the store's environment variable."""
    skipped: tuple[tuple[Path, str], ...] = field(default=())
    """Sessions that could not be measured (unreadable), with the reason."""


def store_locations(home: Path, env: Mapping[str, str], roots: Sequence[Path]) -> Iterator[
    tuple[Store, Path, bool]
]:  # fmt: skip
    """Each store's folder to look in: the environment variable's, else the first default
    location under the home that exists (or the first one, to report as absent), then
    the same below every root (a root is another home)."""
    for store in STORES:
        named = env.get(store.env, "") if store.env else ""
        if named:
            yield store, Path(named).expanduser(), True
            continue
        for base in (home, *roots):
            folders = [base / location for location in store.locations]
            existing = [folder for folder in folders if folder.is_dir()]
            yield from ((store, folder, False) for folder in existing or folders[:1])


def scan(
    home: Path, env: Mapping[str, str], roots: Sequence[Path] = (), *, absent: bool = False
) -> list[StoreScan]:
    """Every store found (with `absent`, also those whose folder does not exist, each
    with the reason), with its sessions in path order."""
    found: list[StoreScan] = []
    for store, location, overridden in store_locations(home, env, roots):
        if not location.is_dir():
            if absent or overridden:
                reason = (
                    f"${store.env} names {location}, which is not a folder"
                    if overridden
                    else f"{location} does not exist"
                )
                found.append(StoreScan(store, location, problem=reason, overridden=overridden))
            continue
        try:
            sessions, skipped = _sessions(store, location)
        except OSError as exc:
            found.append(StoreScan(store, location, problem=f"cannot be listed: {exc}"))
            continue
        if store.in_projects and not sessions and not skipped and not overridden:
            continue  # a home without aider histories holds no aider store
        found.append(StoreScan(store, location, sessions, "", overridden, skipped))
    return found


def find_sessions(
    home: Path, env: Mapping[str, str], roots: Sequence[Path] = ()
) -> Iterator[Candidate]:
    """Every candidate session of every store under the home and the roots."""
    for found in scan(home, env, roots):
        yield from found.sessions


def _sessions(
    store: Store, location: Path
) -> tuple[tuple[Candidate, ...], tuple[tuple[Path, str], ...]]:
    sessions: list[Candidate] = []
    skipped: list[tuple[Path, str]] = []
    paths = {path for pattern in store.patterns for path in location.glob(pattern)}
    owned = _subagent_files(paths) if store.subagents else {}
    taken = {path for files in owned.values() for path in files}
    for path in sorted(paths - taken):
        if path.name in INDEX_FILES or is_left_out(path.name):
            continue
        try:
            measured = _measure(store, path)
        except OSError as exc:
            skipped.append((path, str(exc)))
            continue
        if measured is not None:
            companions = owned.get(path, ())
            if companions:
                latest = max(p.stat().st_mtime for p in companions)
                measured = (measured[0], max(measured[1], latest))
            sessions.append(Candidate(store, location, path, store.kind, *measured, companions))
    return tuple(sessions), tuple(skipped)


def _subagent_files(paths: set[Path]) -> dict[Path, tuple[Path, ...]]:
    """Each Claude Code session's subagent files: those in `<session>/subagents/`, and the
    older `agent-<id>.jsonl` files beside it whose first line names it (`sessionId`)."""
    owned: dict[Path, list[Path]] = {}
    for path in paths:
        nested = sorted((path.parent / path.stem / "subagents").glob("*.jsonl"))
        if nested:
            owned.setdefault(path, []).extend(nested)
        if path.name.startswith("agent-"):
            session = _first_session_id(path)
            main = path.parent / f"{session}.jsonl"
            if session and main in paths and main != path:
                owned.setdefault(main, []).append(path)
    return {main: tuple(files) for main, files in owned.items()}


def _first_session_id(path: Path) -> str:
    try:
        with open(path, "rb") as handle:
            line = handle.readline(64 * 1024)
        value = orjson.loads(line)
    except (OSError, orjson.JSONDecodeError):
        return ""
    session = value.get("sessionId") if isinstance(value, dict) else None
    return session if isinstance(session, str) and "/" not in session else ""


def _measure(store: Store, path: Path) -> tuple[int, float] | None:
    """(size, mtime) of a session, None when the path is no session of this kind."""
    if store.kind == "folder":
        if not path.is_dir():
            return None
        files = [p for p in path.rglob("*") if p.is_file() and not is_left_out(str(p))]
        if not files:
            return None
        infos = [p.stat() for p in files]
        return sum(i.st_size for i in infos), max(i.st_mtime for i in infos)
    if not path.is_file():
        return None
    if store.kind == "opencode":
        files = [path, *_opencode_parts(path)]
        infos = [p.stat() for p in files]
        return sum(i.st_size for i in infos), max(i.st_mtime for i in infos)
    info = path.stat()
    if info.st_size == 0:
        return None
    return info.st_size, info.st_mtime


def _opencode_parts(session_file: Path) -> list[Path]:
    """An OpenCode session's message files and their parts (storage/message/<ses>/,
    storage/part/<msg>/), beside the session file's storage/session/<project>/."""
    storage = session_file.parent.parent.parent
    messages = sorted((storage / "message" / session_file.stem).glob("*.json"))
    parts = [p for m in messages for p in sorted((storage / "part" / m.stem).glob("*.json"))]
    return messages + parts


def session_files(candidate: Candidate) -> list[tuple[str, bytes]]:
    """The files of one session, named as its reader expects (a folder's by their path
    below it, an OpenCode session's by their path below its storage folder). Raises
    OSError (and ValueError for a folder too big to be one session)."""
    if candidate.kind == "folder":
        return [
            (f"{candidate.path.name}/{name}", data) for name, data in folder_files(candidate.path)
        ]
    if candidate.kind == "opencode":
        storage = candidate.path.parent.parent.parent
        paths = [candidate.path, *_opencode_parts(candidate.path)]
        return [(p.relative_to(storage).as_posix(), p.read_bytes()) for p in paths]
    files = [(candidate.path.name, candidate.path.read_bytes())]
    for companion in candidate.companions:  # a Claude Code session's subagents
        name = companion.relative_to(candidate.path.parent).as_posix()
        files.append((name, companion.read_bytes()))
    return files


def default_home(env: Mapping[str, str]) -> Path:
    """The user's home: $HOME, else what the OS says."""
    return Path(env.get("HOME") or os.path.expanduser("~"))
