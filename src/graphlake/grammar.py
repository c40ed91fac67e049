"""The lark parsers of graphlake's two grammars (schema `.pg` text, Cypher), built once per
process and cached on disk.

Constructing LALR tables is the slow part (0.25-0.5 s, paid by every CLI run and worker
process), so the built parser is cached in the user's own cache folder (lark's default is
a shared temp folder, and the cache is a pickle), named by a hash of the grammar and lark's
version, and published by an atomic rename. A damaged cache file is rebuilt by lark.
`GRAPHLAKE_NO_GRAMMAR_CACHE` (any value) turns the disk cache off.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lark import Lark


@functools.cache
def lark_parser(package: str, filename: str, name: str, **options: object) -> Lark:
    """The LALR parser of the grammar file `filename` in `package`; `name` prefixes its
    cache file (`<name>-grammar-<hash>.lark`); `options` go to `lark.Lark`."""
    # on first use only: loads lark (start-up time)
    from lark import Lark

    grammar = resources.files(package).joinpath(filename).read_text("utf-8")
    cached = grammar_cache(grammar, name)
    if cached is None:
        return Lark(grammar, **options)
    if cached.exists():
        return Lark(grammar, cache=str(cached), **options)
    staging = cached.with_name(f"{cached.name}.{os.getpid()}.tmp")
    parser = Lark(grammar, cache=str(staging), **options)
    with contextlib.suppress(OSError):  # e.g. a read-only folder: just no cache
        os.replace(staging, cached)
    return parser


def grammar_cache(grammar: str, name: str) -> Path | None:
    """Where the built parser is cached (None: caching disabled or impossible)."""
    if os.environ.get("GRAPHLAKE_NO_GRAMMAR_CACHE"):
        return None
    # on first use only: loads lark (start-up time)
    import lark

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    folder = Path(base) / "graphlake"
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError:
        return None
    digest = hashlib.sha256(f"{grammar}\0{lark.__version__}".encode()).hexdigest()[:24]
    return folder / f"{name}-grammar-{digest}.lark"
