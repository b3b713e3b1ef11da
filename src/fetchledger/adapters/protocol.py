"""The adapter protocol: the one small interface every adapter offers the Ledger.

An adapter takes one kind of *input* (the records below: what a caller asks
for, nothing parsed yet) and offers two steps:

- ``identify(input)`` → the input's :class:`~fetchledger.identity.Identity`
  (kind, canonical locator, display form), computed once per call. Bad input
  raises :class:`~fetchledger.errors.BadInput` here, before anything is sent
  or read, and nothing is recorded.
- ``load(input, identity)`` → the :class:`~fetchledger.document.Document`,
  carrying that identity. A failure raises
  :class:`~fetchledger.errors.RetrievalFailed`, which the Ledger records as
  an attempt under the identity.

The Ledger dispatches on the input's type through one table
(:data:`fetchledger.ledger.ADAPTERS`). Adapters know nothing of storage.
The input records live here, apart from their adapters, so that the Ledger
can name them without importing an adapter's dependencies (the web's HTTP
stack) before it is used.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from ..document import Document
    from ..identity import Identity
    from ..net.client import HTTPRequest

__all__ = [
    "Adapter",
    "CommandInput",
    "FileInput",
    "HttpInput",
    "PipedInput",
    "WebInput",
]


@dataclass(frozen=True)
class FileInput:
    """A local file (``read PATH``); ``password`` opens an encrypted PDF."""

    path: str | os.PathLike[str]
    password: str | None = None


@dataclass(frozen=True)
class CommandInput:
    """A command to run (``run -- CMD ARGS``), no shell unless ``shell``."""

    argv: Sequence[str]
    cwd: str | os.PathLike[str] | None = None
    shell: bool = False
    timeout: float | None = None
    stderr: bool = False  # captured too, merged as 2>&1
    require_success: bool = False


@dataclass(frozen=True)
class PipedInput:
    """Text a caller already holds (``read - --label LABEL``), named by ``label``."""

    data: bytes | IO[bytes]
    label: str
    cwd: str | os.PathLike[str] | None = None


@dataclass(frozen=True)
class WebInput:
    """A URL to GET (``fetch URL``); ``robots`` honours robots.txt; ``render`` runs an
    HTML page's JavaScript in Chromium: ``auto`` (empty shells), ``always``, ``never``."""

    url: str
    robots: bool = False
    render: str = "auto"


@dataclass(frozen=True)
class HttpInput:
    """Any HTTP request (``curl``, ``http_request``); ``extra_secrets`` are values the
    request carries that its headers and URL do not show as secret (curl's ``-u``)."""

    request: HTTPRequest
    extra_secrets: tuple[str, ...] = ()


InputT_contra = TypeVar("InputT_contra", contravariant=True)
IdentityT = TypeVar("IdentityT", bound="Identity")


class Adapter(Protocol[InputT_contra, IdentityT]):
    """What every adapter offers: who an input is, and its content as a Document."""

    def identify(self, given: InputT_contra, /) -> IdentityT:
        """The input's identity; BadInput when it is not a usable input."""
        ...

    def load(self, given: InputT_contra, identity: IdentityT, /) -> Document:
        """Fetch, read or run it and extract its text; RetrievalFailed when that fails."""
        ...
