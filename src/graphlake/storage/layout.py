"""Where a graph keeps its own metadata under the root, beside the Lance tables.

```
<root>/_graphlake/graph.json          marker: format, default branch, schema id
<root>/_graphlake/schemas/<id>.pg     schema text, content-addressed
<root>/_graphlake/commits/…           immutable graph commits   (catalog.commits)
<root>/_graphlake/refs/…              branch refs, CAS entries  (catalog.refs)
<root>/_graphlake/claims/…            Lance version claims      (storage.tables)
<root>/_graphlake/recovery/<id>.json  publications in flight    (recovery.records)
<root>/_graphlake/ingest/<run_id>/    ingest plans and results  (ingest.plan, .status)
<root>/_graphlake/derived/adjacency/  persisted adjacencies, derived state (adjacency.persist)
<root>/tables/<table_id>.lance        one Lance dataset per node/edge type
```
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from graphlake.catalog.store import ObjectStore
from graphlake.errors import GraphExistsError, GraphLakeError, NotAGraphError

FORMAT = 1
MARKER = "_graphlake/graph.json"


def schema_id(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:40]


@dataclass(frozen=True)
class GraphInfo:
    format: int
    default_branch: str
    schema_id: str
    created: str


def read_info(store: ObjectStore) -> GraphInfo:
    raw = store.get(MARKER)
    if raw is None:
        raise NotAGraphError(
            f"{store.root_uri} is not a graphlake graph (no {MARKER}); "
            f"create one with Graph.init or `graphlake init`"
        )
    try:
        data = json.loads(raw)
        info = GraphInfo(**data)
    except (ValueError, TypeError) as exc:
        raise NotAGraphError(f"{store.root_uri}: {MARKER} is unreadable: {exc}") from None
    if info.format != FORMAT:
        raise GraphLakeError(
            f"{store.root_uri} uses graph format {info.format}; this graphlake reads {FORMAT}"
        )
    return info


def ensure_absent(store: ObjectStore) -> None:
    if store.exists(MARKER):
        raise GraphExistsError(f"{store.root_uri} already holds a graph; open it instead")


def write_info(store: ObjectStore, info: GraphInfo) -> None:
    data = json.dumps(info.__dict__, sort_keys=True).encode()
    if not store.create(MARKER, data):
        raise GraphExistsError(f"{store.root_uri} already holds a graph; open it instead")


def put_schema(store: ObjectStore, text: str) -> str:
    sid = schema_id(text)
    store.create(f"_graphlake/schemas/{sid}.pg", text.encode())
    return sid


def get_schema(store: ObjectStore, sid: str) -> str:
    raw = store.get(f"_graphlake/schemas/{sid}.pg")
    if raw is None:
        raise GraphLakeError(f"schema {sid} is missing from {store.root_uri}")
    return raw.decode()
