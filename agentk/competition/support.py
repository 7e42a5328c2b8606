"""Free text versus categories, and which tasks agentk cannot do (exit 2)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pandas as pd

from agentk.competition import image_pairs
from agentk.competition.column_kinds import PEEK_ROWS, is_label_set, is_long_text
from agentk.competition.files import AUDIO_DECODED, AUDIO_EXT, walk
from agentk.competition.image_pairs import TARGET_DIR, strip_role
from agentk.competition.positions import MAX_SYMBOLS, MIN_COVER, MIN_LENGTH, POSITION_ID
from agentk.competition.readers import read_table
from agentk.competition.rewrites import MIN_COPIED, rewrite_share, source_rows
from agentk.competition.tables import find, related_ids, sample_columns
from agentk.core.errors import BadInput
from agentk.modalities import IMAGE, file_extensions

MASK_NAME = re.compile(r"(mask|segment|annotation)", re.I)
RLE_COLUMN = re.compile(r"(pixel|rle|mask|segment)", re.I)
BOX_COLUMN = re.compile(r"(bbox|\bbox(es)?\b|bounding)", re.I)
BOX_CORNERS = ({"xmin", "ymin", "xmax", "ymax"}, {"x1", "y1", "x2", "y2"})
# a corner and a size: boxes too, where a submitted column is none of train's (x, y and a width are plain features
# elsewhere; a detection layout submits a prediction string instead)
BOX_SIZES = ({"x", "y", "width", "height"}, {"x", "y", "w", "h"})


def unsupported(kind: str, evidence: str) -> str:
    """The one line agentk says for a task it cannot do."""
    return f"unsupported task: {kind} ({evidence})"


def unsupported_reason(
    raw: Path, train: pd.DataFrame | None, sample: pd.DataFrame, test: pd.DataFrame | None = None
) -> str | None:
    """Why agentk cannot do this task, or None: what its files and its (read) tables show."""
    names = [p.relative_to(raw).as_posix() for p in walk(raw, 4)]
    return file_reason(names, raw) or table_reason(train, test, sample)


# per-sample files of kinds no modality reads (volumes, video), refused as audio is, rather than failing setup with
# no inputs found
UNREAD_KINDS = {"NIfTI volumes": (".nii",), "video": (".mp4", ".avi", ".mov", ".mkv")}


def file_reason(names: list[str], folder: Path) -> str | None:
    """Audio inputs, medical scans and video, paired input/output image folders (unless the sample lists pixels), mask
    images: from the file names (and the head of the sample)."""
    # a registered modality's files, and clips that fetch turns into spectrogram pictures (tools/audio_clips.py)
    handled = {ext for exts in file_extensions().values() for ext in exts} | set(AUDIO_DECODED)
    for kind, exts in {"audio": AUDIO_EXT, **UNREAD_KINDS}.items():
        found = [n for n in names if Path(n).suffix.lower() in exts and Path(n).suffix.lower() not in handled]
        if len(found) >= 5:
            return unsupported(kind, f"{len(found)} {Path(found[0]).suffix} files, e.g. {found[0]}")
    images = [n for n in names if Path(n).suffix.lower() in IMAGE.extensions]
    masks = [n for n in images if MASK_NAME.search(Path(n).parent.name) or MASK_NAME.search(Path(n).stem)]
    paired = _paired(masks, [n for n in images if n not in masks])
    if len(paired) >= 5:
        return unsupported("segmentation", f"{len(paired)} mask images paired with input images, e.g. {paired[0]}")
    targets = [n for n in images if TARGET_DIR.search(Path(n).parent.name)]
    paired = _paired(targets, [n for n in images if n not in targets])
    if len(paired) >= 5 and not pixels_sampled(folder, names):
        target_dir = str(Path(paired[0]).parent)
        return unsupported(
            "image-to-image", f"{len(paired)} target images in {target_dir}/ pair with input images of the same name"
        )
    return None


def _paired(outputs: list[str], inputs: list[str]) -> list[str]:
    """The output images whose name (less a mask/target word) is also an input image's name."""
    stems = {Path(n).stem.lower() for n in inputs}
    return [n for n in outputs if strip_role(Path(n).stem) in stems]


