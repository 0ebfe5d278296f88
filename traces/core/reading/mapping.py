"""Read a log of your own with a mapping file: JMESPath expressions that say where things are.

A homegrown loop log should not need a code change. A mapping (JSON or YAML, checked by
`mapping_spec` against `schemas/mapping.schema.json`, documented in docs/mapping.md) names
which records are model calls and where their request messages, response, tool calls,
tool results, usage and timestamps are; `MappedAdapter` applies it record by record, like
any adapter.
Expressions that never matched anything are reported with their line in the mapping file,
so a typo does not silently read as "no usage".

What real stores do beyond one JSON record per event has a key each: `lines` splits a
text log into records by a pattern (`mapping_lines`), `records` unwraps a document,
`dedupe` collapses records that repeat an id (`mapping_dedupe`), tool calls and results
without ids pair by order and name (`mapping_pairing`), and `from_json(...)` reads a value
that is a JSON string (`expression_budget`). A record goes through them in that order.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from traces.core.records import dataclass, field

from ..coerce import parse_arguments, str_or_none
from ..coerce import text_of as _text_of
from ..model import Exchange, LineError, ToolTiming, Usage
from .dialects import anthropic
from .formats.base import Adapter, AdapterEvent
from .formats.explain import describe_record
from .limits import InputRejected
from .mapping_dedupe import Deduper
from .mapping_lines import LineSplitter, PatternRefused
from .mapping_pairing import RESULT_NAME, Waiting, name_calls, pair_transcript
from .mapping_spec import Expression, Mapping, MappingError, load_mapping
from .records import Record
from .timeparse import to_epoch_seconds
from .transcript import TranscriptView

FORMAT_NAME = "mapping"
__all__ = ["FORMAT_NAME", "Expression", "MappedAdapter", "Mapping", "MappingError", "load_mapping"]


@dataclass(slots=True, eq=False)
class _Loop:
    messages: list[Any] = field(default_factory=list)
    pending: list[Any] = field(default_factory=list)
    waiting: Waiting = field(default_factory=Waiting)
    """Tool calls its responses asked for that no result record has answered yet."""


class MappedAdapter(Adapter):
    """Applies a `Mapping` to each record; not registered (it needs its mapping)."""

    name = FORMAT_NAME
    label = "Your log, read with a mapping file"
    where = "Any JSON/JSONL/YAML log, described by a mapping file (see docs/mapping.md)."
    normalize = staticmethod(anthropic.normalize_message)

    def __init__(
        self,
        mapping: Mapping,
        source_name: str = "",
        shared: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(source_name, shared)
        self.mapping = mapping
        self.hits: dict[str, int] = dict.fromkeys(mapping.expressions, 0)
        self.tried: dict[str, int] = dict.fromkeys(mapping.expressions, 0)
        self.records_seen = 0
        self.first_records: list[Any] = []
        self._loops: dict[str, _Loop] = {}
        self._splitter = LineSplitter(mapping.lines) if mapping.lines is not None else None
        self._deduper = Deduper(mapping.dedupe_keep) if mapping.get("dedupe") else None

    @classmethod
    def sniff(cls, values: Sequence[Any]) -> None:
        return None

    # -- evaluating -----------------------------------------------------------------------
    def _eval(self, key: str, value: Any) -> Any:
        expression = self.mapping.get(key)
        if expression is None:
            return None
        self.tried[key] += 1
        found = expression.search(value)
        if found is not None and found != [] and found is not False:
            self.hits[key] += 1
        return found

    def unmatched(self) -> list[Expression]:
        """Expressions that never gave a value (a typo, or data the log does not hold)."""
        return [
            expression
            for key, expression in self.mapping.expressions.items()
            if self.hits[key] == 0
        ]

    # -- records --------------------------------------------------------------------------
    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        if self._splitter is None:
            yield from self._unwrapped(record.line, record.value)
            return
        if not isinstance(record.value, str):  # a JSON file given a line pattern
            return
        for line, fields in self._split(self._splitter.feed, record.line, record.value):
            yield from self._unwrapped(line, fields)

    def close(self) -> Iterator[AdapterEvent]:
        if self._splitter is not None:
            for line, fields in self._split(self._splitter.close):
                yield from self._unwrapped(line, fields)
        if self._deduper is not None:
            for line, value in self._deduper.close():
                yield from self._record(line, value)

    def _split(self, step: Any, *args: Any) -> list[tuple[int, dict[str, Any]]]:
        try:
            return list(step(*args))
        except PatternRefused as exc:
            assert self.mapping.lines is not None
            raise MappingError(
                f"The mapping {self.mapping.filename}: lines.pattern (line "
                f"{self.mapping.lines.line}) was stopped: {exc}."
            ) from None

    def _unwrapped(self, line: int, value: Any) -> Iterator[AdapterEvent]:
        if self.mapping.get("records") is not None:
            items = self._eval("records", value)
            if not isinstance(items, list):
                return
            for position, item in enumerate(items, start=1):
                yield from self._deduped(position if len(items) > 1 else line, item)
        else:
            yield from self._deduped(line, value)

    def _deduped(self, line: int, value: Any) -> Iterator[AdapterEvent]:
        if self._deduper is None:
            yield from self._record(line, value)
            return
        for kept_line, kept in self._deduper.offer(line, value, self._eval("dedupe", value)):
            yield from self._record(kept_line, kept)

    def _record(self, line: int, value: Any) -> Iterator[AdapterEvent]:
        self.records_seen += 1
        if len(self.first_records) < 3:
            self.first_records.append(value)
        if self._eval("calls.where", value):
            yield from self._call(line, value)
        elif self.mapping.get("tool_results.where") and self._eval("tool_results.where", value):
            yield from self._result_record(line, value)

    def _loop(self, value: Any) -> tuple[str, _Loop]:
        key = self._eval("calls.loop", value)
        name = "log" if key is None else str(key)
        return name, self._loops.setdefault(name, _Loop())

    def _call(self, line: int, value: Any) -> Iterator[AdapterEvent]:
        key, loop = self._loop(value)
        raw_messages = self._eval("calls.messages", value)
        if self.mapping.get("calls.messages") is not None:
            if not isinstance(raw_messages, list):
                raw_messages = []
            request: Sequence[Any] = [self._message(m, "user") for m in raw_messages]
            pair_transcript(list(request), key)
        else:
            if loop.pending:
                loop.messages.append({"role": "user", "content": loop.pending})
                loop.pending = []
            request = TranscriptView(loop.messages, len(loop.messages))
        raw_response = self._eval("calls.response", value)
        response = self._message(raw_response, "assistant") if raw_response is not None else None
        if response is not None:
            name_calls(response, key, len(request) + 1, loop.waiting)
        if response is not None and self.mapping.get("calls.messages") is None:
            loop.messages.append(response)
        error = self._eval("calls.error", value)
        stop = str_or_none(self._eval("calls.stop_reason", value))
        if stop is None and response is not None:
            uses = [b for b in response["content"] if b.get("type") == "tool_use"]
            stop = "tool_use" if uses else "end_turn"
        yield Exchange(
            line=line,
            messages=request,
            normalize=self.normalize,
            model=str_or_none(self._eval("calls.model", value)),
            response=anthropic.normalize_message(response) if response is not None else None,
            response_raw=raw_response,
            stop_reason=stop,
            usage=self._usage(value),
            started_at=to_epoch_seconds(self._eval("calls.started_at", value)),
            ended_at=to_epoch_seconds(self._eval("calls.ended_at", value)),
            status="error" if error not in (None, False, "") else "ok",
            error=None if error in (None, False, "") else _text_of(error),
            loop_key=f"mapping:{key}",
            loop_label=None if key == "log" else key,
            request_recorded=self.mapping.get("calls.messages") is not None,
        )

    def _message(self, raw: Any, default_role: str) -> dict[str, Any]:
        """One message of the log as an Anthropic-shaped message (our canonical raw form)."""
        if isinstance(raw, str):
            return {"role": default_role, "content": [{"type": "text", "text": raw}]}
        role = str_or_none(self._eval("messages.role", raw)) or default_role
        content: list[dict[str, Any]] = []
        result_id = str_or_none(self._eval("messages.tool_result_id", raw))
        result_name = str_or_none(self._eval("messages.tool_result_name", raw))
        text = self._eval("messages.text", raw)
        if result_id is not None or result_name is not None or role == "tool":
            body = self._eval("messages.tool_result_content", raw)
            content.append(
                {
                    "type": "tool_result",
                    "tool_use_id": result_id,  # None: paired by order and name
                    "content": _text_of(text if body is None else body),
                    "is_error": bool(self._eval("messages.tool_result_error", raw)),
                    **({RESULT_NAME: result_name} if result_id is None else {}),
                }
            )
        elif text not in (None, ""):
            content.append({"type": "text", "text": _text_of(text)})
        calls = self._eval("messages.tool_calls", raw)
        for call in calls if isinstance(calls, list) else []:
            content.append(
                {
                    "type": "tool_use",
                    "id": str_or_none(self._eval("tool_calls.id", call)),
                    "name": str_or_none(self._eval("tool_calls.name", call)),
                    "input": parse_arguments(self._eval("tool_calls.arguments", call)),
                }
            )
        return {"role": "user" if role == "tool" else role, "content": content}

    def _result_record(self, line: int, value: Any) -> Iterator[AdapterEvent]:
        name = str_or_none(self._eval("tool_results.name", value))
        key, loop = self._loop(value)
        expression = self.mapping.get("tool_results.id")
        if expression is None:  # no ids in this log: the oldest call waiting, by name
            tool_id = loop.waiting.answer(name) or f"{key}:result@{line}"
        else:
            found = str_or_none(self._eval("tool_results.id", value))
            if found is None:
                yield LineError(
                    line,
                    f"a tool result record, but tool_results.id ({expression.source!r}, "
                    f"mapping line {expression.line}) found no id in it",
                )
                return
            tool_id = found
            loop.waiting.answered(tool_id)
        text = _text_of(self._eval("tool_results.content", value))
        failed = bool(self._eval("tool_results.error", value))
        if self.mapping.get("calls.messages") is None:
            loop.pending.append(
                {"type": "tool_result", "tool_use_id": tool_id, "content": text, "is_error": failed}
            )
        yield ToolTiming(
            line,
            tool_id,
            name=name,
            started_at=to_epoch_seconds(self._eval("tool_results.started_at", value)),
            ended_at=to_epoch_seconds(self._eval("tool_results.ended_at", value)),
            is_error=failed,
            result_text=text,
        )

    def _usage(self, value: Any) -> Usage | None:
        fields = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
        found = {name: self._eval(f"usage.{name}", value) for name in fields}
        counts = {k: v for k, v in found.items() if isinstance(v, int) and not isinstance(v, bool)}
        if not counts:
            return None
        usage = {name: max(0, counts.get(name, 0)) for name in fields}
        if self.mapping.input_includes_cached:
            cached = usage["cache_read_tokens"] + usage["cache_write_tokens"]
            usage["input_tokens"] = max(0, usage["input_tokens"] - cached)
        return Usage(**usage)

    # -- after the file -------------------------------------------------------------------
    def check_calls_found(self, calls: int) -> None:
        """No record was a model call: say which expression and what the records look like."""
        if calls:
            return
        where = self.mapping.expressions["calls.where"]
        splitter = self._splitter
        if splitter is not None and not splitter.lines_matched:
            shown = "; ".join(repr(text) for text in splitter.first_lines)
            raise InputRejected(
                f"The mapping {self.mapping.filename}: lines.pattern (line "
                f"{splitter.pattern.line}) matched none of the {splitter.lines_seen} lines, so "
                f"there is no record to read. The first lines: {shown}."
            )
        shown = "; ".join(
            f"record {i} is {describe_record(v)}" for i, v in enumerate(self.first_records, 1)
        )
        raise InputRejected(
            f"The mapping {self.mapping.filename}: calls.where ({where.source!r}, line "
            f"{where.line}) matched none of the {self.records_seen} records, so no model call "
            f"was found. {shown}."
        )

    def notes(self) -> list[str]:
        notes = [
            f"mapping {self.mapping.filename}, line {e.line}: {e.field} ({e.source!r}) matched "
            f"nothing in {self.tried[e.field]} evaluation(s)"
            for e in self.unmatched()
        ]
        if self._splitter is not None:
            notes += [f"mapping {self.mapping.filename}: {n}" for n in self._splitter.notes()]
        if self._deduper is not None and self._deduper.collapsed:
            dedupe = self.mapping.expressions["dedupe"]
            notes.append(
                f"mapping {self.mapping.filename}, line {dedupe.line}: dedupe "
                f"({dedupe.source!r}) collapsed {self._deduper.collapsed} repeated record(s), "
                f"keeping the {self._deduper.keep} of each"
            )
        return notes
