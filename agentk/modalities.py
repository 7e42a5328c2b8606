"""Which input modalities a competition folder has, and which tasks agentk cannot do (exit 2)."""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pandas as pd

from agentk.dataview import AUDIO_EXT, IMAGE_EXT, walk
from agentk.errors import BadInput

SUPPORTED_INPUTS = {"tab"}
TARGET_DIR = re.compile(r"(clean|mask|target|label|output|gt|ground.?truth)", re.I)


def is_long_text(s: pd.Series) -> bool:
    """Free text (comments, essays), not a short category or name."""
    if pd.api.types.is_numeric_dtype(s) or s.dtype == bool:
        return False
    vals = s.dropna().astype(str).head(500)
    if len(vals) == 0:
        return False
    return vals.str.len().mean() > 40 and vals.str.split().str.len().mean() > 6 and vals.nunique() > 0.5 * len(vals)


def detect_inputs(raw: Path, train: pd.DataFrame, exclude: set[str]) -> list[str]:
    inputs = []
    cols = [c for c in train.columns if c not in exclude]
    text_cols = [c for c in cols if is_long_text(train[c])]
    if len(cols) > len(text_cols):
        inputs.append("tab")
    exts = Counter(p.suffix.lower() for p in walk(raw, 4))
    if sum(exts[e] for e in IMAGE_EXT) >= 10:
        inputs.append("img")
    if text_cols or exts[".txt"] >= 10:
        inputs.append("txt")
    return inputs


def unsupported_reason(raw: Path, train: pd.DataFrame, sample: pd.DataFrame) -> str | None:
    """Why agentk cannot do this task, or None."""
    files = list(walk(raw, 4))
    audio = [p for p in files if p.suffix.lower() in AUDIO_EXT]
    if len(audio) >= 5:
        return (f"unsupported task: audio inputs ({len(audio)} {audio[0].suffix} files); "
                "agentk handles tabular, image and text competitions")
    image_dirs = Counter(p.parent for p in files if p.suffix.lower() in IMAGE_EXT)
    target_dirs = [d for d, n in image_dirs.items() if n >= 5 and TARGET_DIR.search(d.name)]
    if target_dirs:
        return (f"unsupported task: image-to-image (target images in {target_dirs[0].name}/); "
                "agentk predicts labels or values, not images")
    for c in sample.columns[1:]:
        if c in train.columns and _free_text_target(train[c]):
            return (f"unsupported task: sequence-to-sequence (the submission column {c!r} holds free text); "
                    "agentk predicts labels or values, not text")
    return None


def _free_text_target(s: pd.Series) -> bool:
    """A target that is text to generate: long text, or mostly-unique multi-word strings."""
    if is_long_text(s):
        return True
    if pd.api.types.is_numeric_dtype(s) or s.dtype == bool:
        return False
    vals = s.dropna().astype(str)
    return len(vals) >= 20 and vals.nunique() > 0.5 * len(vals) and vals.str.split().str.len().mean() >= 2


def require_supported(inputs: list[str]) -> None:
    unsupported = set(inputs) - SUPPORTED_INPUTS
    if unsupported:
        names = {"img": "image", "txt": "text"}
        raise BadInput(f"unsupported task for this version: {', '.join(names.get(m, m) for m in sorted(unsupported))} "
                       "inputs (tabular competitions only)")
