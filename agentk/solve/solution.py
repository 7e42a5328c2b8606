"""A solution as the solver holds it: its plan in words, its validation score and its predictions in model space
(tools/task_data.py); and what every kind may raise or say of itself."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from tools.heads import width


@dataclass
class Solution:
    id: str
    kind: str  # constant | autogluon | classical | network | blend
    plan: str
    val_score: float
    val_pred: np.ndarray
    test_pred: np.ndarray
    seconds: float
    details: dict = field(default_factory=dict)
    validated_test_pred: np.ndarray | None = None  # the validated model's, when test_pred comes from a refit

    @property
    def blend_test_pred(self) -> np.ndarray:
        """What the blender combines for the test rows: the predictions of the models whose validation predictions
        it learned from. A refit predicts on another scale (a network refitted on every row for the best trial's
        epochs is more confident): a blend of refits validated at accuracy 0.986 and tested at 0.956, the same
        blend of the validated models at 0.986 (digits-images)."""
        return self.test_pred if self.validated_test_pred is None else self.validated_test_pred


# how far past the range of its validation predictions, in spans of that range, a test prediction may lie; a
# model whose test inputs stand far outside what it learned from predicts numbers nothing validated
STRAY_SPANS = 10.0
STRAY_SHARE = 0.01  # of the test rows, beyond which the test predictions are not the validated model's at work


def stray_test_predictions(s: Solution, outputs: list[dict], targets: np.ndarray) -> str | None:
    """Why `s`'s test predictions (model space, refitted or not) cannot be submitted on the strength of its
    validation score, or None: a value that is not finite, or, of a regression output (probabilities are bounded
    anyway), more than STRAY_SHARE of the rows more than STRAY_SPANS spans outside the range of its validation
    predictions and of the validation rows' `targets` (model space, one column per output) together. A network
    validated at RMSPE 0.42 predicted -1.7e11 for every test row, and the graded submission scored 5.8e13, far below
    the constant."""
    val = np.asarray(s.val_pred, dtype=float).reshape(len(s.val_pred), -1)
    starts = np.cumsum([0] + [width(o) for o in outputs])  # each output's first column in model space
    for name, test in (("test", s.test_pred), ("validated model's test", s.validated_test_pred)):
        if test is None or not len(test):
            continue
        test = np.asarray(test, dtype=float).reshape(len(test), -1)
        if not np.isfinite(test).all():
            return f"its {name} predictions hold values that are not finite"
        if test.shape[1] != starts[-1]:
            continue
        for j, o in enumerate(outputs):
            if o["kind"] != "regression":
                continue
            known = np.r_[val[:, starts[j]], np.asarray(targets, dtype=float).reshape(len(targets), -1)[:, j]]
            lo, hi = np.nanmin(known), np.nanmax(known)
            reach = STRAY_SPANS * (hi - lo) + 1e-9 * max(1.0, abs(lo), abs(hi))
            column = test[:, starts[j]]
            out = (column < lo - reach) | (column > hi + reach)
            if out.mean() > STRAY_SHARE:
                return (
                    f"{out.mean():.0%} of its {name} predictions of {o['name']} lie more than {STRAY_SPANS:g} times "
                    f"the range of its validation predictions and targets outside it (e.g. {column[out][0]:.4g} "
                    f"beyond [{lo:.4g}, {hi:.4g}]): its test inputs are not what it learned from"
                )
    return None


class LeftOut(Exception):
    """A solution the budget does not buy (its plan says why): left out, not failed."""


def features_note(solver) -> str:
    """What a solution's plan says of the engineered features on its tab inputs."""
    if not solver.feature_record:
        return " (no engineered features)" if not solver.features else ""
    added = solver.feature_record["added"]
    return f" plus {len(added)} engineered features (see {solver.workspace.features.name})" if added else ""


def jsonable(obj):
    """obj as JSON can hold it: numpy scalars as numbers, anything else unknown as its text."""
    return json.loads(json.dumps(obj, default=lambda o: o.item() if hasattr(o, "item") else str(o)))
