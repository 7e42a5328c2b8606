"""Classical candidates: one strong non-network model per input modality, always among the solutions, so the chosen
submission cannot validate worse than what a plain scikit-learn pipeline would give (issue 17).

Each candidate lives in its own module (CANDIDATES below: a registry to add to, with the input each reads; an
input may have several) exposing

    applies(task) -> str | None          why the candidate does not apply to this task, None when it does
    features(task, log) -> Features      a numeric matrix for every train row and every test row, built without
                                          the targets (or, for out-of-fold features, without the rows they encode)

and this module fits per output a few models on those features, picks one by cross-validation on the fit rows
with the competition's metric (the validation rows select among solutions, so they do not also pick the model
here), scores the pick on the validation rows and refits it on every row for the test predictions.
Predictions are in model space (tools/task_data.py).

A model that learns hyperparameters at a cost (a Gaussian process its kernel: ~40 s a time on 2 cores) may expose
`learnt() -> list[float]` (JSON-able) and `fix(learnt) -> self`: what it learnt on the fit rows is then fixed for
its refits on a cross-validation's folds (agentk/solve/cross_validation.py, and the folds here that choose among
the models) instead of being learnt again on each (nomad-like tables: seven kernel searches per output down to
two). The refit on every row learns again, from the most rows, unless the model says it learnt from a sample of its
rows (`learnt_on_sample_` true): another sample as large teaches it no more, so the refit keeps what the fit rows'
model learnt (a 4,000-row table: one ~60 s kernel search instead of two)."""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse
from sklearn.calibration import CalibratedClassifierCV
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.svm import SVC
from sklearn.utils.validation import has_fit_parameter

from agentk.modalities import IMAGE, TABULAR, TEXT
from tools.metrics import METRICS
from tools.task_data import TaskData

# name (the solution is classical-<name>) -> (the modality it reads, module)
CANDIDATES = {
    TABULAR.name: (TABULAR.name, "tools.classical_tab"),
    TEXT.name: (TEXT.name, "tools.classical_txt"),
    IMAGE.name: (IMAGE.name, "tools.classical_img"),
    "factors": (TABULAR.name, "tools.classical_factors"),
}


def candidate(name: str):
    """The module of the candidate registered as `name`."""
    return importlib.import_module(CANDIDATES[name][1])


FOLDS = 3
# where the metric scores probabilities, the chosen model's are tempered (each output's p^t, renormalised) by the t
# of these that scores its out-of-fold predictions best, kept when it gains over TEMPER_GAIN of the score (a rank
# metric's score does not move). A penalised model's probabilities sit too near the middle or too far out by how its
# penalty suits the data: otto's stand-in, the logistic regression at C=0.3, 5-fold log loss 0.6728 -> 0.6675 at
# t=1.13, test 0.6614 -> 0.6585
TEMPERATURES = tuple(np.round(np.geomspace(0.5, 2.0, 13), 3))
TEMPER_GAIN = 1e-3


def svm_fits(task: TaskData, folds: int) -> bool:
    """Whether every class of every class output has rows enough for svm_classifier(folds) on the inner folds of
    a cross-validation (about half the train rows): its probabilities need `folds` rows of each class there."""
    counts = [
        np.unique(col[np.isfinite(col)], return_counts=True)[1].min()
        for j, o in enumerate(task.outputs)
        if o["kind"] != "regression" and np.isfinite(col := task.y[:, j]).any()
    ]
    return bool(counts) and min(counts) >= 3 * folds


def svm_classifier(c: float, folds: int = 5):
    """An RBF support vector machine whose probabilities come from a sigmoid fitted on its decision values,
    cross-validated over `folds` folds (one machine refitted on all the rows predicts); see svm_fits."""
    return CalibratedClassifierCV(SVC(C=c), cv=folds, ensemble=False)


@dataclass
class Features:
    train: np.ndarray  # (train rows, k) float, or a scipy sparse matrix
    test: np.ndarray  # (test rows, k) float
    what: str  # one line for the plan: what the columns are
    models: dict[str, Callable[[str], object]]  # name -> factory(kind) of a fresh sklearn estimator for that kind
    details: dict = field(default_factory=dict)
    # (train, test) features of each row seen otherwise (an image mirrored, where its collection looks the same so):
    # a model learns from every view of its rows and predicts the mean over the views of the rows it predicts
    views: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    # the fit rows the features were computed for, a sample where computing them all is past the candidate's share
    # (their rows of `train` are then zeros, learnt from by nothing); None: every fit row
    fit_sample: np.ndarray | None = None


