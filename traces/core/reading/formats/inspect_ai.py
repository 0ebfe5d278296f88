"""Inspect AI eval logs: every `model` event of every sample is one model call.

Shapes read (Inspect's `EvalLog`, log format version 2, see `inspect_ai/log/_log.py`,
`inspect_ai/event/` and `inspect_ai/model/_chat_message.py`):
- a `.json` log: one document `{version, status, eval, plan, results, stats, error,
  samples: [...]}`;
- a `.eval` log: a ZIP that `containers` reads into `{"zip_member", "value"}` records, the
  header first (`header.json`, or `_journal/start.json` + `results.json` for an eval still
  running or an older archive), then one record per `samples/<id>_epoch_<n>.json`;
- a bare sample object `{id, epoch, events, messages, attachments, ...}` (e.g. extracted).

Each sample is read by `inspect_sample`: one call per `model` event, placed in the loop
of its sample, scorer or tool, with the tool timings of its `tool` events.

Messages, their `attachment://` references and usage (whether `input_tokens` includes
the cached tokens) are read by `dialects.inspect_ai`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from ...formatting import score_value
from ...model import LineError, Message, Score
from ..containers import HEADER_MEMBERS, SAMPLE_MEMBER
from ..dialects import inspect_ai as inspect
from ..records import Record
from ._index import inspect_ai as scoring
from ._index.inspect_ai import _is_log, _is_sample
from .base import Adapter, AdapterEvent, Detection
from .inspect_sample import LogHeader, SampleReader
from .registry import register


@register
class InspectAIAdapter(Adapter):
    name = "inspect-ai"
    label = "Inspect AI eval log"
    where = (
        "Written by `inspect eval` into ./logs/ (or $INSPECT_LOG_DIR): "
        "`<time>_<task>_<id>.eval` (a ZIP archive) or `.json` with `--log-format=json`."
    )

    @staticmethod
    def normalize(raw: Any) -> Message:
        """An Inspect ChatMessage, without attachment resolution (no sample at hand)."""
        return inspect.normalize_message(raw)

    @classmethod
    def sniff(cls, values: Sequence[Any]) -> Detection | None:
        return scoring.sniff(values)

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        self.header = LogHeader()
        self.samples_read = 0
        self.header_line: int | None = None
        self.sample_scores: list[Score] = []

    def scores(self) -> tuple[Score, ...]:
        return tuple(self.sample_scores)

    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        return errors_first(self._read(record))

    def _read(self, record: Record) -> Iterator[AdapterEvent]:
        value = record.value
        if not isinstance(value, dict):
            yield LineError(record.line, "expected an Inspect AI log, header or sample object")
            return
        member = value.get("zip_member")
        if isinstance(member, str):
            yield from self._member(record.line, member, value.get("value"))
        elif _is_log(value):
            yield from self._log(record.line, value)
        elif _is_sample(value):
            yield from self._sample(record.line, value, None)
        else:
            yield LineError(
                record.line, "not an Inspect AI eval log (no 'eval' and 'samples', no sample)"
            )

    def close(self) -> Iterator[AdapterEvent]:
        if self.samples_read == 0 and self.header_line is not None:
            yield LineError(self.header_line, _no_samples_reason(self.header))

    # -- records ---------------------------------------------------------------------------
    def _member(self, line: int, name: str, value: Any) -> Iterator[AdapterEvent]:
        if not isinstance(value, dict):
            yield LineError(line, f"{name}: expected a JSON object")
        elif name in HEADER_MEMBERS:
            self.header.read(value)
            self.header_line = self.header_line or line
        elif SAMPLE_MEMBER.match(name):
            yield from self._sample(line, value, None)
        else:
            yield LineError(line, f"{name}: not part of an Inspect AI log")

    def _log(self, line: int, log: dict[str, Any]) -> Iterator[AdapterEvent]:
        self.header.read(log)
        samples = log.get("samples")
        if not samples:
            self.header_line = line
            return
        if not isinstance(samples, list):
            yield LineError(line, "the log's 'samples' is not a list")
            return
        for position, sample in enumerate(samples, start=1):
            yield from self._sample(line, sample, position)

    def _sample(self, line: int, sample: Any, position: int | None) -> Iterator[AdapterEvent]:
        if not isinstance(sample, dict):
            yield LineError(line, f"sample #{position or '?'} is not a JSON object")
            return
        self.samples_read += 1
        self.sample_scores.extend(sample_scores(sample))
        yield from SampleReader(self.header, line, sample).read()


MAX_SCORE_TEXT = 2000
"""A scorer's answer and explanation are kept up to this many characters (a model-graded
explanation runs to pages; the original keeps all of it)."""


def sample_scores(sample: dict[str, Any]) -> Iterator[Score]:
    """A sample's `scores` (`{scorer: {value, answer, explanation, metadata}}`, or the
    older single `score`), each value as text; odd entries are skipped, never fatal."""
    scores = sample.get("scores")
    if not isinstance(scores, dict) and isinstance(sample.get("score"), dict):
        scores = {"score": sample["score"]}
    if not isinstance(scores, dict):
        return
    epoch = sample.get("epoch")
    name = f"{sample.get('id')}" + (f" (epoch {epoch})" if epoch not in (None, 1) else "")
    for scorer, entry in scores.items():
        if not isinstance(entry, dict) or "value" not in entry:
            continue
        answer, explanation = entry.get("answer"), entry.get("explanation")
        yield Score(
            sample=name[:200],
            scorer=str(scorer)[:200],
            value=score_value(entry["value"])[:MAX_SCORE_TEXT],
            answer=answer[:MAX_SCORE_TEXT] if isinstance(answer, str) else "",
            explanation=explanation[:MAX_SCORE_TEXT] if isinstance(explanation, str) else "",
        )


def errors_first(events: Iterator[AdapterEvent]) -> Iterator[AdapterEvent]:
    """A record's LineErrors before its calls: the session counts a record as ingested
    when its last event is not an error, and one bad event must not discount a sample."""
    held = list(events)
    yield from (event for event in held if isinstance(event, LineError))
    yield from (event for event in held if not isinstance(event, LineError))


def _no_samples_reason(header: LogHeader) -> str:
    if header.has_samples_flag is False:
        return "the log holds no samples: it was written with log_samples=False"
    status = f" (status {header.status})" if header.status else ""
    return f"the log holds no samples{status}: only its header was written"
