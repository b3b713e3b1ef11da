"""fetchledger: retrieval that registers every source in a numbered ledger.

Every adapter fetches or reads, stores the extracted text, registers the
source in the same call, and hands out numbered verbatim snippets
(``[3] "At sea level, water boils at 100 °C."``).
"""

from __future__ import annotations

from ._version import __version__
from .config import Limits, resolve_ledger_path
from .document import Document, Page
from .errors import (
    BadInput,
    BlockedAddress,
    CommandFailed,
    CorruptContent,
    DNSError,
    EmptyContent,
    FetchLedgerError,
    HTTPStatusError,
    InvalidArgument,
    InvalidPath,
    InvalidURL,
    LedgerCorrupt,
    LedgerError,
    LedgerLocked,
    LedgerReadOnly,
    LedgerTooNew,
    LedgerUnavailable,
    NeedsPassword,
    NetworkError,
    NoTextLayer,
    QuoteNotFound,
    RetrievalFailed,
    RetrievalTimeout,
    RobotsDenied,
    TooLarge,
    UnknownSource,
    UnsupportedType,
)
from .ledger import Ledger
from .models import Attempt, Failure, Outcome, Retrieval, Snippet, Source, SourceDetails

__all__ = [
    "Attempt",
    "BadInput",
    "BlockedAddress",
    "CommandFailed",
    "CorruptContent",
    "DNSError",
    "Document",
    "EmptyContent",
    "Failure",
    "FetchLedgerError",
    "HTTPStatusError",
    "InvalidArgument",
    "InvalidPath",
    "InvalidURL",
    "Ledger",
    "LedgerCorrupt",
    "LedgerError",
    "LedgerLocked",
    "LedgerReadOnly",
    "LedgerTooNew",
    "LedgerUnavailable",
    "Limits",
    "NeedsPassword",
    "NetworkError",
    "NoTextLayer",
    "Outcome",
    "Page",
    "QuoteNotFound",
    "Retrieval",
    "RetrievalFailed",
    "RetrievalTimeout",
    "RobotsDenied",
    "Snippet",
    "Source",
    "SourceDetails",
    "TooLarge",
    "UnknownSource",
    "UnsupportedType",
    "__version__",
    "resolve_ledger_path",
]
