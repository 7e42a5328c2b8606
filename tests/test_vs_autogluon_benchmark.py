"""benchmarks/vs_autogluon.py's problem type for plain AutoGluon: the one a user states, from the metric's kind of
prediction, so that integer ratings scored by RMSE are not taken for classes (AutoGluon's own inference)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from benchmarks.vs_autogluon import problem_type

RATINGS = pd.Series(np.random.default_rng(0).integers(1, 6, 500))  # 1-5: AutoGluon alone infers multiclass


@pytest.mark.parametrize("metric", ["rmse", "mae", "rmsle", "r2"])
def test_integer_ratings_scored_by_a_value_metric_are_regression(metric):
    assert problem_type(metric, RATINGS) == "regression"


def test_a_label_or_probability_metric_is_binary_on_two_values_and_multiclass_on_more():
    yes_no = pd.Series(["yes", "no", "yes", None])
    assert problem_type("roc_auc", yes_no) == "binary"
    assert problem_type("accuracy", yes_no) == "binary"
    assert problem_type("qwk", RATINGS) == "multiclass"
    assert problem_type("multi_log_loss", RATINGS.astype(str)) == "multiclass"


def test_a_probability_metric_on_fractions_is_regression_and_a_ranking_metric_is_left_to_autogluon():
    shares = pd.Series([0.0, 0.25, 0.5, 1.0, 0.75])
    assert problem_type("mean_columnwise_auc", shares) == "regression"
    assert problem_type("roc_auc", pd.Series([0.0, 1.0, 1.0])) == "binary"
    assert problem_type("map_at_3", pd.Series(["a", "b", "c"])) is None
