"""Environment variables read by the type of their default: one parser for every variable
`inspector/settings.py` reads and for every `INSPECTOR_<KEY>` of traces.conf.

Settings load before any check can run, so a value that does not parse is not raised
here: the default is used, the problem is kept (`Environment.problems`), and traces.checks
reports it as a system check error naming the variable, which refuses the server's start.
No Django here: settings.py imports this module while Django is not yet configured.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import TypeVar

T = TypeVar("T")

TRUE_WORDS = frozenset({"1", "true", "yes"})
FALSE_WORDS = frozenset({"0", "false", "no"})


class BadValue(ValueError):
    """An environment variable whose text is not a value of its setting's type."""


SHOWN_CHARACTERS = 40
"""A bad value is quoted in its problem up to this long (a paste gone wrong stays short)."""


def parse(name: str, raw: str, default: T) -> T:
    """`raw`, the text of variable `name`, as a value of `default`'s type: int, float, bool
    (1/0, true/false, yes/no, any case) or str (taken as it is). BadValue says why not."""
    text = raw.strip()
    shown = f"{name}={raw[:SHOWN_CHARACTERS]!r}" + ("…" if len(raw) > SHOWN_CHARACTERS else "")
    if isinstance(default, bool):  # before int: bool is an int
        word = text.lower()
        if word in TRUE_WORDS or word in FALSE_WORDS:
            return word in TRUE_WORDS  # type: ignore[return-value]
        raise BadValue(f"{shown} is not a boolean: use 1/0, true/false or yes/no.")
    if isinstance(default, int):
        try:
            return int(text)  # type: ignore[return-value]
        except ValueError:
            raise BadValue(f"{shown} is not a whole number.") from None
    if isinstance(default, float):
        try:
            number = float(text)
        except ValueError:
            number = math.nan
        if not math.isfinite(number):
            raise BadValue(f"{shown} is not a number.")
        return number  # type: ignore[return-value]
    return raw  # type: ignore[return-value]


class Environment:
    """Values read from one environment (the process's unless given). What does not parse
    is kept in `problems` and replaced by the default, so settings still load and the
    checks can say which variable is wrong."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self.environ: Mapping[str, str] = os.environ if environ is None else environ
        self.problems: list[str] = []

    def get(self, name: str, default: T) -> T:
        """The variable as `default`'s type; the default when it is unset, or empty for a
        number or a boolean (an empty string is a value of a text setting)."""
        raw = self.environ.get(name)
        if raw is None or (not raw.strip() and not isinstance(default, str)):
            return default
        try:
            return parse(name, raw, default)
        except BadValue as exc:
            self.problems.append(str(exc))
            return default
