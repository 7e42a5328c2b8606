"""tools.metrics: numpy metrics vs scikit-learn / hand-computed values, find_metric, metric_source."""

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as skm

from tools.metrics import LOG_ERROR, METRICS, PRIORITY, find_metric, map_at_k, metric_source

SEEDS = (0, 1, 2)
close = np.testing.assert_allclose


def sample(name, seed=0, n=60):
    """Valid (y_true, y_pred) for a catalogue metric, with every class/rating present."""
    rng = np.random.default_rng(seed)
    m = METRICS[name]
    if name in ("f1_samples", "f2_samples"):
        labels = list("abcdefg")
        return (
            [" ".join(rng.choice(labels, rng.integers(1, 4), replace=False)) for _ in range(n)],
            [" ".join(rng.choice(labels, rng.integers(0, 4), replace=False)) for _ in range(n)],
        )
    if name == "bias_auc":
        yt = np.column_stack([np.arange(n) % 2, rng.random((n, 3)) < 0.4]).astype(float)
        return yt, rng.uniform(0.01, 0.99, n)
    if name.startswith("map_at"):
        labels = list("abcdefg")
        return (
            [" ".join(rng.choice(labels, rng.integers(1, 3), replace=False)) for _ in range(n)],
            [list(rng.choice(labels, 5, replace=False)) for _ in range(n)],
        )
    if m.multi_target:
        if m.prediction == "proba":
            yt = np.stack([rng.permutation(np.arange(n) % 2) for _ in range(3)], axis=1)
            return yt, rng.uniform(0.01, 0.99, (n, 3))
        return rng.uniform(0, 5, (n, 3)), rng.uniform(0, 5, (n, 3))
    if name == "multi_log_loss":
        return np.arange(n) % 4, rng.dirichlet(np.ones(4), n)
    if m.prediction == "proba":
        return np.arange(n) % 2, rng.uniform(0.01, 0.99, n)
    if m.prediction == "label":
        k = 2 if name in ("f1", "f2") else 5
        return np.arange(n) % k, np.where(rng.random(n) < 0.6, np.arange(n) % k, rng.integers(0, k, n))
    return rng.uniform(0.1, 10, n), rng.uniform(0.1, 10, n)


# ----------------------------------------------------------------------------- agreement with scikit-learn
def _labels(seed, k, n=300):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    return y, np.where(rng.random(n) < 0.5, y, rng.integers(0, k, n))


@pytest.mark.parametrize("seed", SEEDS)
def test_label_metrics_match_sklearn(seed):
    yt, yp = _labels(seed, 5)
    close(METRICS["accuracy"].fn(yt, yp), skm.accuracy_score(yt, yp), rtol=1e-12)
    for avg in ("macro", "micro", "weighted"):
        close(METRICS[f"f1_{avg}"].fn(yt, yp), skm.f1_score(yt, yp, average=avg), rtol=1e-9)
    close(METRICS["mcc"].fn(yt, yp), skm.matthews_corrcoef(yt, yp), rtol=1e-9)
    close(METRICS["qwk"].fn(yt, yp), skm.cohen_kappa_score(yt, yp, weights="quadratic"), rtol=1e-9)
    bt, bp = _labels(seed, 2)
    close(METRICS["f1"].fn(bt, bp), skm.f1_score(bt, bp), rtol=1e-9)
    close(METRICS["mcc"].fn(bt, bp), skm.matthews_corrcoef(bt, bp), rtol=1e-9)
    # string / bool labels: positive class is the larger label, True for booleans
    st, sp = np.array(["no", "yes"])[bt], np.array(["no", "yes"])[bp]
    close(METRICS["f1"].fn(list(st), pd.Series(sp)), skm.f1_score(st, sp, pos_label="yes"), rtol=1e-9)
    close(METRICS["f1"].fn(bt.astype(bool), bp.astype(bool)), skm.f1_score(bt, bp), rtol=1e-9)
    close(METRICS["accuracy"].fn(pd.Series(st), list(sp)), skm.accuracy_score(st, sp), rtol=1e-12)
    # a predicted label absent from y_true still counts in the macro average, like scikit-learn
    close(METRICS["f1_macro"].fn(yt % 4, yp), skm.f1_score(yt % 4, yp, average="macro"), rtol=1e-9)


