"""A solution as the solver holds it: its plan in words, its validation score and its predictions in model space
(tools/task_data.py); and what every kind may raise or say of itself."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np


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
