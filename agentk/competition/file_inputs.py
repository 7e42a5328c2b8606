"""Per-sample files (images, text documents): which folder holds a split's files, and how a table names
them or a folder listing labels them. The expert's image and text map stages write code from a FileSource.

Kaggle's layouts: class sub-folders (train/<class>/x.jpg), the label in the file name (cat.123.jpg, or its last part
after an id, 20090328_000000_TRAIN7_1.aif), a
CSV of ids or paths beside an image folder (ids with or without extension, relative or nested paths),
ids shared with a tabular CSV (images/<id>.jpg), unlabelled test folders named by the sample's ids."""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

import pandas as pd

from agentk.competition.files import AUDIO_DECODED, role_of, walk
from agentk.modalities import MODALITIES, file_extensions

NAME_LABEL = re.compile(
    r"([^\d]*?[A-Za-z][^\d]*?)[._\- ]*\d+"
)  # cat.123 -> cat; golden_retriever_7 -> golden_retriever (of the stem)
# the last part of the name before its first dot, after an id: 20090328_000000_TRAIN7_1.aif -> 1 (of the whole name,
# so that a clip's picture, TRAIN7_1.aif.png, reads as its clip)
SUFFIX_LABEL = re.compile(r"([^.]*)[_\- ]([^._\- ]+)(?:\..*)?")
MIN_FILES = 10


@dataclass
class FileSource:
    modality: str  # a modality of agentk.modalities whose samples are files
    folder: str  # workspace-relative folder holding the files
    column: str | None = None  # table column naming each sample's file; None: the folder's files are the samples
    ext: str = ""  # appended to the column's values ("" when they carry it)
    label: str | None = None  # listing: "folder" (class sub-folders), "name" (label prefix of the file name) or
    # "suffix" (the name's last part, SUFFIX_LABEL)
    by_name: bool = False  # the column names each file (with or without extension) anywhere under the folder
    prefix: str = ""  # put before the column's values (img_ in img_<id>.png)
    # several files per sample: the (prefix, suffix) around the column's value of each, in order (<id>_red.png,
    # <id>_green.png); empty: one file per sample
    views: tuple[tuple[str, str], ...] = ()

    @property
    def affixes(self) -> tuple[tuple[str, str], ...]:
        """The (prefix, suffix) around a column value of each of a sample's files."""
        return self.views or ((self.prefix, self.ext),)


def matched_views(train: FileSource, test: FileSource) -> tuple[FileSource, FileSource]:
    """The train and test sources reading the same views of a sample, those both splits have (a train-only mask
    beside each picture is no input); as they were when they share none."""
    common = tuple(a for a in train.affixes if a in test.affixes)
    if not common or (common == train.affixes and common == test.affixes):
        return train, test
    one = {"views": (), "prefix": common[0][0], "ext": common[0][1]} if len(common) == 1 else {"views": common}
    return replace(train, **one), replace(test, **one)


def modality_files(raw: Path, extensions: dict[str, tuple[str, ...]] | None = None) -> dict[str, set[str]]:
    """Paths of per-sample files inside raw/'s folders, by modality (or by the kinds of files `extensions` names),
    relative to raw's parent (the workspace)."""
    raw = Path(raw)
    extensions = file_extensions() if extensions is None else extensions
    found: dict[str, set[str]] = {m: set() for m in extensions}
    for p in walk(raw, 6):
        rel = p.relative_to(raw.parent).as_posix()
        if rel.count("/") < 2:  # raw/description.txt is a document, not a sample
            continue
        for m, exts in extensions.items():
            if p.suffix.lower() in exts:
                found[m].add(rel)
    return {m: files for m, files in found.items() if len(files) >= MIN_FILES}


def _split_score(folder: str, split: str) -> int:
    """2: the folder's path names this split; 1: names no split; 0: names the other split."""
    roles = {role_of(PurePosixPath(part)) for part in folder.split("/")[1:]}
    return 2 if split in roles else 0 if roles & {"train", "test"} else 1


