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
    """Its recipe on a fold: AutoGluon with a fold's share of its work, among the models its solution fitted."""
    from tools.autogluon_tool import fit_autogluon

    folder = cv.workspace.solution(sid).folder
    models = Path(tempfile.mkdtemp(prefix=f"fold{k}-", dir=folder))
    try:
        out = fit_autogluon(
            cv.task.with_split(train, held),
            seconds=cv.budget.autogluon_time / len(cv.folds),
            presets=cv.budget.autogluon_presets,
            out_dir=models,
            refit=False,
            only=[m.get("planned") for m in plan["models"]],  # None: an earlier solve's, planned anew
        )
    finally:
        shutil.rmtree(models, ignore_errors=True)
    return out["val_pred"]
