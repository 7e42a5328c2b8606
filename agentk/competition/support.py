"""Free text versus categories, and which tasks agentk cannot do (exit 2)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pandas as pd

from agentk.competition.dataview import AUDIO_EXT, walk
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


def unsupported_reason(raw: Path, train: pd.DataFrame | None, sample: pd.DataFrame) -> str | None:
    """Why agentk cannot do this task, or None."""
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
    for c in sample.columns[1:]:
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
