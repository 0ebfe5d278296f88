"""Rule invalid-tool-arguments."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import orjson

from ...model import Block, Call
from ._common import canonical, quote, shorten, tool_uses
from .base import Finding, LintContext, Rule
from .registry import register

FREE_TEXT_CALLS = {"custom_tool_call"}
"""Raw block types whose input is free text by design (Codex/Responses custom tools)."""
PROBLEM_CHARS = 140
"""Longest validation message quoted (jsonschema messages repeat the instance)."""


@register
class InvalidToolArguments(Rule):
    """Tool call arguments that break the tool's own schema.

    What it finds
    A `tool_use` whose arguments fail the `input_schema` (or OpenAI `parameters`) the
    request declared for that tool, validated with jsonschema (the schema's `$schema`
    draft, Draft 2020-12 when it names none; formats are not asserted), or whose
    arguments are not JSON at all (a string the adapter could not parse). The message
    names the failing path, like `$.to`, and the validator's reason. Free-text custom
    tools (Codex `apply_patch`) and tools without a schema are skipped.

    Why it matters
    A tool that runs on arguments it did not declare may do something a retry cannot
    undo, and one that crashes on them returns a stack trace instead of a fixable error.
    Malformed JSON usually means the output was cut (`max_tokens`) or the model was not
    constrained to the schema.

    Example
    `find_free_slots` requires `from` and `to`; the model sends `{"from": "Thursday"}`:
    `$ 'to' is a required property`.

    How to fix
    Validate every call against its schema before running it and send the failure back
    as the result ("error: to is required, an ISO 8601 end time"); use strict or
    constrained tool schemas where the provider offers them.
    """

    id = "invalid-tool-arguments"
    severity = "error"
    message = (
        "arguments of {name} ({tool_call_id}) in call {call} {problem}; validate before"
        " running and return the error as the result"
    )

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        validators: dict[bytes, Any] = {}
        for call in ctx.trace.calls:
            for block in tool_uses(call):
                problem = self._problem(ctx, call, block, validators)
                if problem is not None:
                    yield self.finding(call, block.tool_id, name=block.name or "?", problem=problem)

    def _problem(
        self, ctx: LintContext, call: Call, block: Block, validators: dict[bytes, Any]
    ) -> str | None:
        if block.input is None or _is_free_text(call, block):
            return None
        arguments = block.input
        if isinstance(arguments, str):
            # Adapters keep arguments that did not parse as the raw string.
            try:
                arguments = orjson.loads(arguments)
            except orjson.JSONDecodeError as error:
                reason = str(error).split(":")[0]
                return f"are not valid JSON ({reason}): {quote(block.input)}"
        schema = ctx.tool_schema(call, block.name or "") if block.name else None
        if not isinstance(schema, dict) or (_modern(schema) and surely_valid(schema, arguments)):
            return None
        key = canonical(schema)
        if key not in validators:
            validators[key] = _compile(schema)
        validator = validators[key]
        if validator is None:
            return None
        try:
            errors = list(validator.iter_errors(arguments))
        except Exception:  # an unresolvable $ref or odd keyword: the schema's fault
            return None
        if not errors:
            return None
        from jsonschema.exceptions import best_match

        best = best_match(errors)
        assert best is not None
        more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
        reason = shorten(best.message, PROBLEM_CHARS)
        return f"fail its schema at {best.json_path}: {reason}{more}"


def _compile(schema: dict[str, Any]) -> Any:
    """A validator for the schema's draft, or None when the schema itself is invalid."""
    import jsonschema

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unknown $schema URIs fall back with a warning
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError:
        return None
    return cls(schema)


def _is_free_text(call: Call, block: Block) -> bool:
    kind = block.raw.get("type") if isinstance(block.raw, dict) else None
    if isinstance(kind, str) and kind in FREE_TEXT_CALLS:  # a list there must not raise
        return True
    for tool in call.tools:
        if isinstance(tool, dict) and tool.get("name") == block.name:
            return tool.get("type") == "custom"
    return False


# -- the quick check -----------------------------------------------------------------------
# Most tool schemas are an object of typed properties, and most calls match them. Loading
# jsonschema and compiling a validator costs more than a small trace's whole analysis, so
# such calls are accepted by this check first. It only ever answers "valid" when every
# keyword it meets is one it fully understands and the arguments satisfy it; anything else
# (a failure included) goes to jsonschema, which has the last word. A schema that is itself
# invalid gives no finding either way, so accepting early changes no result.
ANNOTATIONS = frozenset({"title", "description", "default", "examples", "format", "$schema"})
"""Keywords that never fail a value (formats are not asserted, as with jsonschema here)."""
UNDERSTOOD = ANNOTATIONS | {"type", "properties", "required", "additionalProperties", "items"}
UNDERSTOOD_WITH_ENUM = UNDERSTOOD | {"enum"}
TYPE_CHECKS: dict[str, Any] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    # Drafts disagree on 1.0 as an integer: only a plain int is surely one.
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
}


MODERN_DRAFTS = ("draft-04", "draft-06", "draft-07", "2019-09", "2020-12")


def _modern(schema: dict[str, Any]) -> bool:
    """Draft 4 or later (or no `$schema`): `required` is a list on the object itself."""
    named = schema.get("$schema")
    return named is None or (isinstance(named, str) and any(d in named for d in MODERN_DRAFTS))


def surely_valid(schema: Any, value: Any, depth: int = 0) -> bool:
    """True only when `value` certainly satisfies `schema` (False means: ask jsonschema)."""
    if schema is True or schema == {}:
        return True
    if not isinstance(schema, dict) or depth > 32 or not UNDERSTOOD_WITH_ENUM.issuperset(schema):
        return False
    if "enum" in schema:
        options = schema["enum"]
        # Python's == takes True for 1: only strings compare the way JSON Schema does.
        if not (isinstance(value, str) and isinstance(options, list) and value in options):
            return False
    kind = schema.get("type")
    if kind is not None:
        kinds = kind if isinstance(kind, list) else [kind]
        if not any(
            isinstance(k, str) and k in TYPE_CHECKS and TYPE_CHECKS[k](value) for k in kinds
        ):
            return False
    if isinstance(value, dict):
        return _object_surely_valid(schema, value, depth)
    if isinstance(value, list) and "items" in schema:
        items = schema["items"]
        return isinstance(items, dict) and all(surely_valid(items, v, depth + 1) for v in value)
    return True


def _object_surely_valid(schema: dict[str, Any], value: dict[str, Any], depth: int) -> bool:
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    if not isinstance(properties, dict) or not isinstance(required, list):
        return False
    if any(not isinstance(name, str) or name not in value for name in required):
        return False
    for name, item in value.items():
        if name in properties:
            if not surely_valid(properties[name], item, depth + 1):
                return False
        elif extra is False or (extra is not True and not surely_valid(extra, item, depth + 1)):
            return False
    return True
