"""Samples given as a folder of images each: a scan's slices or a clip's frames (train/<patient>/<n>.dcm, nested
sub-folders of sequences too). The image models read one picture per sample, so fetch writes one per series: an RGB
PNG whose three channels are the images at a quarter, half and three quarters of the series in name order (numbers
in names compared as numbers), each scaled to 0..255 over the three together so their contrast is kept.
`<split folder>_series/<key>.png` beside the originals, where the image map finds it by the key column."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from agentk.competition.files import split_folders
from agentk.competition.readers import read_table
from agentk.competition.tables import find
from agentk.modalities import IMAGE
from tools.image_files import open_image

SERIES = "_series"  # <split folder>_series/<key>.png: written by fetch
POSITIONS = (0.25, 0.5, 0.75)  # where in a series the channels' images are taken
MIN_SERIES = 10  # a split folder holding fewer series folders is some other layout
MAX_SIDE = 256  # composites are no larger: models resize far below this


def _natural(path: Path) -> list:
    return [int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", path.as_posix())]


def _keys(raw: Path) -> set[str]:
    """Values that name one sample: those of the train, test and sample columns whose values are all distinct."""
    keys: set[str] = set()
    for role, path in find(raw).paths.items():
        if role in ("train", "test", "sample"):
            table = read_table(path, dtype=str)
            for c in table.columns:
                if table[c].notna().all() and table[c].is_unique:
                    keys |= set(table[c])
    return keys


def series_folders(raw: Path) -> dict[Path, dict[str, list[Path]]]:
    """Split folder -> {key: its images in name order} for the sub-folders named by a key that hold two images or
    more; split folders with fewer than MIN_SERIES of them are left out."""
    raw, out = Path(raw), {}
    keys = None
    for role in ("train", "test"):
        for top in (f for f in split_folders(raw, role) if f.is_dir()):
            children = [d for d in top.iterdir() if d.is_dir() and not d.name.startswith(".")]
            if len(children) < MIN_SERIES:
                continue
            keys = _keys(raw) if keys is None else keys
            found = {}
            for d in children:
                if d.name in keys:
                    files = sorted(
                        (p for p in d.rglob("*") if p.suffix.lower() in IMAGE.extensions and p.is_file()),
                        key=lambda p, d=d: _natural(p.relative_to(d)),
                    )
                    if len(files) >= 2:
                        found[d.name] = files
            if len(found) >= MIN_SERIES:
                out[top] = found
    return out


def composite(files: list[Path]) -> np.ndarray:
    """The series' images at POSITIONS as the channels of one (h, w, 3) uint8 picture, at the first one's size."""
    picks = [files[round(p * (len(files) - 1))] for p in POSITIONS]
    planes, size = [], None
    for path in picks:
        with open_image(path) as img:
            grey = img if img.mode in ("F", "I", "L") or img.mode.startswith("I;16") else img.convert("L")
            if size is None:
                w, h = grey.size
                scale = min(1.0, MAX_SIDE / max(w, h))
                size = (max(1, round(w * scale)), max(1, round(h * scale)))
            planes.append(np.asarray(grey.convert("F").resize(size), dtype=np.float64))
    stack = np.stack(planes, axis=-1)
    lo, hi = np.nanmin(stack), np.nanmax(stack)
    scaled = (stack - lo) / (hi - lo) * 255 if hi > lo else np.zeros_like(stack)
    return np.nan_to_num(scaled).round().astype(np.uint8)


def series_as_images(raw: Path) -> list[str]:
    """Write each series' composite (module docstring); what was written, one line per split folder. A series that
    does not read is left out, and the line says how many."""
    from PIL import Image

    done = []
    for top, series in series_folders(raw).items():
        dest = Path(raw) / f"{top.name}{SERIES}"
        if dest.exists():
            continue
        tmp = dest.with_name(f".{dest.name}.partial")
        tmp.mkdir(exist_ok=True)
        failed = 0
        for key, files in series.items():
            try:
                Image.fromarray(composite(files), "RGB").save(tmp / f"{key}.png")
            except (OSError, ValueError):
                failed += 1
        tmp.replace(dest)
        lengths = pd.Series([len(f) for f in series.values()])
        done.append(
            f"{dest.name}/: {len(series) - failed} series of {top.name}/ ({lengths.min()} to {lengths.max()} images "
            f"each) as one PNG per sample, its channels the images at {', '.join(f'{p:.0%}' for p in POSITIONS)} of "
            "the series" + (f"; {failed} did not read" if failed else "")
        )
    return done
