"""Queries compared with LadybugDB: a hand-written set covering every supported construct,
and a small generator of random ones. Each entry is (graphlake text, Ladybug text); the
texts differ only where Ladybug spells a construct differently (`* TRAIL a..b` is its
relationship-unique variable-length form)."""

from __future__ import annotations

import random
import re

Q = tuple[str, str]


def same(text: str) -> Q:
    return text, text


def trail(text: str) -> Q:
    """A variable-length query; Ladybug needs TRAIL for relationship uniqueness."""
    import re

    return text, re.sub(r"\*(\d*\.\.\d+|\d+)", lambda m: f"* TRAIL {_range(m.group(1))}", text)


def _range(r: str) -> str:
    return (
        r
        if ".." in r and not r.startswith("..")
        else (f"1{r}" if r.startswith("..") else f"{r}..{r}")
    )


HAND: list[Q] = [
    # MATCH, labels, property maps, directions
    same("MATCH (n:Person) RETURN n.name, n.age, n.city, n.score"),
    same("MATCH (n:Company) RETURN n.name, n.founded"),
    same("MATCH (n:Person {city: 'Oslo'}) RETURN n.name"),
    same("MATCH (n:Person {city: 'Oslo', age: 30}) RETURN n.name"),
    same("MATCH (a:Person)-[:Knows]->(b:Person) RETURN a.name, b.name"),
    same("MATCH (a:Person)<-[:Knows]-(b:Person) RETURN a.name, b.name"),
    same("MATCH (a:Person)-[:Follows]-(b:Person) RETURN a.name, b.name"),
    same("MATCH (a)-[:WorksAt]->(c) RETURN a.name, c.name"),
    same("MATCH (c:Company)<-[:WorksAt]-(a) RETURN c.name, count(a)"),
    same("MATCH (a:Person)-[r:Knows]->(b) RETURN r.id, r.since, r.weight"),
    same("MATCH (a:Person)-[r:Knows {since: 2001}]->(b) RETURN a.name, b.name, r.id"),
    same("MATCH (a:Person)-[r:Knows|Follows]->(b:Person) RETURN a.name, b.name, r.id"),
    same("MATCH (a:Person)-[r]->(b:Company) RETURN a.name, r.role, b.name"),
    same("MATCH (a)-[:Knows]->(a) RETURN a.name"),
    same("MATCH (a:Person)-[:Knows]->(b)-[:WorksAt]->(c) RETURN a.name, b.name, c.name"),
    same("MATCH (a:Person)-[:Follows]->(b)-[:Follows]->(c) RETURN a.name, b.name, c.name"),
    same("MATCH (a:Person)-[:Follows]->(b), (b)-[:WorksAt]->(c) RETURN a.name, c.name"),
    same("MATCH (a:Person {name: 'p02'}), (b:Person {name: 'p03'}) RETURN a.name, b.name"),
    same("MATCH (a:Person {name: 'p02'})-[r:Knows]->(b) RETURN r.id, b.name"),
    # WHERE operators
    same("MATCH (n:Person) WHERE n.age > 40 RETURN n.name"),
    same("MATCH (n:Person) WHERE n.age >= 40 AND n.city = 'Rome' RETURN n.name"),
    same("MATCH (n:Person) WHERE n.age < 25 OR n.city = 'Lima' RETURN n.name"),
    same("MATCH (n:Person) WHERE NOT n.city = 'Oslo' RETURN n.name"),
    same("MATCH (n:Person) WHERE n.age <> 30 RETURN n.name"),
    same("MATCH (n:Person) WHERE n.age <= 30 XOR n.city = 'Kyiv' RETURN n.name"),
    same("MATCH (n:Person) WHERE n.city IN ['Oslo', 'Rome'] RETURN n.name"),
    same("MATCH (n:Person) WHERE n.name STARTS WITH 'p1' RETURN n.name"),
    same("MATCH (n:Person) WHERE n.name ENDS WITH '5' RETURN n.name"),
    same("MATCH (n:Person) WHERE n.city CONTAINS 'i' RETURN n.name"),
    same("MATCH (n:Person) WHERE n.name =~ 'p0[0-4]' RETURN n.name"),
    same("MATCH (n:Person) WHERE n.age IS NULL RETURN n.name"),
    same("MATCH (n:Person) WHERE n.score IS NOT NULL RETURN n.name, n.score"),
    same("MATCH (n:Person) WHERE n.score > 5.5 RETURN n.name"),
    same("MATCH (n:Person) WHERE n.age + 10 > 60 RETURN n.name, n.age * 2, n.age - 1"),
    same("MATCH (n:Person) WHERE n.born > date('1990-01-01') RETURN n.name"),
    same("MATCH (a:Person)-[:Knows]->(b) WHERE a.age > b.age RETURN a.name, b.name"),
    same("MATCH (a:Person)-[r:Knows]->(b) WHERE r.weight > 0.5 AND r.since < 2010 RETURN r.id"),
    # pattern predicates and exists
    same("MATCH (a:Person) WHERE (a)-[:WorksAt]->(:Company) RETURN a.name"),
    same("MATCH (a:Person) WHERE NOT (a)-[:Follows]->() RETURN a.name"),
    same(
        "MATCH (a:Person), (b:Person) WHERE (a)-[:Follows]->(b) AND a.city = 'Oslo' "
        "RETURN a.name, b.name"
    ),
    same(
        "MATCH (a:Person) WHERE EXISTS { MATCH (a)-[:WorksAt]->(c:Company) "
        "WHERE c.city = 'Rome' } RETURN a.name"
    ),
    same("MATCH (a:Person) WHERE NOT EXISTS { MATCH (a)<-[:Knows]-() } RETURN a.name"),
    # RETURN forms
    same("MATCH (n:Person) RETURN n.name AS who, n.age AS years"),
    same("MATCH (n:Person) RETURN DISTINCT n.city"),
    same("MATCH (n:Person)-[:Knows]->(m) RETURN DISTINCT n.name, m.city"),
    same("MATCH (n:Person) RETURN n.name ORDER BY n.name LIMIT 5"),
    same("MATCH (n:Person) RETURN n.name ORDER BY n.name DESC SKIP 3 LIMIT 4"),
    same("MATCH (n:Person) RETURN n.name, n.age ORDER BY n.age DESC, n.name LIMIT 7"),
    same("MATCH (n:Person) RETURN n.name SKIP 25"),
    # aggregates
    same("MATCH (n:Person) RETURN count(*)"),
    same("MATCH (n:Person) RETURN count(n.age), count(DISTINCT n.city)"),
    same("MATCH (n:Person) RETURN n.city, count(*) AS c"),
    same("MATCH (n:Person) RETURN n.city, min(n.age), max(n.age), sum(n.age)"),
    same("MATCH (n:Person) RETURN avg(n.score), min(n.name), max(n.born)"),
    same("MATCH (n:Person) WHERE n.city = 'Oslo' RETURN n.city, collect(n.name)"),
    same("MATCH (a:Person)-[:Knows]->(b) RETURN a.name, count(b) AS c, count(DISTINCT b) AS d"),
    same("MATCH (a:Person)-[:WorksAt]->(c) RETURN c.name, count(*) ORDER BY c.name"),
    same("MATCH (n:Person) RETURN count(DISTINCT n.age) AS ages, sum(n.score) > 0 AS pos"),
    # WITH chaining
    same("MATCH (n:Person) WITH n.city AS city, count(*) AS c WHERE c > 5 RETURN city, c"),
    same(
        "MATCH (a:Person)-[:Knows]->(b) WITH a, count(b) AS out WHERE out >= 4 RETURN a.name, out"
    ),
    same("MATCH (a:Person) WITH a WHERE a.age > 50 MATCH (a)-[:Knows]->(b) RETURN a.name, b.name"),
    same("MATCH (a:Person) WITH a ORDER BY a.name LIMIT 3 RETURN a.name"),
    same("MATCH (a:Person) WITH DISTINCT a.city AS c RETURN c"),
    same("MATCH (a:Person)-[:Knows]->(b) WITH b, count(*) AS k WITH max(k) AS m RETURN m"),
    same(
        "MATCH (a:Person)-[:WorksAt]->(c) WITH c, collect(a.name) AS staff "
        "RETURN c.name, size(staff)"
    ),
    # UNWIND
    same("UNWIND [1, 2, 3] AS x RETURN x, x * 10"),
    same("UNWIND ['Oslo', 'Rome'] AS c MATCH (n:Person {city: c}) RETURN c, count(n)"),
    same(
        "MATCH (n:Person) WHERE n.city = 'Lima' WITH collect(n.name) AS ns UNWIND ns AS x RETURN x"
    ),
    # OPTIONAL MATCH
    same("MATCH (a:Person) OPTIONAL MATCH (a)-[:WorksAt]->(c) RETURN a.name, c.name"),
    same(
        "MATCH (a:Person) OPTIONAL MATCH (a)-[:Follows]->(b) WHERE b.age > 40 RETURN a.name, b.name"
    ),
    same("MATCH (a:Person) OPTIONAL MATCH (a)-[:Follows]->(b) RETURN a.name, count(b)"),
    same("OPTIONAL MATCH (n:Person {name: 'nobody'}) RETURN n.name"),
    # CASE
    same(
        "MATCH (n:Person) RETURN n.name, CASE WHEN n.age > 50 THEN 'old' WHEN n.age > 30 "
        "THEN 'mid' ELSE 'young' END"
    ),
    same(
        "MATCH (n:Person) RETURN n.name, CASE n.city WHEN 'Oslo' THEN 1 WHEN 'Rome' THEN 2 "
        "ELSE 0 END"
    ),
    # functions
    same("MATCH (n:Person) RETURN n.name, upper(n.city), lower(n.name), size(n.name)"),
    same("MATCH (n:Person) RETURN n.name, coalesce(n.age, -1), abs(n.age - 50)"),
    same(
        "MATCH (n:Person) WHERE n.city IS NOT NULL RETURN trim(' ' + n.city + ' '), "
        "replace(n.city, 'o', '0')"
    ),
    same("RETURN 7 / 2, 7 % 3, 2 ^ 3, -7 / 2, 7.0 / 2"),
    same("RETURN left('hello', 2), right('hello', 3), reverse('abc'), sqrt(16.0)"),
    same("MATCH (a:Person)-[r:Knows]->(b) WHERE a.name = 'p02' RETURN label(b), r.id"),
    # parameters
    same("MATCH (n:Person) WHERE n.age > $age RETURN n.name"),
    same("MATCH (n:Person {city: $city}) RETURN n.name"),
    same("MATCH (n:Person) WHERE n.name IN $names RETURN n.name"),
    # variable length (trail semantics on both sides)
    trail("MATCH (a:Person {name: 'p00'})-[:Follows*1..2]->(b) RETURN b.name"),
    trail("MATCH (a:Person {name: 'p04'})-[:Knows*1..3]->(b) RETURN b.name"),
    trail("MATCH (a:Person {name: 'p02'})-[:Knows*2]->(b) RETURN b.name"),
    trail("MATCH (a:Person {name: 'p05'})<-[:Knows*1..2]-(b) RETURN b.name"),
    trail("MATCH (a:Person {name: 'p00'})-[:Knows*1..2]->(b) RETURN count(*)"),
    trail("MATCH (a:Person)-[:Follows*1..2]->(b:Person {name: 'p07'}) RETURN a.name"),
    trail("MATCH (a:Person)-[:Knows*1..2]->(b) WHERE a.name = 'p06' RETURN b.name, count(*)"),
    trail("MATCH p = (a:Person {name: 'p04'})-[:Knows*1..3]->(b) RETURN b.name, length(p)"),
    trail("MATCH (a:Person {name: 'p01'})-[:Follows*1..3]-(b) RETURN count(DISTINCT b)"),
    trail("MATCH (a:Person {name: 'p03'})-[:Knows|Follows*1..2]->(b) RETURN b.name"),
]

