"""Which table is which: the train, test and sample-submission tables of a competition folder, a separate
train-labels table, and why each was chosen when there was a choice.

Kaggle names them freely (train.csv, en_train.csv, training_set.csv, train_v2.csv, gender_submission.csv,
sampleSubmission.csv, <prefix>_sample_submission_2.csv, train_labels.csv, trainLabels.csv...). The name says
the role; a folder named for a split gives its few tables that role (train/part-0.csv). When several files could
be the sample submission, the one whose ids are the test set's wins. Discovery reads tables, so its answer is
cached per folder state.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath

import numpy as np
import pandas as pd

from agentk.competition import class_tables, image_pairs, partitions, positions, rewrites, wide_series
from agentk.competition.dataview import (
    TABLE_EXT,
    is_table,
    nested_as_text,
    read_chunks,
    read_table,
    role_of,
    spelling,
    split_folders,
    walk,
)
from agentk.competition.file_inputs import labels_beside_ids, listing_source, modality_files
from agentk.competition.json_tables import AS_PANDAS_READS, read_json_table
from agentk.competition.long_format import RECORD, WIDE, detect, to_wide
from agentk.competition.series import (
    SUMMARY,
    aggregate_per_key,
    arrays_to_tables,
    bands_to_images,
    frame_summary,
    per_key,
    per_sample_folders,
    pixel_columns,
    pixels_to_images,
    segments,
    summarise_files,
    windows,
)
from agentk.core.errors import BadInput
from agentk.modalities import IMAGE, file_extensions
from agentk.parsing import to_numeric

LABELS = re.compile(r"label|target|solution|truth|answer", re.I)  # a table of targets, beside the inputs
MAX_PARTS = 20  # a split folder with more tables than this holds one table per sample, not parts of one
DEPTH = 2  # folders below the competition folder that are searched for tables
FOLDER_LABELS = "train_folder_labels.csv"  # written by normalise: the labels that class sub-folders give
FLAT = "_without_pixels"  # <stem>_without_pixels.csv: written by normalise, it stands in for the table <stem>
LABEL_COLUMNS = "_label_columns"  # <train>_label_columns.csv: label sets as the sample's 0/1 columns
SET_SEPARATORS = (r",", r";", r"\|", r"\s+")  # between the labels of a set, tried in this order
POSITIONS = "_positions"  # <records>_positions.csv: one row per position, written by normalise
WINDOWS = {"train": "train_windows.csv", "test": "test_windows.csv"}  # a long signal's windows and segments
STAND_INS = "stand_ins.json"  # written by normalise: {a table's path: the table (or image folder/) standing in}
SERIES_HEAD = 2000  # rows read to tell a table of many rows per key from one of one row per key
AS_CSV = "_as_csv"  # <folder>_as_csv/: CSVs standing in for the JSON tables of a split's folder
PART = re.compile(r"[_\-. ]?(part|chunk)?[_\-. ]?\d+$", re.I)  # train_1, train-part-2: numbered parts


@dataclass
class Tables:
    paths: dict[str, Path]  # role (train, test, sample, labels) -> table
    why: dict[str, str] = field(default_factory=dict)  # role -> why this file, where there was a choice
    parts: dict[str, list[Path]] = field(default_factory=dict)  # role -> the files that are parts of one table
    ranked: dict[str, list[tuple[Path, str]]] = field(default_factory=dict)  # role -> its candidates and evidence


def _stem(path: Path) -> str:
    """The name without its table extension (train.csv.gz -> train)."""
    ext = next((e for e in sorted(TABLE_EXT, key=len, reverse=True) if path.name.lower().endswith(e)), None)
    return path.name[: -len(ext)] if ext else path.stem


def file_role(path: Path, root: Path) -> str | None:
    """train / test / sample / labels of one table, from its name, else from the split folder holding it."""
    role = role_of(path)
    if role == "train" and LABELS.search(path.name):
        return "labels"
    if role is None and LABELS.search(path.name):
        return "labels"
    if role is None:
        for folder in path.relative_to(root).parts[:-1]:
            role = role_of(Path(folder)) or role
    return role


def candidates(root: Path) -> list[Path]:
    """The tables of a competition folder that can be train/test/sample/labels: per-sample folders, and the records
    normalise writes beside them, excluded. A partitioned dataset is one table: its folder, not its parts."""
    root = Path(root)
    written = {root / STAND_INS, root / RECORD, root / rewrites.RECORD}
    folders = partitions.datasets(root)
    tables = [
        p for p in walk(root, DEPTH) if is_table(p) and p not in written and not any(f in p.parents for f in folders)
    ]
    per_folder: dict[Path, int] = {}
    for p in tables:
        per_folder[p.parent] = per_folder.get(p.parent, 0) + 1
    return sorted(
        [*(p for p in tables if p.parent == root or per_folder[p.parent] <= MAX_PARTS), *folders],
        key=lambda p: (len(p.relative_to(root).parts), p.name),
    )


def _signature(root: Path) -> tuple:
    out = []
    for p in candidates(root):
        st = p.stat()
        out.append((str(p), st.st_size, st.st_mtime_ns))
    return tuple(out)


def find(root: Path) -> Tables:
    root = Path(root)
    return _find(root, _signature(root))


@lru_cache(maxsize=32)
def _find(root: Path, signature: tuple) -> Tables:
    by_role: dict[str, list[Path]] = {}
    found = candidates(root)
    replaced = {root / original for original in stand_ins(root)}
    for p in found:
        role = file_role(p, root)
        if role and p not in replaced:  # a table gives way to what normalise wrote for it (flat, wide, per key)
            by_role.setdefault(role, []).append(p)
    unnamed = [p for p in found if p not in replaced and file_role(p, root) in (None, "labels")]
    samples = by_role.get("sample", [])
    submissions = [p for p in samples if "submission" in p.name.lower()]
    if submissions and len(submissions) < len(samples):  # "samples_labelled.csv" names samples, not a submission
        by_role["sample"] = submissions
        unnamed += [p for p in samples if p not in submissions]
    why = _roles_from_values(root, unnamed, by_role)
    if len(by_role.get("test", [])) > 1 and len(by_role.get("sample", [])) > 1:
        why.update(_scored_stage(by_role))
    if len(by_role.get("test", [])) > 1 and "sample" in by_role:
        why.update(_scored_test(by_role))
    if len(by_role.get("train", [])) > 1 and "sample" in by_role and "test" in by_role:
        why.update(_scored_train(root, by_role))
    if by_role.get("test") and "sample" in by_role:
        why.update(_test_files_over_tables(root, by_role))
    out = Tables({}, why)
    ranked = by_role.pop("train_ranked", [])
    for role in ("train", "test"):
        if role in by_role:
            out.paths[role], parts = _pick_split(root, by_role[role])
            if parts:
                out.parts[role] = parts
    if ranked:  # the chosen train table first, then the other candidates by their evidence
        ranked.sort(key=lambda r: r[0] != out.paths["train"])
        out.ranked["train"] = ranked
    if "labels" in by_role:
        if "train" in out.paths:
            labels = _pick_labels(out.paths["train"], by_role["labels"], by_role.get("sample", []))
            if labels is not None:
                out.paths["labels"], out.why["labels"] = labels
        else:  # image competitions often keep the training labels in labels.csv / train_labels.csv
            out.paths["train"] = by_role["labels"][0]
    if "sample" in by_role:
        out.paths["sample"], why = _pick_sample(root, by_role["sample"], out.paths.get("test"))
        if why:
            out.why["sample"] = why
    return out


def _roles_from_values(root: Path, unnamed: list[Path], by_role: dict[str, list[Path]]) -> dict[str, str]:
    """The train and test tables when no name says which (cases_2019.parquet; `unnamed`: the tables no name places,
    and those named like labels, which may be a labelled train table), read off the values (in `by_role`, in
    place; why each, by role): the test table holds the sample submission's ids; the train table has the test's
    columns, and the sample's target columns or more rows; a labels table beside it has the sample's target
    columns and a column holding the train table's keys. No train table is taken from a competition with a train
    folder (train/, train_images/), whose files the names do place; beside a test folder, a test table is one that
    holds the sample's ids and little else (the test samples' other inputs, not a table of every sample's)."""
    why: dict[str, str] = {}
    test_folder = bool(split_folders(root, "test"))
    need_test = "test" not in by_role
    need_train = "train" not in by_role and not split_folders(root, "train")
    if "sample" not in by_role or not unnamed or not (need_test or need_train):
        return why
    try:
        sample = read_table(by_role["sample"][0], dtype=str)
        frames = {p: read_table(p, dtype=str) for p in unnamed}
    except BadInput:
        return why
    targets = set(sample.columns[1:])
    if need_test:
        ids = set(sample.iloc[:, 0].astype(str).str.strip())
        cover = {p: _id_cover(f, ids)[0] for p, f in frames.items()}
        best = max(frames, key=lambda p: (cover[p], -abs(len(frames[p]) - len(sample))))
        only = len(frames[best]) <= len(sample) / 0.9  # its rows are mostly the sample's
        if cover[best] >= 0.9 and not targets <= set(frames[best].columns) and (only or not test_folder):
            by_role["test"] = [best]  # named like labels ("unlabelled_cases.csv") perhaps: not labels then
            by_role["labels"] = [p for p in by_role.get("labels", []) if p != best]
            why["test"] = f"{best.name}: {cover[best]:.0%} of the sample submission's ids are its values"
    test = by_role.get("test", [None])[0]
    if need_train and test is not None:
        test_cols = {spelling(c) for c in read_table(test, nrows=5).columns}  # test may spell a column otherwise
        scored = []
        for p, f in frames.items():
            shared = len(test_cols & {spelling(c) for c in f.columns})
            if p != test and shared >= max(1, len(test_cols) / 2):
                scored.append(((bool(targets & set(f.columns)), shared, len(f)), p))
        if scored:
            (has_targets, shared, _), best = max(scored, key=lambda t: t[0])
            by_role["train"] = [best]  # named like labels ("labelled_cases.csv") but holding the inputs: train
            by_role["labels"] = [p for p in by_role.get("labels", []) if p != best]
            why["train"] = f"{best.name}: {shared} of the test's columns" + (
                " and the sample's targets" if has_targets else ", more rows than any other such table"
            )
            if not has_targets and not by_role.get("labels"):
                # beside it, a table keyed by its rows holding what it lacks: by the sample's target names, or the
                # only such table holding none of the test's keys (the sample may name one column per class of a
                # single label column; a table of every sample's codes or file summaries holds test's keys too)
                keys = [set(frames[best][c].astype(str)) for c in frames[best]]
                test_values = set(pd.unique(read_table(test, dtype=str).to_numpy().ravel().astype(str)))
                found = []
                for p, f in frames.items():
                    extra = set(f.columns) - set(frames[best].columns)
                    if p in (best, test) or not extra:
                        continue
                    linked = [d for d in f if any(len(v & set(f[d].astype(str))) >= 0.9 * len(v) for v in keys if v)]
                    if linked:
                        apart = not any(test_values & set(f[d].astype(str)) for d in linked)
                        found.append((bool(targets & extra), apart, p))
                named = [p for has, _, p in found if has]
                apart = [p for _, away, p in found if away]
                if named or len(apart) == 1:
                    by_role["labels"] = [(named or apart)[0]]
    for role in [r for r, paths in by_role.items() if not paths]:
        del by_role[role]
    return why