@dataclass
class ClassicalResult:
    val_pred: np.ndarray
    test_pred: np.ndarray
    val_score: float
    plan: str
    details: dict
    validated_test_pred: np.ndarray | None = None  # the fit rows' model's, when test_pred comes from a refit


def selected(X, columns: slice | np.ndarray, dense: bool):
    """These columns of X (a model's first step, where it reads some of its candidate's features), dense if asked."""
    X = X[:, columns]
    return X.toarray() if dense and sparse.issparse(X) else X


def on_columns(model, columns: slice | np.ndarray, dense: bool = False) -> Pipeline:
    """The model reading only these columns of its candidate's features: the pick, then the model's steps in one
    pipeline (not a pipeline in a pipeline: its last step takes the sample weights, _weighing)."""
    steps = [step for _, step in model.steps] if isinstance(model, Pipeline) else [model]
    return make_pipeline(FunctionTransformer(selected, kw_args={"columns": columns, "dense": dense}), *steps)


def modules(task: TaskData) -> list[tuple[str, object]]:
    """(name, module) of the candidates registered for the task's inputs, in the registry's order."""
    return [(name, candidate(name)) for name, (modality, _) in CANDIDATES.items() if modality in task.modalities]


def fit_candidate(task: TaskData, feats: Features, refit: bool = True, log=print, deadline=None) -> ClassicalResult:
    """Choose among feats.models by FOLDS-fold cross-validation on the fit rows (the competition's metric on the
    out-of-fold predictions), then fit the choice on the fit rows (validation predictions and score) and, with
    refit, on every row (test predictions). deadline (an agentk.core.deadline.Deadline, None: none): no further model
    is tried once a model's cross-validation would pass it, and no refit."""
    t0 = time.monotonic()
    left = deadline.left if deadline is not None else lambda: float("inf")
    fit, val = task.split
    left_out = np.setdiff1d(fit, feats.fit_sample) if feats.fit_sample is not None else fit[:0]
    if len(left_out):  # the rows left out of a sample have no features
        fit = fit[~np.isin(fit, left_out)]
    trains, tests = [feats.train, *(v[0] for v in feats.views)], [feats.test, *(v[1] for v in feats.views)]
    cv, cv_seconds, on_fit, fit_seconds, oofs = {}, {}, {}, {}, {}
    choices = feats.models if len(feats.models) > 1 else {}  # one model: nothing to choose, no cross-validation
    for name, factory in choices.items():
        if cv and left() < max(cv_seconds.values()):  # another model's folds would pass the deadline
            log(f"  {name}: not tried ({left():.0f} s of the wall time allotted left)")
            continue
        started = time.monotonic()
        learnt = None
        if any(hasattr(factory(_kind(o)), "learnt") for o in task.outputs):
            # what it learns at a cost (a kernel) is learnt once, on the fit rows, and fixed on the folds, as the
            # solver's cross-validation does: three kernel searches fewer
            on_fit[name] = _fit_outputs(task, factory, trains, fit)
            fit_seconds[name] = time.monotonic() - started
            learnt = _learnt(on_fit[name])
        oof = np.zeros((len(task.y), sum(task.widths)))
        # once a model is scored, another stops where the deadline passes, between two outputs' fits: a dearer model
        # than those before it (the table beside the words: 30 outputs of google-quest's stand-in) ran 300 s past
        stop = (lambda: left() <= 0) if cv else None
        try:
            for inner_fit, inner_val in task.folds(FOLDS, fit):
                fitted = _fit_outputs(task, factory, trains, inner_fit, learnt, stop)
                oof[inner_val] = _predict(task, fitted, [x[inner_val] for x in trains])
        except _OutOfTime:
            log(f"  {name}: stopped in its cross-validation (the wall time allotted ran out)")
            break
        cv[name], oofs[name] = task.score(oof[fit], fit), oof[fit]
        cv_seconds[name] = time.monotonic() - started
        log(f"  {name}: {FOLDS}-fold {task.metric_name} on the fit rows {cv[name]:.5g}")
    chosen = next(iter(feats.models))
    for name in cv:
        if task.better(cv[name], cv[chosen]):
            chosen = name
    factory = feats.models[chosen]
    # one model on the fit rows predicts the validation rows and, for the blender, the test rows
    if chosen not in on_fit:
        started = time.monotonic()
        on_fit[chosen] = _fit_outputs(task, factory, trains, fit)
        fit_seconds[chosen] = time.monotonic() - started
    fitted = on_fit[chosen]
    both = _predict(task, fitted, [_stacked([x[val], t]) for x, t in zip(trains, tests, strict=True)])
    val_pred, validated = both[: len(val)], both[len(val) :]
    learnt = _learnt(fitted)
    every = np.arange(len(task.y))
    every = every[~np.isin(every, left_out)]  # every row, but those left out of a sample
    kept = [v if getattr(m, "learnt_on_sample_", False) else None for m, v in zip(fitted, learnt, strict=True)]
    kept = kept if any(v is not None for v in kept) else None
    if refit and left() < fit_seconds[chosen]:  # a refit costs about what the fit on the fit rows did
        refit, refitted = False, "; not refitted (the wall time allotted ran short)"
    else:
        refitted = f"; refitted on all {len(every)} rows for the test predictions" if refit else ""
    test_pred = predict_outputs(task, factory, trains, every, tests, kept) if refit else validated
    t, tempered = _temperature(task, oofs.get(chosen), fit, cv.get(chosen))
    if t != 1.0:
        val_pred, validated, test_pred = (tempered_probabilities(task, p, t) for p in (val_pred, validated, test_pred))
    return ClassicalResult(
        val_pred,
        test_pred,
        float(task.score(val_pred, val)),
        f"{chosen} on {feats.what}"
        + (f", chosen among {list(cv)} by {FOLDS}-fold {task.metric_name} on the {len(fit)} fit rows" if cv else "")
        + (f", learnt from and averaged over {len(trains)} views of each row" if feats.views else "")
        + tempered
        + f", scored on the {len(val)} validation rows{refitted}",
        {"chosen": chosen, "cv": cv, "seconds": time.monotonic() - t0, "temperature": t, **feats.details}
        | ({"learnt": learnt} if any(v is not None for v in learnt) else {}),
        validated if refit else None,
    )


