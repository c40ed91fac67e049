"""`--help` in the plain style of click: `ROOT SOURCE` in the usage line, `TEXT` and
`INTEGER` for option values, nothing after a flag, `[ours|theirs]` for choices.

typer 0.29 prints required arguments as `{root}` in the usage line and every value type
in angle brackets (`<str>`, and `<bool>` even after a flag that takes no value), which
reads like a template placeholder (issue 23 item 11). Typer builds its own parameter
classes, so the root group (`cli/app.py`) swaps each parameter's class for the subclass
here once the command tree exists; nothing else about a parameter changes.
"""

from __future__ import annotations

from typing import Any

from typer._click import Context
from typer.core import TyperArgument, TyperOption

__all__ = ["flowing", "plain_metavars"]

_TYPE_NAMES = {
    "str": "TEXT",
    "int": "INTEGER",
    "float": "FLOAT",
    "path": "PATH",
    "datetime": "DATETIME",
}


class _Argument(TyperArgument):
    def _usage_display_name(self) -> str:
        name = self.metavar or (self.name or "").upper()
        name = name if self.required else f"[{name}]"
        return name + ("..." if self.nargs != 1 else "")

    def _rich_display_name(self) -> str:
        return (self.name or "").lower() + ("..." if self.nargs != 1 else "")

    def display_type(self, ctx: Context) -> str:
        return _plain(super().display_type(ctx))


class _Option(TyperOption):
    def display_type(self, ctx: Context) -> str:
        if self.is_flag or self.count:
            return ""
        return _plain(super().display_type(ctx))


def _plain(label: str) -> str:
    """`<str>` -> `TEXT`, `<ours|theirs>` -> `[ours|theirs]`, `<list[str]>` -> `TEXT...`."""
    inner = label[1:-1] if label.startswith("<") and label.endswith(">") else label
    many = inner.startswith("list[") and inner.endswith("]")
    inner = inner[5:-1] if many else inner
    text = _TYPE_NAMES.get(inner) or (f"[{inner}]" if "|" in inner else inner.upper())
    return text + ("..." if many else "")


def flowing(text: str | None) -> str | None:
    """A docstring's paragraphs as flowing text: the line breaks inside a paragraph (kept
    by typer, so `--help` broke sentences where the source wrapped them) become spaces.
    A paragraph whose lines are indented or start like a list item keeps its breaks."""
    if not text:
        return text
    out = []
    for block in text.strip().split("\n\n"):
        lines = block.splitlines()
        listed = any(line.startswith((" ", "-", "*", "\b")) for line in lines[1:])
        out.append(block if listed else " ".join(line.strip() for line in lines))
    return "\n\n".join(out)


def plain_metavars(command: Any) -> None:
    """Swap the parameter classes of `command` and every subcommand (in place), and let
    its help texts flow."""
    command.help = flowing(command.help)
    if getattr(command, "short_help", None):
        command.short_help = flowing(command.short_help)
    for param in getattr(command, "params", ()):
        if getattr(param, "help", None):
            param.help = flowing(param.help)
        if type(param) is TyperArgument:
            param.__class__ = _Argument
        elif type(param) is TyperOption:
            param.__class__ = _Option
    if hasattr(command, "get_help_option"):  # `--help` is made on demand, not a param
        made = command.get_help_option

        def help_option(ctx: Context, _made: Any = made) -> Any:
            option = _made(ctx)
            if type(option) is TyperOption:
                option.__class__ = _Option
            return option

        command.get_help_option = help_option
    for sub in getattr(command, "commands", {}).values():
        plain_metavars(sub)
