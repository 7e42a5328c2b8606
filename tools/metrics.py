"""Catalogue of the metrics tabular Kaggle competitions score, in plain numpy.

Each `Metric.fn(y_true, y_pred) -> float` takes lists, pandas objects or arrays and
raises a one-line ValueError on bad shapes. The implementations deliberately avoid
scikit-learn so the tests can check them against it independently, and so that
`metric_source` can emit a self-contained `score()` that needs only numpy.

`find_metric(text)` names the metric a competition's evaluation text describes. The
text is normalised first (lower-cased, markdown links reduced to their anchor text,
URLs dropped, hyphens/underscores turned into spaces, whitespace collapsed) and the
`patterns` are written against that normalised form. Several metrics' names contain
others' ("root mean squared logarithmic error" vs "... error", "multi-class log loss"
vs "log loss", "mean column-wise ROC AUC" vs "AUC"), so candidates are tried in the
explicit order `PRIORITY`, most specific first:
  lwlrap > bias / weighted AUC > mean correlations > grouped log-MAE > masked MAE > column-wise variants
  > MAP@k > regression (smape > mape, rmsle > rmse > mse) > multi_log_loss > log_loss > gini > roc_auc
  > qwk > mcc > correlations > per-sample and averaged F-betas > F2 > F1 > r2
  > accuracy (last, because "accuracy" is also used loosely in prose).

Label sets ("3 17 42") and rankings ("a b c d e") are compared as space-separated strings.
"""

from __future__ import annotations

import inspect
import re
import types
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Metric:
    name: str
    fn: Callable[..., float]
    higher_is_better: bool
    prediction: str  # "label" | "proba" | "value" | "ranking"
    multi_target: bool
    patterns: tuple[str, ...]
    balanced: bool = False  # weighs every class alike, whatever its share of the rows


# ----------------------------------------------------------------------------- input checks
def _same_length(n_true, n_pred):
    if n_true != n_pred:
        raise ValueError(f"y_true has {n_true} rows but y_pred has {n_pred}; pass exactly one prediction per row")
    if n_true == 0:
        raise ValueError("y_true and y_pred are empty; a metric needs at least one row")


def _vectors(y_true, y_pred, numeric=True):
    """Both inputs as 1-D arrays (an (n, 1) column is accepted), float and NaN-free if numeric."""
    out = []
    for label, y in (("y_true", y_true), ("y_pred", y_pred)):
        a = np.asarray(y, dtype=float if numeric else None)
        if a.ndim == 2 and a.shape[1] == 1:
            a = a[:, 0]
        if a.ndim != 1:
            raise ValueError(
                f"{label} must be 1-D (one value per row), got shape {a.shape}; "
                "use a column-wise metric for several targets"
            )
        if numeric and np.isnan(a).any():
            raise ValueError(f"{label} contains NaN; fill or drop missing values before scoring")
        out.append(a)
    _same_length(len(out[0]), len(out[1]))
    return out


def _check_binary(y, name):
    if not np.isin(y, (0, 1)).all():
        raise ValueError(f"{name} needs y_true in {{0, 1}}; encode the positive class as 1")


def _columnwise(fn, y_true, y_pred):
    """Mean of fn over the columns of two (n, k) arrays (Kaggle's "mean column-wise" scores)."""
    yt, yp = (np.asarray(y, dtype=float) for y in (y_true, y_pred))
    yt, yp = (a[:, None] if a.ndim == 1 else a for a in (yt, yp))
    if yt.ndim != 2 or yt.shape != yp.shape:
        raise ValueError(
            f"y_true {yt.shape} and y_pred {yp.shape} must both be (n_rows, n_targets) "
            "with the target columns in the same order"
        )
    return float(np.mean([fn(yt[:, j], yp[:, j]) for j in range(yt.shape[1])]))


# ----------------------------------------------------------------------------- label metrics
def _confusion(yt, yp):
    """Confusion matrix (rows: true, cols: predicted) over the sorted union of labels."""
    labels, codes = np.unique(np.concatenate([yt, yp]), return_inverse=True)
    c, n = len(labels), len(yt)
    return np.bincount(codes[:n] * c + codes[n:], minlength=c * c).reshape(c, c)


def _fbeta(tp, fp, fn, beta=1.0):
    """F-beta = (1+b^2) tp / ((1+b^2) tp + b^2 fn + fp), 0 where undefined (scikit-learn's zero_division=0)."""
    num = (1.0 + beta**2) * np.asarray(tp, dtype=float)
    den = num + beta**2 * np.asarray(fn, dtype=float) + fp
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


def _f1(tp, fp, fn):
    return _fbeta(tp, fp, fn, 1.0)


def _per_class(y_true, y_pred):
    """Per-class (tp, fp, fn) over the union of labels; of label sets given as 0/1 columns (one per label, rows
    aligned), per column."""
    t, p = np.asarray(y_true), np.asarray(y_pred)
    if t.ndim == 2 and t.shape[1] > 1 and t.shape == p.shape:
        t, p = t.astype(bool), p.astype(bool)
        return (t & p).sum(axis=0), (~t & p).sum(axis=0), (t & ~p).sum(axis=0)
    cm = _confusion(*_vectors(y_true, y_pred, numeric=False))
    tp = np.diag(cm)
    return tp, cm.sum(axis=0) - tp, cm.sum(axis=1) - tp