def pixels_sampled(folder: Path, names: list[str] | None = None) -> bool:
    """Input images paired with target images and a sample of one row per test pixel: fetch writes the pixels as
    tables (agentk.competition.image_pairs). `names`: the folder's file paths, archive members too."""
    if names is None:
        names = [p.relative_to(folder).as_posix() for p in walk(folder, 4)]
    sample = _sample_head(folder)
    if sample is None:
        return False
    images = [n for n in names if Path(n).suffix.lower() in IMAGE.extensions]
    return image_pairs.detect(folder, images, sample) is not None


def per_position(folder: Path) -> tuple[Path, list[str], str] | None:
    """(file, list fields, sequence field) of JSON records whose fields hold number lists with one value per
    position of a sequence field (a train.json in JSON-lines form, as such competitions ship it); None if none."""
    for path in sorted(p for p in walk(folder, 2) if p.suffix.lower() in (".json", ".jsonl")):
        for rec in _json_records(path):
            seqs = {
                k: v
                for k, v in rec.items()
                if isinstance(v, str) and len(v) >= MIN_LENGTH and len(set(v)) <= MAX_SYMBOLS
            }
            lists = [
                k
                for k, v in rec.items()
                if isinstance(v, list) and len(v) >= 5 and all(isinstance(x, (int, float)) for x in v)
            ]
            per_position = [k for k in lists if any(MIN_COVER * len(v) <= len(rec[k]) <= len(v) for v in seqs.values())]
            if per_position:
                return path, per_position, max(seqs, key=lambda k: len(seqs[k]))
    return None


def positions_sampled(folder: Path, lists: list[str]) -> bool:
    """The sample's rows are `<id>_<position>` and its predicted columns are among the per-position lists."""
    sample = _sample_head(folder)
    return (
        sample is not None
        and sample.shape[1] >= 2
        and set(sample.columns[1:]) <= set(lists)
        and bool(sample.iloc[:, 0].str.match(POSITION_ID).all())
    )


def _sample_head(folder: Path) -> pd.DataFrame | None:
    """The first PEEK_ROWS rows of the folder's sample submission, as text; None without a readable one (the input
    checks report that)."""
    tables = dict(find(folder).paths)
    if "sample" not in tables:
        return None
    try:
        return read_table(tables["sample"], nrows=PEEK_ROWS, dtype=str)
    except BadInput:
        return None


def _json_records(path: Path, limit: int = 20) -> list[dict]:
    """The first records of a JSON-lines file (or of a JSON list), [] if it is neither."""

    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            head = f.read(1 << 20)
    except OSError:
        return []
    out = []
    for line in head.splitlines()[:limit]:
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError):  # not JSON, or nested too deep for json
            break
        if isinstance(rec, dict):
            out.append(rec)
    if not out and head.lstrip().startswith("["):
        try:
            data = json.loads(head)
        except (ValueError, RecursionError):
            return []
        out = [r for r in data[:limit] if isinstance(r, dict)]
    return out


