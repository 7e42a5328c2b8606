"""The classical tabular candidate (tools/classical.py): kernel methods on small tables, beside AutoGluon's trees.
Numbers standardised (with missing indicators), categories one-hot; a Gaussian process for regression (its kernel's
length scales learnt by maximising the marginal likelihood, one per column when there are few columns) or a ridge
regression, a support vector machine or a logistic regression for classes. On a few hundred or thousand rows whose
target varies smoothly with the inputs, a kernel model often beats boosted trees, and it errs differently, so the
blend gains even where it does not.

A Gaussian process learns its kernel on TUNE_ROWS rows at most (the dear part: ~40 s), then is fitted on every row
with that kernel, at the cube of the rows: it fits on MAX_ROWS rows at most, drawn at random from larger tables (a
smooth target is learnt as well from them: a 25,000-row taxi-fare table, RMSE 0.815 from 8,000 of its rows where
gradient boosting on all of them reaches 0.844; 17,520 days of item sales, test SMAPE 13.8 where AutoGluon's trees
reach 15.4). Several values to predict (a kernel learnt for each) need fewer rows. Classes take tables of at most
MAX_ROWS rows: a support vector machine fits on at most SVM_ROWS (a machine per pair of classes, five times over for
its probabilities); above, classes get a logistic regression alone."""

from __future__ import annotations

import warnings
from functools import partial

import numpy as np
import pandas as pd
import scipy.optimize
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_selection import SelectKBest, f_regression
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline

from agentk.modalities import TABULAR
from tools.classical import Features, on_columns, svm_classifier, svm_fits
from tools.features import with_keys
from tools.tabular import standardised
from tools.task_data import TaskData

# a Gaussian process's fits with a learnt kernel (the fit rows, then every row) factorise a rows² matrix: on 2 cores
# 3 s at 4,000 rows, 21 s at 8,000 (and 512 MB); a 4,000-row taxi-fare table gained most from the process (RMSE 0.86
# where AutoGluon's trees reach 1.03: a fare smooth in distance and time)
MAX_ROWS = 8000
# a process fitted on a sample still predicts every validation and test row, in blocks (~0.3 s per 10,000 rows):
# larger tables (train and test rows together) are left to the trees
PREDICTED_ROWS = 1_000_000
# several values to predict learn a kernel each: together they may cost as much as one process's on this many rows
# (its kernel learnt on every row, a rows² factorisation at each optimiser step), so several fit on fewer rows
KERNEL_ROWS = 2000
# the kernel's length scales are learnt on this many rows at most: each optimiser step costs rows² per length scale,
# and ~100 steps on 1,459 rows and 24 columns took 184 s; learnt on 800, then fitted on all, 40 s and as good
TUNE_ROWS = 800
# and in at most this many optimiser iterations: past them the likelihood barely moves while each costs ~1 s on 800
# rows and 24 columns (a 4,000-row coupling table: 192 s to converge, 49 s capped, validation MAE 3.926 -> 3.873;
# taxi fares RMSE 0.886 either way; nomad's two kernels the same validation RMSLE, 51 s -> 15 s)
KERNEL_STEPS = 40
MAX_LEVELS = 30  # categories with up to this many levels are one-hot whole
# a category of more levels (an address, a manager): its levels of at least this many train rows that the test rows
# also hold are one-hot, the rest one "other" column. A level only train holds (a household's id, when households do
# not cross the split) teaches the test nothing. sf-crime's stand-in: the kernel candidate's validation log loss 2.730
# -> 2.492 (253 address columns); two-sigma's 0.532 -> 0.507; costa-rican's unchanged (its household ids are not shared)
LEVEL_ROWS = 3
LEVEL_CELLS = 50_000_000  # the most cells (rows x columns) such levels add, the most frequent levels first (400 MB)
ARD_COLUMNS = 40  # up to this many columns, one length scale each; beyond, one for all (each adds a gradient)
MAX_SVM_CLASSES = 20
# the logistic regression's inverse penalties, one chosen by cross-validation: on otto's stand-in (93 counts, 9
# classes, 2,400 fit rows) validation log loss 0.726 at C=1, 0.665 at 0.1 standardised; in log units (features)
# 0.658 at 1. A trip's 68 department counts in log units: 0.77 at C=1, 0.73 at 3. C=0.3 since otto's folds chose it
# (3-fold log loss 0.704 against 0.714 at 1): refitted on every row, its test log loss is 0.661 against 0.675 at C=1
LOGISTIC_C = (1.0, 0.1, 3.0, 0.3)
# a value also gets a ridge regression, weighted as the metric weighs the rows, chosen against the process by
# cross-validation: many heavy-tailed columns (a side table's summaries) leave a kernel's one length scale lost,
# where a line holds (optiver's stand-in, 72 columns, RMSPE: the process 0.70, worse than the constant's 0.46; a
# ridge 0.18 at alpha 1, 0.19 at 100)
RIDGE_ALPHA = (1.0, 10.0, 100.0)
# and on the k columns most correlated with the value (chosen on each fold's rows): a side table's summaries bring
# dozens of columns of which a few carry the signal, and a ridge on all of them spreads its weight over the noise
# (optiver's stand-in, 720 rows and 72 columns: 3-fold RMSPE 0.213 on the own columns, 0.206 on the 10 best; test
# 0.208 -> 0.203)
BEST_COLUMNS = (5, 10, 20)
SVM_FOLDS = 5  # the folds its probabilities are calibrated on
SVM_ROWS = 2000  # a machine's fits cost the square of the rows or more, and it fits ~30 (choice, calibration, refit)
PREDICT_ROWS = 10_000  # a process predicts this many rows at a time (a rows x train rows kernel block each)


