"""The exception tree. Every error fetchledger raises on purpose is one of these.

Each class carries the CLI exit code it maps to (as click's exceptions do), and
retrieval failures carry the attempt ``status`` recorded in the ledger::

    FetchLedgerError                 base of everything below
    ├── QuoteNotFound            1   TEXT is not verbatim in the source
    ├── BadInput                 2   the input itself is wrong; nothing is recorded
    │   ├── InvalidURL               a URL that cannot be fetched as written
    │   ├── InvalidPath              a missing file, a directory, an unreadable path
    │   ├── UnknownSource            no source has that id
    │   └── InvalidArgument          an option or argument out of range
    ├── RetrievalFailed          3   recorded as an attempt with ``status``
    │   ├── HTTPStatusError          http_error: HTTP status >= 400, or a refused redirect
    │   ├── RetrievalTimeout         timeout: connect/read deadline, or a command timed out
    │   ├── TooLarge                 too_large: a size, page or output cap was reached
    │   ├── BlockedAddress           blocked_address: refused by the address policy
    │   ├── RobotsDenied             robots_denied: robots.txt disallows the URL
    │   ├── EmptyContent             empty_content: nothing readable was found
    │   ├── NeedsPassword            needs_password: encrypted, no or wrong password
    │   ├── NoTextLayer              no_text_layer: a scanned or image-only document
    │   ├── CorruptContent           corrupt: the content could not be parsed
    │   ├── UnsupportedType          unsupported_type: a content type fetchledger cannot read
    │   ├── NetworkError             network_error: refused, unreachable, reset
    │   ├── DNSError                 dns_error: the host name does not resolve
    │   ├── RenderFailed             render_failed: the browser could not render the page
    │   ├── CommandFailed            command_failed: the command could not be started
    │   ├── OfflineMiss              offline_miss: --offline, and the ledger has no stored copy
    │   └── RawCapped                raw_capped: the version's raw bytes were capped when stored
    └── LedgerError              4   the ledger file cannot be used
        ├── LedgerCorrupt            not a ledger, or damaged
        ├── LedgerLocked             locked by another writer past the timeout
        ├── LedgerReadOnly           the file or its folder cannot be written, or the disk is full
        ├── LedgerTooNew             written by a newer fetchledger (unknown migrations)
        ├── LedgerUnavailable        the ledger's database server cannot be reached, or was lost
        └── NoLedger                 no ledger where one was to be read (reading creates none)
"""

from __future__ import annotations

from .hints import Hint

__all__ = [
    "BadInput",
    "BlockedAddress",
    "CommandFailed",
    "CorruptContent",
    "DNSError",
    "EmptyContent",
    "FetchLedgerError",
    "HTTPStatusError",
    "InvalidArgument",
    "InvalidPath",
    "InvalidURL",
    "LedgerCorrupt",
    "LedgerError",
    "LedgerLocked",
    "LedgerReadOnly",
    "LedgerTooNew",
    "LedgerUnavailable",
    "NeedsPassword",
    "NetworkError",
    "NoLedger",
    "NoTextLayer",
    "OfflineMiss",
    "QuoteNotFound",
    "RawCapped",
    "RenderFailed",
    "RetrievalFailed",
    "RetrievalTimeout",
    "RobotsDenied",
    "TooLarge",
    "UnknownSource",
    "UnsupportedType",
    "retrieval_error_for_status",
]


class FetchLedgerError(Exception):
    """Base of every error fetchledger raises on purpose."""

    exit_code = 1
    status = "error"

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class QuoteNotFound(FetchLedgerError):
    """The text is not verbatim in the source; ``nearest`` holds the closest real passage."""

    exit_code = 1
    status = "not_verbatim"

    def __init__(
        self, message: str, *, source_id: int, nearest: str | None, hint: str | None = None
    ) -> None:
        super().__init__(message, hint=hint)
        self.source_id = source_id
        self.nearest = nearest


class BadInput(FetchLedgerError):
    """The input itself is wrong (exit 2); nothing is recorded, not even an attempt."""

    exit_code = 2
    status = "bad_input"


class InvalidURL(BadInput):
    """A URL that cannot be fetched as written."""

    status = "invalid_url"


class InvalidPath(BadInput):
    """A missing file, a directory where a file was expected, or an unreadable path."""

    status = "invalid_path"


