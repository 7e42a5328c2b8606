"""Unit test of a submission formatter: inverse-transformed training targets must come out in the exact
format of the sample submission (columns, id set, dtypes, no gaps)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from agentk.competition.tables import sample_columns_of
from agentk.core.isolated import call_isolated, type_name
from agentk.parsing import to_numeric
from agentk.workspace import TARGET_TRANSFORM, Workspace, code_file, code_module
from tools.submission import SubmissionMismatch, compare_with_sample
from unit_tests_lib.common import fail, failing_on, load, test_ids, train_targets


def check_submission_format(ws: Path, stage: str) -> None:
    """`stage`: which formatter (the primary or the alternative)."""
    module = code_module(stage)
    ids = test_ids(ws)
    y = train_targets(ws)
    rows = np.resize(np.arange(len(y)), len(ids))  # training targets, as many as there are test ids
    child = call_isolated(_formatted, ws, stage=stage, ids=ids, y=y.iloc[rows].reset_index(drop=True))
    if not child["defined"]:
        fail(f"{code_file(stage)} must define format_submission(test_ids, predictions)")
    sub = child["submission"]
    if not isinstance(sub, pd.DataFrame):
        fail(f"format_submission must return a DataFrame, got {type_name(sub)}")
    preds = child["predictions"]
    with failing_on(SubmissionMismatch):
        compare_with_sample(ws, sub, f"{module}.format_submission")
    layout = sample_columns_of(Workspace(ws).raw)
    first = layout.predicted[0]
    keys = sub[layout.id].astype(str) if layout.id else ids.astype(str)  # no id column: rows in test order
    got = pd.Series(sub[first].to_numpy(), index=keys.to_numpy()).reindex(ids.astype(str).to_numpy())
    wrong = ~_same(got.to_numpy(), np.asarray(preds[first]))
    if wrong.any():
        fail(
            f"{module}.format_submission puts predictions on the wrong ids ({int(wrong.sum())} rows, e.g. id "
            f"{ids.astype(str).iloc[int(wrong.argmax())]!r}): row i of predictions belongs to test_ids[i]"
        )


def _formatted(ws: Path, out: dict, stage: str, ids: pd.Series, y: pd.DataFrame) -> None:
    """In a child (call_isolated): the targets' round trip through the transform, formatted by the stage's formatter."""
    fmt = load(ws, stage)
    out["defined"] = hasattr(fmt, "format_submission")
    if not out["defined"]:
        return
    transform = load(ws, TARGET_TRANSFORM)
    preds = transform.inverse_transform(transform.transform(y))
    out["submission"] = fmt.format_submission(ids, preds)
    out["predictions"] = preds  # after the call, as the formatter left them


def _same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per row: equal as numbers where both read as numbers, else as text."""
    x, y = to_numeric(pd.Series(a), errors="coerce"), to_numeric(pd.Series(b), errors="coerce")
    numbers = x.notna() & y.notna()
    close = np.isclose(x.fillna(0).to_numpy(float), y.fillna(0).to_numpy(float))
    text = pd.Series(a).astype(str).to_numpy() == pd.Series(b).astype(str).to_numpy()
    return np.where(numbers.to_numpy(), close, text)
