"""memcli.core.records.record: a dataclass whose methods are shared functions behaves as
the class dataclasses.dataclass makes (construction, defaults and factories, the errors
of a wrong call, repr, equality, hashing, frozenness, dataclasses.fields / replace /
asdict), and the classes it cannot make as dataclass would are refused."""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field

import pytest

from memcli.core.records import record


def _pair(frozen: bool) -> tuple[type, type]:
    def body(decorate):  # noqa: ANN001, ANN202 - a decorator, the class it makes
        @decorate
        class Point:
            """A point."""

            x: int
            y: float = 0.5
            tags: list[str] = field(default_factory=list)
            note: str = field(default="", repr=False, compare=False)

            def __post_init__(self) -> None:
                object.__setattr__(self, "seen", self.x)  # as dataclass: after the fields

            def norm(self) -> float:
                return abs(self.x) + abs(self.y)

        return Point

    made = body(record(frozen=True) if frozen else record)
    reference = body(dataclass(frozen=True) if frozen else dataclass)
    return made, reference


@pytest.mark.parametrize("frozen", [True, False])
def test_a_record_behaves_as_the_dataclass(frozen: bool) -> None:
    made, reference = _pair(frozen)
    assert dataclasses.is_dataclass(made)
    assert [f.name for f in dataclasses.fields(made)] == ["x", "y", "tags", "note"]
    for args, kwargs in [((1,), {}), ((1, 2.0), {"tags": ["a"]}), ((), {"x": 3, "note": "n"})]:
        a, b = made(*args, **kwargs), reference(*args, **kwargs)
        assert repr(a) == repr(b) and vars(a) == vars(b) and a.norm() == b.norm()
        assert a.seen == a.x
        assert dataclasses.asdict(a) == dataclasses.asdict(b)
        assert a == made(*args, **kwargs) and a != b  # another class: not equal
    assert made(1).tags is not made(1).tags  # a factory's value each
    assert made(1, note="a") == made(1, note="b")  # compare=False
    assert made(1) != made(2) and made(1, 0.5) == made(1)
    changed = dataclasses.replace(made(1, tags=["t"]), y=3.0)
    assert changed == made(1, 3.0, ["t"]) and type(changed) is made
    for call in [(), (1, 2.0, [], "", 5)]:
        with pytest.raises(TypeError) as got:
            made(*call)
        with pytest.raises(TypeError) as expected:
            reference(*call)
        assert str(got.value).split(")", 1)[1] == str(expected.value).split(")", 1)[1]
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        made(1, z=2)
    with pytest.raises(TypeError, match="multiple values for argument 'x'"):
        made(1, x=2)
    point = made(1, tags=["a"])
    assert copy.deepcopy(point) == point == copy.copy(point)
    if frozen:
        assert hash(point.__class__(1, 0.5, (), "a")) == hash(made(1, 0.5, (), "b"))
        with pytest.raises(dataclasses.FrozenInstanceError):
            point.x = 2
        with pytest.raises(dataclasses.FrozenInstanceError):
            del point.y
    else:
        assert made.__hash__ is None and reference.__hash__ is None  # eq without frozen
        point.x = 5
        assert point == made(5, tags=["a"])


@pytest.mark.parametrize("frozen", [True, False])
def test_a_record_without_eq_keeps_identity(frozen: bool) -> None:
    @record(frozen=frozen, eq=False)
    class Box:
        """A box."""

        value: int = 0

    @dataclass(frozen=frozen, eq=False)
    class Reference:
        """The same, by dataclass."""

        value: int = 0

    one, two = Box(1), Box(1)
    assert one != two and one == one and hash(one) != hash(two)
    assert Box.__eq__ is Reference.__eq__ is object.__eq__
    assert Box.__hash__ is Reference.__hash__ is object.__hash__
    assert repr(one) == "test_a_record_without_eq_keeps_identity.<locals>.Box(value=1)"


def test_what_a_record_cannot_be_is_refused() -> None:
    with pytest.raises(TypeError, match="docstring"):

        @record
        class Bare:
            x: int

    with pytest.raises(TypeError, match="plain init fields"):

        @record
        class Hidden:
            """Hidden."""

            x: int = field(default=0, init=False)


#: the dataclasses of a cold read's modules made by the thousand, which keep dataclass's
#: compiled __init__ (an entry and a block per line parsed, a search hit and its signals,
#: an inject candidate, an access count per entry)
COMPILED = {
    "memcli.core.models.Entry",
    "memcli.store.document.RawBlock",
    "memcli.store.document.EntryBlock",
    "memcli.logic.inject.Candidate",
    "memcli.logic.search.Hit",
    "memcli.logic.search.Signals",
    "memcli.logic.search.EntryValues",
    "memcli.store.access.Access",
}


def test_a_cold_reads_classes_are_records_but_the_many() -> None:
    """Every dataclass the modules of a cold inject or hook define is a record (no code
    compiled for it at import: ≈ 1 ms of CPU a class) but those made by the thousand: a
    new one there is made a record or named above, on purpose."""
    import importlib
    import sys

    from tests.process.test_cold_imports import HOOK

    compiled = set()
    for name in sorted(HOOK):
        importlib.import_module(name)
    for name in sorted(HOOK):
        for value in vars(sys.modules[name]).values():
            if (
                isinstance(value, type)
                and value.__module__ == name
                and dataclasses.is_dataclass(value)
                and value.__init__.__code__.co_filename != record.__code__.co_filename
            ):
                compiled.add(f"{name}.{value.__qualname__}")
    assert compiled == COMPILED
