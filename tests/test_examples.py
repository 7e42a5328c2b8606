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
from PIL import Image
from sklearn import datasets

from tools.metrics import METRICS, find_metric

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
NAMES = ["breast-cancer", "wine", "diabetes", "digits-multilabel", "iris-species", "digits-images", "docstring-library"]
INPUTS = {"digits-images": ["img"], "docstring-library": ["tab", "txt"]}  # the others: ["tab"]
LAYOUT_FILES = {
    "csv": ["description.md", "sample_submission.csv", "test.csv", "train.csv"],
    "image_folders": ["description.md", "sample_submission.csv", "test", "train"],
    "json": ["description.md", "sample_submission.csv", "test.json", "train.json"],
}


def _module(name: str):
    spec = importlib.util.spec_from_file_location(f"examples_{name}", EXAMPLES / f"{name}.py")
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build, grader = _module("build"), _module("grade")
LAYOUT = {spec.name: spec.layout for spec in build.SPECS}


def _splits(name: str, idc: str, target: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """train and test as frames whatever the layout; image folders give (file, label) and (file,)."""
    public = EXAMPLES / name
    if LAYOUT[name] == "image_folders":
        train = [(p.name, p.parent.name) for p in sorted((public / "train").glob("*/*"))]
        return (
            pd.DataFrame(train, columns=[idc, target]),
            pd.DataFrame({idc: sorted(p.name for p in (public / "test").iterdir())}),
        )
    if LAYOUT[name] == "json":
        return tuple(pd.read_json(public / f"{f}.json", dtype={idc: str}) for f in ("train", "test"))
    return tuple(pd.read_csv(public / f"{f}.csv", dtype={idc: str}) for f in ("train", "test"))


def _load(name: str) -> dict:
    meta = json.loads((EXAMPLES / "_private" / name / "meta.json").read_text())
    idc = meta["id_column"]
    train, test = _splits(name, idc, meta["target_columns"][0])
    return {
        "meta": meta,
        "train": train,
        "test": test,
        "sample_submission": pd.read_csv(EXAMPLES / name / "sample_submission.csv", dtype={idc: str}),
        "answers": pd.read_csv(EXAMPLES / "_private" / name / "answers.csv", dtype={idc: str}),
    }


def _grade(name: str, tmp_path: Path, frame: pd.DataFrame) -> float:
    path = tmp_path / "submission.csv"
    frame.to_csv(path, index=False)
    return grader.grade(name, path)


def test_names_match_build_specs():
    assert [spec.name for spec in build.SPECS] == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_layout_and_hidden_answers(name):
    public = sorted(p.name for p in (EXAMPLES / name).iterdir())
    assert public == LAYOUT_FILES[LAYOUT[name]]
    d = _load(name)
    meta, train, test, sample, answers = (d[k] for k in ("meta", "train", "test", "sample_submission", "answers"))
    idc, targets = meta["id_column"], meta["target_columns"]
    assert meta["competition"] == name
    assert meta["modalities"] == {"inputs": INPUTS.get(name, ["tab"]), "targets": ["tab"]}
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
    if LAYOUT[name] == "image_folders":  # a folder has no order
        assert sorted(test[idc]) == sorted(sample[idc])
    else:
        assert test[idc].tolist() == sample[idc].tolist()
    assert list(answers.columns) == list(sample.columns)
    assert sorted(answers[idc]) == sorted(sample[idc])
    assert answers.notna().all().all()
    assert (sample.iloc[:, 1:].nunique() == 1).all()  # constant sample predictions
    text = (EXAMPLES / name / "description.md").read_text()
    for heading in (
        "# Overview",
        "## Description",
        "## Evaluation",
        "## Submission File",
        "```csv",
        "# Dataset Description",
        "## File descriptions",
        "## Data fields",
    ):
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


def test_digit_images_are_the_sklearn_digits_with_their_labels():
    """Every PNG is a 4x-upscaled sklearn digit; its train folder or hidden answer is that digit's target."""
    b = datasets.load_digits()
    target_of = {np.round(img * 255 / 16).astype(np.uint8).tobytes(): y for img, y in zip(b.images, b.target)}
    answers = _load("digits-images")["answers"].set_index("file")["label"]
    public = EXAMPLES / "digits-images"
    paths = sorted(public.glob("train/*/*")) + sorted(public.glob("test/*"))
    assert len(paths) == len(b.images) and {p.parent.name for p in paths} == {*map(str, range(10)), "test"}
    for path in paths:
        with Image.open(path) as image:
            assert (image.format, image.mode, image.size) == ("PNG", "L", (32, 32))
            pixels = np.asarray(image)
        assert (pixels == pixels[::4, ::4].repeat(4, axis=0).repeat(4, axis=1)).all()  # nearest-neighbour x4
        label = answers[path.name] if path.parent.name == "test" else int(path.parent.name)
        assert target_of[pixels[::4, ::4].tobytes()] == label, path
    assert answers.value_counts().between(34, 38).all()  # stratified: 36 per digit in test


def test_docstring_records():
    d = _load("docstring-library")
    train, test = d["train"], d["test"]
    records = json.loads((EXAMPLES / "docstring-library" / "test.json").read_text(encoding="utf-8"))
    assert isinstance(records, list) and list(records[0]) == ["id", "docstring", "n_parameters", "name_length"]
    assert train["library"].value_counts().to_dict() == dict.fromkeys(["numpy", "pandas", "scipy", "sklearn"], 240)
    assert train["id"].str.fullmatch(r"doc_[0-9a-f]{6}").all()
    texts = pd.concat([train, test])["docstring"]
    assert texts.is_unique and texts.str.len().between(200, 1500).all()
    assert not texts.str.contains(r"numpy|pandas|scipy|sklearn|scikit.learn", case=False).any()  # no giveaway
    assert texts.str.contains(r"\blib\b").any()
    parameters = pd.concat([train, test])["n_parameters"]
    assert parameters.isna().any() and (parameters.dropna() % 1 == 0).all()  # null without a signature
    assert (train["name_length"] > 0).all()


def _files(root: Path) -> list[Path]:
    return sorted(
        p.relative_to(root)
        for p in root.rglob("*")
        if p.is_file() and p.suffix != ".py" and "__pycache__" not in p.parts
    )


def test_build_is_deterministic(tmp_path):
    build.build(tmp_path)
    built = _files(tmp_path)
    assert built == _files(EXAMPLES)  # no stale or missing files
    assert len(built) == 1 + 6 * 5 + (4 + 1797) + 6  # README; 6 files per csv or json layout; 4 + the PNGs
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
    "digits-images": lambda answers, sample: (answers["label"] == 0).mean(),
    "docstring-library": lambda answers, sample: math.log(4),
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
    digits = _load("digits-images")["answers"]
    assert _grade("digits-images", tmp_path, digits.assign(label=(digits["label"] + 1) % 10)) == 0.0
    docs = _load("docstring-library")["answers"]
    wrong = docs.assign(**{c: 1 - docs[c] for c in docs.columns[1:]})  # all probability on the wrong libraries
    assert _grade("docstring-library", tmp_path, wrong) > math.log(4)


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


@pytest.mark.parametrize("name", ["breast-cancer", "wine", "diabetes", "digits-multilabel", "docstring-library"])
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
    bad = subprocess.run(
        [sys.executable, str(EXAMPLES / "grade.py"), "iris-species", str(bad_path)],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )  # the script runs standalone
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.startswith("invalid submission:") and bad.stderr.count("\n") == 1
