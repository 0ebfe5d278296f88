"""A session kept as a folder, read as the files it holds: a ZIP of the folder, or the folder.

Several agents keep one session as a folder of files rather than one file: OpenHands v1
(`base_state.json` + `events/event-*.json`), OpenCode (`session/`, `message/`, `part/`),
Cline and Roo Code tasks (`api_conversation_history.json` + `ui_messages.json`), the Cline
SDK (`<id>.json` + `<id>.messages.json`). Their readers take the folder's files together
(`analyze_files`); this module turns what a user has at hand into those files: a ZIP of
the folder (upload, `analyze`, `ingest`; an Inspect `.eval` archive is not a folder and
stays the Inspect reader's), or a folder on disk (the commands and the watcher).

Names are the members' paths inside the archive (or below the folder), so readers that
order parts by their names (OpenHands' event sequence numbers) see them. Directories,
macOS metadata, lock files and empty files are left out; an archive nested inside is not
opened (a session folder holds none), and every member shares one decompression budget.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from .containers import (
    HEADER_MEMBERS,
    MAX_MEMBERS,
    SAMPLE_MEMBER,
    ZIP_MAGIC,
    _Budget,
    central_directory,
    member_bytes,
)
from .limits import Limits

MAX_FOLDER_FILES = 20_000
"""More files than this below a folder is a whole store, not one session."""

LEFT_OUT = ("__MACOSX/", ".DS_Store", ".eventlog.lock", "Thumbs.db")
"""Members and files that are never part of a session: OS metadata, an agent's locks."""


def is_left_out(name: str) -> bool:
    return any(part in name for part in LEFT_OUT) or PurePosixPath(name).name.startswith("._")


def archive_members(data: bytes, limits: Limits) -> list[tuple[str, bytes]] | None:
    """The files of a ZIP that holds a folder, in name order; None when `data` is not a
    ZIP, or is an Inspect `.eval` log (read as one archive by its own reader)."""
    if not data.startswith(ZIP_MAGIC):
        return None
    members = {m.name: m for m in central_directory(data, MAX_MEMBERS)}
    if any(SAMPLE_MEMBER.match(name) for name in members) or any(
        name in members for name in HEADER_MEMBERS
    ):
        return None
    budget = _Budget(limits, source_bytes=len(data))
    files: list[tuple[str, bytes]] = []
    for name in sorted(members):
        if name.endswith("/") or is_left_out(name):
            continue
        content = member_bytes(data, members[name], budget, limits)
        if content.strip() and not content.startswith(ZIP_MAGIC):
            files.append((name, content))
    return files


def folder_files(root: Path, *, max_files: int = MAX_FOLDER_FILES) -> list[tuple[str, bytes]]:
    """The files below a folder on disk, named by their path below it, in name order.
    Raises OSError for an unreadable file and ValueError past `max_files`."""
    paths = sorted(p for p in root.rglob("*") if p.is_file() and not is_left_out(str(p)))
    if len(paths) > max_files:
        raise ValueError(f"{root} holds more than {max_files:,} files; not a session folder")
    return [(p.relative_to(root).as_posix(), p.read_bytes()) for p in paths]


def expand_folders(paths: Iterable[Path]) -> list[tuple[str, bytes]]:
    """Files and folders given on a command line, as the files of one trace."""
    files: list[tuple[str, bytes]] = []
    for path in paths:
        if path.is_dir():
            files.extend((f"{path.name}/{name}", data) for name, data in folder_files(path))
        else:
            files.append((str(path), path.read_bytes()))
    return files
