"""Small file helpers: atomic writes so a killed run never leaves a half-written file looking done."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def write_text(path: Path, text: str) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def copy_file(source: Path, path: Path) -> None:
    """`source`'s bytes at `path`, replacing it whole: a reader (or a kill) sees the old file or the new one."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "wb") as f, open(source, "rb") as src:
        f.write(src.read())
    os.replace(tmp, path)


@contextmanager
def written_array(path: Path, dtype, shape: tuple) -> Iterator:
    """A zero-filled .npy memory map to fill, at `path` once the block ends (under a temporary name until then: a
    killed run leaves no array looking done)."""
    import numpy as np  # here: the CLI's light paths import this module

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    array = np.lib.format.open_memmap(partial, mode="w+", dtype=dtype, shape=shape)
    try:
        yield array
        array.flush()
    except BaseException:
        del array
        partial.unlink(missing_ok=True)
        raise
    del array
    os.replace(partial, path)


def write_json(path: Path, obj: Any) -> None:
    write_text(path, json.dumps(obj, indent=2, default=str) + "\n")


def read_json(path: Path, default: Any = None) -> Any:
    path = Path(path)
    if not path.exists():
        return default
    return json.loads(path.read_text())


def append_jsonl(path: Path, obj: Any) -> None:
    with open(path, "a") as f:
        f.write(json.dumps(obj, default=str) + "\n")


def read_jsonl(path: Path) -> list[dict]:
    """Lines of a JSONL file; a torn last line (killed mid-write) is skipped."""
    path = Path(path)
    if not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return rows
