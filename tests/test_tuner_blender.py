"""The HEBO tuner finds a planted optimum, never picks a failed trial and resumes without re-running trials; the
MLP blender beats its best input on rows it never saw when the inputs' errors are complementary, and falls back
to the best input when blending cannot help."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch

import tools.blender as blender
from tools.blender import blend
from tools.hebo_tuner import SPACE, _hebo, design, tune
from tools.metrics import METRICS
from tools.resampling import wins_on_resamples

OPT_PENALTY = {"Adam": 0.0, "SGD": 1.0, "AdamW": 0.5}


def planted(params: dict) -> float:
    return (math.log10(params["lr"]) + 3.5) ** 2 + OPT_PENALTY[params["optimizer"]]


# ----------------------------------------------------------------------------- tuner
@pytest.mark.slow  # HEBO's search quality (45 s); the resume and trial-count tests here run HEBO by default
def test_tuner_finds_planted_optimum_with_plain_params():
    seen = []

    def objective(params):
        seen.append(params)
        return planted(params)

    threads = torch.get_num_threads()
    result = tune(objective, n_trials=10, seed=0)
    assert torch.get_num_threads() == threads  # importing HEBO sets it to 1; tune must not leak that
    assert len(seen) == len(result.trials) == 10
    assert all(type(p["lr"]) is float and type(p["optimizer"]) is str for p in seen)
    assert all(1e-6 <= p["lr"] <= 1e-2 and p["optimizer"] in {"Adam", "SGD", "AdamW"} for p in seen)
    assert result.best["optimizer"] == "Adam"
    assert 10**-3.5 / 3 < result.best["lr"] < 10**-3.5 * 3
    assert result.best_loss == min(t["loss"] for t in result.trials) == planted(result.best)


def test_failed_trials_are_recorded_and_never_best():
    def objective(params):
        if params["lr"] > 1e-4 and params["optimizer"] == "Adam":  # the region holding the planted optimum
            raise RuntimeError("loss diverged")
        if params["optimizer"] == "AdamW":
            return float("nan")
        return planted(params)

    calls = []
    result = tune(
        objective,
        n_trials=4,
        seed=1,
        initial=[
            {"lr": 10**-3.5, "optimizer": "Adam"},
            {"lr": 1e-3, "optimizer": "AdamW"},
            {"lr": 1e-5, "optimizer": "SGD"},
        ],
        on_trial=lambda i, p, loss: calls.append((i, p, loss)),
    )
    first, second = result.trials[:2]
    assert not first["ok"] and "diverged" in first["error"] and math.isnan(first["loss"])
    assert not second["ok"] and math.isnan(second["loss"])
    assert [i for i, _, _ in calls] == [0, 1, 2, 3] and math.isnan(calls[0][2])
    assert objective(result.best) == result.best_loss  # the best is a trial that succeeded
    assert not (result.best["lr"] > 1e-4 and result.best["optimizer"] == "Adam")
    assert math.isfinite(result.best_loss)


def test_all_trials_failing_raises():
    def objective(params):
        raise ValueError("broken data loader")

    with pytest.raises(RuntimeError, match="broken data loader"):
        tune(objective, n_trials=2)


def test_resume_from_history_does_not_rerun_and_matches_an_uninterrupted_run():
    default = [{"lr": 1e-3, "optimizer": "Adam"}]
    full = tune(planted, n_trials=4, seed=3, initial=default)
    reported = []
    first = tune(planted, n_trials=2, seed=3, initial=default, on_trial=lambda i, p, loss: reported.append((p, loss)))
    assert reported == [(t["params"], t["loss"]) for t in first.trials]
    history = json.loads(json.dumps(first.trials))  # as a killed solve would have written it to disk

    calls = []

    def counted(params):
        calls.append(params)
        return planted(params)

    resumed = tune(counted, n_trials=4, seed=3, initial=default, history=history)
    assert len(calls) == 2 and default[0] not in calls  # neither the default nor the other saved trial re-ran
    assert resumed.trials[:2] == history
    # the resumed run continues the random draws and then the GP exactly as the uninterrupted one did
    assert [t["params"] for t in resumed.trials] == [t["params"] for t in full.trials]
    assert resumed.best == full.best


def test_a_trial_count_given_as_a_callable_is_asked_again_before_every_trial():
    """The solver lets early-stopped trials pay for more: the count may grow while the search runs, and a search
    whose count is fixed from the start draws the same points."""
    default = [{"lr": 1e-3, "optimizer": "Adam"}]
    ran = []

    def objective(params):
        ran.append(params)
        return planted(params)

    grown = tune(objective, n_trials=lambda: 2 if len(ran) < 2 else 4, seed=3, initial=default)
    assert len(grown.trials) == 4 == len(ran)
    fixed = tune(planted, n_trials=4, seed=3, initial=default)
    assert [t["params"] for t in grown.trials] == [t["params"] for t in fixed.trials]
    assert len(tune(planted, n_trials=lambda: 1, seed=3, initial=default).trials) == 1


def test_after_its_random_design_hebo_suggests_from_its_model():
    default = [{"lr": 1e-3, "optimizer": "Adam"}]
    result = tune(planted, n_trials=design() + 1, seed=0, initial=default)
    assert [t["source"] for t in result.trials] == ["initial"] + ["random"] * (design() - 1) + ["model"]
    assert result.model_based == 1
    # a random search would have drawn the scrambled Sobol sequence's next point; the model's is not that one, and
    # it goes where the planted loss is low (Adam, near lr 10^-3.5) rather than where the random draws went
    hebo, space = _hebo()
    sobol = hebo(space().parse(SPACE), scramble_seed=0, rand_sample=100).quasi_sample(design())
    draws = [{"lr": float(lr), "optimizer": str(o)} for lr, o in zip(sobol["lr"], sobol["optimizer"])]
    assert [t["params"] for t in result.trials[1:-1]] == draws[:-1]
    model = result.trials[-1]
    assert model["params"] != draws[-1] and model["params"]["optimizer"] == "Adam"
    assert model["loss"] < np.mean([t["loss"] for t in result.trials if t["source"] == "random"])


def test_space_is_the_papers():
    lr, opt = SPACE
    assert (lr["type"], lr["lb"], lr["ub"]) == ("pow", 1e-6, 1e-2)
    assert opt["type"] == "cat" and set(opt["categories"]) == {"Adam", "SGD", "AdamW"}


# ----------------------------------------------------------------------------- blender
def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


W = np.array([[2.0, 0.0, -2.0], [0.0, 2.0, -2.0], [-2.0, 2.0, 0.0]])  # feature i's effect on the 3 class logits


def complementary(kind: str, n: int, rng: np.random.Generator) -> tuple[list[np.ndarray], np.ndarray]:
    """Three solutions that each saw one of three independent features: together they know far more."""
    x = rng.normal(size=(n, 3))
    if kind == "binary":
        y = (rng.random(n) < sigmoid(1.5 * x.sum(axis=1))).astype(float)[:, None]
        preds = [sigmoid(1.5 * x[:, [i]] + 0.3 * rng.normal(size=(n, 1))) for i in range(3)]
    elif kind == "multiclass":
        p = softmax(x @ W)
        y = (rng.random(n)[:, None] > np.cumsum(p, axis=1)).sum(axis=1).astype(float)[:, None]
        preds = [softmax(x[:, [i]] * W[i]) for i in range(3)]
    else:
        y = x.sum(axis=1, keepdims=True) + 0.1 * rng.normal(size=(n, 1))
        preds = [x[:, [i]] + 0.1 * rng.normal(size=(n, 1)) for i in range(3)]
    return preds, y


CASES = {
    "binary": ("roc_auc", {"name": "target", "kind": "binary", "n_classes": 2}),
    "multiclass": ("multi_log_loss", {"name": "target", "kind": "multiclass", "n_classes": 3}),
    "regression": ("rmse", {"name": "target", "kind": "regression", "n_classes": 0}),
}


def scorer(metric_name: str, kind: str, y: np.ndarray):
    """score_fn(pred, rows) over the rows of y, with the metric's own input conventions."""
    fn = METRICS[metric_name].fn

    def score(pred: np.ndarray, rows: np.ndarray) -> float:
        truth = y[rows, 0].astype(int) if kind != "regression" else y[rows, 0]
        return fn(truth, pred if kind == "multiclass" else pred[:, 0])

    return score


