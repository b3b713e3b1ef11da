"""Command output as a source: run a command (no shell unless asked), or take
text piped in, and hand back its output as a Document of kind ``command``.

- The command runs in a new session (its own process group) with stdin
  closed. Stdout is captured up to ``Limits.max_command_output`` bytes;
  stderr too with ``stderr=True`` (merged as ``2>&1`` would, in order).
  Past the cap, or past the timeout, the whole process group is killed and
  the attempt fails (``too_large``, ``timeout``). Background processes that
  still hold the output open half a second after the command exits are
  killed too (the output is complete by then).
- A command that cannot start is ``command_failed``; so is exit status 126
  or 127 with no output (how shells report "not executable"/"not found").
  Any other exit status is recorded (``meta["exit_code"]``) and shown; it
  fails the retrieval only with ``require_success``.
- Output bytes are UTF-8 when they decode as UTF-8; mostly-UTF-8 output has
  its stray bytes replaced (U+FFFD); other 8-bit output is decoded in the
  encoding detected for it. Both cases add a warning. Output with NUL bytes
  is binary (``unsupported_type``).
- Stored text: one line per output line, ANSI escape sequences removed, a
  carriage-return overwrite (progress bars) kept as its final state,
  backspace overstrikes resolved, blank lines dropped, lines trimmed.
"""

from __future__ import annotations

import contextlib
import os
import re
import selectors
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..config import Limits, check_seconds
from ..document import Document
from ..errors import (
    CommandFailed,
    EmptyContent,
    InvalidArgument,
    RetrievalTimeout,
    TooLarge,
    UnsupportedType,
)
from ..hints import Hint
from ..identity.commands import CommandLocator, command_locator, piped_locator
from ..identity.secrets import scrub_bytes
from ..text.normalize import clean_lines, looks_binary, one_line, text_extractor_version
from .children import Child, start_reaper
from .protocol import CommandInput, PipedInput
from .supervised import Supervised, SupervisorUnavailable

__all__ = ["CommandAdapter", "CommandOutput", "PipedAdapter", "decode_output", "output_text",
           "read_output"]

LINGER_GRACE = 0.5  # seconds background holders of the output may outlive the command
_STDERR_TAIL = 8192
_ANSI = re.compile(
    r"""\x1b\[[0-?]*[ -/]*[@-~]          # CSI: colours, cursor moves
      | \x1b\][^\x07\x1b]*(?:\x07|\x1b\\)  # OSC: titles, hyperlinks
      | \x1b[P^_X][^\x1b]*\x1b\\         # DCS, PM, APC, SOS strings
      | \x1b[@-Z\\-_]                    # two-character escapes
      | \x9b[0-?]*[ -/]*[@-~]            # 8-bit CSI
    """,
    re.VERBOSE,
)
_OVERSTRIKE = re.compile(r"[^\x08]\x08")


@dataclass(frozen=True)
class CommandOutput:
    """What one run produced: output bytes, exit status, time taken."""

    output: bytes
    exit_code: int
    duration: float
    stderr_tail: bytes  # the end of stderr when it was not captured as output
    lingered: bool  # background processes held the output open and were killed


class CommandAdapter:
    """Runs a command (:class:`~.protocol.CommandInput`) into a Document of kind
    ``command``. Identity: argv (secrets redacted) and working directory."""

    def __init__(self, key: bytes, limits: Limits | None = None) -> None:
        self.key = key  # the ledger's: identities hold keyed marks of redacted values
        self.limits = limits or Limits()

    def identify(self, given: CommandInput) -> CommandLocator:
        """The command's identity; BadInput for an empty command or a bad cwd."""
        return command_locator(given.argv, given.cwd, shell=given.shell, key=self.key)

    def load(self, given: CommandInput, where: CommandLocator) -> Document:
        limit = check_seconds(self.limits.command_timeout if given.timeout is None
                              else given.timeout, "the timeout")
        ran = execute(given.argv, cwd=where.cwd, shell=given.shell, timeout=limit,
                      merge_stderr=given.stderr, max_output=self.limits.max_command_output,
                      name=where.argv[0])
        secrets = list(where.secrets)
        if secrets:  # a verbose command may echo its own secrets: they are never stored
            ran = _scrubbed(ran, secrets)
        status = _status_phrase(ran.exit_code)
        errors = one_line(ran.stderr_tail.decode("utf-8", "replace"))[-300:]
        said = f'; stderr: "{errors}"' if errors else ""
        if ran.exit_code in (126, 127) and not ran.output.strip():
            raise CommandFailed(f"the command could not be run ({status}){said}",
                                locator=where.display)
        if given.require_success and ran.exit_code != 0:
            raise CommandFailed(f"the command {status} (success was required){said}",
                                locator=where.display)
        if not ran.output.strip():
            hint = None if given.stderr else "--stderr registers what it wrote to stderr"
            raise EmptyContent(f"the command printed nothing ({status}){said}",
                               locator=where.display, hint=hint)
        text, warnings = read_output(ran.output, where.display)
        if ran.exit_code != 0:
            warnings.insert(0, f"the command {status}{said}")
        if ran.lingered:
            warnings.append("background processes it left holding its output were stopped")
        meta: dict[str, Any] = {
            "argv": list(where.argv), "cwd": where.cwd, "exit_code": ran.exit_code,
            "duration": round(ran.duration, 3), "command_line": where.command_line,
            "shell": given.shell, "stderr": given.stderr, "output_bytes": len(ran.output),
        }
        if ran.exit_code < 0:
            meta["signal"] = _signal_name(-ran.exit_code)
        return Document(
            kind="command", locator=where.locator, display=where.display, text=text,
            raw=ran.output, extractor="command", extractor_version=text_extractor_version(),
            meta=meta, warnings=tuple(warnings),
        )


