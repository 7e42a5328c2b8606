"""The one-hot linear candidate (tools/classical.py): every tab column as levels, into a linear model — a
generalised additive model, the competent Kaggler's first model on a table of categories. A category of many levels
(a street address, a product code) is one column per level seen in MIN_ROWS train rows or more (rarer levels share
one); a number of few values (an hour, a weekday, a rating) is one column per value; any other number is its
quantile bin (BINS of the train rows) and its standardised value, a skewed count's as log1p. A logistic regression
(classes) or a ridge regression (values) then learns a weight per level.

The other tab candidates see such a column otherwise: the trees by its codes and counts, the kernel methods not at
all past classical_tab.MAX_LEVELS levels. Crime categories by address, hour and district (3,000 rows, 39 classes):
log loss 2.77 for the kernel candidate's logistic regression, 2.36 for AutoGluon, and 2.23 for a logistic regression
on the levels one-hot. Larger tables are learnt from a sample of MAX_ROWS fit rows."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.preprocessing import OneHotEncoder

from agentk.modalities import TABULAR
from tools.classical import Features
from tools.tabular import standardised
from tools.task_data import TaskData

MIN_ROWS = 3  # train rows a level needs for a column of its own; rarer levels share one
FEW_VALUES = 32  # a number of at most this many distinct values: one column per value
BINS = 16  # quantile bins of any other number
SKEWED = 2.0  # a non-negative number of at least this skewness enters as log1p (counts, prices)
UNIQUE = 0.5  # a text column with more distinct values than this share of its rows names rows: left out
MAX_ROWS = 100_000  # a model learns from at most this many rows, drawn at random
C_VALUES = (0.1, 0.3)  # the logistic regressions' inverse penalties, chosen by cross-validation
ALPHAS = (1.0, 10.0)  # the ridge regressions' penalties
MAX_ITER = 300
# a table of more columns is left to the trees: thousands of sparse numbers (a 4,991-column table of mostly zeros)
# make tens of thousands of bins, and its ridge regression validated worse than the constant
MAX_COLUMNS = 300


def applies(task: TaskData) -> str | None:
    if TABULAR.name not in task.modalities:
        return f"no {TABULAR.name} input"
    columns = task.train.inputs[TABULAR.name].shape[1]
    return f"{columns} tab columns: more than {MAX_COLUMNS} are left to the trees" if columns > MAX_COLUMNS else None


def features(task: TaskData, log=print) -> Features:
    train, test = task.train.inputs[TABULAR.name], task.test.inputs[TABULAR.name]
    n = len(train)
    frame = pd.concat([train, test], ignore_index=True)
    levels, blocks, kinds = [], [], {"levels": 0, "values": 0, "bins": 0}
    for column in frame.columns:
        s = frame[column]
        if s.dtype == bool or not pd.api.types.is_numeric_dtype(s):
            text = s.astype("string")
            if text[:n].nunique() > UNIQUE * max(1, text[:n].notna().sum()):
                continue
            levels.append(text.fillna("<missing>").to_numpy(object))
            kinds["levels"] += 1
            continue
        v = s.astype(float).replace([np.inf, -np.inf], np.nan).to_numpy()
        if pd.Series(v).nunique() <= FEW_VALUES:
            levels.append(np.where(np.isnan(v), "<missing>", v.astype(str)).astype(object))
            kinds["values"] += 1
            continue
        known = v[:n][~np.isnan(v[:n])]
        if len(known) and known.min() >= 0 and pd.Series(known).skew() >= SKEWED:
            v = np.log1p(v)
        edges = np.unique(np.nanquantile(v[:n], np.linspace(0, 1, BINS + 1)[1:-1])) if len(known) else np.array([])
        levels.append(np.where(np.isnan(v), "<missing>", np.searchsorted(edges, v).astype(str)).astype(object))
        blocks += [sparse.csr_matrix(b[:, None]) for b in standardised(v, np.arange(n))]
        kinds["bins"] += 1
    if levels:
        codes = np.column_stack(levels)
        enc = OneHotEncoder(min_frequency=MIN_ROWS, handle_unknown="infrequent_if_exist", dtype=np.float32)
        blocks.insert(0, enc.fit(codes[:n]).transform(codes).tocsr())
    X = sparse.hstack(blocks).tocsr() if blocks else sparse.csr_matrix((len(frame), 0))
    fit = X[:n]
    spread = np.asarray(fit.multiply(fit).mean(axis=0)).ravel() - np.asarray(fit.mean(axis=0)).ravel() ** 2
    X = X[:, np.flatnonzero(spread > 1e-12)]  # not a column the same on every train row
    log(f"  {X.shape[1]} one-hot and standardised columns of {sum(kinds.values())} tab columns")
    return Features(
        X[:n],
        X[n:],
        f"{kinds['levels']} categories and {kinds['values']} numbers of few values one-hot (levels of {MIN_ROWS} "
        f"train rows or more), {kinds['bins']} numbers as {BINS} quantile bins and their value ({X.shape[1]} columns)",
        models(task),
        {"columns": X.shape[1]},
    )


def models(task: TaskData) -> dict:
    """A logistic regression for classes and a ridge regression for values, at each penalty."""
    out = {}
    for c, alpha in zip(C_VALUES, ALPHAS, strict=True):
        out[f"linear (C={c}, alpha={alpha})"] = lambda kind, c=c, alpha=alpha: (
            _Sampled(Ridge(alpha=alpha)) if kind == "regression" else _Sampled(_logistic(c))
        )
    return out


def _logistic(c: float) -> LogisticRegression:
    return LogisticRegression(C=c, max_iter=MAX_ITER)


class _Sampled:
    """An estimator fitted on at most MAX_ROWS of the rows it is given, drawn at random (seeded)."""

    def __init__(self, model):
        self.model = model

    def fit(self, X, y, sample_weight=None):
        if X.shape[0] > MAX_ROWS:
            rows = np.sort(np.random.default_rng(0).choice(X.shape[0], MAX_ROWS, replace=False))
            X, y = X[rows], y[rows]
            sample_weight = None if sample_weight is None else sample_weight[rows]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            self.model.fit(X, y, sample_weight=sample_weight)
        self.classes_ = getattr(self.model, "classes_", None)
        return self

    def predict(self, X):
        return self.model.predict(X)

    def predict_proba(self, X):
        return self.model.predict_proba(X)