def accuracy(y_true, y_pred):
    yt, yp = _vectors(y_true, y_pred, numeric=False)
    eq = yt == yp
    if np.shape(eq) != yt.shape:  # numpy refuses to compare e.g. str with int arrays elementwise
        eq = yt.astype(object) == yp.astype(object)
    return float(np.mean(eq))


def _binary_counts(y_true, y_pred, name):
    """(tp, fp, fn) of a binary labelling; the positive class is 1 (numeric/bool labels) or the larger of two."""
    yt, yp = _vectors(y_true, y_pred, numeric=False)
    labels = np.unique(np.concatenate([yt, yp]))
    if len(labels) > 2:
        raise ValueError(f"{name} is binary but found {len(labels)} labels; use {name}_macro or {name}_micro")
    pos = 1 if labels.dtype.kind in "biuf" else labels[-1]
    t, p = yt == pos, yp == pos
    return np.sum(t & p), np.sum(~t & p), np.sum(t & ~p)


def f1(y_true, y_pred):
    """Binary F1; the positive class is 1 (numeric/bool labels) or the larger of two labels."""
    return float(_f1(*_binary_counts(y_true, y_pred, "f1")))


def f2(y_true, y_pred):
    """Binary F-beta with beta = 2 (recall weighs four times precision)."""
    return float(_fbeta(*_binary_counts(y_true, y_pred, "f2"), 2.0))


def f2_macro(y_true, y_pred):
    return float(np.mean(_fbeta(*_per_class(y_true, y_pred), 2.0)))


def f2_micro(y_true, y_pred):
    tp, fp, fn = _per_class(y_true, y_pred)
    return float(_fbeta(tp.sum(), fp.sum(), fn.sum(), 2.0))


def _label_sets(y_true, y_pred):
    """Rows of two multi-label columns as sets of labels ("3 17 42", a list, or one label)."""
    actual, predicted = _rows(y_true), _rows(y_pred)
    _same_length(len(actual), len(predicted))
    return [set(_ranked(a)) for a in actual], [set(_ranked(p)) for p in predicted]


def _fbeta_samples(y_true, y_pred, beta):
    """Per-row F-beta of predicted against true label sets, averaged over rows (scikit-learn's average='samples';
    a row with no true and no predicted labels scores 0, as there)."""
    actual, predicted = _label_sets(y_true, y_pred)
    tp = np.array([len(a & p) for a, p in zip(actual, predicted)])
    fp = np.array([len(p - a) for a, p in zip(actual, predicted)])
    fn = np.array([len(a - p) for a, p in zip(actual, predicted)])
    return float(np.mean(_fbeta(tp, fp, fn, beta)))


def f1_samples(y_true, y_pred):
    return _fbeta_samples(y_true, y_pred, 1.0)


def f2_samples(y_true, y_pred):
    return _fbeta_samples(y_true, y_pred, 2.0)


def f1_macro(y_true, y_pred):
    return float(np.mean(_f1(*_per_class(y_true, y_pred))))


def f1_micro(y_true, y_pred):
    tp, fp, fn = _per_class(y_true, y_pred)
    return float(_f1(tp.sum(), fp.sum(), fn.sum()))


def f1_weighted(y_true, y_pred):
    tp, fp, fn = _per_class(y_true, y_pred)
    return float(np.average(_f1(tp, fp, fn), weights=tp + fn))  # weights = true support


def mcc(y_true, y_pred):
    """Matthews correlation, Gorodkin's multi-class form (binary MCC is the 2x2 case); 0 if undefined."""
    cm = _confusion(*_vectors(y_true, y_pred, numeric=False)).astype(float)
    t, p, n = cm.sum(axis=1), cm.sum(axis=0), cm.sum()
    cov_tp, cov_pp, cov_tt = np.trace(cm) * n - t @ p, n * n - p @ p, n * n - t @ t
    return 0.0 if cov_pp * cov_tt == 0 else float(cov_tp / np.sqrt(cov_tt * cov_pp))


def qwk(y_true, y_pred):
    """Quadratic weighted kappa over the integer range min..max of both inputs (Kaggle's form;
    scikit-learn instead indexes only the labels present, which differs when ratings have gaps)."""
    yt, yp = _vectors(y_true, y_pred)
    if not (np.all(yt == np.round(yt)) and np.all(yp == np.round(yp))):
        raise ValueError("qwk needs integer ratings; round predictions (e.g. np.rint) before scoring")
    lo = min(yt.min(), yp.min())
    r = int(max(yt.max(), yp.max()) - lo) + 1
    if r > 10_000:
        raise ValueError(f"qwk rating range spans {r} values; predictions are probably not on the rating scale")
    yt, yp = (yt - lo).astype(np.int64), (yp - lo).astype(np.int64)
    observed = np.bincount(yt * r + yp, minlength=r * r).reshape(r, r)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / len(yt)
    i = np.arange(r)
    w = (i[:, None] - i[None, :]) ** 2.0  # Kaggle's /(r-1)^2 normalisation cancels in the ratio
    den = (w * expected).sum()
    return 1.0 if den == 0 else float(1.0 - (w * observed).sum() / den)  # den == 0: one rating only


