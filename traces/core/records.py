"""`dataclass`, `field`, `fields` and `replace` for the core's records, built without
compiling source per method.

The standard `dataclasses.dataclass` compiles, at import time, the source of `__init__`,
`__repr__`, `__eq__`, `__hash__`, `__setattr__` and `__delattr__` of every class (with
`exec`): ~12% of the instructions of a 200-call `loop-inspector report`, by callgrind,
for the ~66 classes that run imports. Here only `__init__` is compiled (it is the method
whose speed counts: ~58,000 records are built for 2,000 calls), and only once its class
has built `COMPILE_AFTER` instances through a generic `__init__`; the other methods are
shared functions reading a per-class tuple of field names. The semantics the code relies
on are kept: positional and keyword construction, defaults and `default_factory`,
`init=False`, `__post_init__`, `kw_only`, `repr=False`, `compare=False`, equality and
hashing as `dataclasses` defines them, `__match_args__`, `slots=True` (the class rebuilt
with `__slots__`), and frozen records refuse assignment at run time
(`FrozenInstanceError`, an `AttributeError`). `dataclasses.fields`, `replace`, `asdict`
and `is_dataclass` keep working on these classes: their `__dataclass_fields__` is built
from the standard module on first access. A class using what this does not support
(`InitVar`, `KW_ONLY`, a standard dataclass base) is handed to `dataclasses.dataclass`
itself; `order` and `unsafe_hash` are not accepted (the core uses neither).
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable
from operator import attrgetter
from typing import Any, TypeVar, dataclass_transform, overload

from traces.core.record_fields import MISSING, Field, field
from traces.core.record_init import COMPILE_AFTER, check_order, lazy_init

__all__ = [
    "COMPILE_AFTER",
    "MISSING",
    "Field",
    "FrozenInstanceError",
    "dataclass",
    "field",
    "fields",
    "replace",
]

T = TypeVar("T")
_C = TypeVar("_C", bound=type)

_RECORD_FIELDS = "__record_fields__"
"""The class attribute holding a record's fields (a tuple of `Field`), bases first."""


class FrozenInstanceError(AttributeError):
    """Assigning to or deleting a field of a frozen record (as `dataclasses`' own)."""


class _Unsupported(Exception):
    """The class needs `dataclasses.dataclass` itself."""


def _is_classvar(annotation: Any) -> bool:
    if isinstance(annotation, str):
        text = annotation.strip()
        if "InitVar" in text or "KW_ONLY" in text:
            raise _Unsupported
        return text.startswith(("ClassVar", "typing.ClassVar"))
    from typing import ClassVar, get_origin

    if annotation is ClassVar or get_origin(annotation) is ClassVar:
        return True
    if type(annotation).__name__ in ("InitVar", "_KW_ONLY_TYPE"):
        raise _Unsupported
    return False


def _own_fields(cls: type, kw_only: bool) -> list[Field]:
    own = []
    # Not inspect.get_annotations: importing inspect is part of what this module saves.
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():  # noqa: RUF063
        if _is_classvar(annotation):
            continue
        value = cls.__dict__.get(name, MISSING)
        if isinstance(value, Field):
            spec = value
        elif type(value).__name__ == "Field" and type(value).__module__ == "dataclasses":
            raise _Unsupported
        else:
            spec = Field(value, MISSING, True, True, True, None)
        if spec.default is not MISSING and type(spec.default).__hash__ is None:
            raise ValueError(
                f"mutable default {type(spec.default)} for field {name} is not allowed: "
                "use default_factory"
            )
        spec.name = name
        spec.type = annotation
        if spec.kw_only is None:
            spec.kw_only = kw_only
        own.append(spec)
    return own


def _all_fields(cls: type, own: list[Field]) -> tuple[Field, ...]:
    """The fields of the record bases (nearest last, as `dataclasses` orders them), then
    the class's own, a redefined name keeping its first place."""
    merged: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        if "__dataclass_fields__" in base.__dict__ and _RECORD_FIELDS not in base.__dict__:
            raise _Unsupported  # a standard dataclass base
        for spec in base.__dict__.get(_RECORD_FIELDS, ()):
            merged[spec.name] = spec
    for spec in own:
        merged[spec.name] = spec
    return tuple(merged.values())


def _repr_method(names: tuple[str, ...]) -> Callable[[Any], str]:
    @reprlib.recursive_repr()
    def __repr__(self: Any) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{self.__class__.__qualname__}({shown})"

    return __repr__


