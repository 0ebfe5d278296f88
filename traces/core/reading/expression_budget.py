"""JMESPath expressions of a mapping, evaluated within a budget of what they may build.

A mapping is user input, and JMESPath can build values far larger than the record it
reads: a multi-select repeats its value by reference (`[@, @]`), so 22 of them piped make
2^22 references from a mapping under 1 KB, and `to_string(@)` or a flatten then
materialises them (issue 26: one daphne reached 21.7 GB before the kernel killed it).
Only multi-selects repeat references; every other construct gives at most what its
input holds. So an expression without one is evaluated as is, and one with one is
evaluated by `BudgetInterpreter`, which counts the references each multi-select builds
(shared values counted each time they are reached, as a serialiser would reach them)
and the text `to_string` and `join` would produce, and stops at the first that passes
its limit. Before compiling, an expression's length and bracket nesting are limited
too: the parser recurses once per level.

`from_json(s)` (ours: JMESPath has no way to read a value that is a JSON string) builds
a value from text, so an expression calling it is evaluated by the interpreter too: the
characters it parses count against the same text budget, and the text is parsed as a
record line is (depth and value-count limits), so it can build no more than a line could.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from jmespath import functions
from jmespath.visitor import Options, TreeInterpreter

from ..model import LineError
from .json_values import parse_line

MAX_EXPRESSION_CHARS = 4096
MAX_NESTING = 64
MAX_REFERENCES = 1_000_000
"""References the multi-selects of one evaluation may build, shared ones counted each time."""
MAX_TEXT_CHARS = 32 * 1024 * 1024
"""Characters `to_string` or `join` may produce in one evaluation."""

REPEATING_NODES = frozenset({"multi_select_list", "multi_select_dict"})
BUILDING_FUNCTIONS = frozenset({"from_json"})
"""Our functions that build values from text: evaluated within the budget too."""


class ExpressionTooCostly(Exception):
    """The evaluation would build more than its budget allows (the message says what)."""


def nesting_problem(source: str, max_chars: int = MAX_EXPRESSION_CHARS) -> str | None:
    """Why an expression (or a mapping file's text) is refused before it is parsed (too
    long, brackets nested too deep), or None."""
    if len(source) > max_chars:
        return f"it is over {max_chars:,} characters"
    depth = deepest = 0
    quote = ""
    escaped = False
    for char in source:
        if quote:
            escaped = not escaped and char == "\\"
            if char == quote and not escaped:
                quote = ""
            continue
        if char in "'\"`":
            quote = char
        elif char in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in ")]}":
            depth -= 1
    if deepest > MAX_NESTING:
        return f"it nests brackets {deepest:,} deep (at most {MAX_NESTING})"
    return None


def _nodes(parsed: dict[str, Any]) -> Iterator[dict[str, Any]]:
    stack = [parsed]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(child for child in node.get("children", ()) if isinstance(child, dict))


def repeats_values(parsed: dict[str, Any]) -> bool:
    """Whether a parsed expression must be evaluated within the budget: it holds a
    multi-select (the only way to repeat a value) or calls a function that builds one."""
    return any(
        node.get("type") in REPEATING_NODES
        or (node.get("type") == "function_expression" and node.get("value") in BUILDING_FUNCTIONS)
        for node in _nodes(parsed)
    )


def unknown_function(parsed: dict[str, Any]) -> str | None:
    """The first function an expression calls that does not exist (JMESPath would only
    say so when it is evaluated, and a mapping reads a failed evaluation as "absent")."""
    known = _BudgetFunctions.FUNCTION_TABLE
    for node in _nodes(parsed):
        if node.get("type") == "function_expression" and node.get("value") not in known:
            return str(node.get("value"))
    return None


class _BudgetFunctions(functions.Functions):  # type: ignore[misc]  # jmespath is untyped
    """The standard functions, with the two that make text from values bounded, and
    `from_json`, which reads a JSON string within the same text budget."""

    def __init__(self) -> None:
        super().__init__()
        self.parsed_chars = 0

    @functions.signature({"types": []})  # type: ignore[untyped-decorator]
    def _func_from_json(self, arg: Any) -> Any:
        """The value a JSON string holds (null when it holds none); any other value as is,
        so a field that is sometimes encoded and sometimes not reads the same."""
        if not isinstance(arg, str):
            return arg
        self.parsed_chars += len(arg)
        if self.parsed_chars > MAX_TEXT_CHARS:
            raise ExpressionTooCostly(f"from_json() would read over {MAX_TEXT_CHARS:,} characters")
        value = parse_line(arg.encode("utf-8", "surrogatepass"), 0)
        return None if isinstance(value, LineError) else value

    @functions.signature({"types": []})  # type: ignore[untyped-decorator]
    def _func_to_string(self, arg: Any) -> str:
        if isinstance(arg, str):
            return arg
        if serialized_size(arg, {}) > MAX_TEXT_CHARS:
            raise ExpressionTooCostly(f"to_string() would make over {MAX_TEXT_CHARS:,} characters")
        return json.dumps(arg, separators=(",", ":"), default=str)

    @functions.signature({"types": ["string"]}, {"types": ["array-string"]})  # type: ignore[untyped-decorator]
    def _func_join(self, separator: str, array: list[str]) -> str:
        size = sum(len(item) for item in array) + len(separator) * max(len(array) - 1, 0)
        if size > MAX_TEXT_CHARS:
            raise ExpressionTooCostly(f"join() would make over {MAX_TEXT_CHARS:,} characters")
        return separator.join(array)


def serialized_size(value: Any, memo: dict[int, int]) -> int:
    """About how many characters `value` serialises to, shared parts counted each time
    (each distinct container measured once, so a huge shared structure costs little)."""
    if isinstance(value, str):
        return len(value) + 2
    if isinstance(value, dict | list):
        known = memo.get(id(value))
        if known is not None:
            return known
        items = value.items() if isinstance(value, dict) else ((None, v) for v in value)
        size = 2
        for key, item in items:
            size += serialized_size(item, memo) + (len(str(key)) + 4 if key is not None else 1)
        memo[id(value)] = size
        return size
    return 8


class BudgetInterpreter(TreeInterpreter):  # type: ignore[misc]
    """The JMESPath tree interpreter, counting the references its multi-selects build."""

    def __init__(self) -> None:
        super().__init__(Options(custom_functions=_BudgetFunctions()))
        self._references: dict[int, int] = {}
        self._alive: list[Any] = []  # keeps measured values alive, so their ids stay theirs

    def visit_multi_select_list(self, node: dict[str, Any], value: Any) -> Any:
        return self._counted(super().visit_multi_select_list(node, value))

    def visit_multi_select_dict(self, node: dict[str, Any], value: Any) -> Any:
        return self._counted(super().visit_multi_select_dict(node, value))

    def _counted(self, built: Any) -> Any:
        if built is not None and self._count(built) > MAX_REFERENCES:
            raise ExpressionTooCostly(
                f"its multi-selects would build over {MAX_REFERENCES:,} references"
            )
        return built

    def _count(self, value: Any) -> int:
        if not isinstance(value, dict | list):
            return 1
        known = self._references.get(id(value))
        if known is not None:
            return known
        children = value.values() if isinstance(value, dict) else value
        total = 1
        for child in children:
            total += self._count(child)
            if total > MAX_REFERENCES:
                break
        self._references[id(value)] = total
        self._alive.append(value)
        return total


def search_within_budget(parsed: dict[str, Any], value: Any) -> Any:
    """Evaluate a parsed expression on `value`; ExpressionTooCostly past the budget."""
    return BudgetInterpreter().visit(parsed, value)
