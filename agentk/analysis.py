"""What the expert policy reads off a competition before it writes any code.

Deterministic inspection of raw/ and task/: which files, which id column, which targets and how they
are submitted (labels, probabilities, per-class probability columns, values), which metric the
evaluation text names, and the task type. Each stage's expert writes its code from this.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from agentk.dataview import find_tables, read_table
from tools.metrics import METRICS, Metric, find_metric

BOOL_VALUES = {"true", "false"}
# single-target metric -> its column-wise form, for submissions with several target columns
COLUMNWISE = {"roc_auc": "mean_columnwise_auc", "log_loss": "mean_columnwise_log_loss", "rmse": "mcrmse",
              "rmsle": "mean_columnwise_rmsle"}


class CannotAnalyse(Exception):
    """The expert cannot tell; the stage's code says why and the unit tests record it."""


@dataclass
class Target:
    column: str                 # column of the target map (the submission's name when it has one)
    kind: str                   # binary | multiclass | regression
    submit: str                 # label | proba | proba_columns | value
    columns: list[str]          # submission columns this target fills
    classes: list = field(default_factory=list)  # sorted classes (classification)
    positive: object = None     # binary: the class submitted as 1 / whose probability is submitted
    log: bool = False           # regression scored on a log scale: model log1p(y)
    source: str = ""            # column of the train table it comes from (defaults to `column`)

    def __post_init__(self):
        self.source = self.source or self.column


@dataclass
class Analysis:
    train: str                  # paths relative to the workspace
    test: str
    sample: str
    id_col: str                 # the sample submission's id column
    train_id: str | None        # id column of train (None: row numbers)
    test_id: str | None         # id column of test (None: the sample's ids, by position)
    features: list[str]
    bool_features: list[str]
    targets: list[Target]
    metric: str
    metric_from: str            # "description" or "fallback"
    task_type: str
    n_train: int
    n_test: int

    @property
    def submission_columns(self) -> list[str]:
        return [c for t in self.targets for c in t.columns]

    def to_dict(self) -> dict:
        return asdict(self)


def evaluation_text(ws: Path) -> str:
    ev = ws / "task" / "evaluation.md"
    if ev.exists() and ev.read_text().strip():
        return ev.read_text()
    desc = ws / "task" / "description.md"
    return desc.read_text() if desc.exists() else ""


def _py(v):
    return v.item() if isinstance(v, np.generic) else v


def _is_boolish(s: pd.Series) -> bool:
    vals = s.dropna()
    return len(vals) > 0 and (s.dtype == bool or set(vals.astype(str).str.lower().unique()) <= BOOL_VALUES)


def _find_test_id(test: pd.DataFrame, sample: pd.DataFrame, id_col: str) -> str | None:
    if id_col in test.columns:
        return id_col
    ids = set(sample[id_col].astype(str))
    for c in test.columns:
        if set(test[c].astype(str)) == ids:
            return c
    return None


def _classification(metric: Metric | None, s: pd.Series, sample_col: pd.Series | None) -> bool:
    if metric is not None:
        return metric.prediction != "value"
    if s.dtype == bool or not pd.api.types.is_numeric_dtype(s):
        return True
    vals = s.dropna()
    integer = bool(np.all(np.mod(vals, 1) == 0))
    return vals.nunique() <= 2 or (integer and vals.nunique() <= 20 and sample_col is not None
                                   and pd.api.types.is_integer_dtype(sample_col))


def _submit_kind(metric: Metric | None, sample_col: pd.Series) -> str:
    if metric is not None:
        return "proba" if metric.prediction == "proba" else "label"
    vals = pd.to_numeric(sample_col, errors="coerce")
    fractional = vals.notna().all() and ((vals % 1) != 0).any() and vals.between(0, 1).all()
    return "proba" if fractional else "label"


def _positive(classes: list, column: str):
    for c in classes:
        if str(c).lower() in column.lower() and len(str(c)) > 1:
            return c
    return classes[-1]  # 1 / True / the later name: scikit-learn's convention


