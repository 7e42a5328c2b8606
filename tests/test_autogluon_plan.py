"""AutoGluon's work is planned from the data and the machine's cores, never from a clock: the preset's models in
AutoGluon's own order, the dear ones left out of a large table, the cheapest kept when none fits, a time limit that is
only a safety cap, and a cross-validation fold that fits the models its solution planned."""

from __future__ import annotations

import pytest

import tools.autogluon_plan as plan_module
from tools.autogluon_plan import SAFETY, least_rows, least_seconds, plan_models

ORDER = [  # medium_quality's models for a binary output, in AutoGluon's fitting order (its priorities)
    "LightGBMXT",
    "LightGBM",
    "RandomForestGini",
    "RandomForestEntr",
    "CatBoost",
    "ExtraTreesGini",
    "ExtraTreesEntr",
    "NeuralNetTorch",
    "LightGBMLarge",
]


def plan(kind="binary", rows=1440, columns=20, classes=1, seconds=42.0, cores=2, **kw):
    return plan_models(
        presets="medium_quality",
        hyperparameters=kw.pop("hyperparameters", None),
        kind=kind,
        rows=rows,
        columns=columns,
        classes=classes,
        seconds=seconds,
        cores=cores,
        **kw,
    )


def test_a_small_table_fits_every_installed_model_in_autogluons_order_under_a_safety_cap():
    p = plan()
    assert list(p.models) == [m for m in ORDER if m in p.models]  # AutoGluon's order, not the dictionary's
    assert {"LightGBMXT", "LightGBM", "RandomForestGini", "ExtraTreesGini"} <= set(p.models)
    assert not [s for s in p.skipped if "~" in s]  # nothing left out for its cost
    assert p.seconds <= p.budget and p.time_limit == SAFETY * p.budget
    assert p.hyperparameters["GBM"][0]["ag_args"]["name_suffix"] == "XT"  # the preset's own configurations


def test_a_large_table_leaves_out_the_dear_models_and_keeps_the_cheap_ones_after_them():
    p = plan(rows=50_000, columns=30)
    assert "RandomForestGini" not in p.models and any(s.startswith("RandomForestGini (~") for s in p.skipped)
    assert "CatBoost" in p.models and "ExtraTreesGini" in p.models  # after the skipped forests, still in budget
    assert p.seconds <= p.budget


def test_when_no_model_fits_alone_the_cheapest_is_fitted_alone():
    p = plan(rows=2_000_000, columns=50, seconds=5)
    every = plan(rows=2_000_000, columns=50, seconds=1e9).costs
    assert p.models == (min(every, key=every.get),) and p.seconds > p.budget
    assert p.models != ("LightGBMXT",)  # not AutoGluon's first


def test_a_first_model_dearer_than_the_budget_does_not_crowd_out_the_cheap_ones():
    # leaf-like: 99 classes on 573 rows of 192 columns, where LightGBMXT took 31 s and LightGBM 46 s on one thread
    # and validated far worse than AutoGluon's network
    p = plan(kind="multiclass", rows=573, columns=192, classes=99)
    assert "LightGBMXT" not in p.models and "LightGBM" not in p.models
    assert {"NeuralNetTorch", "RandomForestGini", "ExtraTreesGini"} <= set(p.models) and p.seconds <= p.budget


def test_the_plan_follows_the_cores_not_a_clock():
    one, eight = plan(rows=50_000, columns=30, cores=1), plan(rows=50_000, columns=30, cores=8)
    assert len(eight.models) > len(one.models)
    assert plan(rows=50_000, columns=30) == plan(rows=50_000, columns=30)


def test_classes_and_regression_cost_more_where_the_models_do_more():
    binary = plan(rows=3000, columns=64).costs
    classes = plan(kind="multiclass", rows=3000, columns=64, classes=10, seconds=1e4).costs
    assert classes["LightGBMXT"] > 5 * binary["LightGBMXT"]  # a tree per class each round
    many = plan(kind="multiclass", rows=3000, columns=64, classes=99, seconds=1e5).costs
    # past ten classes boosting costs more, LightGBM more slowly than the classes, CatBoost faster
    assert 2 * classes["LightGBM"] < many["LightGBM"] < 9.9 * classes["LightGBM"]
    assert (
        many["CatBoost"] > 9.9**2 / 2 * classes["CatBoost"] and many["LightGBMLarge"] > 9.9 * classes["LightGBMLarge"]
    )
    assert many["RandomForestGini"] == classes["RandomForestGini"]  # the forests: twice the two-class cost
    regression = plan(kind="regression", rows=3000, columns=64, seconds=1e4).costs
    assert regression["RandomForestMSE"] > 3 * binary["RandomForestGini"]
    assert "RandomForestGini" not in regression  # the preset's classification forests do not apply


