"""The classical candidates (tools/classical.py): a strong classical model per modality, and the pair model."""

from __future__ import annotations

import time

import numpy as np

from agentk.solve.solution import Solution

NAME = "classical"


def plans(solver) -> list[tuple[str, dict]]:
    from tools.classical import modules

    found = []
    for name, module in modules(solver.task):
        if (why := module.applies(solver.task)) is None:
            found.append((f"classical-{name}", {"name": name}))
        else:
            solver.log(f"classical-{name}: not built ({why})")
    return found


def build(solver, sid: str, name: str) -> Solution:
    """A classical candidate (tools/classical.py): its features into a few scikit-learn models, one chosen by
    cross-validation on the fit rows, refitted on every row for the test predictions."""
    from tools.classical import candidate, fit_candidate

    t0 = time.monotonic()
    module = candidate(name)
    solver.log(f"{sid}: building features")
    feats = module.features(solver.task, log=solver.log)
    res = fit_candidate(solver.task, feats, refit=solver.refit, log=solver.log, deadline=solver.allotted)
    return Solution(
        sid,
        "classical",
        res.plan,
        res.val_score,
        res.val_pred,
        res.test_pred,
        time.monotonic() - t0,
        res.details,
        res.validated_test_pred,
    )


def fold(cv, sid: str, plan: dict, train: np.ndarray, held: np.ndarray, k: int) -> np.ndarray:
    """Its recipe on a fold: the chosen model on its features, with what it learnt on the fit rows fixed (a Gaussian
    process's kernel) and its probabilities tempered as on the fit rows; the features are built once per
    cross-validation."""
    from tools.classical import candidate, predict_outputs, tempered_probabilities

    name = sid.removeprefix("classical-")
    if name not in cv.features:
        cv.features[name] = candidate(name).features(cv.task, log=cv.log)
    feats = cv.features[name]
    model, learnt = feats.models[plan["chosen"]], plan.get("learnt")
    pred = predict_outputs(cv.task, model, feats.train, train, feats.train[held], learnt)
    return tempered_probabilities(cv.task, pred, plan.get("temperature", 1.0))
