"""Regular expressions in linear time: RE2, with caps on what a pattern may ask for.

Every regex a client gives graphlake (a schema's `@check`, a literal Cypher `=~`) means
what RE2 makes of it (https://github.com/google/re2/wiki/Syntax): RE2 matches in time
linear in the input, where Python's `re` backtracks exponentially (`(a+)+` against
`"a" * 28 + "!"` took 13.6 s) and holds the GIL while it does. DuckDB's `regexp_*`
functions and Arrow's `match_substring_regex` are RE2 as well, so a pattern matches the
same rows in a `@check`, in Cypher and in SQL.

`pattern_problem` says why a pattern is refused, or None. The caps bound the work of
compiling it and the size of the compiled program (matching costs at most the input's
length times the program size):

- `MAX_PATTERN_CHARS` characters of pattern text;
- `MAX_NESTING` levels of nested groups;
- repetition counts `{m,n}` of at most `MAX_REPEAT` (RE2's own cap; RE2 also refuses
  nested counts whose product exceeds it, and reads an overflowing count such as
  `a{4294967296}` as literal text, which is refused here instead);
- `MAX_PROGRAM_SIZE` instructions of compiled program;
- and whatever RE2 itself refuses (backreferences, lookaround, bad syntax).

`full_match` answers for one Arrow column at a time, outside the GIL.
"""

from __future__ import annotations

import functools
import re

import pyarrow as pa
import pyarrow.compute as pc
import re2

MAX_PATTERN_CHARS = 1000
MAX_NESTING = 50
MAX_REPEAT = 1000
MAX_PROGRAM_SIZE = 20_000

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 would print every refused pattern on stderr
# `{m}`, `{m,}` or `{m,n}`: the repetition forms RE2 reads as counts.
_COUNT = re.compile(r"\{([0-9]+)(?:,([0-9]*))?\}")

__all__ = [
    "MAX_NESTING",
    "MAX_PATTERN_CHARS",
    "MAX_PROGRAM_SIZE",
    "MAX_REPEAT",
    "full_match",
    "pattern_problem",
]


def pattern_problem(pattern: str) -> str | None:
    """Why `pattern` cannot be used (a short phrase), or None when RE2 takes it within
    the caps. Checked cheapest first: the text's length before anything scans it (or
    caches it: a long pattern is never kept)."""
    if len(pattern) > MAX_PATTERN_CHARS:
        return f"the pattern is {len(pattern)} characters long (at most {MAX_PATTERN_CHARS})"
    return _problem(pattern)


@functools.lru_cache(maxsize=256)
def _problem(pattern: str) -> str | None:
    problem = _shape_problem(pattern)
    if problem is not None:
        return problem
    try:
        compiled = re2.compile(pattern, _OPTIONS)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        return str(reason)
    if compiled.programsize > MAX_PROGRAM_SIZE:
        return (
            f"it compiles to {compiled.programsize} RE2 instructions "
            f"(at most {MAX_PROGRAM_SIZE}); use smaller repetition counts"
        )
    return None


def _shape_problem(pattern: str) -> str | None:
    """Nesting depth and repetition counts, read off the text in one pass: escapes and
    character classes are skipped, so `\\(` and `[(]` open no group."""
    depth = 0
    in_class = False
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            if pattern.startswith("[:", i):  # a POSIX class such as [:alpha:]
                end = pattern.find(":]", i + 2)
                i = end + 2 if end >= 0 else i + 1
                continue
            if c == "]":
                in_class = False
        elif c == "[":
            in_class = True
            i += 1
            if pattern[i : i + 1] == "^":
                i += 1
            if pattern[i : i + 1] == "]":  # a leading `]` is a literal
                i += 1
            continue
        elif c == "(":
            depth += 1
            if depth > MAX_NESTING:
                return f"its groups nest more than {MAX_NESTING} deep"
        elif c == ")":
            depth = max(depth - 1, 0)
        elif c == "{":
            m = _COUNT.match(pattern, i)
            if m is not None:
                for count in m.groups():
                    if count and (len(count) > 6 or int(count) > MAX_REPEAT):
                        return f"the repetition count {{{m.group(0)[1:-1]}}} is over {MAX_REPEAT}"
                i = m.end()
                continue
        i += 1
    return None


def full_match(col: pa.ChunkedArray | pa.Array, pattern: str) -> pa.ChunkedArray | pa.Array:
    """Per row: does the whole value match `pattern` (null for a null value)? The pattern
    must be one `pattern_problem` accepts; Arrow's RE2 kernel runs without the GIL."""
    # `pattern` compiles on its own, so the group cannot be closed early by its text.
    return pc.match_substring_regex(col, f"^(?:{pattern})$")