@pytest.mark.parametrize("kind", sorted(CASES))
def test_blender_beats_best_input_on_fresh_rows(kind):
    metric_name, output = CASES[kind]
    higher = METRICS[metric_name].higher_is_better
    rng = np.random.default_rng(7)
    val_preds, y_val = complementary(kind, 300, rng)
    test_preds, _ = complementary(kind, 50, rng)
    fresh_preds, y_fresh = complementary(kind, 3000, rng)
    val_rows = np.arange(len(y_val))
    score = scorer(metric_name, kind, y_val)

    result = blend(val_preds, y_val, [output], score, higher, val_rows, test_preds)

    assert result.kept
    assert (result.cv_score > result.best_single_score) if higher else (result.cv_score < result.best_single_score)
    assert result.best_single_score == score(val_preds[result.best_single_index], val_rows)
    assert score(result.val_pred, val_rows) == pytest.approx(result.cv_score)  # val_pred is the out-of-fold blend
    assert result.test_pred.shape == test_preds[0].shape
    np.testing.assert_allclose(result.test_pred, result.predict(test_preds))
    fresh = scorer(metric_name, kind, y_fresh)
    rows = np.arange(len(y_fresh))
    blended, best_input = fresh(result.predict(fresh_preds), rows), fresh(fresh_preds[result.best_single_index], rows)
    assert (blended > best_input) if higher else (blended < best_input)
    if kind == "multiclass":
        np.testing.assert_allclose(result.test_pred.sum(axis=1), 1.0, rtol=1e-6)


