"""Unit test of a submission formatter: inverse-transformed training targets must come out in the exact
format of the sample submission (columns, id set, dtypes, no gaps)."""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from unit_tests_lib.common import fail, load_module, sample_submission, test_ids, train_targets, type_family


def compare_with_sample(ws: Path, sub: pd.DataFrame, who: str) -> None:
    """Round-trip through CSV, as Kaggle reads it, and compare with the sample submission."""
    sample = pd.read_csv(_sample_path(ws))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "submission.csv"
        sub.to_csv(path, index=False)
        got = pd.read_csv(path)
    if list(got.columns) != list(sample.columns):
        fail(f"{who}: columns {list(got.columns)[:8]} differ from the sample submission's {list(sample.columns)[:8]}")
    id_col = sample.columns[0]
    ids, want = set(got[id_col].astype(str)), set(sample[id_col].astype(str))
    if ids != want or len(got) != len(sample):
        fail(f"{who}: {len(got)} rows, {len(want - ids)} sample ids missing, {len(ids - want)} unknown "
             f"(e.g. {sorted(want - ids)[:2] or sorted(ids - want)[:2]}): one row per sample submission id")
    gaps = got.columns[got.isna().any()].tolist()
    if gaps:
        fail(f"{who}: missing values in {gaps[:5]}: every cell must be filled")
    for c in sample.columns:
        if type_family(got[c]) != type_family(sample[c]) and type_family(sample[c]) != "empty":
            fail(f"{who}: column {c!r} is {got[c].dtype} but the sample's is {sample[c].dtype}; "
                 f"e.g. {got[c].iloc[0]!r} vs {sample[c].iloc[0]!r}")


def _sample_path(ws: Path) -> Path:
    from agentk.competition.dataview import find_tables
    return find_tables(ws / "raw")["sample"]


def check_submission_format(ws: Path, module: str) -> None:
    fmt = load_module(ws, module)
    if not hasattr(fmt, "format_submission"):
        fail(f"{module}.py must define format_submission(test_ids, predictions)")
    transform = load_module(ws, "code_transform_tab_target_train")
    ids = test_ids(ws)
    y = train_targets(ws)
    rows = np.resize(np.arange(len(y)), len(ids))  # training targets, as many as there are test ids
    preds = transform.inverse_transform(transform.transform(y.iloc[rows].reset_index(drop=True)))
    sub = fmt.format_submission(ids, preds)
    if not isinstance(sub, pd.DataFrame):
        fail(f"format_submission must return a DataFrame, got {type(sub).__name__}")
    compare_with_sample(ws, sub, f"{module}.format_submission")
    first = sample_submission(ws).columns[1]
    by_id = dict(zip(sub.iloc[:, 0].astype(str), sub[first]))
    wrong = [i for i, v in zip(ids.astype(str), preds[first]) if not _same(by_id.get(i), v)]
    if wrong:
        fail(f"{module}.format_submission puts predictions on the wrong ids ({len(wrong)} rows, e.g. id {wrong[0]!r}): "
             "row i of predictions belongs to test_ids[i]")


def _same(a, b) -> bool:
    try:
        return bool(np.isclose(float(a), float(b)))
    except (TypeError, ValueError):
        return str(a) == str(b)
