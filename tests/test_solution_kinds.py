"""The solution kinds' registry (agentk/solve/kinds): each kind declares the same small interface, and a kind added
as one module plus one registry entry is planned, built, cross-validated, saved, resumed and chosen by the solver
without any other change."""

from __future__ import annotations

import sys
import time
import types

import numpy as np
import pytest
from sklearn.neighbors import KNeighborsRegressor

from agentk.core.fileio import read_json
from agentk.modalities import TABULAR
from agentk.solve import kinds
from agentk.solve.budgets import PRESETS
from agentk.solve.kinds import KINDS
from agentk.solve.solution import Solution
from agentk.solve.solver import Solver
from agentk.workspace import Workspace


def test_every_registered_kind_declares_the_interface_the_solver_calls():
    assert list(KINDS) == ["constant", "autogluon", "classical", "network"]  # the constant first: the floor
    for name, kind in KINDS.items():
        assert kind.NAME == name
        assert {"plans", "build", "fold"} <= set(vars(kind)), name
        assert kind.__name__ == f"agentk.solve.kinds.{name}"  # one module per kind, named for it


def _neighbours_kind() -> types.ModuleType:
    """A new kind, as a newcomer would write its module: k nearest neighbours on the numeric tab inputs, predicting
    the targets in model space. Records which folds it was asked for."""
    kind = types.ModuleType("neighbours")
    kind.NAME = "neighbours"
    kind.folds = []

    def features(task):
        tab = task.train.inputs[TABULAR.name].select_dtypes("number")
        test = task.test.inputs[TABULAR.name][tab.columns]
        mean, std = tab.mean(), tab.std().replace(0, 1)
        return ((tab - mean) / std).fillna(0).to_numpy(), ((test - mean) / std).fillna(0).to_numpy()

    def plans(solver):
        return [("neighbours", {"k": 7})] if TABULAR.name in solver.task.modalities else []

    def build(solver, sid, k):
        t0 = time.monotonic()
        task = solver.task
        x, x_test = features(task)
        fit, val = task.split
        model = KNeighborsRegressor(k).fit(x[fit], task.y[fit])
        val_pred = model.predict(x[val])
        test_pred = KNeighborsRegressor(k).fit(x, task.y).predict(x_test)
        return Solution(
            sid,
            kind.NAME,
            f"{k} nearest neighbours",
            task.score(val_pred, val),
            val_pred,
            test_pred,
            time.monotonic() - t0,
            {"k": k},
        )

    def fold(cv, sid, plan, train, held, k):
        kind.folds.append(k)
        x, _ = features(cv.task)
        return KNeighborsRegressor(plan["k"]).fit(x[train], cv.task.y[train]).predict(x[held])

    kind.plans, kind.build, kind.fold = plans, build, fold
    return kind


@pytest.fixture
def neighbours(monkeypatch):
    """The registry holding the constant and the new kind alone (the other kinds take minutes)."""
    kind = _neighbours_kind()
    monkeypatch.setitem(sys.modules, "neighbours", kind)
    monkeypatch.setattr(kinds, "KINDS", {"constant": KINDS["constant"], "neighbours": kind})
    monkeypatch.setattr("agentk.solve.solver.KINDS", kinds.KINDS)
    monkeypatch.setattr("agentk.solve.cross_validation.KINDS", kinds.KINDS)
    return kind


def test_a_kind_added_to_the_registry_is_built_cross_validated_chosen_and_resumed(example_copy, neighbours):
    ws = example_copy("diabetes")  # a small table of values: cross-validation chooses
    solver = Solver(ws, PRESETS["quick"], log=lambda m: None, features=False)
    assert [(sid, kind) for sid, kind, _ in solver.plans()] == [("constant", "constant"), ("neighbours", "neighbours")]
    summary = solver.run()
    assert neighbours.folds == [0, 1, 2, 3, 4]  # its own recipe on every fold
    by_id = {s["id"]: s for s in summary["solutions"]}
    assert by_id["neighbours"]["kind"] == "neighbours" and "cv_score" in by_id["neighbours"]
    assert summary["best"] == "neighbours"  # diabetes' inputs explain its target better than its mean does
    files = Workspace(ws).solution("neighbours")
    assert read_json(files.plan)["k"] == 7
    assert Workspace(ws).submission.read_bytes() == files.submission.read_bytes()
    cv_before = np.load(files.cross_validated)["pred"]

    neighbours.folds.clear()  # a second run resumes: nothing is built or folded again
    again = Solver(ws, PRESETS["quick"], log=lambda m: None, features=False).run()
    assert neighbours.folds == [] and again["best"] == "neighbours"
    assert np.array_equal(np.load(files.cross_validated)["pred"], cv_before)