def _temperature(task: TaskData, oof: np.ndarray | None, rows: np.ndarray, score: float | None) -> tuple[float, str]:
    """The temperature (TEMPERATURES) whose tempered out-of-fold predictions of `rows` score best, and a phrase for
    the plan; 1 and "" where the metric scores no probabilities, nothing was cross-validated, or none gains over
    TEMPER_GAIN of the score."""
    metric = METRICS.get(task.metric_name)
    if (
        oof is None
        or metric is None
        or metric.prediction != "proba"
        or all(o["kind"] == "regression" for o in task.outputs)
    ):
        return 1.0, ""
    scores = {t: task.score(tempered_probabilities(task, oof, t), rows) for t in TEMPERATURES if t != 1.0}
    best = next(iter(scores))
    for t in scores:
        best = t if task.better(scores[t], scores[best]) else best
    if not task.better(scores[best], score) or abs(scores[best] - score) <= TEMPER_GAIN * abs(score):
        return 1.0, ""
    return best, (
        f", its probabilities tempered at t={best:g} ({FOLDS}-fold {task.metric_name} {score:.5g} -> {scores[best]:.5g})"
    )


def tempered_probabilities(task: TaskData, pred: np.ndarray, t: float) -> np.ndarray:
    """Model-space predictions with each class output's probabilities raised to the power t and renormalised (P(1)
    of a binary output against its P(0)); values as they are. t > 1 sharpens, t < 1 softens; the order of a row's
    classes, and of the rows by one class, stays."""
    out, at = np.array(pred, dtype=float), 0
    if t == 1.0:
        return out
    for o, w in zip(task.outputs, task.widths, strict=True):
        if o["kind"] != "regression":
            p = out[:, at : at + w]
            logs = t * np.log(np.clip(np.hstack([1.0 - p, p]) if w == 1 else p, 1e-15, 1.0))
            q = np.exp(logs - logs.max(axis=1, keepdims=True))
            out[:, at : at + w] = (q / q.sum(axis=1, keepdims=True))[:, -w:]
        at += w
    return out


