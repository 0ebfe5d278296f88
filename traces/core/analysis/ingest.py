"""One code path from bytes to a rebuilt `Trace`, for uploads, the CLI and live tail."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any

from traces.core.patterns import lazy_compile
from traces.core.records import dataclass, replace

from ..gcpause import without_cycle_collection
from ..model import Exchange, HttpTraffic, LineError, Score, ToolTiming, Trace
from ..reading.folders import archive_members
from ..reading.formats.base import Adapter
from ..reading.formats.detect import SNIFF_RECORDS, detect
from ..reading.formats.registry import get_adapter
from ..reading.limits import DEFAULT_LIMITS, InputRejected, Limits, NotATrace
from ..reading.records import Record
from ..reading.sources import stream_source
from .held import held_previews
from .rebuild import TraceBuilder

if TYPE_CHECKING:  # imported when a mapping is given (jmespath and the schema with it)
    from ..reading.mapping import Mapping


@dataclass(frozen=True, slots=True)
class FormatChoice:
    name: str
    reason: str


def choose_format(values: Sequence[object], format_name: str | None = None) -> FormatChoice:
    """The named adapter (an override), or the one detection picks, with its reason."""
    if format_name:
        try:
            adapter = get_adapter(format_name)
        except KeyError as exc:
            raise InputRejected(str(exc.args[0])) from None
        return FormatChoice(adapter.name, "chosen by you (format override)")
    choice = detect(values)
    return FormatChoice(choice.adapter.name, choice.reason)


class TraceSession:
    """Feeds records through one adapter into one builder, a few at a time or all at once."""

    def __init__(
        self, choice: FormatChoice, source_name: str = "", adapter: Adapter | None = None
    ) -> None:
        self.choice = choice
        self.shared: dict[str, object] = {}
        self.adapter: Adapter = adapter or get_adapter(choice.name)(source_name, self.shared)
        self.builder = TraceBuilder(choice.name, choice.reason)
        self.records_ingested = 0
        self.lines_total = 0
        self.earlier_scores: list[Score] = []
        """Scores read by the adapters of earlier files (`next_source` replaces them)."""

    def next_source(self, choice: FormatChoice, source_name: str) -> None:
        """Read another file into the same trace (e.g. a session's subagent files)."""
        if self.adapter.reads_folder and choice.name == self.adapter.name:
            self.adapter.source_name = source_name  # one reader for the whole tree
            return
        self._take(self.adapter.close(), counts=False)
        self.earlier_scores.extend(self.adapter.scores())
        self.adapter = get_adapter(choice.name)(source_name, self.shared)

    def feed(self, items: Iterable[Record | LineError]) -> None:
        feed_adapter = self.adapter.feed
        for item in items:
            if item.line > self.lines_total:
                self.lines_total = item.line
            if isinstance(item, LineError):
                self.builder.add_error(item)
            else:
                self._take(feed_adapter(item), counts=True)

    def _take(self, events: Iterable[Any], counts: bool) -> None:
        """Apply an adapter's events. A record counts as ingested when it produced a call
        or a tool timing, or nothing at all (adapters that buffer, e.g. one stream chunk
        per line, consume most records silently); one that only produced errors does not.
        """
        produced = False
        failed = False
        builder = self.builder
        for event in events:  # the kinds are unrelated classes: their order is the cost's
            if isinstance(event, Exchange):
                builder.add(event)
                produced = True
            elif isinstance(event, ToolTiming):
                builder.add_timing(event)
                produced = True
            elif isinstance(event, LineError):
                builder.add_error(event)
                failed = True
            elif isinstance(event, HttpTraffic):
                builder.add_traffic(event)
                produced = True
        if counts and (produced or not failed):
            self.records_ingested += 1

    def snapshot(self, lines_total: int | None = None) -> Trace:
        """The trace so far, for a live view: pending tool calls stay pending and the
        adapter keeps what it buffers; feeding may go on afterwards (see `finish`)."""
        total = self.lines_total if lines_total is None else lines_total
        return self.builder.snapshot(total, self.records_ingested)

    def held(self) -> list[dict[str, object]]:
        """Previews of the responses the adapter still holds (see `Adapter.held`)."""
        return held_previews(self.adapter.held())

    def finish(self, lines_total: int | None = None) -> Trace:
        self._take(self.adapter.close(), counts=False)
        total = self.lines_total if lines_total is None else lines_total
        trace = self.builder.finish(total, self.records_ingested)
        scores = (*self.earlier_scores, *self.adapter.scores())
        return replace(trace, scores=scores) if scores else trace


@without_cycle_collection
def analyze_bytes(
    data: bytes,
    *,
    filename: str = "",
    format_name: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
    mapping: Mapping | None = None,
    progress: Progress | None = None,
) -> Trace:
    """Read, detect, adapt and rebuild a whole file. Raises `InputRejected` for non-traces.

    Records stream through: each line is parsed, adapted and dropped in turn. With a
    `mapping` (a log of the user's own, described by a mapping file) no format is detected.
    `progress(records read, calls rebuilt)` is called now and then (a background ingest
    shows it while it runs).
    """
    members = archive_members(data, limits)
    if members is not None:  # a ZIP of a session folder: its files make one trace
        if not members:
            raise InputRejected("The ZIP archive holds no file with content.")
        return analyze_files(members, format_name=format_name, limits=limits, mapping=mapping)
    as_text = mapping is not None and mapping.lines is not None
    source = stream_source(data, filename, limits, text=as_text)
    items, head = _peek(source.items)
    values = [item.value for item in head if isinstance(item, Record)]
    if not values:
        errors = [item for item in head if isinstance(item, LineError)]
        reasons = "; ".join(f"line {e.line}: {e.message}" for e in errors[:3])
        raise InputRejected(f"No readable record in the file ({reasons}).")
    if mapping is not None:
        return _analyze_mapped([(filename, source.lines_total, items)], mapping)
    session = TraceSession(choose_format(values, format_name))
    session.feed(items if progress is None else _reporting(items, session, progress))
    trace = session.finish(source.lines_total)
    if progress is not None:
        progress(trace.records_ingested, len(trace.calls))
    if not trace.calls and not trace.tool_runs:
        raise _no_call(session, trace)
    return trace


Progress = Callable[[int, int], None]
"""Told (records read so far, calls rebuilt so far) during a long ingest."""

PROGRESS_EVERY = 0.25
"""Seconds between two progress reports."""


def _reporting(
    items: Iterable[Record | LineError], session: TraceSession, progress: Progress
) -> Iterator[Record | LineError]:
    """The items, unchanged, telling `progress` how far the session is every so often."""
    told = time.monotonic()
    for count, item in enumerate(items, start=1):
        yield item
        if count % 256 == 0 and time.monotonic() - told >= PROGRESS_EVERY:
            progress(count, len(session.builder.calls))
            told = time.monotonic()


def _analyze_mapped(sources: list[tuple[str, int, Iterable[Any]]], mapping: Mapping) -> Trace:
    """Files read with a mapping: one adapter for all of them, then what did not match."""
    from ..reading.mapping import FORMAT_NAME, MappedAdapter

    adapter = MappedAdapter(mapping)
    choice = FormatChoice(FORMAT_NAME, f"read with your mapping file {mapping.name}")
    session = TraceSession(choice, adapter=adapter)
    lines_total = 0
    for name, lines, items in sources:
        if len(sources) > 1:
            items = (
                LineError(i.line, f"{name}: {i.message}") if isinstance(i, LineError) else i
                for i in items
            )
        session.feed(items)
        lines_total += lines
    trace = session.finish(lines_total)
    adapter.check_calls_found(len(trace.calls))
    return replace(
        trace,
        notes=(*trace.notes, *adapter.notes()),
        mapping={"name": mapping.name, "spec": mapping.spec},
    )


PEEK_ITEMS = 200


def _peek(
    items: Iterable[Record | LineError],
) -> tuple[Iterator[Record | LineError], list[Record | LineError]]:
    """The first items (for detection: up to SNIFF_RECORDS records, or PEEK_ITEMS items when
    most are errors) and an iterator that still yields all of them."""
    iterator = iter(items)
    head: list[Record | LineError] = []
    records = 0
    for item in iterator:
        head.append(item)
        records += isinstance(item, Record)
        if records >= SNIFF_RECORDS or len(head) >= PEEK_ITEMS:
            break
    return chain(head, iterator), head


_SUBAGENT_FILE = lazy_compile(r"(^|[/\\])(agent-[^/\\]*\.jsonl|subagents[/\\].*)$")


def _is_subagent_file(name: str) -> bool:
    """Sessions are read before their subagents' files, so a subagent finds the tool call
    that spawned it whatever order the files were given in."""
    return bool(_SUBAGENT_FILE.search(name))


_COMPANION_FILE = lazy_compile(r"(^|[/\\])(ui_messages|task_metadata|session)\.json$")


def _read_order(name: str) -> int:
    """Companion files that annotate a conversation (a Cline task's ui_messages.json with
    each request's usage, a Cline SDK session.json with the project) are read first, so
    the conversation's calls get what they say whatever order the files were given in;
    subagents' files come last."""
    if _COMPANION_FILE.search(name):
        return 0
    return 2 if _is_subagent_file(name) else 1


@without_cycle_collection
def analyze_files(
    files: Sequence[tuple[str, bytes]],
    *,
    format_name: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
    mapping: Mapping | None = None,
) -> Trace:
    """Several files read into one trace, in order (a session and its subagents).

    Line numbers of unreadable lines are those of the file named in the message. A ZIP of
    a session folder among them stands for the files it holds (`reading.folders`).
    """
    if len(files) > 1:
        files = [
            member
            for name, data in files
            for member in (archive_members(data, limits) or [(name, data)])
        ]
    if len(files) == 1:
        name, data = files[0]
        return analyze_bytes(
            data, filename=name, format_name=format_name, limits=limits, mapping=mapping
        )
    if mapping is not None:
        sources = []
        for name, data in files:
            source = stream_source(data, name, limits, text=mapping.lines is not None)
            sources.append((name, source.lines_total, source.items))
        return _analyze_mapped(sources, mapping)
    session: TraceSession | None = None
    lines_total = 0
    for name, data in sorted(files, key=lambda item: _read_order(item[0])):
        source = stream_source(data, name, limits)
        stream, head = _peek(source.items)
        values = [item.value for item in head if isinstance(item, Record)]
        if not values:
            continue
        choice = choose_format(values, format_name)
        if session is None:
            session = TraceSession(choice, name)
        else:
            session.next_source(choice, name)
        items = (
            LineError(item.line, f"{name}: {item.message}") if isinstance(item, LineError) else item
            for item in stream
        )
        session.feed(items)
        lines_total += source.lines_total
    if session is None:
        raise InputRejected("None of the files holds a readable record.")
    trace = session.finish(lines_total)
    if not trace.calls and not trace.tool_runs:
        raise _no_call(session, trace)
    return trace


def _no_call(session: TraceSession, trace: Trace) -> InputRejected:
    """Why a readable file made no call: unreadable lines (an error), or a recognised file
    that holds none (`NotATrace`: an index file or an unanswered session, said so)."""
    format_name = session.choice.name
    notice = session.adapter.no_call_notice()
    if notice:
        return NotATrace(notice)
    if trace.line_errors:
        return InputRejected(
            f"Read as {format_name}, but no model call could be rebuilt: "
            + "; ".join(f"line {e.line}: {e.message}" for e in trace.line_errors[:3])
        )
    label = get_adapter(format_name).label or format_name
    return NotATrace(
        f"Read as {label} ({format_name}), but no model call could be rebuilt: "
        "the file holds no answered request."
    )