def _id_cover(f: pd.DataFrame, ids: set[str]) -> tuple[float, str]:
    """(share of the sample's ids found, column) for the column of `f` holding most of them."""
    shares = {c: len(ids & set(f[c].astype(str).str.strip())) / max(len(ids), 1) for c in f}
    top = max(shares, key=shares.get)
    return shares[top], top


def _scored_test(by_role: dict[str, list[Path]]) -> dict[str, str]:
    """Of several tables named test, the one holding the sample submission's ids when the others hold few of them
    (test.csv beside test_old.csv, test_v1 beside test_v2: an older test set, no longer scored), in `by_role`, in
    place; of those holding them, one holding each id once outranks those holding them many times (test_set.csv of
    readings beside test_set_metadata.csv); parts of one test table (test_1.csv, test_2.csv) each hold some and are
    left to _pick_split."""
    try:
        ids = set(read_table(by_role["sample"][0], dtype=str).iloc[:, 0].astype(str).str.strip())
        cover, once, columns = {}, {}, {}
        for p in by_role["test"]:
            f = read_table(p, dtype=str)
            cover[p], top = _id_cover(f, ids)
            once[p], columns[p] = f[top].is_unique, {spelling(c) for c in f.columns}
    except BadInput:
        return {}
    # a table holding each id once outranks one holding them many times (the test samples' readings beside them)
    best = max(cover, key=lambda p: (cover[p] >= 0.9, once[p], cover[p]))
    # another holding many of them once, of the same columns, is another version of the test set (or a part), and
    # another holding them all is one more candidate: the names decide; of other columns and holding some test
    # rows, it holds more inputs of those (a side table)
    if cover[best] < 0.9 or any(
        v >= 0.5 and once[p] and (columns[p] == columns[best] or v >= 0.9) for p, v in cover.items() if p != best
    ):
        return {}
    by_role["test"] = [best]
    others = ", ".join(f"{p.name} {v:.0%}" for p, v in cover.items() if p != best)
    return {"test": f"{best.name}: {cover[best]:.0%} of the sample submission's ids are its values ({others})"}


def _test_files_over_tables(root: Path, by_role: dict[str, list[Path]]) -> dict[str, str]:
    """No test table, in `by_role`, in place, where the tables named test hold none of the sample submission's ids
    (no relation at all: another version's test set, kept beside the data) and the per-sample files of a test folder
    are named by them (test/<id>.npy): the test samples are those files."""
    try:
        ids = read_table(by_role["sample"][0], dtype=str).iloc[:, 0].astype(str).str.strip()
        if any(related_ids(ids, read_table(p, dtype=str)) is not False for p in by_role["test"]):
            return {}
    except BadInput:
        return {}
    share, _ = _id_match(by_role["sample"][0], _test_keys(root, None))
    if share < 0.9:
        return {}
    tables = ", ".join(p.name for p in by_role.pop("test"))
    return {
        "test": f"the test folder's files: {share:.0%} of the sample submission's ids name them, none is in {tables}"
    }


def _scored_stage(by_role: dict[str, list[Path]]) -> dict[str, str]:
    """Two stages of a competition, each a test table with its own sample submission (test.csv and its sample
    beside test_stage2.csv and its own): pairs are read off the values, a sample whose ids are exactly the ids of
    one test table's column, each once. Of several such pairs, the scored one is the later stage, whose test set
    holds the other stages' ids (their test rows were its first ones), else the larger. `by_role` keeps only the
    scored pair, in place; {} (nothing decided) when fewer than two pairs are complete or none stands out."""
    try:
        samples = {p: set(read_table(p, dtype=str).iloc[:, 0].astype(str).str.strip()) for p in by_role["sample"]}
        tests = {p: read_table(p, dtype=str) for p in by_role["test"]}
    except BadInput:
        return {}
    pairs = []  # (sample, test, its ids)
    for s, ids in samples.items():
        for t, f in tests.items():
            share, top = _id_cover(f, ids) if ids and len(f.columns) else (0.0, None)
            values = f[top].astype(str).str.strip() if top is not None else pd.Series([], dtype=str)
            if share == 1.0 and values.is_unique and set(values) == ids:
                pairs.append((s, t, ids))
    if len({s for s, _, _ in pairs}) < 2 or len({t for _, t, _ in pairs}) < 2:
        return {}

    def rank(pair: tuple) -> tuple[bool, int]:
        return all(other[2] <= pair[2] for other in pairs), len(pair[2])

    ranked = sorted(pairs, key=rank, reverse=True)
    if rank(ranked[0]) == rank(ranked[1]):
        return {}
    sample, test, ids = ranked[0]
    by_role["sample"], by_role["test"] = [sample], [test]
    others = ", ".join(f"{t.name} with {s.name} ({len(i)} ids)" for s, t, i in ranked[1:])
    how = "holding the other stages' ids" if rank(ranked[0])[0] else "the larger"
    return {
        "test": f"{test.name}: the later of {len(pairs)} test stages ({how}; its sample {sample.name} lists its "
        f"{len(ids)} ids exactly; earlier: {others})",
        "sample": f"{sample.name}: its ids are exactly those of {test.name}, the later test stage ({others})",
    }


def _wholes(found: list[Path]) -> list[Path]:
    """The tables of a split that are not numbered parts of another (train_1.csv beside train.csv)."""
    stems = {_stem(p).lower() for p in found}
    return [p for p in found if PART.sub("", _stem(p)).lower() not in stems - {_stem(p).lower()}]


def _scored_train(root: Path, by_role: dict[str, list[Path]]) -> dict[str, str]:
    """Of several whole tables named train (train_transaction.csv beside train_identity.csv; two train sets of other
    columns), the one holding the sample's predicted columns, then sharing most of the test's columns (names
    compared up to case and punctuation): its rows are the entities the test table holds, the others hold their
    side inputs or another task's rows; alike in both, the names decide (_pick_split). `by_role` keeps it and its
    numbered parts (in place), and every candidate, best first, with its evidence (by_role["train_ranked"])."""
    depth = min(len(p.relative_to(root).parts) for p in by_role["train"])
    wholes = [p for p in _wholes(by_role["train"]) if len(p.relative_to(root).parts) == depth]
    if len(wholes) < 2 or any(p.is_dir() for p in wholes):
        return {}
    try:
        targets = {spelling(c) for c in read_table(by_role["sample"][0], nrows=5).columns[1:]}
        test_cols = {spelling(c) for c in read_table(by_role["test"][0], nrows=5).columns}
        scored = []
        for p in wholes:
            cols = {spelling(c) for c in read_table(p, nrows=5).columns}
            scored.append(((len(targets & cols), len(test_cols & cols)), p))
    except BadInput:
        return {}
    scored.sort(key=lambda t: t[0], reverse=True)
    by_role["train_ranked"] = [
        (p, f"{held} of the sample's predicted columns, {shared} of the test's columns") for (held, shared), p in scored
    ]
    (held, shared), best = scored[0]
    if scored[1][0] == (held, shared):
        return {}
    stem = PART.sub("", _stem(best)).lower()
    by_role["train"] = [p for p in by_role["train"] if p == best or PART.sub("", _stem(p)).lower() == stem]
    others = ", ".join(f"{p.name} {key[0]} and {key[1]}" for key, p in scored[1:])
    return {"train": f"{best.name}: {held} of the sample's predicted columns and {shared} of the test's ({others})"}


