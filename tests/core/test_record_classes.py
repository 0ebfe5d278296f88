"""traces.core.records behaves as `dataclasses` for what the core uses: each case defines
the same class with both and compares what they do."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import ClassVar

import orjson
import pytest

from traces.core import records


def both(**options: bool):
    """The same class body decorated by `dataclasses` and by `records`."""

    def make(decorate, field):
        @decorate(**options)
        class Point:
            """A point."""

            kind: ClassVar[str] = "point"
            x: int
            y: int = 0
            tags: list[str] = field(default_factory=list)
            note: str = field(default="", repr=False, compare=False)

        return Point

    return make(dataclasses.dataclass, dataclasses.field), make(records.dataclass, records.field)


OPTIONS = [{}, {"frozen": True}, {"slots": True}, {"frozen": True, "slots": True}, {"eq": False}]


@pytest.mark.parametrize("options", OPTIONS)
def test_construction_repr_equality_and_hash_are_those_of_dataclasses(options):
    standard, ours = both(**options)
    for args, kwargs in (((1,), {}), ((1, 2), {"tags": ["a"]}), ((), {"x": 3, "note": "n"})):
        a, b = standard(*args, **kwargs), ours(*args, **kwargs)
        assert repr(a) == repr(b)
        assert [getattr(a, n) for n in ("x", "y", "tags", "note")] == [
            getattr(b, n) for n in ("x", "y", "tags", "note")
        ]
        again = ours(*args, **kwargs)
        assert (b == again) is (a == standard(*args, **kwargs))
        assert (ours(1, note="a") == ours(1, note="b")) is (options.get("eq", True))
    assert ours(1).tags is not ours(1).tags
    assert ours.kind == "point"
    assert ours.__match_args__ == standard.__match_args__
    assert (ours.__hash__ is None) is (standard.__hash__ is None)
    if options.get("frozen"):
        assert hash(ours(1, 2, ("a",))) == hash(ours(1, 2, ("a",)))
    if options.get("slots"):
        assert ours.__slots__ == standard.__slots__
        assert not hasattr(ours(1), "__dict__")
    with pytest.raises(TypeError):
        ours(1, 2, [], "", 5)
    with pytest.raises(TypeError):
        ours()


@pytest.mark.parametrize("options", [{"frozen": True}, {"frozen": True, "slots": True}])
def test_a_frozen_record_refuses_assignment_and_deletion(options):
    _, ours = both(**options)
    point = ours(1)
    with pytest.raises(AttributeError, match="cannot assign to field 'x'"):
        point.x = 2
    with pytest.raises(records.FrozenInstanceError):
        del point.y
    assert point.x == 1


@pytest.mark.parametrize("options", OPTIONS)
def test_fields_replace_asdict_pickle_and_orjson_work_on_records(options):
    _, ours = both(**options)
    point = ours(1, 2, ["t"], "n")
    assert [f.name for f in records.fields(ours)] == ["x", "y", "tags", "note"]
    assert [f.name for f in dataclasses.fields(point)] == ["x", "y", "tags", "note"]
    assert dataclasses.is_dataclass(point)
    assert dataclasses.asdict(point) == {"x": 1, "y": 2, "tags": ["t"], "note": "n"}
    for replaced in (records.replace(point, y=5), dataclasses.replace(point, y=5)):
        assert (replaced.x, replaced.y, replaced.tags, replaced.note) == (1, 5, ["t"], "n")
    assert orjson.loads(orjson.dumps(point)) == {"x": 1, "y": 2, "tags": ["t"], "note": "n"}
    for copied in (copy.deepcopy(point), copy.copy(point)):
        assert (copied.x, copied.y, copied.tags, copied.note) == (1, 2, ["t"], "n")


@records.dataclass(frozen=True, slots=True)
class Pickled:
    name: str
    sizes: tuple[int, ...] = ()


def test_a_frozen_slotted_record_pickles():
    record = Pickled("a", (1, 2))
    assert pickle.loads(pickle.dumps(record)) == record
    assert copy.deepcopy(record) == record


def test_inheritance_init_false_post_init_and_kw_only():
    @records.dataclass(frozen=True, slots=True)
    class Base:
        a: int
        b: int = 1

    @records.dataclass(frozen=True, slots=True)
    class Child(Base):
        c: int = 2

    assert repr(Child(0, c=5)).endswith(".Child(a=0, b=1, c=5)")
    assert Child(0) != Base(0)

    @records.dataclass(kw_only=True)
    class Options:
        size: int
        total: int = records.field(init=False)

        def __post_init__(self) -> None:
            self.total = self.size * 2

    assert Options(size=3).total == 6
    with pytest.raises(TypeError):
        Options(3)  # type: ignore[misc]


def test_a_mutable_default_is_refused_as_dataclasses_does():
    with pytest.raises(ValueError, match="mutable default"):

        @records.dataclass
        class Bad:
            items: list[int] = []


@pytest.mark.parametrize("options", OPTIONS)
def test_the_generic_and_the_compiled_init_bind_arguments_alike(options):
    standard, ours = both(**options)
    calls = [
        ((1,), {}),
        ((1, 2), {"tags": ["a"]}),
        ((), {"x": 3, "note": "n"}),
        ((4, 5, [], "m"), {}),
    ]
    for _ in range(records.COMPILE_AFTER + 2):  # the first calls generic, the rest compiled
        for args, kwargs in calls:
            assert repr(ours(*args, **kwargs)) == repr(standard(*args, **kwargs))
        for args, kwargs in (((), {}), ((1, 2, [], "", 5), {}), ((1,), {"x": 2}), ((1,), {"z": 2})):
            with pytest.raises(TypeError):
                ours(*args, **kwargs)
    assert ours.__init__.__qualname__.endswith("Point.__init__")
