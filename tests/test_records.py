"""records.quick: a frozen dataclass's __init__ made quick is the same __init__."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
from typing import Any

import pytest

from fetchledger.models import Retrieval, Snippet, Source
from fetchledger.records import quick
from fetchledger.store.prepare import Prepared
from fetchledger.store.protocol import PreparedVersion, QuoteRow, Registration, StoredVersion
from fetchledger.text.passages import Passage, QuoteSpan

QUICK = [Passage, QuoteSpan, Source, Snippet, Retrieval, PreparedVersion, QuoteRow,
         Registration, StoredVersion, Prepared]


def shape(cls: type[Any]) -> list[tuple[str, Any, Any]]:
    """Each parameter of ``cls.__init__``: name, kind, and its default (a factory's
    default as the factory's own value)."""
    fields = {f.name: f for f in dataclasses.fields(cls)}
    out = []
    for p in list(inspect.signature(cls.__init__).parameters.values())[1:]:
        f = fields[p.name]
        default = (f.default_factory() if f.default_factory is not dataclasses.MISSING
                   else p.default)
        out.append((p.name, p.kind, default))
    return out


def plain_twin(cls: type[Any]) -> type[Any]:
    """The dataclass ``cls`` would be without quick (its fields, its flags)."""
    def spec(f: dataclasses.Field[Any]) -> tuple[str, Any, Any]:
        return (f.name, f.type, dataclasses.field(
            default=f.default, default_factory=f.default_factory, kw_only=f.kw_only,
            compare=f.compare, hash=f.hash, repr=f.repr))
    return dataclasses.make_dataclass(cls.__name__, [spec(f) for f in dataclasses.fields(cls)],
                                      frozen=True)


@pytest.mark.parametrize("cls", QUICK, ids=lambda c: c.__name__)
def test_the_quick_records_keep_their_dataclass_signature(cls: type[Any]) -> None:
    assert cls.__init__.__qualname__ == f"{cls.__qualname__}.__init__"
    assert shape(cls) == shape(plain_twin(cls))


@quick
@dataclasses.dataclass(frozen=True)
class Base:
    a: int
    b: str = "b"
    c: dict[str, int] = dataclasses.field(default_factory=dict, compare=False)


@quick
@dataclasses.dataclass(frozen=True, kw_only=True)
class Child(Base):
    d: int
    e: tuple[int, ...] = (1,)


@dataclasses.dataclass(frozen=True)
class PlainBase:
    a: int
    b: str = "b"
    c: dict[str, int] = dataclasses.field(default_factory=dict, compare=False)


@dataclasses.dataclass(frozen=True, kw_only=True)
class PlainChild(PlainBase):
    d: int
    e: tuple[int, ...] = (1,)


@pytest.mark.parametrize(("args", "kwargs"), [
    ((1,), {"d": 4}), ((1, "x"), {"d": 4, "e": (2,)}), ((1, "x", {"k": 1}), {"d": 0}),
    ((), {"a": 1, "d": 2, "c": {}})])
def test_a_quick_record_is_the_record_the_dataclass_makes(args: tuple[Any, ...],
                                                         kwargs: dict[str, Any]) -> None:
    quick_one, plain = Child(*args, **kwargs), PlainChild(*args, **kwargs)
    assert dataclasses.asdict(quick_one) == dataclasses.asdict(plain)
    assert repr(quick_one).replace("Child", "") == repr(plain).replace("PlainChild", "")
    assert quick_one == Child(*args, **kwargs) and hash(quick_one) == hash(Child(*args,
                                                                             **kwargs))
    assert pickle.loads(pickle.dumps(quick_one)) == quick_one
    assert dataclasses.replace(quick_one, a=9).a == 9
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick_one.a = 2  # type: ignore[misc]
    assert Child(1, d=1).c is not Child(1, d=1).c  # a factory per instance


@pytest.mark.parametrize(("args", "kwargs"), [
    ((), {"d": 1}), ((1,), {}), ((1, "b", {}, 4), {"d": 1}), ((1,), {"d": 1, "z": 2})])
def test_a_quick_record_refuses_the_calls_the_dataclass_refuses(
        args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    with pytest.raises(TypeError):
        PlainChild(*args, **kwargs)
    with pytest.raises(TypeError):
        Child(*args, **kwargs)


def test_quick_refuses_what_it_could_not_keep() -> None:
    @dataclasses.dataclass
    class Loose:
        a: int

    @dataclasses.dataclass(frozen=True)
    class Checked:
        a: int

        def __post_init__(self) -> None: ...

    @dataclasses.dataclass(frozen=True, slots=True)
    class Slotted:
        a: int

    @dataclasses.dataclass(frozen=True)
    class Hidden:
        a: int
        b: int = dataclasses.field(default=0, init=False)

    for cls in (Loose, Checked, Slotted, Hidden):
        with pytest.raises(TypeError):
            quick(cls)
