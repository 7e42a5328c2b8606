"""Unit tests of image and text input maps (paper A.1.3): paths exist and open, texts are real text."""

from __future__ import annotations

import os
import random
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd

from agentk.modalities import IMAGE, PATHS_SEP, TABULAR
from tools.image_files import open_image
from unit_tests_lib.common import fail, read_map


def check_image_map(ws: Path, name: str, n_open: int = 8) -> None:
    df = read_map(ws, name)
    if df.shape[1] != 2:
        fail(f"{name} has columns {list(df.columns)[:5]}: an image map holds 'id' and one path column")
    col = df.columns[1]
    paths = df[col]
    if paths.isna().any():
        fail(f"{name}: {int(paths.isna().sum())} rows have no image path (e.g. id {df['id'][paths.isna()].iloc[0]!r})")
    paths = paths.astype(str).str.split(PATHS_SEP, regex=False).explode()  # a sample's several files: each
    bad_ext = paths[~paths.str.lower().str.endswith(IMAGE.extensions)]
    if len(bad_ext):
        fail(
            f"{name}: {len(bad_ext)} paths do not end in an image extension {IMAGE.extensions} (e.g. {bad_ext.iloc[0]!r}); "
            "add the file extension to the ids"
        )
    full = [p if os.path.isabs(p) else str(ws / p) for p in paths]
    with ThreadPoolExecutor(16) as pool:  # network file systems answer stat() slowly: ask in parallel
        exists = list(pool.map(os.path.isfile, full))
    missing = [p for p, ok in zip(paths, exists) if not ok]
    if missing:
        fail(
            f"{name}: {len(missing)} of {len(paths)} image paths do not exist (e.g. {missing[0]!r}); paths are "
            "relative to the workspace, e.g. raw/train/<file>"
        )

    broken = []
    sampled = random.Random(0).sample(full, min(n_open, len(full)))
    for p in sampled:
        try:
            with open_image(p) as im:
                im.load()
        except Exception as exc:  # noqa: BLE001 - any decoder error means the file is not a usable image
            broken.append(f"{os.path.relpath(p, ws)} ({type(exc).__name__}: {exc})")
    # a few corrupt files among many are the data's (the models read them as black images); most is the map's
    if broken and len(broken) * 2 >= len(sampled):
        fail(f"{name}: {len(broken)} of {len(sampled)} sampled paths do not open as images, e.g. {broken[0]}")


def check_text_map(ws: Path, name: str) -> None:
    df = read_map(ws, name)
    if df.shape[1] < 2:
        fail(f"{name} has only the id column: add the text columns")
    for c in df.columns[1:]:
        s = df[c]
        if pd.api.types.is_numeric_dtype(s) and s.notna().any():
            fail(f"{name}: column {c!r} is numeric; text maps hold free text, numbers go into the {TABULAR.name} map")
        vals = s.dropna().astype(str)
        if len(vals) and vals.str.match(r"^b['\"]").mean() > 0.5:
            fail(f"{name}: column {c!r} holds byte-string reprs like {vals.iloc[0][:30]!r}; decode the bytes to text")
        if len(vals) and vals.str.contains("\ufffd").mean() > 0.01:
            fail(
                f"{name}: column {c!r} has undecodable characters (U+FFFD) in {int(vals.str.contains(chr(0xFFFD)).sum())} "
                "rows; read the files with their real encoding (e.g. latin-1)"
            )
        if len(vals) and vals.str.lower().str.endswith((".txt", ".text")).mean() > 0.5:
            fail(f"{name}: column {c!r} holds file names like {vals.iloc[0]!r}, not text; read the files' content")
    text = df.iloc[:, 1:].fillna("").astype(str).agg("".join, axis=1).str.strip()
    empty = df["id"][text == ""]
    if len(empty) > 0.05 * len(df):
        fail(
            f"{name}: {len(empty)} of {len(df)} rows have no text (e.g. id {empty.iloc[0]!r}); map the text columns "
            "or files that hold the samples' text"
        )
