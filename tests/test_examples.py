"""The bundled example competitions: layout, hidden answers, deterministic build and the grader."""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tools.metrics import METRICS, find_metric

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
NAMES = ["breast-cancer", "wine", "diabetes", "digits-multilabel", "iris-species"]


def _module(name: str):
    spec = importlib.util.spec_from_file_location(f"examples_{name}", EXAMPLES / f"{name}.py")
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build, grader = _module("build"), _module("grade")


def _load(name: str) -> dict:
    meta = json.loads((EXAMPLES / "_private" / name / "meta.json").read_text())
    paths = {f: EXAMPLES / name / f"{f}.csv" for f in ("train", "test", "sample_submission")}
    paths["answers"] = EXAMPLES / "_private" / name / "answers.csv"
    return {"meta": meta, **{k: pd.read_csv(p, dtype={meta["id_column"]: str}) for k, p in paths.items()}}


def _grade(name: str, tmp_path: Path, frame: pd.DataFrame) -> float:
    path = tmp_path / "submission.csv"
    frame.to_csv(path, index=False)
    return grader.grade(name, path)


def test_names_match_build_specs():
    assert [spec.name for spec in build.SPECS] == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_layout_and_hidden_answers(name):
    public = sorted(p.name for p in (EXAMPLES / name).iterdir())
    assert public == ["description.md", "sample_submission.csv", "test.csv", "train.csv"]
    d = _load(name)
    meta, train, test, sample, answers = (d[k] for k in ("meta", "train", "test", "sample_submission", "answers"))
    idc, targets = meta["id_column"], meta["target_columns"]
    assert meta["competition"] == name and meta["modalities"] == {"inputs": ["tab"], "targets": ["tab"]}
    assert meta["lower_is_better"] == (not METRICS[meta["metric"]].higher_is_better)
    assert (meta["n_train"], meta["n_test"]) == (len(train), len(test))
    assert 0.15 < len(test) / (len(train) + len(test)) < 0.25
    # id first, targets only in train
    assert train.columns[0] == test.columns[0] == sample.columns[0] == idc
    assert list(train.columns) == list(test.columns) + targets
    assert not set(targets) & set(test.columns)
    # ids: unique, disjoint, test and sample in the same order, answers cover the same ids
    assert train[idc].is_unique and test[idc].is_unique
    assert not set(train[idc]) & set(test[idc])
    assert test[idc].tolist() == sample[idc].tolist()
    assert list(answers.columns) == list(sample.columns)
    assert sorted(answers[idc]) == sorted(sample[idc])
    assert answers.notna().all().all()
    assert (sample.iloc[:, 1:].nunique() == 1).all()  # constant sample predictions
    text = (EXAMPLES / name / "description.md").read_text()
    for heading in ("# Overview", "## Description", "## Evaluation", "## Submission File", "```csv",
                    "# Dataset Description", "## File descriptions", "## Data fields"):
        assert heading in text
    evaluation = text.split("## Evaluation")[1].split("## Submission File")[0]
    assert find_metric(evaluation) is METRICS[meta["metric"]]  # the text names the metric the grader uses


def test_breast_cancer_realism():
    train = _load("breast-cancer")["train"]
    gappy = train.columns[train.isna().any()].tolist()
    assert len(gappy) == 3 and all(0.005 < train[c].isna().mean() < 0.08 for c in gappy)
    assert set(train["clinic"]) == {"north", "south", "east"}
    assert train["second_opinion"].dtype == bool and set(train["malignant"]) == {0, 1}
    assert train["id"].astype(int).tolist() != sorted(train["id"].astype(int))  # shuffled


def test_target_values():
    assert set(_load("wine")["train"]["cultivar"]) == {"barolo", "grignolino", "barbera"}
    assert set(_load("iris-species")["train"]["Species"]) == {"Iris-setosa", "Iris-versicolor", "Iris-virginica"}
    diabetes = _load("diabetes")["train"]
    assert set(diabetes["sex"]) == {"F", "M"} and diabetes["bmi"].isna().any()
    assert (_load("wine")["answers"].iloc[:, 1:].sum(axis=1) == 1).all()  # one-hot per row


def test_build_is_deterministic(tmp_path):
    build.build(tmp_path)
    built = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert len(built) == 1 + 6 * len(NAMES)  # README + 4 public and 2 private files per competition
    for rel in built:
        assert (tmp_path / rel).read_bytes() == (EXAMPLES / rel).read_bytes(), rel


