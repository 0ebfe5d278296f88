"""The watcher: one pass over the agents' stores on this machine, importing what is new.

Each session found (`traces.core.discovery`) has a `WatchedSession` row saying how far
it was read. A new session becomes a trace: a JSONL file changed within
`LIVE_IDLE_SECONDS` is still being written, so it becomes a live trace fed through
`append_lines` (the path of `manage.py tail`, `traces.live.follow`); any other session
is imported whole through `trace_upload`. Later passes append a growing file's new
complete lines at the stored offset, close a live trace whose file has gone quiet, and
read again a session that was rewritten rather than appended (a JSON document, a
folder, a truncated log), replacing its trace in one transaction so each session keeps
one trace. A session or store that fails is recorded with the reason; the others go on.

This lives beside the live writes rather than in `traces.services`: it feeds live
traces, and the layers contract keeps services below live.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction

from traces import models
from traces.conf import inspector_settings
from traces.core.discovery import (
    HEAD_BYTES,
    Candidate,
    StoreScan,
    scan,
    session_files,
    session_hints,
    store_named,
)
from traces.core.reading.limits import InputRejected
from traces.live.follow import FileFollower
from traces.live.writes import (
    LiveError,
    TraceNotLive,
    append_lines,
    close_live_trace,
    create_live_trace,
)
from traces.services.deletion import traces_delete
from traces.services.upload import trace_upload

HEAD_CHECK_BYTES = 4096
"""Bytes at the top of an appended file that must not change: else it was rewritten."""
WHO = "watch"
"""How the audit log names the watcher."""

State = models.WatchedSession.State


@dataclass
class PassReport:
    """What one pass did, and every problem it met (path or store, and the reason)."""

    stores: list[StoreScan] = field(default_factory=list)
    found: int = 0
    imported: int = 0
    appended_lines: int = 0
    replaced: int = 0
    closed: int = 0
    unchanged: int = 0
    problems: list[str] = field(default_factory=list)
    bytes_read: int = 0
    stopped: bool = False
    """The pass was asked to stop before it was through."""

    def summary(self) -> str:
        return (
            f"{self.found} sessions in {len(self.stores)} stores: {self.imported} imported, "
            f"{self.appended_lines} lines appended, {self.replaced} replaced, "
            f"{self.closed} closed, {self.unchanged} unchanged, {len(self.problems)} problems"
        )


def watch_pass(
    *,
    home: Path,
    env: Mapping[str, str],
    roots: Sequence[Path] = (),
    only: Collection[str] = (),
    stopping: Callable[[], bool] = lambda: False,
) -> PassReport:
    """One pass over every store (or the stores keyed in `only`). When `stopping()` turns
    true between two sessions the pass ends there (`report.stopped`), and sessions not
    reached yet are not taken for gone."""
    report = PassReport()
    scans = [s for s in scan(home, env, roots) if not only or s.store.key in only]
    report.stores = scans
    rows = {row.path: row for row in models.WatchedSession.objects.all()}
    seen: set[str] = set()
    for found in scans:
        if found.problem:
            report.problems.append(f"{found.store.agent} ({found.location}): {found.problem}")
        for path, reason in found.skipped:
            report.problems.append(f"{path}: {reason}")
        for candidate in found.sessions:
            if stopping():
                report.stopped = True
                return report
            report.found += 1
            seen.add(str(candidate.path))
            _sync(candidate, rows.get(str(candidate.path)), report)
    _gone(rows, seen, scans, only, report)
    return report


def follow_pass(*, only: Collection[str] = ()) -> PassReport:
    """Between two passes: only the sessions followed live (of the stores keyed in `only`),
    each looked at with one stat and its new complete lines appended. No folder is listed,
    so this runs every WATCH_FOLLOW_SECONDS and an append reaches an open trace page well
    within a second, while the stores are scanned every interval. A file gone or gone
    quiet is left to the next full pass (which says so, or closes its trace)."""
    report = PassReport()
    rows = models.WatchedSession.objects.filter(state=State.LIVE)
    if only:
        rows = rows.filter(store__in=list(only))
    for row in rows:
        store = store_named(row.store)
        try:
            info = Path(row.path).stat()
        except OSError:
            continue
        if store is None or (info.st_size, info.st_mtime) == (row.size, row.mtime):
            continue
        candidate = Candidate(
            store, Path(row.location), Path(row.path), "file", info.st_size, info.st_mtime
        )
        if candidate.appends:
            report.found += 1
            _sync(candidate, row, report)
    return report


def follow_until(
    deadline: float,
    *,
    only: Collection[str] = (),
    wait: Callable[[float], bool] = lambda seconds: time.sleep(seconds) or False,
) -> None:
    """`follow_pass` every WATCH_FOLLOW_SECONDS until `deadline` (time.monotonic): the wait
    between two full passes, spent following live sessions. `wait(seconds)` sleeps and
    says whether to stop now (the machine page's Stop, a new store to watch)."""
    step = float(inspector_settings()["WATCH_FOLLOW_SECONDS"])
    while (left := deadline - time.monotonic()) > 0:
        if wait(min(step, left)):
            return
        follow_pass(only=only)


def _sync(candidate: Candidate, row: models.WatchedSession | None, report: PassReport) -> None:
    """Bring one session's trace up to date; a failure is recorded on its row."""
    try:
        if row is not None and row.state == State.MISSING and _unchanged(candidate, row):
            row.state, row.error = (State.DONE, "") if row.trace_id else (State.ERROR, row.error)
            row.save(update_fields=["state", "error", "updated_at"])  # its store is back
            report.unchanged += 1
        elif row is None or row.state == State.MISSING:
            _import(candidate, row, report)
            report.imported += 1
        elif row.state == State.LIVE and candidate.appends and _appended(candidate, row):
            unchanged = _unchanged(candidate, row)
            if not unchanged:
                _append(candidate, row, report)
            if _quiet(candidate):
                _close(candidate, row, report)
            elif unchanged:
                report.unchanged += 1
        elif _unchanged(candidate, row):
            report.unchanged += 1
            if row.state == State.ERROR:
                report.problems.append(f"{candidate.path}: {row.error}")
        elif not candidate.appends and _same_content(candidate, row):
            row.size, row.mtime = candidate.size, candidate.mtime
            row.save(update_fields=["size", "mtime", "updated_at"])
            report.unchanged += 1
        else:
            _import(candidate, row, report)
            report.replaced += 1
    except (InputRejected, LiveError, OSError, ValueError) as exc:
        reason = str(exc) or type(exc).__name__
        report.problems.append(f"{candidate.path}: {reason}")
        _record_error(candidate, row, reason)


def _unchanged(candidate: Candidate, row: models.WatchedSession) -> bool:
    return row.size == candidate.size and row.mtime == candidate.mtime


def _quiet(candidate: Candidate) -> bool:
    """No change for LIVE_IDLE_SECONDS: the agent is done with this session for now."""
    return time.time() - candidate.mtime >= float(inspector_settings()["LIVE_IDLE_SECONDS"])


def _head_digest(path: Path, upto: int) -> str:
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read(min(upto, HEAD_CHECK_BYTES))).hexdigest()


