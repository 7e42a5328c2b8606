"""The AutoGluon tool optimises what the competition scores: its scorer agrees with code_metric.py (through
TaskData.score) on the examples' validation rows, survives pickling, and fit_autogluon beats a constant
prediction with model-space outputs of the right shape."""

from __future__ import annotations

import multiprocessing
import pickle
import shutil
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest
from autogluon.tabular import TabularPredictor
from conftest import ROOT, copy_setup
from sklearn.metrics import mean_absolute_error, roc_auc_score

import tools.autogluon_plan as plan_module
import tools.autogluon_tool as ag_tool
from testing.competitions import build
from tools import machine
from tools.autogluon_plan import SAFETY
from tools.autogluon_tool import fit_autogluon, sample_rows, tuning_rows
from tools.competition_scorer import competition_scorer
from tools.task_data import TaskData

NAMES = ("breast-cancer", "wine", "iris-species", "diabetes", "digits-multilabel")
# fixtures whose metric reads columns beside the target -> the metric of the target alone AutoGluon optimises
BESIDE = {"bias-auc-identities": roc_auc_score, "grouped-masked": mean_absolute_error}
FAST = {"RF": {}, "XT": {}}  # only sklearn forests: quick on 2 cores and always installed
WEIGHED = "store-table-rmspe"  # RMSPE: the zero sales skipped, each other row weighed by 1/y^2


