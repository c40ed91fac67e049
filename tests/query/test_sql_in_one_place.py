"""SQL text is produced in one generator (issue 28 item 1): `graphlake.query.sqlgen` is the
only place in `graphlake.query` that writes SQL or quotes names and values.

Every other module of the package is parsed (Python `ast`) and fails when a string
literal or f-string in it (docstrings aside) has the shape of SQL, or when it quotes
by itself (`ident`, `literal`, `string_literal`, `graphlake.sqltext`). What counts as SQL
is what Cypher text never has (SELECT, FROM, JOIN, GROUP BY, `::TYPE`, DuckDB's
functions, the compiler's internal `__aliases`, quoted identifiers, ...); the words
Cypher shares (WHERE, AND, ORDER BY, LIMIT, AS) count only when such text follows them,
so error messages and explain's Cypher lines (`... WHERE {cond}`) pass.

No module is exempt: `expr.py` (Cypher expressions) chooses by the binder's types what
to render and sqlgen's `expressions` writes it; since an expression's SQL is mostly
operators the patterns above do not catch, `expr.py` is also held to writing no
f-string at all (`test_expressions_write_no_text`).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import graphlake.query

QUERY = Path(graphlake.query.__file__).parent

# Case-sensitive: SQL's keywords in capitals, DuckDB's functions in lower case. `{}` marks
# where an f-string puts a value.
SQL = re.compile(
    r"\bSELECT\s+\S"  # a bare "SELECT" (the parser's hint for SQL typed as Cypher) passes
    r"|\bFROM\s+[\w({\"]"
    r"|\bJOIN\s"
    r"|\bWITH RECURSIVE\b"
    r"|\bGROUP BY\b"
    r"|\bUNION ALL\b|\bUNION\s+(?:SELECT|\{\})"
    r"|\bNULLS (?:FIRST|LAST)\b"
    r"|\bOFFSET\s"
    r"|\bOVER \("
    r"|\bUSING KEY\b"
    r"|\bCAST\("
    r"|::[A-Z]{3}"
    r"|\|\|"
    r"|\b(?:struct_pack|unnest|row_number|list_\w+)\("
    r"|\bUNNEST\b"
    # Cypher's words, followed by an internal alias or a quoted identifier
    r"|\b(?:WHERE|ORDER BY|LIMIT|ON|AND|OR|AS|IN)\s+(?:__\w|\")"
    r"|(?<!\w)__[a-z]+\d*\.(?:\{\}|\w)"  # a column of an internal alias: `__p.x`
    r"|(?<!\w)__[a-z]\w* AS\b|\bAS (?:_[a-z]|\()"  # `__n AS "x"`, `x AS _key`, a CTE
    r"|\{\}\._[a-z]"  # an internal column of a FROM item: `{r}._key`
)
QUOTING = {"ident", "literal", "string_literal"}


def _sources() -> list[Path]:
    return sorted(p for p in QUERY.rglob("*.py") if p.relative_to(QUERY).parts[0] != "sqlgen")


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def _text(node: ast.JoinedStr) -> str:
    """An f-string's text with `{}` for each value it puts in."""
    return "".join(
        v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "{}"
        for v in node.values
    )


def sql_strings(source: str) -> list[tuple[int, str]]:
    """(line, text) of each string literal or f-string of `source` shaped like SQL."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            skip |= {id(v) for v in node.values}
            text = _text(node)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        else:
            continue
        if id(node) not in skip and SQL.search(text):
            out.append((node.lineno, text))
    return sorted(out)


def quoting(source: str) -> list[tuple[int, str]]:
    """(line, what) of each import or call that quotes outside sqlgen."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            names = {a.name for a in node.names}
            if node.module == "graphlake.sqltext" or (
                node.module != "graphlake.query.sqlgen" and names & QUOTING
            ):
                out.append((node.lineno, f"from {node.module} import {', '.join(sorted(names))}"))
            if node.module == "graphlake" and "sqltext" in names:
                out.append((node.lineno, "from graphlake import sqltext"))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name == "graphlake.sqltext"]
        elif isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", "")
            if name in QUOTING:
                out.append((node.lineno, f"{name}(...)"))
    return sorted(out)