@pytest.mark.parametrize("seed", SEEDS)
def test_probability_metrics_match_sklearn(seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, 400)
    p = rng.uniform(0.01, 0.99, 400)
    tied = np.round(p, 1)  # many ties: AUC must use average ranks
    for scores in (p, tied):
        close(METRICS["roc_auc"].fn(y, scores), skm.roc_auc_score(y, scores), rtol=1e-9)
        close(METRICS["gini"].fn(y, scores), 2 * skm.roc_auc_score(y, scores) - 1, rtol=1e-9)
    close(METRICS["log_loss"].fn(y, p), skm.log_loss(y, p), rtol=1e-9)
    codes = rng.integers(0, 6, 400)
    probs = rng.dirichlet(np.ones(6), 400)
    expected = skm.log_loss(codes, probs, labels=range(6))
    close(METRICS["multi_log_loss"].fn(codes, probs), expected, rtol=1e-9)
    close(METRICS["multi_log_loss"].fn(np.eye(6)[codes], pd.DataFrame(probs)), expected, rtol=1e-9)


@pytest.mark.parametrize("classes", [2, 4])
def test_balanced_log_loss_is_log_loss_weighing_each_class_the_same(classes):
    rng = np.random.default_rng(classes)
    codes = rng.choice(classes, 400, p=np.r_[0.7, np.full(classes - 1, 0.3 / (classes - 1))])
    probs = rng.dirichlet(np.ones(classes), 400)
    weight = 1 / np.bincount(codes)[codes]
    expected = skm.log_loss(codes, probs, sample_weight=weight, labels=range(classes))
    close(METRICS["balanced_log_loss"].fn(codes, probs), expected, rtol=1e-9)
    assert abs(expected - skm.log_loss(codes, probs)) > 1e-3  # the weighting matters on these rows
    if classes == 2:  # P(class 1) alone scores the same as both columns
        close(METRICS["balanced_log_loss"].fn(codes, probs[:, 1]), expected, rtol=1e-9)


def test_multi_log_loss_clips_then_renormalises_rows():
    # row 1: [2, 2] renormalises to [0.5, 0.5] -> -ln 0.5; row 2: 0 clips to 1e-15, row sum 1 + 1e-15
    got = METRICS["multi_log_loss"].fn([0, 1], [[2.0, 2.0], [1.0, 0.0]])
    close(got, (np.log(2) + np.log((1 + 1e-15) / 1e-15)) / 2, rtol=1e-9)


@pytest.mark.parametrize("seed", SEEDS)
def test_regression_metrics_match_sklearn(seed):
    rng = np.random.default_rng(seed)
    y, p = rng.lognormal(1, 1, 300), rng.lognormal(1, 1, 300)
    y[:3] = 0.0  # exercises MAPE's eps floor
    expected = {
        "mse": skm.mean_squared_error(y, p),
        "rmse": skm.root_mean_squared_error(y, p),
        "rmsle": np.sqrt(skm.mean_squared_log_error(y, p)),
        "mae": skm.mean_absolute_error(y, p),
        "median_ae": skm.median_absolute_error(y, p),
        "mape": skm.mean_absolute_percentage_error(y, p),
        "r2": skm.r2_score(y, p),
    }
    for name, value in expected.items():
        close(METRICS[name].fn(pd.Series(y), list(p)), value, rtol=1e-9, err_msg=name)
    scored = y != 0  # RMSPE leaves out the rows whose true value is 0
    close(METRICS["rmspe"].fn(y, p), skm.root_mean_squared_error(np.ones(scored.sum()), p[scored] / y[scored]))
    Y, P = rng.uniform(0, 9, (300, 3)), rng.uniform(0, 9, (300, 3))
    close(METRICS["mcrmse"].fn(Y, P), skm.root_mean_squared_error(Y, P), rtol=1e-9)
    close(METRICS["mean_columnwise_rmsle"].fn(Y, P), skm.root_mean_squared_log_error(Y, P), rtol=1e-9)
    B = rng.integers(0, 2, (300, 3))
    close(METRICS["mean_columnwise_auc"].fn(B, P / 9), skm.roc_auc_score(B, P / 9, average="macro"), rtol=1e-9)
    close(
        METRICS["mean_columnwise_log_loss"].fn(pd.DataFrame(B), P / 9),
        np.mean([skm.log_loss(B[:, j], P[:, j] / 9) for j in range(3)]),
        rtol=1e-9,
    )