@pytest.fixture(scope="module")
def tasks(tmp_path_factory, example_ws) -> dict[str, TaskData]:
    """Each example (a copy of the test run's shared setup), and each fixture whose metric reads columns beside the
    target, set up by the real CLI while the examples' setups are fetched (most of a setup waits on subprocesses)."""
    root = tmp_path_factory.mktemp("ag")
    runs = {
        name: subprocess.Popen(
            [sys.executable, "-m", "agentk", "setup", str(build(name, root / "fixtures") / "public")]
            + ["--workspace", str(root / name)],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for name in (*BESIDE, WEIGHED)
    }
    found = {}
    for name in NAMES:
        found[name] = TaskData(copy_setup(example_ws, name, root / name))  # TaskData writes its split there
    for name, run in runs.items():
        out, _ = run.communicate(timeout=600)
        assert run.returncode == 0, f"setup of {name} failed:\n{out[-2000:]}"
        found[name] = TaskData(root / name)
    return found


def _predictions(task: TaskData, rows: np.ndarray, good: bool, rng) -> tuple[np.ndarray, np.ndarray]:
    """(what AutoGluon hands the scorer for output 0, the same prediction in model space)."""
    y, kind, k = task.y[rows, 0], task.outputs[0]["kind"], task.widths[0]
    needs_class = competition_scorer(task.ws, 0).needs_class
    if kind == "regression":
        pred = y + rng.normal(0, 0.1 * y.std(), len(y)) if good else rng.normal(y.mean(), y.std(), len(y))
        return pred, pred[:, None]
    if kind == "binary":
        p = np.clip(y * 0.8 + rng.uniform(0, 0.2, len(y)), 0, 1) if good else rng.uniform(0, 1, len(y))
        return p, p[:, None]
    codes = y.astype(int)
    if needs_class:
        pred = (
            np.where(rng.uniform(size=len(y)) < 0.9, codes, rng.integers(0, k, len(y)))
            if good
            else rng.integers(0, k, len(y))
        )
        return pred, np.eye(k)[pred]
    proba = (
        0.7 * np.eye(k)[codes] + 0.3 * rng.dirichlet(np.ones(k), len(y)) if good else rng.dirichlet(np.ones(k), len(y))
    )
    return proba, proba


@pytest.mark.parametrize(
    "name, needs", [("breast-cancer", "proba"), ("wine", "proba"), ("iris-species", "class"), ("diabetes", "pred")]
)
def test_scorer_scores_as_the_competition_does(tasks, name, needs):
    task = tasks[name]
    rows = task.split[1]
    scorer = competition_scorer(task.ws, 0)
    assert getattr(scorer, f"needs_{needs}")
    assert scorer.greater_is_better_internal == task.higher_is_better
    sign = 1 if task.higher_is_better else -1  # AutoGluon's scores are higher-is-better: losses come negated
    truth = pd.Series(task.y[rows, 0].astype(int if task.outputs[0]["kind"] != "regression" else float))
    rng = np.random.default_rng(0)
    scores = {}
    for good in (False, True):
        ag_pred, model_pred = _predictions(task, rows, good, rng)
        scores[good] = scorer(truth, ag_pred)
        assert scores[good] == pytest.approx(sign * task.score(model_pred, rows), rel=1e-9, abs=1e-12)
    assert scores[True] > scores[False]
    exact = np.eye(task.widths[0])[truth.to_numpy()] if needs == "proba" and task.widths[0] > 1 else truth.to_numpy()
    assert scorer.convert_score_to_error(scorer(truth, exact)) == pytest.approx(0, abs=1e-9)  # the optimum


def test_scorer_maps_autogluons_classes_to_class_codes(tasks):
    # class 1 missing from the training rows: AutoGluon's codes 0, 1 and its two probability columns are 0 and 2
    task = tasks["wine"]
    rows = task.split[1][task.y[task.split[1], 0] != 1]
    codes = task.y[rows, 0].astype(int)
    proba = np.random.default_rng(1).dirichlet(np.ones(2), len(rows))
    model = np.zeros((len(rows), 3))
    model[:, [0, 2]] = proba
    scorer = competition_scorer(task.ws, 0, classes=[0, 2])
    assert scorer(pd.Series(codes // 2), proba) == pytest.approx(-task.score(model, rows), rel=1e-9)


def test_multi_output_scorers_average_to_the_competition_score(tasks):
    task = tasks["digits-multilabel"]  # mean column-wise ROC AUC over two binary targets
    rows = task.split[1]
    pred = np.random.default_rng(2).uniform(size=(len(rows), 2)) * 0.5 + task.y[rows] * 0.4
    per_output = [competition_scorer(task.ws, j)(pd.Series(task.y[rows, j].astype(int)), pred[:, j]) for j in range(2)]
    assert np.mean(per_output) == pytest.approx(task.score(pred, rows), rel=1e-9)
    assert per_output[0] != pytest.approx(per_output[1])  # each scorer looks at its own column


def test_scorer_pickles_and_reloads_the_workspace_lazily(tasks):
    task = tasks["wine"]
    rows = task.split[1]
    scorer = competition_scorer(task.ws, 0)
    clone = pickle.loads(pickle.dumps(scorer))
    assert clone._score_func._loaded is None  # only the path and indices travelled
    truth, proba = pd.Series(task.y[rows, 0].astype(int)), np.random.default_rng(3).dirichlet(np.ones(3), len(rows))
    assert clone(truth, proba) == scorer(truth, proba)
    assert (clone.name, clone.needs_proba, clone.greater_is_better_internal) == (
        scorer.name,
        scorer.needs_proba,
        scorer.greater_is_better_internal,
    )


@pytest.mark.parametrize("name", sorted(BESIDE))
def test_a_metric_reading_other_columns_is_scored_on_the_target_alone(tasks, name):
    # bias AUC reads identity columns, masked MAE a mask, neither of which AutoGluon's scorer is given
    task = tasks[name]
    rows = task.split[1]
    scorer = competition_scorer(task.ws, 0)
    y, rng = task.y[rows, 0], np.random.default_rng(4)
    if task.outputs[0]["kind"] == "binary":  # informative but imperfect: both metrics then differ from their optima
        ag_pred = np.clip(0.4 * y + rng.uniform(0, 0.8, len(y)), 0, 1)
    else:
        ag_pred = y + rng.normal(0, 0.5 * y.std(), len(y))
    model_pred = ag_pred[:, None]
    column = task.outputs[0]["name"]
    if task.outputs[0]["kind"] == "binary":
        truth, alone = task.y[rows, 0].astype(int), BESIDE[name](task.y[rows, 0], ag_pred)
    else:  # the original values: the targets as the competition scores them, the predictions decoded
        truth = task.y[rows, 0]
        original = task.transform.inverse_transform(model_pred)[column].to_numpy(float)
        alone = BESIDE[name](task.targets.iloc[rows][column].to_numpy(float), original)
    sign = 1 if task.higher_is_better else -1
    assert scorer(pd.Series(truth), ag_pred) == pytest.approx(sign * alone, rel=1e-9)
    assert task.score(model_pred, rows) != pytest.approx(alone, rel=1e-3)  # the competition's metric differs


@pytest.mark.parametrize("name", sorted(BESIDE))
def test_fit_autogluon_trains_where_the_metric_reads_other_columns(tasks, tmp_path, name):
    task = tasks[name]
    val = task.split[1]
    result = fit_autogluon(task, seconds=20, out_dir=tmp_path / "ag", hyperparameters=FAST)
    assert result["val_score"] == pytest.approx(task.score(result["val_pred"], val))
    constant = _constant(task, val)
    assert task.better(result["val_score"], constant) and abs(result["val_score"] - constant) > 0.05 * abs(constant)


def test_autogluon_fits_the_rows_rmspe_scores_weighted_as_it_weighs_them(tasks, tmp_path):
    """RMSPE skips the days of 0 sales and weighs each other row by 1/y^2: the predictor learns the other fit rows,
    with those weights as its sample_weight column (not a feature; not weighing its scorer, which is RMSPE already),
    and refits on them alone (AutoGluon takes no extra rows beside weights)."""
    task = tasks[WEIGHED]
    fit, val = task.split
    nonzero = int((task.y[fit, 0] > 0).sum())
    assert nonzero < len(fit)  # the closed days
    out = fit_autogluon(task, seconds=5, out_dir=tmp_path / "ag", hyperparameters=FAST)
    (m,) = out["models"]
    assert m["weighted"] and m["tuned_on_rows"] == m["refit_on_rows"] == nonzero
    predictor = TabularPredictor.load(m["path"])
    assert predictor.sample_weight == ag_tool.WEIGHT and not predictor.weight_evaluation
    assert ag_tool.WEIGHT not in predictor.features()
    _, y = predictor.load_data_internal("train")
    assert len(y) and (y > 0).all()
    assert out["val_score"] == pytest.approx(task.score(out["val_pred"], val))
    assert out["test_pred"].shape == (len(task.test.ids), 1)


def _constant(task: TaskData, rows: np.ndarray) -> float:
    """The score of predicting the fit rows' mean (the class frequencies for multiclass) everywhere."""
    fit = task.split[0]
    parts = [
        np.tile(np.bincount(task.y[fit, j].astype(int), minlength=w) / len(fit), (len(rows), 1))
        if o["kind"] == "multiclass"
        else np.full((len(rows), 1), task.y[fit, j].mean())
        for j, (o, w) in enumerate(zip(task.outputs, task.widths))
    ]
    return task.score(np.hstack(parts), rows)


@pytest.mark.parametrize("name, margin", [("breast-cancer", 0.4), ("diabetes", 10.0)])
def test_fit_autogluon_beats_the_constant_on_the_validation_rows(tasks, tmp_path, name, margin):
    task = tasks[name]
    val = task.split[1]
    result = fit_autogluon(task, seconds=25, out_dir=tmp_path / "ag", hyperparameters=FAST)
    constant = _constant(task, val)
    print(f"{name}: val {task.metric_name} {result['val_score']:.4f} vs constant {constant:.4f}")
    assert result["val_pred"].shape == (len(val), 1)
    assert result["test_pred"].shape == (len(task.test.ids), 1)
    assert np.isfinite(result["test_pred"]).all()
    if task.outputs[0]["kind"] == "binary":
        assert ((result["test_pred"] >= 0) & (result["test_pred"] <= 1)).all()
    assert result["val_score"] == pytest.approx(task.score(result["val_pred"], val))
    gain = result["val_score"] - constant if task.higher_is_better else constant - result["val_score"]
    assert gain > margin
    # selection kept honest: AutoGluon tuned on the fit rows alone, then refitted its choice on every row
    (summary,) = result["models"]
    fit = task.split[0]
    assert summary["tuned_on_rows"] == len(fit) and summary["refit_on_rows"] == len(fit) + len(val)
    assert summary["refit"] == f"{summary['selected']}_FULL" and summary["best"] == summary["refit"]
    predictor = TabularPredictor.load(str(tmp_path / "ag" / "output_0"))
    X_tuned, _ = predictor.load_data_internal("train")
    X_holdout, _ = predictor.load_data_internal("val")
    assert len(X_tuned) + len(X_holdout) == len(fit)  # the validation rows were never AutoGluon's
    assert predictor.model_best == summary["refit"]
    # the test predictions are the refitted model's, not the selected model's
    X_test = task.test.inputs["tab"].reset_index(drop=True)
    before = predictor.predict(X_test, model=summary["selected"]).to_numpy(float)
    after = predictor.predict(X_test, model=summary["refit"]).to_numpy(float)
    if task.outputs[0]["kind"] == "binary":
        after = predictor.predict_proba(X_test, model=summary["refit"])[1].to_numpy(float)
        before = predictor.predict_proba(X_test, model=summary["selected"])[1].to_numpy(float)
    assert np.allclose(result["test_pred"][:, 0], after) and not np.allclose(before, after)
    assert np.allclose(result["validated_test_pred"][:, 0], before)  # the blender's: the model it saw validate


def test_fit_autogluon_without_refit_predicts_the_test_rows_with_the_selected_model(tasks, tmp_path):
    task = tasks["diabetes"]
    result = fit_autogluon(task, seconds=15, out_dir=tmp_path / "ag", hyperparameters={"XT": {}}, refit=False)
    (summary,) = result["models"]
    assert summary["refit"] is None and summary["best"] == summary["selected"]
    predictor = TabularPredictor.load(str(tmp_path / "ag" / "output_0"))
    X_test = task.test.inputs["tab"].reset_index(drop=True)
    assert np.allclose(result["test_pred"][:, 0], predictor.predict(X_test).to_numpy(float))
    assert np.array_equal(result["validated_test_pred"], result["test_pred"])
    assert not any(m.endswith("_FULL") for m in predictor.model_names())


def test_fit_autogluon_fills_every_output(tasks, tmp_path):
    task = tasks["digits-multilabel"]
    val = task.split[1]
    result = fit_autogluon(task, seconds=30, out_dir=tmp_path / "ag", hyperparameters={"XT": {}})
    assert result["val_pred"].shape == (len(val), 2) and result["test_pred"].shape == (len(task.test.ids), 2)
    assert ((result["val_pred"] >= 0) & (result["val_pred"] <= 1)).all()
    assert [m["output"] for m in result["models"]] == [o["name"] for o in task.outputs]
    assert result["val_score"] > _constant(task, val) + 0.3  # the constant's AUC is 0.5


def test_fit_autogluon_refuses_a_task_without_a_tab_map(tasks, tmp_path):
    ws = tmp_path / "ws"
    shutil.copytree(tasks["iris-species"].ws, ws, symlinks=True)
    for split in ("train", "test"):  # the same columns, read as a text modality
        (ws / f"{split}_tab_input_map.csv").rename(ws / f"{split}_txt_input_map.csv")
    with pytest.raises(ValueError, match="needs a tab input map"):
        fit_autogluon(TaskData(ws), seconds=10, out_dir=tmp_path / "ag")
    assert not (tmp_path / "ag").exists()


def test_fit_autogluon_says_why_no_model_trained(tasks, tmp_path):
    ws = tmp_path / "ws"
    shutil.copytree(tasks["breast-cancer"].ws, ws, symlinks=True)
    with (ws / "code_metric.py").open("a") as f:  # every model's validation score now fails
        f.write("\n\ndef metric(y_true, y_pred):\n    raise ValueError('metric exploded')\n")
    with pytest.raises(RuntimeError, match="trained no model for output 0.*metric exploded"):
        fit_autogluon(TaskData(ws), seconds=15, out_dir=tmp_path / "ag", hyperparameters={"XT": {}})


def test_a_table_too_large_for_the_time_limit_is_fitted_on_a_sample(tasks, tmp_path, monkeypatch):
    """On 3.2 M rows AutoGluon's 42 s went to one model's first iterations (accuracy 0.54; a 200,000-row sample:
    0.75): it fits on the rows its time can take and refits on the same share of every row."""
    task = tasks["breast-cancer"]
    fit, val = task.split
    monkeypatch.setattr(ag_tool, "MIN_TUNING_ROWS", 1)
    monkeypatch.setattr(ag_tool, "CELLS_PER_CORE_S", 15.01 * task.train.inputs["tab"].shape[1])  # 150 rows in 10 s
    monkeypatch.setattr(ag_tool.machine, "cores", lambda: 1)
    result = fit_autogluon(task, seconds=10 / ag_tool.FIT_SHARE, out_dir=tmp_path / "ag", hyperparameters=FAST)
    (summary,) = result["models"]
    assert summary["fit_rows"] == len(fit) and summary["tuned_on_rows"] == 150
    assert summary["refit_on_rows"] == 150 + round(len(val) * 150 / len(fit))
    predictor = TabularPredictor.load(str(tmp_path / "ag" / "output_0"))
    assert predictor.info()["num_rows_train"] < 150  # AutoGluon's own holdout comes out of the sample
    assert result["val_pred"].shape == (len(val), 1)  # every validation row is still predicted and scored
    assert result["val_score"] > 0.9


def test_past_the_budgets_ceiling_the_first_boosted_models_fit_on_a_sample(tasks, tmp_path, monkeypatch):
    """AutoGluon's work grows with a large table to fit its first boosted models on every row, up to the budget's
    ceiling (`most`, SolveBudget.autogluon_most); past it they fit on the rows it affords (least_rows), and every
    validation row is still predicted. LightGBM is made dear here, so that a small table is past the ceiling."""
    task = tasks["breast-cancer"]
    fit, val = task.split
    monkeypatch.setitem(plan_module.COSTS, "GBM", (0.8, 2000.0, 1.5))
    monkeypatch.setattr(plan_module, "MIN_ROWS", 200)
    grown = fit_autogluon(task, seconds=1, out_dir=tmp_path / "grown", hyperparameters={"GBM": {}})
    capped = fit_autogluon(task, seconds=1, out_dir=tmp_path / "capped", hyperparameters={"GBM": {}}, most=1)
    assert grown["models"][0]["tuned_on_rows"] == len(fit)
    assert capped["models"][0]["tuned_on_rows"] == 200
    assert capped["val_pred"].shape == (len(val), 1) and capped["val_score"] > 0.9


def test_the_rows_autogluon_fits_follow_its_time_columns_and_cores():
    assert tuning_rows(42, 56, 2) == 2 * tuning_rows(21, 56, 2) == 2 * tuning_rows(42, 56, 1)
    assert tuning_rows(42, 28, 2) == 2 * tuning_rows(42, 56, 2)
    assert 150_000 < tuning_rows(42, 56, 2) < 800_000  # the measured range (see CELLS_PER_CORE_S)
    assert tuning_rows(0.1, 1_000, 1) == ag_tool.MIN_TUNING_ROWS


def test_a_sample_keeps_the_rows_of_a_class_it_missed():
    rows = np.arange(100_000)
    label = np.zeros(len(rows), int)
    label[rows % 2 == 1] = 1
    label[[8, 70_000]] = 2  # a class of two rows, which a 1,000-row sample misses with probability 0.98
    picked = sample_rows(rows, label, 1_000, np.random.default_rng(0), classes=True)
    assert {8, 70_000} <= set(picked) and 1_000 <= len(picked) <= 1_002
    assert np.all(np.diff(picked) > 0)  # in order, each once
    plain = sample_rows(rows, label, 1_000, np.random.default_rng(0), classes=False)
    assert len(plain) == 1_000 and 2 not in set(label[plain])
    assert np.array_equal(sample_rows(rows[:500], label, 1_000, np.random.default_rng(0), True), rows[:500])


def test_autogluon_fits_the_models_it_planned_with_its_time_limit_only_a_safety_cap(tasks, tmp_path):
    """The models come from the plan (tools/autogluon_plan.py), not from what a clock allowed; a fold given its
    solution's models fits those alone."""
    task = tasks["breast-cancer"]
    result = fit_autogluon(task, seconds=10, out_dir=tmp_path / "ag", hyperparameters=FAST, refit=False)
    (summary,) = result["models"]
    assert summary["planned"] == ["RandomForest", "ExtraTrees"] and "2 models" in summary["plan"]
    info = TabularPredictor.load(str(tmp_path / "ag" / "output_0"), verbosity=0).info()
    assert info["time_limit"] == pytest.approx(SAFETY * 10)
    fitted = {m for m in info["model_info"] if not m.startswith("WeightedEnsemble")}
    assert fitted == {"RandomForest", "ExtraTrees"}
    # what a cross-validation fold rebuilds: the selected ensemble's members, by their weights
    assert summary["selected"].startswith("WeightedEnsemble") and set(summary["members"]) <= fitted
    assert sum(summary["members"].values()) == pytest.approx(1.0, abs=1e-3)

    fold = fit_autogluon(
        task, seconds=10, out_dir=tmp_path / "fold", hyperparameters=FAST, refit=False, only=[["ExtraTrees"]]
    )
    assert fold["models"][0]["planned"] == ["ExtraTrees"]
    info = TabularPredictor.load(str(tmp_path / "fold" / "output_0"), verbosity=0).info()
    assert {m for m in info["model_info"] if not m.startswith("WeightedEnsemble")} == {"ExtraTrees"}


def test_a_refit_is_judged_on_the_validation_rows_it_learnt_from(tasks, tmp_path):
    """A refit (a real refit_full) learnt from the validation rows, which its original never saw: it must predict
    them about as well, or it is broken. Refitted from their true targets it predicts them better and is kept; from
    targets that are not theirs, it is rejected and the original is the predictor's best again."""
    from tools.autogluon_tool import LABEL, _check_refit, _features

    task = tasks["diabetes"]
    X, y = _features(task.train.inputs["tab"]), task.y[:, 0]
    fit, val = task.split
    checked = X.iloc[val].assign(**{LABEL: y[val]})
    for k, (targets, broken) in enumerate(((y[val], False), (y[val][::-1] * 3 + 100, True))):
        predictor = TabularPredictor(LABEL, path=str(tmp_path / f"p{k}"), problem_type="regression", verbosity=0)
        predictor.fit(X.iloc[fit].assign(**{LABEL: y[fit]}), hyperparameters=FAST, num_cpus=1)
        selected = predictor.model_best
        refitted = predictor.refit_full(model="best", train_data_extra=X.iloc[val].assign(**{LABEL: targets}))
        note = _check_refit(predictor, refitted, selected, checked)
        assert (note is not None) == broken, note
        assert predictor.model_best == (selected if broken else refitted[selected])
        if broken:
            assert "on validation rows it learnt from" in note and f"kept {selected}" in note


def test_a_refit_that_learnt_a_forecasts_latest_level_is_kept(tasks, tmp_path):
    """A forecast whose latest span (the validation rows) moved to another level: the refit learns it, so it fits
    the earlier fit rows less tightly (ExtraTrees: MAE 35.4 against 29.2, which the fit-row check rejected) but
    predicts the latest rows far better than the original that never saw them; fit_autogluon keeps it."""
    import copy

    task = copy.copy(tasks["diabetes"])
    val = task.split[1]
    y = task.y.copy()
    y[val] += 4 * y.std()
    task.__dict__["y"] = y
    result = fit_autogluon(task, seconds=30, out_dir=tmp_path / "ag", hyperparameters=FAST)
    (summary,) = result["models"]
    assert summary["refit_rejected"] is None and summary["refit"] == f"{summary['selected']}_FULL"


def _spin(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def test_autogluon_gets_the_cores_other_processes_leave_idle():
    """AutoGluon's threads (machine.idle_cores): cores spun by other processes are busy, and a model gets one
    core at least."""
    cores = machine.cores()
    spinners = [multiprocessing.get_context("spawn").Process(target=_spin, args=(4.0,)) for _ in range(cores)]
    for p in spinners:
        p.start()
    try:
        time.sleep(1.0)  # the spinners started
        assert machine.idle_cores(1.0) == 1  # every core spun by others: the one a model always gets
    finally:
        for p in spinners:
            p.join()
