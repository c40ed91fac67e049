"""`@check` matching: RE2 over a whole Arrow column (today) against Python's `re` per row
(before issue 22), side by side in one run. Prints the median time per call and the ratio.

    python bench/check_regex.py [--reps 5]
"""

from __future__ import annotations

import argparse
import re
import statistics
import time

import pyarrow as pa

from graphlake.regex import full_match

CASES = [
    ("email-ish", r"[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}", lambda i: f"user{i}@example.com"),
    ("digits", r"[0-9]{3}-[0-9]{4}", lambda i: f"{i % 1000:03d}-{i % 10000:04d}"),
    ("(a+)+ attack", r"(a+)+", lambda i: "a" * 22 + "!"),  # re: ~0.3 s a row
]


def _median(fn, reps: int) -> float:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    print(f"{'case':14} {'rows':>7} {'re per row':>12} {'RE2 column':>12} {'ratio':>8}")
    for name, pattern, make in CASES:
        for rows in (10, 1000, 100_000):
            if name.startswith("(a+)+") and rows > 10:
                continue  # Python's `re` would take minutes
            values = [make(i) for i in range(rows)]
            col = pa.chunked_array([pa.array(values, pa.string())])
            rx = re.compile(pattern)
            old = _median(lambda rx=rx, values=values: [rx.fullmatch(v) for v in values], args.reps)
            new = _median(lambda col=col, pattern=pattern: full_match(col, pattern), args.reps)
            print(
                f"{name:14} {rows:>7} {old * 1e3:>10.3f}ms {new * 1e3:>10.3f}ms {old / new:>7.2f}x"
            )


if __name__ == "__main__":
    main()
