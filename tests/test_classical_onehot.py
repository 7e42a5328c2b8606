"""The one-hot linear candidate (tools/classical_onehot.py): every tab column as levels into a linear model, on an
in-memory task (tests/test_classical_tab.py's FrameTask); its place in the quick solve is measured by
benchmarks/kaggle_layouts.py."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tests.test_classical_tab import FrameTask, quiet
from tools import classical_onehot, classical_tab
from tools.classical import fit_candidate
from tools.metrics import log_loss, rmse


def places(n: int, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """Incidents at 400 addresses (each its own rate of the positive class) at an hour of the day (a rate per hour),
    with a count, a noise number, a name per row and a constant."""
    rng = np.random.default_rng(seed)
    addresses = np.array([f"{k} Block of {rng.choice(['OAK', 'PINE', 'ELM'])} ST" for k in range(400)])
    which, hour = rng.integers(0, 400, n), rng.integers(0, 24, n)
    logit = rng.normal(0, 1.5, 400)[which] + np.where((hour >= 22) | (hour < 5), 1.0, -0.5)
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(float)
    table = pd.DataFrame(
        {
            "address": addresses[which],
            "hour": hour,
            "count": rng.poisson(2, n),
            "noise": rng.normal(size=n),
            "name": [f"report {i}" for i in range(n)],
            "same": 1.0,
        }
    )
    return table, y


def test_levels_of_enough_rows_get_a_column_rare_ones_share_one_and_numbers_are_binned():
    table, y = places(3000)
    task = FrameTask(table, y, [{"kind": "binary"}], 500, log_loss, higher=False)
    feats = classical_onehot.features(task, log=quiet)
    X = feats.train.toarray()
    assert X.shape[0] == 2500 and feats.test.shape == (500, X.shape[1])
    # the names (a level per row) left out; the constant one value, its column dropped
    assert feats.what.startswith(
        "1 categories and 3 numbers of few values one-hot (levels of 3 train rows or more), "
        "1 numbers as 16 quantile bins and their value"
    )
    assert (X.std(axis=0) > 0).all()
    address = table["address"].iloc[:2500]
    counts = address.value_counts()
    for level in (counts.index[0], counts.index[-1]):
        on = (address == level).to_numpy().astype(float)
        own = [j for j in range(X.shape[1]) if np.array_equal(X[:, j], on)]
        # an address of 3 train rows or more has its own column; the rarest shares one with the other rare ones
        assert bool(own) == (counts[level] >= 3), (level, counts[level])
        if counts[level] < 3:
            shared = [j for j in range(X.shape[1]) if X[on == 1, j].min() == 1 and X[:, j].sum() > on.sum()]
            assert shared, level
    # the noise: one of 16 bins on every row, and its standardised value
    bins = [j for j in range(X.shape[1]) if set(np.unique(X[:, j])) == {0.0, 1.0}]
    assert len(bins) >= 16 and np.isclose(X[:, -1].mean(), 0, atol=1e-6) and np.isclose(X[:, -1].std(), 1, atol=1e-3)


def test_one_hot_levels_beat_the_kernel_candidate_that_leaves_many_levels_out():
    table, y = places(3000)
    task = FrameTask(table, y, [{"kind": "binary"}], 500, log_loss, higher=False)
    onehot = fit_candidate(task, classical_onehot.features(task, log=quiet), log=quiet)
    kernel = fit_candidate(task, classical_tab.features(task, log=quiet), log=quiet)
    fit, val = task.split
    prior = log_loss(y[val], np.full(len(val), y[fit].mean()))
    # the addresses carry most of the signal: the kernel candidate sees them not at all
    assert onehot.val_score < kernel.val_score - 0.03 < prior, (onehot.val_score, kernel.val_score, prior)
    assert onehot.test_pred.shape == (500, 1) and np.isfinite(onehot.test_pred).all()


def test_a_value_is_learnt_by_ridge_regression_and_a_wide_table_is_left_to_the_trees():
    table, y = places(1200)
    value = table["hour"].to_numpy() % 7 + np.random.default_rng(1).normal(0, 0.1, 1200)
    task = FrameTask(table, value, [{"kind": "regression"}], 200, rmse, higher=False)
    result = fit_candidate(task, classical_onehot.features(task, log=quiet), log=quiet)
    fit, val = task.split
    # each hour its own level: the value's pattern over the hours (not linear in the hour) is learnt
    assert result.val_score < 0.3 < float(np.std(value[val])), result.val_score
    assert classical_onehot.applies(task) is None
    wide = FrameTask(pd.DataFrame(np.zeros((50, 301))), np.zeros(50), [{"kind": "regression"}], 10, rmse, False)
    assert "301 tab columns" in classical_onehot.applies(wide)
