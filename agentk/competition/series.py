"""Data kept outside the usual image and text files. Per-sample files: one CSV/parquet table per sample (a sensor
time series) or one .npy array per sample; fetch summarises them into one table, a fixed-length row per sample keyed
like the train table (row count, then mean, std, min, max, first and last of each numeric column; small arrays as
their values), which the analysis joins to train and test like any per-entity table. A long signal: a train table
that is one recording (no column holds the sample's ids) while each test sample is a segment file of the same
inputs; the recording is cut into windows of the segments' length, each summarised as a segment is and labelled
by the targets' values at its last row (windows). Images kept inside tables
(bands as number lists, pixels one per column) are written as PNGs."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from agentk.competition.files import is_table, role_of, walk
from agentk.competition.readers import read_table
from agentk.parsing import to_numeric

SUMMARY = "file_summaries.csv"  # written by fetch: no split or sample word in the name, it is joined to both
MIN_FILES = 10
MAX_VALUES = 64  # arrays this small become their values, larger ones their statistics
STATS = ("mean", "std", "min", "max")


def per_sample_folders(root: Path) -> dict[Path, list[Path]]:
    """Folders holding at least MIN_FILES per-sample tables or .npy arrays; files spread over sub-folders too few
    each (test/<first character>/<id>.npy) count as their parent folder's."""
    by_folder: dict[Path, list[Path]] = {}
    for p in walk(root, 3):
        if p.parent != root and (is_table(p) or p.suffix.lower() == ".npy"):
            by_folder.setdefault(p.parent, []).append(p)
    under: dict[Path, int] = {}  # such files in a folder and its sub-folders
    for d, files in by_folder.items():
        for folder in [d, *d.parents]:
            if folder == root:
                break
            under[folder] = under.get(folder, 0) + len(files)
    out: dict[Path, list[Path]] = {}
    for d, files in by_folder.items():
        out.setdefault(d if len(files) >= MIN_FILES or d.parent == root else d.parent, []).extend(files)
    return {d: files for d, files in out.items() if under[d] >= MIN_FILES}


def summarise_files(root: Path, keys: dict[str, pd.Series]) -> tuple[pd.DataFrame, str] | None:
    """(one row per file, key column) for the per-sample files whose stems are values of a key column (`keys`:
    column name -> its values in the train, test and sample tables); None when no folder's files are so named."""
    folders = per_sample_folders(root)
    rows, key_name = [], None
    for files in folders.values():
        stems = {p.stem: p for p in files}
        for name, values in keys.items():
            known = set(values.dropna().astype(str))
            if key_name in (None, name) and pd.Series(list(stems)).isin(known).mean() >= 0.9:
                key_name = name
                rows += [{name: stem, **summary(path)} for stem, path in stems.items() if stem in known]
                break
    if not rows:
        return None
    return pd.DataFrame(rows).drop_duplicates(subset=key_name), key_name


def summary(path: Path) -> dict[str, float]:
    """The fixed-length features of one per-sample file."""
    if path.suffix.lower() == ".npy":
        grid = np.asarray(np.load(path, allow_pickle=False), dtype=float)
        arr = grid.ravel()
        if arr.size <= MAX_VALUES:
            return {f"v{i}": v for i, v in enumerate(arr)}
        return {
            **{f"array_{s}": getattr(np, s)(arr) for s in STATS},
            **{f"array_q{q}": np.quantile(arr, q / 100) for q in (10, 50, 90)},
            **_slices(grid),
        }
    return frame_summary(read_table(path))


MAX_SLICES = 16  # a leading axis this short holds channels or frames (a cadence of spectrograms), each summarised


def _slices(grid: np.ndarray) -> dict[str, float]:
    """Per slice of a small leading axis of a 3-D or larger array, its mean, std and max, and the largest mean along
    each other axis: a faint line across a picture (a narrow band, a drifting tone) shows in those, not in the
    whole array's statistics."""
    if grid.ndim < 3 or grid.shape[0] > MAX_SLICES:
        return {}
    out = {}
    for k, part in enumerate(grid):
        out.update({f"slice{k}_mean": part.mean(), f"slice{k}_std": part.std(), f"slice{k}_max": part.max()})
        for axis in range(part.ndim):
            out[f"slice{k}_line{axis}_max"] = part.mean(axis=axis).max()
    return out