# ----------------------------------------------------------------------------- probability metrics
def _average_ranks(x):
    """1-based ranks with ties sharing their average rank (what makes AUC tie-aware)."""
    _, inv, counts = np.unique(x, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    return ((ends - counts + 1 + ends) / 2.0)[inv]


def roc_auc(y_true, y_pred):
    """Binary ROC AUC via the Mann-Whitney U statistic."""
    yt, yp = _vectors(y_true, y_pred)
    _check_binary(yt, "roc_auc")
    pos = yt == 1
    n_pos, n_neg = pos.sum(), (~pos).sum()
    if n_pos == 0 or n_neg == 0:
        raise ValueError("roc_auc is undefined when y_true holds only one class")
    return float((_average_ranks(yp)[pos].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def _gini_sum(actual, order):
    """Kaggle's Gini: the cumulative share of `actual` taken in `order`, less the share of a random order."""
    share = np.cumsum(actual[order]) / actual.sum()
    return share.sum() / len(actual) - (len(actual) + 1) / (2.0 * len(actual))


def gini(y_true, y_pred):
    """Kaggle's normalized Gini coefficient: 2 * AUC - 1 for 0/1 targets; for other non-negative targets
    Gini(y_true, y_pred) / Gini(y_true, y_true), rows sorted by prediction descending, ties in row order."""
    yt, yp = _vectors(y_true, y_pred)
    if np.isin(yt, (0, 1)).all():
        return 2.0 * roc_auc(yt, yp) - 1.0
    if (yt < 0).any() or yt.sum() == 0:
        raise ValueError("gini needs non-negative y_true with a positive sum (losses, claims, 0/1 outcomes)")
    rows = np.arange(len(yt))
    best = _gini_sum(yt, np.lexsort((rows, -yt)))
    return float(_gini_sum(yt, np.lexsort((rows, -yp))) / best) if best else 0.0


def weighted_auc(y_true, y_pred):
    """Mean of the columns' ROC AUCs weighted by each column's positives (scikit-learn's average='weighted')."""
    yt, yp = (np.asarray(y, dtype=float) for y in (y_true, y_pred))
    yt, yp = (a[:, None] if a.ndim == 1 else a for a in (yt, yp))
    if yt.shape != yp.shape:
        raise ValueError(f"y_true {yt.shape} and y_pred {yp.shape} must both be (n_rows, n_labels)")
    _same_length(len(yt), len(yp))
    weights = yt.sum(axis=0)
    aucs = [roc_auc(yt[:, j], yp[:, j]) if 0 < weights[j] < len(yt) else 0.0 for j in range(yt.shape[1])]
    if weights.sum() == 0:
        raise ValueError("weighted_auc is undefined when no column has a positive row")
    return float(np.average(aucs, weights=weights))


def _power_mean(values, p):
    return float(np.power(np.mean(np.power(np.asarray(values, dtype=float), p)), 1.0 / p))


def subgroup_auc(label, pred, member):
    """AUC within one identity subgroup."""
    return roc_auc(label[member], pred[member])


def bpsn_auc(label, pred, member):
    """Background positive, subgroup negative: the subgroup's negatives against the other rows' positives."""
    rows = (member & (label == 0)) | (~member & (label == 1))
    return roc_auc(label[rows], pred[rows])


def bnsp_auc(label, pred, member):
    """Background negative, subgroup positive: the subgroup's positives against the other rows' negatives."""
    rows = (member & (label == 1)) | (~member & (label == 0))
    return roc_auc(label[rows], pred[rows])


def bias_auc(y_true, y_pred, power=-5.0, weight=0.25):
    """The sub-group AUC family of bias metrics: weight * overall AUC + weight * the power mean (p = -5) of each
    of the subgroup, BPSN and BNSP AUCs over the identity subgroups. y_true: (n, 1 + g), the target then one
    column per identity (both binarised at 0.5; an empty or one-class subgroup is skipped); y_pred: (n,)."""
    yt, yp = np.asarray(y_true, dtype=float), np.asarray(y_pred, dtype=float)
    yp = yp[:, 0] if yp.ndim == 2 and yp.shape[1] == 1 else yp
    if yt.ndim != 2 or yt.shape[1] < 2 or yp.ndim != 1:
        raise ValueError(
            f"bias_auc needs y_true (n, 1 + n_subgroups): the target then the identity columns, and y_pred (n,); "
            f"got {yt.shape} and {yp.shape}"
        )
    _same_length(len(yt), len(yp))
    label, groups = (yt[:, 0] >= 0.5).astype(int), yt[:, 1:] >= 0.5
    parts = [[], [], []]
    for g in range(groups.shape[1]):
        member = groups[:, g]
        for part, fn in zip(parts, (subgroup_auc, bpsn_auc, bnsp_auc)):
            try:
                part.append(fn(label, yp, member))
            except ValueError:  # a subgroup without both classes has no AUC of this kind
                pass
    means = [_power_mean(part, power) for part in parts if part]
    return float(weight * roc_auc(label, yp) + weight * sum(means))


def log_loss(y_true, y_pred):
    """Binary log loss; y_pred = P(y = 1), clipped to [1e-15, 1 - 1e-15]."""
    yt, yp = _vectors(y_true, y_pred)
    _check_binary(yt, "log_loss")
    p = np.clip(yp, 1e-15, 1 - 1e-15)
    return float(-np.mean(yt * np.log(p) + (1 - yt) * np.log(1 - p)))


def _true_class_log_proba(y_true, y_pred) -> tuple[np.ndarray, np.ndarray]:
    """(log-probability of each row's true class, each row's class code). y_true: class codes 0..C-1 (n,) or
    one-hot (n, C); y_pred: (n, C). Probabilities are clipped to [1e-15, 1 - 1e-15] and rows renormalised, as
    Kaggle does."""
    yt, yp = np.asarray(y_true), np.asarray(y_pred, dtype=float)
    if yp.ndim != 2:
        raise ValueError(f"y_pred must be (n_rows, n_classes) probabilities, got shape {yp.shape}")
    if np.isnan(yp).any():
        raise ValueError("y_pred contains NaN; fill or drop missing values before scoring")
    _same_length(len(yt), len(yp))
    p = np.clip(yp, 1e-15, 1 - 1e-15)
    logp = np.log(p / p.sum(axis=1, keepdims=True))
    if yt.ndim == 2:
        if yt.shape != yp.shape:
            raise ValueError(f"one-hot y_true {yt.shape} and y_pred {yp.shape} must have the same shape")
        return np.sum(yt * logp, axis=1), yt.argmax(axis=1)
    if (
        yt.ndim != 1
        or yt.dtype.kind not in "biuf"
        or np.any(yt != np.round(yt))
        or yt.min() < 0
        or yt.max() >= yp.shape[1]
    ):
        raise ValueError(
            f"y_true must be integer class codes 0..{yp.shape[1] - 1} (n,) or one-hot; "
            "map labels to y_pred's column order first"
        )
    codes = yt.astype(np.int64)
    return logp[np.arange(len(yt)), codes], codes


def multi_log_loss(y_true, y_pred):
    """Multi-class log loss. y_true: class codes 0..C-1 (n,) or one-hot (n, C); y_pred: (n, C).
    Probabilities are clipped to [1e-15, 1 - 1e-15] and rows renormalised, as Kaggle does."""
    return float(-np.mean(_true_class_log_proba(y_true, y_pred)[0]))


def balanced_log_loss(y_true, y_pred):
    """Log loss with every class weighing the same: the mean over classes of each class's mean log loss over its
    own rows. y_true: class codes 0..C-1 (n,) or one-hot; y_pred: (n, C) probabilities, or P(class 1) (n,) for two
    classes; clipped and renormalised as multi_log_loss does. A class without rows is left out."""
    yp = np.asarray(y_pred, dtype=float)
    if yp.ndim == 1 or (yp.ndim == 2 and yp.shape[1] == 1):
        yp = np.column_stack([1 - yp.reshape(-1), yp.reshape(-1)])
    logp, codes = _true_class_log_proba(y_true, yp)
    return float(-np.mean([logp[codes == c].mean() for c in np.unique(codes)]))


# ----------------------------------------------------------------------------- regression metrics
def mse(y_true, y_pred):
    yt, yp = _vectors(y_true, y_pred)
    return float(np.mean((yt - yp) ** 2))


def rmse(y_true, y_pred):
    return float(np.sqrt(mse(y_true, y_pred)))


def rmsle(y_true, y_pred):
    """RMSE of log1p values. Values <= -1 raise (Kaggle's grader rejects negatives outright, so
    clip predictions at 0 before submitting)."""
    yt, yp = _vectors(y_true, y_pred)
    if (yt <= -1).any() or (yp <= -1).any():
        raise ValueError("rmsle needs values > -1 (log1p); clip predictions at 0 before scoring")
    return rmse(np.log1p(yt), np.log1p(yp))


def mae(y_true, y_pred):
    yt, yp = _vectors(y_true, y_pred)
    return float(np.mean(np.abs(yt - yp)))


def median_ae(y_true, y_pred):
    yt, yp = _vectors(y_true, y_pred)
    return float(np.median(np.abs(yt - yp)))


def mape(y_true, y_pred):
    """Mean absolute percentage error as a fraction; |y_true| is floored at float64 eps like scikit-learn."""
    yt, yp = _vectors(y_true, y_pred)
    return float(np.mean(np.abs(yt - yp) / np.maximum(np.abs(yt), np.finfo(np.float64).eps)))


def smape(y_true, y_pred):
    """Kaggle's SMAPE in percent: 100/n * sum(2|F - A| / (|A| + |F|)), with 0/0 counted as 0."""
    yt, yp = _vectors(y_true, y_pred)
    num, den = 2.0 * np.abs(yp - yt), np.abs(yt) + np.abs(yp)
    return float(100.0 * np.mean(np.divide(num, den, out=np.zeros_like(num), where=den > 0)))


def rmspe(y_true, y_pred):
    """Root mean squared percentage error as a fraction, over the rows whose true value is not 0 (a percentage of
    0 is undefined; Kaggle's sales competitions ignore those rows)."""
    yt, yp = _vectors(y_true, y_pred)
    scored = yt != 0
    if not scored.any():
        raise ValueError("rmspe needs at least one row whose true value is not 0")
    return float(np.sqrt(np.mean(((yt[scored] - yp[scored]) / yt[scored]) ** 2)))


def r2(y_true, y_pred):
    """Coefficient of determination; a constant y_true gives 1.0 if predicted exactly, else 0.0."""
    yt, yp = _vectors(y_true, y_pred)
    ss_res, ss_tot = np.sum((yt - yp) ** 2), np.sum((yt - yt.mean()) ** 2)
    if ss_tot == 0:
        return 1.0 if ss_res == 0 else 0.0
    return float(1.0 - ss_res / ss_tot)


def pearson(y_true, y_pred):
    """Pearson correlation; 0 when either side is constant (undefined)."""
    yt, yp = _vectors(y_true, y_pred)
    a, b = yt - yt.mean(), yp - yp.mean()
    den = np.sqrt((a * a).sum() * (b * b).sum())
    return float((a * b).sum() / den) if den > 0 else 0.0


def spearman(y_true, y_pred):
    """Spearman rank correlation: Pearson of average ranks (ties share their rank, as scipy does)."""
    yt, yp = _vectors(y_true, y_pred)
    return pearson(_average_ranks(yt), _average_ranks(yp))


def masked_mae(y_true, y_pred, mask=None):
    """MAE over the scored rows only: where mask is true (default: where y_true is known, not NaN)."""
    yt, yp = (np.asarray(y, dtype=float).reshape(len(np.asarray(y)), -1) for y in (y_true, y_pred))
    if yt.shape != yp.shape:
        raise ValueError(f"y_true {yt.shape} and y_pred {yp.shape} must have the same shape")
    _same_length(len(yt), len(yp))
    keep = np.isfinite(yt) if mask is None else np.asarray(mask, dtype=bool).reshape(yt.shape)
    if not keep.any():
        raise ValueError("masked_mae has no scored row: the mask (or the known values of y_true) is empty")
    if np.isnan(yp[keep]).any():
        raise ValueError("y_pred contains NaN on scored rows; predict every scored row")
    return float(np.mean(np.abs(yt[keep] - yp[keep])))


def grouped_log_mae(y_true, y_pred, groups=None):
    """Mean over groups of log(MAE of the group), each MAE floored at 1e-9. groups: one key per row; without it
    each column of (n, k) arrays is a group."""
    yt, yp = (np.asarray(y, dtype=float) for y in (y_true, y_pred))
    if groups is None:
        yt, yp = (a[:, None] if a.ndim == 1 else a for a in (yt, yp))
        if yt.shape != yp.shape:
            raise ValueError(f"y_true {yt.shape} and y_pred {yp.shape} must both be (n_rows, n_groups)")
        _same_length(len(yt), len(yp))
        maes = np.abs(yt - yp).mean(axis=0)
    else:
        yt, yp = _vectors(yt, yp)
        keys = np.asarray(groups)
        if len(keys) != len(yt):
            raise ValueError(f"groups has {len(keys)} entries for {len(yt)} rows; pass one group key per row")
        maes = np.array([np.abs(yt[keys == k] - yp[keys == k]).mean() for k in np.unique(keys)])
    if np.isnan(maes).any():
        raise ValueError("grouped_log_mae got NaN values; fill or drop missing values before scoring")
    return float(np.mean(np.log(np.maximum(maes, 1e-9))))


# ----------------------------------------------------------------------------- ranking metrics
def _rows(y):
    """Per-row entries of a list / Series / array / one-column DataFrame."""
    a = y.to_numpy() if hasattr(y, "to_numpy") else y
    if isinstance(a, np.ndarray) and a.ndim == 2 and a.shape[1] == 1:
        a = a[:, 0]
    return list(a)


def _ranked(row):
    """A row as a list of string labels: space-separated string, sequence, or single label."""
    if isinstance(row, str):
        return row.split()
    if isinstance(row, (list, tuple, np.ndarray)):
        return [str(x) for x in row]
    return [str(row)]


def map_at_k(y_true, y_pred, k=5):
    """Mean average precision @ k (Kaggle's apk/mapk); labels are compared as strings and a
    repeated prediction counts once."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    actual, predicted = _rows(y_true), _rows(y_pred)
    _same_length(len(actual), len(predicted))
    total = 0.0
    for a, p in zip(actual, predicted):
        rel, preds = _ranked(a), _ranked(p)[:k]
        hits, score = 0, 0.0
        for i, x in enumerate(preds):
            if x in rel and x not in preds[:i]:
                hits += 1
                score += hits / (i + 1.0)
        total += score / min(len(rel), k) if rel else 0.0
    return total / len(actual)


def map_at_3(y_true, y_pred):
    return map_at_k(y_true, y_pred, 3)


def map_at_5(y_true, y_pred):
    return map_at_k(y_true, y_pred, 5)


def map_at_10(y_true, y_pred):
    return map_at_k(y_true, y_pred, 10)


# ----------------------------------------------------------------------------- multi-target metrics
def mcrmse(y_true, y_pred):
    return _columnwise(rmse, y_true, y_pred)


def mean_columnwise_rmsle(y_true, y_pred):
    return _columnwise(rmsle, y_true, y_pred)


def lwlrap(y_true, y_pred):
    """Label-weighted label-ranking average precision: for each true label of each row, the share of the labels
    scored at least as high that are true; the mean over all true labels (a row weighs by its number of labels)."""
    yt, yp = (np.asarray(y, dtype=float) for y in (y_true, y_pred))
    if yt.ndim != 2 or yt.shape != yp.shape:
        raise ValueError(f"y_true {yt.shape} and y_pred {yp.shape} must both be (n_rows, n_labels)")
    total, count = 0.0, 0
    for t, p in zip(yt, yp, strict=True):
        pos = np.flatnonzero(t > 0)
        if len(pos) == 0:
            continue
        at_least = p[:, None] >= p[pos][None, :]  # (labels, true labels): scored at least as high as each true one
        total += float(np.sum(at_least[pos].sum(axis=0) / at_least.sum(axis=0)))
        count += len(pos)
    if count == 0:
        raise ValueError("lwlrap is undefined when no row has a true label")
    return total / count


def mean_columnwise_auc(y_true, y_pred):
    return _columnwise(roc_auc, y_true, y_pred)


def mean_columnwise_log_loss(y_true, y_pred):
    return _columnwise(log_loss, y_true, y_pred)


def mean_spearman(y_true, y_pred):
    return _columnwise(spearman, y_true, y_pred)


def mean_pearson(y_true, y_pred):
    return _columnwise(pearson, y_true, y_pred)


# ----------------------------------------------------------------------------- catalogue
def _samples_patterns(beta: str) -> tuple[str, ...]:
    """F-beta averaged over rows (each row's predicted label set against its true one)."""
    f = rf"\bf ?{beta}\b(?: ?score)?"
    return (
        rf"\b(?:sample|example|row|instance)s? (?:based |averaged? )?{f}",
        rf"{f}[^.]{{0,60}}\b(?:per|for each|of each|averaged over|over all|across) "
        r"(?:the )?(?:rows?|samples?|examples?|images?|instances?|ids?)\b",
    )


_CW = r"column ?wise[^.]{0,30}"  # "column-wise <metric>" within one sentence
_OVER_COLUMNS = r"\b[^.]{0,30}\bcolumns?\b"  # "... of each predicted column", "... over all columns"

METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric(
            "accuracy",
            accuracy,
            True,
            "label",
            False,
            (r"\baccuracy\b", r"(?:percentage|proportion|fraction) of [^.]{0,40}\bcorrect"),
        ),
        Metric("f1", f1, True, "label", False, (r"\bf ?1\b", r"\bf ?(?:score|measure)\b")),
        Metric(
            "f1_macro",
            f1_macro,
            True,
            "label",
            False,
            (r"\bmacro (?:averaged? )?f ?(?:1|score)\b", r"\bf ?1\b[^.]{0,20}\bmacro\b"),
            balanced=True,
        ),
        Metric(
            "f1_micro",
            f1_micro,
            True,
            "label",
            False,
            (r"\bmicro (?:averaged? )?f ?(?:1|score)\b", r"\bf ?1\b[^.]{0,20}\bmicro\b"),
        ),
        Metric(
            "f1_weighted",
            f1_weighted,
            True,
            "label",
            False,
            (r"\bweighted (?:averaged? )?f ?(?:1|score)\b", r"\bf ?1\b[^.]{0,20}\bweighted\b"),
        ),
        Metric("f2", f2, True, "label", False, (r"\bf ?2\b", r"\bf ?beta\b[^.]{0,40}\bbeta ?(?:=|of|is) ?2\b")),
        Metric(
            "f2_macro",
            f2_macro,
            True,
            "label",
            False,
            (r"\bmacro (?:averaged? )?f ?2\b", r"\bf ?2\b[^.]{0,20}\bmacro\b"),
            balanced=True,
        ),
        Metric(
            "f2_micro",
            f2_micro,
            True,
            "label",
            False,
            (r"\bmicro (?:averaged? )?f ?2\b", r"\bf ?2\b[^.]{0,20}\bmicro\b"),
        ),
        Metric("f1_samples", f1_samples, True, "label", False, _samples_patterns("1")),
        Metric("f2_samples", f2_samples, True, "label", False, _samples_patterns("2")),
        Metric("mcc", mcc, True, "label", False, (r"\bmatthews'?s? correlation", r"\bmcc\b")),
        Metric("pearson", pearson, True, "value", False, (r"\bpearson",)),
        Metric("spearman", spearman, True, "value", False, (r"\bspearman",)),
        Metric(
            "mean_pearson",
            mean_pearson,
            True,
            "value",
            True,
            (_CW + r"\bpearson", r"(?:mean|average)[^.]{0,40}\bpearson", r"\bpearson[^.]{0,60}\baveraged\b"),
        ),
        Metric(
            "mean_spearman",
            mean_spearman,
            True,
            "value",
            True,
            (
                _CW + r"\bspearman",
                r"(?:mean|average)[^.]{0,40}\bspearman",
                r"\bspearman[^.]{0,80}\b(?:averaged|for each (?:target|column|label|question))\b",
            ),
        ),
        Metric(
            "masked_mae",
            masked_mae,
            False,
            "value",
            False,
            (
                r"\bmasked (?:mae|mean absolute error)\b",
                r"(?:\bmean absolute error|\bmae\b)[^.]{0,120}\b(?:during|only (?:on|for|where|over))\b",
            ),
        ),
        Metric(
            "grouped_log_mae",
            grouped_log_mae,
            False,
            "value",
            True,
            (r"\blog ?\(? ?(?:of (?:the )?)?(?:mean absolute error|mae)\b", r"\blog ?mae\b"),
        ),
        Metric(
            "weighted_auc",
            weighted_auc,
            True,
            "proba",
            True,
            (
                r"\bweighted (?:average of (?:the )?|mean of (?:the )?)?(?:roc )?aucs?\b",
                r"\b(?:roc )?aucs?\b[^.]{0,60}\bweighted by\b",
            ),
        ),
        Metric(
            "bias_auc",
            bias_auc,
            True,
            "proba",
            True,
            (r"\bbpsn\b", r"\bbnsp\b", r"\bsub ?group aucs?\b", r"\bbias(?:ed)? aucs?\b"),
        ),
        Metric(
            "qwk",
            qwk,
            True,
            "label",
            False,
            (
                r"quadratic(?:ally)? weighted (?:cohen'?s )?kappa",
                r"\bqwk\b",
                r"\bweighted kappa\b",
                r"\bquadratic kappa\b",
            ),
        ),
        Metric(
            "roc_auc",
            roc_auc,
            True,
            "proba",
            False,
            (
                r"area under (?:the )?(?:roc|receiver operating)",
                r"\broc\b",
                r"(?<!pr )\bauc\b",
                r"\bauroc\b",
                r"receiver operating characteristic",
            ),
        ),
        Metric("gini", gini, True, "proba", False, (r"\bgini\b",)),
        Metric(
            "log_loss",
            log_loss,
            False,
            "proba",
            False,
            (r"\blog ?loss\b", r"\blogarithmic loss\b", r"\bcross ?entropy\b"),
        ),
        Metric(
            "balanced_log_loss",
            balanced_log_loss,
            False,
            "proba",
            False,
            (
                r"\bbalanced (?:logarithmic loss|log ?loss|cross ?entropy)",
                # a log loss whose formula divides each class's sum by its own count ("... y_ij / N_i ... where N_i is
                # the number of objects in class i"): every class weighs alike, whatever its size. Weights the text
                # gives no values of are taken as equal
                r"(?:log ?loss|logarithmic loss|cross ?entropy)[^#]{0,300}?\bnumber of \w+ (?:in|of|belonging to) "
                r"(?:the |that |each |its )?class\b",
                r"(?:log ?loss|logarithmic loss|cross ?entropy)[^#]{0,300}?\b(?:divided by|normali[sz]ed by|averaged "
                r"over) (?:the )?(?:number|count) of (?:rows|samples|observations|objects|images|examples) (?:in|of) "
                r"(?:the |that |each |its )?class\b",
            ),
            balanced=True,
        ),
        Metric(
            "multi_log_loss",
            multi_log_loss,
            False,
            "proba",
            False,
            (
                r"multi ?class (?:logarithmic loss|log ?loss|cross ?entropy)",
                r"categorical cross ?entropy",
                r"multinomial (?:logarithmic |log ?)?loss",
            ),
        ),
        Metric(
            "rmse", rmse, False, "value", False, (r"\broot mean squared? (?:error|deviation)", r"\brmse\b", r"\brmsd\b")
        ),
        Metric("mse", mse, False, "value", False, (r"\bmean squared? error", r"\bmse\b")),
        Metric(
            "rmsle",
            rmsle,
            False,
            "value",
            False,
            (
                r"root mean squared? log(?:arithmic)? error",
                r"\brmsle\b",
                # an RMSE taken between logarithms ("RMSE between the logarithm of the predicted value and ...",
                # "RMSE of the log-transformed target"): log1p differs from log by < 1/y, nothing at a price's scale
                r"(?:\broot mean squared? (?:error|deviation)|\brmse\b)(?: \([^)]*\))?[^.;]{0,40}?"
                r"\b(?:between|of|on|in|using) (?:the )?(?:natural )?(?:log|logarithms?)\b",
                r"\blog (?:rmse|root mean squared? error)\b",
            ),
        ),
        Metric("mae", mae, False, "value", False, (r"\bmean absolute error", r"\bmae\b")),
        Metric("median_ae", median_ae, False, "value", False, (r"\bmedian absolute error", r"\bmedae\b")),
        Metric("rmspe", rmspe, False, "value", False, (r"\broot mean squared? percent(?:age)? error", r"\brmspe\b")),
        Metric("mape", mape, False, "value", False, (r"\bmean absolute percent(?:age)? error", r"\bmape\b")),
        Metric("smape", smape, False, "value", False, (r"symmetric mean absolute percent(?:age)? error", r"\bsmape\b")),
        Metric(
            "r2",
            r2,
            True,
            "value",
            False,
            (r"coefficient of determination", r"\br ?(?:\^ ?2|²|squared)(?!\w)", r"\br2\b"),
        ),
        Metric(
            "map_at_3", map_at_3, True, "ranking", False, (r"\bmap ?@ ?3\b", r"mean average precision ?(?:@|at) ?3\b")
        ),
        Metric(
            "map_at_5", map_at_5, True, "ranking", False, (r"\bmap ?@ ?5\b", r"mean average precision ?(?:@|at) ?5\b")
        ),
        Metric(
            "map_at_10",
            map_at_10,
            True,
            "ranking",
            False,
            (r"\bmap ?@ ?10\b", r"mean average precision ?(?:@|at) ?10\b"),
        ),
        Metric(
            "mcrmse",
            mcrmse,
            False,
            "value",
            True,
            (
                r"\bmcrmse\b",
                _CW + r"(?:\brmse\b|root mean squared? error)",
                r"(?:mean|average) of the (?:individual )?rmses?" + _OVER_COLUMNS,
            ),
        ),
        Metric(
            "mean_columnwise_rmsle",
            mean_columnwise_rmsle,
            False,
            "value",
            True,
            (
                _CW + r"(?:\brmsle\b|root mean squared? log(?:arithmic)? error)",
                r"(?:mean|average) of the (?:individual )?rmsles?" + _OVER_COLUMNS,
            ),
        ),
        Metric(
            "lwlrap",
            lwlrap,
            True,
            "proba",
            True,
            (r"\blwl ?rap\b", r"label ?weighted label ?ranking average precision"),
        ),
        Metric(
            "mean_columnwise_auc",
            mean_columnwise_auc,
            True,
            "proba",
            True,
            (
                _CW + r"(?:\broc\b|\bauc\b|area under)",
                r"(?:mean|average) of the (?:individual )?(?:roc )?aucs?" + _OVER_COLUMNS,
            ),
        ),
        Metric(
            "mean_columnwise_log_loss",
            mean_columnwise_log_loss,
            False,
            "proba",
            True,
            (
                _CW + r"(?:log ?loss|logarithmic loss|cross ?entropy)",
                r"(?:mean|average) of the (?:individual )?log ?loss(?:es)?" + _OVER_COLUMNS,
            ),
        ),
    )
}

# Most specific first; see the module docstring.
PRIORITY: tuple[str, ...] = (
    "lwlrap",
    "bias_auc",
    "weighted_auc",
    "mean_spearman",
    "mean_pearson",
    "grouped_log_mae",
    "masked_mae",
    "mean_columnwise_rmsle",
    "mean_columnwise_log_loss",
    "mean_columnwise_auc",
    "mcrmse",
    "map_at_3",
    "map_at_5",
    "map_at_10",
    "smape",
    "rmspe",
    "mape",
    "median_ae",
    "rmsle",
    "rmse",
    "mse",
    "mae",
    "balanced_log_loss",
    "multi_log_loss",
    "log_loss",
    "gini",
    "roc_auc",
    "qwk",
    "mcc",
    "spearman",
    "pearson",
    "f1_samples",
    "f2_samples",
    "f2_macro",
    "f2_micro",
    "f1_macro",
    "f1_micro",
    "f1_weighted",
    "f2",
    "f1",
    "r2",
    "accuracy",
)
assert sorted(PRIORITY) == sorted(METRICS), "PRIORITY must list every metric exactly once"

# metrics that count each label's hits and misses (_per_class): label sets ("3 17 42") are scored per label, as 0/1
# columns, not as one class per distinct set
PER_LABEL = {"f1_macro", "f1_micro", "f1_weighted", "f2_macro", "f2_micro"}

# single-target metric -> its column-wise form, for submissions with several target columns
COLUMNWISE = {
    "roc_auc": "mean_columnwise_auc",
    "log_loss": "mean_columnwise_log_loss",
    "rmse": "mcrmse",
    "rmsle": "mean_columnwise_rmsle",
    "spearman": "mean_spearman",
    "pearson": "mean_pearson",
    "mae": "grouped_log_mae",
}
assert set(COLUMNWISE.values()) <= set(METRICS), "metric catalogue lacks a column-wise metric"

# metrics of the error between log1p values: their targets are learnt as log1p(y) (the target transform's SPEC "log",
# for every kind of solution), where a squared error is theirs (a skewed value: RMSLE 1.46 learnt raw, 0.92 as log1p;
# benchmarks/metric_fit.py)
LOG_ERROR = {"rmsle", "mean_columnwise_rmsle"}
assert LOG_ERROR <= set(METRICS)

# metric of an error relative to the true value -> the power of 1/|y| that weighs each row's error: the row weights
# under which a squared (RMSPE) or absolute (MAPE) error is the metric's, and its best constant the weighted mean or
# median (RMSPE's sum(1/y) / sum(1/y^2), far below the mean where values spread: the light solve's mean or median
# scored 0.57 where that scored 0.48, optiver-like)
RELATIVE_ERROR = {"rmspe": 2, "mape": 1}
assert set(RELATIVE_ERROR) <= set(METRICS)


def relative_weights(name: str, y) -> np.ndarray | None:
    """Each row's weight under a relative-error metric (1/|y|^power; 0 where y is 0, a row RMSPE leaves out), scaled
    to mean 1 over the weighed rows; None for other metrics."""
    if name not in RELATIVE_ERROR:
        return None
    y = np.abs(np.asarray(y, dtype=float))
    w = np.zeros(len(y))
    kept = np.isfinite(y) & (y > np.finfo(float).eps)
    w[kept] = y[kept] ** -float(RELATIVE_ERROR[name])
    return w / w[kept].mean() if kept.any() else None


# metric reading columns beside the target (identity sub-groups, a mask of the scored rows) -> the metric of the
# target alone that it refines: what a scorer that sees only the target (AutoGluon's) optimises instead
TARGET_ALONE = {"bias_auc": "roc_auc", "masked_mae": "mae"}
assert all(METRICS[a].higher_is_better == METRICS[b].higher_is_better for a, b in TARGET_ALONE.items())


def _normalise(text):
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # [anchor](url) -> anchor
    text = re.sub(r"https?://\S+", " ", text).lower()
    text = re.sub(r"[-_\u2010-\u2015]", " ", text)  # "column-wise", "F1-score", "log_loss"
    return re.sub(r"\s+", " ", text)


def find_metric(text: str) -> Metric | None:
    """The metric an evaluation text names (first hit in PRIORITY order), or None."""
    t = _normalise(text)
    for name in PRIORITY:
        if any(re.search(p, t) for p in METRICS[name].patterns):
            return METRICS[name]
    return None


# ----------------------------------------------------------------------------- source export
def _global_names(code):
    """Names a code object (and its nested lambdas/comprehensions) looks up."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def metric_source(name: str) -> str:
    """Standalone source defining `score(y_true, y_pred)` for a metric: numpy import, the
    metric function and every helper of this module it calls (found by walking code objects)."""
    if name not in METRICS:
        raise ValueError(f"unknown metric {name!r}; known: {', '.join(sorted(METRICS))}")
    metric, funcs = METRICS[name], {}

    def visit(f):
        if f.__name__ not in funcs:
            funcs[f.__name__] = f
            for n in sorted(_global_names(f.__code__)):
                g = globals().get(n)
                if inspect.isfunction(g) and g.__module__ == __name__:
                    visit(g)

    visit(metric.fn)
    header = (
        f"# Kaggle metric {name!r} ({'higher' if metric.higher_is_better else 'lower'} is better), "
        "generated from tools/metrics.py; needs only numpy.\nimport numpy as np"
    )
    body = [inspect.getsource(f).rstrip() for f in reversed(funcs.values())]
    return "\n\n\n".join([header, *body, f"score = {metric.fn.__name__}"]) + "\n"
