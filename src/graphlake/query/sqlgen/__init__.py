"""SQL text: the one place in `graphlake.query` that writes SQL.

The planner and the pattern compiler decide what a query means; the builders here say
it in DuckDB's SQL. Each is a function (or a small frozen dataclass with `sql()`) that
takes names, internal aliases and SQL fragments other builders made, and returns text;
none reads a schema or an AST. Names and values are quoted only here (`ident`,
`literal`, through `graphlake.sqltext`); parameters are prepared (`param`).

- `quote`: names, literals, prepared parameters, STRUCT types;
- `select`: select lists, FROM and WHERE, derived tables, EXISTS, ORDER BY keys and
  paging, the `WITH RECURSIVE` list of CTEs, row counts;
- `clauses`: the planner's steps (MATCH, OPTIONAL MATCH's numbered rows and left join,
  UNWIND, WITH/RETURN, a MATCH's bindings read from the adjacency);
- `entities`: node and edge rows, a relationship's struct, label, property, hop and
  uniqueness conditions;
- `walks`: the walk and shortest-path recursive CTEs, their seeds, FROM items and path
  values;
- `procedures`: a CALL's step;
- `expressions`: Cypher expressions (operators, functions, CASE, lists and maps,
  temporal fields, regular expressions, vector distances), which `query.expr` picks by
  the binder's types (used as a module: `sqlgen.expressions.comparison(...)`).

`tests/query/test_sql_in_one_place.py` fails when another module of `graphlake.query`
writes SQL or quotes by itself.
"""

from __future__ import annotations

from graphlake.query.sqlgen import expressions
from graphlake.query.sqlgen.clauses import (
    START,
    carried,
    match,
    numbered,
    on_rows,
    optional_match,
    order_column,
    projection,
    unwind,
)
from graphlake.query.sqlgen.entities import (
    EDGE_FIELDS,
    EdgeRows,
    NodeRows,
    different,
    edge_rows,
    edge_struct,
    hop,
    key_equals,
    label_in,
    node_rows,
    property_equals,
)
from graphlake.query.sqlgen.procedures import call
from graphlake.query.sqlgen.quote import (
    ident,
    literal,
    mentions,
    param,
    param_name,
    param_names,
    struct_type,
)
from graphlake.query.sqlgen.select import (
    FALSE,
    UNIT,
    bounded,
    column,
    count_all,
    count_of,
    count_rows,
    cte,
    derived,
    exists,
    named,
    of,
    page,
    select,
    sort_key,
    where,
    with_ctes,
)
from graphlake.query.sqlgen.walks import (
    ONE_HOP,
    SEARCH_KEY,
    WALK_COLUMNS,
    bound_seed,
    found,
    node_list,
    path,
    rel_list,
    selected_seed,
    shortest_path,
    walk,
    walk_ends,
    walk_item,
    walk_lists,
)

__all__ = [
    "EDGE_FIELDS",
    "FALSE",
    "ONE_HOP",
    "SEARCH_KEY",
    "START",
    "UNIT",
    "WALK_COLUMNS",
    "EdgeRows",
    "NodeRows",
    "bound_seed",
    "bounded",
    "call",
    "carried",
    "column",
    "count_all",
    "count_of",
    "count_rows",
    "cte",
    "derived",
    "different",
    "edge_rows",
    "edge_struct",
    "exists",
    "expressions",
    "found",
    "hop",
    "ident",
    "key_equals",
    "label_in",
    "literal",
    "match",
    "mentions",
    "named",
    "node_list",
    "node_rows",
    "numbered",
    "of",
    "on_rows",
    "optional_match",
    "order_column",
    "page",
    "param",
    "param_name",
    "param_names",
    "path",
    "projection",
    "property_equals",
    "rel_list",
    "select",
    "selected_seed",
    "shortest_path",
    "sort_key",
    "struct_type",
    "unwind",
    "walk",
    "walk_ends",
    "walk_item",
    "walk_lists",
    "where",
    "with_ctes",
]
