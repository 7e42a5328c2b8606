"""A model's test predictions far outside what it validated are not submitted on the strength of its validation
score (a side table's aggregate constant over the train rows and another number on the test rows: a network
validated at RMSPE 0.42 predicted -1.7e11 for every test row)."""

import numpy as np

from agentk.solve.solution import Solution, stray_test_predictions
from tools.tabular import standardised

REGRESSION = [{"name": "y", "kind": "regression", "n_classes": 0}]


def _stray(s: Solution, outputs=REGRESSION, targets=None):
    return stray_test_predictions(s, outputs, np.linspace(0.0011, 0.0019, 30)[:, None] if targets is None else targets)


def _solution(val, test, validated=None) -> Solution:
    return Solution(
        "m",
        "network",
        "",
        0.4,
        np.asarray(val, float)[:, None],
        np.asarray(test, float)[:, None],
        1.0,
        validated_test_pred=None if validated is None else np.asarray(validated, float)[:, None],
    )


def test_a_number_constant_on_the_fit_rows_stays_near_them_on_the_others():
    v = np.array([187.0] * 8 + [794.0, 794.0])  # constant where the model learns, another number on the test rows
    (out,) = standardised(v, np.arange(8))
    assert np.abs(out).max() <= 1.0 and out[-1] == 1.0
    w = np.r_[np.linspace(0, 1, 8), 50.0, -3.0]  # a spread column: test values one unit past its fit range at most
    (out,) = standardised(w, np.arange(8))
    fit = out[:8]
    assert (
        out[8] == fit.max() + 1.0
        and out[9] == fit.min() - 1.0
        and np.allclose(fit, (w[:8] - w[:8].mean()) / w[:8].std())
    )


def test_test_predictions_far_outside_the_validated_range_are_named():
    val = np.linspace(0.001, 0.002, 50)
    assert _stray(_solution(val, np.linspace(0.0012, 0.0025, 40))) is None
    why = _stray(_solution(val, np.full(40, -1.7e11)))
    assert why is not None and "100%" in why
    # a refit in range does not hide its validated model's stray predictions
    why = _stray(_solution(val, np.full(40, 0.0015), np.full(40, 5.0)))
    assert why is not None and "validated model's" in why
    # one row in a hundred may stray (an outlying test row); more may not
    test = np.full(200, 0.0015)
    test[:2] = 9.0
    assert _stray(_solution(val, test)) is None
    test[:3] = 9.0
    assert _stray(_solution(val, test)) is not None
    assert "not finite" in _stray(_solution(val, np.r_[np.nan, np.full(9, 0.0015)]))


def test_probabilities_are_bounded_and_not_judged_by_their_spread():
    outputs = [{"name": "c", "kind": "multiclass", "n_classes": 2}, *REGRESSION]
    val = np.column_stack([np.full(20, 0.5), np.full(20, 0.5), np.linspace(1, 2, 20)])
    test = np.column_stack([np.full(10, 0.95), np.full(10, 0.05), np.linspace(1, 2, 10)])
    s = Solution("m", "network", "", 0.4, val, test, 1.0)
    targets = np.column_stack([np.zeros(20), np.linspace(1, 2, 20)])  # class codes, numbers: one column per output
    assert _stray(s, outputs, targets) is None
    test[:, 2] = 100.0
    assert "range of its validation predictions" in _stray(s, outputs, targets)


def test_a_constant_model_is_judged_by_the_targets_spread():
    """A constant refitted on every row predicts a number its validation rows never saw, and a model that learned
    little a narrow band: within the targets' range they are what they validated."""
    assert _stray(_solution(np.full(30, 0.001565), np.full(40, 0.0015766))) is None
    assert _stray(_solution(np.full(30, 0.001565), np.full(40, 0.05))) is not None