# ----------------------------------------------------------------------------- hand-computed values
def test_hand_computed_values():
    m = {k: v.fn for k, v in METRICS.items()}
    # pairs (pos, neg): 0.35>0.1 win, 0.35<0.4 loss, 0.8 wins both -> AUC 3/4, gini 2*0.75-1
    close(m["gini"]([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]), 0.5, rtol=1e-12)
    # 100/3 * (2*10/210 + 0 (0/0) + 2*50/50)
    close(m["smape"]([100, 0, 50], [110, 0, 0]), 69.84126984126983, rtol=1e-12)
    # column 0 errors (0, 0) -> 0; column 1 errors (2, 0) -> sqrt(4/2); mean = sqrt(2)/2
    close(m["mcrmse"]([[1, 2], [3, 4]], [[1, 4], [3, 4]]), 0.7071067811865476, rtol=1e-12)
    # column 0: log1p(e-1) - log1p(0) = 1 on both rows -> 1; column 1 exact -> 0; mean 0.5
    close(m["mean_columnwise_rmsle"]([[0, 0], [0, 0]], [[np.e - 1, 0], [np.e - 1, 0]]), 0.5, rtol=1e-12)
    # column 0 AUC 3/4 (as above), column 1 perfectly separated -> 1; mean 0.875
    close(
        m["mean_columnwise_auc"]([[0, 1], [0, 0], [1, 1], [1, 0]], [[0.1, 0.9], [0.4, 0.1], [0.35, 0.8], [0.8, 0.2]]),
        0.875,
        rtol=1e-12,
    )
    # column 0: -ln 0.5 on both rows; column 1 exact (clipped, ~1e-15); mean ln(2)/2
    close(m["mean_columnwise_log_loss"]([[1, 1], [0, 0]], [[0.5, 1], [0.5, 0]]), 0.34657359027997264, rtol=1e-9)
    # Kaggle's range 0..3 although 2 is never used; w = (i-j)^2. sum(w*O) = (1-3)^2 = 4 (1 predicted as 3);
    # E = outer(true hist [1,1,0,1], pred hist [1,0,0,2]) / 3, sum(w*E) = (2*9 + 1 + 2*4 + 9) / 3 = 12
    # -> 1 - 4/12. (scikit-learn weights by label index instead, (0,1,2) here, and gets 0.8.)
    close(m["qwk"]([0, 1, 3], [0, 3, 3]), 0.6666666666666667, rtol=1e-12)


def test_map_at_k():
    yt, yp = ["a", "b c", "d"], ["a b c", "c x b", "x y z d"]
    # row 1: hit at rank 1 -> 1; row 2: c@1 (1/1), b@3 (2/3) -> (1 + 2/3) / min(2, k) = 5/6;
    # row 3: d at rank 4 -> 0 for k=3, 1/4 for k=5
    close(map_at_k(yt, yp, k=3), (1 + 5 / 6 + 0) / 3, rtol=1e-12)  # 0.6111...
    close(METRICS["map_at_3"].fn(yt, yp), 0.6111111111111112, rtol=1e-12)
    close(METRICS["map_at_5"].fn(pd.Series(yt), pd.Series(yp)), 0.6944444444444444, rtol=1e-12)  # (1+5/6+1/4)/3
    # int labels vs lists; repeated predictions count once: row 1 -> 3@2 = 1/2, row 2 -> 1@3 = 1/3
    close(map_at_k([3, 1], [[1, 3, 3], [2, 2, 1]], k=3), 0.41666666666666663, rtol=1e-12)
    close(map_at_k([[]], [["a"]]), 0.0)  # no relevant labels scores 0, like Kaggle's apk


@pytest.mark.parametrize("name", sorted(METRICS))
def test_higher_is_better_flag(name):
    metric = METRICS[name]
    yt, yp = sample(name)
    if name == "multi_log_loss":
        perfect = np.eye(4)[yt]
    elif metric.prediction == "ranking":
        perfect = [row.split() for row in yt]
    elif name == "bias_auc":
        perfect = yt[:, 0]
    else:
        perfect = yt
    better, worse = (metric.fn(yt, perfect), metric.fn(yt, yp))
    assert (better > worse) == metric.higher_is_better, (better, worse)


