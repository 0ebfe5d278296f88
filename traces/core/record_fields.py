"""A record's fields as `traces.core.records` keeps them: `Field`, what `field()` returns
(the options of `dataclasses.field` the core uses), and the markers of a missing default
and of a default factory. Apart from the decorator so that `traces.core.record_init`,
which builds `__init__` from fields, needs nothing else of it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, overload

T = TypeVar("T")


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""No default (nor default factory) was given."""


class _HasFactory:
    def __repr__(self) -> str:
        return "<factory>"


HAS_FACTORY: Any = _HasFactory()
"""The parameter default of a field with a default factory (as `dataclasses` does)."""


class Field:
    """One field of a record: what `field()` returns, and what a class keeps per field."""

    __slots__ = ("compare", "default", "default_factory", "init", "kw_only", "name", "repr", "type")

    def __init__(
        self,
        default: Any,
        default_factory: Any,
        init: bool,
        repr: bool,
        compare: bool,
        kw_only: bool | None,
    ) -> None:
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name = ""
        self.type: Any = None
        self.default = default
        self.default_factory = default_factory
        self.init = init
        self.repr = repr
        self.compare = compare
        self.kw_only = kw_only


@overload
def field(
    *,
    default: T,
    init: bool = ...,
    repr: bool = ...,
    compare: bool = ...,
    kw_only: bool = ...,
) -> T: ...
@overload
def field(
    *,
    default_factory: Callable[[], T],
    init: bool = ...,
    repr: bool = ...,
    compare: bool = ...,
    kw_only: bool = ...,
) -> T: ...
@overload
def field(
    *,
    init: bool = ...,
    repr: bool = ...,
    compare: bool = ...,
    kw_only: bool = ...,
) -> Any: ...
def field(
    *,
    default: Any = MISSING,
    default_factory: Any = MISSING,
    init: bool = True,
    repr: bool = True,
    compare: bool = True,
    kw_only: Any = MISSING,
) -> Any:
    """A field with options, as `dataclasses.field` (the options the core uses)."""
    return Field(
        default, default_factory, init, repr, compare, None if kw_only is MISSING else kw_only
    )
