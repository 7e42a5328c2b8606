"""Cross-validated selection on small tables (agentk/solve/cross_validation.py): the folds, a fold's task, a
network's fold that never reads its held rows' targets, and the fall-back to the validation rows. The solve of
breast-cancer (tests/test_solve.py) checks the whole path: out-of-fold scores, the choice and the report."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from agentk.core.fileio import read_json
from agentk.solve.budgets import PRESETS
from agentk.solve.cross_validation import CV_ROWS, FOLDS, applies
from agentk.solve.cross_validation import seconds as cv_seconds
from agentk.solve.kinds import autogluon as autogluon_kind
from agentk.solve.kinds import classical as classical_kind
from agentk.solve.kinds.constant import group_column
from agentk.solve.solution import Solution
from agentk.solve.solver import Solver
from agentk.workspace import Workspace
from tools.classical import tempered_probabilities
from tools.fusion import refit_fusion
from tools.fusion_config import FusionConfig
from tools.task_data import TaskData


def test_folds_hold_out_every_row_once_and_keep_the_class_shares(example_copy):
    task = TaskData(example_copy("iris-species"))
    n = len(task.y)
    folds = task.folds(5)
    assert task.held_out == "random rows"
    held = np.concatenate([h for _, h in folds])
    assert sorted(held.tolist()) == list(range(n))
    classes = task.y[:, 0].astype(int)
    share = np.bincount(classes) / n
    for train, h in folds:
        assert len(train) + len(h) == n and not set(train) & set(h)
        assert np.abs(np.bincount(classes[h], minlength=len(share)) - share * len(h)).max() <= 1


def test_folds_hold_out_whole_groups(example_copy):
    task = TaskData(example_copy("diabetes"))
    groups = (np.arange(len(task.y)) // 7).astype(str)  # readings of the same patient, seven each
    task.__dict__["groups"] = ("patient", groups)
    for train, held in task.folds(5):
        assert not set(groups[train]) & set(groups[held])
    assert task.held_out == "whole groups of 'patient', as the test shares none of the train's"


def test_a_forecast_validates_on_its_latest_rows_and_folds_over_spans_of_time(example_copy):
    task = TaskData(example_copy("diabetes"))
    days = np.random.default_rng(0).permutation(len(task.y)) // 4  # four rows a day, in no order in the table
    task.__dict__["times"] = ("date", days.astype(float))
    fit, val = task.split
    assert days[fit].max() < days[val].min()  # no day on both sides: the validation rows are the future
    assert abs(len(val) - 0.2 * len(task.y)) <= 4
    learn, stop = task.holdout(fit)
    assert days[learn].max() < days[stop].min() and set(learn) | set(stop) == set(fit)
    assert read_json(Workspace(task.ws).split)["time"] == "date"
    assert task.held_out == "the latest by 'date', as the test rows come after every train row"
    folds = task.folds(3)
    assert sorted(np.concatenate([h for _, h in folds]).tolist()) == list(range(len(task.y)))
    spans = sorted((days[h].min(), days[h].max()) for _, h in folds)
    assert all(a[1] < b[0] for a, b in zip(spans, spans[1:], strict=False))  # disjoint spans, a day in one fold
    within = task.folds(3, fit)  # a candidate's own folds within the fit rows
    assert sorted(np.concatenate([h for _, h in within]).tolist()) == sorted(fit.tolist())


def test_timestamp_ids_are_a_forecasts_time_when_no_other_column_is(example_copy):
    ws = example_copy("diabetes")
    maps = {name: pd.read_csv(ws / name) for name in ("train_tab_input_map.csv", "train_tab_target_map.csv")}
    hour = {
        i: pd.Timestamp("2020-01-01") + pd.Timedelta(hours=k)
        for k, i in enumerate(maps["train_tab_input_map.csv"]["id"])
    }
    for name, frame in maps.items():  # each train row an hour, in the table's order
        frame.assign(id=frame["id"].map(hour).astype(str)).to_csv(ws / name, index=False)
    test = pd.read_csv(ws / "test_tab_input_map.csv")
    later = [str(pd.Timestamp("2021-01-01") + pd.Timedelta(hours=k)) for k in range(len(test))]
    test.assign(id=later).to_csv(ws / "test_tab_input_map.csv", index=False)
    task = TaskData(ws)
    assert task.times[0] == "id"
    fit, val = task.split
    assert task.times[1][fit].max() < task.times[1][val].min() and abs(len(val) - 0.2 * len(task.y)) <= 1


def test_a_folds_task_has_its_rows_and_leaves_the_workspace_split(example_copy):
    ws = example_copy("diabetes")
    task = TaskData(ws)
    fit, val = task.split
    saved = Workspace(ws).split.read_text()
    train, held = task.folds(5)[2]
    fold = task.with_split(train, held)
    assert np.array_equal(fold.split[0], train) and np.array_equal(fold.split[1], held)
    assert np.array_equal(task.split[0], fit) and Workspace(ws).split.read_text() == saved
    assert fold.train is task.train  # the data is shared, not read again


def test_a_networks_fold_never_reads_the_targets_of_its_held_rows(example_copy):
    task = TaskData(example_copy("diabetes"))
    train, held = task.folds(5)[0]
    config = FusionConfig(max_epochs=3)
    first = refit_fusion(task, config, 3, log=lambda m: None, rows=train, held=held)
    assert first.test_pred.shape == (len(held), 1) and first.rows == len(train)
    y = task.y.copy()
    y[held] = y[held][::-1] * 3 + 100  # other targets for the held rows only
    task.__dict__["y"] = y
    again = refit_fusion(task, config, 3, log=lambda m: None, rows=train, held=held)
    assert np.allclose(first.test_pred, again.test_pred)


def test_only_small_tables_are_cross_validated(example_copy):
    small = TaskData(example_copy("diabetes"))
    assert applies(small) and len(small.y) <= CV_ROWS
    assert not applies(TaskData(example_copy("digits-images")))  # images: their networks cost far more per fold


def test_a_recipe_that_fails_leaves_the_choice_to_the_validation_rows(example_copy):
    ws = example_copy("diabetes")
    said = []
    solver = Solver(ws, replace(PRESETS["quick"]), log=said.append, features=False)
    assert solver.cv
    task = solver.task
    val = task.split[1]
    constant = solver.build("constant", "constant")
    good = task.y[val] - 0.3 * (task.y[val] - constant.val_pred)
    made = Solution(
        "made", "network", "no configuration to rebuild", task.score(good, val), good, constant.test_pred, 0
    )
    for s in (constant, made):
        solver.save(s)
    summary = solver.finish([constant, made], solver.cross_validate([constant, made]))
    assert summary["selected_by"] == "validation" and summary["best"] == "made"
    assert any("made: its cross-validation failed" in line for line in said)
    # the constant's recipe ran before it: its out-of-fold predictions are the fit folds' mean or median
    oof = np.load(Workspace(ws).solution("constant").cross_validated)["pred"]
    stat = read_json(Workspace(ws).solution("constant").plan)["statistic"]
    train, held = task.folds(5)[1]
    assert np.allclose(oof[held], {"mean": np.mean, "median": np.median}[stat](task.y[train, 0]))


@pytest.mark.parametrize("cross_validate", [True, False])
def test_the_choice_says_what_judged_it(example_copy, cross_validate):
    ws = example_copy("diabetes")
    solver = Solver(ws, PRESETS["quick"], log=lambda m: None, features=False, cross_validate=cross_validate)
    constant = solver.build("constant", "constant")
    solver.save(constant)
    summary = solver.finish([constant], solver.cross_validate([constant]) if solver.cv else None)
    assert summary["selected_by"] == ("cross-validation" if cross_validate else "validation")
    assert ("cv_score" in summary["solutions"][0]) == cross_validate


def test_on_a_small_table_the_blend_learns_from_every_rows_out_of_fold_predictions(example_copy):
    """Two solutions whose errors are independent: a blend of them, learnt from and judged on the out-of-fold
    predictions of all rows, beats either on nearly every resample, so it is kept, with its own out-of-fold
    predictions (a mean's, or the MLP's out of fold), and chosen."""
    ws = example_copy("diabetes")
    solver = Solver(ws, PRESETS["quick"], log=lambda m: None, features=False)
    task = solver.task
    val, rows = task.split[1], np.arange(len(task.y))
    rng = np.random.default_rng(0)
    oof = {sid: task.y + rng.normal(0, 40, task.y.shape) for sid in ("a", "b")}
    models = [
        Solution(sid, "network", sid, task.score(pred[val], val), pred[val], np.full((len(task.test), 1), k), 0)
        for k, (sid, pred) in enumerate(oof.items())
    ]
    blend = solver.blend(models, oof)
    assert blend is not None and blend.details["inputs"] == ["a", "b"]
    saved = np.load(Workspace(ws).solution("blend").cross_validated)["pred"]  # its own: a mean's, or the MLP's
    assert all(task.score(saved, rows) < task.score(pred, rows) for pred in oof.values())  # RMSE: lower is better
    assert np.allclose(blend.val_pred, saved[val]) and blend.val_score == pytest.approx(task.score(saved[val], val))
    if blend.details["how"] == "mean":
        assert np.allclose(saved, (oof["a"] + oof["b"]) / 2) and np.allclose(blend.test_pred, 0.5)
    for s in (*models, blend):
        solver.save(s)
    summary = solver.finish([*models, blend], {**oof, "blend": saved})
    assert summary["best"] == "blend" and summary["selected_by"] == "cross-validation"
    assert {s["id"]: s["cv_score"] for s in summary["solutions"]}["blend"] == pytest.approx(task.score(saved, rows))


@pytest.mark.parametrize("forecast", [False, True])
def test_a_forecasts_blend_never_learns_weights(example_copy, forecast):
    """A solution off by a constant is what the MLP's weights correct (tests/test_tuner_blender.py), so it blends
    two such solutions. On a forecast it is not tried: it would learn from models that never saw the latest span
    of time and predict the test from them; a mean of refits, or the best single solution, stands instead."""
    ws = example_copy("diabetes")
    said = []
    solver = Solver(ws, PRESETS["quick"], log=said.append, features=False, cross_validate=False)
    task = solver.task
    if forecast:
        task.__dict__["times"] = ("date", np.arange(len(task.y)) / 4)
    val = task.split[1]
    rng = np.random.default_rng(0)
    preds = {"a": task.y[val] + rng.normal(0, 40, (len(val), 1)), "b": task.y[val] + rng.normal(0, 40, (len(val), 1))}
    preds["b"] += 60
    models = [
        Solution(sid, "network", sid, task.score(p, val), p, np.full((len(task.test), 1), 100.0 * k), 0)
        for k, (sid, p) in enumerate(preds.items())
    ]
    blend = solver.blend(models)
    if forecast:
        assert blend is None or blend.details["how"] == "mean"
        assert any("no MLP, as the test follows the train in time" in line for line in said)
    else:
        assert blend is not None and blend.details["how"] == "MLP"


def test_the_constants_per_level_column_is_chosen_on_folds_of_whole_groups(example_copy):
    """Rows in groups of ten whose target carries an offset per group, and a column naming each row's group (a batch
    code): folds of random rows learn a level's median from its held rows' own group, so the column looks
    predictive; folds of whole groups, as the validation split holds rows out, see it predicts nothing for a group
    the training has not seen."""
    ws = example_copy("diabetes")
    solver = Solver(ws, PRESETS["quick"], log=lambda m: None, features=False, cross_validate=False)
    task = solver.task
    n = len(task.y)
    batch = np.arange(n) // 10  # 45 levels: under the constant's 50
    rng = np.random.default_rng(0)
    target = rng.normal(150, 50, batch.max() + 1)[batch] + rng.normal(0, 5, n)
    task.__dict__["targets"] = pd.DataFrame({task.targets.columns[0]: target})
    task.__dict__["y"] = target[:, None]
    task.train.inputs["tab"] = task.train.inputs["tab"].assign(batch=batch)
    every = np.arange(n)
    task.__dict__["groups"] = None
    assert group_column(solver, every) == "batch"
    task.__dict__["groups"] = ("batch", batch.astype(str))
    assert group_column(solver, every) != "batch"


def test_cross_validation_stops_before_a_recipe_the_time_left_cannot_hold(example_copy):
    """A busy machine runs the folds slower than planned: a solution whose rebuild needs more than the bound has
    left is not started, and the validation rows choose (the solve then ends on time)."""
    ws = example_copy("diabetes")
    said = []
    solver = Solver(ws, replace(PRESETS["quick"]), log=said.append, features=False)
    constant = solver.build("constant", "constant")
    slow = replace(constant, id="slow", seconds=solver.deadline.allot(0) + 60)
    for s in (constant, slow):
        solver.save(s)
    assert solver.cross_validate([constant, slow]) == {}
    assert any(line.startswith("slow: no time left to cross-validate it") for line in said)
    assert not Workspace(ws).solution("slow").cross_validated.exists()
    assert solver.finish([constant, slow], {})["selected_by"] == "validation"


def test_autogluons_fold_rebuilds_its_chosen_models_members_and_is_costed_by_their_fits():
    board = [
        {"model": "WeightedEnsemble_L2", "score_val": 0.81, "fit_time": 30.0},
        {"model": "CatBoost", "score_val": 0.79, "fit_time": 21.0},
        {"model": "LightGBM", "score_val": 0.78, "fit_time": 8.0},
        {"model": "RandomForestGini", "score_val": 0.70, "fit_time": 4.0},
    ]
    planned = ["LightGBM", "RandomForestGini", "CatBoost"]
    output = {"planned": planned, "leaderboard": board, "members": {"LightGBM": 0.52, "CatBoost": 0.48}}
    assert autogluon_kind._rebuilt(output) == ["LightGBM", "CatBoost"]
    solution = Solution("autogluon", "autogluon", "", 0.8, np.zeros(1), np.zeros(1), 70.0, {"models": [output]})
    assert cv_seconds(solution) == pytest.approx(FOLDS * (8.0 + 21.0))
    # an earlier solve's plan without members: every planned model, costed as the solution took
    earlier = {**output, "members": None}
    assert autogluon_kind._rebuilt(earlier) == planned
    assert cv_seconds(replace(solution, details={"models": [earlier]})) == 70.0
    # members outside the plan (a bagged preset's names): the plan's models
    assert autogluon_kind._rebuilt({**output, "members": {"LightGBM_BAG_L1": 1.0}}) == planned


def test_a_classical_fold_tempers_its_probabilities_as_the_fit_rows_did(example_copy):
    task = TaskData(example_copy("iris-species"))
    cv = SimpleNamespace(task=task, features={}, log=lambda m: None)
    train, held = task.folds(5)[0]
    plan = {"chosen": "logistic (C=1)"}
    plain = classical_kind.fold(cv, "classical-tab", plan, train, held, 0)
    sharp = classical_kind.fold(cv, "classical-tab", plan | {"temperature": 2.0}, train, held, 0)
    assert plain.shape == (len(held), 3) and not np.allclose(plain, sharp)
    np.testing.assert_allclose(sharp, tempered_probabilities(task, plain, 2.0))