# Ladybug spells labels() as label(); the entry above uses its spelling on both sides.
HAND = [(g.replace("label(b)", "labels(b)[0]"), lb) for g, lb in HAND]

PARAMS = {"age": 45, "city": "Rome", "names": ["p01", "p02", "nobody"]}

_PROPS = {
    "Person": [("age", "int"), ("city", "str"), ("score", "float"), ("name", "str")],
    "Company": [("founded", "int"), ("city", "str"), ("name", "str")],
}
_VALUES = {
    "int": ["18", "30", "45", "60", "2000"],
    "float": ["2.5", "5.0", "7.25"],
    "str": ["'Oslo'", "'Rome'", "'p10'", "'c1'", "'Lima'"],
}
_EDGES = [
    ("Knows", "Person", "Person"),
    ("Follows", "Person", "Person"),
    ("WorksAt", "Person", "Company"),
]


def generated(n: int, seed: int = 16) -> list[Q]:
    """Random queries from a small grammar: one or two directed hops (distinct edge types
    or Follows, so walk and trail semantics agree), a WHERE of one to three comparisons,
    and a projection of properties, or counts grouped by one."""
    rng = random.Random(seed)
    out: list[Q] = []
    while len(out) < n:
        out.append(same(_one(rng)))
    return out


def _one(rng: random.Random) -> str:
    hops = rng.choice([0, 1, 1, 2])
    e1 = rng.choice(_EDGES)
    chain = [("a", e1[1])]
    pattern = f"(a:{e1[1]})"
    if hops >= 1:
        arrow = rng.choice(["->", "<-"]) if e1[0] == "Follows" else "->"
        left, right = ("-", "->") if arrow == "->" else ("<-", "-")
        end = e1[2] if arrow == "->" else e1[1]
        pattern += f"{left}[r:{e1[0]}]{right}(b)"
        chain.append(("b", end))
        if hops == 2 and end == "Person":
            e2 = rng.choice([e for e in _EDGES if e[0] != "Knows"])
            pattern += f"-[:{e2[0]}]->(c)"
            chain.append(("c", e2[2]))
    conds = []
    for _ in range(rng.randint(0, 3)):
        var, label = rng.choice(chain)
        prop, kind = rng.choice(_PROPS[label])
        op = rng.choice(
            ["=", "<>", "<", ">", "<=", ">="]
            if kind != "str"
            else ["=", "<>", "STARTS WITH", "<", "IS NULL", "IS NOT NULL"]
        )
        if op in ("IS NULL", "IS NOT NULL"):
            conds.append(f"{var}.{prop} {op}")
        else:
            conds.append(f"{var}.{prop} {op} {rng.choice(_VALUES[kind])}")
    where = (" WHERE " + rng.choice([" AND ", " OR "]).join(conds)) if conds else ""
    var, label = rng.choice(chain)
    prop, _ = rng.choice(_PROPS[label])
    shape = rng.randint(0, 3)
    if shape == 0:
        ret = f"{var}.{prop}" + "".join(f", {v}.name" for v, _ in chain if v != var)
    elif shape == 1:
        ret = f"{var}.{prop}, count(*)"
    elif shape == 2:
        ret = f"DISTINCT {var}.{prop}"
    else:
        other = rng.choice(chain)[0]
        ret = f"count(*), count(DISTINCT {other}.name), min({var}.{prop})"
    return f"MATCH {pattern}{where} RETURN {ret}"


