"""Vector, full-text and hybrid search over one pinned commit (README "Search").

`query.search` runs a request against a `Snapshot`; `indexes` builds and folds the ANN and
BM25 indexes (only `optimize` does, never a write or a merge); `distance` is the metric
semantics shared with anything else that ranks vectors (e.g. Cypher).
"""