def applies(task: TaskData) -> str | None:
    if TABULAR.name not in task.modalities:
        return f"no {TABULAR.name} input"
    rows = len(task.y)
    values = sum(o["kind"] == "regression" for o in task.outputs)
    if rows > MAX_ROWS and (values < len(task.outputs) or rows + len(task.test.inputs[TABULAR.name]) > PREDICTED_ROWS):
        return (
            f"{rows} train rows: kernel methods cost the cube of the rows (this candidate takes {MAX_ROWS} with "
            f"classes; a value is fitted on {MAX_ROWS} of them where train and test hold {PREDICTED_ROWS} at most)"
        )
    if values > 1 and values * (min(rows, KERNEL_ROWS) / KERNEL_ROWS) ** 3 > 1:
        return (
            f"{values} values to predict on {rows} rows: a Gaussian process for each, at the cube of the rows, is "
            f"more work than one on {KERNEL_ROWS} rows"
        )
    return None


def features(task: TaskData, log=print) -> Features:
    # the text keys the features replaced by their target encodings (tools/features.py) are the table's own: read
    # beside its other own columns, without the encodings (beside them a model reads fit rows' labels off them);
    # two-sigma's manager ids, their shared levels one-hot: validation log loss 0.541 without them, 0.495 with
    train, test = with_keys(task)
    n = len(train)
    frame = pd.concat([train, test], ignore_index=True)
    blocks, numbers, categories, room = [], 0, 0, LEVEL_CELLS // max(1, len(frame))
    added, aside = [], []  # per block: whether its column is an engineered one (tools/features.py), or set aside
    for column in frame.columns:
        s = frame[column]
        if s.dtype != bool and pd.api.types.is_numeric_dtype(s):
            parts = standardised(s.astype(float).to_numpy(), np.arange(n), log_units=True)
            blocks += [b[:, None] for b in parts]
            added += [column in task.engineered] * len(parts)
            aside += [column in task.set_aside] * len(parts)
            numbers += 1
            continue
        levels = s.astype("string").fillna("<missing>")  # missing is a level of its own
        if s.astype("string")[:n].nunique() > MAX_LEVELS:
            levels, taken = _shared_levels(levels, n, room)
            room -= taken
        if levels.nunique() > 1:
            blocks.append(pd.get_dummies(levels).to_numpy(float))
            added.append(column in task.engineered)
            aside.append(column in task.set_aside)
            categories += 1
    X = np.hstack(blocks) if blocks else np.zeros((len(frame), 0))
    engineered, kept_out = (
        np.array([a for a, b in zip(flags, blocks, strict=True) for _ in range(b.shape[1])], dtype=bool)
        for flags in (added, aside)
    )
    varies = X[:n].std(axis=0) > 0
    X, own, every = X[:, varies], np.flatnonzero(~engineered[varies]), np.flatnonzero(~kept_out[varies])
    sampled = f"; the process fits on {MAX_ROWS} of the rows it is given, drawn at random" if n > MAX_ROWS else ""
    return Features(
        X[:n],
        X[n:],
        f"{numbers} standardised numbers and {categories} one-hot categories ({X.shape[1]} columns){sampled}",
        models(
            task, X.shape[1], own if 0 < len(own) < X.shape[1] else None, every if len(every) < X.shape[1] else None
        ),
        {"columns": X.shape[1]},
    )