def _appended(candidate: Candidate, row: models.WatchedSession) -> bool:
    """The file only grew past what was read, its top unchanged (not a rewrite)."""
    return candidate.size >= row.offset and (
        _head_digest(candidate.path, row.offset) == row.head_sha256
    )


def _content_digest(files: list[tuple[str, bytes]]) -> str:
    digest = hashlib.sha256()
    for name, data in files:
        digest.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()


def _same_content(candidate: Candidate, row: models.WatchedSession) -> bool:
    """A document or folder touched but not changed (its bytes hash as before)."""
    return row.state == State.DONE and row.head_sha256 == _content_digest(session_files(candidate))


def _import(candidate: Candidate, row: models.WatchedSession | None, report: PassReport) -> None:
    """Read the whole session into a new trace (live when it is a JSONL file still being
    written), then, in one transaction, let go of the trace it had before."""
    old_trace_id = row.trace_id if row is not None else None
    with transaction.atomic():
        if candidate.appends and not _quiet(candidate):
            row = _start_live(candidate, row, report)
        else:
            row = _upload(candidate, row, report)
        if old_trace_id and old_trace_id != row.trace_id:
            old = list(models.Trace.objects.filter(pk=old_trace_id).defer("report"))
            traces_delete(traces=old, who=WHO, reason="its session was rewritten")


def _session_fields(trace: models.Trace, candidate: Candidate, head: bytes) -> None:
    """Fill the agent, working directory and session id its reader did not name."""
    hints = session_hints(candidate, head)
    changed = []
    for column, key in (
        ("agent", "agent"),
        ("working_dir", "project"),
        ("session_id", "session_id"),
    ):
        if not getattr(trace, column) and hints.get(key):
            setattr(trace, column, hints[key][: models.Trace._meta.get_field(column).max_length])
            changed.append(column)
    if changed:
        trace.save(update_fields=changed)


def _name(candidate: Candidate) -> str:
    return f"{candidate.store.agent}: {candidate.path.relative_to(candidate.location)}"


def _upload(
    candidate: Candidate, row: models.WatchedSession | None, report: PassReport
) -> models.WatchedSession:
    files = session_files(candidate)
    report.bytes_read += sum(len(data) for _, data in files)
    result = trace_upload(files=files, name=_name(candidate), format_name=candidate.store.format)
    _session_fields(result.trace, candidate, files[0][1][:HEAD_BYTES])
    head = (
        hashlib.sha256(files[0][1][:HEAD_CHECK_BYTES]).hexdigest()
        if candidate.appends
        else _content_digest(files)
    )
    return _save_row(
        candidate, row, trace=result.trace, state=State.DONE, offset=candidate.size, head=head
    )


