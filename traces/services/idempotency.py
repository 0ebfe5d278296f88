"""`Idempotency-Key` on uploads: the same upload sent twice makes one trace (issue 26).

A client whose connection drops after it sent a trace cannot tell whether the server
stored it; without a key its retry makes a second trace. With `Idempotency-Key: K` on
`POST /api/traces` or `POST /api/jobs`, the first upload records K (in the same
transaction as its trace or job row, so a process killed before the commit leaves
neither), and every later upload with K to the same project gets that trace or job back
instead of being stored again. Two uploads racing with one key: both are read, the second
commit fails on the unique key and answers with the first's result. The same key with
other bytes is a client bug and is refused (422), never silently answered with the wrong
trace.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from traces import models

HEADER = "Idempotency-Key"
MAX_LENGTH = 200


class KeyRefused(Exception):
    """A key that cannot be used: malformed (400) or reused for other bytes (422)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Earlier:
    """What an earlier upload with the key made: a trace, or a job still making one."""

    trace: models.Trace | None
    job: models.Job | None


def key_of(headers: Mapping[str, str]) -> str | None:
    """The request's key (`request.headers`), checked: printable ASCII, at most
    MAX_LENGTH characters."""
    key = headers.get(HEADER)
    if key is None:
        return None
    if not key or len(key) > MAX_LENGTH or not key.isascii() or not key.isprintable():
        raise KeyRefused(
            f"{HEADER} must be 1 to {MAX_LENGTH} printable ASCII characters.", status=400
        )
    return key


def files_sha256(files: Sequence[tuple[str, bytes]]) -> str:
    """One file: the SHA-256 of its bytes (what a background upload computes while writing
    it). Several: of each one's name and digest, in order."""
    if len(files) == 1:
        return hashlib.sha256(files[0][1]).hexdigest()
    listing = hashlib.sha256()
    for name, data in files:
        listing.update(f"{name}\0{hashlib.sha256(data).hexdigest()}\n".encode())
    return listing.hexdigest()


def earlier_upload(project: models.Project, key: str, sha256: str) -> Earlier | None:
    """The trace or job an earlier upload with `key` made in `project`, or None."""
    found = (
        models.UploadKey.objects.select_related("trace", "job")
        .filter(project=project, key=key)
        .first()
    )
    if found is None:
        return None
    if found.sha256 != sha256:
        raise KeyRefused(
            f"This {HEADER} was used for another upload; use a new key for new bytes.",
            status=422,
        )
    return Earlier(trace=found.trace, job=found.job)


def remembering(project: models.Project, key: str, sha256: str) -> Callable[[models.Trace], None]:
    """An `on_stored` hook (runs in the trace's transaction) that records the key."""

    def remember(trace: models.Trace) -> None:
        models.UploadKey.objects.create(project=project, key=key, sha256=sha256, trace=trace)

    return remember


def remember_job(job: models.Job, key: str, sha256: str) -> None:
    """Record the key of a background upload's job (call in the job's transaction)."""
    models.UploadKey.objects.create(project=job.project, key=key, sha256=sha256, job=job)
