"""The canonical locator of a command, and the redaction of secrets in its argv."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from fetchledger import InvalidArgument, InvalidPath
from fetchledger.identity.command_secrets import redact_argv, redact_command_text
from fetchledger.identity.commands import command_line, command_locator, piped_locator
from fetchledger.identity.secrets import is_secret_name

KEY = b"k" * 32


@pytest.mark.parametrize(("argv", "expected"), [
    (["tool", "--token=abc123"], ["tool", "--token=REDACTED"]),
    (["tool", "--api-key", "abc123", "x"], ["tool", "--api-key", "REDACTED", "x"]),
    (["env", "GITHUB_TOKEN=ghp_1", "gh"], ["env", "GITHUB_TOKEN=REDACTED", "gh"]),
    (["curl", "-H", "Authorization: Bearer x1"], ["curl", "-H", "Authorization: REDACTED"]),
    (["curl", "-HCookie: s=1"], ["curl", "-HCookie: REDACTED"]),
    (["curl", "-H", "X-Api-Key: k"], ["curl", "-H", "X-Api-Key: REDACTED"]),
    (["curl", "-u", "me:pw1"], ["curl", "-u", "me:REDACTED"]),
    (["curl", "https://me:pw@h.org/p?q=1&access_token=t"],
     ["curl", "https://REDACTED@h.org/p?q=1&access_token=REDACTED"]),
    (["psql", "--password=hunter22"], ["psql", "--password=REDACTED"]),
])
def test_secrets_are_redacted(argv: list[str], expected: list[str]) -> None:
    assert redact_argv(argv) == expected


@pytest.mark.parametrize("argv", [
    ["git", "log", "--author=alice", "--oneline"],
    ["docker", "login", "--password-stdin", "-u", "me"],
    ["curl", "-H", "Accept: text/html", "https://example.org/?page=2"],
    ["ps", "-u", "root"],
    ["grep", "-r", "token", "."],
])
def test_ordinary_arguments_are_left_alone(argv: list[str]) -> None:
    assert redact_argv(argv) == argv


def test_secret_names() -> None:
    for name in ("--token", "--auth-token", "DB_PASSWORD", "X-Api-Key", "Cookie",
                 "--client-secret", "Authorization", "--passphrase", "--sort-key"):
        assert is_secret_name(name), name
    for name in ("--author", "--keyword", "--passes", "--tokenizer"):
        assert not is_secret_name(name), name


def test_a_found_secret_is_scrubbed_from_every_argument() -> None:
    argv = ["sh", "-c", "echo s3cr3t-value", "--token=s3cr3t-value"]
    assert redact_argv(argv) == ["sh", "-c", "echo REDACTED", "--token=REDACTED"]
    assert command_locator(argv, key=KEY).secrets == ("s3cr3t-value",)


def test_shell_text_keeps_its_form() -> None:
    assert redact_command_text("curl -s -H 'Authorization: Bearer abc' x | jq .") == (
        "curl -s -H 'Authorization: REDACTED' x | jq .")
    assert redact_command_text("TOKEN=abcd make deploy && echo ok") == (
        "TOKEN=REDACTED make deploy && echo ok")
    assert redact_command_text("echo 'unbalanced") == "echo 'unbalanced"


def test_locator_is_the_quoted_argv_and_the_folder(tmp_path: Path) -> None:
    where = command_locator(["grep", "-n", "two words", "f.txt"], tmp_path, key=KEY)
    assert where.locator == f"grep -n 'two words' f.txt (in {tmp_path.resolve()})"
    assert shlex.split(where.locator.rsplit(" (in ", 1)[0]) == ["grep", "-n", "two words", "f.txt"]
    assert where.command_line == "grep -n 'two words' f.txt"
    # the same words split differently are a different command
    split = command_locator(["grep", "-n", "two", "words", "f.txt"], tmp_path, key=KEY)
    assert split.locator != where.locator


def test_shell_locator_equals_sh_dash_c(tmp_path: Path) -> None:
    shell = command_locator(["ls", "|", "wc", "-l"], tmp_path, shell=True, key=KEY)
    assert shell.locator == command_locator(["sh", "-c", "ls | wc -l"], tmp_path, key=KEY).locator
    assert shell.command_line == "ls | wc -l" == command_line(["ls | wc -l"], shell=True)


def test_bad_commands_and_folders_are_bad_input(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgument):
        command_locator([], key=KEY)
    with pytest.raises(InvalidArgument):
        command_locator(["  "], shell=True, key=KEY)
    with pytest.raises(InvalidArgument):
        command_locator(["echo", "a\0b"], key=KEY)
    with pytest.raises(InvalidPath):
        command_locator(["ls"], tmp_path / "missing", key=KEY)
    (tmp_path / "file").write_text("x")
    with pytest.raises(InvalidPath):
        command_locator(["ls"], tmp_path / "file", key=KEY)


def test_piped_locator(tmp_path: Path) -> None:
    where = piped_locator("  curl   -H 'Authorization: Bearer z' x ", tmp_path, key=KEY)
    assert where.display == f"stdin: curl -H 'Authorization: REDACTED' x (in {tmp_path.resolve()})"
    assert where.locator.startswith("stdin: curl -H 'Authorization: REDACTED~")
    with pytest.raises(InvalidArgument):
        piped_locator("", tmp_path, key=KEY)
