"""What the MCP server settles when it starts: the ledger, the address policy, the
folders ``read_file`` may read (``--root``) and the executables ``run_command`` may
start (``--allow-command``)."""

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fetchledger import InvalidArgument, InvalidPath, Ledger

__all__ = ["CommandAllowlist", "Roots", "ServerConfig"]


@dataclass(frozen=True)
class Roots:
    """The folders ``read_file`` may read (resolved); a relative path is taken from
    the first one."""

    folders: tuple[Path, ...]

    @classmethod
    def from_options(cls, folders: Sequence[str], cwd: Path | None = None) -> "Roots":
        """The ``--root`` folders (default: the working directory); a folder that does
        not exist is bad input. A client that starts the server in ``/`` (as desktop
        apps do) gets no root at all, not a server that reads every file: every other
        tool serves, and read_file answers an error naming --root."""
        here = (cwd or Path.cwd()).resolve()
        if not folders and here == Path("/").resolve():
            return cls(())
        resolved = []
        for folder in folders or [str(here)]:
            if not folder.strip():  # never taken for the working directory
                raise InvalidArgument("--root is empty: name a folder")
            try:
                path = Path(folder).expanduser().resolve()
                found = path.is_dir()
            except (OSError, RuntimeError, ValueError) as exc:  # too long, a loop, a NUL
                raise InvalidPath(f"--root {folder}: {exc}") from exc
            if not found:
                raise InvalidPath(f"--root {folder}: no such folder")
            resolved.append(path)
        return cls(tuple(dict.fromkeys(resolved)))

    def confine(self, path: str) -> Path:
        """``path`` resolved (symlinks followed), if it lies inside a root; InvalidPath
        otherwise, whether or not it exists."""
        if not self.folders:
            raise InvalidPath(
                "read_file has no folder to read: the server was started in / without --root",
                hint="start the server with --root DIR (repeatable), the folders read_file "
                     "may read")
        if not path:
            raise InvalidPath("the file name is empty", hint="name a file under the "
                              "server's --root folders")
        given = Path(path).expanduser()
        if not given.is_absolute():
            given = self.folders[0] / given
        try:
            resolved = given.resolve()
        except (OSError, RuntimeError, ValueError) as exc:  # a loop, a NUL byte, no access
            raise InvalidPath(f"cannot resolve {path!r}: {exc}") from exc
        if any(resolved.is_relative_to(folder) for folder in self.folders):
            return resolved
        raise InvalidPath(
            f"{path} is outside the folders this server may read",
            hint="read_file reads only under " + ", ".join(map(str, self.folders))
                 + " (the server's --root folders)")


@dataclass(frozen=True)
class CommandAllowlist:
    """The executables ``run_command`` may start: what each ``--allow-command NAME``
    resolved to on PATH when the server started."""

    names: tuple[str, ...]
    executables: frozenset[str]

    @classmethod
    def from_names(cls, names: Sequence[str]) -> "CommandAllowlist":
        executables = set()
        for name in names:
            found = shutil.which(name)
            if found is None:
                raise InvalidArgument(f"--allow-command {name}: no executable of that name "
                                      "on PATH")
            executables.add(os.path.abspath(found))
        return cls(tuple(dict.fromkeys(names)), frozenset(executables))

    def __bool__(self) -> bool:
        return bool(self.executables)

    def check(self, argv: Sequence[str]) -> None:
        """Raise InvalidArgument unless ``argv[0]`` resolves (on PATH, as it will be
        started) to an allowed executable. The path is compared as found, not with its
        symlinks followed: a multi-call binary (busybox) is allowed by its name only."""
        if not argv or not argv[0].strip():
            raise InvalidArgument("the command is empty")
        if "\0" in argv[0]:
            raise InvalidArgument("the command name contains a NUL byte")
        found = shutil.which(argv[0])
        if found is None or os.path.abspath(found) not in self.executables:
            raise InvalidArgument(
                f"{argv[0]} is not a command this server may run",
                hint="allowed: " + ", ".join(self.names)
                     + " (the server's --allow-command names)")


@dataclass(frozen=True)
class ServerConfig:
    """Everything the server needs, settled at start: where the ledger is, the
    address policy, the readable folders and the runnable executables."""

    ledger: Path | str
    allow_private: bool
    allow_hosts: tuple[str, ...]
    roots: Roots
    commands: CommandAllowlist
    offline: bool = False  # fetch and http_request answer from stored raw bytes only

    @classmethod
    def create(
        cls,
        *,
        ledger: str | os.PathLike[str] | None = None,
        allow_private: bool | None = None,
        allow_hosts: Sequence[str] = (),
        roots: Sequence[str] = (),
        commands: Sequence[str] = (),
        offline: bool = False,
    ) -> "ServerConfig":
        """Resolve the options (bad ones raise BadInput, exit 2) and open the ledger
        once, so that an unusable ledger stops the server before it serves (exit 4)."""
        folders, allowed = Roots.from_options(roots), CommandAllowlist.from_names(commands)
        with Ledger(ledger, allow_private=allow_private, allow_hosts=allow_hosts) as opened:
            return cls(opened.path, opened.allow_private, opened.allow_hosts, folders, allowed,
                       offline)

    def open(self) -> Ledger:
        return Ledger(self.ledger, allow_private=self.allow_private,
                      allow_hosts=self.allow_hosts, offline=self.offline)