@pytest.mark.parametrize("metric_name,kind", [("roc_auc", "binary"), ("log_loss", "binary"), ("rmse", "regression")])
def test_blender_keeps_a_perfect_input_over_noise(metric_name, kind):
    """One input is the exact truth (AUC, RMSE) or the true probability (log loss), the others are noise."""
    output = CASES[kind][1]
    higher = METRICS[metric_name].higher_is_better
    rng = np.random.default_rng(11)

    def make(n):
        z = rng.normal(size=(n, 1))
        if kind == "regression":
            y = z
            best = z.copy()
        else:
            y = (rng.random((n, 1)) < sigmoid(2 * z)).astype(float)
            best = y.copy() if metric_name == "roc_auc" else sigmoid(2 * z)
        noise = [rng.random((n, 1)) if kind == "binary" else rng.normal(size=(n, 1)) for _ in range(2)]
        return [noise[0], best, noise[1]], y

    val_preds, y_val = make(200)
    fresh_preds, y_fresh = make(3000)
    result = blend(val_preds, y_val, [output], scorer(metric_name, kind, y_val), higher, np.arange(200), val_preds)
    assert result.best_single_index == 1
    fresh = scorer(metric_name, kind, y_fresh)
    rows = np.arange(3000)
    blended, best_input = fresh(result.predict(fresh_preds), rows), fresh(fresh_preds[1], rows)
    if result.kept:
        assert (blended >= best_input) if higher else (blended <= best_input)
    else:
        assert blended == best_input
        np.testing.assert_array_equal(result.test_pred, val_preds[1])
        np.testing.assert_array_equal(result.val_pred, val_preds[1])
    if metric_name in ("roc_auc", "rmse"):  # nothing beats exact truth, so the CV score cannot either
        assert not result.kept


