"""The public surface: __all__ complete, one exception tree, exit codes in one place."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import fetchledger
from fetchledger import errors


def test_all_is_complete_and_importable() -> None:
    public = {name for name in dir(fetchledger) if not name.startswith("_")}
    modules = {name for name, value in vars(fetchledger).items() if inspect.ismodule(value)}
    assert set(fetchledger.__all__) == public - modules - {"annotations"} | {"__version__"}
    for name in fetchledger.__all__:
        assert getattr(fetchledger, name) is not None


def test_every_error_is_exported_documented_and_under_one_base() -> None:
    classes = [c for c in vars(errors).values() if inspect.isclass(c)
               and issubclass(c, Exception) and c.__module__ == errors.__name__]
    tree = errors.__doc__ or ""
    for cls in classes:
        assert issubclass(cls, errors.FetchLedgerError)
        assert cls.__doc__ and "\n" not in cls.__doc__.strip(), cls
        assert cls.__name__ in tree, f"{cls.__name__} missing from the tree in errors.py"
        assert cls.__name__ in errors.__all__
        if cls is not errors.FetchLedgerError:
            assert cls.__name__ in fetchledger.__all__


def test_exit_codes_follow_the_design() -> None:
    assert errors.QuoteNotFound.exit_code == 1
    assert errors.BadInput.exit_code == 2
    assert errors.RetrievalFailed.exit_code == 3
    assert errors.LedgerError.exit_code == 4
    statuses = {c.status for c in vars(errors).values()
                if inspect.isclass(c) and issubclass(c, errors.RetrievalFailed)
                and c is not errors.RetrievalFailed}
    assert statuses == {
        "http_error", "timeout", "too_large", "blocked_address", "robots_denied",
        "empty_content", "needs_password", "no_text_layer", "corrupt", "unsupported_type",
        "network_error", "dns_error", "render_failed", "command_failed"}


def test_no_import_cycles_inside_the_package() -> None:
    """Imports flow one way (DESIGN §3): build the module graph and look for cycles."""
    root = Path(fetchledger.__file__).parent
    graph: dict[str, set[str]] = {}
    for path in root.rglob("*.py"):
        module = ".".join(("fetchledger", *path.relative_to(root).with_suffix("").parts))
        module = module.removesuffix(".__init__")
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        edges = set()
        source = path.read_text()
        source = source.split("if TYPE_CHECKING:")[0]  # type-only imports do not count
        for dots, name, names in re.findall(
                r"^\s*from (\.+)([\w.]*) import \(?([\w, ]*)", source, re.M):
            base = package.split(".")
            base = base[: len(base) - (len(dots) - 1)]
            if name:
                edges.add(".".join([*base, name]))
            else:  # "from . import a, b" imports the sibling modules a and b
                edges.update(".".join([*base, n.strip()]) for n in names.split(",") if n.strip())
        graph[module] = edges

    def visit(node: str, stack: list[str], done: set[str]) -> None:
        assert node not in stack, f"import cycle: {' -> '.join([*stack, node])}"
        if node in done or node not in graph:
            return
        for target in graph[node]:
            visit(target, [*stack, node], done)
        done.add(node)

    done: set[str] = set()
    for module in graph:
        if module != "fetchledger":
            visit(module, [], done)