def _pick_split(root: Path, found: list[Path]) -> tuple[Path, list[Path]]:
    """The split's table (shallowest, a whole table before its numbered parts, CSV first), and its parts when
    the split comes only in parts (train_1.csv + train_2.csv, or train/part-*.csv)."""
    stems = {_stem(p).lower() for p in found}
    whole = [p for p in found if PART.sub("", _stem(p)).lower() not in stems - {_stem(p).lower()}]
    best = min(
        whole or found,
        key=lambda p: (len(p.relative_to(root).parts), not p.name.lower().endswith(".csv"), len(p.name), p.name),
    )
    depth = len(best.relative_to(root).parts)
    siblings = [p for p in found if p.parent == best.parent and len(p.relative_to(root).parts) == depth]
    in_folder = depth > 1 and len(siblings) > 1
    numbered = [p for p in siblings if PART.search(_stem(p)) and PART.sub("", _stem(p)) == PART.sub("", _stem(best))]
    parts = siblings if in_folder else numbered if len(numbered) > 1 and best in numbered else []
    return best, sorted(parts)


def _pick_labels(train: Path, found: list[Path], samples: list[Path]) -> tuple[Path, str] | None:
    """The labels table beside a train table: one sharing a key column with it, covering most sample columns."""
    train_cols = set(read_table(train, nrows=5).columns)
    want = set()
    for s in samples[:1]:
        want = set(read_table(s, nrows=5).columns[1:])
    scored = []
    for p in found:
        cols = list(read_table(p, nrows=5).columns)
        if not set(cols) & train_cols or not set(cols) - train_cols:
            continue
        scored.append((len(want & set(cols)), -len(p.name), p))
    if not scored:
        return None
    n, _, best = max(scored, key=lambda t: t[:2])
    return best, f"{best.name}: the targets of {train.name} ({n} of the sample's columns), joined on a shared key"


def _pick_sample(root: Path, found: list[Path], test: Path | None) -> tuple[Path, str]:
    """The sample submission: among several candidates, the one whose ids are the test set's."""
    if len(found) == 1:
        return found[0], ""
    test_ids = _test_keys(root, test)
    scored = []
    for p in found:
        match, n = _id_match(p, test_ids)
        depth = len(p.relative_to(root).parts)
        scored.append(((match, n == len(test_ids) if test_ids else 0, -depth, p.name.lower().endswith(".csv")), p))
    scored.sort(key=lambda t: t[0], reverse=True)
    best = scored[0][1]
    share = {p.name: s[0] for s, p in scored}
    others = ", ".join(f"{name} {v:.0%}" for name, v in share.items() if name != best.name)
    basis = f"{test.name}" if test is not None else "the test files"
    return best, (
        f"{best.name}: {share[best.name]:.0%} of its ids are ids of {basis} (other candidates: {others})"
        if test_ids
        else f"{best.name}: shallowest of {len(found)} candidates ({others}); no test ids to compare"
    )


def _test_keys(root: Path, test: Path | None) -> set[str]:
    """What a sample submission's ids may match: every value of the test table, else the test files' names."""
    if test is not None:
        df = read_table(test, dtype=str)
        return set(pd.unique(df.to_numpy().ravel().astype(str)))
    exts = {e for es in file_extensions().values() for e in es} | {".npy"}  # .npy: a per-sample array
    keys = set()
    for p in walk(root, 4):
        if p.suffix.lower() in exts and any(role_of(Path(f)) == "test" for f in p.relative_to(root).parts[:-1]):
            keys |= {p.name, p.stem}
    return keys


def _id_match(sample: Path, test_keys: set[str]) -> tuple[float, int]:
    """(share of the sample's first-column values found among the test keys, the sample's row count)."""
    try:
        ids = read_table(sample, dtype=str).iloc[:, 0].astype(str).str.strip()
    except BadInput:
        return -1.0, 0
    if not test_keys or len(ids) == 0:
        return 0.0, len(ids)
    return float(ids.isin(test_keys).mean()), len(ids)


ID_NUMBER = re.compile(r"([+-]?)0*(\d+?)(?:\.0*)?")  # 0040, 40.0 and 40 are one id
DECIMAL = re.compile(r"[+-]?\d*\.\d+(?:e[+-]?\d+)?")  # a measurement, not an id of parts
ID_EXTENSION = re.compile(r"\.[a-z][a-z0-9]{1,4}$")  # 40.jpg names the sample 40
ID_SEPARATOR = re.compile(r"[_\-./:|\s]+")  # between the parts of a composite id: <id>_<target>, <image>_<row>_<col>
ID_AFFIX = re.compile(r"([a-z]+)(\d+)|(\d+)([a-z]+)")  # ID40, 40a: a word glued to a number
MAX_RELATED = 300_000  # distinct values looked at on either side: past this, no relation is ruled out


def _id_forms(value: str) -> tuple[set[str], set[str]]:
    """(whole forms, parts) of an id as text, as formatting may change it: case, surrounding space, zero padding
    or a trailing .0 of a number, a file extension; the parts are those of a composite id (its pieces between
    separators, the word and the number of ID40), each in its whole forms."""
    low = value.strip().lower()
    whole = {low}
    if m := ID_NUMBER.fullmatch(low):
        whole.add(m.group(1).replace("+", "") + m.group(2))
    stem = ID_EXTENSION.sub("", low)
    if stem != low:
        whole |= _id_forms(stem)[0]
    if DECIMAL.fullmatch(low):
        return whole, set()
    pieces = [p for p in ID_SEPARATOR.split(stem) if p]
    pieces += [g for p in pieces if (m := ID_AFFIX.fullmatch(p)) for g in m.groups() if g]
    # a lone letter is too common a value (a category) to tell a relation
    pieces = [p for p in pieces if p != stem and not (len(p) == 1 and p.isalpha())]
    return whole, {f for p in pieces for f in _id_forms(p)[0]}


def related_ids(ids: pd.Series, test: pd.DataFrame, first: str | None = None) -> bool | None:
    """Whether any of a sample's ids is related to a value of the test table as ids of one sample are (the same
    text, or a formatting of it: case, zero padding, an extension, an affix, a part of a composite id like
    <id>_<target> or <id>_<position>); None when there are too many distinct values to rule a relation out.
    `first`: the column to look at first (the test's column of the sample's id name). The share _id_match gives
    counts exact matches; this says whether there is any relation at all."""
    ids = pd.Series(pd.unique(ids.dropna().astype(str).str.strip()))
    exact = pd.Index(ids)  # its hash table is built once, for every column
    columns = [first] if first in test.columns else []
    values = []
    for c in columns + [c for c in test.columns if c not in columns]:
        text = _distinct_text(test[c])
        if (exact.get_indexer(text) >= 0).any():
            return True
        values.append(text)
    if len(ids) > MAX_RELATED or sum(len(v) for v in values) > MAX_RELATED:
        return None
    whole: set[str] = set()
    parts: set[str] = set()
    for v in ids:
        w, p = _id_forms(v)
        whole |= w
        parts |= p
    either = whole | parts
    for column in values:
        for v in column:
            w, p = _id_forms(v)
            if w & either or p & whole:
                return True
    return False


def _distinct_text(column: pd.Series) -> pd.Series:
    """A test column's distinct values as ids would be written: text without surrounding space, numbers as whole
    numbers (a fractional value is a measurement, never an id)."""
    values = pd.unique(column.dropna().to_numpy())
    if pd.api.types.is_bool_dtype(column):
        return pd.Series([], dtype=str)
    if pd.api.types.is_float_dtype(column):
        values = values[np.isfinite(values) & (values == np.floor(values)) & (np.abs(values) < 1e18)].astype("int64")
    if pd.api.types.is_numeric_dtype(column):
        return pd.Series(values).astype(str)
    return pd.Series(values).astype(str).str.strip()


