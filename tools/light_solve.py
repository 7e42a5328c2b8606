"""The light solve: a small model on a subsample of a finished setup, scored with the competition's metric on a
held-out part, and its test predictions formatted into a submission. The setup's final meta-test runs it (a
finite score and a valid submission show that maps, transform, metric and formatters fit together), and its
submission is the setup's first one.

It is never worse than the constant (issue 60: a light solve's hard class probabilities scored a log loss of 23.5
where the class priors scored 2.34, and became the submission): class probabilities are mixed with a little of the
fit rows' smoothed class frequencies, so that no class is ever given 0, and the constant (the class priors, or the
target's mean or median) is scored on the same held-out rows. Where the model does not beat it, the constant's
predictions are the submission, and where the constant beats it on most bootstrap resamples of those rows the
meta-test fails: the maps, the target or the transform may be wrong."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from agentk.modalities import TABULAR
from tools.map_dataset import MapDataset
from tools.metrics import RELATIVE_ERROR, relative_weights
from tools.resampling import wins_on_resamples
from tools.submission import format_with_fallback
from tools.tabular import encode
from tools.task_data import TaskData

EARLY_STOP_ROWS = 200  # fewer fit rows than this: no hold-out of its own for the light model's boosting (60 rounds)
MAX_ROUNDS = 200
PRIOR_SHARE = 0.02  # of each class probability, the fit rows' class frequencies (one more row of each class)
# fewer held-out rows than this say nothing of a model against the constant (10 rows of a 48-row train failed a
# correct setup, layout-fuzz seed 5210): the constant is written where the model does not beat it, and the test passes
MIN_VERDICT_ROWS = 30


def light_solve(ws: Path, max_rows: int = 3000, seed: int = 0) -> dict:
    """Fit a light model on a subsample, score a held-out part with the metric, format the test predictions.
    Tabular-only tasks get gradient boosting; image, text and mixed tasks a tiny late-fusion network."""
    task = TaskData(ws)
    train, test = task.train, task.test
    tabular_only = task.modalities == [TABULAR.name]
    rng, n_rows = np.random.default_rng(seed), max_rows if tabular_only else min(max_rows, 1000)
    if task.groups is None and task.times is None:
        rows = rng.permutation(len(train))[:n_rows]
        cut = max(1, int(0.8 * len(rows)))
        fit_rows, val_rows = rows[:cut], rows[cut:]
    else:  # rows in groups or a forecast: validate on unseen groups or later times, as the solver's split does
        fit, val = task.split
        fit_rows, val_rows = rng.permutation(fit)[: int(0.8 * n_rows)], rng.permutation(val)[: n_rows // 5]
    if tabular_only:
        val_pred, test_pred = _boosting(train, test, fit_rows, val_rows, task.outputs, task.metric_name)
    else:
        from tools.light_net import fit_predict

        val_pred, test_pred = fit_predict(train, fit_rows, [(train, val_rows), (test, None)], task.outputs, seed=seed)
    val_pred, test_pred = (toward_prior(task, p, fit_rows) for p in (val_pred, test_pred))
    model = "gradient boosting" if tabular_only else "tiny late-fusion network"
    stat, constant_score = _constant(task, fit_rows, val_rows)
    constant_val = np.tile(task.constant_row(fit_rows, stat), (len(val_rows), 1))
    # the constant decoded as well as the model is (every label of a set whose share passes a threshold scores better
    # under F1 than the likeliest alone), so that the model must beat it at its best
    constant_decoding = task.tune_decoding(constant_val, val_rows)
    if constant_decoding != task.decoding_defaults:
        constant_score = task.score(constant_val, val_rows)
    decoding = task.tune_decoding(val_pred, val_rows)  # e.g. the multi-label threshold, for the metric
    score = task.score(val_pred, val_rows)
    beats = task.better(score, constant_score)
    worse = (
        not beats
        and len(val_rows) >= MIN_VERDICT_ROWS
        and bool(
            wins_on_resamples(
                lambda idx: task.score(constant_val[idx], val_rows[idx]),
                lambda idx: task.score(val_pred[idx], val_rows[idx]),
                len(val_rows),
                task.higher_is_better,
                task.row_groups(val_rows),
            )
        )
    )
    if not beats:  # the constant over every train row, at the decoding tuned for it
        task.reset_decoding()
        decoding = {k: v for k, v in constant_decoding.items() if v != task.decoding_defaults[k]}
        for name, value in decoding.items():
            setattr(task.transform, name, value)
        test_pred = np.tile(task.constant_row(np.arange(len(train)), stat), (len(test), 1))
    formatter, sub = format_with_fallback(ws, pd.Series(test.ids), task.transform.inverse_transform(test_pred))
    return {
        "score": score,
        "higher_is_better": task.higher_is_better,
        "n_fit": len(fit_rows),
        "n_val": len(val_rows),
        "model": model if beats else f"constant ({_STAT_WORDS.get(stat, stat)}): the {model} did not beat it",
        "light_model": model,
        "constant": {"statistic": stat, "score": constant_score},
        "beats_constant": beats,
        "worse_than_constant": worse,  # the constant wins on most resamples of enough held-out rows
        "formatter": formatter,
        "decoding": decoding,
        "submission": sub,
    }


_STAT_WORDS = {
    "prior": "the class priors",
    "uniform": "every class alike",
    "mean": "the target's mean",
    "median": "the target's median",
    "relative": "the relative error's best constant",
}


def _constant(task: TaskData, fit_rows: np.ndarray, val_rows: np.ndarray) -> tuple[str, float]:
    """(statistic, score on val_rows) of the best constant learnt from fit_rows: the class priors or every class
    alike, or for a value the mean or the median, whichever scores better."""
    regression = any(o["kind"] == "regression" for o in task.outputs)
    stats = ["mean", "median"] if regression else ["prior", "uniform"]
    stats += ["relative"] if regression and task.metric_name in RELATIVE_ERROR else []
    best = None
    for stat in stats:
        score = task.score(np.tile(task.constant_row(fit_rows, stat), (len(val_rows), 1)), val_rows)
        if best is None or task.better(score, best[1]):
            best = (stat, score)
    return best


def toward_prior(task: TaskData, pred: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Model-space predictions whose class probabilities take PRIOR_SHARE of these rows' class frequencies, counted
    with one more row of each class: no class, even one the rows lack, is ever given 0 (a confident mistake costs
    log(1e-15) under log loss). Values stay as they are."""
    out, start = np.array(pred, dtype=float), 0
    for j, (o, w) in enumerate(zip(task.outputs, task.widths, strict=True)):
        if o["kind"] != "regression":
            y = task.y[rows, j]
            y = y[np.isfinite(y)].astype(int)
            counts = np.bincount(y, minlength=max(w, 2))[: max(w, 2)] + 1.0
            prior = counts / counts.sum()
            prior = prior[1:2] if w == 1 else prior  # binary: P(class 1)
            out[:, start : start + w] = (1 - PRIOR_SHARE) * out[:, start : start + w] + PRIOR_SHARE * prior
        start += w
    return out


