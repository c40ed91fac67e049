"""Checks of algorithm parameters: each raises `AlgorithmError` naming the parameter and
what it allows, before anything reads or runs."""

from __future__ import annotations

import math
from typing import Any

from graphlake.errors import AlgorithmError

MAX_ITERATIONS = 1000  # the cap of every iteration count
MAX_MEMORY_MB = 4096  # default memory limit of one algorithm run (see memory.py)


def unit_open(name: str, value: Any) -> float:
    """A number strictly between 0 and 1 (a damping factor)."""
    x = number(name, value)
    if not 0 < x < 1:
        raise AlgorithmError(f"{name} must be between 0 and 1 (exclusive), not {value!r}")
    return x


def positive(name: str, value: Any) -> float:
    x = number(name, value)
    if not x > 0:
        raise AlgorithmError(f"{name} must be greater than 0, not {value!r}")
    return x


def iterations(name: str, value: Any) -> int:
    n = integer(name, value)
    if not 1 <= n <= MAX_ITERATIONS:
        raise AlgorithmError(f"{name} must be between 1 and {MAX_ITERATIONS}, not {value!r}")
    return n


def integer(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise AlgorithmError(f"{name} must be an integer, not {value!r}")
    return value


def number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise AlgorithmError(f"{name} must be a finite number, not {value!r}")
    return float(value)


def seed(value: Any) -> int:
    n = integer("seed", value)
    if not 0 <= n < 2**31:
        raise AlgorithmError(f"seed must be between 0 and 2**31 - 1, not {value!r}")
    return n
