"""DESIGN §3's import rules, read from the source with ``ast``: no import cycles
(function-level imports count, ``if TYPE_CHECKING:`` imports do not); adapters and
net import no storage and no Ledger; the write side never fetches; front ends
import only the public API; only the Ledger calls a store's write methods; no
module over ~800 lines."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import fetchledger
import fetchledger.cite

ROOT = Path(fetchledger.__file__).parent
MAX_LINES = 800
FRONTS = ("fetchledger.cli", "fetchledger.mcp")
PUBLIC = {"fetchledger": set(fetchledger.__all__),
          "fetchledger.cite": set(fetchledger.cite.__all__)}
# What the Store protocol marks as writes (store/protocol.py: "only Ledger calls these").
STORE_WRITES = {"register", "record_quotes", "reset", "import_rows", "claim",
                "record_unchanged", "record_searches"}
# Ledger methods that retrieve (fetch, read, run) or write.
RETRIEVING = {"fetch", "fetch_many", "fetch_many_async", "batch", "curl", "http_request",
              "read", "read_many", "read_piped", "run", "register", "register_prepared",
              "record", "reset", "refresh", "reextract", "ingest", "record_unchanged",
              "record_searches"}


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # a fetchledger module (a package stands for its __init__)
    name: str | None  # the name taken from target, when it is not a module itself
    line: int
    type_only: bool  # under ``if TYPE_CHECKING:``


def module_of(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(("fetchledger", *parts)).removesuffix(".__init__")


MODULES = {module_of(p): p for p in ROOT.rglob("*.py")}


def in_layer(module: str, layer: str) -> bool:
    return module == layer or module.startswith(layer + ".")


class _Collector(ast.NodeVisitor):
    def __init__(self, module: str) -> None:
        self.module = module
        is_package = MODULES[module].name == "__init__.py"
        self.package = module if is_package else module.rpartition(".")[0]
        self.type_only = False
        self.found: list[Import] = []

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        if (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
                isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"):
            outer, self.type_only = self.type_only, True
            for child in node.body:
                self.visit(child)
            self.type_only = outer
            for child in node.orelse:
                self.visit(child)
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, None, node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            base = self.package.split(".")
            base = base[: len(base) - (node.level - 1)]
            target = ".".join([*base, *([node.module] if node.module else [])])
        else:
            target = node.module or ""
        for alias in node.names:
            submodule = f"{target}.{alias.name}"
            if submodule in MODULES and alias.name not in bound_names(target):
                self._add(submodule, None, node.lineno)
            else:
                self._add(target, alias.name, node.lineno)

    def _add(self, target: str, name: str | None, line: int) -> None:
        if in_layer(target, "fetchledger"):
            self.found.append(Import(self.module, target, name, line, self.type_only))


@cache
def bound_names(module: str) -> frozenset[str]:
    """The names a module binds at its top level (``from P import N`` takes the package's
    own ``N`` before a submodule of that name)."""
    if module not in MODULES:
        return frozenset()
    names: set[str] = set()
    for node in ast.parse(MODULES[module].read_text()).body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and not node.module:
            continue  # ``from . import sub`` binds the package's own submodules
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return frozenset(names)


@cache
def imports_of(module: str) -> tuple[Import, ...]:
    collector = _Collector(module)
    collector.visit(ast.parse(MODULES[module].read_text(), str(MODULES[module])))
    return tuple(collector.found)


def runtime_edges(module: str) -> set[str]:
    return {i.target for i in imports_of(module) if not i.type_only}


def reachable(module: str) -> set[str]:
    """Every module that importing ``module`` (and calling its functions) may import."""
    seen: set[str] = set()
    stack = [module]
    while stack:
        for target in runtime_edges(stack.pop()):
            if target not in seen:
                seen.add(target)
                stack.append(target)
    return seen


def where(found: Import) -> str:
    return f"{found.source}:{found.line} imports {found.target}" + (
        f".{found.name}" if found.name else "")


# --- the rules --------------------------------------------------------------------------------


def test_the_collector_sees_function_level_imports_and_skips_type_only_ones() -> None:
    """The rules below are only as good as this reading of the source."""
    ledger = imports_of("fetchledger.ledger")
    assert any(i.target == "fetchledger.batch.scheduler" and not i.type_only for i in ledger)
    assert any(i.target == "fetchledger.adapters.curl_args" and i.type_only for i in ledger)
    assert "fetchledger.adapters.web" in runtime_edges("fetchledger.ledger")  # in a function


def test_no_import_cycles() -> None:
    done: set[str] = set()

    def visit(node: str, stack: list[str]) -> None:
        assert node not in stack, f"import cycle: {' -> '.join([*stack, node])}"
        if node in done:
            return
        for target in sorted(runtime_edges(node)):
            visit(target, [*stack, node])
        done.add(node)

    for module in sorted(MODULES):
        visit(module, [])


def test_adapters_and_net_reach_no_storage_and_no_ledger() -> None:
    for module in MODULES:
        if not (in_layer(module, "fetchledger.adapters") or in_layer(module, "fetchledger.net")):
            continue
        forbidden = {m for m in reachable(module)
                     if in_layer(m, "fetchledger.store") or m in ("fetchledger.ledger",
                                                                  "fetchledger")}
        assert not forbidden, f"{module} reaches {sorted(forbidden)}"


def test_the_write_side_never_fetches() -> None:
    """cite/ reaches no HTTP, adapter, batch, Ledger or storage backend code (the store's
    protocol and rows aside), and calls no retrieving or writing method on the ledger it
    is handed."""
    for module in MODULES:
        if not in_layer(module, "fetchledger.cite"):
            continue
        forbidden = {m for m in reachable(module) if any(in_layer(m, layer) for layer in (
            "fetchledger.net", "fetchledger.adapters", "fetchledger.batch",
            "fetchledger.ledger", "fetchledger.store")) and m != "fetchledger.store.protocol"}
        assert not forbidden, f"{module} reaches {sorted(forbidden)}"
        for call in _method_calls(module):
            receiver, method, line = call
            assert not ("ledger" in receiver.lower() and method in RETRIEVING), (
                f"{module}:{line} calls {receiver}.{method}()")


def test_front_ends_import_only_the_public_api() -> None:
    for module in MODULES:
        if not any(in_layer(module, front) for front in FRONTS):
            continue
        for found in imports_of(module):
            if any(in_layer(found.target, front) for front in FRONTS):
                continue  # one front end's own modules (the CLI starts the MCP server)
            assert found.target in PUBLIC, f"{where(found)}: not the public API"
            assert found.name is None or found.name in PUBLIC[found.target], (
                f"{where(found)}: not in {found.target}.__all__")


def test_only_the_ledger_calls_a_stores_write_methods() -> None:
    for module in MODULES:
        if module == "fetchledger.ledger" or in_layer(module, "fetchledger.store"):
            continue
        for receiver, method, line in _method_calls(module):
            assert not ("store" in receiver.lower() and method in STORE_WRITES), (
                f"{module}:{line} calls {receiver}.{method}()")
        for found in imports_of(module):
            if in_layer(found.target, "fetchledger.store") and not found.type_only:
                assert found.name not in ("open_store", "SQLiteStore") and not (
                    found.target.startswith("fetchledger.store.") and found.target not in (
                        "fetchledger.store.prepare", "fetchledger.store.protocol")), (
                    f"{where(found)}: only the Ledger opens a store")


def test_no_module_is_over_800_lines() -> None:
    long = {m: n for m, p in MODULES.items() if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"split these modules: {long}"


def _method_calls(module: str) -> Iterator[tuple[str, str, int]]:
    """``(receiver as written, method, line)`` of every ``receiver.method(...)`` call."""
    for node in ast.walk(ast.parse(MODULES[module].read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            yield ast.unparse(node.func.value), node.func.attr, node.lineno
