"""The write side: turn ids into a Sources block (``render``) and prove a draft's
citations against the ledger (``check``). Both only read the ledger."""

from __future__ import annotations

from .check import RULES, CheckReport, Problem, check
from .render import DOCUMENT_STYLES, STYLES, Rendered, render

__all__ = [
    "DOCUMENT_STYLES",
    "RULES",
    "STYLES",
    "CheckReport",
    "Problem",
    "Rendered",
    "check",
    "render",
]
