"""The `yacht-table` command: the one place where settings, hardware, engine and server are wired
together. Each package adds its own subcommands through `add_commands`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

from scorer import cli as scorer_cli


class CliError(Exception):
    """Bad input on the command line: printed as one line on stderr, exit status 2."""


def _version() -> str:
    try:
        return version("yacht-table")
    except PackageNotFoundError:
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="yacht-table",
        description="Yacht Table: real dice under a camera, the score on a tablet.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True
    for module in _command_modules():
        module.add_commands(commands)
    return parser


def _command_modules():
    from vision import cli as vision_cli

    from . import hardware_cli, serve

    return [scorer_cli, serve, hardware_cli, vision_cli]


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if getattr(args, "cache_dir", "") is None:
            # The advisor's table is cached with the games: the scorer is told where, it never looks.
            from .engine.settings import load_settings

            args.cache_dir = load_settings().data_dir
        return int(args.run(args) or 0)
    except (CliError, ValueError) as error:
        print(f"yacht-table {args.command}: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