# Patterns for `grouped`: (text, the variables it binds with their labels, relationship
# variables with their type).
_GROUP_PATTERNS = [
    ("(a:Person)<-[r:Knows]-(b:Person)", {"a": "Person", "b": "Person"}, {"r": "Knows"}),
    ("(a:Person)-[r:Follows]->(b:Person)", {"a": "Person", "b": "Person"}, {"r": "Follows"}),
    ("(a:Person)-[r:WorksAt]->(b:Company)", {"a": "Person", "b": "Company"}, {"r": "WorksAt"}),
]
_REL_PROPS = {
    "Knows": [("since", "int"), ("weight", "float")],
    "Follows": [("level", "int")],
    "WorksAt": [("role", "str")],
}


def grouped(n: int, seed: int = 23) -> list[Q]:
    """Random queries that group by a node or relationship variable in a WITH and then
    use its properties: in the WITH's ORDER BY (with a total order, so LIMIT picks the
    same rows), its WHERE, the RETURN, or a later (OPTIONAL) MATCH."""
    rng = random.Random(seed)
    return [same(_grouped_one(rng)) for _ in range(n)]


def _grouped_one(rng: random.Random) -> str:
    pattern, nodes, rels = rng.choice(_GROUP_PATTERNS)
    var = rng.choice([*nodes, *rels])
    other = next(v for v in nodes if v != var) if var in nodes else rng.choice(list(nodes))
    agg = rng.choice(["count(*)", f"count(DISTINCT {other})", f"count({other}.name)"])
    if var in nodes:
        label = nodes[var]
        props, unique = _PROPS[label], f"{var}.name"
    else:
        props, unique = _REL_PROPS[rels[var]], f"{var}.id"
    text = f"MATCH {pattern} WITH {var}, {agg} AS k"
    tail = rng.choice(["order", "where", "both", "none"])
    if tail in ("order", "both"):
        text += f" ORDER BY k {rng.choice(['DESC', 'ASC'])}, {unique} LIMIT {rng.randint(1, 8)}"
    if tail in ("where", "both"):
        prop, kind = rng.choice(props)
        op = rng.choice(["=", "<>", "<", ">"] if kind != "str" else ["=", "<>", "IS NOT NULL"])
        cond = f"{var}.{prop} {op}" + (
            "" if op == "IS NOT NULL" else f" {rng.choice(_VALUES[kind])}"
        )
        text += f" WHERE {cond}" + rng.choice(["", " AND k > 1", " OR k > 2"])
    prop, _ = rng.choice(props)
    if var in nodes and nodes[var] == "Person" and rng.random() < 0.4:
        optional = rng.choice(["", "OPTIONAL "])
        hop = rng.choice(["-[:WorksAt]->(x:Company)", "-[:Follows]->(x:Person)"])
        return f"{text} {optional}MATCH ({var}){hop} RETURN {var}.{prop}, x.name, k"
    shown = unique if f"{var}.{prop}" == unique else f"{unique}, {var}.{prop}"
    return f"{text} RETURN {shown}, k"