def _boosting(
    train: MapDataset, test: MapDataset, fit_rows, val_rows, outputs: list[dict], metric: str = ""
) -> tuple[np.ndarray, np.ndarray]:
    frames = [ds.inputs[TABULAR.name].loc[ds.ids].reset_index(drop=True) for ds in (train, test)]
    (x_all, x_test), _ = encode(frames)
    val_parts, test_parts = [], []
    for j, out in enumerate(outputs):
        v, t = _fit_predict(
            out["kind"],
            int(out.get("n_classes", 0)),
            x_all[fit_rows],
            train.targets[fit_rows, j],
            [x_all[val_rows], x_test],
            metric,
        )
        val_parts.append(v)
        test_parts.append(t)
    return np.hstack(val_parts), np.hstack(test_parts)


def _fit_predict(
    kind: str, n_classes: int, x: np.ndarray, y: np.ndarray, x_new: list[np.ndarray], metric: str = ""
) -> list[np.ndarray]:
    """A small gradient-boosting model for one output: probabilities for classes, values for regression."""
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor  # slow import

    # a column with no value in the fit rows teaches nothing, and scikit-learn's binning fails on it ("window shape
    # cannot be larger than input array shape"); with no column left, a constant one
    known = ~np.isnan(x).all(axis=0) if len(x) else np.zeros(x.shape[1], bool)
    if not known.all():
        x, x_new = x[:, known], [z[:, known] for z in x_new]
    if x.shape[1] == 0:
        x, x_new = np.zeros((len(x), 1)), [np.zeros((len(z), 1)) for z in x_new]
    if kind == "regression":  # a relative error (RMSPE, MAPE): the boosting's loss weighted to be the metric's
        weight = relative_weights(metric, y)
        loss = "absolute_error" if weight is not None and RELATIVE_ERROR[metric] == 1 else "squared_error"
        model = HistGradientBoostingRegressor(loss=loss, random_state=0)
        rounds = _rounds(model, x, y, classes=False, weight=weight)
        return [model.set_params(max_iter=rounds).fit(x, y, sample_weight=weight).predict(z)[:, None] for z in x_new]
    if len(np.unique(y)) < 2:  # one class seen: predict it with certainty
        width = 1 if kind == "binary" else n_classes
        return [np.tile(_one(kind, n_classes, int(y[0])), (len(z), 1))[:, :width] for z in x_new]
    model = HistGradientBoostingClassifier(random_state=0)
    model = model.set_params(max_iter=_rounds(model, x, y.astype(int), classes=True)).fit(x, y.astype(int))
    outs = []
    for z in x_new:
        p = model.predict_proba(z)
        if kind == "binary":
            outs.append(p[:, list(model.classes_).index(1)][:, None] if 1 in model.classes_ else np.zeros((len(z), 1)))
        else:
            full = np.zeros((len(z), n_classes))
            full[:, model.classes_.astype(int)] = p
            outs.append(full)
    return outs