class PipedAdapter:
    """Text a caller already holds (:class:`~.protocol.PipedInput`, ``read - --label
    LABEL``), as a Document of kind ``command``. Identity: the label and the working
    directory."""

    def __init__(self, key: bytes, limits: Limits | None = None) -> None:
        self.key = key  # the ledger's: identities hold keyed marks of redacted values
        self.limits = limits or Limits()

    def identify(self, given: PipedInput) -> CommandLocator:
        return piped_locator(given.label, given.cwd, key=self.key)

    def load(self, given: PipedInput, where: CommandLocator) -> Document:
        data = given.data
        if not isinstance(data, bytes) and data.isatty():
            raise InvalidArgument("nothing is piped in: stdin is a terminal",
                                  hint=Hint("{pipe_label}"))
        cap = self.limits.max_command_output
        raw = data if isinstance(data, bytes) else data.read(cap + 1)
        if len(raw) > cap:
            raise TooLarge(f"the piped text is over the cap of {cap:,} bytes",
                           locator=where.display)
        if not raw.strip():
            raise EmptyContent("nothing was piped in", locator=where.display)
        text, warnings = read_output(raw, where.display)
        return Document(
            kind="command", locator=where.locator, display=where.display, text=text, raw=raw,
            extractor="stdin", extractor_version=text_extractor_version(),
            meta={"label": where.command_line, "cwd": where.cwd, "command_line":
                  where.command_line, "piped": True, "output_bytes": len(raw)},
            warnings=tuple(warnings),
        )


def _scrubbed(ran: CommandOutput, secrets: list[str]) -> CommandOutput:
    return replace(ran, output=scrub_bytes(ran.output, secrets),
                   stderr_tail=scrub_bytes(ran.stderr_tail, secrets))


def read_output(raw: bytes, locator: str) -> tuple[str, list[str]]:
    """The stored text of output bytes, and a warning about their decoding if any;
    UnsupportedType for binary output, EmptyContent when nothing readable is left."""
    decoded, warning = decode_output(raw, locator=locator)
    text = output_text(decoded)
    if not text:
        raise EmptyContent("the output holds only whitespace and control codes",
                           locator=locator)
    return text, [warning] if warning else []


# --- running ---------------------------------------------------------------------


def execute(
    argv: Sequence[str],
    *,
    cwd: str,
    shell: bool,
    timeout: float,
    merge_stderr: bool,
    max_output: int,
    name: str,
) -> CommandOutput:
    """Run the command under its supervisor (:mod:`.supervised`: nothing it starts
    outlives the run, even in another session); kill everything it started on timeout
    or past the cap."""
    started = time.monotonic()
    deadline = started + timeout
    command = ["/bin/sh", "-c", " ".join(argv)] if shell else list(argv)
    try:
        try:
            running: Supervised | _Direct = Supervised.start(
                command, cwd=cwd, merge_stderr=merge_stderr, started_by=deadline)
        except SupervisorUnavailable:
            running = _Direct.start(command, cwd=cwd, merge_stderr=merge_stderr)
    except FileNotFoundError as exc:
        raise CommandFailed(f"command not found: {name}",
                            hint="check the name and PATH, or pass --shell") from exc
    except PermissionError as exc:
        raise CommandFailed(f"permission denied: cannot execute {name}") from exc
    except OSError as exc:
        raise CommandFailed(f"cannot start {name}: {exc.strerror or exc}") from exc
    try:
        output, stderr_tail, lingered = _collect(running, deadline, timeout, max_output)
        remaining = max(0.0, deadline - time.monotonic())
        try:
            code = running.wait(timeout=remaining)
        except subprocess.TimeoutExpired:
            running.kill()
            raise RetrievalTimeout(
                f"the command ran past its timeout of {timeout:g} s and was killed "
                "(with its process group)") from None
    finally:
        running.finish()
    return CommandOutput(output, code, time.monotonic() - started, stderr_tail, lingered)


