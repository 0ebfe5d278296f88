"""What a lint rule is: a stable id, a severity, a message template, documented thresholds
and a pure `check` over a `LintContext`.

A rule's docstring has the sections `What it finds`, `Why it matters`, `Example` and
`How to fix`; the web's /rules/ pages are generated from it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import cached_property
from typing import Any, ClassVar

from traces.core.patterns import lazy_compile
from traces.core.records import dataclass, field

from ...model import Call, Message, Trace
from ...report_types import FindingEntry, Severity
from ..accounting import Accounting

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


@dataclass(frozen=True, slots=True)
class Finding:
    """One defect found by one rule, tied to a call and (when there is one) a tool call id."""

    rule: str
    severity: Severity
    message: str
    call: int | None = None
    tool_call_id: str | None = None
    loop: int | None = None
    data: Mapping[str, Any] = field(default_factory=dict)

    def as_dict(self) -> FindingEntry:
        return {
            "rule": self.rule,
            "severity": self.severity,
            "call": self.call,
            "tool_call_id": self.tool_call_id,
            "loop": self.loop,
            "message": self.message,
        }


class LintContext:
    """Read-only views of a trace that several rules need, computed once."""

    def __init__(
        self, trace: Trace, accounting: Accounting, options: Mapping[str, Any] | None = None
    ) -> None:
        self.trace = trace
        self.accounting = accounting
        self.options = options or {}

    def call(self, index: int) -> Call:
        return self.trace.calls[index - 1]

    @cached_property
    def loop_calls(self) -> dict[int, list[Call]]:
        """Calls of each loop, in order."""
        loops: dict[int, list[Call]] = {}
        for call in self.trace.calls:
            loops.setdefault(call.loop, []).append(call)
        return loops

    @cached_property
    def _positions(self) -> dict[int, int]:
        """Each call's position within its loop, so neighbours are found in O(1)."""
        return {
            call.index: position
            for calls in self.loop_calls.values()
            for position, call in enumerate(calls)
        }

    def next_in_loop(self, call: Call) -> Call | None:
        calls = self.loop_calls[call.loop]
        position = self._positions[call.index]
        return calls[position + 1] if position + 1 < len(calls) else None

    @cached_property
    def transcripts(self) -> dict[int, list[Message]]:
        """The full normalised message list of every call's request, rebuilt from deltas."""
        running: dict[int, list[Message]] = {}
        out: dict[int, list[Message]] = {}
        for call in self.trace.calls:
            base = running.get(call.loop, [])
            messages = base[: call.prefix_len] + list(call.appended)
            running[call.loop] = messages
            out[call.index] = messages
        return out

    def tool_names(self, call: Call) -> set[str]:
        """Names of the tools the request offered."""
        names = set()
        for tool in call.tools:
            if isinstance(tool, dict):
                name = tool.get("name")
                if name is None and isinstance(tool.get("function"), dict):
                    name = tool["function"].get("name")
                if isinstance(name, str):
                    names.add(name)
        return names

    def tool_schema(self, call: Call, name: str) -> Any:
        for tool in call.tools:
            if not isinstance(tool, dict):
                continue
            nested = tool.get("function")
            function = nested if isinstance(nested, dict) else tool
            if function.get("name") == name:
                return (
                    function.get("input_schema")
                    or function.get("parameters")
                    or tool.get("input_schema")
                )
        return None


class Rule:
    """Base class: subclasses set the class attributes and implement `check`."""

    id: ClassVar[str] = ""
    """Stable kebab-case id; retired ids are never reused."""
    severity: ClassVar[Severity] = "warning"
    message: ClassVar[str] = ""
    """One-line template, formatted with the finding's fields."""
    defaults: ClassVar[dict[str, Any]] = {}
    """Thresholds and their defaults; overridable per run."""

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        self.options = {**self.defaults, **(options or {})}

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        raise NotImplementedError

    def finding(
        self,
        call: Call | int | None,
        tool_call_id: str | None = None,
        **fields: Any,
    ) -> Finding:
        index: int | None
        loop: int | None
        if isinstance(call, Call):
            index, loop = call.index, call.loop
        else:
            index, loop = call, fields.pop("loop", None)
        # Ids and names are the trace's own text: a 200,000-character id would make
        # every page that lists the finding that long (the finding's fields keep it whole).
        named = {**fields, "name": _clip(fields["name"])} if "name" in fields else fields
        message = self.message.format(call=index, tool_call_id=_clip(tool_call_id), **named)
        return Finding(
            rule=self.id,
            severity=self.severity,
            message=message,
            call=index,
            tool_call_id=tool_call_id,
            loop=loop,
            data=fields,
        )

    @classmethod
    def documentation(cls) -> dict[str, str]:
        """The docstring's sections, keyed by heading (summary under 'summary')."""
        return parse_sections(cls.__doc__ or "")


NAME_CHARS = 120


def _clip(value: Any) -> Any:
    """An id or name cut to NAME_CHARS for a message."""
    if isinstance(value, str) and len(value) > NAME_CHARS:
        return value[: NAME_CHARS - 1] + "…"
    return value


_HEADING = lazy_compile(r"^(What it finds|Why it matters|Example|How to fix)\s*:?\s*$", re.I)


def parse_sections(doc: str) -> dict[str, str]:
    lines = [line.strip() for line in doc.strip().splitlines()]
    sections: dict[str, list[str]] = {"summary": []}
    current = "summary"
    for line in lines:
        match = _HEADING.match(line)
        if match:
            current = match.group(1).lower()
            sections[current] = []
        else:
            sections[current].append(line)
    return {key: "\n".join(value).strip() for key, value in sections.items()}
