"""Tables written as partitioned datasets: a folder (train.parquet/, events/) whose sub-folders are named
`key=value` (hive partitioning, as Spark, pyarrow and polars write them), nested to any depth, with the table's parts
inside; or a folder named as a table holding its parts (train.parquet/part-00000.parquet). The folder names carry a column: `key=value/` means every row below it has `key` equal to `value`, and the
files below lack that column. pyarrow's dataset reader reads such a folder as one table with those columns."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd

from agentk.competition.files import TABLE_EXT, is_table, walk

HIVE = re.compile(r"^[^=]+=[^=]*$")  # a folder named key=value
DEPTH = 3  # folders below the competition folder searched for a partitioned dataset


def datasets(root: Path) -> list[Path]:
    """The folders under root (not root itself) that hold a dataset: sub-folders named key=value with tables below
    them, or a folder named as a table (train.parquet/, as Spark writes one) holding its parts. Only folders are
    listed on the way, so a folder of many thousand images costs one listing."""
    root, found = Path(root), set()
    stack = [(root, 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            children = [Path(e.path) for e in os.scandir(folder) if e.is_dir() and not e.name.startswith((".", "__"))]
        except OSError:
            continue
        for child in children:
            if HIVE.match(child.name):
                if folder != root and any(is_table(p) for p in walk(folder, 16)):
                    found.add(folder)
                break
            if child.name.lower().endswith(TABLE_EXT) and any(is_table(p) for p in child.iterdir()):
                found.add(child)
            elif depth < DEPTH:
                stack.append((child, depth + 1))
    return sorted(found)


def read_dataset(folder: Path) -> pd.DataFrame:
    """The dataset as one table: its parts' rows, with a column for each key of the folder names (typed as pyarrow
    infers them: `year=2020` gives numbers)."""
    import pyarrow.dataset as ds

    files = [p for p in walk(folder, 16) if is_table(p)]
    suffix = files[0].name.lower().rsplit(".", 1)[-1]
    fmt = {"parquet": "parquet", "csv": "csv", "feather": "feather", "arrow": "feather"}.get(suffix)
    if fmt is None:
        raise ValueError(f"{folder.name}: a partitioned dataset of .{suffix} files, which pyarrow does not read")
    table = ds.dataset([str(p) for p in files], format=fmt, partitioning="hive", partition_base_dir=str(folder))
    frame = table.to_table().to_pandas()
    for c in frame.columns:  # partition keys come back as categories: plain values, as any other column
        if isinstance(frame[c].dtype, pd.CategoricalDtype):
            frame[c] = frame[c].astype(frame[c].cat.categories.dtype)
    return frame


def stem(folder: Path) -> str:
    """The table's name: the folder's without a table extension (train.parquet/ -> train)."""
    name = folder.name
    return name.rsplit(".", 1)[0] if name.lower().endswith(TABLE_EXT) else name
