"""Train rows shipped as one table per class, the class in the table's name: train_low.csv beside train_mid.csv and
train_high.csv, or train/low.csv and train/high.csv (Fake.csv beside True.csv). No table holds the column to
predict, so without this the train table is one class's rows, or the parts of one table without their labels.

Read off the values, with the names only telling the tables' words apart: a group is two or more tables of one
folder with the test table's columns, named alike (their names less one word at the end or the start, or all the
tables of a folder); none holds a column the sample submission predicts, nor any of its ids; no other table holds
their ids but not the test's (a labels table); and their words are the sample's classes (its columns, one per
class, by name or with a shared prefix or suffix) or hold the values the sample is filled with (or ranks); a sample
of one placeholder (0) throughout says nothing of classes named in words (train_low), not numbers.
normalise then writes them as one train table with the class as its target column (`as_one`), standing in for
them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from agentk.competition.class_names import class_columns
from agentk.competition.column_kinds import placeholder
from agentk.competition.files import spelling

SEPARATORS = re.compile(r"[_\-. ]+")
MIN_COVER = 0.9  # share of the sample's ids a test table holds; of a group's ids a labels table holds


@dataclass
class Group:
    tables: dict[Path, str]  # table -> its class
    name: str  # what their names share: the stand-in's name


def named_alike(stems: dict[Path, tuple[Path, str]], root: Path) -> list[Group]:
    """Groups of tables (`stems`: table -> the folder and name, less the extension, it came with) that differ by
    one word of their names: at the end (train_low, train_high), at the start (low_train, high_train), or the whole
    name for all the tables of a folder (train/low.csv, train/high.csv)."""
    groups = []
    folders: dict[Path, list[Path]] = {}
    for p, (folder, _) in stems.items():
        folders.setdefault(folder, []).append(p)
    for folder, paths in folders.items():
        if folder != root and len(paths) >= 2:
            groups.append(Group({p: stems[p][1] for p in paths}, folder.name))
        for side in (-1, 0):  # the class word at the end, then at the start
            by_rest: dict[str, dict[Path, str]] = {}
            for p in paths:
                words = [w for w in SEPARATORS.split(stems[p][1]) if w]
                if len(words) >= 2:
                    rest = "_".join(words[:-1] if side == -1 else words[1:])
                    by_rest.setdefault(rest, {})[p] = words[side]
            groups += [Group(tables, rest) for rest, tables in by_rest.items() if len(tables) >= 2]
    return [g for g in groups if len(set(g.tables.values())) == len(g.tables)]


def classes_fit(words: list[str], sample: pd.DataFrame, predicted: list[str]) -> bool:
    """The tables' words are the sample's classes: each ends one of its columns (one per class), or, for one
    column to predict, the sample's values (or the classes it ranks in a cell) are among them (none: the sample's
    cells are empty)."""
    if len(predicted) > 1:
        return set(words) <= set(predicted) or class_columns(set(words), predicted) is not None
    if not predicted:
        return False
    values = {v for cell in sample[predicted[0]].dropna().astype(str) for v in cell.split()}  # ranked: "b a c"
    # a sample of empty cells says nothing of its classes, nor does one placeholder value (0) of classes named in
    # words (train_low): find_group's checks decide (a test table of the same columns, so that no table holds a
    # target, and no labels table of their rows). Numbered tables (train_1, train_2) may be the parts of one table:
    # only the sample's values tell them apart
    if values <= set(words):
        return True
    return placeholder(sample[predicted[0]]) and not any(w.isdigit() for w in words)


def target_name(predicted: list[str], columns: list[str]) -> str:
    """The class column's name: the sample's one predicted column, else what its columns (one per class) begin
    with, else "label"; never one of the tables' columns."""
    if len(predicted) == 1:
        name = predicted[0]
    else:
        prefix = predicted[0]
        for c in predicted[1:]:
            while not c.startswith(prefix):
                prefix = prefix[:-1]
        name = SEPARATORS.sub("_", prefix).strip("_") or "label"
    while name in columns:
        name += "_"
    return name


def find_group(
    heads: dict[Path, pd.DataFrame],
    read,
    stems: dict[Path, tuple[Path, str]],
    root: Path,
    sample: pd.DataFrame,
    predicted: list[str],
) -> tuple[Group, dict[Path, pd.DataFrame]] | None:
    """The group of per-class train tables among the candidate tables (`heads`: each one's first rows; `read`:
    a table whole, as text), when the values say so (see the module's docstring), and the tables read whole. Only
    the heads are read unless the names and columns make a group."""
    if any(set(predicted) & set(f.columns) for f in heads.values()):
        return None  # a table holds the targets
    groups = [
        g
        for g in named_alike(stems, root)
        if len({tuple(sorted(heads[p].columns)) for p in g.tables}) == 1
        and classes_fit(list(g.tables.values()), sample, predicted)
    ]
    if not groups:
        return None
    tables = {p: read(p) for p in heads}
    ids = set(sample.iloc[:, 0].astype(str).str.strip())

    def holds(f: pd.DataFrame, values: set[str]) -> float:
        return max((len(values & set(f[c].astype(str).str.strip())) / max(len(values), 1) for c in f), default=0.0)

    tests = [p for p, f in tables.items() if holds(f, ids) >= MIN_COVER]
    if not tests:
        return None
    for group in groups:
        frames = [tables[p] for p in group.tables]
        spelled = {spelling(c): c for c in frames[0].columns}  # the test may spell a column otherwise (X 1, x1)
        test = next((t for t in tests if {spelling(c) for c in tables[t].columns} == set(spelled)), None)
        if test is None or set(tests) & set(group.tables):
            continue  # no test table (of the sample's ids) has their columns
        key = max(tables[test].columns, key=lambda c: len(ids & set(tables[test][c].astype(str).str.strip())))
        key = spelled[spelling(key)]
        rows = pd.concat(frames, ignore_index=True)
        own = set(rows[key].astype(str).str.strip())
        if rows[key].isna().any() or not rows[key].astype(str).is_unique or own & ids:
            continue  # the test's key column holds each of their rows once, and none of the sample's ids
        labelled = [
            p
            for p, f in tables.items()
            if p not in group.tables and holds(f, own) >= MIN_COVER and holds(f, ids) < 1 - MIN_COVER
        ]
        if not labelled:
            return group, tables
    return None


def as_one(group: Group, tables: dict[Path, pd.DataFrame], target: str) -> pd.DataFrame:
    """The group's rows as one table, each with its table's class under `target`."""
    return pd.concat([tables[p].assign(**{target: cls}) for p, cls in group.tables.items()], ignore_index=True)