def analyse(ws: Path) -> Analysis:
    ws = Path(ws)
    tables = find_tables(ws / "raw")
    missing = [r for r in ("train", "test", "sample") if r not in tables]
    if missing:
        raise CannotAnalyse(f"no {' / '.join(missing)} table found under raw/")
    train = read_table(tables["train"])
    test = read_table(tables["test"])
    sample = read_table(tables["sample"], dtype=str)
    id_col, sub_cols = sample.columns[0], list(sample.columns[1:])
    test_id = _find_test_id(test, sample, id_col)
    train_id = test_id if test_id in train.columns and train[test_id].is_unique else None
    metric = find_metric(evaluation_text(ws))
    metric_from = "description" if metric else "fallback"

    direct = [c for c in sub_cols if c in train.columns]
    targets: list[Target] = []
    if len(direct) == len(sub_cols):
        for c in sub_cols:
            targets.append(_target(train[c], c, [c], metric, sample[c]))
    else:
        label = _label_column(train, test, set(sub_cols), id_col)
        if label is not None:
            classes = sorted(_py(v) for v in train[label].dropna().unique())
            by_name = {str(v): v for v in classes}
            targets.append(Target(label, "multiclass", "proba_columns",
                                  sub_cols, [by_name[c] for c in sub_cols if c in by_name]))
        elif len(sub_cols) == 1:
            only = [c for c in train.columns if c not in test.columns and c not in (id_col, train_id)]
            if len(only) != 1:
                raise CannotAnalyse(f"submission column {sub_cols[0]!r} is not in {tables['train'].name} and no single "
                                    f"train-only column stands in for it (candidates: {only})")
            target = _target(train[only[0]], sub_cols[0], sub_cols, metric, sample[sub_cols[0]])
            target.source = only[0]
            targets.append(target)
        else:
            raise CannotAnalyse(f"submission columns {sub_cols[:5]} are neither train columns nor the classes of one")

    target_cols = {t.source for t in targets}
    features = [c for c in train.columns if c in test.columns and c not in target_cols
                and c not in (id_col, train_id, test_id)]
    both = pd.concat([train[features], test[features]], ignore_index=True)
    bool_features = [c for c in features if _is_boolish(both[c]) and both[c].dtype != bool]
    metric_name = _adjust_metric(metric, targets)
    for t in targets:
        t.log = t.kind == "regression" and "rmsle" in metric_name
    return Analysis(str(tables["train"].relative_to(ws)), str(tables["test"].relative_to(ws)),
                    str(tables["sample"].relative_to(ws)), id_col, train_id, test_id, features, bool_features,
                    targets, metric_name, metric_from, _task_type(targets), len(train), len(test))


def _target(s: pd.Series, column: str, sub_cols: list[str], metric: Metric | None, sample_col: pd.Series) -> Target:
    if not _classification(metric, s, sample_col):
        return Target(column, "regression", "value", sub_cols)
    if _is_boolish(s) and s.dtype != bool:
        s = s.astype(str).str.lower().map({"true": True, "false": False})
    classes = sorted(_py(v) for v in s.dropna().unique())
    submit = _submit_kind(metric, sample_col)
    if len(classes) <= 2:
        return Target(column, "binary", submit, sub_cols, classes, _positive(classes, column))
    return Target(column, "multiclass", "label" if submit == "proba" and len(sub_cols) == 1 else submit, sub_cols, classes)


def _label_column(train: pd.DataFrame, test: pd.DataFrame, sub_cols: set[str], id_col: str) -> str | None:
    for c in train.columns:
        if c in test.columns or c == id_col:
            continue
        values = {str(_py(v)) for v in train[c].dropna().unique()}
        if values and values <= sub_cols and len(values) >= 0.5 * len(sub_cols):
            return c
    return None


def _adjust_metric(metric: Metric | None, targets: list[Target]) -> str:
    multi = len(targets) > 1
    if metric is not None:
        name = metric.name
        if multi and not metric.multi_target:
            name = COLUMNWISE.get(name, name)
        if targets[0].submit == "proba_columns" and name in ("log_loss", "mean_columnwise_log_loss"):
            name = "multi_log_loss"
        return name
    t = targets[0]
    if t.submit == "proba_columns":
        return "multi_log_loss"
    if t.kind == "regression":
        return "mcrmse" if multi else "rmse"
    if t.submit == "proba":
        return "mean_columnwise_auc" if multi else "roc_auc"
    return "accuracy"


def _task_type(targets: list[Target]) -> str:
    if len(targets) == 1:
        return {"binary": "BinCls", "multiclass": "MultiCls", "regression": "Reg"}[targets[0].kind]
    cls = sum(t.kind != "regression" for t in targets)
    return "MultiTgtCls" if cls * 2 >= len(targets) else "MultiTgtReg"


assert set(COLUMNWISE.values()) <= set(METRICS), "metric catalogue lacks a column-wise metric"
