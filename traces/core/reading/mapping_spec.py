"""A mapping file read and checked: its schema, its expressions compiled, its line pattern.

`load_mapping` turns the bytes of a mapping file (JSON or YAML) into a `Mapping`, or
refuses it with a `MappingError` naming the key and its line in the file; `MappedAdapter`
(`mapping`) then reads a log with it. Apart, so the language's checks and the reading of
a log each stay one module.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import jmespath
import orjson
from jmespath.exceptions import JMESPathError

from traces.core.records import dataclass

from .cassettes import no_alias_loader
from .expression_budget import (
    ExpressionTooCostly,
    nesting_problem,
    repeats_values,
    search_within_budget,
    unknown_function,
)
from .limits import InputRejected
from .mapping_lines import LinePattern, PatternRefused, compile_pattern

SCHEMA_FILE = "mapping.schema.json"
SECTIONS = ("calls", "messages", "tool_calls", "tool_results", "usage")
MAX_MAPPING_BYTES = 256 * 1024


class MappingError(InputRejected):
    """The mapping file itself is wrong (unreadable, invalid, or a bad expression)."""


@cache
def _validator() -> Any:
    """The mapping schema's validator (jsonschema is imported only when a mapping is read)."""
    from importlib import resources  # tempfile and more: only when validating

    from jsonschema import Draft202012Validator

    text = resources.files("traces.core.reading").joinpath("schemas", SCHEMA_FILE).read_bytes()
    schema = orjson.loads(text)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


@dataclass(frozen=True, slots=True)
class Expression:
    """One compiled expression and where it is written in the mapping file."""

    field: str
    source: str
    line: int
    compiled: Any
    budgeted: bool = False
    """Holds a multi-select, so it could build more than it reads: see expression_budget."""

    def search(self, value: Any) -> Any:
        try:
            if self.budgeted:
                return search_within_budget(self.compiled.parsed, value)
            return self.compiled.search(value)
        except (JMESPathError, TypeError, ValueError):
            return None
        except (ExpressionTooCostly, RecursionError) as exc:
            reason = str(exc) if isinstance(exc, ExpressionTooCostly) else "it recursed too deep"
            raise MappingError(
                f"The mapping's {self.field} (line {self.line}, {self.source[:200]!r}) was "
                f"stopped: {reason}."
            ) from None


@dataclass(frozen=True, slots=True)
class Mapping:
    """A validated mapping: compiled expressions by `section.field`."""

    name: str
    filename: str
    spec: dict[str, Any]
    expressions: dict[str, Expression]
    input_includes_cached: bool = False
    lines: LinePattern | None = None
    """A text log's line pattern: the file is read as text lines, split by it."""
    dedupe_keep: str = "last"

    def get(self, key: str) -> Expression | None:
        return self.expressions.get(key)


def _line_of(text: str, key: str, expression: str) -> int:
    """The line of the mapping file where `key: expression` is written (1-based)."""
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if key in line and expression in line:
            return number
    for number, line in enumerate(lines, start=1):
        if expression in line:
            return number
    return 1


def _key_line(text: str, key: str) -> int:
    """The line where `key` is written as a key (YAML `key:` or JSON `"key":`)."""
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip().lstrip("{,").strip()
        if stripped.startswith((f"{key}:", f'"{key}":', f'"{key}" :')):
            return number
    return _line_of(text, key, key)


def load_mapping(data: bytes, filename: str = "mapping") -> Mapping:
    """Parse, validate and compile a mapping file; MappingError says what is wrong, where."""
    import yaml
    from jsonschema.exceptions import best_match

    if len(data) > MAX_MAPPING_BYTES:
        raise MappingError(f"The mapping file {filename} is over {MAX_MAPPING_BYTES:,} bytes.")
    text = data.decode("utf-8", "replace")
    problem = nesting_problem(text, max_chars=MAX_MAPPING_BYTES)
    if problem is not None:  # before the parsers, which recurse once per level
        raise MappingError(f"The mapping file {filename} is refused: {problem}.")
    try:
        if text.lstrip().startswith("{"):
            spec = orjson.loads(data)
        else:  # YAML without aliases, so a "billion laughs" file cannot expand
            spec = yaml.load(text, Loader=no_alias_loader())  # a SafeLoader subclass
    except (orjson.JSONDecodeError, yaml.YAMLError) as exc:
        raise MappingError(
            f"The mapping file {filename} is not readable JSON or YAML: {exc}"
        ) from None
    except RecursionError:
        raise MappingError(f"The mapping file {filename} is nested too deeply.") from None
    if not isinstance(spec, dict):
        raise MappingError(f"The mapping file {filename} must be an object with 'calls'.")
    error = best_match(_validator().iter_errors(spec))
    if error is not None:
        keys = [str(p) for p in error.absolute_path]
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            allowed = error.schema.get("properties", {})
            keys += [str(k) for k in error.instance if k not in allowed][:1]
        where = ".".join(keys) or "(top level)"
        line = _key_line(text, keys[-1]) if keys else 1
        raise MappingError(
            f"The mapping file {filename} is not valid: {where} (line {line}): {error.message}."
        )
    expressions: dict[str, Expression] = {}
    sources: list[tuple[str, Any]] = [("records", spec["records"])] if "records" in spec else []
    dedupe = spec.get("dedupe")
    if dedupe is not None:
        sources.append(("dedupe", dedupe["key"] if isinstance(dedupe, dict) else dedupe))
    for section in SECTIONS:
        for key, source in (spec.get(section) or {}).items():
            if isinstance(source, str):
                sources.append((f"{section}.{key}", source))
    for path, source in sources:
        key = path.rsplit(".", 1)[-1]
        line = _line_of(text, key, source)
        problem = nesting_problem(source)
        if problem is not None:
            raise MappingError(
                f"The mapping file {filename}, line {line}: {path} is refused: {problem}."
            )
        try:
            compiled = jmespath.compile(source)
        except (JMESPathError, RecursionError) as exc:
            raise MappingError(
                f"The mapping file {filename}, line {line}: {path} is not a valid JMESPath "
                f"expression ({source[:200]!r}): {exc or 'nested too deeply'}"
            ) from None
        function = unknown_function(compiled.parsed)
        if function is not None:
            raise MappingError(
                f"The mapping file {filename}, line {line}: {path} calls {function}(), which "
                f"is no JMESPath function (nor from_json) ({source[:200]!r})."
            )
        budgeted = repeats_values(compiled.parsed)
        expressions[path] = Expression(path, source, line, compiled, budgeted)
    usage = spec.get("usage") or {}
    return Mapping(
        name=str(spec.get("name") or filename),
        filename=filename,
        spec=spec,
        expressions=expressions,
        input_includes_cached=bool(usage.get("input_includes_cached")),
        lines=_line_pattern(spec, text, filename),
        dedupe_keep=str(dedupe.get("keep", "last")) if isinstance(dedupe, dict) else "last",
    )


def _line_pattern(spec: dict[str, Any], text: str, filename: str) -> LinePattern | None:
    """The checked `lines.pattern`, or None when the log is not a text log."""
    lines = spec.get("lines")
    if lines is None:
        return None
    line = _key_line(text, "pattern")
    try:
        return compile_pattern(lines["pattern"], lines.get("continuation"), line)
    except PatternRefused as exc:
        raise MappingError(
            f"The mapping file {filename}, line {line}: lines.pattern is refused: {exc}."
        ) from None
