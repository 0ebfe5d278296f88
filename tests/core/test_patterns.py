"""lazy_compile: the same matches as re.compile, compiled only when first used."""

from __future__ import annotations

import re

from traces.core.patterns import LazyPattern, lazy_compile


def test_a_lazy_pattern_matches_as_the_compiled_one_and_compiles_on_first_use():
    source, flags = r"^(?P<word>ab+)c", re.IGNORECASE | re.MULTILINE
    lazy, compiled = lazy_compile(source, flags), re.compile(source, flags)
    assert isinstance(lazy, LazyPattern)
    assert lazy.pattern == source
    assert "search" not in vars(lazy)  # nothing compiled yet
    text = "x\nABBc abc\nabc"
    assert lazy.search(text).span() == compiled.search(text).span()
    assert "search" in vars(lazy)
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in compiled.finditer(text)]
    assert lazy.findall(text) == compiled.findall(text)
    assert lazy.sub("-", text) == compiled.sub("-", text)
    assert lazy.match(text) is None
    assert (lazy.flags, lazy.groups, lazy.groupindex) == (
        compiled.flags,
        compiled.groups,
        compiled.groupindex,
    )
