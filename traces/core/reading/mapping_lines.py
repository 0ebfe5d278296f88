"""A mapping's line pattern: a text log split into records by a regular expression.

Many loops log text, not JSON (`2025-06-01 10:00:01 LLM model=... tokens=...`). A mapping's
`lines.pattern` is a regular expression with named groups: each line it matches starts a
record whose fields are the groups (strings, for the other expressions to read; a JSON
payload in a group is read with `from_json`). A line it does not match continues the
record before it when `lines.continuation` names a group (a message that runs over
several lines), and is otherwise skipped and counted (see `LineSplitter.notes`).

The pattern is user input run against every line, so it is bounded: at most
`MAX_PATTERN_CHARS`, and refused when it nests a repeat inside a repeat, repeats an
alternation or uses a back-reference, the constructs that backtrack exponentially. What
is left can still be polynomial on a long line (`(.*) (.*) (.*)x`): when the `regex`
module is installed each match gets a timeout, and the time all matches of one file take
is bounded either way (`MAX_MATCH_SECONDS`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

from traces.core.records import dataclass, field

from .limits import InputRejected

try:  # optional: only its per-match timeout is used
    import regex as _regex  # type: ignore[import-untyped]
except ImportError:  # pragma: no cover - the standard module is used then
    _regex = None

MAX_PATTERN_CHARS = 1000
MATCH_TIMEOUT_SECONDS = 0.5
"""Longest one line's match may take (with the `regex` module)."""
MAX_MATCH_SECONDS = 20.0
"""Longest the matches of one file may take together."""

_REPEATS = ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")


class PatternRefused(InputRejected):
    """The line pattern cannot be used (the message says why; the mapping adds where)."""


def _parse(pattern: str) -> Any:
    import re._parser as sre_parse  # type: ignore[import-not-found]  # private, stable since 3.11

    return sre_parse.parse(pattern)


def backtracking_problem(pattern: str) -> str | None:
    """Why a (valid) pattern could backtrack exponentially, or None."""
    stack: list[tuple[Any, bool]] = [(_parse(pattern), False)]
    while stack:
        items, repeated = stack.pop()
        for op, av in items:
            name = str(op)
            if name in _REPEATS:
                low, high, body = av
                if repeated and high != low:
                    return "it repeats a repeat (a nested quantifier such as (a+)+)"
                stack.append((body, repeated or high > 1))
            elif name == "BRANCH":
                if repeated:
                    return "it repeats an alternation (such as (a|ab)*)"
                stack.extend((branch, repeated) for branch in av[1])
            elif name in ("GROUPREF", "GROUPREF_EXISTS"):
                return "it uses a back-reference"
            elif name in ("SUBPATTERN", "ASSERT", "ASSERT_NOT", "ATOMIC_GROUP"):
                stack.append((av[-1], repeated))
    return None


@dataclass(frozen=True, slots=True)
class LinePattern:
    """A checked, compiled line pattern and the group that continuation lines extend."""

    source: str
    line: int
    compiled: Any
    groups: tuple[str, ...]
    continuation: str | None = None


def compile_pattern(source: str, continuation: str | None, line: int) -> LinePattern:
    """Check and compile `lines.pattern`; PatternRefused says what is wrong with it."""
    if len(source) > MAX_PATTERN_CHARS:
        raise PatternRefused(f"it is over {MAX_PATTERN_CHARS:,} characters")
    try:
        checked = re.compile(source)
    except (re.error, RecursionError, OverflowError) as exc:
        raise PatternRefused(f"it is not a valid regular expression ({exc})") from None
    groups = tuple(checked.groupindex)
    if not groups:
        raise PatternRefused("it has no named group (?P<name>...) to make a field of")
    problem = backtracking_problem(source)
    if problem is not None:
        raise PatternRefused(f"{problem}, which can take exponential time")
    if continuation is not None and continuation not in groups:
        raise PatternRefused(
            f"lines.continuation {continuation!r} is not one of its groups ({', '.join(groups)})"
        )
    compiled = _regex.compile(source) if _regex is not None else checked
    return LinePattern(source, line, compiled, groups, continuation)


@dataclass(slots=True)
class LineSplitter:
    """Splits the text lines of one log into records, one line at a time."""

    pattern: LinePattern
    lines_seen: int = 0
    lines_matched: int = 0
    skipped: list[int] = field(default_factory=list)
    """Line numbers of the first lines no record took."""
    skipped_count: int = 0
    continued: int = 0
    first_lines: list[str] = field(default_factory=list)
    seconds: float = 0.0
    _open: tuple[int, dict[str, Any]] | None = None

    def feed(self, line: int, text: str) -> Iterator[tuple[int, dict[str, Any]]]:
        """Records completed by this line (with continuation, a record is complete when
        the next one starts)."""
        self.lines_seen += 1
        if len(self.first_lines) < 3:
            self.first_lines.append(text[:120])
        match = self._match(text)
        if match is not None:
            self.lines_matched += 1
            fields = match.groupdict()
            if self.pattern.continuation is None:
                yield line, fields
                return
            if self._open is not None:
                yield self._open
            self._open = (line, fields)
        elif self.pattern.continuation is not None and self._open is not None:
            self.continued += 1
            fields = self._open[1]
            before = fields.get(self.pattern.continuation) or ""
            fields[self.pattern.continuation] = f"{before}\n{text}" if before else text
        else:
            self.skipped_count += 1
            if len(self.skipped) < 3:
                self.skipped.append(line)

    def close(self) -> Iterator[tuple[int, dict[str, Any]]]:
        if self._open is not None:
            yield self._open
            self._open = None

    def _match(self, text: str) -> Any:
        started = time.perf_counter()
        try:
            if _regex is not None:
                return self.pattern.compiled.match(text, timeout=MATCH_TIMEOUT_SECONDS)
            return self.pattern.compiled.match(text)
        except TimeoutError:
            raise PatternRefused(
                f"matching one line took over {MATCH_TIMEOUT_SECONDS} s; simplify it"
            ) from None
        finally:
            self.seconds += time.perf_counter() - started
            if self.seconds > MAX_MATCH_SECONDS:
                raise PatternRefused(
                    f"matching the file's lines took over {MAX_MATCH_SECONDS:.0f} s; simplify it"
                )

    def notes(self) -> list[str]:
        """What the pattern left out, if anything (so a pattern that misses lines shows)."""
        if not self.skipped_count:
            return []
        lines = ", ".join(str(n) for n in self.skipped)
        more = ", ..." if self.skipped_count > len(self.skipped) else ""
        continued = f", {self.continued} continued a record" if self.continued else ""
        return [
            f"lines.pattern (line {self.pattern.line}) matched {self.lines_matched} of the "
            f"{self.lines_seen} lines{continued}; {self.skipped_count} matched no record and "
            f"were skipped (line {lines}{more})"
        ]
