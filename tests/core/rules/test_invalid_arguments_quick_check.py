"""invalid-tool-arguments' quick check never accepts what jsonschema rejects.

The rule accepts common, plainly valid arguments without loading jsonschema; these tests
hold that shortcut to jsonschema's verdict on generated schemas and values.
"""

from __future__ import annotations

import subprocess
import sys

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from traces.core.analysis.rules.invalid_tool_arguments import surely_valid

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(-2, 2, allow_nan=False),
    st.sampled_from([1.0, 0.0, "", "a", "b", "x"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
    ),
    max_leaves=8,
)
TYPES = st.sampled_from(
    ["object", "array", "string", "boolean", "null", "integer", "number", "any"]
)
KEYWORD_VALUES = {
    "type": st.one_of(TYPES, st.lists(TYPES, min_size=1, max_size=3)),
    "required": st.lists(st.sampled_from(["a", "b", "c"]), max_size=2, unique=True),
    "enum": st.lists(SCALARS, min_size=1, max_size=3),
    "description": st.just("text"),
    "format": st.sampled_from(["date-time", "email"]),
    "minimum": st.integers(-1, 1),
    "maxLength": st.integers(0, 2),
    "const": SCALARS,
}


def _schemas(inner):
    flat = st.fixed_dictionaries(
        {},
        optional={name: strategy for name, strategy in KEYWORD_VALUES.items()},
    )
    nested = st.fixed_dictionaries(
        {},
        optional={
            "properties": st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
            "additionalProperties": st.one_of(st.booleans(), inner),
            "items": inner,
        },
    )
    return st.builds(lambda a, b: {**a, **b}, flat, nested)


SCHEMAS = st.recursive(st.fixed_dictionaries({}, optional=KEYWORD_VALUES), _schemas, max_leaves=6)
DRAFTS = st.sampled_from(
    [
        None,
        "https://json-schema.org/draft/2020-12/schema",
        "http://json-schema.org/draft-07/schema#",
        "http://json-schema.org/draft-04/schema#",
    ]
)


def _verdict(schema: dict, value) -> bool | None:
    """jsonschema's answer as the rule asks it (None: the schema itself is invalid)."""
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError:
        return None
    return cls(schema).is_valid(value)


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(SCHEMAS, VALUES, DRAFTS)
def test_the_quick_check_accepts_only_what_jsonschema_accepts(schema, value, draft):
    if draft is not None:
        schema = {**schema, "$schema": draft}
    if surely_valid(schema, value):
        assert _verdict(schema, value) is not False, (schema, value)


def test_the_quick_check_takes_common_tool_calls():
    schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "where"},
            "limit": {"type": "integer"},
            "flags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
        },
        "required": ["path"],
        "additionalProperties": False,
    }
    assert surely_valid(schema, {"path": "src/a.py", "limit": 200, "flags": ["a"]})
    assert not surely_valid(schema, {"limit": 200})  # missing path: jsonschema decides
    assert not surely_valid(schema, {"path": "a", "other": 1})
    assert not surely_valid(schema, {"path": "a", "limit": 1.5})
    assert not surely_valid({**schema, "minProperties": 1}, {"path": "a"})


def test_a_trace_with_valid_arguments_is_linted_without_loading_jsonschema(tmp_path):
    """The reason for the quick check: small traces do not pay for jsonschema's import."""
    from tests.core.builders import log, pair, response, tool_use, user

    trace = tmp_path / "calls.jsonl"
    # builders' read_file tool declares {"path": string}, required: these arguments fit.
    trace.write_bytes(log(pair([user("go")], response([tool_use("t1", path="a.py")], "tool_use"))))
    code = (
        "import sys; from traces import cli; from pathlib import Path; "
        f"cli.lint(files=[Path({str(trace)!r})], fail_on='never'); "
        "assert 'jsonschema' not in sys.modules, 'jsonschema was imported'"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "invalid-tool-arguments" not in result.stdout and "finding(s)" in result.stdout
