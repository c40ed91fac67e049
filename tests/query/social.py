"""A generated social graph, the same rows for graphlake and the LadybugDB oracle.

Several node and edge types; nulls in every optional property; `Knows` has self-loops,
parallel edges (two edges, same endpoints) and cycles; `Follows` has none of these (so
queries over it mean the same under walk and trail semantics).
"""

from __future__ import annotations

import datetime as dt
import random

SCHEMA = """
node Person { name: String @key  age: I32?  city: String?  score: F64?  born: Date? }
node Company { name: String @key  founded: I32?  city: String? }
edge Knows: Person -> Person { since: I32?  weight: F64? }
edge Follows: Person -> Person { level: I32? }
edge WorksAt: Person -> Company { role: String? }
"""

CITIES = ["Oslo", "Rome", "Lima", "Kyiv", None]
ROLES = ["eng", "pm", "ops", None]

# Ladybug's DDL for the same tables (its node tables need an explicit primary key).
LADYBUG_DDL = [
    "CREATE NODE TABLE Person(id STRING, name STRING, age INT32, city STRING, score DOUBLE, "
    "born DATE, PRIMARY KEY(id))",
    "CREATE NODE TABLE Company(id STRING, name STRING, founded INT32, city STRING, "
    "PRIMARY KEY(id))",
    "CREATE REL TABLE Knows(FROM Person TO Person, id STRING, since INT32, weight DOUBLE)",
    "CREATE REL TABLE Follows(FROM Person TO Person, id STRING, level INT32)",
    "CREATE REL TABLE WorksAt(FROM Person TO Company, id STRING, role STRING)",
]
EDGE_ENDS = {
    "Knows": ("Person", "Person"),
    "Follows": ("Person", "Person"),
    "WorksAt": ("Person", "Company"),
}


def _maybe(rng: random.Random, value, p_null: float = 0.2):
    return None if rng.random() < p_null else value


def social_rows(people: int = 30, companies: int = 6, seed: int = 7) -> dict[str, list[dict]]:
    rng = random.Random(seed)
    persons = [
        {
            "name": f"p{i:02d}",
            "age": _maybe(rng, rng.randint(18, 70)),
            "city": rng.choice(CITIES),
            "score": _maybe(rng, round(rng.uniform(0, 10), 2)),
            "born": _maybe(rng, dt.date(1960, 1, 1) + dt.timedelta(days=rng.randint(0, 15000))),
        }
        for i in range(people)
    ]
    firms = [
        {
            "name": f"c{i}",
            "founded": _maybe(rng, rng.randint(1900, 2020)),
            "city": rng.choice(CITIES),
        }
        for i in range(companies)
    ]
    names = [p["name"] for p in persons]
    knows: list[dict] = []
    seen: set[tuple[str, str]] = set()
    for i in range(people * 3):
        a, b = rng.choice(names), rng.choice(names)
        knows.append(
            {
                "id": f"k{i}",
                "src": a,
                "dst": b,
                "since": _maybe(rng, rng.randint(1990, 2024)),
                "weight": _maybe(rng, round(rng.uniform(0, 1), 3)),
            }
        )
    # Guaranteed shapes: self-loops, a parallel pair, a 3-cycle.
    knows += [
        {"id": "kl1", "src": "p00", "dst": "p00", "since": 2000, "weight": 0.5},
        {"id": "kl2", "src": "p01", "dst": "p01", "since": None, "weight": None},
        {"id": "kp1", "src": "p02", "dst": "p03", "since": 2001, "weight": 0.1},
        {"id": "kp2", "src": "p02", "dst": "p03", "since": 2002, "weight": 0.2},
        {"id": "kc1", "src": "p04", "dst": "p05", "since": 2010, "weight": 0.3},
        {"id": "kc2", "src": "p05", "dst": "p06", "since": 2011, "weight": 0.4},
        {"id": "kc3", "src": "p06", "dst": "p04", "since": 2012, "weight": 0.5},
    ]
    follows = []
    for i in range(people * 2):
        a, b = rng.sample(names, 2)  # no self-loops
        if (a, b) not in seen and (b, a) not in seen:  # no parallel or opposite edges
            seen.add((a, b))
            follows.append(
                {"id": f"f{i}", "src": a, "dst": b, "level": _maybe(rng, rng.randint(1, 5))}
            )
    works = [
        {
            "id": f"w{i}",
            "src": p["name"],
            "dst": rng.choice(firms)["name"],
            "role": rng.choice(ROLES),
        }
        for i, p in enumerate(persons)
        if rng.random() < 0.8
    ]
    return {
        "Person": persons,
        "Company": firms,
        "Knows": knows,
        "Follows": follows,
        "WorksAt": works,
    }