def anchored(n: int, seed: int = 31) -> list[Q]:
    """Random anchored traversals of the shape the adjacency executor runs
    (query/traverse.py): a chain from a node selected by its key, one to three
    relationships of one type each (fixed or variable-length), comparisons of node
    properties with constants, counts or node properties returned. Ladybug gets the same
    pattern as a path with `is_trail(p)` (openCypher's relationship uniqueness; its
    MATCH walks otherwise)."""
    rng = random.Random(seed)
    out: list[Q] = []
    while len(out) < n:
        out.append(_anchored_one(rng))
    return out


def _anchored_one(rng: random.Random) -> Q:
    start = f"p{rng.randrange(40):02d}"
    pattern, names, labels = f"(a:Person {{name: '{start}'}})", ["a"], {"a": "Person"}
    label = "Person"
    for i in range(rng.randint(1, 3)):
        if label != "Person":
            break
        edge = rng.choice(["Knows", "Follows", "Follows", "WorksAt"])
        hops = ""
        if edge != "WorksAt" and rng.random() < 0.3:
            hops = rng.choice(["*1..2", "*2", "*0..2", "*..3"])
        direction = rng.choice(["->", "<-", "-"]) if edge == "Follows" else "->"
        left, right = {"->": ("-", "->"), "<-": ("<-", "-"), "-": ("-", "-")}[direction]
        var = rng.choice(["", f"n{i}"]) if i < 2 else "z"
        label = "Company" if edge == "WorksAt" else "Person"
        if var:
            names.append(var)
            labels[var] = label
        pattern += f"{left}[:{edge}{hops}]{right}({var})"
    last = names[-1]
    label = labels[last]
    conds = []
    if last != "a" and rng.random() < 0.5:
        prop, kind = rng.choice(
            [("age", "int"), ("score", "float")] if label == "Person" else [("founded", "int")]
        )
        conds.append(f"{last}.{prop} {rng.choice(['<', '>=', '<>'])} {rng.choice(_VALUES[kind])}")
    ret = rng.choice(
        [
            "count(*)",
            f"count({last})",
            f"count(DISTINCT {last})",
            f"{last}.name",
            f"{last}.name, {last}.{'age' if label == 'Person' else 'founded'}",
        ]
    )
    where = f" WHERE {' AND '.join(conds)}" if conds else ""
    text = f"MATCH {pattern}{where} RETURN {ret}"
    lb_where = " WHERE " + " AND ".join(["is_trail(p)", *conds])
    import re

    lb_pattern = re.sub(r"\*(\d*\.\.\d+|\d+)", lambda m: f"*{_range(m.group(1))}", pattern)
    return text, f"MATCH p = {lb_pattern}{lb_where} RETURN {ret}"