def resolve_column(values: pd.Series, files: set[str], split: str) -> tuple[str, str] | None:
    """(folder, ext) such that folder/value+ext is a file for every value, or None."""
    vals = values.dropna().astype(str).str.replace("\\", "/", regex=False).tolist()
    if not vals or len(vals) < len(values):
        return None
    probe = list(dict.fromkeys(vals[:30] + vals[:: max(1, len(vals) // 30)]))
    folders = {posixpath.dirname(f) for f in files}
    folders |= {a for f in folders for a in _ancestors(f)}
    exts = [""] + sorted({posixpath.splitext(f)[1] for f in files} | {_clip_picture_ext(f) for f in files} - {""})
    hits = [
        (folder, ext)
        for folder in folders
        for ext in exts
        if all(posixpath.normpath(f"{folder}/{v}{ext}") in files for v in probe)
    ]
    hits.sort(key=lambda fe: (-_split_score(fe[0], split), -fe[0].count("/"), fe[1]))
    for folder, ext in hits:
        if all(posixpath.normpath(f"{folder}/{v}{ext}") in files for v in vals):
            return folder, ext
    return None


def _clip_picture_ext(file: str) -> str:
    """ ".flac.png" for a clip's spectrogram picture (tools/audio_clips.py keeps the clip's name in it), so that a
    column naming the clip without its extension names the picture; "" for any other file."""
    stem, ext = posixpath.splitext(file)
    inner = posixpath.splitext(stem)[1]
    return inner + ext if inner.lower() in AUDIO_DECODED else ""


def _ancestors(folder: str):
    while "/" in folder:
        folder = folder.rsplit("/", 1)[0]
        yield folder


def column_source(
    modality: str, table: pd.DataFrame, first: list[str], files: set[str], split: str
) -> FileSource | None:
    """The first column of `table` (those in `first` tried first) whose values name the split's files."""
    order = [c for c in first if c in table.columns] + [c for c in table.columns if c not in first]
    order = [  # the columns that may name files: text and whole numbers
        c for c in order
        if table[c].dtype == object or pd.api.types.is_string_dtype(table[c]) or pd.api.types.is_integer_dtype(table[c])
    ]  # fmt: skip
    for c in order:
        hit = resolve_column(table[c], files, split)
        if hit:
            return FileSource(modality, hit[0], column=c, ext=hit[1])
    for c in order:  # files spread over sub-folders (train/<label>/<id>.png): found by their unique names
        folder = resolve_by_name(table[c], files, split)
        if folder:
            return FileSource(modality, folder, column=c, by_name=True)
    for c in order:  # names around the value (img_<id>.png), or several files per sample (<id>_red.png, ...)
        links = affix_links(table[c], files, split)
        if links:
            folder = links[0][0]
            affixes = tuple((p, s) for f, p, s in links if f == folder)
            if len(affixes) == 1:
                return FileSource(modality, folder, column=c, prefix=affixes[0][0], ext=affixes[0][1])
            return FileSource(modality, folder, column=c, views=_spread(affixes, MAX_VIEWS))
    return None


def affix_links(values: pd.Series, files: set[str], split: str) -> list[tuple[str, str, str]]:
    """(folder, prefix, suffix) such that folder/prefix+value+suffix is a file for every value: the patterns around
    the first value's occurrences in the files' names, kept where every other value fits them too. The values must
    name their samples (unique, no missing one); the best folder for the split comes first."""
    vals = values.astype(str)
    if not len(vals) or values.isna().any() or not vals.is_unique or vals.str.contains("/", regex=False).any():
        return []
    vals = vals.tolist()
    first = vals[0]
    if not first.strip():
        return []
    candidates = set()
    for f in files:
        folder, name = posixpath.split(f)
        at = name.find(first)
        while at >= 0:
            candidates.add((folder, name[:at], name[at + len(first) :]))
            at = name.find(first, at + 1)
    probe = list(dict.fromkeys(vals[:30] + vals[:: max(1, len(vals) // 30)]))
    fits = [c for c in candidates if c[1] + c[2] and all(f"{c[0]}/{c[1]}{v}{c[2]}" in files for v in probe)]
    fits = [c for c in fits if all(f"{c[0]}/{c[1]}{v}{c[2]}" in files for v in vals)]
    return sorted(fits, key=lambda c: (-_split_score(c[0], split), -c[0].count("/"), c[0], c[1], c[2]))


MAX_VIEWS = 16  # files per sample read as one picture (a mosaic of its views); more are sampled evenly


def _spread(items: tuple, k: int) -> tuple:
    """At most k of the items, evenly spaced, in order."""
    return items if len(items) <= k else tuple(items[round(i * (len(items) - 1) / (k - 1))] for i in range(k))


def resolve_by_name(values: pd.Series, files: set[str], split: str) -> str | None:
    """The split's folder under which every value names exactly one file (by name or by stem), or None."""
    vals = values.dropna().astype(str)
    if not len(vals) or len(vals) < len(values) or not vals.is_unique:
        return None
    tops = sorted({f.split("/")[0] + "/" + f.split("/")[1] for f in files if f.count("/") >= 2})
    for folder in sorted(tops, key=lambda t: -_split_score(t, split)):
        names: Counter[str] = Counter()
        for f in files:
            if f.startswith(folder + "/"):
                name = posixpath.basename(f)
                names.update({name, posixpath.splitext(name)[0]})
        if all(names[v] == 1 for v in vals):
            return folder
    return None


def listing_source(modality: str, files: set[str]) -> FileSource | None:
    """The train folder whose files are the samples, labelled by class sub-folder, file-name prefix or the name's last
    part after an id: a folder
    named for training, or the one folder such a folder wraps every file in (train/audio/<class>/...)."""
    by_folder: Counter[str] = Counter()
    for f in files:
        for folder in _ancestors(f):
            if _split_score(folder, "train") == 2 and role_of(PurePosixPath(folder)) == "train":
                by_folder[folder] += 1
    for folder in list(by_folder):
        inner = {f[len(folder) + 1 :].split("/")[0] for f in files if f.startswith(folder + "/")}
        if len(inner) == 1 and (wrapper := f"{folder}/{inner.pop()}") not in files:
            by_folder[wrapper] = by_folder[folder]
    for folder, _ in sorted(by_folder.items(), key=lambda kv: (kv[0].count("/"), -kv[1])):
        rel = [f[len(folder) + 1 :].split("/") for f in files if f.startswith(folder + "/")]
        depths = {len(parts) for parts in rel}
        if depths == {2} and len({parts[0] for parts in rel}) >= 2:
            return FileSource(modality, folder, label="folder")
        if depths == {1}:
            for kind in ("name", "suffix"):
                labels = [name_label(parts[0], kind) for parts in rel]
                counts = Counter(labels)
                if None not in counts and 2 <= len(counts) <= len(rel) / 5 and _keyed(rel, kind):
                    return FileSource(modality, folder, label=kind)
    return None


def name_label(file_name: str, kind: str = "name") -> str | None:
    """The label a file's name holds: its prefix (kind "name", NAME_LABEL) or its last part (kind "suffix",
    SUFFIX_LABEL); None if it holds none."""
    if kind == "suffix":
        m = SUFFIX_LABEL.fullmatch(PurePosixPath(file_name).name)
        return m.group(2) if m else None
    m = NAME_LABEL.fullmatch(PurePosixPath(file_name).stem)
    return m.group(1) if m else None


NAME_SEPARATOR = re.compile(r"[._\- ]")


def labels_beside_ids(files: set[str], ids: set[str]) -> dict[str, tuple[str, str]]:
    """The labels files' names carry beside an id, read off the ids (a table's values), not the names' shape:
    <label><sep><id> or <id><sep><label> (cat.1234.png, 0f3a9c_cat.png, ID_17-cat.png): id -> (label, file), for
    the files one side of whose name (less its extension) is one of `ids`, one file per id (<id>_red.png beside
    <id>_green.png are views of one sample, no labels). Files named by an id alone (the test's) are none."""
    out, seen = {}, Counter()
    for f in files:
        stem = PurePosixPath(f).stem
        for m in NAME_SEPARATOR.finditer(stem):
            before, after = stem[: m.start()], stem[m.end() :]
            if after in ids and before:
                out[after] = (before, f)
                seen[after] += 1
                break
            if before in ids and after:
                out[before] = (after, f)
                seen[before] += 1
                break
    return {i: found for i, found in out.items() if seen[i] == 1}  # several files of one id: views, not a label


def _keyed(rel: list[list[str]], kind: str) -> bool:
    """A label at the end follows an id: the names less their labels are all different (a prefix needs no check)."""
    if kind != "suffix":
        return True
    keys = [SUFFIX_LABEL.fullmatch(parts[0]).group(1) for parts in rel]
    return len(set(keys)) == len(keys)


def listing_frame(ws: Path, src: FileSource, label_column: str) -> pd.DataFrame:
    """The listing as a table: id (path under the folder) and the label, as the generated code builds it."""
    folder = Path(ws) / src.folder
    exts = MODALITIES[src.modality].extensions
    paths = sorted(p for p in folder.rglob("*") if p.suffix.lower() in exts)
    ids = [p.relative_to(folder).as_posix() for p in paths]
    labels = [p.parent.name for p in paths] if src.label == "folder" else [name_label(p.name, src.label) for p in paths]
    return pd.DataFrame({"id": ids, label_column: labels})
