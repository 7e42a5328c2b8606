"""Free text versus categories, and which tasks agentk cannot do (exit 2)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pandas as pd

from agentk.competition.dataview import AUDIO_EXT, walk
from agentk.competition.tables import sample_columns
from agentk.modalities import IMAGE, MODALITIES, file_extensions

TARGET_DIR = re.compile(r"(clean|mask|target|label|output|gt|ground.?truth)", re.I)


def is_long_text(s: pd.Series) -> bool:
    """Free text (comments, essays), not a short category or name."""
    if pd.api.types.is_numeric_dtype(s) or s.dtype == bool:
        return False
    vals = s.dropna().astype(str).head(500)
    if len(vals) == 0:
        return False
    return vals.str.len().mean() > 40 and vals.str.split().str.len().mean() > 6 and vals.nunique() > 0.5 * len(vals)


def unsupported_reason(
    raw: Path, train: pd.DataFrame | None, sample: pd.DataFrame, test: pd.DataFrame | None = None
) -> str | None:
    """Why agentk cannot do this task, or None. Sample columns that repeat test inputs are not predicted."""
    files = list(walk(raw, 4))
    handled = {ext for exts in file_extensions().values() for ext in exts}  # a registered modality's files
    audio = [p for p in files if p.suffix.lower() in AUDIO_EXT and p.suffix.lower() not in handled]
    if len(audio) >= 5:
        titles = [m.title for m in MODALITIES.values()]
        return (
            f"unsupported task: audio inputs ({len(audio)} {audio[0].suffix} files); "
            f"agentk handles {', '.join(titles[:-1])} and {titles[-1]} competitions"
        )
    image_dirs = Counter(p.parent for p in files if p.suffix.lower() in IMAGE.extensions)
    target_dirs = [d for d, n in image_dirs.items() if n >= 5 and TARGET_DIR.search(d.name)]
    if target_dirs:
        return (
            f"unsupported task: image-to-image (target images in {target_dirs[0].name}/); "
            "agentk predicts labels or values, not images"
        )
    for c in sample_columns(sample, train, test).predicted:
        if train is not None and c in train.columns and _free_text_target(train[c]):
            return (
                f"unsupported task: sequence-to-sequence (the submission column {c!r} holds free text); "
                "agentk predicts labels or values, not text"
            )
    return None


def _free_text_target(s: pd.Series) -> bool:
    """A target that is text to generate: long text, or mostly-unique multi-word strings."""
    if is_long_text(s):
        return True
    if pd.api.types.is_numeric_dtype(s) or s.dtype == bool:
        return False
    vals = s.dropna().astype(str)
    return len(vals) >= 20 and vals.nunique() > 0.5 * len(vals) and vals.str.split().str.len().mean() >= 2


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
    id_col = sample_df.columns[0]
    if test is not None and id_col in test[1].columns:
        name, df = test
        ids = set(df[id_col].astype(str).str.strip())
        if not ids & set(sample_df[id_col].astype(str).str.strip()) and len(sample_df) != len(df):
            return (
                f"{sample_name} matches {name} neither by id (no {id_col!r} of one is in the other) nor by row count "
                f"({len(sample_df)} against {len(df)}): the two files come from different competitions or versions"
            )
    return None