def table_reason(train: pd.DataFrame | None, test: pd.DataFrame | None, sample: pd.DataFrame) -> str | None:
    """Segmentation (RLE targets), object detection (boxes), span extraction and text generation: from the
    sample submission's predicted columns (not those repeating test inputs) and the train table's matching ones."""
    layout = sample_columns(sample, train, test)
    sub_cols = layout.predicted
    for c in sub_cols:
        named = RLE_COLUMN.search(c) and _rle_placeholder(sample[c])
        if named or (train is not None and c in train.columns and _is_rle(train[c])):
            return unsupported("segmentation", f"the submission column {c!r} holds run-length encoded masks")
    if train is not None:
        lower = {str(c).lower().replace("_", ""): c for c in train.columns}
        corners = next((cs for cs in BOX_CORNERS if cs <= set(lower)), None)
        if corners is None and any(c not in train.columns for c in sub_cols):
            corners = next((cs for cs in BOX_SIZES if cs <= set(lower)), None)
        boxes = [c for c in train.columns if BOX_COLUMN.search(str(c)) and _is_box(train[c])]
        if corners or boxes or any(BOX_COLUMN.search(c) for c in sub_cols):
            what = (
                f"the train columns {', '.join(lower[c] for c in sorted(corners))}"
                if corners
                else f"the train column {boxes[0]!r}"
                if boxes
                else f"the submission column {next(c for c in sub_cols if BOX_COLUMN.search(c))!r}"
            )
            return unsupported("object detection", f"{what} {'hold' if corners else 'holds'} bounding boxes")
    for c in sub_cols:
        if train is None or c not in train.columns or pd.api.types.is_numeric_dtype(train[c]):
            continue
        target = train[c]
        inputs = [x for x in train.columns if x != c and (test is None or x in test.columns)]
        for x in inputs:
            share, shorter = _substring_share(target, train[x])
            if share >= 0.8 and shorter >= 0.3 and is_long_text(train[x]):
                return unsupported(
                    "span extraction",
                    f"the submission column {c!r} is a substring of the input {x!r} in {share:.0%} of rows",
                )
        source = next((x for x in inputs if rewrite_share(target, train[x]) >= MIN_COPIED), None)
        if source is not None and (test is None or source_rows(sample, layout.id, test) is None):
            return unsupported(
                "text generation / sequence-to-sequence",
                f"the submission column {c!r} rewrites the input {source!r} (equal in "
                f"{rewrite_share(target, train[source]):.0%} of rows), but no test table lists the sample's rows",
            )
        if source is not None:
            continue  # fetch makes it a choice among the rewrites train gives each value (agentk.competition.rewrites)
        if evidence := _free_text_target(target):
            return unsupported("text generation / sequence-to-sequence", f"the submission column {c!r} {evidence}")
    return None


def _is_rle(s: pd.Series) -> bool:
    """Run-length encoded masks: even numbers of integers, "start length" pairs with rising starts."""
    vals = [str(v).split() for v in s.dropna().head(200) if str(v).strip()]
    if len(vals) < 5:
        return False
    for tokens in vals:
        if len(tokens) % 2 or not all(t.isdigit() for t in tokens):
            return False
        starts = [int(t) for t in tokens[::2]]
        if starts != sorted(starts):
            return False
    counts = Counter(t for tokens in vals for t in tokens)
    return len(counts) > 0.5 * sum(counts.values())  # pixel offsets are mostly unique; label sets repeat


def _rle_placeholder(s: pd.Series) -> bool:
    """A sample column of masks: empty, or "start length" integer pairs ("1 1")."""
    vals = [str(v).split() for v in s if isinstance(v, str) and v.strip()]
    return all(len(t) % 2 == 0 and all(x.isdigit() for x in t) for t in vals)


def _is_box(s: pd.Series) -> bool:
    """Four numbers per value ("[x, y, w, h]")."""
    vals = s.dropna().astype(str).head(200)
    nums = vals.str.findall(r"-?\d+(?:\.\d+)?").str.len()
    return len(vals) > 0 and bool((nums == 4).mean() > 0.9)


def _substring_share(target: pd.Series, source: pd.Series) -> tuple[float, float]:
    """(share of rows whose target is inside the source text, share whose target is shorter than it)."""
    pairs = [(str(t), str(x)) for t, x in zip(target, source) if isinstance(t, str) and isinstance(x, str)]
    if len(pairs) < 10:
        return 0.0, 0.0
    inside = sum(t.strip() != "" and t.strip() in x for t, x in pairs) / len(pairs)
    return inside, sum(len(t.strip()) < len(x.strip()) for t, x in pairs) / len(pairs)


def _free_text_target(s: pd.Series) -> str | None:
    """What shows a target is text to generate (long text, mostly-unique multi-word strings that are not label sets,
    or too many distinct strings to be classes), or None."""
    if is_long_text(s):
        return "holds free text"
    if pd.api.types.is_numeric_dtype(s) or s.dtype == bool or is_label_set(s):
        return None
    vals = s.dropna().astype(str)
    if len(vals) < 20 or vals.nunique() <= 0.5 * len(vals):
        return None
    if vals.str.split().str.len().mean() >= 2:
        return "holds free text"
    if len(vals) >= 50 and vals.nunique() >= 0.9 * len(vals):  # a transcription per sample, not a class name
        return f"holds {vals.nunique()} distinct strings in {len(vals)} rows: text to generate, not classes"
    return None


MIN_TRAIN_ROWS = 10  # fewer cannot be split into a fit part and a validation part worth a score