class UnknownSource(BadInput):
    """No source in the ledger has that id."""

    status = "unknown_source"

    def __init__(self, source_id: int) -> None:
        super().__init__(
            f"no source [{source_id}] in this ledger",
            hint=Hint("{list} the ids this ledger has"),
        )
        self.source_id = source_id


class InvalidArgument(BadInput):
    """An option or argument that is out of range or malformed."""

    status = "invalid_argument"


class RetrievalFailed(FetchLedgerError):
    """The retrieval failed (exit 3); the ledger records an attempt with ``status``."""

    exit_code = 3
    status = "failed"

    def __init__(self, message: str, *, locator: str = "", hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.locator = locator


class HTTPStatusError(RetrievalFailed):
    """The server answered with an HTTP status >= 400 (or a redirect that was not followed)."""

    status = "http_error"

    def __init__(
        self, message: str, *, locator: str = "", http_status: int | None = None,
        hint: str | None = None, retry_after: str | None = None,
    ) -> None:
        super().__init__(message, locator=locator, hint=hint)
        self.http_status = http_status
        self.retry_after = retry_after  # the Retry-After header, as sent (429, 503)


class RetrievalTimeout(RetrievalFailed):
    """A connect or overall deadline passed, or a command ran past its timeout."""

    status = "timeout"


class TooLarge(RetrievalFailed):
    """A size, page-count or output cap was reached."""

    status = "too_large"


class BlockedAddress(RetrievalFailed):
    """The address policy refused the destination."""

    status = "blocked_address"


class RobotsDenied(RetrievalFailed):
    """robots.txt disallows the URL for fetchledger's user agent."""

    status = "robots_denied"


class EmptyContent(RetrievalFailed):
    """The content was retrieved but holds no readable text."""

    status = "empty_content"


class NeedsPassword(RetrievalFailed):
    """The document is encrypted and no (or a wrong) password was given."""

    status = "needs_password"


class NoTextLayer(RetrievalFailed):
    """The document has pages but no text layer (scanned or image-only)."""

    status = "no_text_layer"


class CorruptContent(RetrievalFailed):
    """The content could not be parsed."""

    status = "corrupt"


class UnsupportedType(RetrievalFailed):
    """The content type is not one fetchledger can turn into text."""

    status = "unsupported_type"


class NetworkError(RetrievalFailed):
    """The connection was refused, reset, or the host was unreachable."""

    status = "network_error"


class DNSError(RetrievalFailed):
    """The host name did not resolve."""

    status = "dns_error"


class RenderFailed(RetrievalFailed):
    """The browser could not render the page (it did not start, or it crashed)."""

    status = "render_failed"


class CommandFailed(RetrievalFailed):
    """The command could not be started (not found, not executable)."""

    status = "command_failed"


class OfflineMiss(RetrievalFailed):
    """Offline, and the ledger holds no whole stored copy of what was asked for."""

    status = "offline_miss"


class RawCapped(RetrievalFailed):
    """The version's raw bytes were capped when stored, so they cannot be extracted again."""

    status = "raw_capped"


class LedgerError(FetchLedgerError):
    """The ledger file cannot be used (exit 4)."""

    exit_code = 4
    status = "ledger_error"

    def __init__(self, message: str, *, path: str = "", hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.path = path


class LedgerCorrupt(LedgerError):
    """The file is not a fetchledger ledger, or it is damaged."""


class LedgerLocked(LedgerError):
    """Another writer held the ledger locked past the busy timeout."""


class LedgerReadOnly(LedgerError):
    """The ledger (or its folder) cannot be written, or the disk is full."""


class LedgerTooNew(LedgerError):
    """The ledger was written by a newer fetchledger with migrations this one does not know."""


class LedgerUnavailable(LedgerError):
    """The ledger's database server cannot be reached, or the connection to it was lost."""


class NoLedger(LedgerError):
    """There is no ledger where a verb that only reads looked for one (it creates none)."""

    status = "no_ledger"


_BY_STATUS: dict[str, type[RetrievalFailed]] = {
    cls.status: cls
    for cls in (
        HTTPStatusError, RetrievalTimeout, TooLarge, BlockedAddress, RobotsDenied,
        EmptyContent, NeedsPassword, NoTextLayer, CorruptContent, UnsupportedType,
        NetworkError, DNSError, RenderFailed, CommandFailed, OfflineMiss, RawCapped,
    )
}


def retrieval_error_for_status(status: str) -> type[RetrievalFailed]:
    """The RetrievalFailed subclass recorded under ``status`` (the base class if unknown)."""
    return _BY_STATUS.get(status, RetrievalFailed)
