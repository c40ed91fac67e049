"""The `graphlake` script's entry point: answers `--version` before any import of typer,
rich or the commands (about a third of `--help`'s start-up), and hands everything else to
`graphlake.cli.app`."""

from __future__ import annotations

import sys

from graphlake import __version__


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        sys.stdout.write(f"graphlake {__version__}\n")
        return
    # on first use only: loads lance, pyarrow, lark (start-up time)
    from graphlake.cli.app import main as app_main

    app_main()


if __name__ == "__main__":
    main()
