"""The factorisation candidate (tools/classical_factors.py): the entity pair found from values, and biases plus
latent factors that learn what per-entity statistics cannot. In-memory tasks, as in tests/test_classical_tab.py;
the candidate's share of a solve is measured by benchmarks/graph_features.py."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingRegressor

from agentk.modalities import TABULAR
from tests.test_classical_tab import FrameTask, quiet
from tools import classical_factors
from tools.classical import fit_candidate
from tools.classical_factors import Factorisation, entity_pair
from tools.metrics import rmse, roc_auc


def ratings(n: int, users: int = 300, items: int = 400, rank: int = 3, seed: int = 0, binary: bool = False):
    """Rows that are (user, item) pairs, each once, whose value is a bias per user and per item plus the dot
    product of rank latent factors, with noise; beside them an order number (distinct per row), a measurement and
    a category of three levels. binary: the value's sign instead."""
    rng = np.random.default_rng(seed)
    pu, qi = rng.normal(0, 0.8, (users, rank)), rng.normal(0, 0.8, (items, rank))
    bu, bi = rng.normal(0, 0.5, users), rng.normal(0, 0.5, items)
    pairs = np.stack([rng.integers(0, users, 3 * n), rng.integers(0, items, 3 * n)], axis=1)
    pairs = np.unique(pairs, axis=0)
    pairs = pairs[rng.permutation(len(pairs))[:n]]
    u, i = pairs[:, 0], pairs[:, 1]
    value = bu[u] + bi[i] + (pu[u] * qi[i]).sum(axis=1) + rng.normal(0, 0.5, n)
    table = pd.DataFrame(
        {
            "order": rng.permutation(n) + 10_000,
            "reviewer": u + 1000,
            "colour": rng.choice(["red", "green", "blue"], n),
            "product": [f"P{k:05d}" for k in i],
            "weight": rng.normal(size=n),
        }
    )
    return table, (value > 0).astype(float) if binary else value


def test_the_pair_is_found_from_values_among_decoys():
    table, _ = ratings(4000)
    train, test = table.iloc[:3200], table.iloc[3200:]
    # the order numbers name single rows (nothing repeats), the colour has three levels, the weight measures
    assert entity_pair(train, test) == ("reviewer", "product")
    # without the items, no pair names the rows
    assert entity_pair(train.drop(columns="product"), test.drop(columns="product")) is None
    # a product every test row has never seen is no entity shared with the test rows
    unseen = test.assign(product=[f"Q{k}" for k in range(len(test))])
    assert entity_pair(train, unseen) is None


def test_factors_learn_what_per_entity_statistics_cannot():
    table, y = ratings(6000)
    n_test = 1000
    task = FrameTask(table, y, [{"name": "rating", "kind": "regression"}], n_test, rmse, higher=False)
    assert classical_factors.applies(task) is None
    feats = classical_factors.features(task, log=quiet)
    # the text key the features replace by its target encoding (tools/features.py) is read from where they set it
    frames = task.train.inputs[TABULAR.name], task.test.inputs[TABULAR.name]
    task.set_aside = {"product": (frames[0]["product"], frames[1]["product"])}
    task.train.inputs[TABULAR.name], task.test.inputs[TABULAR.name] = (f.drop(columns="product") for f in frames)
    assert classical_factors.applies(task) is None
    np.testing.assert_array_equal(classical_factors.features(task, log=quiet).train, feats.train)
    res = fit_candidate(task, feats, log=quiet)
    assert res.details["chosen"] == "biases and factors"
    assert res.details["cv"]["biases and factors"] < res.details["cv"]["biases"]
    truth = y[-n_test:]
    ours = rmse(truth, res.test_pred[:, 0])
    # gradient boosting on the ids read as numbers: what a model without entities gets
    train = table.iloc[:-n_test].assign(product=lambda f: f["product"].str[1:].astype(int))
    test = table.iloc[-n_test:].assign(product=lambda f: f["product"].str[1:].astype(int))
    numeric = ["reviewer", "product", "weight"]
    trees = HistGradientBoostingRegressor(random_state=0).fit(train[numeric], y[:-n_test])
    theirs = rmse(truth, trees.predict(test[numeric]))
    assert ours < 0.8 * theirs, (ours, theirs)


def test_a_binary_outcome_learns_logits():
    """Factors need rows: 6,000 binary outcomes over 100 users and 150 items (60 per user)."""
    table, y = ratings(6000, users=100, items=150, binary=True, seed=1)
    n_test = 1000
    task = FrameTask(table, y, [{"name": "liked", "kind": "binary"}], n_test, roc_auc, higher=True)
    res = fit_candidate(task, classical_factors.features(task, log=quiet), log=quiet)
    p = res.test_pred[:, 0]
    assert np.all((p > 0) & (p < 1))
    assert res.details["chosen"] == "biases and factors"
    assert roc_auc(y[-n_test:], p) > 0.85


def test_damping_keeps_a_rarely_seen_entity_near_the_mean():
    """An entity seen once gets a bias shrunk towards zero; one seen often, its own."""
    rng = np.random.default_rng(0)
    often = np.stack([np.zeros(200, int), rng.integers(0, 50, 200)], axis=1)  # user 0: 200 rows, all high
    once = np.array([[1, 0]])  # user 1: one row, as high
    others = np.stack([rng.integers(2, 40, 2000), rng.integers(0, 50, 2000)], axis=1)
    X = np.concatenate([often, once, others]).astype(float)
    y = np.concatenate([np.full(200, 3.0), [3.0], rng.normal(0, 1, 2000)])
    model = Factorisation([40, 50], (0,), "regression").fit(X, y)
    seen_often, seen_once = model.predict(np.array([[0, 5], [1, 5]], float))
    assert seen_often > 2.5
    assert seen_once < 0.5 * seen_often


def test_applies_says_why_not():
    table, y = ratings(2000)
    task = FrameTask(
        table,
        y.round().clip(-2, 2) + 2,
        [{"name": "stars", "kind": "multiclass", "n_classes": 5}],
        400,
        rmse,
        higher=False,
    )
    assert "multiclass" in classical_factors.applies(task)
    plain = FrameTask(table.drop(columns="product"), y, [{"name": "v", "kind": "regression"}], 400, rmse, False)
    assert "no pair" in classical_factors.applies(plain)
