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
  column-wise variants > MAP@k > regression (smape > mape, rmsle > rmse > mse)
  > multi_log_loss > log_loss > gini > roc_auc > qwk > mcc > averaged f1s > f1
  > r2 > accuracy (last, because "accuracy" is also used loosely in prose).
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


def _f1(tp, fp, fn):
    """F1 = 2tp / (2tp + fp + fn), 0 where undefined (scikit-learn's zero_division=0)."""
    num = 2.0 * np.asarray(tp)
    den = num + fp + fn
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


def _per_class(y_true, y_pred):
    """Per-class (tp, fp, fn) over the union of labels."""
    cm = _confusion(*_vectors(y_true, y_pred, numeric=False))
    tp = np.diag(cm)
    return tp, cm.sum(axis=0) - tp, cm.sum(axis=1) - tp


def accuracy(y_true, y_pred):
    yt, yp = _vectors(y_true, y_pred, numeric=False)
    eq = yt == yp
    if np.shape(eq) != yt.shape:  # numpy refuses to compare e.g. str with int arrays elementwise
        eq = yt.astype(object) == yp.astype(object)
    return float(np.mean(eq))


def f1(y_true, y_pred):
    """Binary F1; the positive class is 1 (numeric/bool labels) or the larger of two labels."""
    yt, yp = _vectors(y_true, y_pred, numeric=False)
    labels = np.unique(np.concatenate([yt, yp]))
    if len(labels) > 2:
        raise ValueError(f"f1 is binary but found {len(labels)} labels; use f1_macro, f1_micro or f1_weighted")
    pos = 1 if labels.dtype.kind in "biuf" else labels[-1]
    t, p = yt == pos, yp == pos
    return float(_f1(np.sum(t & p), np.sum(~t & p), np.sum(t & ~p)))


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


def gini(y_true, y_pred):
    """Kaggle's normalized Gini coefficient, which equals 2 * AUC - 1."""
    return 2.0 * roc_auc(y_true, y_pred) - 1.0


def log_loss(y_true, y_pred):
    """Binary log loss; y_pred = P(y = 1), clipped to [1e-15, 1 - 1e-15]."""
    yt, yp = _vectors(y_true, y_pred)
    _check_binary(yt, "log_loss")
    p = np.clip(yp, 1e-15, 1 - 1e-15)
    return float(-np.mean(yt * np.log(p) + (1 - yt) * np.log(1 - p)))


def multi_log_loss(y_true, y_pred):
    """Multi-class log loss. y_true: class codes 0..C-1 (n,) or one-hot (n, C); y_pred: (n, C).
    Probabilities are clipped to [1e-15, 1 - 1e-15] and rows renormalised, as Kaggle does."""
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
        return float(-np.mean(np.sum(yt * logp, axis=1)))
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
    return float(-np.mean(logp[np.arange(len(yt)), yt.astype(np.int64)]))


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


def r2(y_true, y_pred):
    """Coefficient of determination; a constant y_true gives 1.0 if predicted exactly, else 0.0."""
    yt, yp = _vectors(y_true, y_pred)
    ss_res, ss_tot = np.sum((yt - yp) ** 2), np.sum((yt - yt.mean()) ** 2)
    if ss_tot == 0:
        return 1.0 if ss_res == 0 else 0.0
    return float(1.0 - ss_res / ss_tot)


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


# ----------------------------------------------------------------------------- multi-target metrics
def mcrmse(y_true, y_pred):
    return _columnwise(rmse, y_true, y_pred)


def mean_columnwise_rmsle(y_true, y_pred):
    return _columnwise(rmsle, y_true, y_pred)


def mean_columnwise_auc(y_true, y_pred):
    return _columnwise(roc_auc, y_true, y_pred)


def mean_columnwise_log_loss(y_true, y_pred):
    return _columnwise(log_loss, y_true, y_pred)


# ----------------------------------------------------------------------------- catalogue
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
        Metric("mcc", mcc, True, "label", False, (r"\bmatthews'?s? correlation", r"\bmcc\b")),
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
        Metric("rmsle", rmsle, False, "value", False, (r"root mean squared? log(?:arithmic)? error", r"\brmsle\b")),
        Metric("mae", mae, False, "value", False, (r"\bmean absolute error", r"\bmae\b")),
        Metric("median_ae", median_ae, False, "value", False, (r"\bmedian absolute error", r"\bmedae\b")),
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
    "mean_columnwise_rmsle",
    "mean_columnwise_log_loss",
    "mean_columnwise_auc",
    "mcrmse",
    "map_at_3",
    "map_at_5",
    "smape",
    "mape",
    "median_ae",
    "rmsle",
    "rmse",
    "mse",
    "mae",
    "multi_log_loss",
    "log_loss",
    "gini",
    "roc_auc",
    "qwk",
    "mcc",
    "f1_macro",
    "f1_micro",
    "f1_weighted",
    "f1",
    "r2",
    "accuracy",
)
assert sorted(PRIORITY) == sorted(METRICS), "PRIORITY must list every metric exactly once"

# single-target metric -> its column-wise form, for submissions with several target columns
COLUMNWISE = {
    "roc_auc": "mean_columnwise_auc",
    "log_loss": "mean_columnwise_log_loss",
    "rmse": "mcrmse",
    "rmsle": "mean_columnwise_rmsle",
}
assert set(COLUMNWISE.values()) <= set(METRICS), "metric catalogue lacks a column-wise metric"


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
