"""The steps of a planned SQL statement: one CTE each, of a kind the executor reads.

A step's kind says what its rows are, so nothing reads it back out of the CTE's text:

- "start": the one empty row every query starts from;
- "clause": the bindings after a clause (MATCH, UNWIND, WITH, RETURN): one column per
  variable; the next clause reads the last of these;
- "walk": a recursive CTE of paths (a variable-length relationship or a shortestPath
  search), with its column list and, for a breadth-first search, its `USING KEY`;
- "found": a walk answered by a path search outside DuckDB (its rows registered as a
  table, query.pathsearch), with the walk's columns.

A step renders as a CTE and as a row count through query.sqlgen.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

from graphlake.query import sqlgen

StepKind = Literal["start", "clause", "walk", "found"]
WALK_COLUMNS = sqlgen.WALK_COLUMNS


@dataclass(frozen=True)
class PlanStep:
    name: str  # the CTE ("s1", "__walk2", ...; the last step is the RETURN itself)
    kind: StepKind
    what: str  # one line for explain
    sql: str
    key: tuple[str, ...] = ()  # a walk's USING KEY columns (a breadth-first search)
    executor: str = "sql"  # who computes the rows: "sql", or a path search's "csr"/"lance"

    @property
    def is_rows(self) -> bool:
        """The bindings after a clause (or the start): what the next clause reads."""
        return self.kind in ("start", "clause")

    def definition(self) -> str:
        """The step as one CTE of a `WITH RECURSIVE` list."""
        if self.kind == "walk":
            return sqlgen.cte(self.name, self.sql, WALK_COLUMNS, self.key)
        return sqlgen.cte(self.name, self.sql)

    def answered(self, sql: str, executor: str) -> PlanStep:
        """This walk computed by `sql` over rows a path search registered."""
        assert self.kind == "walk"
        return dataclasses.replace(self, kind="found", sql=sql, key=(), executor=executor)

    def counting_sql(self) -> str:
        """The SQL body that counts this step's rows (the CTEs before it defined)."""
        if self.kind == "walk":
            return sqlgen.count_rows(self.name)  # a generated name
        return sqlgen.count_of(self.sql)
