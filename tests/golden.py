"""Golden files: expected outputs kept in tests/golden/, regenerated only on purpose.

Set UPDATE_GOLDEN=1 to rewrite them, then review the diff like code.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson

GOLDEN = Path(__file__).resolve().parent / "golden"


def assert_golden(relative: str, actual: Any) -> None:
    """Compare a JSON-able value with tests/golden/<relative>; write it when updating."""
    path = GOLDEN / relative
    rendered = orjson.dumps(actual, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
    if os.environ.get("UPDATE_GOLDEN") == "1" or not path.exists():
        if not path.exists() and os.environ.get("CI"):
            raise AssertionError(f"golden file {path} is missing; run with UPDATE_GOLDEN=1")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(rendered)
        return
    expected = orjson.loads(path.read_bytes())
    assert orjson.loads(rendered) == expected, (
        f"report differs from {path}; if the change is intended, rerun with UPDATE_GOLDEN=1"
    )


def golden_input(relative: str) -> bytes:
    return (GOLDEN / relative).read_bytes()