def hopeless_reason(
    train: tuple[str, pd.DataFrame] | None, test: tuple[str, pd.DataFrame] | None, sample: tuple[str, pd.DataFrame]
) -> str | None:
    """Why no model can be fitted, validated or submitted on these tables, or None. Each argument is
    (file name, table); the sample's first column is its id, the columns after it the targets."""
    sample_name, sample_df = sample
    if train is not None:
        name, df = train
        if len(df) < MIN_TRAIN_ROWS:
            return (
                f"{name} has {len(df)} row{'s' * (len(df) != 1)}: agentk needs at least {MIN_TRAIN_ROWS} labelled "
                "rows to fit and validate a model; use the full training data"
            )
        targets = [c for c in sample_df.columns[1:] if c in df.columns]
        if targets and all(df[c].nunique() < 2 for c in targets):  # one constant target of several can be predicted
            values = ", ".join(
                f"{c!r} is always {df[c].dropna().iloc[0]}" if df[c].notna().any() else f"{c!r} is empty"
                for c in targets
            )
            return f"nothing to learn in {name}: the target {values}; a model needs at least two classes or values"
    if test is not None:
        return _unmatched_ids(train, test, sample)
    return None


STAMP = r"\s*\d{1,4}[-/.:]\d{1,2}[-/.:]\d{1,4}"  # a date or a time of day: when a row is, not which it is


def _own_id(train: tuple[str, pd.DataFrame] | None, test: tuple[str, pd.DataFrame]) -> str | None:
    """The test table's id column of its own, or None: a column train has too, naming each row of either once,
    whole numbers or text but no dates or times, no value in both splits (the competition's own row ids)."""
    if train is None:
        return None
    tr, te = train[1], test[1]
    for c in te.columns:
        if c not in tr.columns:
            continue
        a, b = tr[c], te[c]
        if a.isna().any() or b.isna().any() or not (a.is_unique and b.is_unique):
            continue
        if any(pd.api.types.is_float_dtype(s) and bool((s % 1 != 0).any()) for s in (a, b)):  # measurements
            continue
        if b.astype(str).head(PEEK_ROWS).str.match(STAMP).mean() > 0.5:  # times: train's earlier, test's later
            continue
        if not set(a.astype(str)) & set(b.astype(str)):
            return c
    return None


def _unmatched_ids(
    train: tuple[str, pd.DataFrame] | None, test: tuple[str, pd.DataFrame], sample: tuple[str, pd.DataFrame]
) -> str | None:
    """Why the sample cannot be the test's, or None: none of its ids relates to any value of the test table
    (tables.related_ids: formatting allowed for), and either the test names the sample's id column (the test
    maps' ids come from it and can never be the sample's) or the row counts differ (so the sample's ids cannot
    be the test rows in order either)."""
    (sample_name, sample_df), (name, df) = sample, test
    id_col = sample_columns(sample_df, None if train is None else train[1], df).id
    if id_col is None:  # no id column: the sample's rows are the test rows in order
        return None
    same_rows = len(sample_df) == len(df)
    by_position = same_rows and id_col not in df.columns
    own = _own_id(train, test) if by_position else None
    if (by_position and own is None) or related_ids(sample_df[id_col], df, id_col) is not False:
        return None
    said = lambda s: ", ".join(repr(str(v).strip()) for v in s.dropna().head(2))  # noqa: E731
    if by_position:  # the test rows have ids of their own that the sample's are not: position would be a guess
        return (
            f"{sample_name}'s ids ({id_col!r}: {said(sample_df[id_col])}, ...) are no values of {name}, whose own id "
            f"column {own!r} ({said(df[own])}, ...) names its rows: matching the two by row order alone would be a "
            "guess; use the sample submission that came with the test data"
        )
    theirs = df[id_col] if id_col in df.columns else df.iloc[:, 0]
    what = (
        f"none of its {id_col!r} values ({said(sample_df[id_col])}, ...) is a value of {name} "
        f"({theirs.name!r}: {said(theirs)}, ...), even allowing for case, zero padding, affixes and file extensions"
    )
    return (
        f"{sample_name} matches {name} "
        + (f"by no id ({what})" if same_rows else f"neither by id ({what}) nor by row count ")
        + ("" if same_rows else f"({len(sample_df)} against {len(df)})")
        + ": the two files come from different competitions or versions; use the sample submission that came with "
        "the test data"
    )
