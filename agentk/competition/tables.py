"""Which table is which: the train, test and sample-submission tables of a competition folder, a separate
train-labels table, and why each was chosen when there was a choice.

Kaggle names them freely (train.csv, en_train.csv, training_set.csv, train_v2.csv, gender_submission.csv,
sampleSubmission.csv, <prefix>_sample_submission_2.csv, train_labels.csv, trainLabels.csv...). The name says
the role; a folder named for a split gives its few tables that role (train/part-0.csv). When several files could
be the sample submission, the one whose ids are the test set's wins. Discovery reads tables, so its answer is
cached per folder state.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from agentk.competition import partitions, rewrites, written
from agentk.competition.class_names import shared_name
from agentk.competition.files import TABLE_EXT, is_table, role_of, spelling, split_folders, walk
from agentk.competition.long_format import RECORD
from agentk.competition.readers import read_table
from agentk.competition.series import segments
from agentk.core.errors import BadInput
from agentk.modalities import file_extensions

LABELS = re.compile(r"label|target|solution|truth|answer", re.I)  # a table of targets, beside the inputs
MAX_PARTS = 20  # a split folder with more tables than this holds one table per sample, not parts of one
DEPTH = 2  # folders below the competition folder that are searched for tables
PART = re.compile(r"[_\-. ]?(part|chunk)?[_\-. ]?\d+$", re.I)  # train_1, train-part-2: numbered parts


@dataclass
class Tables:
    paths: dict[str, Path]  # role (train, test, sample, labels) -> table
    why: dict[str, str] = field(default_factory=dict)  # role -> why this file, where there was a choice
    parts: dict[str, list[Path]] = field(default_factory=dict)  # role -> the files that are parts of one table
    ranked: dict[str, list[tuple[Path, str]]] = field(default_factory=dict)  # role -> its candidates and evidence


def stem(path: Path) -> str:
    """The name without its table extension (train.csv.gz -> train)."""
    ext = next((e for e in sorted(TABLE_EXT, key=len, reverse=True) if path.name.lower().endswith(e)), None)
    return path.name[: -len(ext)] if ext else path.stem


def file_role(path: Path, root: Path) -> str | None:
    """train / test / sample / labels of one table, from its name, else from the split folder holding it. A table
    normalise wrote in place of others has their role, whatever its own name adds (a train table's label sets as
    columns, train_set_label_columns.csv, is no labels table)."""
    name = Path(path).relative_to(root).as_posix()
    originals = [root / o for o, standing in written.stand_ins(root).items() if standing == name]
    roles = {_named_role(o, root) for o in originals} - {None}
    if len(roles) == 1:
        return roles.pop()
    return _named_role(path, root)


def _named_role(path: Path, root: Path) -> str | None:
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
    records = {root / written.STAND_INS, root / RECORD, root / rewrites.RECORD}
    folders = partitions.datasets(root)
    tables = [
        p for p in walk(root, DEPTH) if is_table(p) and p not in records and not any(f in p.parents for f in folders)
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


def to_convert(root: Path, suffix: str) -> dict[str, Path] | None:
    """The roles' tables for a conversion that writes `<stem><suffix>.csv` stand-ins of the test and then the train
    table: None when train's is written (the conversion is done) or the sample, train or test table is missing. A
    conversion killed part-way starts over first (agentk.competition.written.start_over)."""
    paths = find(root).paths
    if "train" in paths and paths["train"].name.endswith(f"{suffix}.csv"):
        return None
    if written.start_over(root, suffix):
        paths = find(root).paths
    return paths if {"sample", "train", "test"} <= set(paths) else None


@lru_cache(maxsize=32)
def _find(root: Path, signature: tuple) -> Tables:
    by_role: dict[str, list[Path]] = {}
    found = candidates(root)
    replaced = {root / original for original in written.stand_ins(root)}
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
        found = by_role["labels"]
        if "train" not in out.paths:  # image competitions often keep the training labels in train_labels.csv
            out.paths["train"], found = _labelled_train(found, out.paths.get("test"))
        labels = _pick_labels(out.paths["train"], found, by_role.get("sample", [])) if found else None
        if labels is not None:
            out.paths["labels"], out.why["labels"] = labels
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
    # no test table: test samples that are files named by the sample's ids (segments of a signal) show its columns
    files = None if test is not None or not need_train else segments(root, set(sample.iloc[:, 0].astype(str)))
    if need_train and (test is not None or files):
        shown = test if test is not None else next(iter(files.values()))
        test_cols = {spelling(c) for c in read_table(shown, nrows=5).columns}  # test may spell a column otherwise
        scored = []
        for p, f in frames.items():
            shared = len(test_cols & {spelling(c) for c in f.columns})
            has_targets = bool(targets & set(f.columns))
            if p != test and shared >= max(1, len(test_cols) / 2) and (has_targets or test is not None):
                scored.append(((has_targets, shared, len(f)), p))
        if scored:
            (has_targets, shared, _), best = max(scored, key=lambda t: t[0])
            by_role["train"] = [best]  # named like labels ("labelled_cases.csv") but holding the inputs: train
            by_role["labels"] = [p for p in by_role.get("labels", []) if p != best]
            why["train"] = (
                f"{best.name}: {shared} of the "
                + ("test files' columns" if test is None else "test's columns")
                + (" and the sample's targets" if has_targets else ", more rows than any other such table")
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
    share, _ = _id_match(by_role["sample"][0], test_keys(root, None))
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
    stems = {stem(p).lower() for p in found}
    return [p for p in found if PART.sub("", stem(p)).lower() not in stems - {stem(p).lower()}]


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
        predicted = [str(c) for c in read_table(by_role["sample"][0], nrows=5).columns[1:]]
        # the predicted columns' names, and the name a column per class shares (outcome_low, outcome_mid: outcome)
        targets = {spelling(c) for c in [*predicted, shared_name(predicted)] if c}
        test_cols = {spelling(c) for c in read_table(by_role["test"][0], nrows=5).columns}
        heads = {p: read_table(p, nrows=5, dtype=str) for p in wholes}
    except BadInput:
        return {}
    scored = []
    for p, head in heads.items():
        cols = {spelling(c) for c in head.columns}
        scored.append(((len(targets & cols), len(test_cols & cols)), p))
    scored.sort(key=lambda t: t[0], reverse=True)
    if scored[0][0] == scored[1][0]:  # alike by columns: the one whose rows the competition's files are named by
        named = _file_named(root)
        naming = lambda head: sum(isinstance(v, str) and len(v) > 1 and v in named for v in head.to_numpy().ravel())  # noqa: E731
        scored = [((*key, naming(heads[p])), p) for key, p in scored]
        scored.sort(key=lambda t: t[0], reverse=True)
    by_role["train_ranked"] = [
        (
            p,
            f"{key[0]} of the sample's predicted columns, {key[1]} of the test's columns"
            + (f", {key[2]} of its first rows' values naming files" if len(key) > 2 else ""),
        )
        for key, p in scored
    ]
    key, best = scored[0]
    held, shared = key[:2]
    if scored[1][0] == key:
        return {}
    name = PART.sub("", stem(best)).lower()
    by_role["train"] = [p for p in by_role["train"] if p == best or PART.sub("", stem(p)).lower() == name]
    others = ", ".join(f"{p.name} {key[0]} and {key[1]}" for key, p in scored[1:])
    return {"train": f"{best.name}: {held} of the sample's predicted columns and {shared} of the test's ({others})"}


def _file_named(root: Path) -> set[str]:
    """The names of the competition's files that are no tables, less their extensions, and each of their leading
    parts (ID_7_front: ID, ID_7, ID_7_front): what a row's id names when its pictures or readings are files."""
    names = set()
    for p in walk(root):
        if not is_table(p):
            parts = re.split(r"(?<=.)(?=[_.-])", p.stem)
            names.update("".join(parts[:k]) for k in range(1, len(parts) + 1))
    return names


