"""Readers of a pinned revision for training loops and data engines.

Each integration is built on `graphlake.read.scan.Scan` (one table of one commit, held
by a read lease that `gc` honours) and lives behind an optional extra; importing this
package imports none of them:

- `graphlake.readers.torch.to_torch` -> a PyTorch `IterableDataset` (`graphlake[torch]`),
  sharded across DataLoader workers and distributed ranks (`graphlake.readers.shard`);
- `graphlake.readers.ray.to_ray` -> a Ray Data `Dataset` whose read tasks read fragments
  of the pinned table (`graphlake[ray]`);
- `graphlake.readers.hf.to_hf` -> a Hugging Face `datasets.Dataset` or `IterableDataset`
  (`graphlake[hf]`);
- `graphlake.readers.polars.to_polars` -> a Polars `LazyFrame` that pushes projections
  and filters down to Lance (`graphlake[polars]`).

A Blob column named in `columns` comes as lazy `graphlake.read.blobs.BlobRef` handles
from `to_torch` and `to_ray` (`blobs="lazy"`, their default; `blobs="bytes"` reads the
bytes), and as bytes from `to_hf` and `to_polars` (Arrow holds no handles).

A missing extra raises `graphlake.errors.MissingExtraError` with one line naming the
`pip install` to run (`graphlake.readers.extras`).
"""
