"""Error and warning lines: formatted in one place, one line each, whatever the text
(line breaks and controls shown as visible escapes by the display function)."""

from __future__ import annotations

from fetchledger import Failure, InvalidURL, NeedsPassword
from fetchledger.models import error_lines, tool_error_lines, warning_line


def test_error_warning_and_hint_lines_stay_one_line_each() -> None:
    assert error_lines("a\nb\r\n  c\x1b", "see\u2028`fetchledger --help`") == [
        "fetchledger: error: a\\nb\\r\\n c\\x1b", "hint: see\\u2028`fetchledger --help`"]
    assert error_lines("plain") == ["fetchledger: error: plain"]
    assert warning_line("[3] page 4\nis  empty") == "fetchledger: warning: [3] page 4\\nis empty"


def test_a_failure_names_its_input_unless_it_was_bad_input() -> None:
    failed = Failure.from_error("report.pdf", NeedsPassword("the PDF is encrypted",
                                                            hint="pass --password P"))
    assert failed.error_lines() == [
        "fetchledger: error: report.pdf: needs_password: the PDF is encrypted",
        "hint: pass --password P"]
    bad = Failure.from_error("htp://x", InvalidURL("not an http(s) URL: htp://x"))
    assert bad.error_lines() == ["fetchledger: error: not an http(s) URL: htp://x"]


def test_tool_errors_start_with_the_status() -> None:
    assert tool_error_lines(NeedsPassword("encrypted\nfile", hint="give the password")) == [
        "needs_password: encrypted\\nfile", "hint: give the password"]
