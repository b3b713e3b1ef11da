"""Frozen records made quickly: :func:`quick` for the dataclasses every registration
makes many of (passages, quotes, sources, snippets, the prepared version).

A frozen dataclass's own ``__init__`` sets each field through ``object.__setattr__``
(its ``__setattr__`` refuses): about 0.25 µs a field, several microseconds a record,
tens of them a registration. :func:`quick` gives the class an ``__init__`` with the
same signature (positional and keyword-only fields, defaults, default factories, in
the dataclass's order) that writes the same values into the instance's ``__dict__``
directly: the instance is the same, still frozen, equal and hashed as before.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

__all__ = ["quick"]

T = TypeVar("T")

_NO_VALUE = object()  # a default factory's parameter default: call the factory


def quick(cls: type[T]) -> type[T]:
    """Replace frozen dataclass ``cls``'s ``__init__`` by one that writes its fields
    into the instance dict (see the module docstring). Refuses a class it could not
    give the same ``__init__``: ``__post_init__``, fields outside ``__init__``, slots,
    ``InitVar`` or ``ClassVar`` pseudo-fields, or a class that is not frozen."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or not params.init:
        raise TypeError(f"{cls.__name__}: quick() takes a frozen dataclass with __init__")
    if hasattr(cls, "__post_init__") or hasattr(cls, "__slots__"):
        raise TypeError(f"{cls.__name__}: quick() cannot keep __post_init__ or slots")
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    annotated = {name for klass in cls.__mro__ for name in getattr(klass, "__annotations__", {})
                 if not name.startswith("__")}
    if any(not f.init for f in fields) or annotated - {f.name for f in fields}:
        raise TypeError(f"{cls.__name__}: quick() takes fields that are all in __init__")
    namespace: dict[str, Any] = {"_NO_VALUE": _NO_VALUE}
    positional: list[str] = []
    keywords: list[str] = []
    body: list[str] = []
    for f in [f for f in fields if not f.kw_only] + [f for f in fields if f.kw_only]:
        name = f.name
        param = name
        if f.default is not dataclasses.MISSING:
            namespace[f"_default_{name}"] = f.default
            param = f"{name}=_default_{name}"
        elif f.default_factory is not dataclasses.MISSING:
            namespace[f"_factory_{name}"] = f.default_factory
            param = f"{name}=_NO_VALUE"
            body.append(f"    if {name} is _NO_VALUE: {name} = _factory_{name}()")
        (keywords if f.kw_only else positional).append(param)
        body.append(f"    values[{name!r}] = {name}")
    listed = ", ".join(["self", *positional, *(["*", *keywords] if keywords else [])])
    source = f"def __init__({listed}) -> None:\n    values = self.__dict__\n" + "\n".join(body)
    exec(source, namespace)
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    setattr(cls, "__init__", init)  # noqa: B010 — mypy refuses assigning a method
    return cls