def test_blender_small_data_with_rare_classes_is_deterministic_and_keeps_thread_count():
    rng = np.random.default_rng(3)
    y = np.array([0] * 30 + [1] * 7 + [2] * 2 + [3] * 1, dtype=float)[:, None]  # class 3 fits in one fold only
    rng.shuffle(y)
    truth = np.eye(4)[y[:, 0].astype(int)]
    preds = [softmax(3 * truth + rng.normal(size=(40, 4))) for _ in range(3)]
    outputs = [
        {"name": "label", "kind": "multiclass", "n_classes": 4},
        {"name": "amount", "kind": "regression", "n_classes": 0},
    ]
    amount = rng.normal(size=(40, 1))
    y_two = np.concatenate([y, amount], axis=1)
    preds_two = [np.concatenate([p, amount + rng.normal(size=(40, 1))], axis=1) for p in preds]

    def score(pred, rows):  # a combined loss over both outputs
        return METRICS["multi_log_loss"].fn(y_two[rows, 0].astype(int), pred[:, :4]) + METRICS["rmse"].fn(
            y_two[rows, 1], pred[:, 4]
        )

    threads = torch.get_num_threads()
    runs = [
        blend(preds_two, y_two, outputs, score, False, np.arange(40), [p[:10] for p in preds_two], seed=5)
        for _ in range(2)
    ]
    assert torch.get_num_threads() == threads
    a, b = runs
    assert a.kept == b.kept and a.cv_score == b.cv_score
    np.testing.assert_array_equal(a.test_pred, b.test_pred)
    assert a.test_pred.shape == (10, 5)
    assert np.isfinite(a.cv_score)  # the folds were built despite the classes with one and two rows


def test_the_mlp_learns_from_a_sample_of_many_rows_and_predicts_them_all(monkeypatch):
    """Full-batch steps on the 800,000 validation rows of a 4 M-row table took over ten minutes: the MLP learns
    from FIT_ROWS of them, the same as a fit on those rows alone."""
    rng = np.random.default_rng(0)
    y = rng.normal(size=(600, 1))
    preds = [y + rng.normal(scale=s, size=(600, 1)) for s in (0.5, 0.7)]
    output = [{"name": "v", "kind": "regression", "n_classes": 0}]
    monkeypatch.setattr(blender, "FIT_ROWS", 200)
    model, steps = blender._fit(preds, y, output, seed=3)
    sample = np.sort(np.random.default_rng(3).choice(600, 200, replace=False))
    monkeypatch.setattr(blender, "FIT_ROWS", 10_000)
    alone, steps_alone = blender._fit([p[sample] for p in preds], y[sample], output, seed=3)
    assert steps == steps_alone and model.predict(preds).shape == (600, 1)
    np.testing.assert_allclose(model.predict(preds), alone.predict(preds), rtol=1e-6)
    everything, _ = blender._fit(preds, y, output, seed=3)
    assert not np.allclose(everything.predict(preds), alone.predict(preds))


def test_the_constant_solutions_column_is_not_blown_up_by_its_refits_shift():
    """The constant's validation column is constant up to rounding (std ~1e-14), and its test column is the prior
    of every row, a little off the fit rows' prior. Scaled by that std, the shift swamped the MLP: on a 16,000 x 200
    table its every test probability was 0 and the submission scored the constant's AUC."""
    rng = np.random.default_rng(0)
    z, z_test = rng.normal(size=3200), rng.normal(size=1000)
    y = (z + rng.normal(size=3200) > 0.8).astype(float)[:, None]
    model = [1 / (1 + np.exp(-(1.5 * v - 1)))[:, None] for v in (z, z_test)]
    output = [{"name": "t", "kind": "binary", "n_classes": 2}]
    fitted, _ = blender._fit([np.full((3200, 1), y.mean()), model[0]], y, output, seed=0)
    test = fitted.predict([np.full((1000, 1), y.mean() + 6e-4), model[1]])
    assert np.corrcoef(test[:, 0], model[1][:, 0])[0, 1] > 0.99  # the model's ranking, not a saturated column
    assert 0.05 < test.mean() < 0.6


def test_blender_rejects_mismatched_predictions():
    y = np.zeros((50, 1))
    preds = [np.full((50, 1), 0.5)] * 2
    output = CASES["binary"][1]
    with pytest.raises(ValueError, match="one test prediction per solution"):
        blend(preds, y, [output], scorer("roc_auc", "binary", y), True, np.arange(50), preds[:1])