def normalise(root: Path) -> list[str]:
    """Make a fetched folder's data readable the one simple way every program reads it: a split that comes in
    parts (train_1.csv + train_2.csv, train/part-*.csv) is joined into one CSV; whole-split arrays become tables;
    image bands kept as number lists and pixels kept one per column become PNGs; per-sample series or array files are summarised into one table;
    class sub-folders beside a label-less train table become a labels table; a sample submission that is not a
    plain CSV (TSV, parquet, gzip) gets a CSV copy, the format a submission has. Writes only new files at the top
    of `root` (never into the user's folders); returns what it did, one line each."""
    root = Path(root)
    _unfinished_started_over(root)
    done = partitions_as_tables(root) + json_as_csv(root) + empty_columns_dropped(root) + split_rows_as_one(root)
    done += class_tables_as_one(root)  # before parts are joined: train_0.csv and train_1.csv may be two classes
    done += parts_as_one(root)
    done += arrays_as_tables(root) + _bands(root) + _pixels(root) + series_as_rows(root) + rows_per_id_as_one(root)
    done += positions_as_rows(root) + wide_series_as_long(root)
    done += long_as_wide(root) + pixel_tables_as_images(root)  # after the wide test table: its keys are unique
    done += label_sets_as_columns(root) + rewrites_as_ranks(root) + image_pairs_as_pixels(root)
    done += signal_as_windows(root)
    summarised = _summarise_series(root)
    if summarised:
        done.append(summarised)
    labels = folder_labels(root)
    if labels is not None:
        frame, key, files = labels
        dest = root / FOLDER_LABELS
        if files:  # the pictures also by their id alone, as the test's are named: the maps find both alike
            linked = _linked_by_id(root, files)
            done.append(f"{linked}/: the train files, named by their class and id, linked by their id alone")
        if not dest.exists():
            _write_csv(frame, dest)
            how = "the names of the train files" if files else "the class sub-folders of the train files"
            done.append(f"{dest.name}: {how}, keyed by the train table's {key!r}")
    sample = find(root).paths.get("sample")
    if sample is not None and not sample.name.lower().endswith(".csv"):
        dest = root / f"{_stem(sample)}.csv"
        if not dest.exists():
            _write_csv(read_table(sample, dtype=str), dest)
            done.append(f"{dest.name}: a CSV copy of the sample submission {sample.name}")
    return done


def parts_as_one(root: Path) -> list[str]:
    """A split that comes in parts of the same columns (train_1.csv + train_2.csv, train/part-*.csv, or a folder of
    one table per class whose rows carry the class) joined into one CSV at the top of root, named by the folder or
    the parts' common stem; what was written, one line each."""
    done = []
    for role, parts in find(root).parts.items():
        frames = [read_table(p, dtype=str) for p in parts]  # as text: ids keep their zeros (00005055)
        if any(list(f.columns) != list(frames[0].columns) for f in frames):
            continue  # not parts of one table
        first = parts[0]
        name = first.parent.name if first.parent != root else PART.sub("", _stem(first)) or role
        dest = root / f"{name}.csv"
        if dest.exists():
            continue
        _write_csv(pd.concat(frames, ignore_index=True), dest)
        done.append(f"{dest.name}: {len(parts)} parts of the {role} table joined ({', '.join(p.name for p in parts)})")
    return done


ENTITY_PROBE_ROWS = 200_000  # rows of each table read to tell a table of one row per sample from one of many
PROBE_CELLS = 4_000_000  # ... and cells: a table of 122 columns is probed on its first 32,786 rows


