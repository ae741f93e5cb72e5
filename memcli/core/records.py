"""`record`: a dataclass whose methods are shared functions, not code generated for it.

`dataclasses.dataclass` writes the source of each class's `__init__`, `__repr__`,
`__eq__` (and, frozen, `__hash__`, `__setattr__`, `__delattr__`) and compiles it when
the class is defined: ≈ 1 ms of CPU a class, ≈ 25 ms for the thirty dataclasses a cold
search imports (issue 36). A class made a `record` is a dataclass all the same
(`dataclasses.fields`, `replace`, `asdict` and `is_dataclass` work on it; its fields,
defaults and default factories are dataclass's) whose methods do what the generated ones
do, by reading its fields: for classes made a few times a process (the settings, a
command's request), not for the ones made by the thousand (an Entry, a search hit).

Not supported (TypeError when the class is defined): InitVar and ClassVar fields, fields
with init=False, keyword-only fields; `order` and `slots` are not offered. `__post_init__`
is called as dataclass calls it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform

T = TypeVar("T")
_MISSING: Any = dataclasses.MISSING


@dataclass_transform(frozen_default=False, field_specifiers=(dataclasses.field,))
def record(cls: type[T] | None = None, /, *, frozen: bool = False, eq: bool = True) -> Any:
    """`cls` as `@dataclass`, `@dataclass(frozen=True)` or `@dataclass(eq=False)` would
    make it (module docstring), its methods shared. Use as `@record`,
    `@record(frozen=True)` or `@record(eq=False)`."""

    def wrap(cls: type[T]) -> type[T]:
        return _make(cls, frozen, eq)

    return wrap if cls is None else wrap(cls)


def _make(cls: type[T], frozen: bool, eq: bool) -> type[T]:
    if not cls.__doc__:
        raise TypeError(f"{cls.__name__}: a record needs a docstring")  # dataclass: inspect
    # the fields as dataclass reads them, with none of its methods generated
    made: type[T] = dataclasses.dataclass(init=False, repr=False, eq=False)(cls)
    fields = dataclasses.fields(made)  # type: ignore[arg-type]
    if any(not f.init or f.kw_only is True for f in fields) or len(fields) != len(
        made.__dataclass_fields__  # type: ignore[attr-defined]
    ):
        raise TypeError(f"{cls.__name__}: a record's fields are all plain init fields")
    names = tuple(f.name for f in fields)
    shown = tuple(f.name for f in fields if f.repr)
    compared = tuple(f.name for f in fields if f.compare)
    hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
    defaults = [(f.name, f.default, f.default_factory) for f in fields]
    label = cls.__name__
    required = sum(d is _MISSING and f is _MISSING for _, d, f in defaults)
    takes = f"{len(names) + 1}"
    if required < len(names):  # as Python words it for a function with defaults
        takes = f"from {required + 1} to {takes}"
    post_init = hasattr(made, "__post_init__")
    put: Callable[[object, str, object], None] = object.__setattr__

    def __init__(self: object, *args: object, **kwargs: object) -> None:  # noqa: N807
        if len(args) > len(names):
            raise TypeError(
                f"{label}.__init__() takes {takes} positional arguments but "
                f"{len(args) + 1} were given"
            )
        for key in kwargs:
            if key not in made.__dataclass_fields__:  # type: ignore[attr-defined]
                raise TypeError(f"{label}.__init__() got an unexpected keyword argument {key!r}")
        for i, (name, default, factory) in enumerate(defaults):
            if i < len(args):
                if name in kwargs:
                    raise TypeError(f"{label}.__init__() got multiple values for argument {name!r}")
                value = args[i]
            elif name in kwargs:
                value = kwargs[name]
            elif default is not _MISSING:
                value = default
            elif factory is not _MISSING:
                value = factory()
            else:
                raise TypeError(
                    f"{label}.__init__() missing 1 required positional argument: {name!r}"
                )
            put(self, name, value)
        if post_init:
            self.__post_init__()  # type: ignore[attr-defined]

    def __repr__(self: object) -> str:  # noqa: N807
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
        return f"{type(self).__qualname__}({inner})"

    def __eq__(self: object, other: object) -> bool:  # noqa: N807
        if other.__class__ is not self.__class__:
            return NotImplemented
        mine = tuple(getattr(self, n) for n in compared)
        return mine == tuple(getattr(other, n) for n in compared)  # as dataclass's: tuples

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    __repr__.__qualname__ = f"{cls.__qualname__}.__repr__"
    __eq__.__qualname__ = f"{cls.__qualname__}.__eq__"
    made.__init__ = __init__  # type: ignore[misc]
    made.__repr__ = __repr__  # type: ignore[assignment, method-assign]
    if eq:
        made.__eq__ = __eq__  # type: ignore[assignment, method-assign]
    if not frozen:
        if eq:
            made.__hash__ = None  # type: ignore[assignment]  # dataclass's: eq, not frozen
        return made

    def __hash__(self: object) -> int:  # noqa: N807
        return hash(tuple(getattr(self, n) for n in hashed))

    def __setattr__(self: object, name: str, value: object) -> None:  # noqa: N807
        if type(self) is made or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        put(self, name, value)

    def __delattr__(self: object, name: str) -> None:  # noqa: N807
        if type(self) is made or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        object.__delattr__(self, name)

    if eq:  # (frozen without eq: object's identity hash, as dataclass leaves it)
        made.__hash__ = __hash__  # type: ignore[assignment, method-assign]
    made.__setattr__ = __setattr__  # type: ignore[assignment, method-assign]
    made.__delattr__ = __delattr__  # type: ignore[assignment, method-assign]
    return made
