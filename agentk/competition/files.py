"""A competition folder's files by their names: which are tables, sound or documents, the split a name says (train,
test, sample submission), the folders of one split, and the walk over them. Nothing here opens a file; reading
tables is agentk.competition.readers, and which table is which agentk.competition.tables."""

from __future__ import annotations

import os
import re
from pathlib import Path

TABLE_EXT = (".csv", ".tsv", ".json", ".jsonl", ".parquet", ".feather", ".csv.gz", ".tsv.gz")
AUDIO_EXT = (".wav", ".mp3", ".flac", ".ogg", ".opus", ".aif", ".aiff", ".m4a", ".aac", ".wma")
# libsndfile reads these (Opus in its Ogg container too): fetch pictures them; the rest of AUDIO_EXT is refused
AUDIO_DECODED = (".wav", ".mp3", ".flac", ".ogg", ".opus", ".aif", ".aiff")
TEXT_DOC_EXT = (".md", ".txt", ".html", ".htm")


def is_table(path: Path) -> bool:
    return path.is_file() and path.name.lower().endswith(TABLE_EXT)


def walk(root: Path, max_depth: int = 4):
    """Files under root (following links, but not a link back to a folder above it: `a -> .`), sorted, hidden
    ones skipped."""
    root = Path(root)
    stack = [(root, 0, frozenset({os.path.realpath(root)}))]
    while stack:
        folder, depth, above = stack.pop()
        try:
            children = sorted(folder.iterdir())
        except OSError:
            continue
        for child in children:
            if child.name.startswith((".", "__MACOSX")):
                continue
            if child.is_dir():
                real = os.path.realpath(child)
                if depth < max_depth and real not in above:
                    stack.append((child, depth + 1, above | {real}))
            else:
                yield child


def spelling(column) -> str:
    """A column's name up to case and punctuation: id_01, id-01 and ID01 are one column spelled three ways (and
    Größe, GRÖSSE: letters compared case-folded)."""
    return re.sub(r"[\W_]+", "", str(column).casefold())


def role_of(path: Path) -> str | None:
    """train / test / sample, read off a file or folder name (train.csv, en_train.csv.zip, training_set.csv,
    train_images/, test.zip, gender_submission.csv, sampleSubmission.csv...)."""
    name = path.name.lower()
    if re.search(r"sample|submission", name):
        return "sample"
    if re.search(r"(^|[^a-z])(train|training)([^a-z]|$)", name) or name.startswith("train"):
        return "train"
    if re.search(r"(^|[^a-z])(test|testing)([^a-z]|$)", name) or name.startswith("test"):
        return "test"
    return None


def split_folders(root: Path, role: str) -> list[Path]:
    """Top-level folders or archives of one split (train/, train_images/, test.zip)."""
    return [
        p
        for p in sorted(Path(root).iterdir())
        if not p.name.startswith(".")
        and not is_table(p)
        and (p.is_dir() or p.name.lower().endswith((".zip", ".tar", ".tar.gz", ".tgz", ".7z")))
        and role_of(p) == role
    ]