def split_rows_as_one(root: Path) -> list[str]:
    """Many rows per sample, cut by split: two tables of the same columns, one holding the sample submission's ids
    many times each (the test samples' readings) and one holding none of them (the train samples'), beside a table
    holding each sample id once (the test samples' own table: training_set.csv and test_set.csv of readings beside
    training_set_metadata.csv and test_set_metadata.csv). The two become one table, <common name>_rows.csv, which
    the data graph then links to both splits' samples and summarises per sample; without it each half links to
    one split only and neither is joined, and the split's names may place the readings as the train and test
    tables. Read off the values (a sample of each table's rows), not the names."""
    replaced = {root / original for original in stand_ins(root)}
    found = [p for p in candidates(root) if p not in replaced]
    samples = [p for p in found if file_role(p, root) == "sample"]
    tables = [p for p in found if p not in samples and p.is_file()]
    if len(samples) != 1 or len(tables) < 4:  # both splits' readings and samples' tables
        return []
    try:
        ids = set(read_table(samples[0], dtype=str, nrows=ENTITY_PROBE_ROWS).iloc[:, 0].astype(str).str.strip())
    except BadInput:
        return []
    if not ids:
        return []

    def hold(f: pd.DataFrame) -> tuple[bool, bool, bool]:
        """(holds each sample id once, holds sample ids many times, holds none of them)"""
        once = many = some = False
        for c in f.columns:
            values = f[c].dropna().astype(str).str.strip()
            known = values.isin(ids)
            share = known.mean() if len(values) else 0.0
            once |= values.is_unique and len(ids & set(values)) >= 0.9 * len(ids)
            many |= share >= 0.9 and not values.is_unique
            some |= bool(known.any())
        return once, many, not some

    held, columns = {}, {}
    for p in tables:  # one at a time, a wide table on fewer rows: a probe holds PROBE_CELLS texts at most
        try:
            width = read_table(p, dtype=str, nrows=5).shape[1]
            f = read_table(p, dtype=str, nrows=max(1_000, min(ENTITY_PROBE_ROWS, PROBE_CELLS // max(1, width))))
        except BadInput:
            return []
        held[p], columns[p] = hold(f), list(f.columns)
    if not any(once for once, _, _ in held.values()):
        return []
    for test_rows in (p for p, (_, many, _) in held.items() if many):
        twins = [p for p in tables if p != test_rows and columns[p] == columns[test_rows] and held[p][2]]
        if len(twins) != 1:
            continue
        train_rows = twins[0]
        dest = root / _rows_name(train_rows, test_rows)
        if dest.exists():
            return []
        _record_stand_in(root, [train_rows, test_rows], dest.name)
        tmp, header = dest.with_name(f".{dest.name}.partial"), True
        for part in (train_rows, test_rows):
            for chunk in read_chunks(part, ENTITY_PROBE_ROWS):
                chunk.to_csv(tmp, mode="w" if header else "a", header=header, index=False)
                header = False
        tmp.replace(dest)
        return [
            f"{dest.name}: {train_rows.name} and {test_rows.name} (many rows per sample, of the train and of the "
            "test samples) as one table"
        ]
    return []


def class_tables_as_one(root: Path) -> list[str]:
    """Train rows in one table per class, named by it (agentk.competition.class_tables: train_low.csv beside
    train_high.csv, or train/low.csv): one train table with the class as its target column stands in for them,
    <their shared name>.csv (or <name>_by_class.csv where that is taken)."""
    replaced = {root / original for original in stand_ins(root)}
    found = [p for p in candidates(root) if p not in replaced]
    samples = [p for p in found if file_role(p, root) == "sample"]
    others = [p for p in found if p not in samples]
    if len(samples) > 1 and find(root).paths.get("sample") in samples:  # two stages' samples: the scored one
        samples = [find(root).paths["sample"]]
    if len(samples) != 1 or len(others) < 3:  # two classes' tables and the test table at least
        return []
    try:
        sample = read_table(samples[0], dtype=str)
        heads = {p: read_table(p, dtype=str, nrows=5) for p in others}
        predicted = list(sample.columns[1:])
        came = {root / standing: root / original for original, standing in stand_ins(root).items()}
        stems = {p: (came.get(p, p).parent, _stem(came.get(p, p))) for p in others}  # a JSON's CSV: the JSON's place
        found_group = class_tables.find_group(heads, lambda p: read_table(p, dtype=str), stems, root, sample, predicted)
    except BadInput:
        return []
    if found_group is None:
        return []
    group, frames = found_group
    target = class_tables.target_name(predicted, list(heads[next(iter(group.tables))].columns))
    dest = root / f"{group.name}.csv"
    dest = dest if group.name and not dest.exists() else root / f"{group.name or 'train'}_by_class.csv"
    _stand_in(root, list(group.tables), class_tables.as_one(group, frames, target), dest)
    listed = ", ".join(f"{p.relative_to(root).as_posix()} ({cls})" for p, cls in group.tables.items())
    return [f"{dest.name}: the train rows of one table per class as one table, the class in {target!r}: {listed}"]


ROWS_SUFFIX = "_rows.csv"


def _rows_name(a: Path, b: Path) -> str:
    """<what the two names share, less split words>_rows.csv, a name that places the table in no split."""
    words = [re.split(r"[^0-9a-z]+", _stem(p).lower()) for p in (a, b)]
    common = [w for w in words[0] if w in words[1] and w and role_of(Path(w)) is None]
    name = "_".join(common) + ROWS_SUFFIX if common else "split" + ROWS_SUFFIX
    return name if role_of(Path(name)) is None else "split" + ROWS_SUFFIX


def partitions_as_tables(root: Path) -> list[str]:
    """A partitioned dataset (agentk.competition.partitions: key=value folders, or parts in a folder named as a
    table) gets one CSV standing in for it, the keys of its folder names as columns: <name>.csv beside it, or
    <name>_partitioned.csv when that is taken. The maps then read one plain table."""
    done = []
    recorded = set(stand_ins(root))
    for folder in partitions.datasets(root):
        if folder.relative_to(root).as_posix() in recorded:
            continue
        name = partitions.stem(folder)
        dest = root / f"{name}.csv"
        dest = dest if not dest.exists() else root / f"{name}_partitioned.csv"
        frame = partitions.read_dataset(folder)
        _stand_in(root, [folder], frame, dest)
        keys = [c for c in frame.columns if any(part.startswith(f"{c}=") for part in _folder_names(folder))]
        done.append(
            f"{dest.name}: the parts of {folder.name}/"
            + (f", partitioned by {keys}," if keys else "")
            + " as one table"
        )
    return done


def _folder_names(folder: Path) -> set[str]:
    return {part for p in walk(folder, 16) for part in p.relative_to(folder).parts[:-1]}


def json_as_csv(root: Path) -> list[str]:
    """JSON tables in an orientation pandas' read_json misreads (rows keyed by an id, split, a table nested under a
    key, a key-to-value mapping) get a CSV standing in, which every program reads alike."""
    done = []
    for path in candidates(root):
        dest = root / f"{_stem(path)}.csv"
        if role_of(path) is None and file_role(path, root) in ("train", "test"):  # train/<class>.json: its folder
            dest = root / f"{path.parent.name}{AS_CSV}" / dest.name  # says its role, a folder of CSVs says it alike
        if not path.name.lower().endswith(".json") or dest.exists():
            continue
        try:
            frame, how = read_json_table(path)
        except (ValueError, OSError):
            continue  # not a table: reading it says so where it matters
        nested = frame.map(lambda v: isinstance(v, list | dict)).to_numpy().any()
        # lists in cells (bands, positions) and JSON lines (sequences' records) are read by their own conversions
        if how not in AS_PANDAS_READS and how != "lines" and not nested:
            _stand_in(root, [path], frame, dest)
            done.append(f"{dest.relative_to(root).as_posix()}: {path.name}, a JSON table oriented as {how}, as a CSV")
    return done


MANY_COLUMNS = 1000  # columns from which a table's empty columns are dropped


def empty_columns_dropped(root: Path) -> list[str]:
    """A train, test or labels table of thousands of columns, most of them empty in every row (a trailing run of
    separators), gets a CSV without them standing in: they carry nothing, and each reading of such a table took
    seconds, in every stage and check."""
    done = []
    for role, path in find(root).paths.items():
        if role == "sample" or (dest := root / f"{_stem(path)}_columns.csv").exists():
            continue
        if read_table(path, nrows=1).shape[1] < MANY_COLUMNS:
            continue
        table = read_table(path)
        empty = [c for c in table.columns if table[c].isna().all()]
        if 2 * len(empty) >= table.shape[1]:
            _stand_in(root, [path], table.drop(columns=empty), dest)
            done.append(f"{dest.name}: {path.name} without its {len(empty)} empty columns")
    return done


def series_as_rows(root: Path) -> list[str]:
    """Splits given as series: a table of many rows per sample key in each split (X_train.csv and X_test.csv, rows
    per series_id) beside a table of one row per train sample holding the targets (y_train.csv). Each split becomes
    one row per key, `<split>_per_<key>.csv`: its one-row-per-key tables (the test's: the sample's keys, when it has
    none) joined with its series summarised per key (agentk.competition.series.per_key), standing in for them. What
    was written, one line each."""
    root = Path(root)
    paths = find(root).paths
    if "sample" not in paths:
        return []
    key = str(read_table(paths["sample"], nrows=5).columns[0])
    if f"test_per_{key}.csv" in stand_ins(root).values():  # (stand_ins holds only stand-ins that were written)
        return []  # done: the test's table is written last
    if _start_over(root, f"_per_{key}"):
        paths = find(root).paths
    if "test" not in paths:
        return []
    replaced = stand_ins(root)
    series: dict[str, list[Path]] = {"train": [], "test": []}
    rows: dict[str, list[Path]] = {"train": [], "test": []}
    for p in candidates(root):
        role = file_role(p, root)
        if role not in series or p.relative_to(root).as_posix() in replaced:
            continue
        try:
            head = read_table(p, nrows=SERIES_HEAD)
        except BadInput:  # a table that does not read is the input checks' to report
            continue
        if key in head.columns:
            (series if head[key].duplicated().any() else rows)[role].append(p)
    if len(series["train"]) != 1 or len(series["test"]) != 1 or not rows["train"]:
        return []
    frames = {role: [read_table(p) for p in rows[role]] for role in ("train", "test")}
    frames["test"] = frames["test"] or [read_table(paths["sample"])[[key]]]
    if any(not f[key].is_unique for found in frames.values() for f in found):  # checked before anything is written
        return []
    done = []
    for role in ("train", "test"):  # test last: its table marks the work done
        table = frames[role][0]
        for other in frames[role][1:]:
            table = table.merge(
                other[[key, *(c for c in other.columns if c not in table.columns)]], on=key, how="outer"
            )
        summary = per_key(read_table(series[role][0]), key)
        table = table.merge(summary.astype({key: table[key].dtype}), on=key, how="left")
        dest = root / f"{role}_per_{key}.csv"
        _stand_in(root, series[role] + rows[role], table, dest)
        names = ", ".join(p.name for p in series[role] + rows[role])
        done.append(
            f"{dest.name}: {names} as one row per {key!r}, the series summarised ({summary.shape[1] - 1} features)"
        )
    return done


def rows_per_id_as_one(root: Path) -> list[str]:
    """Many train and test rows per submitted id, no table of one row per id (the items of each shopping trip, the
    sample one row per trip): a test column holds the sample's ids, each many times, and train has that column,
    also repeating. Each split becomes one row per id, `<split>_per_<key>.csv`, its rows aggregated
    (agentk.competition.series.aggregate_per_key: counts, sums, means, the most frequent category, the number of
    distinct values) and train's targets taken per id. Read off the values, not the names. What was written."""
    root = Path(root)
    paths = find(root).paths
    if not {"train", "test", "sample"} <= set(paths) or any(p.is_dir() for p in paths.values()):
        return []
    if any(s.startswith("test_per_") for s in stand_ins(root).values()):
        return []  # done (here or by series_as_rows): the test's table is written last
    try:
        ids = set(read_table(paths["sample"], dtype=str).iloc[:, 0].astype(str).str.strip())
        test = read_table(paths["test"], dtype=str)
    except BadInput:
        return []
    key = next((c for c in test.columns if _holds_ids(test[c], ids) == "many"), None)
    if key is None or any(_holds_ids(test[c], ids) == "once" for c in test.columns):
        return []
    if _start_over(root, f"_per_{key}"):
        paths = find(root).paths
    try:
        train = read_table(paths["train"], dtype=str)
        others = [
            p
            for p in candidates(root)
            if p not in paths.values() and p.relative_to(root).as_posix() not in stand_ins(root) and p.is_file()
        ]
        probes = [read_table(p, dtype=str, nrows=ENTITY_PROBE_ROWS) for p in others]
    except BadInput:
        return []
    if key not in train.columns or train[key].is_unique:
        return []
    if any(_holds_ids(f[c], ids) == "once" for f in probes for c in f.columns):
        return []  # a table of one row per id stands beside: the rows are its readings, joined by the data graph
    frames = dict(zip(("train", "test"), aggregate_per_key(train, test, key)))
    done = []
    for role in ("train", "test"):  # test last: its table marks the work done
        dest = root / f"{role}_per_{key}.csv"
        _stand_in(root, [paths[role]], frames[role], dest)
        done.append(
            f"{dest.name}: {paths[role].name}'s {len(train if role == 'train' else test)} rows as one row per "
            f"{key!r} ({len(frames[role])}), aggregated ({frames[role].shape[1] - 1} columns)"
        )
    return done


def _holds_ids(column: pd.Series, ids: set[str]) -> str | None:
    """Whether a column's values are the sample's ids: "once" each, "many" times (repeated), else None."""
    values = column.dropna().astype(str).str.strip()
    if not len(values) or not ids or values.isin(ids).mean() < 0.9 or len(ids & set(values)) < 0.9 * len(ids):
        return None
    return "once" if values.is_unique else "many"


def long_as_wide(root: Path) -> list[str]:
    """A long sample submission (agentk.competition.long_format) written wide, with the long train or test table
    beside it, or a test table of the sample's keys where nothing else names the test samples; the record of the
    pivot last, as it marks the work done. What was written, one line each."""
    root = Path(root)
    if (root / RECORD).exists():
        return []
    _start_over(root, WIDE)
    paths = find(root).paths
    if "sample" not in paths or "train" not in paths:
        return []
    sample = read_table(paths["sample"], dtype=str)
    train = read_table(paths["train"], dtype=str)
    test = read_table(paths["test"], dtype=str) if "test" in paths else None
    rec = detect(sample, train, test)
    if rec is None:
        return []
    rec["sample"] = paths["sample"].relative_to(root).as_posix()
    long = {"sample": sample, "train": train if rec["train"] == "long" else None}
    long["test"] = test if test is not None and rec["id"] in test.columns else None
    done = []
    for role, frame in long.items():
        if frame is not None:
            dest = root / f"{_stem(paths[role])}{WIDE}.csv"
            wide = to_wide(frame, rec, grid=role != "train")
            _stand_in(root, [paths[role]], wide, dest)
            done.append(f"{dest.name}: the long {paths[role].name} as one row per {rec['key']!r} ({len(wide)} rows)")
    keys = to_wide(sample, rec, keep=False)[rec["key"]]
    if test is None and not keys.isin(_test_keys(root, None)).any():
        _write_csv(pd.DataFrame({rec["key"]: keys}), root / "test.csv")
        done.append(f"test.csv: the {len(keys)} test keys of {paths['sample'].name}, which no other file names")
    (root / RECORD).write_text(json.dumps(rec, indent=1))
    done.append(
        f"{RECORD}: {paths['sample'].name} has one row per {rec['key']!r} and target ({len(rec['targets'])} targets "
        f"after {rec['sep']!r}: {', '.join(rec['targets'][:4])}{', ...' if len(rec['targets']) > 4 else ''}); "
        "submissions are written back in its rows"
    )
    return done


def label_sets_as_columns(root: Path) -> list[str]:
    """A column of label sets ("Bark,Walk", "3 17"; some row holding two or more) in the train table, or in the
    labels table beside it, whose labels are the sample submission's columns (one probability each, scored per
    label), by name or with a prefix or suffix all of them share ("tags_haze"): that table written with one 0/1
    column per sample column in its place, standing in for it. What was written."""
    from agentk.competition.support import class_columns  # support imports this module

    root = Path(root)
    paths = find(root).paths
    if "sample" not in paths:
        return []
    columns = list(read_table(paths["sample"], nrows=5, dtype=str).columns[1:])
    for role in [r for r in ("train", "labels") if r in paths]:
        if len(columns) < 2 or paths[role].name.endswith(f"{LABEL_COLUMNS}.csv"):
            return []
        table = read_table(paths[role], dtype=str)
        if set(columns) & set(table.columns):
            return []
        for c in table.columns:
            values = table[c].fillna("").astype(str)
            if (values.str.strip() == "").any():  # every row holds a set: an empty cell rules the column out, cheaply
                continue  # (a table of 20,000 empty columns spent minutes splitting their cells)
            for sep in SET_SEPARATORS:
                sets = values.map(lambda v, sep=sep: {t.strip() for t in re.split(sep, v) if t.strip()})
                labels = set().union(*sets)
                sizes = sets.map(len)
                # the sample's columns are the labels, or name them with a shared prefix or suffix; sets: some row
                # holds two labels (one label a row is a class, its columns exclusive probabilities)
                named = {v: v for v in labels} if labels <= set(columns) else class_columns(labels, columns) or {}
                if named and len(labels) >= max(2, len(columns) / 2) and sizes.all() and sizes.max() > 1:
                    wide = table.drop(columns=c)
                    of = {column: label for label, column in named.items()}
                    for column in columns:
                        wide[column] = sets.map(lambda s, label=of.get(column): int(label in s))
                    dest = root / f"{_stem(paths[role])}{LABEL_COLUMNS}.csv"
                    _stand_in(root, [paths[role]], wide, dest)
                    return [
                        f"{dest.name}: {paths[role].name}'s label sets in {c!r} as one 0/1 column per label of "
                        f"{paths['sample'].name} ({len(columns)} labels)"
                    ]
    return []


def rewrites_as_ranks(root: Path) -> list[str]:
    """A text target that rewrites an input (agentk.competition.rewrites): the train, test and sample tables written
    with the target as the rank of its rewrite among the source value's candidates and the neighbouring rows' source
    values beside, standing in for them, with each sample row's candidates; the record last, as it marks the work
    done. What was written, one line each."""
    root = Path(root)
    if (root / rewrites.RECORD).exists():
        return []
    _start_over(root, rewrites.RANKED)
    paths = find(root).paths
    if not {"sample", "train", "test"} <= set(paths):
        return []
    head = {role: read_table(paths[role], nrows=rewrites.HEAD, dtype=str) for role in ("sample", "train", "test")}
    layout = sample_columns(head["sample"], head["train"], head["test"])
    if rewrites.detect(head["train"], head["test"], layout.predicted) is None:
        return []  # the heads tell: every table is read whole only for a rewrite
    sample = read_table(paths["sample"], dtype=str)
    train, test = read_table(paths["train"], dtype=str), read_table(paths["test"], dtype=str)
    rec = rewrites.detect(train, test, layout.predicted)
    rows = rewrites.source_rows(sample, layout.id, test) if rec else None
    if rows is None:
        return []
    rec["id"] = layout.id
    cands, stats = rewrites.candidates(train, rec), rewrites.value_stats(train, rec)
    ranked_train = train.assign(**{rec["target"]: rewrites.ranks(train[rec["source"]], train[rec["target"]], cands)})
    ids = sample[layout.id] if layout.id is not None else pd.Series(range(len(sample)))
    table = rewrites.candidate_table(ids, test[rec["source"]].iloc[rows].reset_index(drop=True), cands)
    _write_csv(table, root / rewrites.CANDIDATES)
    done = [
        f"{rewrites.CANDIDATES}: each test row's candidate rewrites of {rec['source']!r} ({table.shape[1] - 1} at most)"
    ]
    context = f"the previous and next rows' {rec['source']!r} and the share of train's rows copying it beside"
    for role, frame, what in (
        ("sample", sample.assign(**{rec["target"]: 0}), f"ranks for {rec['target']!r}"),
        ("test", rewrites.with_context(test, rec["source"], stats), context),
        ("train", rewrites.with_context(ranked_train, rec["source"], stats), f"{rec['target']!r} ranked; {context}"),
    ):  # train last: its table marks the work done
        dest = root / f"{_stem(paths[role])}{rewrites.RANKED}.csv"
        _stand_in(root, [paths[role]], frame, dest)
        done.append(f"{dest.name}: {paths[role].name} with {what}")
    (root / rewrites.RECORD).write_text(json.dumps(rec, indent=1))
    done.append(
        f"{rewrites.RECORD}: {rec['target']!r} rewrites {rec['source']!r} (copies it in "
        f"{(ranked_train[rec['target']] == 0).mean():.1%} of train's rows, rewrites {len(cands)} values); submissions "
        "are written back as text"
    )
    return done


def image_pairs_as_pixels(root: Path) -> list[str]:
    """Input images paired with target images and a sample of one row per test pixel (agentk.competition.image_pairs):
    the pixels written as the train and test tables, train's last as it marks the work done. What was written."""
    root = Path(root)
    paths = find(root).paths
    if "sample" not in paths or "train" in paths or (root / image_pairs.TRAIN).exists():
        return []
    images = [p.relative_to(root).as_posix() for p in walk(root, 4) if p.suffix.lower() in IMAGE.extensions]
    if image_pairs.detect(root, images, read_table(paths["sample"], nrows=image_pairs.HEAD, dtype=str)) is None:
        return []
    sample = read_table(paths["sample"], dtype=str)
    rec = image_pairs.detect(root, images, sample)
    test = image_pairs.test_rows(root, rec, sample[rec["id"]])
    _write_csv(test, root / image_pairs.TEST)
    train = image_pairs.train_rows(root, rec)
    _write_csv(train, root / image_pairs.TRAIN)
    what = f"{len(image_pairs.FEATURES)} features of its neighbourhood"
    return [
        f"{image_pairs.TEST}: the {len(test)} pixels of {paths['sample'].name}, each by {what}",
        f"{image_pairs.TRAIN}: {len(train)} pixels of the {len(rec['pairs'])} train images paired with target images "
        f"(e.g. {rec['pairs'][0][0]} -> {rec['pairs'][0][1]}), each by {what} and its target value",
    ]


def pixel_tables_as_images(root: Path) -> list[str]:
    """Tables of pixels beside the train and test tables, a row per image keyed by their key column (image_id, then
    one column per pixel; in parquet parts, as Kaggle ships big ones): every row a PNG `<name>_images/<key>.png`,
    the name the tables' own less any part number, where the image map finds it by the key; the tables stand aside
    (stand_ins.json), so that their pixels are never joined as features. What was written, one line per name."""
    root = Path(root)
    paths = find(root).paths
    splits = [read_table(paths[r], dtype=str) for r in ("train", "test") if r in paths]
    if not splits:
        return []
    keys: dict[str, set] = {}
    for t in splits:
        for c in t.columns:
            if t[c].notna().all() and t[c].is_unique:
                keys.setdefault(c, set()).update(t[c])
    replaced, groups = stand_ins(root), {}
    for p in candidates(root):
        if p in paths.values() or p.relative_to(root).as_posix() in replaced:
            continue
        try:
            head = read_table(p, nrows=50)
        except BadInput:  # a table that does not read is the input checks' to report
            continue
        key = next((c for c in head.columns if c in keys and set(head[c].astype(str)) <= keys[c]), None)
        if key is not None and pixel_columns(head.drop(columns=key)) is not None:
            groups.setdefault((PART.sub("", _stem(p)), key), []).append(p)
    done = []
    for (name, key), parts in groups.items():
        dest = root / f"{name}_images"
        if not dest.exists():  # written whole, then recorded: a resumed fetch finds one or the other
            tmp = root / f".{dest.name}.partial"
            for p in parts:
                pixels_to_images(read_table(p).astype({key: str}), key, tmp)
            tmp.replace(dest)
        _record_stand_in(root, parts, f"{dest.name}/")
        done.append(
            f"{dest.name}/: the pixel rows of {', '.join(p.name for p in parts)} as one PNG per {key!r}; "
            "the tables set aside"
        )
    return done


def positions_as_rows(root: Path) -> list[str]:
    """Records of sequences whose targets are number lists, one value per position (agentk.competition.positions),
    written one row per position: train's positions its lists cover, test's the sample's rows. What was written."""
    root = Path(root)
    paths = find(root).paths
    if "train" in paths and paths["train"].name.endswith(f"{POSITIONS}.csv"):
        return []  # done: train's table is written last
    if _start_over(root, POSITIONS):
        paths = find(root).paths
    if not {"sample", "train", "test"} <= set(paths):
        return []
    if not all(paths[r].name.lower().endswith((".json", ".jsonl", ".parquet")) for r in ("train", "test")):
        return []  # only these hold lists in a cell
    sample = read_table(paths["sample"], dtype=str)
    if not sample.iloc[:, 0].astype(str).str.match(positions.POSITION_ID).all():
        return []
    train, test = (read_table(paths[r], nested=True) for r in ("train", "test"))
    rec = positions.detect(train, test, sample)
    if rec is None:
        return []
    done = []
    for role, records in (("test", test), ("train", train)):  # train last: its table marks the work done
        rows = positions.as_rows(records, rec, labelled=role == "train")
        if role == "test":
            rows = rows[rows[rec["key"]].isin(set(sample[rec["key"]]))]
        dest = root / f"{_stem(paths[role])}{POSITIONS}.csv"
        _stand_in(root, [paths[role]], rows, dest)
        done.append(
            f"{dest.name}: the {len(records)} records of {paths[role].name} as one row per position ({len(rows)} rows"
            f"; each of {', '.join(rec['sequences'])} by its character there and {positions.WINDOW} each side"
            + (f"; {', '.join(rec['lists'][:4])} by their value there)" if role == "train" else ")")
        )
    return done


def wide_series_as_long(root: Path) -> list[str]:
    """A train table of one row per entity and one column per day, whose test names (entity, day) pairs as composite
    values (agentk.competition.wide_series), written one row per entity and day, the test one row per pair. What
    was written."""
    root = Path(root)
    paths = find(root).paths
    if "train" in paths and paths["train"].name.endswith(f"{wide_series.SERIES}.csv"):
        return []  # done: train's table is written last
    if _start_over(root, wide_series.SERIES):
        paths = find(root).paths
    if not {"sample", "train", "test"} <= set(paths):
        return []
    header = read_table(paths["train"], dtype=str, nrows=5)
    if not wide_series.date_columns(header):
        return []
    train, test, sample = (read_table(paths[r], dtype=str) for r in ("train", "test", "sample"))
    rec = wide_series.detect(train, test, sample)
    if rec is None:
        return []
    done = []
    rows = {"test": wide_series.test_rows(test, train, rec), "train": wide_series.train_rows(train, rec)}
    for role, frame in rows.items():  # train last: its table marks the work done
        dest = root / f"{_stem(paths[role])}{wide_series.SERIES}.csv"
        _stand_in(root, [paths[role]], frame, dest)
        done.append(
            f"{dest.name}: {paths[role].name} as one row per {rec['key']!r} and day ({len(frame)} rows; "
            + (
                f"{len(rec['dates'])} day columns melted into {wide_series.DATE!r} and {rec['target']!r})"
                if role == "train"
                else f"{rec['composite']!r} split on {rec['sep']!r} into {rec['key']!r} and {wide_series.DATE!r})"
            )
        )
    return done


def stand_ins(root: Path) -> dict[str, str]:
    """The tables normalise replaced: {path in the folder: the table standing in for it}. A stand-in not written
    (its conversion was killed after recording it) replaces nothing: the original stands, to be converted again."""
    path = Path(root) / STAND_INS
    record = json.loads(path.read_text()) if path.is_file() else {}
    return {original: standing for original, standing in record.items() if (Path(root) / standing).exists()}


def _start_over(root: Path, suffix: str) -> bool:
    """A conversion whose last write (its record, or train's table) is missing stopped part-way: the stand-ins it
    wrote (named <stem><suffix>.csv) are removed and their originals stand again, so that it starts over under the
    same names rather than taking its own half-written tables for the originals. Whether there were any."""
    record = stand_ins(root)
    undone = {original for original, standing in record.items() if standing.endswith(f"{suffix}.csv")}
    for original in undone:
        (Path(root) / record[original]).unlink(missing_ok=True)
    if undone:
        (Path(root) / STAND_INS).write_text(json.dumps({k: v for k, v in record.items() if k not in undone}, indent=1))
    return bool(undone)


def _unfinished_started_over(root: Path) -> None:
    """Before any conversion reads the folder's roles: each conversion killed part-way starts over, so that none
    reads another's half-written stand-ins (a wide sample beside the long test table it was not yet written for
    makes a pixel table look like the test table). Each conversion's own last write tells it was done."""
    written = set(stand_ins(root).values())
    if not (root / RECORD).exists():
        _start_over(root, WIDE)
    if not (root / rewrites.RECORD).exists():
        _start_over(root, rewrites.RANKED)
    for suffix in (POSITIONS, wide_series.SERIES):
        if len({s for s in written if s.endswith(f"{suffix}.csv")}) == 1:  # test's written, train's (last) not
            _start_over(root, suffix)
    series = {
        tuple(s.removesuffix(".csv").split("_per_", 1)) for s in written if s.startswith(("train_per_", "test_per_"))
    }
    for key in {key for role, key in series} - {key for role, key in series if role == "test"}:
        _start_over(root, f"_per_{key}")


def _stand_in(root: Path, originals: list[Path], frame: pd.DataFrame, dest: Path) -> None:
    """Write `frame` to `dest`, standing in for the `originals` from now on (recorded first: the new table is what
    tells table discovery to look again)."""
    _record_stand_in(root, originals, dest.relative_to(root).as_posix())
    dest.parent.mkdir(exist_ok=True)  # a folder of its own where the originals' folder gives their role
    _write_csv(frame, dest)


def _record_stand_in(root: Path, originals: list[Path], standing: str) -> None:
    """stand_ins.json: each of the originals from now on stands aside for `standing` (a table, or a folder/)."""
    record = {**stand_ins(root), **{p.relative_to(root).as_posix(): standing for p in originals}}
    (Path(root) / STAND_INS).write_text(json.dumps(record, indent=1))


def _write_csv(df: pd.DataFrame, dest: Path) -> None:
    tmp = dest.with_name(f".{dest.name}.partial")
    df.to_csv(tmp, index=False)
    tmp.replace(dest)


@dataclass
class SampleColumns:
    """What the sample submission's columns are: its id (None: it has none, its rows are the test rows in order),
    the columns to predict, and the columns that echo test inputs (copied from the test table, never predicted)."""

    id: str | None
    predicted: list[str]
    echo: list[str]


def sample_columns(sample: pd.DataFrame, train: pd.DataFrame | None, test: pd.DataFrame | None) -> SampleColumns:
    """Read off the tables (heads are enough): a column of the test table that holds values is an input the
    sample repeats; the first column is the id unless it is a target (a train column the test table lacks)."""
    cols = [str(c) for c in sample.columns]
    echo_ok = lambda c: test is not None and c in test.columns and test[c].notna().any()  # noqa: E731
    idless = (
        test is not None and train is not None and cols[0] in train.columns and not echo_ok(cols[0]) and len(cols) > 1
    )
    rest = cols if idless else cols[1:]
    echo = [c for c in rest if echo_ok(c)]
    predicted = [c for c in rest if c not in echo]
    if not predicted:  # nothing left to predict: the columns are what they look like, id then predictions
        return SampleColumns(cols[0], cols[1:], [])
    return SampleColumns(None if idless else cols[0], predicted, echo)


def sample_columns_of(root: Path) -> SampleColumns | None:
    """sample_columns for a competition folder (None without a sample submission)."""
    paths = find(root).paths
    if "sample" not in paths:
        return None
    head = {role: read_table(paths[role], nrows=200) for role in ("train", "test") if role in paths}
    return sample_columns(read_table(paths["sample"], nrows=5, dtype=str), head.get("train"), head.get("test"))


def folder_labels(root: Path) -> tuple[pd.DataFrame, str, dict[str, str]] | None:
    """The train files' labels as a table keyed like the train table, when the train table lacks the column to
    predict (or, where the sample has a column per class, all of them) and the train files sit in class sub-folders
    (train/<label>/<id>.png beside train.csv of other columns) or carry the label beside the train id in their
    names (cat.<id>.png, <id>_cat.png); (table, key column, {id: its file} where the names carry the labels) or
    None. The labels column is named as the sample's one predicted column, else "label" (the analysis matches its
    values to the sample's columns)."""
    paths, layout = find(root).paths, sample_columns_of(root)
    if "train" not in paths or "labels" in paths or layout is None or not layout.predicted:
        return None
    files = modality_files(root)
    if not files or set(layout.predicted) & set(read_table(paths["train"], nrows=5).columns):  # whole table if needed
        return None
    train = read_table(paths["train"], dtype=str)
    target = layout.predicted[0] if len(layout.predicted) == 1 else "label"
    while target in train.columns:
        target += "_"
    keys = [k for k in train.columns if train[k].notna().all() and train[k].astype(str).is_unique]
    for modality, found in files.items():
        src = listing_source(modality, found)
        label = {}
        for f in found if src is not None and src.label == "folder" else ():
            if f.startswith(src.folder + "/"):
                name = f.rsplit("/", 1)[1]
                label[name] = label[name.rsplit(".", 1)[0]] = f.rsplit("/", 2)[1]
        for key in keys:
            values = train[key].astype(str)
            if label and values.isin(label).all():
                return pd.DataFrame({key: values, target: values.map(label)}), key, {}
            named = labels_beside_ids(found, set(values))  # cat.1234.png: the label beside a train id
            classes = {cls for cls, _ in named.values()}
            if values.isin(named).all() and 2 <= len(classes) <= len(values) / 5:
                frame = pd.DataFrame({key: values, target: values.map({v: cls for v, (cls, _) in named.items()})})
                return frame, key, {v: named[v][1] for v in values}
    return None


def _linked_by_id(root: Path, files: dict[str, str]) -> str:
    """<folder>_by_id/<id><ext> at the top of root, a link to each file (workspace-relative, named by its class
    and id); the folder's name."""
    first = PurePosixPath(next(iter(files.values())))
    dest = root / f"{first.parent.name}_by_id"
    partial = root / f".{dest.name}.partial"
    if not dest.exists():
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir()
        for i, f in files.items():
            source = (root.parent / f).resolve()
            (partial / f"{i}{source.suffix}").symlink_to(source)
        partial.replace(dest)
    return dest.name


def signal_as_windows(root: Path) -> list[str]:
    """A train table that is one long signal, and test samples that are segments of such a signal, one file per
    sample id (agentk.competition.series.windows): the train signal cut into windows of the segments' median
    length, each a row of train_windows.csv (its summary, and the targets, the train columns no segment has, at its
    last row), and each segment a row of test_windows.csv, summarised alike; both stand in for the originals. What
    was written, one line."""
    paths = find(root).paths
    if "sample" not in paths or "train" not in paths or WINDOWS["test"] in stand_ins(root).values():
        return []
    sample = read_table(paths["sample"], dtype=str)
    key = str(sample.columns[0])
    head = read_table(paths["train"], nrows=SERIES_HEAD)
    if key in head.columns or (found := segments(root, set(sample[key].astype(str)))) is None:
        return []
    some = [read_table(p) for p in list(found.values())[:: max(1, len(found) // 20)][:20]]
    inputs = [c for c in some[0].columns if c in head.columns and pd.api.types.is_numeric_dtype(some[0][c])]
    targets = [c for c in head.columns if c not in some[0].columns and pd.api.types.is_numeric_dtype(head[c])]
    length = int(np.median([len(f) for f in some]))
    if not inputs or not targets or length < 2:
        return []
    signal = read_table(paths["train"])
    if len(signal) < 2 * length:
        return []
    train = windows(signal, inputs, targets, length, key)
    test = pd.DataFrame([{key: i, **frame_summary(read_table(p)[inputs])} for i, p in found.items()])
    _stand_in(root, [paths["train"]], train, root / WINDOWS["train"])
    _stand_in(root, list(found.values()), test, root / WINDOWS["test"])  # last: it marks the work done
    return [
        f"{WINDOWS['train']}: {paths['train'].name}, one long signal, cut into {len(train)} windows of {length} rows "
        f"(the test segments' length), each summarised ({test.shape[1] - 1} features) with {targets} at its last row; "
        f"{WINDOWS['test']}: the {len(test)} test segments summarised alike"
    ]


def _summarise_series(root: Path) -> str | None:
    """Write the per-sample files' summary table (agentk.competition.series) if there are such files."""
    paths = find(root).paths
    dest = root / SUMMARY
    if "train" not in paths or dest.exists() or not per_sample_folders(root):  # the tables only when files may match
        return None
    if WINDOWS["test"] in stand_ins(root).values():  # the files are a signal's segments, summarised already
        return None
    frames = [read_table(paths[r], dtype=str) for r in ("train", "test", "sample") if r in paths]
    predicted = set(frames[-1].columns[1:]) if "sample" in paths else set()
    # a file per value of a target holds a class's rows (train/<class>.csv), not one sample's series
    keys = {c: pd.concat([f[c] for f in frames if c in f.columns]) for c in frames[0].columns if c not in predicted}
    found = summarise_files(root, keys)
    if found is None:
        return None
    table, key = found
    _write_csv(table, dest)
    return f"{dest.name}: {len(table)} per-sample files summarised into {table.shape[1] - 1} features, keyed by {key!r}"


def arrays_as_tables(root: Path) -> list[str]:
    """Whole-split arrays (X_train.npy, y_train.npy, X_test.npy) written as train.csv and test.csv
    (agentk.competition.series), when the folder has no train table; what was written, one line each."""
    paths, done = find(root).paths, []
    if "sample" not in paths or "train" in paths:
        return done
    arrays = arrays_to_tables(root, read_table(paths["sample"], dtype=str))
    for role, table in sorted(arrays.items(), key=lambda item: item[0] == "train"):  # train last: it marks the end
        dest = root / f"{role}.csv"
        if not dest.exists():
            _write_csv(table, dest)
            done.append(f"{dest.name}: the {role} arrays as a table ({table.shape[1]} columns)")
    return done


def _bands(root: Path) -> list[str]:
    """Tables whose cells hold image bands as number lists: the bands become PNGs, the rest a CSV."""
    done, paths = [], find(root).paths
    sample = read_table(paths["sample"], nrows=5, dtype=str) if "sample" in paths else None
    for role in ("train", "test"):
        path = find(root).paths.get(role)
        if path is None or sample is None or not path.name.lower().endswith((".json", ".jsonl", ".parquet")):
            continue
        dest = root / f"{_stem(path)}.csv"
        if dest.exists():
            continue
        table = read_table(path, nested=True)
        id_col = sample.columns[0] if sample.columns[0] in table.columns else table.columns[0]
        flat = bands_to_images(table, id_col, root / f"{_stem(path)}_images")
        if flat is not None:
            _write_csv(nested_as_text(flat), dest)
            done.append(f"{dest.name}: {path.name} without its image bands, written as {_stem(path)}_images/<id>.png")
    return done


def _pixels(root: Path) -> list[str]:
    """Tables whose columns are an image's pixels (label, pixel0..pixel783): the pixels become PNGs named by the
    row's id, or by its position where the sample's ids are the test rows' positions, the rest a CSV."""
    done, paths = [], find(root).paths
    if "sample" not in paths:
        return done
    sample = read_table(paths["sample"], dtype=str)
    id_col = sample.columns[0]
    ids = to_numeric(sample[id_col], errors="coerce")
    first = int(ids.iloc[0]) if ids.notna().all() and (ids.diff().iloc[1:] == 1).all() else None  # positions from
    for role in ("train", "test"):
        path = paths.get(role)
        if path is None or (dest := root / f"{_stem(path)}{FLAT}.csv").exists():
            continue
        table = read_table(path)
        if pixel_columns(table) is None:
            continue
        if id_col not in table.columns:
            if first not in (0, 1) or (role == "test" and len(table) != len(sample)):
                continue  # no id names the test rows' images
            table.insert(0, id_col, range(first, first + len(table)))
        flat = pixels_to_images(table, id_col, root / f"{_stem(path)}_images")
        _stand_in(root, [path], flat, dest)
        done.append(f"{dest.name}: {path.name} without its pixel columns, written as {_stem(path)}_images/<id>.png")
    return done
