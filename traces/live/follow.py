"""Complete lines appended to a file, as `manage.py tail` and the watcher follow them.

Both read a growing JSONL log the same way and append what they read through
`traces.live.writes.append_lines`: one code path from a file to a live trace. The
watcher starts at the byte offset it stored (`start_at`), so a restart resumes.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO

READ_BYTES = 1 << 20
"""At most this much is read (and sent as one batch) at a time."""


class FileFollower:
    """Complete lines appended to a file, surviving truncation and rotation.

    Truncation (the size drops below what was read, as with `copytruncate`) restarts at
    the top of the file. Rotation (the path now names another file: a new inode) is
    noticed once the old file is read to its end; the new file is then read from its
    start. A last line without its newline is held until the newline comes, or until
    the file is truncated, rotated or given up (`rest`).
    """

    def __init__(self, path: Path, *, from_end: bool = False, start_at: int = 0) -> None:
        self.path = path
        self.file: BinaryIO | None = None
        self.identity: tuple[int, int] | None = None
        self.position = 0
        self.partial = b""
        self.restarts = 0
        """Truncations and rotations seen so far."""
        self._open(at_end=from_end, start_at=start_at)

    def _open(self, *, at_end: bool, start_at: int = 0) -> None:
        try:
            handle = open(self.path, "rb")  # noqa: SIM115  (kept open while following)
        except FileNotFoundError:
            return
        info = os.fstat(handle.fileno())
        self.file, self.identity = handle, (info.st_dev, info.st_ino)
        if at_end:
            handle.seek(0, os.SEEK_END)
        elif start_at:
            handle.seek(start_at)
        self.position = handle.tell()

    @property
    def complete_through(self) -> int:
        """Bytes of the file read as complete lines (where a new follower resumes)."""
        return self.position - len(self.partial)

    def read_lines(self) -> list[bytes]:
        """Whatever complete lines were appended since the last call (maybe none)."""
        if self.file is None:
            self._open(at_end=False)
            if self.file is None:
                return []
        data = self.file.read(READ_BYTES)
        if data:
            self.position += len(data)
            *lines, self.partial = (self.partial + data).split(b"\n")
            return lines
        return self._restart_if_replaced()

    def _restart_if_replaced(self) -> list[bytes]:
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            return []  # rotated away and not yet recreated: wait for the new file
        held = self.rest()
        if (info.st_dev, info.st_ino) != self.identity:
            self.close()
            self._open(at_end=False)
            self.restarts += 1
            return held
        if info.st_size < self.position:
            assert self.file is not None
            self.file.seek(0)
            self.position = 0
            self.restarts += 1
            return held
        self.partial = held[0] if held else b""
        return []

    def rest(self) -> list[bytes]:
        """The unfinished last line, given up on (it is kept as a line of its own)."""
        held, self.partial = self.partial, b""
        return [held] if held else []

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None
