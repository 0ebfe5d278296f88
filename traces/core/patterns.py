"""`lazy_compile`: a module-level regex compiled when first used, not at import.

Compiling a pattern runs the pure-Python `re` parser and compiler: the 56 patterns the
modules of a `loop-inspector report` define cost ~2% of a 200-call report, and 34 of
them are never used on a clean trace (the error, traceback, truncation and container
patterns). A `LazyPattern` keeps the source and compiles on the first attribute access,
then binds the matching methods on itself, so later calls cost what a compiled
pattern's do. It is typed as `re.Pattern[str]` for its callers; it is not one for
`isinstance` nor for `re.sub(pattern, ...)`, so only patterns used through their
methods are made lazy.
"""

from __future__ import annotations

import re
from typing import Any, cast

_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split")


class LazyPattern:
    """The pattern `pattern` with `flags`, compiled on first use (see the module)."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags_given = flags

    def __getattr__(self, name: str) -> Any:
        compiled = re.compile(self.pattern, self.flags_given)
        for method in _METHODS:
            setattr(self, method, getattr(compiled, method))
        self.flags, self.groups, self.groupindex = (
            compiled.flags,
            compiled.groups,
            compiled.groupindex,
        )
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy_compile({self.pattern!r}, {self.flags_given!r})"


def lazy_compile(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(pattern, flags)`, deferred until the pattern is first used."""
    return cast("re.Pattern[str]", LazyPattern(pattern, flags))
