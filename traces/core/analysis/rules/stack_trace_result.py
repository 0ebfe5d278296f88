"""Rule stack-trace-result."""

from __future__ import annotations

import re
from collections.abc import Iterator

from traces.core.patterns import lazy_compile
from traces.core.records import dataclass

from ._common import name_of, quote, sent_results
from .base import Finding, LintContext, Rule
from .registry import register


@dataclass(frozen=True, slots=True)
class _TraceShape:
    language: str
    header: re.Pattern[str] | None
    """A line that must be present (None: the frames alone are the evidence)."""
    frame: re.Pattern[str]


SHAPES = (
    _TraceShape(
        "Python",
        lazy_compile(r"^Traceback \(most recent call last\):", re.MULTILINE),
        lazy_compile(r'^\s+File "[^"\n]+", line \d+', re.MULTILINE),
    ),
    _TraceShape(
        "Go",
        lazy_compile(r"^goroutine \d+ \[[^\]\n]+\]:", re.MULTILINE),
        lazy_compile(r"^\t\S+\.go:\d+", re.MULTILINE),
    ),
    _TraceShape(
        "Java",
        None,
        lazy_compile(
            r"^\s+at [\w$.<>]+\((?:[\w$.-]+\.(?:java|kt|scala):\d+|Native Method|"
            r"Unknown Source)\)",
            re.MULTILINE,
        ),
    ),
    _TraceShape(
        "JavaScript",
        None,
        lazy_compile(r"^[ \t]+at (?:[^\n]{1,300}? \()?[^\s()]+:\d+:\d+\)?$", re.MULTILINE),
    ),
)
"""Traceback shapes, most specific first; a result counts as a trace with at least
`min_frames` frame lines (and the header line, for languages that print one)."""
_EXCEPTION_LINE = lazy_compile(r"^[\w.]*(?:Error|Exception|Exit|Interrupt)\b.*$", re.MULTILINE)


@register
class StackTraceResult(Rule):
    """A raw stack trace returned to the model as a tool result.

    What it finds
    A tool result holding a traceback with at least `min_frames` frame lines (default 2):
    Python (`Traceback (most recent call last):` and `File "...", line N` frames),
    JavaScript (`    at fn (file.js:10:5)`), Java (`\\tat com.x.Y(Y.java:10)`) or Go
    (`goroutine 1 [running]:` and `\\t/path/file.go:12` frames). It cannot tell a tool
    that crashed from one whose job is to show a program's output (a shell running
    tests); read those findings with that in mind.

    Why it matters
    A stack trace is hundreds of tokens of frames, re-sent on every later call, that
    say where the tool broke, not what the model should do next; it also leaks paths and
    internals to a model that may be reading injected instructions.

    Example
    `get_order("SU-88421")` returns 40 lines ending in `KeyError: 'total'` instead of
    "error: order SU-88421 has no total; it may be a draft".

    How to fix
    Catch exceptions at the tool boundary and return one short, actionable error result
    (`is_error: true`); log the trace for humans.
    """

    id = "stack-trace-result"
    severity = "warning"
    message = (
        "result of {name} ({tool_call_id}) is a raw {language} stack trace ({frames} frames"
        "{ending}); return a short error saying what failed and what to try"
    )
    defaults = {"min_frames": 2}

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        minimum = int(self.options["min_frames"])
        for sent in sent_results(ctx):
            found = find_trace(sent.block.text, minimum)
            if found is None:
                continue
            language, frames = found
            yield self.finding(
                sent.call,
                sent.block.tool_id,
                name=name_of(sent.run),
                language=language,
                frames=frames,
                ending=_ending(sent.block.text, language),
            )


def find_trace(text: str, min_frames: int) -> tuple[str, int] | None:
    """(language, frame count) of the first traceback shape the text holds."""
    if "\n" not in text:
        return None
    for shape in SHAPES:
        if shape.header is not None and not shape.header.search(text):
            continue
        frames = len(shape.frame.findall(text))
        if frames >= min_frames:
            return shape.language, frames
    return None


def _ending(text: str, language: str) -> str:
    """The exception line a Python trace ends with, quoted, when there is one."""
    if language != "Python":
        return ""
    lines = _EXCEPTION_LINE.findall(text)
    return f", ending {quote(lines[-1], 60)}" if lines else ""
