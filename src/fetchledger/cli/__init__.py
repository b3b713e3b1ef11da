"""The ``fetchledger`` command line: a thin front end over :class:`fetchledger.Ledger`.

Each command parses its options, calls one library function, and prints the
result (DESIGN §5 text or ``--json``). Library errors carry their own exit code
and become one ``fetchledger: error: ...`` line on stderr (plus a hint).
Verbs live in one module per area and register on the shared group.
"""

from __future__ import annotations

from . import (  # noqa: F401  (they register the verbs)
    batch_verbs,
    cite_verbs,
    ledger_verbs,
    mcp_verbs,
    replay_verbs,
    run_verbs,
    web_verbs,
)
from ._base import cli, main

__all__ = ["cli", "main"]
