"""Vector distances with the exact semantics of `g.search`'s `_distance` (Lance's).

Smaller is closer for every metric:
- cosine: 1 - cos(a, b) (0 for equal directions, 2 for opposite ones);
- l2: the squared Euclidean distance;
- dot: 1 - a . b (so a larger dot product ranks first).
A zero vector has no direction: its cosine distance is NaN (Lance never returns such rows).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graphlake.schema.model import VECTOR_METRICS


def distance(vectors: Any, query: Any, metric: str = "cosine") -> np.ndarray:
    """Distance of each row of `vectors` (n x d, or one vector of d) to `query` (d)."""
    if metric not in VECTOR_METRICS:
        raise ValueError(f"unknown metric {metric!r}; metrics are {', '.join(VECTOR_METRICS)}")
    m = np.atleast_2d(np.asarray(vectors, dtype=np.float64))
    q = np.asarray(query, dtype=np.float64).ravel()
    if metric == "l2":
        out = ((m - q) ** 2).sum(axis=1)
    elif metric == "dot":
        out = 1.0 - m @ q
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            out = 1.0 - (m @ q) / (np.linalg.norm(m, axis=1) * np.linalg.norm(q))
    return out
