"""A record class's `__init__` (`traces.core.records`): built generically for its first
`COMPILE_AFTER` instances, then compiled from short source once, as `dataclasses` would
have compiled it at import for every class whether built or not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from traces.core.record_fields import HAS_FACTORY, MISSING, Field


def _init_source(cls: type, specs: tuple[Field, ...], frozen: bool) -> tuple[str, dict[str, Any]]:
    """The source of `__init__` and the names it reads (defaults, factories, setters), kept
    short: compiling it is most of what a record class costs (~1 M instructions a class).
    A frozen slotted record sets its fields through their slot descriptors, which its
    refusing `__setattr__` does not guard."""
    names: dict[str, Any] = {"_F": HAS_FACTORY, "_o": object.__setattr__}
    positional, keywords, body = ["self"], list[str](), list[str]()
    for i, spec in enumerate(specs):
        name = spec.name
        if spec.init:
            if spec.default_factory is not MISSING:
                parameter = f"{name}=_F"
            elif spec.default is not MISSING:
                names[f"_d{i}"] = spec.default
                parameter = f"{name}=_d{i}"
            else:
                parameter = name
            (keywords if spec.kw_only else positional).append(parameter)
        if spec.default_factory is not MISSING:
            names[f"_f{i}"] = spec.default_factory
            value = f"_f{i}() if {name} is _F else {name}" if spec.init else f"_f{i}()"
        elif spec.init:
            value = name
        elif spec.default is not MISSING:
            names[f"_d{i}"] = spec.default
            value = f"_d{i}"
        else:
            continue
        if not frozen:
            body.append(f"self.{name}={value}")
            continue
        slot = cls.__dict__.get("__slots__") and getattr(cls, name, None)
        if type(slot).__name__ == "member_descriptor":
            names[f"_s{i}"] = slot.__set__  # type: ignore[union-attr]
            body.append(f"_s{i}(self,{value})")
        else:
            body.append(f"_o(self,{name!r},{value})")
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    parameters = positional + (["*", *keywords] if keywords else [])
    return f"def __init__({','.join(parameters)}):\n " + (";".join(body) or "pass") + "\n", names


def check_order(specs: tuple[Field, ...]) -> None:
    """No positional parameter without a default after one with (as `dataclasses`)."""
    seen_default = False
    for spec in specs:
        if not spec.init or spec.kw_only:
            continue
        if spec.default is not MISSING or spec.default_factory is not MISSING:
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default argument {spec.name!r} follows default argument")


COMPILE_AFTER = 4
"""Instances a record class builds through the generic `__init__` before its own is
compiled. The generic one costs ~14 k instructions a call and compiling ~0.6 M, but a
short report builds 4 or fewer instances of a third of its record classes (its options,
its limits, its scene...): measured with callgrind on a 200-call report, 4 saves the most
(32 costs more than it saves)."""


def _generic_init(holder: list[type], specs: tuple[Field, ...], frozen: bool) -> Any:
    """`__init__(self, args, kwargs)` for any record: binds the arguments as the compiled
    `__init__` would (the same defaults, factories and `TypeError`s) and sets the fields."""
    positional = tuple(s.name for s in specs if s.init and not s.kw_only)
    accepted = frozenset(s.name for s in specs if s.init)

    def build(self: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        cls: type = holder[0]
        if len(args) > len(positional):
            raise TypeError(
                f"{cls.__qualname__}.__init__() takes {len(positional) + 1} positional "
                f"arguments but {len(args) + 1} were given"
            )
        given = dict(zip(positional, args, strict=False))
        for name, value in kwargs.items():
            if name not in accepted:
                raise TypeError(
                    f"{cls.__qualname__}.__init__() got an unexpected keyword argument {name!r}"
                )
            if name in given:
                raise TypeError(
                    f"{cls.__qualname__}.__init__() got multiple values for argument {name!r}"
                )
            given[name] = value
        assign = object.__setattr__ if frozen else setattr
        for spec in specs:
            name = spec.name
            if spec.init and name in given:
                value = given[name]
            elif spec.default_factory is not MISSING:
                value = spec.default_factory()
            elif spec.default is not MISSING:
                value = spec.default
            elif spec.init:
                kind = "keyword-only" if spec.kw_only else "positional"
                raise TypeError(
                    f"{cls.__qualname__}.__init__() missing 1 required {kind} argument: {name!r}"
                )
            else:
                continue
            assign(self, name, value)
        if hasattr(cls, "__post_init__"):
            self.__post_init__()

    return build


def lazy_init(holder: list[type], specs: tuple[Field, ...], frozen: bool) -> Callable[..., None]:
    """An `__init__` that builds the first `COMPILE_AFTER` instances generically, then
    compiles the class's own, installs it on the class and runs it: a record built a few
    times costs no compilation, one built thousands of times runs compiled code."""
    build = _generic_init(holder, specs, frozen)
    calls = [0]

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if calls[0] < COMPILE_AFTER:
            calls[0] += 1
            build(self, args, kwargs)
            return
        cls: type = holder[0]
        source, names = _init_source(cls, specs, frozen)
        exec(source, names)
        init = names["__init__"]
        init.__qualname__ = f"{cls.__qualname__}.__init__"
        init.__module__ = cls.__module__
        cls.__init__ = init  # type: ignore[misc]
        init(self, *args, **kwargs)

    return __init__