def test_the_columns_shape_each_familys_cost_not_the_cells_alone():
    # the same 2,000,000 cells, narrow and wide (measured on 40,000 x 20 and 2,000 x 1,000: CatBoost 3 s and 120 s,
    # a random forest 51 s and 6 s)
    narrow, wide = plan(rows=100_000, columns=20, seconds=1e4).costs, plan(rows=2_000, columns=1_000, seconds=1e4).costs
    assert wide["CatBoost"] > 10 * narrow["CatBoost"] and wide["LightGBM"] > 3 * narrow["LightGBM"]
    assert wide["RandomForestGini"] < narrow["RandomForestGini"] / 5
    assert wide["NeuralNetTorch"] < narrow["NeuralNetTorch"] / 20  # a network's work is per row
    # a wide table plans the cheap forests and leaves out the boosting that a cost per cell would have kept
    p = plan(rows=4_000, columns=500)
    assert "RandomForestGini" in p.models and "CatBoost" not in p.models and "LightGBMLarge" not in p.models
    # below 20 columns the cost is per cell
    assert plan(rows=4_000, columns=5, seconds=1e4).costs["CatBoost"] < narrow["CatBoost"]


def test_a_model_whose_package_is_missing_is_left_out_and_says_so(monkeypatch):
    monkeypatch.setitem(plan_module.PACKAGES, "CAT", "agentk_no_such_package")
    p = plan()
    assert "CatBoost" not in p.models and "CatBoost (agentk_no_such_package not installed)" in p.skipped
    assert "CAT" not in p.hyperparameters


def test_only_names_the_models_a_fold_plans_among():
    p = plan(only=["LightGBM", "RandomForestGini"])
    assert p.models == ("LightGBM", "RandomForestGini")  # a fold fits what its solution fitted
    p = plan(rows=100_000, columns=30, only=["LightGBM", "RandomForestGini"])
    assert p.models == ("LightGBM",)  # within its budget, the first kept
    with pytest.raises(ValueError, match="no AutoGluon model"):
        plan(only=["NoSuchModel"])


def test_given_hyperparameters_are_planned_like_a_preset():
    p = plan(hyperparameters={"RF": {}, "XT": {}})
    assert p.models == ("RandomForest", "ExtraTrees") and set(p.hyperparameters) == {"RF", "XT"}


def test_the_network_and_catboost_are_capped_in_epochs_and_iterations_unless_their_configuration_sets_them():
    from autogluon.tabular.configs.hyperparameter_configs import get_hyperparameter_config

    p = plan()
    assert "NeuralNetTorch" in p.models
    assert p.hyperparameters["NN_TORCH"] == [{"num_epochs": 300}]
    assert p.hyperparameters["CAT"] == [{"iterations": 2000}]
    assert get_hyperparameter_config("default")["NN_TORCH"] == {}  # the preset's own configuration is left as it was
    given = plan(hyperparameters={"NN_TORCH": [{"num_epochs": 40}, {"dropout_prob": 0.2}], "RF": {}})
    assert given.hyperparameters["NN_TORCH"] == [{"num_epochs": 40}, {"dropout_prob": 0.2, "num_epochs": 300}]
    assert given.hyperparameters["RF"] == [{}]  # other families untouched


def test_past_a_ceiling_the_first_boosted_models_get_the_rows_it_affords():
    """least_rows: the sample on which AutoGluon's first boosted models cost a budget's ceiling, within 1 %."""
    shape = {"presets": "medium_quality", "hyperparameters": None, "kind": "binary", "columns": 64, "classes": 1}
    rows = least_rows(100.0, rows=1_000_000, cores=2, **shape)
    assert plan_module.MIN_ROWS < rows < 1_000_000
    assert least_seconds(**shape, rows=rows, cores=2) <= 100.0 < least_seconds(**shape, rows=rows * 102 // 100, cores=2)
    assert least_rows(100.0, rows=2 * rows, cores=1, **shape) < rows  # one core affords fewer
    assert least_rows(100.0, rows=5_000, cores=2, **shape) == 5_000  # a table within it keeps every row
    assert least_rows(0.001, rows=50_000, cores=2, **shape) == plan_module.MIN_ROWS


def test_category_columns_make_catboost_dearer_as_measured_and_no_other_model():
    """CatBoost on 40,000 rows of the scale benchmark's table on one thread: 87.8 s with its 10 category columns
    among 60 (CATEGORY_CELL's measure); LightGBM's cost does not change."""
    numbers = plan(rows=40_000, columns=60, seconds=1e9, cores=1)
    mixed = plan(rows=40_000, columns=60, seconds=1e9, cores=1, categorical=10)
    assert mixed.costs["CatBoost"] == pytest.approx(87.8, rel=0.1)
    assert mixed.costs["CatBoost"] > 4 * numbers.costs["CatBoost"]
    assert mixed.costs["LightGBM"] == numbers.costs["LightGBM"]


def test_a_budget_grown_for_the_first_boosted_models_plans_them_before_the_forests():
    """AutoGluon fits the random forests before CatBoost; where the work grew to what least_seconds reserves for
    its first boosted models, it goes to them, and the forests fit in what is left, if anything."""
    shape = {"presets": "medium_quality", "hyperparameters": None, "kind": "binary", "columns": 64, "classes": 1}
    least = least_seconds(**shape, rows=80_000, cores=2, categorical=10)
    grown = plan(rows=80_000, columns=64, seconds=least, categorical=10, boosted_first=True)
    assert grown.models == ("LightGBMXT", "LightGBM", "CatBoost")
    assert any(s.startswith("RandomForestGini") for s in grown.skipped)
    # a budget that did not grow keeps AutoGluon's order: the forests come before CatBoost, which is left out
    base = plan(rows=80_000, columns=64, seconds=least, categorical=10)
    assert base.models[:3] == ("LightGBMXT", "LightGBM", "RandomForestGini") and "CatBoost" not in base.models