def _key(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of `names` of an instance (a tuple also for one name, as `dataclasses`
    compares and hashes)."""
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda self: (one(self),)
    if not names:
        return lambda self: ()
    return attrgetter(*names)


def _eq_method(key: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any, Any], Any]:
    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented

    return __eq__


def _hash_method(key: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        return hash(key(self))

    return __hash__


def _frozen_methods(holder: list[type], names: frozenset[str]) -> dict[str, Any]:
    def __setattr__(self: object, name: str, value: Any) -> None:
        cls: type = holder[0]
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)  # type: ignore[arg-type]

    def __delattr__(self: object, name: str) -> None:
        cls: type = holder[0]
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)  # type: ignore[arg-type]

    return {"__setattr__": __setattr__, "__delattr__": __delattr__}


def _getstate(self: Any) -> list[Any]:
    return [getattr(self, spec.name) for spec in getattr(type(self), _RECORD_FIELDS)]


def _setstate(self: Any, state: list[Any]) -> None:
    for spec, value in zip(getattr(type(self), _RECORD_FIELDS), state, strict=True):
        object.__setattr__(self, spec.name, value)


class _StandardFields:
    """`__dataclass_fields__`, built with `dataclasses` on first access (by
    `dataclasses.fields`, `replace`, `asdict`, `is_dataclass`, a standard subclass)."""

    def __get__(self, instance: Any, owner: type) -> dict[str, Any]:
        import dataclasses

        built = {}
        for spec in getattr(owner, _RECORD_FIELDS):
            options: dict[str, Any] = {"init": spec.init, "repr": spec.repr}
            options |= {"compare": spec.compare, "kw_only": spec.kw_only}
            if spec.default is not MISSING:
                options["default"] = spec.default
            if spec.default_factory is not MISSING:
                options["default_factory"] = spec.default_factory
            standard = dataclasses.field(**options)
            standard.name, standard.type = spec.name, spec.type
            standard._field_type = dataclasses._FIELD  # type: ignore[attr-defined]
            built[spec.name] = standard
        type.__setattr__(owner, "__dataclass_fields__", built)
        return built


def _slotted(cls: type, specs: tuple[Field, ...]) -> type:
    """`cls` rebuilt with `__slots__` for its own fields (as `dataclasses` does)."""
    inherited: set[str] = set()
    for base in cls.__mro__[1:-1]:
        slots = base.__dict__.get("__slots__", ())
        inherited.update((slots,) if isinstance(slots, str) else slots)
    namespace = dict(cls.__dict__)
    namespace["__slots__"] = tuple(s.name for s in specs if s.name not in inherited)
    for spec in specs:
        namespace.pop(spec.name, None)
    namespace.pop("__dict__", None)
    namespace.pop("__weakref__", None)
    rebuilt = type(cls)(cls.__name__, cls.__bases__, namespace)
    rebuilt.__qualname__ = cls.__qualname__
    return rebuilt


def _process(cls: type, *, eq: bool, frozen: bool, slots: bool, kw_only: bool) -> type:
    specs = _all_fields(cls, _own_fields(cls, kw_only))
    check_order(specs)
    for spec in specs:
        if spec.name in cls.__dict__:
            if spec.default is MISSING or slots:
                type.__delattr__(cls, spec.name)
            else:
                type.__setattr__(cls, spec.name, spec.default)
    own = cls.__dict__
    holder: list[type] = []
    methods: dict[str, Any] = {_RECORD_FIELDS: specs, "__dataclass_fields__": _StandardFields()}
    if "__init__" not in own:
        methods["__init__"] = lazy_init(holder, specs, frozen)
    if "__repr__" not in own:
        methods["__repr__"] = _repr_method(tuple(s.name for s in specs if s.repr))
    if eq:
        key = _key(tuple(s.name for s in specs if s.compare))
        if "__eq__" not in own:
            methods["__eq__"] = _eq_method(key)
        class_hash = own.get("__hash__", MISSING)
        explicit_hash = not (class_hash is MISSING or (class_hash is None and "__eq__" in own))
        if not explicit_hash:
            methods["__hash__"] = _hash_method(key) if frozen else None
    if frozen:
        for name in ("__setattr__", "__delattr__"):
            if name in own:
                raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
        methods |= _frozen_methods(holder, frozenset(s.name for s in specs))
        if slots:
            methods |= {"__getstate__": _getstate, "__setstate__": _setstate}
    if "__match_args__" not in own:
        methods["__match_args__"] = tuple(s.name for s in specs if s.init and not s.kw_only)
    for name, value in methods.items():
        type.__setattr__(cls, name, value)
    if slots:
        cls = _slotted(cls, specs)
    holder.append(cls)
    return cls


@overload
def dataclass(cls: _C, /) -> _C: ...
@overload
def dataclass(
    *,
    eq: bool = ...,
    frozen: bool = ...,
    slots: bool = ...,
    kw_only: bool = ...,
) -> Callable[[_C], _C]: ...
@dataclass_transform(field_specifiers=(field, Field))
def dataclass(
    cls: Any = None,
    /,
    *,
    eq: bool = True,
    frozen: bool = False,
    slots: bool = False,
    kw_only: bool = False,
) -> Any:
    """A record class, as `dataclasses.dataclass` with these options makes it (see the
    module's docstring for what is kept and why)."""

    def wrap(cls: type) -> type:
        try:
            return _process(cls, eq=eq, frozen=frozen, slots=slots, kw_only=kw_only)
        except _Unsupported:
            import dataclasses

            made: type = dataclasses.dataclass(eq=eq, frozen=frozen, slots=slots, kw_only=kw_only)(
                cls
            )
            return made

    return wrap if cls is None else wrap(cls)


def fields(record: Any) -> tuple[Field, ...]:
    """The fields of a record class or instance, in order (as `dataclasses.fields`)."""
    specs = getattr(record, _RECORD_FIELDS, None)
    if specs is None:
        import dataclasses

        return dataclasses.fields(record)  # type: ignore[return-value]
    return tuple(specs)


def replace(record: T, /, **changes: Any) -> T:
    """A copy of `record` with `changes` (as `dataclasses.replace`)."""
    specs = getattr(type(record), _RECORD_FIELDS, None)
    if specs is None:
        import dataclasses

        return dataclasses.replace(record, **changes)  # type: ignore[type-var]
    for spec in specs:
        if not spec.init:
            if spec.name in changes:
                raise ValueError(
                    f"field {spec.name} is declared with init=False, it cannot be specified "
                    "with replace()"
                )
            continue
        if spec.name not in changes:
            changes[spec.name] = getattr(record, spec.name)
    return type(record)(**changes)
