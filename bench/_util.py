"""Small helpers for the benchmarks: machine facts, percentiles, peak RSS, a text table."""

from __future__ import annotations

import os
import platform
import resource
import statistics
import sys
from collections.abc import Sequence


def machine() -> str:
    """One line: cores, RAM, OS, Python, pylance and pyarrow versions."""
    import lance
    import pyarrow as pa

    return (
        f"{os.cpu_count()} cores, {_ram_gib():.1f} GiB RAM, {platform.system()} "
        f"{platform.machine()}, Python {platform.python_version()}, "
        f"pylance {lance.__version__}, pyarrow {pa.__version__}"
    )


def _ram_gib() -> float:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):
        return float("nan")


def peak_rss_mib() -> float:
    """This process's peak resident set size so far (ru_maxrss), in MiB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Linux reports KiB, macOS bytes.
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


def current_rss_mib() -> float:
    """Current resident set size in MiB (Linux /proc; falls back to the peak)."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return peak_rss_mib()


def cpu_seconds() -> float:
    """User + system CPU time of this process so far, all threads."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def load_average() -> str:
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:
        return "n/a"


def percentile(values: Sequence[float], p: float) -> float:
    """The p-th percentile (0..100), linearly interpolated between closest ranks."""
    if not values:
        return float("nan")
    xs = sorted(values)
    pos = (len(xs) - 1) * p / 100
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def render_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain-text table with aligned columns (first column left, the rest right)."""
    widths = [len(h) for h in header]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))

    def line(cells: Sequence[str]) -> str:
        out = [cells[0].ljust(widths[0])]
        out += [c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)]
        return "  ".join(out).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(header), rule, *(line(r) for r in rows)])
