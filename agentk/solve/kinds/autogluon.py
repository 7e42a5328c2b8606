"""AutoGluon's TabularPredictor on the tab inputs, one predictor per output, optimising the competition's metric
(tools/autogluon_tool.py); its work planned from the data and cut to the wall time the solve allots it."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from agentk.modalities import TABULAR
from agentk.solve.solution import Solution, features_note

NAME = "autogluon"


def plans(solver) -> list[tuple[str, dict]]:
    return [(NAME, {})] if TABULAR.name in solver.task.modalities else []  # AutoGluon fits tables


def build(solver, sid: str) -> Solution:
    from tools.autogluon_tool import fit_autogluon

    most = solver.budget.autogluon_most
    grows = f", growing with the rows to {most:.0f} s" if most else ", growing with the rows"
    solver.log(
        f"{sid}: AutoGluon ({solver.budget.autogluon_presets}, {solver.budget.autogluon_time:.0f} s of modelled "
        f"work{grows}) optimising {solver.task.metric_name}"
    )
    t0 = time.monotonic()
    out = fit_autogluon(
        solver.task,
        seconds=solver.budget.autogluon_time,
        presets=solver.budget.autogluon_presets,
        out_dir=solver.workspace.solution(sid).models,
        refit=solver.refit,
        most=solver.budget.autogluon_most,
        wall=solver.allotted.left(),
    )
    for m in out["models"]:
        solver.log(f"  {m['output']}: {m['plan']}; wall time limit {m['time_limit']:.0f} s")
        if m["refit_rejected"]:
            solver.say(f"{sid}: {m['output']}: {m['refit_rejected']}")
    fit, val = solver.task.split
    # a table too large for AutoGluon's budget: it fits on a sample (tools/autogluon_tool.tuning_rows)
    sampled = next((m for m in out["models"] if m["tuned_on_rows"] < m["fit_rows"]), None)
    tuned_on = (
        f"a sample of {sampled['tuned_on_rows']} of the {len(fit)} fit rows (what its planned work can take)"
        if sampled
        else f"the {len(fit)} fit rows"
    )
    if sampled:
        solver.log(f"  tuned on {tuned_on}")
    every = f"{sampled['refit_on_rows']} rows (the same share of every row)" if sampled else "all rows"
    weighted = any(m.get("weighted") for m in out["models"])  # the metric's row weights (TaskData.fit_weights)
    if weighted:  # AutoGluon takes no rows beside its fit rows' weights
        every = f"{sampled['refit_on_rows'] if sampled else 'the'} fit rows"
    refitted = (
        f"; then its best model ({', '.join(m['selected'] for m in out['models'])}) refitted on {every} "
        "for the test predictions"
        if solver.refit and all(m["refit_on_rows"] for m in out["models"])
        else "; the test predictions from the same model (no refit"
        + ("; the wall time allotted ran short)" if solver.refit else ")")
    )
    return Solution(
        sid,
        "autogluon",
        f"AutoGluon TabularPredictor ({solver.budget.autogluon_presets}) on the {TABULAR.name} inputs"
        f"{features_note(solver)}, one predictor per output, optimising the competition's metric"
        f"{' (its rows weighted as the metric weighs them)' if weighted else ''}; tuned on its "
        f"own holdout of {tuned_on}, scored on the {len(val)} validation rows it never saw"
        f"{refitted}",
        out["val_score"],
        out["val_pred"],
        out["test_pred"],
        time.monotonic() - t0,
        {
            "models": out.get("models"),
            "refit": solver.refit,
            "features": solver.feature_record,
            "modelled_seconds": round(out["modelled_seconds"], 1),
        },
        out["validated_test_pred"] if solver.refit else None,
    )


def fold(cv, sid: str, plan: dict, train: np.ndarray, held: np.ndarray, k: int) -> np.ndarray:
    """Its recipe on a fold: the models its chosen one predicts with (an ensemble's members), with the solution's
    whole work, within the fold's share of the wall time left. A fifth of its work among every model it fitted was
    a weaker recipe than the solution: out of fold it scored below its validation rows on every small table of the
    corpus, and lost the choice to models it beat on the test (a credit-default table: 5-fold AUC 0.656 against
    validation 0.725, test 0.750 against the chosen classical candidate's 0.737)."""
    from tools.autogluon_tool import fit_autogluon

    folder = cv.workspace.solution(sid).folder
    models = Path(tempfile.mkdtemp(prefix=f"fold{k}-", dir=folder))
    try:
        out = fit_autogluon(
            cv.task.with_split(train, held),
            seconds=cv.budget.autogluon_time,
            presets=cv.budget.autogluon_presets,
            out_dir=models,
            refit=False,
            only=[_rebuilt(m) for m in plan["models"]],
            wall=cv.deadline.allot(0) / (len(cv.folds) - k) if cv.deadline is not None else None,
        )
    finally:
        shutil.rmtree(models, ignore_errors=True)
    return out["val_pred"]


def fold_seconds(solution: Solution, folds: int) -> float:
    """What its recipe takes on `folds` folds: its rebuilt models' fit times, once per fold (what building it took,
    for an earlier solve that recorded no members)."""
    models = solution.details.get("models") or []
    if not models or not all(m.get("members") for m in models):
        return solution.seconds
    fits = 0.0
    for m in models:
        took = {row["model"]: row["fit_time"] for row in m["leaderboard"]}
        fits += sum(took.get(name, 0.0) for name in _rebuilt(m))
    return folds * fits


def _rebuilt(model: dict) -> list[str] | None:
    """The models a fold rebuilds for one output: the chosen model's members among those planned (None: an earlier
    solve's, every model planned anew)."""
    planned = model.get("planned")
    members = [name for name in model.get("members") or {} if planned and name in planned]
    return members or planned
