"""The streaming adapter interface every format implements."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar

from traces.core.records import dataclass

from ...model import Exchange, HttpTraffic, LineError, Message, Score, ToolTiming
from ..records import Record

AdapterEvent = Exchange | LineError | ToolTiming | HttpTraffic


@dataclass(frozen=True, slots=True)
class Detection:
    """An adapter's claim on a file: higher scores win; the reason is shown to the user."""

    score: float
    reason: str


class Adapter:
    """Reads one format's records, one at a time, and emits canonical events.

    The same instance serves a whole upload, a CLI run or a live tail, so it may keep
    state between records (e.g. to join lines that belong to one response).
    """

    name: ClassVar[str] = ""
    """Stable id, used in reports and `--format`."""
    label: ClassVar[str] = ""
    """Human name of the format."""
    where: ClassVar[str] = ""
    """Where users find such files, for the README and the upload page."""
    markers: ClassVar[tuple[str, ...]] = ()
    """Top-level keys this format's records carry, so that a file no format claims can be
    told which formats came closest and what they missed (see `explain`)."""
    reads_text: ClassVar[bool] = False
    """A text log, not JSON (aider's Markdown history): a file that is not JSON, YAML or
    ZIP is read as text lines (`Record(line, str)`) when such a format's `sniff` claims its
    first lines (see `sources` and `records.read_text`)."""
    reads_folder: ClassVar[bool] = False
    """A store kept as a tree of small files (OpenCode's storage/): one instance reads
    every file of the trace in turn and rebuilds the calls in `close`, once all are read,
    so that they follow the store's own order, not the order the files were given in."""

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        self.source_name = source_name
        """The file being read (several files can make one trace, e.g. subagents)."""
        self.shared: dict[str, Any] = shared if shared is not None else {}
        """State shared by the adapters of one trace's files (keyed by adapter name)."""

    @staticmethod
    def normalize(raw: Any) -> Message:
        """Turn one of this format's raw messages into a canonical `Message`."""
        raise NotImplementedError

    @classmethod
    def normalizer_for(cls, messages: Sequence[Any]) -> Callable[[Any], Message]:
        """How to read the messages of one request (and its response) where they sit in
        it. Most formats read a message on its own; formats whose tool ids depend on the
        position (Gemini's name-and-order ids) override this."""
        return cls.normalize

    @classmethod
    def sniff(cls, values: Sequence[Any]) -> Detection | None:
        """Look at the first parsed records and claim the file, or not."""
        raise NotImplementedError

    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        """Consume one record; yield zero or more events."""
        raise NotImplementedError

    def close(self) -> Iterator[AdapterEvent]:
        """The input ended: flush whatever is buffered."""
        return iter(())

    def scores(self) -> tuple[Score, ...]:
        """What the file's scorers said of its runs (an eval log's samples); most formats
        score nothing."""
        return ()

    def no_call_notice(self) -> str | None:
        """What the file read is, when it holds no model call by nature (an agent's index
        or metadata file beside its sessions, a session whose requests all went unanswered):
        said instead of the generic refusal, with what to upload instead."""
        return None

    def held(self) -> list[tuple[Exchange, bool]]:
        """Responses read so far but not yet emitted (a later line may still add to them),
        as exchanges `close` would emit now, each with whether a later line of its
        conversation has shown it complete. Reading them changes nothing: a live tail
        shows them at once, marked as possibly still growing."""
        return []
