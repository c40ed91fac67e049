"""A Ray Dataset as an ingest source: staged as Parquet by Ray's own tasks, then ingested.

    ds = ray.data.read_parquet("s3://bucket/docs/").map_batches(embed)
    gl.ingest(graph, ds, table="Doc", workers=4)

Ray writes the dataset's blocks as Parquet files in parallel (`Dataset.write_parquet`, one
or more files per block, on whichever Ray nodes hold them), into a staging folder; the
ingest then runs exactly as for Parquet input: the files are checked against the table,
split into slices, loaded by the workers into shard branches and joined by one
`merge_many`, so the result is one validated commit on the target.

The staging folder is `$TMPDIR/graphlake-ray-<run id>` unless `staging=` names one. On a
multi-node Ray cluster it must be a folder every node can write and the ingest workers
can read (a shared mount); on one machine the default works. It is deleted after the run
finished, and kept when the run failed, so a rerun with the same `run_id` resumes from the
staged files without running the dataset's pipeline again (a `_SUCCESS` marker says the
staging is complete; an incomplete one is written anew).

Ray's tensor columns (numpy arrays in rows become Ray's `ArrowTensorType` extension
arrays) are written as their storage, a list per row, which the ingest coerces to the
table's `Vector(n)` like any Parquet list column.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa

from graphlake.errors import DataError, UnknownTableError
from graphlake.schema.model import Schema

MARKER = "_SUCCESS"


def is_ray_dataset(obj: object) -> bool:
    """A `ray.data.Dataset` (checked by class, so Ray is not imported for other sources)."""
    return any(
        c.__module__.startswith("ray.data") and c.__name__ == "Dataset" for c in type(obj).__mro__
    )


def staging_dir(run_id: str, staging: str | os.PathLike[str] | None) -> Path:
    if staging is not None:
        return Path(staging).absolute()
    return Path(tempfile.gettempdir()) / f"graphlake-ray-{run_id}"


def check_dataset(ds: Any, schema: Schema, table: str | None) -> None:
    """Refuse before Ray runs anything: a table is needed, known, and the columns exist."""
    if table is None:
        raise DataError("ingesting a Ray Dataset needs a table (table=)")
    t = schema.table(table)
    if t is None:
        raise UnknownTableError(
            f"unknown node or edge type {table!r} (known: {', '.join(schema.table_names)})"
        )
    names = ds.schema().names if ds.schema() is not None else []
    known = {p.name for p in t.properties} | ({"src", "dst"} if t.is_edge else set())
    unknown = [n for n in names if n not in known]
    if unknown:
        raise DataError(
            f"the Ray Dataset has columns {table} does not: "
            f"{', '.join(unknown)} (known: {', '.join(sorted(known))})"
        )


def stage(ds: Any, folder: Path) -> Path:
    """Write `ds` as Parquet files into `folder` (reused when complete); the folder."""
    if (folder / MARKER).exists():
        return folder
    if folder.exists():
        shutil.rmtree(folder)
    ds.map_batches(_plain_columns, batch_format="pyarrow", zero_copy_batch=True).write_parquet(
        str(folder)
    )
    files = sorted(folder.glob("*.parquet"))
    if not files:
        raise DataError("nothing to ingest: the Ray Dataset holds no rows")
    (folder / MARKER).write_bytes(b"")
    return folder


def remove(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)


def _plain_columns(batch: pa.Table) -> pa.Table:
    """Extension columns (Ray's tensors) as their storage arrays."""
    columns = []
    for col in batch.columns:
        if isinstance(col.type, pa.ExtensionType):
            col = pa.chunked_array([c.storage for c in col.chunks], type=col.type.storage_type)
        columns.append(col)
    return pa.Table.from_arrays(columns, names=batch.column_names)