def bound(n: int, seed: int = 47) -> list[Q]:
    """Random queries whose first MATCH runs on the adjacency and the rest in DuckDB over
    its rows (query/traverse.py `bind`): a chain (no relationship, or one or two, with or
    without relationship variables, some variable-length) anchored at either end or at
    every node of a type, a WHERE of any form (OR, string operators, relationship
    properties, comparisons across variables), then DISTINCT, aggregates, ORDER BY with
    LIMIT (on a total order), WITH (grouping, filtering), a second MATCH or an OPTIONAL
    MATCH. Ladybug gets the pattern as a path with `is_trail(p)` where an edge could
    repeat."""
    rng = random.Random(seed)
    return [_bound_one(rng) for _ in range(n)]


def _bound_one(rng: random.Random) -> Q:
    start = f"p{rng.randrange(34):02d}"
    anchor = rng.choice(["inline", "where", "none", "end"])
    vars_: dict[str, str] = {}  # node variable -> label
    rels: dict[str, str] = {}  # fixed relationship variable -> edge type
    pattern = "(a:Person {name: '" + start + "'})" if anchor == "inline" else "(a:Person)"
    vars_["a"] = "Person"
    label, hops = "Person", rng.choice([0, 1, 1, 2, 2])
    if hops == 0 and anchor in ("none", "end"):  # a whole node table runs as SQL
        anchor = "inline"
        pattern = "(a:Person {name: '" + start + "'})"
    for i in range(hops):
        if label != "Person":
            break
        edge = rng.choice(["Knows", "Follows", "WorksAt"])
        length = ""
        if edge != "WorksAt" and rng.random() < 0.3:
            length = rng.choice(["*1..2", "*2", "*0..2"])
        rvar = f"r{i + 1}" if not length and rng.random() < 0.5 else ""
        label = "Company" if edge == "WorksAt" else "Person"
        var = "bc"[i]
        vars_[var] = label
        if rvar:
            rels[rvar] = edge
        pattern += f"-[{rvar}:{edge}{length}]->({var}:{label})"
    last = list(vars_)[-1]
    if anchor == "end" and last != "a" and vars_[last] == "Person":
        pattern = pattern.replace(f"({last}:Person)", f"({last}:Person {{name: '{start}'}})")
    conds = []
    if anchor == "where":
        conds.append(f"a.name = '{start}'")
    for _ in range(rng.randint(0, 2)):
        var = rng.choice(list(vars_))
        kind = rng.choice(["prop", "string", "null", "cross", "rel"])
        if kind == "rel" and rels:
            r = rng.choice(list(rels))
            prop = {"Knows": "since", "Follows": "level", "WorksAt": "role"}[rels[r]]
            value = {"since": "2005", "level": "2", "role": "'eng'"}[prop]
            conds.append(f"{r}.{prop} {rng.choice(['=', '<>', '>'])} {value}")
        elif kind == "string":
            conds.append(f"{var}.name STARTS WITH '{rng.choice(['p1', 'p2', 'c'])}'")
        elif kind == "null":
            conds.append(f"{var}.city IS {rng.choice(['', 'NOT '])}NULL")
        elif kind == "cross" and vars_[var] == "Person" and var != "a":
            conds.append(f"a.age {rng.choice(['<', '>='])} {var}.age")
        else:
            prop = "age" if vars_[var] == "Person" else "founded"
            value = rng.choice(["30", "45", "1950"])
            conds.append(f"{var}.{prop} {rng.choice(['<', '>=', '<>'])} {value}")
    joiner = rng.choice([" AND ", " OR "]) if anchor != "where" else " AND "
    where = joiner.join(f"({c})" for c in conds)
    names = [f"{v}.name" for v in vars_]
    tail = rng.choice(["props", "distinct", "group", "order", "with", "match", "optional"])
    other = rng.choice(list(vars_))
    rel_ids = [f"{r}.id" for r in rels]
    if tail == "props":
        ret = f"RETURN {', '.join(names + rel_ids)}"
    elif tail == "distinct":
        ret = f"RETURN DISTINCT {other}.city"
    elif tail == "group":
        ret = f"RETURN {other}.city, count(*), count(DISTINCT {last}), min({last}.name)"
    elif tail == "order":
        keys = [*reversed(names), *rel_ids]
        order = ", ".join(f"{k} {rng.choice(['', 'DESC'])}".strip() for k in keys)
        ret = f"RETURN {', '.join(keys)} ORDER BY {order} LIMIT {rng.randint(1, 6)}"
    elif tail == "with":
        ret = (
            f"WITH {other}, count(*) AS k WHERE k {rng.choice(['>', '>='])} 1 "
            f"RETURN {other}.name, k"
        )
    elif tail == "match" and vars_[last] == "Person":
        ret = f"WITH {last} MATCH ({last})-[:WorksAt]->(z:Company) RETURN {last}.name, z.name"
    else:
        person = next((v for v in reversed(vars_) if vars_[v] == "Person"), "a")
        ret = f"OPTIONAL MATCH ({person})-[:Follows]->(z) RETURN {person}.name, z.name"
    text = f"MATCH {pattern}{' WHERE ' + where if where else ''} {ret}"
    lb_pattern = re.sub(r"\*(\d*\.\.\d+|\d+)", lambda m: f"*{_range(m.group(1))}", pattern)
    # Only a variable-length relationship or two Knows hops (self-loops) can repeat an
    # edge; elsewhere LadybugDB's walks are trails. LadybugDB 0.22 projects wrong
    # properties of the start node from `MATCH p = ... WHERE is_trail(p)` (seen: `a.name`
    # 'p00' for a match filtered on `a.name = 'p05'`): such queries return none of them.
    if "*" in pattern or pattern.count(":Knows") >= 2:
        if "a." in ret or "(a)" in ret or " a," in ret:
            return _bound_one(rng)
        lb_where = " WHERE is_trail(p)" + (f" AND ({where})" if where else "")
        lb = f"MATCH p = {lb_pattern}{lb_where} {ret}"
    else:
        lb = f"MATCH {lb_pattern}{' WHERE ' + where if where else ''} {ret}"
    return text, lb