def test_blender_too_few_rows_falls_back_to_best_single():
    y = np.array([[0.0], [1.0], [0.0], [1.0], [1.0]])
    preds = [np.array([[0.2], [0.7], [0.4], [0.6], [0.9]]), np.array([[0.5], [0.5], [0.5], [0.5], [0.6]])]
    output = CASES["binary"][1]
    result = blend(preds, y, [output], scorer("roc_auc", "binary", y), True, np.arange(5), preds)
    assert not result.kept and result.best_single_index == 0 and math.isnan(result.cv_score)
    np.testing.assert_array_equal(result.test_pred, preds[0])


def test_a_blend_must_win_on_most_bootstrap_resamples():
    """A better overall score that a few rows carry is noise: the blend must beat the best single solution on 90 %
    of bootstrap resamples of the validation rows."""
    y = np.zeros(200)
    rows = np.arange(200)
    rmse = lambda pred, r: float(np.sqrt(np.mean((pred[:, 0] - y[r]) ** 2)))  # noqa: E731
    single = np.full((200, 1), 0.5)
    steady = np.full((200, 1), 0.45)  # better on every row
    lucky = single.copy()
    lucky[:10], lucky[10:18] = 0.2, 0.7  # better on 10 rows, worse on 8: a little better overall, not reliably
    assert rmse(lucky, rows) < rmse(single, rows)

    def wins(pred, higher_is_better=False):
        return wins_on_resamples(
            lambda idx: rmse(pred[idx], rows[idx]), lambda idx: rmse(single[idx], rows[idx]), 200, higher_is_better
        )

    assert wins(steady) and wins(lucky) is False
    assert wins(steady, higher_is_better=True) is False  # read as higher-is-better, its lower RMSE loses

    def unscorable(idx):  # a metric that scores no resample (AUC where every target is of one class)
        raise ValueError("only one class present")

    assert wins_on_resamples(unscorable, unscorable, 200, False) is None  # no verdict, which the solver reads apart


def _carried_by_two_groups():
    """20 groups of 20 rows, target 0: a challenger better on every row of groups 0 and 1, worse on group 2, equal
    elsewhere (an RMSE a little lower overall), the single solution 0.5 everywhere."""
    groups = np.repeat(np.arange(20), 20)
    single = np.full((400, 1), 0.5)
    lucky = single.copy()
    lucky[groups < 2], lucky[groups == 2] = 0.2, 0.7
    return groups, single, lucky


def test_rows_that_come_in_groups_are_resampled_as_whole_groups():
    """Rows of one group err together: a gain that two of twenty groups carry wins on a bootstrap of their 400 rows
    as if they were independent, and not on a bootstrap of the groups (a cluster bootstrap)."""
    groups, single, lucky = _carried_by_two_groups()
    rmse = lambda pred, idx: float(np.sqrt(np.mean(pred[idx, 0] ** 2)))  # noqa: E731
    drawn = []

    def ours(idx):
        drawn.append(idx)
        return rmse(lucky, idx)

    assert rmse(lucky, np.arange(400)) < rmse(single, np.arange(400))
    assert wins_on_resamples(ours, lambda idx: rmse(single, idx), 400, False) is True
    drawn.clear()
    assert wins_on_resamples(ours, lambda idx: rmse(single, idx), 400, False, groups) is False
    for idx in drawn:  # whole groups: each drawn group's 20 rows, twenty groups a resample
        group_of, counts = np.unique(groups[idx], return_counts=True)
        assert len(idx) == 400 and set(counts % 20) == {0}
        assert all(set(idx[groups[idx] == g]) == set(np.flatnonzero(groups == g)) for g in group_of)


def test_a_resample_of_many_grouped_rows_draws_groups_in_proportion():
    import tools.resampling as resampling

    groups = np.repeat(np.arange(100_000), 10)  # a million rows: draw groups up to about MAX_DRAW rows
    sizes = []
    resampling.wins_on_resamples(lambda idx: sizes.append(len(idx)) or 0.0, lambda idx: 1.0, len(groups), True, groups)
    assert set(sizes) == {resampling.MAX_DRAW}