def _pick_split(root: Path, found: list[Path]) -> tuple[Path, list[Path]]:
    """The split's table (shallowest, a whole table before its numbered parts, CSV first), and its parts when
    the split comes only in parts (train_1.csv + train_2.csv, or train/part-*.csv)."""
    stems = {stem(p).lower() for p in found}
    whole = [p for p in found if PART.sub("", stem(p)).lower() not in stems - {stem(p).lower()}]
    best = min(
        whole or found,
        key=lambda p: (len(p.relative_to(root).parts), not p.name.lower().endswith(".csv"), len(p.name), p.name),
    )
    depth = len(best.relative_to(root).parts)
    siblings = [p for p in found if p.parent == best.parent and len(p.relative_to(root).parts) == depth]
    in_folder = depth > 1 and len(siblings) > 1
    numbered = [p for p in siblings if PART.search(stem(p)) and PART.sub("", stem(p)) == PART.sub("", stem(best))]
    parts = siblings if in_folder else numbered if len(numbered) > 1 and best in numbered else []
    return best, sorted(parts)


def _labelled_train(found: list[Path], test: Path | None) -> tuple[Path, list[Path]]:
    """Of tables named like labels beside train files (observations_labelled.csv, train_labels.csv), the train table:
    the one sharing the most columns with the test table (the inputs), the first where none is told apart; and the
    others, which may hold its targets (the labels that class sub-folders give, written beside it)."""
    best = found[0]
    if test is not None and len(found) > 1:
        test_cols = {spelling(c) for c in read_table(test, nrows=5).columns}
        shared = {p: len(test_cols & {spelling(c) for c in read_table(p, nrows=5).columns}) for p in found}
        best = max(found, key=lambda p: shared[p])  # max keeps the first of equals
    return best, [p for p in found if p != best]


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
    test_ids = test_keys(root, test)
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


def test_keys(root: Path, test: Path | None) -> set[str]:
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
