"""`--help` texts and the docs' CLI synopsis (docs/cli.md), checked against the commands themselves.

In-process (no subprocess): the typer app is turned into its click command tree.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer
from rich.text import Text

from graphlake.cli.app import app

CLI_PAGE = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def _commands(cmd: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield path, cmd
    for name, sub in getattr(cmd, "commands", {}).items():
        yield from _commands(sub, (*path, name))


def _leaves() -> dict[tuple[str, ...], Any]:
    return {
        p: c for p, c in _commands(typer.main.get_command(app)) if p and not hasattr(c, "commands")
    }


def _options(cmd: Any) -> set[str]:
    return {o for p in cmd.params for o in (*p.opts, *p.secondary_opts) if o.startswith("-")}


def test_help_texts_survive_rich_markup() -> None:
    """typer renders help through rich markup, which silently drops `[word]` it takes for
    a style tag (`parents [into, ...]` once rendered as `parents .`): a literal bracket
    must be written `\\[`."""
    eaten = []
    for path, cmd in _commands(typer.main.get_command(app)):
        texts = [cmd.help or "", *(getattr(p, "help", None) or "" for p in cmd.params)]
        for text in texts:
            if Text.from_markup(text).plain != text.replace("\\[", "["):
                eaten.append((" ".join(path), text))
    assert not eaten, eaten


def _readme_synopsis() -> dict[tuple[str, ...], str]:
    """Command path -> its synopsis text, from the first code block of docs/cli.md."""
    section = CLI_PAGE.read_text().split("# CLI\n", 1)[1]
    block = section.split("```", 2)[1]
    lines: dict[tuple[str, ...], str] = {}
    last: tuple[str, ...] | None = None
    for line in block.splitlines():
        text = line.split("#", 1)[0].strip()
        if text.startswith("graphlake "):
            words = text.split()
            if words[1] in ("branch", "tag"):  # `branch create ... | list ROOT | delete ...`
                for part in " ".join(words[2:]).split("|"):
                    sub = part.split()
                    lines[(words[1], sub[0])] = " ".join(sub[1:])
                last = None
            elif words[1] in ("schema", "data-check", "mr"):  # one line per sub-command
                last = (words[1], words[2])
                lines[last] = " ".join(words[3:])
            else:
                last = (words[1],)
                lines[last] = " ".join(words[2:])
        elif text and last is not None:  # a continuation line of the previous command
            lines[last] += " " + text
    return lines


def test_readme_cli_synopsis_matches_the_commands() -> None:
    synopsis = _readme_synopsis()
    leaves = _leaves()
    assert set(synopsis) == set(leaves), (sorted(synopsis), sorted(leaves))
    unknown = {
        " ".join(path): sorted(set(re.findall(r"--?[a-z][a-z-]*", text)) - _options(leaves[path]))
        for path, text in synopsis.items()
    }
    assert not any(unknown.values()), unknown


def test_every_help_fits_80_columns_and_reads_plainly() -> None:
    """Issue 23 item 11: at 80 columns no help line is wider, no `<bool>`/`<str>` type
    labels, no `{root}` placeholders in the usage line, and a docstring's sentence is
    never broken where the source wrapped it."""
    import inspect

    from rich.cells import cell_len
    from typer.testing import CliRunner

    runner = CliRunner()
    problems = []
    for path, cmd in _commands(typer.main.get_command(app)):
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "80"}, terminal_width=80)
        out = result.output
        where = " ".join(("graphlake", *path))
        if result.exit_code != 0:
            problems.append((where, "exit", result.exit_code))
        if any(cell_len(line) > 80 for line in out.splitlines()):
            problems.append((where, "wider than 80"))
        if re.search(r"<(bool|str|int|float|path)>", out):
            problems.append((where, "angle-bracket type"))
        usage = next((line for line in out.splitlines() if "Usage:" in line), "")
        if re.search(r"\{\w+\}", usage):
            problems.append((where, "placeholder in usage", usage.strip()))
        doc = inspect.getdoc(cmd.callback) if getattr(cmd, "callback", None) else None
        if doc:
            first = " ".join(line.strip() for line in doc.split("\n\n")[0].splitlines())
            first = first.replace("\\[", "[")  # rich markup escape
            flat = " ".join(re.sub(r"[│╭╮╰╯─]", " ", out).split())
            if " ".join(first.split()) not in flat:
                problems.append((where, "first paragraph broken", first[:60]))
    assert problems == []
