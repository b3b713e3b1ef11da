"""fetchledger: retrieval that registers every source in a numbered ledger.

Every adapter fetches or reads, stores the extracted text, registers the
source in the same call, and hands out numbered verbatim snippets
(``[3] "At sea level, water boils at 100 °C."``).
"""

from __future__ import annotations

from ._version import __version__
from .adapters.children import kill_children
from .adapters.curl_args import CurlCommand, parse_curl
from .batch.lines import (
    BatchInput,
    BatchOutcome,
    Skipped,
    batch_json_line,
    batch_summary,
    read_batch_inputs,
)
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
    NeedsPassword,
    NetworkError,
    NoTextLayer,
    OfflineMiss,
    QuoteNotFound,
    RawCapped,
    RetrievalFailed,
    RetrievalTimeout,
    RobotsDenied,
    TooLarge,
    UnknownSource,
    UnsupportedType,
)
from .identity.commands import command_line
from .identity.secrets import shown_url
from .ledger import Ledger
from .models import (
    Attempt,
    Failure,
    Outcome,
    Quote,
    Refreshed,
    Retrieval,
    Snippet,
    Source,
    SourceDetails,
    error_lines,
    exit_code_for,
    refresh_exit_code,
    tool_error_lines,
    warning_line,
)

__all__ = [
    "Attempt",
    "BadInput",
    "BatchInput",
    "BatchOutcome",
    "BlockedAddress",
    "CommandFailed",
    "CorruptContent",
    "CurlCommand",
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
    "Limits",
    "NeedsPassword",
    "NetworkError",
    "NoTextLayer",
    "OfflineMiss",
    "Outcome",
    "Page",
    "Quote",
    "QuoteNotFound",
    "RawCapped",
    "Refreshed",
    "Retrieval",
    "RetrievalFailed",
    "RetrievalTimeout",
    "RobotsDenied",
    "Skipped",
    "Snippet",
    "Source",
    "SourceDetails",
    "TooLarge",
    "UnknownSource",
    "UnsupportedType",
    "__version__",
    "batch_json_line",
    "batch_summary",
    "command_line",
    "error_lines",
    "exit_code_for",
    "kill_children",
    "parse_curl",
    "read_batch_inputs",
    "refresh_exit_code",
    "resolve_ledger_path",
    "shown_url",
    "tool_error_lines",
    "warning_line",
]
