"""The public surface: __all__ complete, one exception tree, exit codes in one place."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

import fetchledger
from fetchledger import Ledger, errors


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


def test_json_shapes_are_schemas_of_what_the_records_print(tmp_path: Path) -> None:
    import jsonschema

    from fetchledger import SHAPES, json_schema

    for name in SHAPES:
        jsonschema.Draft202012Validator.check_schema(json_schema(name))
    assert json_schema("retrieval") is not json_schema("retrieval")  # a copy each time
    either = json_schema("retrieval", or_failure=True)
    assert either["type"] == "object" and len(either["anyOf"]) == 2
    failure = {"input": "x", "error": {"status": "http_error", "message": "HTTP 404"}}
    jsonschema.validate(failure, either)
    with pytest.raises(fetchledger.InvalidArgument, match="no JSON shape named 'nope'"):
        json_schema("nope")
    note = tmp_path / "note.txt"
    note.write_text("Otters hold hands while they sleep. They float on their backs.\n")
    with Ledger(tmp_path / "ledger.db") as ledger:
        retrieval = ledger.read(note, k=2)
        details = ledger.details(retrieval.source.id)
        found = ledger.quotes("otters sleep")
    jsonschema.validate(retrieval.to_json(), json_schema("retrieval"))
    jsonschema.validate(details.to_json(), json_schema("source-details"))
    jsonschema.validate({"results": [r.to_json() for r in found]}, json_schema("quotes"))