def _label_strings(seed, n=200, k=8):
    rng = np.random.default_rng(seed)
    labels = [str(i) for i in range(k)]
    truth = [" ".join(rng.choice(labels, rng.integers(1, 4), replace=False)) for _ in range(n)]
    guess = [" ".join(rng.choice(labels, rng.integers(1, 4), replace=False)) for _ in range(n)]
    return truth, guess


@pytest.mark.parametrize("seed", SEEDS)
def test_fbeta_family_matches_sklearn(seed):
    from sklearn.preprocessing import MultiLabelBinarizer

    bt, bp = _labels(seed, 2)
    close(METRICS["f2"].fn(bt, bp), skm.fbeta_score(bt, bp, beta=2), rtol=1e-9)
    yt, yp = _labels(seed, 5)
    for avg in ("macro", "micro"):
        close(METRICS[f"f2_{avg}"].fn(yt, yp), skm.fbeta_score(yt, yp, beta=2, average=avg), rtol=1e-9)
    truth, guess = _label_strings(seed)
    binarise = MultiLabelBinarizer(classes=[str(i) for i in range(8)]).fit([[]])
    t, g = (binarise.transform([row.split() for row in rows]) for rows in (truth, guess))
    for beta, name in ((1, "f1_samples"), (2, "f2_samples")):
        close(METRICS[name].fn(truth, guess), skm.fbeta_score(t, g, beta=beta, average="samples"), rtol=1e-9)


@pytest.mark.parametrize("seed", SEEDS)
def test_per_label_metrics_score_label_sets_as_0_1_columns_as_sklearn_does(seed):
    """Label sets ("3 17 42") given as one 0/1 column per label: macro, micro and weighted F-scores per label, as
    scikit-learn's multi-label averages (a set is no class of its own)."""
    from sklearn.preprocessing import MultiLabelBinarizer

    truth, guess = _label_strings(seed)
    binarise = MultiLabelBinarizer(classes=[str(i) for i in range(8)]).fit([[]])
    t, g = (binarise.transform([row.split() for row in rows]) for rows in (truth, guess))
    for avg in ("macro", "micro", "weighted"):
        close(METRICS[f"f1_{avg}"].fn(t, g), skm.f1_score(t, g, average=avg, zero_division=0), rtol=1e-9)
    for avg in ("macro", "micro"):
        close(METRICS[f"f2_{avg}"].fn(t, g), skm.fbeta_score(t, g, beta=2, average=avg, zero_division=0), rtol=1e-9)


