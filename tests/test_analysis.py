"""What the expert reads off a competition: ids, targets, submission kinds, metric and task type,
on the arena's real descriptions and on awkward layouts built here."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from conftest import ARENA, EXAMPLE_NAMES, EXAMPLES, example_meta

from agentk.policies.analysis import analyse
from stages.fetch import fetch_local

ARENA_METRIC = {
    "accuracy": "accuracy",
    "auc-roc": "roc_auc",
    "log-loss": "log_loss",
    "multi-class-log-loss": "multi_log_loss",
    "column-wise ROC AUC": "mean_columnwise_auc",
    "mean-column-wise-rmsle": "mean_columnwise_rmsle",
}


def fetched(tmp_path, source):
    ws = tmp_path / "ws"
    fetch_local(source, ws)
    return ws


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_examples(tmp_path, name):
    a = analyse(fetched(tmp_path, EXAMPLES / name))
    meta = example_meta(name)
    assert (a.metric, a.task_type, a.id_col) == (meta["metric"], meta["task_type"], meta["id_column"])
    assert a.submission_columns == pd.read_csv(EXAMPLES / name / "sample_submission.csv").columns[1:].tolist()


@pytest.mark.skipif(not ARENA.exists(), reason="../shared/arena-dev is not beside this checkout")
@pytest.mark.parametrize("name", ["spaceship-titanic", "nomad2018-predict-transparent-conductors"])
def test_arena_tabular(tmp_path, name):
    meta = json.loads((ARENA / name / "meta.json").read_text())
    a = analyse(fetched(tmp_path, ARENA / name / "public"))
    assert a.metric == ARENA_METRIC[meta["metric"]] and a.metric_from == "description"
    assert a.task_type == meta["task_type"]
    if name == "spaceship-titanic":
        (t,) = a.targets
        assert (t.column, t.kind, t.submit, t.classes) == ("Transported", "binary", "label", [False, True])
        assert a.train_id == a.test_id == "PassengerId" and "CryoSleep" in a.bool_features
    else:
        assert [t.column for t in a.targets] == ["formation_energy_ev_natom", "bandgap_energy_ev"]
        assert all(t.kind == "regression" and t.log for t in a.targets)  # RMSLE: model log1p(y)


def write(folder, evaluation, train, test, sample, sep=","):
    folder.mkdir()
    (folder / "description.md").write_text(f"# Overview\n\nA competition.\n\n## Evaluation\n\n{evaluation}\n")
    ext = "tsv" if sep == "\t" else "csv"
    train.to_csv(folder / f"train.{ext}", sep=sep, index=False)
    test.to_csv(folder / f"test.{ext}", sep=sep, index=False)
    sample.to_csv(folder / "sample_submission.csv", index=False)
    return folder


def test_per_class_probability_columns_from_a_label_column(tmp_path):
    rng = np.random.default_rng(0)
    train = pd.DataFrame(
        {"id": range(60), "x": rng.normal(size=60), "species": rng.choice(["Acer", "Betula", "Quercus"], 60)}
    )
    test = pd.DataFrame({"id": range(60, 70), "x": rng.normal(size=10)})
    sample = pd.DataFrame({"id": test.id, "Quercus": 1 / 3, "Acer": 1 / 3, "Betula": 1 / 3})
    a = analyse(
        fetched(
            tmp_path,
            write(
                tmp_path / "c", "Submissions are evaluated using the multi-class logarithmic loss.", train, test, sample
            ),
        )
    )
    (t,) = a.targets
    assert (t.column, t.kind, t.submit, t.columns) == (
        "species",
        "multiclass",
        "proba_columns",
        ["Quercus", "Acer", "Betula"],
    )
    assert a.metric == "multi_log_loss" and a.task_type == "MultiCls"


def test_test_without_id_column_and_renamed_target_in_tsv(tmp_path):
    rng = np.random.default_rng(1)
    train = pd.DataFrame(
        {
            "x": rng.normal(size=50),
            "flag": rng.choice(["True", "False", None], 50),
            "label": rng.choice(["spam", "ham"], 50),
        }
    )
    test = pd.DataFrame({"x": rng.normal(size=8), "flag": rng.choice(["True", "False"], 8)})
    sample = pd.DataFrame({"ImageId": range(1, 9), "Prediction": "ham"})
    a = analyse(
        fetched(tmp_path, write(tmp_path / "c", "Submissions are scored by their F1 score.", train, test, sample, "\t"))
    )
    assert a.test_id is None and a.train_id is None and a.id_col == "ImageId"
    (t,) = a.targets
    assert (t.source, t.column, t.columns, t.kind, t.submit) == (
        "label",
        "Prediction",
        ["Prediction"],
        "binary",
        "label",
    )
    assert a.metric == "f1" and a.features == ["x", "flag"] and a.bool_features == ["flag"]


def test_metric_falls_back_on_the_task_when_the_text_names_none(tmp_path):
    rng = np.random.default_rng(2)
    train = pd.DataFrame(
        {"row": range(40), "x": rng.normal(size=40), "y1": rng.normal(size=40), "y2": rng.normal(size=40)}
    )
    test = pd.DataFrame({"row": range(40, 45), "x": rng.normal(size=5)})
    sample = pd.DataFrame({"row": test.row, "y1": 0.0, "y2": 0.0})
    a = analyse(fetched(tmp_path, write(tmp_path / "c", "Good luck!", train, test, sample)))
    assert a.metric_from == "fallback" and a.metric == "mcrmse" and a.task_type == "MultiTgtReg"


def test_single_metric_named_for_several_columns_becomes_column_wise(tmp_path):
    rng = np.random.default_rng(3)
    train = pd.DataFrame(
        {"id": range(40), "x": rng.normal(size=40), "a": rng.integers(0, 2, 40), "b": rng.integers(0, 2, 40)}
    )
    test = pd.DataFrame({"id": range(40, 45), "x": rng.normal(size=5)})
    sample = pd.DataFrame({"id": test.id, "a": 0.5, "b": 0.5})
    a = analyse(
        fetched(
            tmp_path,
            write(tmp_path / "c", "Submissions are evaluated on area under the ROC curve.", train, test, sample),
        )
    )
    assert a.metric == "mean_columnwise_auc" and a.task_type == "MultiTgtCls"
    assert all(t.submit == "proba" and t.positive == 1 for t in a.targets)


def test_a_column_is_boolean_when_its_distinct_values_all_spell_true_or_false():
    from agentk.policies.analysis import _is_boolish

    assert _is_boolish(pd.Series(["True", "true", "FALSE", None] * 1000))
    assert _is_boolish(pd.Series([True, False, None], dtype=object)) and _is_boolish(pd.Series([True, False]))
    assert not _is_boolish(pd.Series(["True", "true", "TRUE", "maybe"]))  # a fourth spelling that is no boolean
    assert not _is_boolish(pd.Series([0, 1, 1, 0])) and not _is_boolish(pd.Series([None, None], dtype=object))