def _shared_levels(levels: pd.Series, n: int, room: int) -> tuple[pd.Series, int]:
    """A many-level category's values (train rows first, n of them) with only its levels of LEVEL_ROWS train rows or
    more that the test rows hold too, the `room` most frequent; the rest one level, "other". And how many it kept."""
    counts = levels[:n].value_counts()
    kept = counts[(counts >= LEVEL_ROWS) & counts.index.isin(set(levels[n:]))].index[: max(0, room)]
    return levels.where(levels.isin(kept), "<other>"), len(kept)


def models(task: TaskData, columns: int, own: np.ndarray | None = None, every: np.ndarray | None = None) -> dict:
    """A Gaussian process and ridge regressions for values (the process alone for a value beside classes); for
    classes a support vector machine (up to MAX_SVM_CLASSES classes and SVM_ROWS rows: it fits a machine per pair of
    classes, five times over for its probabilities) and a logistic regression. With `own` (the columns not
    engineered), each linear model also on those alone: many weak engineered columns cost a linear model more than
    they teach it, where trees pass them by. A value's ridges also on the columns most correlated with it. With
    `every` (all columns but the keys set aside), the models but those on `own` read those alone."""
    kinds = {o["kind"] == "regression" for o in task.outputs}
    widest = max((w for o, w in zip(task.outputs, task.widths, strict=True) if o["kind"] != "regression"), default=1)
    svm = widest <= MAX_SVM_CLASSES and len(task.y) <= SVM_ROWS and svm_fits(task, SVM_FOLDS)
    logistic = {f"logistic (C={c:g})": partial(_logistic, c) for c in LOGISTIC_C}
    for_classes = logistic | ({"svm": _svm} if svm else {})
    width = columns if every is None else len(every)
    if kinds == {True}:
        ridges = {f"ridge (alpha={a:g})": (lambda kind, a=a: Ridge(alpha=a)) for a in RIDGE_ALPHA}
        base = {"gaussian process": lambda kind: _gp(width)} | ridges | _on_best(ridges, width)
        return _reading(base, every) | _on_own(ridges, own)
    if kinds == {False}:
        classes = {name: (lambda kind, make=make: make()) for name, make in for_classes.items()}
        return _reading(classes, every) | _on_own({name: classes[name] for name in logistic}, own)
    return _reading(
        {
            f"gaussian process and {name}": (lambda kind, make=make: _gp(width) if kind == "regression" else make())
            for name, make in for_classes.items()
        },
        every,
    )


def _reading(models: dict, columns: np.ndarray | None) -> dict:
    """These models on `columns` alone (all without them). A Gaussian process in such a pipeline learns its kernel on
    every fold, not once."""
    if columns is None:
        return models
    return {name: (lambda kind, make=make: on_columns(make(kind), columns)) for name, make in models.items()}


