"""What a source *is* (DESIGN §4): URL normalization (:mod:`.urls`), command
identity (:mod:`.commands`), address parsing (:mod:`.addresses`) and every
secret-redaction rule (:mod:`.secrets`)."""

from __future__ import annotations

from dataclasses import dataclass

from ..document import Kind

__all__ = ["Identity"]


@dataclass(frozen=True)
class Identity:
    """Who an input is: its kind, canonical locator (the source's identity, secrets
    removed) and display form (what people see, redaction marks kept)."""

    kind: Kind
    locator: str
    display: str