def _start_live(
    candidate: Candidate, row: models.WatchedSession | None, report: PassReport
) -> models.WatchedSession:
    trace = create_live_trace(
        name=_name(candidate), format_name=candidate.store.format, filename=candidate.path.name
    )
    with open(candidate.path, "rb") as handle:
        _session_fields(trace, candidate, handle.read(HEAD_BYTES))
    row = _save_row(candidate, row, trace=trace, state=State.LIVE, offset=0, head="")
    row.lines_sent = 0
    _append(candidate, row, report)
    return row


def _append(candidate: Candidate, row: models.WatchedSession, report: PassReport) -> None:
    """Append the complete lines past the stored offset; a trace closed meanwhile (idle)
    is replaced by a fresh read of the whole file."""
    follower = FileFollower(candidate.path, start_at=row.offset)
    try:
        while lines := follower.read_lines():
            try:
                result = append_lines(trace_id=row.trace_id, offset=row.lines_sent, lines=lines)
            except (TraceNotLive, models.Trace.DoesNotExist):
                follower.close()
                _import(candidate, row, report)
                report.replaced += 1
                return
            report.appended_lines += result.accepted
            report.bytes_read += follower.complete_through - row.offset
            row.lines_sent = result.total
            # The digest covers the first min(offset, HEAD_CHECK_BYTES) bytes, as
            # `_appended` reads them: taken again while the last one covered fewer (an
            # append that crosses HEAD_CHECK_BYTES too, else the next pass takes the
            # file for rewritten and replaces the live trace under its viewers).
            covered = row.offset
            row.offset = follower.complete_through
            if not row.head_sha256 or covered < HEAD_CHECK_BYTES:
                row.head_sha256 = _head_digest(candidate.path, row.offset)
            row.save(update_fields=["lines_sent", "offset", "head_sha256", "updated_at"])
    finally:
        follower.close()
    row.size, row.mtime = candidate.size, candidate.mtime
    row.save(update_fields=["size", "mtime", "updated_at"])


def _close(candidate: Candidate, row: models.WatchedSession, report: PassReport) -> None:
    """The file went quiet: its unfinished last line (if any) goes in, the trace closes."""
    follower = FileFollower(candidate.path, start_at=row.offset)
    try:
        while lines := follower.read_lines():  # lines written since, if any
            row.lines_sent = append_lines(
                trace_id=row.trace_id, offset=row.lines_sent, lines=lines
            ).total
        if rest := follower.rest():
            row.lines_sent = append_lines(
                trace_id=row.trace_id, offset=row.lines_sent, lines=rest
            ).total
    except TraceNotLive:
        pass  # closed by the idle sweep already
    finally:
        follower.close()
    close_live_trace(trace_id=row.trace_id)
    row.state, row.offset = State.DONE, candidate.size
    row.save(update_fields=["state", "offset", "lines_sent", "updated_at"])
    report.closed += 1
    if candidate.companions:
        # Its subagents wrote files of their own, which the live trace did not follow:
        # now the session is done, it is read again whole, subagents under their calls.
        _import(candidate, row, report)


def _save_row(
    candidate: Candidate,
    row: models.WatchedSession | None,
    *,
    trace: models.Trace,
    state: str,
    offset: int,
    head: str,
) -> models.WatchedSession:
    row = row or models.WatchedSession(path=str(candidate.path))
    row.store, row.location = candidate.store.key, str(candidate.location)
    row.agent, row.format = candidate.store.agent, candidate.store.format
    row.trace, row.state, row.error = trace, state, ""
    row.offset, row.head_sha256 = offset, head
    row.size, row.mtime = candidate.size, candidate.mtime
    row.save()
    return row


def _record_error(candidate: Candidate, row: models.WatchedSession | None, reason: str) -> None:
    """The session could not be read: say why on its row (its earlier trace, if any, is
    kept), and look again only when the file changes."""
    row = row or models.WatchedSession(path=str(candidate.path))
    row.store, row.location = candidate.store.key, str(candidate.location)
    row.agent, row.format = candidate.store.agent, candidate.store.format
    row.state, row.error = State.ERROR, reason[:2000]
    row.size, row.mtime = candidate.size, candidate.mtime
    row.save()


def _gone(
    rows: dict[str, models.WatchedSession],
    seen: set[str],
    scans: list[StoreScan],
    only: Collection[str],
    report: PassReport,
) -> None:
    """Sessions read before and no longer found: their traces stay; the row says why."""
    scanned = {str(s.location) for s in scans if not s.problem}
    missing_stores: set[tuple[str, str]] = set()
    for path, row in rows.items():
        if path in seen or row.state == State.MISSING or (only and row.store not in only):
            continue
        if row.location in scanned:
            reason = "the session is gone (its trace is kept)"
        else:
            reason = f"its store {row.location} is gone (the trace is kept)"
            if (row.agent, row.location) not in missing_stores:
                missing_stores.add((row.agent, row.location))
                report.problems.append(f"{row.agent} ({row.location}): the store is gone")
        if row.state == State.LIVE and row.trace_id:
            close_live_trace(trace_id=row.trace_id)
        row.state, row.error = State.MISSING, reason
        row.save(update_fields=["state", "error", "updated_at"])