def predict_outputs(
    task: TaskData, factory: Callable[[str], object], X, rows, X_out, learnt: list | None = None
) -> np.ndarray:
    """Model-space predictions for X_out of one model per output, each fitted on `rows` of X (those with a target
    for that output): P(class 1), the class probabilities, or the value. X and X_out: a matrix, or a list of them,
    one per view of the rows (Features.views). learnt: per output, what a model learnt before (its `learnt()`,
    None where nothing), fixed instead of learnt again."""
    return _predict(task, _fit_outputs(task, factory, X, rows, learnt), X_out)


class _OutOfTime(Exception):
    """_fit_outputs' `stop` said the time is up."""


def _fit_outputs(task: TaskData, factory, X, rows, learnt: list | None = None, stop=None) -> list:
    """Per output, a model fitted on `rows` of X, of every view of them (those with a target for it), or for
    classes an int: the one class those rows hold. stop: called before each output's fit, _OutOfTime raised when
    it says so."""
    views = X if isinstance(X, list) else [X]
    fitted = []
    for j, o in enumerate(task.outputs):
        if stop is not None and stop():
            raise _OutOfTime
        kept = task.learn_rows(j, rows)  # a target, and not a row the metric skips
        Xj = _stacked([x[kept] for x in views])
        yj = np.tile(task.y[kept, j], len(views))
        weight = task.fit_weights(j, kept)
        kind = _kind(o)
        if kind == "classification":
            yj = yj.astype(int)
            if len(np.unique(yj)) == 1:  # one class in these rows: it is certain
                fitted.append(int(yj[0]))
                continue
        model = factory(kind)
        if learnt is not None and learnt[j] is not None:
            model = model.fix(learnt[j])
        fitted.append(model.fit(Xj, yj, **_weighing(model, None if weight is None else np.tile(weight, len(views)))))
    return fitted


def _learnt(fitted: list) -> list:
    """Per output, what its fitted model learnt at a cost (its `learnt()`), None where nothing."""
    return [m.learnt() if hasattr(m, "learnt") else None for m in fitted]


def _kind(output: dict) -> str:
    """What a model factory is asked for: "regression" or "classification"."""
    return "regression" if output["kind"] == "regression" else "classification"


def _weighing(model, weight: np.ndarray | None) -> dict:
    """fit's keyword for the metric's row weights, where the model takes them (a pipeline: its last step); none
    where it does not (a Gaussian process): it fits the rows that count, unweighted."""
    if weight is None:
        return {}
    if isinstance(model, Pipeline):
        name, last = model.steps[-1]
        return {f"{name}__sample_weight": weight} if has_fit_parameter(last, "sample_weight") else {}
    return {"sample_weight": weight} if has_fit_parameter(model, "sample_weight") else {}


def _predict(task: TaskData, fitted: list, X_out) -> np.ndarray:
    """The mean over the views (X_out: a matrix, or a list of them, one per view of the same rows)."""
    if isinstance(X_out, list):
        return np.mean([_predict(task, fitted, x) for x in X_out], axis=0)
    parts = []
    for o, w, model in zip(task.outputs, task.widths, fitted, strict=True):
        if o["kind"] == "regression":
            parts.append(model.predict(X_out).reshape(-1, 1))
            continue
        out = np.zeros((X_out.shape[0], w))
        if isinstance(model, int):
            out[:, model if w > 1 else 0] = 1.0 if w > 1 else float(model == 1)
        else:
            proba = model.predict_proba(X_out)
            if w == 1:
                out[:, 0] = proba[:, list(model.classes_).index(1)] if 1 in model.classes_ else 0.0
            else:
                out[:, np.asarray(model.classes_, dtype=int)] = proba
        parts.append(out)
    return np.concatenate(parts, axis=1)


def _stacked(blocks: list):
    """The blocks' rows one after another (dense arrays or scipy sparse matrices); one block as it is."""
    if len(blocks) == 1:
        return blocks[0]
    return sparse.vstack(blocks).tocsr() if sparse.issparse(blocks[0]) else np.concatenate(blocks)
