"""Which rows each distributed rank and DataLoader worker reads: exact, and deterministic.

The rows of a pinned table (under a filter) are laid out in one *sequence*: its Lance
fragments cut into pieces of at most `chunk_rows` rows, in fragment order, or, with a
shuffle seed, in an order drawn from `numpy.random.default_rng([seed, epoch])`. Every
rank computes the same sequence from the same pinned state, so no coordination is needed.

- Ranks take consecutive, equal ranges of the sequence: `per_rank` rows each.
  `drop_last=True`: `per_rank = (N // world_size) // batch_size * batch_size` (every
  batch is full; fewer than `world_size * batch_size` rows are left out per epoch).
  `drop_last=False`: `per_rank = ceil(N / world_size)`, the sequence wrapping around to
  its start to pad (at most `world_size - 1` rows are read twice, as torch's
  `DistributedSampler` does); the last batch of each rank may be short, equally on
  every rank. Either way every rank yields the same number of batches (DDP hangs when
  one rank runs out first).
- Within a rank the batches are split into consecutive blocks, one per DataLoader worker;
  the DataLoader then interleaves the workers' batches, so the rank's batches are
  the same for any worker count except for their order.
- With a seed, each worker also shuffles rows within windows of `window` rows of its
  range (seeded by seed, epoch, rank and worker): the order is the same for the same seed
  and epoch, and different for another epoch.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from graphlake.errors import ReaderError
from graphlake.read.scan import Slice

__all__ = ["Layout", "check_rank", "layout"]


def check_rank(rank: int, world_size: int) -> None:
    for name, value in (("rank", rank), ("world_size", world_size)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ReaderError(f"{name} is a whole number, not {value!r}")
    if world_size < 1:
        raise ReaderError(f"world_size is at least 1, not {world_size}")
    if not 0 <= rank < world_size:
        raise ReaderError(
            f"rank must be in 0..{world_size - 1} for world_size {world_size}, not {rank}"
        )


@dataclass(frozen=True)
class Layout:
    """The sequence of one epoch and the per-rank share of it."""

    pieces: tuple[Slice, ...]  # in sequence order
    starts: tuple[int, ...]  # sequence position of each piece's first row
    total: int
    per_rank: int
    batch_size: int

    @property
    def batches_per_rank(self) -> int:
        return math.ceil(self.per_rank / self.batch_size)

    def worker_range(self, rank: int, worker: int, num_workers: int) -> tuple[int, int]:
        """Positions [start, stop) of the sequence (before wrapping) a worker reads."""
        nb = self.batches_per_rank
        b0, b1 = worker * nb // num_workers, (worker + 1) * nb // num_workers
        base = rank * self.per_rank
        return (
            base + min(b0 * self.batch_size, self.per_rank),
            base + min(b1 * self.batch_size, self.per_rank),
        )

    def slices(self, start: int, stop: int) -> list[Slice]:
        """The fragment slices holding positions [start, stop), wrapping past the end."""
        out: list[Slice] = []
        if self.total == 0:
            return out
        while start < stop:
            a = start % self.total
            b = min(self.total, a + (stop - start))
            out.extend(self._segment(a, b))
            start += b - a
        return out

    def _segment(self, a: int, b: int) -> list[Slice]:
        out = []
        i = bisect.bisect_right(self.starts, a) - 1
        while a < b:
            piece, first = self.pieces[i], self.starts[i]
            lo = a - first
            n = min(piece.count - lo, b - a)
            out.append(Slice(piece.fragment, piece.offset + lo, n))
            a += n
            i += 1
        return out


def layout(
    fragments: Sequence[tuple[int, int]],
    *,
    world_size: int,
    batch_size: int,
    drop_last: bool,
    seed: int | None,
    epoch: int,
    chunk_rows: int,
) -> Layout:
    pieces = [
        Slice(fid, off, min(chunk_rows, n - off))
        for fid, n in fragments
        for off in range(0, n, chunk_rows)
    ]
    if seed is not None and pieces:
        perm = np.random.default_rng([seed, epoch]).permutation(len(pieces))
        pieces = [pieces[i] for i in perm]
    starts, pos = [], 0
    for p in pieces:
        starts.append(pos)
        pos += p.count
    total = pos
    if drop_last:
        per_rank = (total // world_size) // batch_size * batch_size
    else:
        per_rank = math.ceil(total / world_size)
    return Layout(tuple(pieces), tuple(starts), total, per_rank, batch_size)


def window_permutation(
    n: int, seed: int, epoch: int, rank: int, worker: int, window_index: int
) -> np.ndarray:
    """The order of the `n` rows of one shuffle window."""
    return np.random.default_rng([seed, epoch, rank, worker, window_index]).permutation(n)
