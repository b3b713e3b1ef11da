"""The public surface: __all__ complete, one exception tree, exit codes in one place."""

from __future__ import annotations

import inspect

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
        "network_error", "dns_error", "render_failed", "command_failed", "offline_miss",
        "raw_capped"}
