"""`graphlake gc` (being built): reclaim what no live branch or publication needs."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graphlake.graph import Graph


@dataclass
class GcReport:
    dry_run: bool


def gc(graph: Graph, *, grace: dt.timedelta, dry_run: bool, progress: Any = None) -> GcReport:
    raise NotImplementedError("gc is being built")
