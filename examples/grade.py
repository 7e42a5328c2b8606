"""Score a submission for one of the bundled example competitions.

    uv run python examples/grade.py <name> <submission.csv>

Prints the score; an invalid submission prints a one-line reason to stderr and exits with status 2.
Importable: grade(name, submission_path) -> float, raising ValueError on an invalid submission.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from tools.metrics import METRICS

HERE = Path(__file__).resolve().parent


def _read_csv(path: Path, id_column: str) -> pd.DataFrame:
    try:
        return pd.read_csv(path, dtype={id_column: str})
    except (OSError, ValueError) as e:  # pandas parser errors are ValueErrors
        raise ValueError(f"cannot read {Path(path).name}: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None


def validate(sub: pd.DataFrame, sample: pd.DataFrame, numeric: bool) -> pd.DataFrame:
    """Check `sub` against the sample submission (id column first); return it with numeric target columns."""
    if list(sub.columns) != list(sample.columns):
        raise ValueError(f"columns must be {list(sample.columns)}, got {list(sub.columns)}")
    id_column, targets = sample.columns[0], list(sample.columns[1:])
    ids, expected = sub[id_column], set(sample[id_column])
    if ids.duplicated().any():
        raise ValueError(f"duplicate {id_column} {ids[ids.duplicated()].iloc[0]!r}")
    if missing := sorted(expected - set(ids)):
        raise ValueError(f"{len(missing)} {id_column} values missing, e.g. {missing[0]!r}")
    if unknown := sorted(set(ids) - expected, key=str):
        raise ValueError(f"{len(unknown)} unknown {id_column} values, e.g. {unknown[0]!r}")
    for c in sub.columns:
        if sub[c].isna().any():
            raise ValueError(f"missing value in column {c!r} for {id_column} {ids[sub[c].isna()].iloc[0]!r}")
    if numeric:
        values = sub[targets].apply(pd.to_numeric, errors="coerce").astype(float)
        if bad := [c for c in targets if not np.isfinite(values[c]).all()]:
            raise ValueError(f"column {bad[0]!r} must hold finite numbers")
        sub = sub.assign(**values)
    return sub


def grade(name: str, submission_path: str | Path, root: str | Path = HERE) -> float:
    public, private = Path(root) / name, Path(root) / "_private" / name
    if not (private / "meta.json").is_file():
        raise ValueError(f"unknown competition {name!r}")
    meta = json.loads((private / "meta.json").read_text())
    metric, id_column = METRICS[meta["metric"]], meta["id_column"]
    sample = _read_csv(public / "sample_submission.csv", id_column)
    truth = _read_csv(private / "answers.csv", id_column).set_index(id_column)
    sub = validate(_read_csv(submission_path, id_column), sample, numeric=metric.prediction != "label")
    pred = sub.set_index(id_column).loc[truth.index, truth.columns]
    if metric.prediction == "label":
        y_true, y_pred = truth.to_numpy(str), pred.to_numpy(str)
    else:
        y_true, y_pred = truth.to_numpy(float), pred.to_numpy(float)
    if meta["task_type"] == "MultiCls" and y_pred.shape[1] > 1:  # one-hot answers -> codes in the column order
        y_true = y_true.argmax(axis=1)
    elif not metric.multi_target:
        y_true, y_pred = y_true[:, 0], y_pred[:, 0]
    return float(metric.fn(y_true, y_pred))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Score a submission for an example competition.")
    parser.add_argument("name", help="competition name, e.g. breast-cancer")
    parser.add_argument("submission", type=Path, help="path to the submission CSV")
    args = parser.parse_args(argv)
    try:
        print(grade(args.name, args.submission))
    except ValueError as e:
        print(f"invalid submission: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
