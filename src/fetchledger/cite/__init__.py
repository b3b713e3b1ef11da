"""The write side: turn ids into a Sources block (``render``), prove a draft's
citations against the ledger (``check``) and export it (``export``). All of
them only read the ledger."""

from __future__ import annotations

from .check import RULES, CheckReport, Problem, check
from .export import FORMATS as EXPORT_FORMATS
from .export import ExportSummary, export
from .outputs import write_output
from .render import DOCUMENT_STYLES, STYLES, Rendered, render

__all__ = [
    "DOCUMENT_STYLES",
    "EXPORT_FORMATS",
    "RULES",
    "STYLES",
    "CheckReport",
    "ExportSummary",
    "Problem",
    "Rendered",
    "check",
    "export",
    "render",
    "write_output",
]
