"""Write docs/cli.md, the CLI reference, from the commands' own --help.

    python scripts/cli_reference.py          # rewrite docs/cli.md
    python scripts/cli_reference.py --check  # exit 1 if docs/cli.md is stale
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from fetchledger.cli import cli

TARGET = Path(__file__).resolve().parents[1] / "docs" / "cli.md"


def help_text(command: click.Command, path: list[str]) -> str:
    with click.Context(command, info_name=" ".join(path), terminal_width=100) as ctx:
        return command.get_help(ctx)


def reference() -> str:
    parts = [
        "# CLI reference",
        "",
        "Generated from `--help` by `scripts/cli_reference.py`; do not edit by hand.",
        "",
        "```text",
        help_text(cli, ["fetchledger"]),
        "```",
    ]
    for name in sorted(cli.commands):
        parts += ["", f"## `fetchledger {name}`", "", "```text",
                  help_text(cli.commands[name], ["fetchledger", name]), "```"]
    return "\n".join(parts) + "\n"


def main() -> int:
    text = reference()
    if "--check" in sys.argv:
        if not TARGET.exists() or TARGET.read_text() != text:
            print("docs/cli.md is stale: run `python scripts/cli_reference.py`", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