def test_the_blend_keeps_groups_whole_in_its_folds_and_its_resamples():
    """With the validation rows' groups, the MLP's folds hold whole groups out, and a mean whose gain two groups
    carry is not kept; without them, the same mean is."""
    groups, single, lucky = _carried_by_two_groups()
    fold_of = blender._folds(np.zeros((400, 1)), [CASES["regression"][1]], 5, 0, groups)
    assert sorted(set(fold_of)) == [0, 1, 2, 3, 4]
    assert all(len(set(fold_of[groups == g])) == 1 for g in range(20))
    other = 2 * lucky - single  # the mean of the two is `lucky`; alone it scores worse than `single`
    y = np.zeros(400)
    rmse = lambda pred, r: float(np.sqrt(np.mean((pred[:, 0] - y[r]) ** 2)))  # noqa: E731
    preds, output, rows = [single, other], CASES["regression"][1], np.arange(400)
    assert rmse(other, rows) > rmse(single, rows)
    assert blend(preds, y, [output], rmse, False, rows, preds, mlp=False).members == [0, 1]
    kept = blend(preds, y, [output], rmse, False, rows, preds, mlp=False, groups=groups)
    assert not kept.kept and kept.best_single_index == 0


def test_a_resample_of_many_rows_draws_at_most_max_draw_of_them():
    """400 scores of 800,000 rows by a generated metric ran for over ten minutes; fewer rows drawn is stricter."""
    import tools.resampling as resampling

    sizes = []

    def score(idx):
        sizes.append(len(idx))
        return float(idx.mean())

    resampling.wins_on_resamples(score, lambda idx: 0.0, 1_000_000, True)
    assert set(sizes) == {resampling.MAX_DRAW} and len(sizes) == resampling.RESAMPLES
    sizes.clear()
    resampling.wins_on_resamples(score, lambda idx: 0.0, 300, True)
    assert set(sizes) == {300}


def test_a_mean_of_equally_good_solutions_is_kept_and_averages_their_own_test_predictions():
    """Two solutions that each see the target through small independent noise: their mean halves its variance,
    needs no weights, so it is scored as it predicts the validation rows, and for the test rows it averages the
    solutions' own (refitted) test predictions, not the validated models' the MLP would use."""
    metric_name, output = CASES["regression"]
    rng = np.random.default_rng(3)
    y = rng.normal(size=(240, 1))
    val_preds = [y + 0.2 * rng.normal(size=y.shape) for _ in range(2)]
    validated, finals = [rng.normal(size=(30, 1)) for _ in range(2)], [rng.normal(size=(30, 1)) for _ in range(2)]
    score = scorer(metric_name, "regression", y)
    result = blend(val_preds, y, [output], score, False, np.arange(240), validated, final_test_preds=finals)
    assert result.kept and result.how == "mean" and sorted(result.members) == [0, 1]
    np.testing.assert_allclose(result.val_pred, (val_preds[0] + val_preds[1]) / 2)
    assert result.cv_score == pytest.approx(score(result.val_pred, np.arange(240)))
    assert result.cv_score < 0.8 * result.best_single_score  # the noise's sd falls by sqrt(2)
    np.testing.assert_allclose(result.test_pred, (finals[0] + finals[1]) / 2)