def _rounds(model, x: np.ndarray, y: np.ndarray, classes: bool, weight: np.ndarray | None = None) -> int:
    """The boosting rounds (up to MAX_ROUNDS) at which a held-out tenth of the rows, drawn at random (a rare class
    may lack rows in either part), scores its best loss: log loss for classes, squared error for values. Boosting
    starts from the constant (the class priors, the mean), so stopped there it cannot drift far below it: with 39
    classes on 2,400 rows, 60 rounds validated at a log loss of 2.89 against the priors' 2.70 (sf-crime-like)."""
    if len(y) < EARLY_STOP_ROWS:
        return 60
    order = np.random.default_rng(0).permutation(len(y))
    held, learn = order[: len(y) // 10], order[len(y) // 10 :]
    if classes and len(np.unique(y[learn])) < 2:
        return 60
    fitted = model.set_params(max_iter=MAX_ROUNDS).fit(
        x[learn], y[learn], sample_weight=None if weight is None else weight[learn]
    )
    losses = []
    if classes:
        known = np.isin(y[held], fitted.classes_)
        where = np.searchsorted(fitted.classes_, y[held][known])
        for p in fitted.staged_predict_proba(x[held]):
            hit = np.full(len(held), 1e-15)
            hit[known] = p[known, where] if p.ndim == 2 else np.where(where == 1, p[known], 1 - p[known])
            losses.append(-np.log(np.clip(hit, 1e-15, 1)).mean())
    else:
        w = np.ones(len(held)) if weight is None else weight[held]  # the weighted error the model was fit to
        power = 1 if fitted.loss == "absolute_error" else 2
        losses = [np.sum(w * np.abs(pred - y[held]) ** power) for pred in fitted.staged_predict(x[held])]
    return int(np.argmin(losses)) + 1


def _one(kind: str, n: int, c: int) -> np.ndarray:
    return np.array([float(c)]) if kind == "binary" else np.eye(n)[c]