class _Direct:
    """The command as a plain process group (where no supervisor can run): what it
    leaves in another session is not seen."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.child = Child.of(process, group=True)
        self.stdout, self.stderr = process.stdout, process.stderr

    @classmethod
    def start(cls, command: list[str], *, cwd: str, merge_stderr: bool) -> _Direct:
        start_reaper()  # before the group exists: it is tied the moment it does
        return cls(subprocess.Popen(
            command, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
            start_new_session=True))

    def poll(self) -> int | None:
        return self.process.poll()

    def wait(self, timeout: float) -> int:
        return self.process.wait(timeout=timeout)

    def kill(self) -> None:
        self.child.kill()

    def finish(self) -> None:
        if self.process.returncode is None:
            self.child.kill()
        self.child.reap()
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


def _collect(
    running: Supervised | _Direct, deadline: float, timeout: float, max_output: int,
) -> tuple[bytes, bytes, bool]:
    """Read stdout (and stderr) until both close; enforce the deadline and the cap."""
    output = bytearray()
    errors = bytearray()
    exited_at: float | None = None
    lingered = False
    with selectors.DefaultSelector() as selector:
        for stream in (running.stdout, running.stderr):
            if stream is not None:
                selector.register(stream.fileno(), selectors.EVENT_READ, stream is running.stdout)
        while selector.get_map():
            now = time.monotonic()
            if now >= deadline:
                running.kill()
                raise RetrievalTimeout(
                    f"the command ran past its timeout of {timeout:g} s and was killed "
                    "(with its process group)")
            if exited_at is None and running.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at >= LINGER_GRACE:
                running.kill()  # grandchildren still hold the output open
                lingered = True
                break
            wait = min(deadline - now, 0.1 if exited_at is None else LINGER_GRACE)
            for key, _ in selector.select(wait):
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    selector.unregister(key.fd)
                elif key.data:
                    output += chunk
                    if len(output) > max_output:
                        running.kill()
                        raise TooLarge(f"the command's output passed the cap of "
                                       f"{max_output:,} bytes (it was killed)")
                else:
                    errors += chunk
                    del errors[:-_STDERR_TAIL]
    return bytes(output), bytes(errors), lingered


def _status_phrase(code: int) -> str:
    if code < 0:
        return f"was killed by {_signal_name(-code)}"
    return "exited with status 0" if code == 0 else f"exited with status {code}"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


# --- decoding ------------------------------------------------------------------------


def decode_output(raw: bytes, *, locator: str = "") -> tuple[str, str | None]:
    """Decode command output: ``(text, warning or None)``; UnsupportedType for binary."""
    if raw.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        from ..text.normalize import decode_bytes

        return decode_bytes(raw, locator=locator), None
    if looks_binary(raw):
        raise UnsupportedType("the output is binary data, not text", locator=locator)
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError:
        pass
    replaced = raw.decode("utf-8", "replace")
    bad = replaced.count("\ufffd")
    good = sum(1 for ch in replaced if ord(ch) > 0x7F and ch != "\ufffd")
    if good >= bad:
        return replaced, (f"the output is not valid UTF-8: {bad} undecodable "
                          f"byte{'s' if bad != 1 else ''} became U+FFFD")
    encoding = _legacy_encoding(raw)
    try:
        text = raw.decode(encoding)
    except (LookupError, UnicodeDecodeError):
        encoding, text = "cp1252", raw.decode("cp1252", "replace")
    return text, f"the output is not UTF-8; it was decoded as {encoding}"


_WESTERN = frozenset({"cp1252", "latin_1", "iso8859_1", "iso8859_15"})


def _legacy_encoding(raw: bytes) -> str:
    """The 8-bit encoding of non-UTF-8 output: the locale's when it is not UTF-8
    (the command wrote for this terminal), else the detected one, with Windows-1252
    preferred among equally good guesses (detectors often pick cp1250 for French)."""
    import codecs
    import locale

    preferred = locale.getpreferredencoding(False)
    with contextlib.suppress(LookupError):
        if codecs.lookup(preferred).name != "utf-8":
            with contextlib.suppress(UnicodeDecodeError):
                raw.decode(preferred)
                return preferred
    from charset_normalizer import from_bytes

    matches = from_bytes(raw)
    best = matches.best()
    if best is None:
        return "cp1252"
    ties = [m for m in matches if m.chaos <= best.chaos]
    if any(m.encoding in _WESTERN for m in ties):
        return "cp1252"
    return str(best.encoding)


def output_text(decoded: str) -> str:
    """Stored text of command output: one line per output line, terminal codes gone.
    A change here that changes the text of the same output bumps ``TEXT_REVISION``
    (the version recorded for command output, as for text files)."""
    text = _ANSI.sub("", decoded).replace("\r\n", "\n")
    lines = []
    for line in text.split("\n"):
        if "\r" in line:  # a terminal shows what the last carriage return left
            line = next((part for part in reversed(line.split("\r")) if part.strip()), "")
        while "\x08" in line:  # overstrike: "b\bb" is a bold b, "_\bx" an underlined x
            struck = _OVERSTRIKE.sub("", line)
            line = struck if struck != line else line.replace("\x08", "")
        lines.append(line)
    return clean_lines("\n".join(lines))