def test_the_mlp_displaces_a_qualifying_mean_only_by_winning_on_most_resamples():
    """Three equally good solutions: their mean is the right blend, and an MLP can only fit noise beyond it, which
    once in these twelve draws scored a hair better out of fold (0.1847 against 0.1853) and was kept. A solution
    off by a constant is what the MLP's weights are for: it beats the mean on nearly every resample and is kept."""
    metric_name, output = CASES["regression"]
    for seed in range(12):
        rng = np.random.default_rng(seed)
        y = rng.normal(size=(240, 1))
        val_preds = [y + 0.3 * rng.normal(size=y.shape) for _ in range(3)]
        tests = [rng.normal(size=(30, 1)) for _ in range(3)]
        result = blend(val_preds, y, [output], scorer(metric_name, "regression", y), False, np.arange(240), tests)
        assert result.kept and result.how == "mean", seed
    rng = np.random.default_rng(0)
    y = rng.normal(size=(240, 1))
    val_preds = [y + 0.4 * rng.normal(size=y.shape), y + 0.4 * rng.normal(size=y.shape) + 0.5]
    tests = [rng.normal(size=(30, 1)) for _ in range(2)]
    score = scorer(metric_name, "regression", y)
    result = blend(val_preds, y, [output], score, False, np.arange(240), tests)
    assert result.kept and result.how == "MLP"
    assert result.cv_score < 0.8 * score((val_preds[0] + val_preds[1]) / 2, np.arange(240))
    means_only = blend(val_preds, y, [output], score, False, np.arange(240), tests, mlp=False)
    assert not means_only.kept or means_only.how == "mean"


def _threshold_task(truth: np.ndarray):
    """A TaskData over a binary label decoded at THRESHOLD (tunable on a grid), scored by accuracy: its real
    tune_decoding, without a workspace."""
    import pandas as pd

    from tools.task_data import TaskData

    task = TaskData.__new__(TaskData)
    task.transform = SimpleNamespace(THRESHOLD=0.5, TUNABLE={"THRESHOLD": [0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7]})
    task.transform.inverse_transform = lambda p: pd.DataFrame({"y": (p[:, 0] >= task.transform.THRESHOLD) * 1})
    task.metric_module = SimpleNamespace(metric=lambda t, p: float((t["y"].to_numpy() == p["y"].to_numpy()).mean()))
    task.higher_is_better = True
    task.__dict__["targets"] = pd.DataFrame({"y": truth})
    task.decoding_defaults = {"THRESHOLD": 0.5}
    task.__dict__["groups"] = None  # independent rows
    return task


def test_a_decoding_constant_leaves_its_default_only_on_most_resamples():
    rows = np.arange(360)
    truth = rows % 2
    sure = np.where(truth == 1, 0.9, 0.1)
    lucky = sure.copy()
    lucky[[0, 2, 4]] = 0.52  # three negatives just above 0.5, one positive: 0.55 wins by two rows in 360
    lucky[1] = 0.53
    task = _threshold_task(truth)
    assert task.tune_decoding(lucky[:, None], rows) == {"THRESHOLD": 0.5}
    assert task.transform.THRESHOLD == 0.5
    at = {}
    for value in (0.5, 0.55):
        task.transform.THRESHOLD = value
        at[value] = task.score(lucky[:, None], rows)
    assert at[0.55] > at[0.5]  # better overall, by a margin a few rows carry
    shifted = np.where(truth == 1, 0.42, 0.1)  # every positive below 0.5: a lower threshold wins on every resample
    shifted[::7] = 0.35
    chosen = task.tune_decoding(shifted[:, None], rows)
    assert chosen["THRESHOLD"] in (0.3, 0.4) and task.transform.THRESHOLD == chosen["THRESHOLD"]
    task.reset_decoding()
    assert task.transform.THRESHOLD == 0.5


def test_a_decoding_constant_is_judged_on_whole_groups_when_the_rows_come_in_groups():
    """20 groups of 20 rows: every positive of groups 0 and 1 just below 0.5, every negative of group 2 just above
    0.45. A lower threshold gains 20 rows and loses 10, which wins on a bootstrap of independent rows; on a bootstrap
    of the groups it is two groups' luck against one's, and the default stays."""
    rows = np.arange(400)
    truth, groups = rows % 2, rows // 20
    pred = np.where(truth == 1, 0.9, 0.1)
    pred[(groups < 2) & (truth == 1)] = 0.45
    pred[(groups == 2) & (truth == 0)] = 0.47
    task = _threshold_task(truth)
    assert task.tune_decoding(pred[:, None], rows)["THRESHOLD"] < 0.5
    task.reset_decoding()
    task.__dict__["groups"] = ("episode", groups.astype(str))
    assert task.tune_decoding(pred[:, None], rows) == {"THRESHOLD": 0.5}