def _on_own(linear: dict, own: np.ndarray | None) -> dict:
    """These models on the `own` columns alone (none without them): sf-crime's stand-in, 20 engineered columns
    (calendar parts, an address's counts and gaps) beside 5 of its own, the logistic regression's validation log
    loss 2.492 with them, 2.406 without (test 2.465 -> 2.419)."""
    if own is None:
        return {}
    return {f"{name} on the table's own columns": make for name, make in _reading(linear, own).items()}


def _on_best(linear: dict, columns: int) -> dict:
    """These models on the k columns most correlated with the value, each of BEST_COLUMNS below `columns`."""
    return {
        f"{name} on the {k} columns most correlated with the value": (
            lambda kind, make=make, k=k: make_pipeline(SelectKBest(f_regression, k=k), make(kind))
        )
        for k in BEST_COLUMNS
        if k < columns
        for name, make in linear.items()
    }


class _GaussianProcess(GaussianProcessRegressor):
    """A Gaussian process whose kernel is learnt on at most TUNE_ROWS of the rows, then fitted on all of them (at most
    MAX_ROWS, drawn at random) with that kernel; it does not warn when a column's length scale reaches its upper
    bound: that is how it says the column does not matter, which is expected of some columns."""

    def fit(self, X, y):
        if len(X) > MAX_ROWS:
            rows = np.random.default_rng(1).choice(len(X), MAX_ROWS, replace=False)
            X, y = X[rows], y[rows]
        self.learnt_on_sample_ = len(X) > TUNE_ROWS and self.optimizer is not None  # see tools/classical.py
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            if not self.learnt_on_sample_:
                return super().fit(X, y)
            rows = np.random.default_rng(0).choice(len(X), TUNE_ROWS, replace=False)
            tuned = GaussianProcessRegressor(
                self.kernel, normalize_y=self.normalize_y, optimizer=self.optimizer, random_state=0
            )
            kernel, optimizer = self.kernel, self.optimizer
            self.kernel, self.optimizer = tuned.fit(X[rows], y[rows]).kernel_, None
            try:
                return super().fit(X, y)
            finally:
                self.kernel, self.optimizer = kernel, optimizer

    def predict(self, X, return_std=False, return_cov=False):
        """As GaussianProcessRegressor's, PREDICT_ROWS rows at a time when only the mean is asked for."""
        if return_std or return_cov or len(X) <= PREDICT_ROWS:
            return super().predict(X, return_std=return_std, return_cov=return_cov)
        whole = super().predict  # (a comprehension's own scope has no zero-argument super())
        return np.concatenate([whole(X[i : i + PREDICT_ROWS]) for i in range(0, len(X), PREDICT_ROWS)])

    def learnt(self) -> list[float]:
        """The fitted kernel's hyperparameters (log-transformed, sklearn's theta)."""
        return [float(v) for v in self.kernel_.theta]

    def fix(self, learnt: list[float]) -> _GaussianProcess:
        """This process with its kernel's hyperparameters set to `learnt` and not learnt again."""
        self.kernel, self.optimizer = self.kernel.clone_with_theta(np.asarray(learnt)), None
        return self


def _gp(columns: int) -> GaussianProcessRegressor:
    scales = np.ones(columns) if columns <= ARD_COLUMNS else 1.0
    kernel = ConstantKernel() * RBF(scales, length_scale_bounds=(1e-2, 1e3)) + WhiteKernel()
    return _GaussianProcess(kernel, normalize_y=True, optimizer=_kernel_search, random_state=0)


def _kernel_search(objective, theta, bounds) -> tuple[np.ndarray, float]:
    """scikit-learn's own kernel search (L-BFGS-B on the negative log marginal likelihood and its gradient), stopped
    after KERNEL_STEPS iterations."""
    found = scipy.optimize.minimize(
        objective, theta, method="L-BFGS-B", jac=True, bounds=bounds, options={"maxiter": KERNEL_STEPS}
    )
    return found.x, found.fun


def _svm():
    return svm_classifier(1.0, SVM_FOLDS)


def _logistic(c: float) -> LogisticRegression:
    return LogisticRegression(C=c, max_iter=2000)