def test_fbeta_samples_by_hand():
    # row 1: {a, b} vs {a}: p = 1, r = 1/2 -> F1 2/3, F2 5/9; row 2: {c} vs {c, d}: p = 1/2, r = 1 -> F1 2/3, F2 5/6
    truth, guess = ["a b", "c"], ["a", "c d"]
    close(METRICS["f1_samples"].fn(truth, guess), 2 / 3, rtol=1e-12)
    close(METRICS["f2_samples"].fn(pd.Series(truth), pd.Series(guess)), (5 / 9 + 5 / 6) / 2, rtol=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_correlations_match_scipy(seed):
    from scipy import stats

    rng = np.random.default_rng(seed)
    yt = rng.normal(size=(150, 3))
    yp = yt + rng.normal(size=(150, 3))
    yp[:, 1] = np.round(yp[:, 1])  # ties: spearman shares ranks like scipy
    close(METRICS["pearson"].fn(yt[:, 0], yp[:, 0]), stats.pearsonr(yt[:, 0], yp[:, 0])[0], rtol=1e-9)
    close(METRICS["spearman"].fn(yt[:, 1], yp[:, 1]), stats.spearmanr(yt[:, 1], yp[:, 1])[0], rtol=1e-9)
    close(
        METRICS["mean_spearman"].fn(yt, yp),
        np.mean([stats.spearmanr(yt[:, j], yp[:, j])[0] for j in range(3)]),
        rtol=1e-9,
    )
    close(
        METRICS["mean_pearson"].fn(yt, yp),
        np.mean([stats.pearsonr(yt[:, j], yp[:, j])[0] for j in range(3)]),
        rtol=1e-9,
    )
    assert METRICS["pearson"].fn([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]) == 0.0  # constant side: undefined, scored 0


def _kaggle_gini(actual, pred):
    """The normalized Gini of Kaggle's forums: sort by prediction descending, ties by row order."""

    def g(a, p):
        order = np.lexsort((np.arange(len(a)), -np.asarray(p)))
        cum = np.cumsum(np.asarray(a, dtype=float)[order])
        return (cum / cum[-1]).sum() / len(a) - (len(a) + 1) / 2.0 / len(a)

    return g(actual, pred) / g(actual, actual)


@pytest.mark.parametrize("seed", SEEDS)
def test_gini_and_weighted_auc_match_references(seed):
    rng = np.random.default_rng(seed)
    bt, score = rng.integers(0, 2, 200), rng.random(200)
    close(METRICS["gini"].fn(bt, score), 2 * skm.roc_auc_score(bt, score) - 1, rtol=1e-9)
    claims = rng.gamma(1.0, 2.0, 200) * (rng.random(200) < 0.3)
    guess = claims + rng.normal(0, 2, 200)
    close(METRICS["gini"].fn(claims, guess), _kaggle_gini(claims, guess), rtol=1e-9)
    # hand-computed: actual [0, 1, 2], predicted in the reverse order of the truth -> Gini(-) / Gini(max) = -1
    close(METRICS["gini"].fn([0, 1, 2], [3, 2, 1]), -1.0, rtol=1e-12)
    yt = (rng.random((200, 4)) < [0.1, 0.3, 0.5, 0.2]).astype(int)
    yp = yt * 0.3 + rng.random((200, 4))
    close(METRICS["weighted_auc"].fn(yt, yp), skm.roc_auc_score(yt, yp, average="weighted"), rtol=1e-9)


@pytest.mark.parametrize("seed", SEEDS)
def test_lwlrap_is_sklearns_label_ranking_average_precision_weighted_by_each_rows_labels(seed):
    rng = np.random.default_rng(seed)
    yt = (rng.random((80, 7)) < 0.3).astype(int)
    yt[0] = 0  # a row without labels counts for nothing
    yp = rng.random((80, 7)).round(1)  # ties too
    rows = yt.sum(axis=1) > 0
    expected = skm.label_ranking_average_precision_score(yt[rows], yp[rows], sample_weight=yt.sum(axis=1)[rows])
    close(METRICS["lwlrap"].fn(yt, yp), expected, rtol=1e-12)
    close(METRICS["lwlrap"].fn(yt, yt + 0.0), 1.0, rtol=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_masked_and_grouped_mae_match_sklearn(seed):
    rng = np.random.default_rng(seed)
    yt, yp = rng.normal(size=300), rng.normal(size=300)
    mask = rng.random(300) < 0.4
    close(METRICS["masked_mae"].fn(np.where(mask, yt, np.nan), yp), skm.mean_absolute_error(yt[mask], yp[mask]))
    from tools.metrics import grouped_log_mae, masked_mae

    close(masked_mae(yt, yp, mask), skm.mean_absolute_error(yt[mask], yp[mask]), rtol=1e-12)
    groups = rng.choice(["1JHC", "2JHH", "3JHN"], 300)
    want = np.mean([np.log(skm.mean_absolute_error(yt[groups == k], yp[groups == k])) for k in np.unique(groups)])
    close(grouped_log_mae(yt, yp, groups), want, rtol=1e-12)
    cols = rng.normal(size=(300, 3))
    close(
        METRICS["grouped_log_mae"].fn(cols, cols + 0.5),
        np.log(0.5),
        rtol=1e-9,  # every group's MAE is 0.5
    )
    assert METRICS["grouped_log_mae"].fn(cols, cols) == pytest.approx(np.log(1e-9))  # perfect: floored


def _bias_reference(label, pred, groups):
    """Kaggle's unintended-bias metric written from its definition with scikit-learn's AUC."""
    parts = {"sub": [], "bpsn": [], "bnsp": []}
    for g in groups.T:
        rows = {
            "sub": g,
            "bpsn": (g & (label == 0)) | (~g & (label == 1)),
            "bnsp": (g & (label == 1)) | (~g & (label == 0)),
        }
        for k, r in rows.items():
            parts[k].append(skm.roc_auc_score(label[r], pred[r]))
    power = [np.mean(np.power(v, -5.0)) ** (1 / -5.0) for v in parts.values()]
    return 0.25 * skm.roc_auc_score(label, pred) + 0.25 * sum(power)


@pytest.mark.parametrize("seed", SEEDS)
def test_bias_auc_matches_its_definition(seed):
    rng = np.random.default_rng(seed)
    n = 400
    label = (rng.random(n) < 0.3).astype(int)
    groups = rng.random((n, 3)) < [0.2, 0.3, 0.1]
    pred = np.clip(label * 0.4 + rng.random(n) * 0.6 - groups[:, 0] * 0.2, 0, 1)  # subgroup 0 is under-scored
    yt = np.column_stack([label * rng.uniform(0.5, 1, n), groups * 1.0])  # a toxicity fraction, binarised at 0.5
    close(METRICS["bias_auc"].fn(yt, pred), _bias_reference(label, pred, groups), rtol=1e-9)
    from tools.metrics import bnsp_auc, bpsn_auc, subgroup_auc

    g = groups[:, 0]
    # the subgroup is scored lower: its positives rank below the background's negatives more often (BNSP drops),
    # its negatives below the background's positives more often (BPSN rises)
    assert bnsp_auc(label, pred, g) < subgroup_auc(label, pred, g) < bpsn_auc(label, pred, g)


# ----------------------------------------------------------------------------- input validation
@pytest.mark.parametrize("name", sorted(METRICS))
def test_mismatched_lengths_raise(name):
    yt, yp = sample(name)
    with pytest.raises(ValueError) as err:
        METRICS[name].fn(yt, yp[:-1])
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    "name, y_true, y_pred, match",
    [
        ("rmse", [1.0, 2.0], [[1.0, 2.0], [3.0, 4.0]], "1-D"),
        ("rmse", [1.0, 2.0], [1.0, np.nan], "NaN"),
        ("rmsle", [1.0, 2.0], [1.0, -1.5], "> -1"),
        ("f1", [0, 1, 2], [0, 1, 2], "f1_macro"),
        ("roc_auc", [0, 1, 2], [0.1, 0.5, 0.9], r"\{0, 1\}"),
        ("roc_auc", [1, 1], [0.1, 0.9], "one class"),
        ("qwk", [1, 2], [1.4, 2.0], "integer"),
        ("multi_log_loss", [0, 1], [0.2, 0.8], "n_classes"),
        ("multi_log_loss", [0, 3], [[0.5, 0.5], [0.5, 0.5]], "class codes"),
        ("multi_log_loss", ["a", "b"], [[0.5, 0.5], [0.5, 0.5]], "class codes"),
        ("mcrmse", [[1.0, 2.0]], [[1.0, 2.0, 3.0]], "n_targets"),
        ("accuracy", [], [], "empty"),
    ],
)
def test_bad_inputs_raise(name, y_true, y_pred, match):
    with pytest.raises(ValueError, match=match):
        METRICS[name].fn(y_true, y_pred)


# ----------------------------------------------------------------------------- find_metric
TEXTS = [
    (
        "Submissions are evaluated based on their classification accuracy, the percentage of predicted "
        "labels that are correct.",
        "accuracy",
    ),
    (
        "Submissions are evaluated on area under the ROC curve between the predicted probability and the "
        "observed target.",
        "roc_auc",
    ),
    ("Submissions are scored on the log loss:", "log_loss"),
    (
        "Submissions are evaluated using the multi-class logarithmic loss. Each image has been labeled "
        "with one true species.",
        "multi_log_loss",
    ),
    (
        "Submissions are evaluated on the column-wise root mean squared logarithmic error. The RMSLE for "
        "a single column ... The final score is the mean of the RMSLE over all columns (in this case, 2).",
        "mean_columnwise_rmsle",
    ),
    (
        "Submissions are now evaluated on the mean column-wise ROC AUC. In other words, the score is the "
        "average of the individual AUCs of each predicted column.",
        "mean_columnwise_auc",
    ),
    ("Submissions are scored on the root mean squared error.", "rmse"),
    (
        "Submissions are evaluated on Root-Mean-Squared-Error (RMSE) between the logarithm of the "
        "predicted value and the logarithm of the observed sales price.",
        "rmsle",
    ),
    ("The evaluation metric is the RMSE of the log-transformed target.", "rmsle"),
    ("The score is the root mean squared error computed on log(1 + y).", "rmsle"),
    ("Submissions are ranked by log RMSE.", "rmsle"),
    ("Submissions are scored on the RMSE in dollars; the log of the error is not used.", "rmse"),
    ("Submissions are evaluated on RMSE. Log loss is shown for reference.", "rmse"),
    ("Submissions are evaluated using the quadratic weighted kappa", "qwk"),
    ("Submissions are evaluated according to the Mean Average Precision @ 3 (MAP@3):", "map_at_3"),
    ("The metric is MAP@5.", "map_at_5"),
    ("Submissions are scored using MCRMSE, mean columnwise root mean squared error", "mcrmse"),
    ("Submissions are evaluated on the Matthews correlation coefficient", "mcc"),
    ("Submissions are evaluated using the mean F1-score", "f1"),
    ("Submissions are evaluated on F1 score between the predicted and actual labels.", "f1"),
    ("The evaluation metric is macro F1.", "f1_macro"),
    ("Submissions are evaluated on Symmetric mean absolute percentage error (SMAPE)", "smape"),
    ("Submissions are evaluated on mean absolute percentage error.", "mape"),
    ("Submissions are evaluated on the Root Mean Square Percentage Error (RMSPE).", "rmspe"),
    (
        "Submissions are evaluated using a balanced logarithmic loss: each class is equally important.",
        "balanced_log_loss",
    ),
    # a class-weighted log loss: each class's sum divided by its own count, so every class weighs alike
    (
        "Submissions are evaluated using a weighted multi-class logarithmic loss:\n\n    Log Loss = - ( sum_i w_i * "
        "sum_j (y_ij / N_i) * ln p_ij ) / ( sum_i w_i )\n\nwhere N_i is the number of objects in class i.",
        "balanced_log_loss",
    ),
    (
        "The score is the cross-entropy of each class, divided by the number of rows in that class, averaged.",
        "balanced_log_loss",
    ),
    # weighted by row (a positive weighs twice): a plain log loss, not a per-class one
    ("Submissions are evaluated using a weighted multi-class log loss, where positive rows weigh 2.", "multi_log_loss"),
    ("Each class has the number of images in class folders. Scored by multi-class log loss.", "multi_log_loss"),
    ("Submissions are evaluated on the mean absolute error between predicted and actual values.", "mae"),
    ("Submissions are evaluated using the coefficient of determination R2", "r2"),
    ("Submissions are evaluated using the Normalized Gini Coefficient (2 * AUC - 1).", "gini"),
    ("Submissions are evaluated on the [Root Mean Squared Logarithmic Error](https://x.org/RMSLE).", "rmsle"),
    ("Submissions are scored on the mean columnwise log loss over the 206 targets.", "mean_columnwise_log_loss"),
    ("Submissions are evaluated on the mean Spearman correlation across the 30 target columns.", "mean_spearman"),
    ("Submissions are scored on the Pearson correlation coefficient between predicted and actual values.", "pearson"),
    ("Submissions are evaluated on the F2 score averaged over the samples (each image's label set).", "f2_samples"),
    ("The metric is the sample-based F1 score.", "f1_samples"),
    ("The metric is the F1 score computed for each id and averaged over all ids.", "f1_samples"),
    ("Submissions are evaluated with the macro F2 score.", "f2_macro"),
    ("Submissions are evaluated on the F-beta score with beta = 2.", "f2"),
    ("Submissions are scored on the weighted average of the ROC AUCs of each label.", "weighted_auc"),
    (
        "The final metric combines the overall AUC with the generalized mean of the Bias AUCs "
        "(Subgroup AUC, BPSN AUC and BNSP AUC).",
        "bias_auc",
    ),
    ("The score is the mean over coupling types of the log of the mean absolute error.", "grouped_log_mae"),
    (
        "Scored as the mean absolute error between predicted and actual pressures during the inspiratory phase.",
        "masked_mae",
    ),
    ("Submissions are evaluated according to the Mean Average Precision @ 10 (MAP@10).", "map_at_10"),
    ("The task is evaluated with label-weighted label-ranking average precision (lwlrap).", "lwlrap"),
    ("Submissions are evaluated on PR AUC.", None),
    ("Submissions are judged by a panel of experts.", None),
]


@pytest.mark.parametrize("text, expected", TEXTS)
def test_find_metric(text, expected):
    found = find_metric(text)
    assert (found and found.name) == expected


def test_priority_covers_catalogue():
    assert sorted(PRIORITY) == sorted(METRICS)
    assert all(m.name == k for k, m in METRICS.items())
    assert {m.prediction for m in METRICS.values()} == {"label", "proba", "value", "ranking"}


def _evaluation_section(markdown):
    """The '# Evaluation' section: from its heading to the next heading of the same or higher level."""
    lines, level, out = markdown.splitlines(), None, []
    for line in lines:
        heading = re.match(r"(#+)\s*(.*)", line)
        if heading and level is not None and len(heading.group(1)) <= level:
            break
        if heading and level is None and heading.group(2).strip().lower().startswith("evaluation"):
            level = len(heading.group(1))
        if level is not None:
            out.append(line)
    return "\n".join(out)


ARENA = Path(__file__).resolve().parents[2] / "shared" / "arena-dev"
ARENA_EXPECTED = {
    "aerial-cactus-identification": "roc_auc",
    "dogs-vs-cats-redux-kernels-edition": "log_loss",
    "jigsaw-toxic-comment-classification-challenge": "mean_columnwise_auc",
    "leaf-classification": "multi_log_loss",
    "nomad2018-predict-transparent-conductors": "mean_columnwise_rmsle",
    "spaceship-titanic": "accuracy",
}


@pytest.mark.skipif(not ARENA.is_dir(), reason=f"arena-dev descriptions not present at {ARENA}")
def test_find_metric_on_arena_dev_descriptions():
    found = {}
    for desc in sorted(ARENA.glob("*/public/description.md")):
        section = _evaluation_section(desc.read_text())
        assert section, f"no Evaluation section in {desc}"
        found[desc.parts[-3]] = find_metric(section).name
    assert found == ARENA_EXPECTED


# ----------------------------------------------------------------------------- metric_source
def test_metric_source_exec_matches_catalogue():
    for name, metric in METRICS.items():
        src = metric_source(name)
        assert re.findall(r"^\s*(?:import|from)\s+(\S+)", src, re.M) == ["numpy"], name
        ns = {}
        exec(compile(src, f"<{name}>", "exec"), ns)
        for seed in (0, 1):
            yt, yp = sample(name, seed)
            assert ns["score"](yt, yp) == metric.fn(yt, yp), name
    with pytest.raises(ValueError, match="unknown metric"):
        metric_source("nope")


def test_metric_source_runs_in_fresh_interpreter():
    """All sources in one isolated interpreter (-I: no cwd/PYTHONPATH, so tools/agentk are not importable)."""
    cases = {
        name: [np.asarray(a, dtype=object).tolist() if isinstance(a, np.ndarray) else a for a in sample(name)]
        for name in METRICS
    }
    script = (
        "import json, sys\nout = {}\ncases, sources = json.load(sys.stdin)\n"
        "for name, (yt, yp) in cases.items():\n"
        "    ns = {}; exec(sources[name], ns); out[name] = ns['score'](yt, yp)\n"
        "assert not any(m.split('.')[0] in ('tools', 'agentk') for m in sys.modules)\n"
        "print(json.dumps(out))\n"
    )
    payload = json.dumps([cases, {name: metric_source(name) for name in METRICS}])
    proc = subprocess.run(
        [sys.executable, "-I", "-c", script], input=payload, capture_output=True, text=True, timeout=60, cwd="/"
    )
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    for name in METRICS:
        close(got[name], METRICS[name].fn(*sample(name)), rtol=1e-12, err_msg=name)


def test_the_log_error_metrics_are_the_ones_scoring_log1p_values():
    """LOG_ERROR (whose targets are learnt as log1p) holds exactly the value metrics of METRICS that score the RMSE
    of log1p values, alone or averaged over columns."""
    rng = np.random.default_rng(0)
    y, p = rng.lognormal(2, 1, (50, 2)), rng.lognormal(2, 1, (50, 2))
    on_logs = np.mean(np.sqrt(np.mean((np.log1p(y) - np.log1p(p)) ** 2, axis=0)))
    found = set()
    for name, m in METRICS.items():
        if m.prediction != "value":
            continue
        try:
            score = m.fn(y, p) if m.multi_target else np.mean([m.fn(y[:, j], p[:, j]) for j in range(2)])
        except (TypeError, ValueError):  # a metric that needs other columns (a mask, groups)
            continue
        if np.isclose(score, on_logs):
            found.add(name)
    assert found == LOG_ERROR