def test_the_package_has_modules_to_check():
    names = {p.name for p in _sources()}
    assert {"planner.py", "patterns.py", "calls.py", "executor.py", "steps.py"} <= names
    assert {"traverse.py", "data_checks.py", "isolated.py", "checker.py", "expr.py"} <= names
    assert not any(p.relative_to(QUERY).parts[0] == "sqlgen" for p in _sources())


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(QUERY)))
def test_no_sql_outside_sqlgen(path: Path):
    source = path.read_text("utf-8")
    found = [f"{path.name}:{line}: {text!r}" for line, text in sql_strings(source)]
    found += [f"{path.name}:{line}: {what}" for line, what in quoting(source)]
    assert found == [], "write SQL with graphlake.query.sqlgen: " + "; ".join(found)


def test_expressions_write_no_text():
    """expr.py formats no string: each expression's SQL is a builder's
    (sqlgen.expressions), whatever its shape; only its method lookup builds a name."""
    tree = ast.parse((QUERY / "expr.py").read_text("utf-8"))
    formatted = [
        (node.lineno, _text(node))
        for node in ast.walk(tree)
        if isinstance(node, ast.JoinedStr) and _text(node) != "_fn_{}"
    ]
    assert formatted == []


# What the checks catch (each line one f-string or literal as the compiler wrote them
# before sqlgen), and what they let pass (error messages and explain lines).
CAUGHT = [
    'f"SELECT {distinct}{cols} FROM {prev} AS __p"',
    'f"SELECT {a}.id AS node FROM {rows} AS {a}{where}"',
    '" GROUP BY ALL"',
    'f" OFFSET {n}"',
    'f"{key} DESC NULLS FIRST"',
    'f"struct_pack(length := {w}.depth)"',
    'f"unnest({s})"',
    'f"{sql} AS __order1"',
    'f"__o.{name}"',
    '"__n.id = __c.id"',
    'f"CAST(${name} AS {cast})"',
    '"NULL::VARCHAR"',
    'f"{literal(t)} || id"',
    'f"NOT list_contains({w}.edges, {r}._key)"',
    'f"{r}._a = {a}.id"',
    '"(SELECT 1) AS __one"',
    'f"{literal(t)} AS _label"',
    'f"__n AS {name}"',
    'f"{head} AS ({sql})"',
    'f"{x} = {y} AND \\"a\\".id"',
    '"WITH RECURSIVE " + ctes',
    'f"{left} LEFT JOIN ({inner}) AS __m"',
    'f"SELECT row_number() OVER () AS __row"',
]
PASSED = [
    '"a query must end with RETURN"',
    '"RETURN must be the last clause (use WITH to go on)"',
    'f"{what} needs a non-negative integer (a literal or a parameter), got {got}"',
    '"LIMIT"',
    '"property maps in shortestPath are not supported; filter with WHERE"',
    '"inline properties, or a WHERE condition on each"',
    'f"Limit {n}"',
    'f"CALL {name}({edge!r}) YIELD " + ", ".join(f"{col} AS {a}" for col, a in yields)',
    '"number rows for OPTIONAL MATCH"',
    'f"UNWIND AS {name}"',
    '"SELECT"',
    '"this looks like SQL: run it with g.sql; a Cypher query starts with MATCH or WITH"',
    'f"expand {edge} from {origin}"',
    '"a MATCH may span at most 20 hops in total; split the pattern with WITH"',
    'f"{var}.{prop} {op} {value!r}"',
    '"__init__.py"',
    # Words SQL shares with Cypher pass alone: explain prints Cypher with them.
    'f" WHERE {show(e.where)}"',
    'f" LIMIT {n}"',
    '" ORDER BY " + keys',
    '" AND ".join(parts)',
    'f"{expr} AS {var}"',
    '"UNION is not supported: run the queries one by one, or combine them in SQL"',
]


@pytest.mark.parametrize("code", CAUGHT)
def test_sql_is_caught(code: str):
    assert sql_strings(f"x = {code}\n"), code


@pytest.mark.parametrize("code", PASSED)
def test_cypher_words_in_messages_pass(code: str):
    assert sql_strings(f"x = {code}\n") == [], code


def test_docstrings_pass_and_quoting_is_caught():
    source = '"""Reads FROM the table WHERE (x) ORDER BY (y)."""\n'
    source += 'def f():\n    """SELECT 1 FROM t"""\n'
    assert sql_strings(source) == []
    assert quoting("from graphlake.sqltext import ident") == [
        (1, "from graphlake.sqltext import ident")
    ]
    assert quoting("from graphlake.query.expr import ExprCompiler, literal") != []
    assert quoting("x = ident(name)\ny = expr.literal(3)") == [
        (1, "ident(...)"),
        (2, "literal(...)"),
    ]
    assert quoting("from graphlake.query.sqlgen import literal\nfrom graphlake import sqltext") == [
        (2, "from graphlake import sqltext")
    ]