def frame_summary(df: pd.DataFrame) -> dict[str, float]:
    """A series' fixed-length features: its row count, then the mean, std, min, max, first and last of each numeric
    column."""
    out: dict[str, float] = {"rows": float(len(df))}
    for c in df.select_dtypes("number").columns:
        s = df[c].astype(float)
        out.update({f"{c}_{stat}": getattr(s, stat)() for stat in STATS})
        out[f"{c}_first"], out[f"{c}_last"] = s.iloc[0], s.iloc[-1]
    return out


def segments(root: Path, ids: set[str]) -> dict[str, Path] | None:
    """{id: file} of the per-sample tables named by the sample's ids (every id a file), or None."""
    for files in per_sample_folders(root).values():
        stems = {p.stem: p for p in files if is_table(p)}
        if ids and ids <= set(stems):
            return {i: stems[i] for i in sorted(ids)}
    return None


def windows(signal: pd.DataFrame, inputs: list[str], targets: list[str], length: int, key: str) -> pd.DataFrame:
    """A long signal cut into consecutive windows of `length` rows (the last, shorter one dropped): one row each,
    keyed window_<k>, with the targets' values at its last row and its inputs summarised as a segment file is."""
    rows = []
    for k in range(len(signal) // length):
        window = signal.iloc[k * length : (k + 1) * length]
        rows.append({key: f"window_{k}", **frame_summary(window[inputs]), **window[targets].iloc[-1].to_dict()})
    return pd.DataFrame(rows)


def per_key(table: pd.DataFrame, key: str) -> pd.DataFrame:
    """A table of many rows per key (one series per sample) as one row per key: the row count, then the mean, std,
    min, max, first and last of each numeric column (as per-sample files are summarised); other columns kept where
    they hold one value per key."""
    grouped = table.groupby(key, sort=False)
    out = pd.DataFrame({"rows": grouped.size()})
    numeric = [c for c in table.columns if c != key and pd.api.types.is_numeric_dtype(table[c])]
    if numeric:
        stats = grouped[numeric].agg([*STATS, "first", "last"])
        stats.columns = [f"{c}_{stat}" for c, stat in stats.columns]
        out = out.join(stats)
    other = [c for c in table.columns if c != key and c not in numeric]
    same = [c for c in other if (grouped[c].nunique(dropna=False) <= 1).all()]
    if same:
        out = out.join(grouped[same].first())
    return out.rename_axis(key).reset_index()


# a category's most frequent values in train, each counted per key, those of COUNTED_ROWS train rows or more: a
# trip's department counts are what says its type (walmart's stand-in, 68 departments: a logistic regression on
# the 20 most frequent scored a validation log loss of 0.94, on all 68 0.77)
TOP_VALUES = 100
COUNTED_ROWS = 10
MAX_COUNTED = 1000  # categories of more distinct values are no counts (a product code): their mode and number only


def aggregate_per_key(train: pd.DataFrame, test: pd.DataFrame, key: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Train and test tables of many rows per key (the items of a shopping trip, the sample's id the trip's) as one
    row per key with the same features: the row count; per numeric column its sum, mean, min and max; per text
    column its most frequent value, its number of distinct values and the count of each of train's TOP_VALUES most
    frequent values (of COUNTED_ROWS rows or more); a column holding one value per key in both tables as that
    value. Train's columns that test lacks (its targets) are taken per key: their value, the most frequent where it
    varies (a number's mean). Both tables come as text (dtype=str) and go out with the key as text."""

    shared = [c for c in test.columns if c != key and c in train.columns]
    own = [c for c in train.columns if c != key and c not in test.columns]
    both = pd.concat([train[[key, *shared]], test[[key, *shared]]], ignore_index=True)
    numbers = {}
    for c in [*shared, *own]:
        source = both if c in shared else train
        parsed = to_numeric(source[c], errors="coerce")
        if parsed.notna().sum() >= 0.95 * source[c].notna().sum() > 0:
            numbers[c] = parsed
    fixed = [c for c in shared if (both.groupby(key, sort=False)[c].nunique(dropna=False) <= 1).all()]
    counted = {}
    for c in shared:
        if c not in numbers and c not in fixed and train[c].nunique() <= MAX_COUNTED:
            counts = train[c].value_counts()
            counted[c] = list(counts.index[counts >= COUNTED_ROWS][:TOP_VALUES])

    def one(frame: pd.DataFrame, offset: int, targets: list[str]) -> pd.DataFrame:
        measured = [c for c in shared if c in numbers and c not in fixed]
        values = {c: numbers[c].iloc[offset : offset + len(frame)].to_numpy() for c in measured}
        grouped = frame.assign(**values).groupby(key, sort=False)
        parts = [pd.DataFrame({"rows": grouped.size()})]
        if fixed:
            parts.append(grouped[fixed].first())
        if measured:
            stats = grouped[measured].agg(["sum", "mean", "min", "max"])
            stats.columns = [f"{c}_{stat}" for c, stat in stats.columns]
            parts.append(stats)
        for c in (c for c in shared if c not in numbers and c not in fixed):
            parts.append(pd.DataFrame({f"{c}_mode": grouped[c].agg(_mode), f"{c}_distinct": grouped[c].nunique()}))
            if counted.get(c):
                counts = pd.crosstab(frame[key], frame[c]).reindex(columns=counted[c], fill_value=0)
                parts.append(counts.add_prefix(f"{c}=").add_suffix("_count"))
        for c in targets:  # one value per key, as a rule: kept as written
            varies = grouped[c].nunique().max() > 1
            if varies and c in numbers:
                parts.append(numbers[c].groupby(frame[key].to_numpy(), sort=False).mean().to_frame(c))
            else:
                parts.append(grouped[c].agg(_mode).to_frame(c))
        out = pd.concat(parts, axis=1).rename_axis(key).reset_index()
        return out.astype({key: str})

    return one(train.reset_index(drop=True), 0, own), one(test.reset_index(drop=True), len(train), [])


def _mode(values: pd.Series):
    """The most frequent value (the first seen of equals); missing where all are."""
    counts = values.value_counts(sort=False)
    return counts.idxmax() if len(counts) else np.nan


ARRAY_DEPTH = 3  # folders below the competition folder searched for whole-split arrays (timit/timit/train.npy)


def _arrays(root: Path) -> list[tuple[Path, tuple[int, ...]]]:
    """(file, shape) of the .npy arrays under root outside per-sample folders, read off their headers only (an
    array of object cells, which needs pickle, is left out)."""
    per_sample = set(per_sample_folders(root))
    found = []
    for p in walk(root, ARRAY_DEPTH):
        if p.suffix.lower() != ".npy" or p.parent in per_sample:
            continue
        try:
            found.append((p, np.load(p, mmap_mode="r", allow_pickle=False).shape))
        except (ValueError, OSError, EOFError):
            continue
    return found


def arrays_to_tables(root: Path, sample: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Features and labels shipped as whole-split arrays (X_train.npy, y_train.npy, X_test.npy, wherever they sit)
    as the tables train and test: columns f0..f<d>, the train labels under the sample's prediction column, the test
    rows given the sample's ids in order. Told apart by their shapes, not their names: the test features are the
    feature matrix with a row per sample row; the train features one as wide whose rows a label vector (one value
    per row) matches; names (train, test) and sharing a folder only break ties. {} when no arrays fit."""

    if sample.shape[1] != 2:
        return {}
    arrays = _arrays(root)
    matrices = [(p, s) for p, s in arrays if len(s) == 2 and s[1] > 1]
    vectors = [(p, s) for p, s in arrays if len(s) == 1 or (len(s) == 2 and s[1] == 1)]

    def named(p: Path, role: str) -> int:
        return -int(role_of(p) == role)  # sorts the arrays named for the role first

    tests = sorted((p for p, s in matrices if s[0] == len(sample)), key=lambda p: (named(p, "test"), str(p)))
    pairs = sorted(
        (
            (named(x, "train") + named(y, "train"), x.parent != y.parent, str(x), x, y, t)
            for t in tests
            for x, sx in matrices
            for y, sy in vectors
            if x != t and sx[0] == sy[0] and sx[1] == dict(matrices)[t][1] and role_of(x) != "test"
        ),
        key=lambda k: k[:3],
    )
    if not pairs:
        return {}
    *_, xpath, ypath, tpath = pairs[0]
    xtr, xte = np.load(xpath, allow_pickle=False), np.load(tpath, allow_pickle=False)
    ytr = np.load(ypath, allow_pickle=False).ravel()
    names = [f"f{i}" for i in range(xtr.shape[1])]
    train = pd.DataFrame(xtr, columns=names).assign(**{sample.columns[1]: ytr})
    test = pd.concat([sample[[sample.columns[0]]].reset_index(drop=True), pd.DataFrame(xte, columns=names)], axis=1)
    return {"train": train, "test": test}


def bands_to_images(table: pd.DataFrame, id_col: str, folder: Path) -> pd.DataFrame | None:
    """Image bands stored as number lists in a table's cells (band_1, band_2 of h*w values each) written as one PNG
    per row under `folder` (named by the id, the bands as channels, each scaled to 0..255), and the table without
    them; None when the table holds no such columns."""
    bands = [
        c
        for c in table.columns
        if table[c].map(lambda v: isinstance(v, list)).all() and len({len(v) for v in table[c]}) == 1
    ]
    side = int(round(len(table[bands[0]].iloc[0]) ** 0.5)) if bands else 0
    if not bands or side * side != len(table[bands[0]].iloc[0]) or side < 4:
        return None
    images = []
    for _, row in table.iterrows():
        chans = [np.asarray(row[c], dtype=float).reshape(side, side) for c in bands[:3]]
        chans += [np.mean(chans, axis=0)] * (3 - len(chans))
        images.append(np.stack([(c - c.min()) / (np.ptp(c) or 1.0) * 255 for c in chans], axis=-1).astype(np.uint8))
    _save_pngs(table[id_col], images, folder)
    return table.drop(columns=bands)


# pixel0, pixel_12, px3: a prefix and a running number (of nine digits at most: int() refuses a column name of
# 10,000 digits, and no picture has a billion pixels)
PIXEL = re.compile(r"^(\D*?)_?(\d{1,9})$")
PIXEL_SHARE = 0.9  # a table of pixels is little else: an id, a label
MIN_SIDE = 16  # below 16 x 16 the pixels are few enough to be strong tabular features (8 x 8 digits: 64 columns)


def pixel_columns(table: pd.DataFrame) -> tuple[list[str], int, int, int] | None:
    """(columns in order, height, width, channels) when a table holds an image's pixels one per column: a common
    prefix and a running number from 0 or 1 (pixel0..pixel783), a count that makes a picture (grey) or three (RGB
    planes) of sides MIN_SIDE or more, whole numbers in 0..255 or fractions in 0..1, and nearly all of the table's
    columns. None when it holds no such columns."""
    groups: dict[str, list[tuple[int, str]]] = {}
    for c in table.columns:
        if m := PIXEL.match(str(c)):
            groups.setdefault(m.group(1).lower(), []).append((int(m.group(2)), c))
    for cols in groups.values():
        cols.sort()
        numbers = [n for n, _ in cols]
        if numbers[0] not in (0, 1) or numbers != list(range(numbers[0], numbers[0] + len(numbers))):
            continue
        if len(cols) < PIXEL_SHARE * table.shape[1]:  # a few numbered groups among others are features (margin1..64)
            continue
        values = table[[c for _, c in cols]]
        if not all(pd.api.types.is_numeric_dtype(t) for t in values.dtypes) or values.isna().any().any():
            continue
        v = values.to_numpy(float)
        if not (v.min() >= 0 and (v.max() <= 1 or (v.max() <= 255 and np.all(v % 1 == 0)))):
            continue
        shape = next(  # a square first (RGB planes of 16 x 16 are no grey 32 x 24), then other sides
            (
                (*hw, ch)
                for square in (True, False)
                for ch in (1, 3)
                if len(cols) % ch == 0 and (hw := _picture(v, len(cols) // ch, square))
            ),
            None,
        )
        if shape is not None:
            return [c for _, c in cols], *shape
    return None


def _picture(v: np.ndarray, n: int, square: bool) -> tuple[int, int] | None:
    """(height, width) of pictures of n pixels a row, row by row: the square (square), or the sides (both MIN_SIDE or
    more, at most 4 to 1) whose width puts each pixel nearest in value to the one below it."""
    side = round(n**0.5)
    if square:
        return (side, side) if side * side == n and side >= MIN_SIDE else None
    widths = [w for w in range(MIN_SIDE, n // MIN_SIDE + 1) if n % w == 0 and max(w, n // w) <= 4 * min(w, n // w)]
    if not widths:
        return None
    rows = v[:200, :n]
    width = min(widths, key=lambda w: float(np.mean((rows[:, w:] - rows[:, :-w]) ** 2)))
    return n // width, width


def pixels_to_images(table: pd.DataFrame, id_col: str, folder: Path) -> pd.DataFrame | None:
    """Pixel columns (pixel_columns) written as one PNG per row under `folder`, named by the id, and the table
    without them; None when the table holds no such columns."""
    found = pixel_columns(table)
    if found is None:
        return None
    columns, height, width, channels = found
    v = table[columns].to_numpy(float)
    v = v * 255 if v.max() <= 1 else v
    images = v.reshape(len(table), channels, height, width).transpose(0, 2, 3, 1).round().astype(np.uint8)
    _save_pngs(table[id_col], images[..., 0] if channels == 1 else images, folder)
    return table.drop(columns=columns)


def _save_pngs(ids: pd.Series, images, folder: Path) -> None:
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    for name, img in zip(ids, images):
        Image.fromarray(img).save(folder / f"{name}.png")