@pytest.mark.parametrize("name", NAMES)
def test_answers_score_perfectly(name, tmp_path):
    best = 1.0 if METRICS[_load(name)["meta"]["metric"]].higher_is_better else 0.0
    assert grader.grade(name, EXAMPLES / "_private" / name / "answers.csv") == pytest.approx(best, abs=1e-9)
    shuffled = _load(name)["answers"].sample(frac=1, random_state=0)  # rows are matched by id, not position
    assert _grade(name, tmp_path, shuffled) == pytest.approx(best, abs=1e-9)


EXPECTED_SAMPLE_SCORE = {
    "breast-cancer": lambda answers, sample: 0.5,
    "wine": lambda answers, sample: math.log(3),
    "diabetes": lambda answers, sample: math.sqrt(((answers["progression"] - sample["progression"]) ** 2).mean()),
    "digits-multilabel": lambda answers, sample: 0.5,
    "iris-species": lambda answers, sample: (answers["Species"] == "Iris-setosa").mean(),
}


@pytest.mark.parametrize("name", NAMES)
def test_sample_submission_score(name):
    d = _load(name)
    answers = d["answers"].set_index(d["meta"]["id_column"]).loc[d["sample_submission"].iloc[:, 0]].reset_index()
    expected = EXPECTED_SAMPLE_SCORE[name](answers, d["sample_submission"])
    assert grader.grade(name, EXAMPLES / name / "sample_submission.csv") == pytest.approx(expected, rel=1e-9)


def test_worse_predictions_score_worse(tmp_path):
    answers = _load("breast-cancer")["answers"]
    assert _grade("breast-cancer", tmp_path, answers.assign(malignant=1 - answers["malignant"])) == pytest.approx(0.0)
    iris = _load("iris-species")["answers"]
    assert _grade("iris-species", tmp_path, iris.assign(Species="Iris-virginica")) == pytest.approx(1 / 3)


def _set_first(frame: pd.DataFrame, value) -> pd.DataFrame:
    frame = frame.astype({frame.columns[-1]: object})
    frame.iloc[0, -1] = value
    return frame


BAD_SUBMISSIONS = {
    "missing id": (lambda s: s.iloc[1:], "missing, e.g."),
    "extra unknown id": (lambda s: pd.concat([s, s.iloc[:1].assign(**{s.columns[0]: "X999999"})]), "unknown"),
    "duplicate id": (lambda s: pd.concat([s, s.iloc[:1]]), "duplicate"),
    "reordered columns": (lambda s: s[s.columns[::-1]], "columns must be"),
    "renamed column": (lambda s: s.rename(columns={s.columns[-1]: "target"}), "columns must be"),
    "NaN": (lambda s: _set_first(s, np.nan), "missing value"),
}


@pytest.mark.parametrize("case", BAD_SUBMISSIONS)
@pytest.mark.parametrize("name", NAMES)
def test_bad_submission_raises_one_line(name, case, tmp_path):
    corrupt, message = BAD_SUBMISSIONS[case]
    with pytest.raises(ValueError, match=message) as error:
        _grade(name, tmp_path, corrupt(_load(name)["sample_submission"]))
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("name", ["breast-cancer", "wine", "diabetes", "digits-multilabel"])
def test_non_numeric_prediction_raises(name, tmp_path):
    with pytest.raises(ValueError, match="finite numbers"):
        _grade(name, tmp_path, _set_first(_load(name)["sample_submission"], "high"))


def test_unknown_competition_raises():
    with pytest.raises(ValueError, match="unknown competition"):
        grader.grade("titanic", EXAMPLES / "iris-species" / "sample_submission.csv")


def test_cli(tmp_path, capsys):
    assert grader.main(["iris-species", str(EXAMPLES / "_private" / "iris-species" / "answers.csv")]) == 0
    assert float(capsys.readouterr().out) == 1.0
    bad_path = tmp_path / "bad.csv"
    _load("iris-species")["sample_submission"].iloc[1:].to_csv(bad_path, index=False)
    bad = subprocess.run([sys.executable, str(EXAMPLES / "grade.py"), "iris-species", str(bad_path)],
                         check=False, capture_output=True, text=True, timeout=120)  # the script runs standalone
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.startswith("invalid submission:") and bad.stderr.count("\n") == 1
