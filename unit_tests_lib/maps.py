"""Unit tests of input and target maps (paper A.1.3): ids, rows, columns, leaks."""

from __future__ import annotations

from pathlib import Path

from agentk.competition.dataview import find_tables
from agentk.competition.spelling import respelled
from agentk.workspace import Workspace
from unit_tests_lib.common import fail, prediction_columns, raw_table, read_map, sample_submission


def check_id_map(ws: Path, name: str) -> None:
    df = read_map(ws, name)
    if len(df) == 0:
        fail(f"{name} has no rows")
    if df["id"].isna().any():
        fail(f"{name}: {int(df['id'].isna().sum())} ids are missing; every row needs an id")
    dup = df["id"][df["id"].duplicated()]
    if len(dup):
        fail(f"{name}: ids must be unique, {len(dup)} repeat (e.g. {dup.iloc[0]!r}); use the table's row id column")
    if df.shape[1] < 2:
        fail(f"{name} has only the id column: add the columns it maps to")


def check_rows_match_source(ws: Path, name: str, role: str) -> None:
    """Test maps keep every test row (one per sample-submission row); train maps may drop unlabelled rows only."""
    df = read_map(ws, name)
    if role == "test":
        n = len(sample_submission(ws))
        if len(df) != n:
            fail(f"{name} has {len(df)} rows but the sample submission has {n}: keep one row per test sample")
        return
    if role not in find_tables(Workspace(ws).raw):
        return  # the samples are a folder's files: the map dataset compares ids with the target map
    n = len(raw_table(ws, role))
    if len(df) > n or len(df) < 0.5 * n:
        fail(
            f"{name} has {len(df)} rows but the raw {role} table has {n}: keep one row per sample "
            "(drop only rows without a target)"
        )


def check_no_train_only_columns(ws: Path, name: str) -> None:
    """A column that test lacks is a target or a leak: inputs must exist at prediction time."""
    df = read_map(ws, name)
    tables = find_tables(Workspace(ws).raw)
    if "train" not in tables or "test" not in tables:
        return  # no tables to compare: inputs come from files and the sample's ids
    train, test = raw_table(ws, "train"), raw_table(ws, "test")
    test = test.rename(columns=respelled(train, test, set(sample_submission(ws).columns)))  # train's names
    sub_cols = set(prediction_columns(ws))
    train_only = set(train.columns) - set(test.columns)
    bad = [c for c in df.columns[1:] if c in train_only or c in sub_cols]
    if bad:
        fail(f"{name} contains {bad}, which the test table does not have (targets or leaks): drop them from the inputs")


def check_target_map(ws: Path) -> None:
    name = Workspace(ws).target_map.name
    check_id_map(ws, name)
    df = read_map(ws, name)
    targets = df.drop(columns="id")
    missing = targets.columns[targets.isna().any()].tolist()
    if missing:
        fail(f"{name}: targets {missing} have missing values; drop unlabelled rows from both train maps")
    covered = set(targets.columns) | {str(v) for c in targets.columns for v in targets[c].unique()}
    predicted = prediction_columns(ws)
    uncovered = [c for c in predicted if c not in covered]
    labels = [
        c
        for c in targets.columns
        if 1 < targets[c].nunique() and {str(v) for v in targets[c].unique()} <= set(predicted)
    ]
    if uncovered and not labels:  # a label column's classes are some columns: the others are classes train lacks
        fail(
            f"{name} has columns {list(targets.columns)[:10]}, which do not give the submission columns "
            f"{uncovered[:5]}: map one column per target (or a label column whose classes are the submission columns)"
        )
