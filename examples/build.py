"""Regenerate the bundled offline competitions (Kaggle layout) from datasets shipped with scikit-learn.

    uv run python examples/build.py [--out DIR]

Everything is deterministic (fixed seeds): `examples/<name>/` holds what a competitor sees
(description.md, train.csv, test.csv, sample_submission.csv); `examples/_private/<name>/` holds the
hidden answers.csv and meta.json used by examples/grade.py.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn import datasets
from sklearn.model_selection import train_test_split

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Spec:
    name: str
    title: str
    task_type: str  # BinCls | MultiCls | MultiTgtCls | Reg | MultiTgtReg
    metric: str  # key of tools.metrics.METRICS
    lower_is_better: bool
    seed: int
    id_column: str
    target_columns: tuple[str, ...]
    load: Callable[[np.random.Generator], tuple[pd.DataFrame, np.ndarray | None]]  # -> (id + features + targets, strata)
    sample_value: float | str | None  # constant of the sample submission; None: the train mean
    one_hot: bool  # submission holds one probability column per class of the single target
    story: str
    evaluation: str
    submission: str
    fields: tuple[tuple[str, str], ...]


def _ids(rng: np.random.Generator, n: int, low: int, high: int, fmt: str | None = None) -> list:
    ids = rng.choice(np.arange(low, high), size=n, replace=False)
    return [fmt.format(i) for i in ids] if fmt else ids.tolist()


def _ints(df: pd.DataFrame) -> pd.DataFrame:
    """Store float columns holding only whole numbers as ints, as a CSV export would."""
    whole = [c for c in df.columns if df[c].notna().all() and (df[c] % 1 == 0).all()]
    return df.astype(dict.fromkeys(whole, "int64"))


def _blank(rng: np.random.Generator, df: pd.DataFrame, columns: list[str], share: float) -> None:
    for c in columns:
        df.loc[rng.random(len(df)) < share, c] = np.nan


def _breast_cancer(rng):
    b = datasets.load_breast_cancer(as_frame=True)
    df = b.data.rename(columns=lambda c: c.replace(" ", "_"))
    _blank(rng, df, ["mean_smoothness", "area_error", "worst_texture"], 0.03)
    df["clinic"] = rng.choice(["north", "south", "east"], size=len(df))
    df["second_opinion"] = rng.random(len(df)) < 0.3
    df["malignant"] = (b.target == 0).astype(int)
    df.insert(0, "id", _ids(rng, len(df), 100_000, 1_000_000))
    return df, df["malignant"].to_numpy()


def _wine(rng):
    b = datasets.load_wine(as_frame=True)
    df = _ints(b.data.rename(columns=lambda c: c.replace("/", "_")))
    df["cultivar"] = np.array(["barolo", "grignolino", "barbera"])[b.target]
    df.insert(0, "wine_id", _ids(rng, len(df), 1, 10_000, "W{:04d}"))
    return df, b.target.to_numpy()


def _diabetes(rng):
    b = datasets.load_diabetes(as_frame=True, scaled=False)
    df = _ints(b.data)
    df["sex"] = df["sex"].map({1: "F", 2: "M"})
    _blank(rng, df, ["bmi"], 0.02)
    df["progression"] = b.target.astype(int)
    df.insert(0, "patient_id", _ids(rng, len(df), 1, 100_000, "P{:05d}"))
    return df, None


def _digits(rng):
    b = datasets.load_digits(as_frame=True)
    df = _ints(b.data).set_axis([f"pix_{i}" for i in range(64)], axis=1)
    df["is_even"] = (b.target % 2 == 0).astype(int)
    df["is_large"] = (b.target >= 5).astype(int)
    df.insert(0, "image_id", _ids(rng, len(df), 1, 100_000))
    return df, b.target.to_numpy()


def _iris(rng):
    b = datasets.load_iris(as_frame=True)
    df = b.data.set_axis(["SepalLengthCm", "SepalWidthCm", "PetalLengthCm", "PetalWidthCm"], axis=1)
    df["Species"] = np.array(["Iris-setosa", "Iris-versicolor", "Iris-virginica"])[b.target]
    df.insert(0, "Id", _ids(rng, len(df), 1, len(df) + 1))
    return df, b.target.to_numpy()


_PROBA = "For each `{id}` in the test set, you must predict a probability for {what}. The file should contain a header and have the following format:"
SPECS = (
    Spec(
        "breast-cancer", "Breast Cancer Diagnosis", "BinCls", "roc_auc", False, 11, "id", ("malignant",),
        _breast_cancer, 0.5, False,
        story="Fine needle aspirates (FNA) of breast masses were digitized and the cell nuclei visible in each image were "
        "measured. Your task is to predict whether a mass is malignant or benign from these measurements. The records "
        "were collected across several clinics, and some measurements were not recorded.",
        evaluation="Submissions are evaluated on area under the ROC curve between the predicted probability and the observed target.",
        submission=_PROBA.format(id="id", what="the `malignant` variable"),
        fields=(
            ("id", "unique identifier of the sample"),
            ("mean_*, *_error, worst_*", (
                "mean, standard error and worst (mean of the three largest) value of ten nucleus features: radius, "
                "texture, perimeter, area, smoothness, compactness, concavity, concave points, symmetry and fractal "
                "dimension; `mean_smoothness`, `area_error` and `worst_texture` have missing values")),
            ("clinic", "the clinic that took the sample (north, south or east)"),
            ("second_opinion", "whether a second opinion was requested (True/False)"),
            ("malignant", "the target: 1 if the mass is malignant, 0 if benign (train.csv only)"),
        ),
    ),
    Spec(
        "wine", "Wine Cultivar Classification", "MultiCls", "multi_log_loss", True, 22, "wine_id", ("cultivar",),
        _wine, 1 / 3, True,
        story="These wines were grown in the same region of Italy but derive from three different cultivars. A chemical "
        "analysis measured thirteen constituents of each wine. Your task is to predict the cultivar of each wine.",
        evaluation="Submissions are evaluated using the multi-class logarithmic loss. Each wine has been labeled with one "
        "true cultivar. For each wine, you must submit a set of predicted probabilities (one for every cultivar). The "
        "submitted probabilities for a given row are not required to sum to one because they are rescaled prior to "
        "being scored (each row is divided by the row sum). In order to avoid the extremes of the log function, "
        "predicted probabilities are replaced with max(min(p, 1 - 10^-15), 10^-15).",
        submission=_PROBA.format(id="wine_id", what="each cultivar"),
        fields=(
            ("wine_id", "unique identifier of the wine"),
            ("alcohol ... proline", (
                "thirteen results of the chemical analysis (alcohol, malic acid, ash, alcalinity of ash, magnesium, "
                "total phenols, flavanoids, nonflavanoid phenols, proanthocyanins, color intensity, hue, OD280/OD315 "
                "of diluted wines, proline)")),
            ("cultivar", "the target: barolo, grignolino or barbera (train.csv only)"),
        ),
    ),
    Spec(
        "diabetes", "Diabetes Progression", "Reg", "rmse", True, 33, "patient_id", ("progression",),
        _diabetes, None, False,
        story="Ten baseline variables were recorded for diabetes patients. Your task is to predict a quantitative "
        "measure of disease progression one year after baseline.",
        evaluation="Submissions are scored on the root mean squared error (RMSE) between the predicted and the observed progression.",
        submission="For each `patient_id` in the test set, you must predict the `progression` value. The file should "
        "contain a header and have the following format:",
        fields=(
            ("patient_id", "unique identifier of the patient"),
            ("age", "age in years"),
            ("sex", "F or M"),
            ("bmi", "body mass index; some values are missing"),
            ("bp", "average blood pressure"),
            ("s1 ... s6", (
                "six blood serum measurements (total cholesterol, LDL, HDL, total cholesterol / HDL, log of serum "
                "triglycerides, blood sugar)")),
            ("progression", "the target: disease progression one year after baseline (train.csv only)"),
        ),
    ),
    Spec(
        "digits-multilabel", "Handwritten Digit Attributes", "MultiTgtCls", "mean_columnwise_auc", False, 44,
        "image_id", ("is_even", "is_large"), _digits, 0.5, False,
        story="Each image is an 8x8 grid of handwritten digit pixels. Instead of the digit itself you are asked to "
        "predict two of its attributes: whether the digit is even and whether it is large (5 or more).",
        evaluation="Submissions are evaluated on the mean column-wise area under the ROC curve. In other words, the "
        "score is the average of the individual AUCs of each predicted column.",
        submission=_PROBA.format(id="image_id", what="each of the two targets"),
        fields=(
            ("image_id", "unique identifier of the image"),
            ("pix_0 ... pix_63", "pixel intensities (0-16) of the 8x8 image, row by row"),
            ("is_even", "target: 1 if the digit is 0, 2, 4, 6 or 8 (train.csv only)"),
            ("is_large", "target: 1 if the digit is 5 or more (train.csv only)"),
        ),
    ),
    Spec(
        "iris-species", "Iris Species", "MultiCls", "accuracy", False, 55, "Id", ("Species",),
        _iris, "Iris-setosa", False,
        story="The Iris dataset was used in R.A. Fisher's classic 1936 paper. It includes three iris species with 50 "
        "samples each as well as some properties about each flower. Your task is to predict the species of each flower.",
        evaluation="Submissions are evaluated on accuracy, the share of flowers whose species is predicted correctly.",
        submission="For each `Id` in the test set, you must predict the `Species` label. The file should contain a "
        "header and have the following format:",
        fields=(
            ("Id", "unique identifier of the flower"),
            ("SepalLengthCm, SepalWidthCm", "length and width of the sepal in cm"),
            ("PetalLengthCm, PetalWidthCm", "length and width of the petal in cm"),
            ("Species", "the target: Iris-setosa, Iris-versicolor or Iris-virginica (train.csv only)"),
        ),
    ),
)


def _description(spec: Spec, train: pd.DataFrame, test: pd.DataFrame, sample: pd.DataFrame) -> str:
    targets = ", ".join(f"`{c}`" for c in spec.target_columns)
    fields = "\n".join(f"- `{name}` - {text}" for name, text in spec.fields)
    return f"""# {spec.title}

# Overview

## Description

{spec.story}

## Evaluation

{spec.evaluation}

## Submission File

{spec.submission}

```csv
{sample.head(3).to_csv(index=False)}etc.
```

# Dataset Description

## File descriptions

- **train.csv** - the training set ({len(train)} rows) with the target {targets}
- **test.csv** - the test set ({len(test)} rows); predict the target for each row
- **sample_submission.csv** - a sample submission file in the correct format

## Data fields

{fields}
"""


def build_one(spec: Spec, out_dir: Path) -> dict:
    df, strata = spec.load(np.random.default_rng(spec.seed))
    train, test = train_test_split(df, test_size=0.2, random_state=spec.seed, stratify=strata)
    targets = list(spec.target_columns)
    answers = pd.get_dummies(test[targets[0]], dtype=int) if spec.one_hot else test[targets]
    answers.insert(0, spec.id_column, test[spec.id_column])
    value = round(float(train[targets[0]].mean()), 2) if spec.sample_value is None else spec.sample_value
    sample = answers[[spec.id_column]].assign(**dict.fromkeys(answers.columns[1:], value))
    test = test.drop(columns=targets)

    public, private = out_dir / spec.name, out_dir / "_private" / spec.name
    for path, frame in [(public / "train.csv", train), (public / "test.csv", test),
                        (public / "sample_submission.csv", sample), (private / "answers.csv", answers)]:
        path.parent.mkdir(parents=True, exist_ok=True)
        frame.to_csv(path, index=False, lineterminator="\n")
    (public / "description.md").write_text(_description(spec, train, test, sample))
    meta = {
        "competition": spec.name,
        "modalities": {"inputs": ["tab"], "targets": ["tab"]},
        "task_type": spec.task_type,
        "metric": spec.metric,
        "lower_is_better": spec.lower_is_better,
        "n_train": len(train),
        "n_test": len(test),
        "id_column": spec.id_column,
        "target_columns": targets,
        "seed": spec.seed,
    }
    (private / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    return meta


def build(out_dir: Path = HERE) -> None:
    out_dir = Path(out_dir)
    rows = [build_one(spec, out_dir) for spec in SPECS]
    table = "\n".join(f"| {m['competition']} | {m['task_type']} | {m['metric']} | {m['n_train']} / {m['n_test']} |" for m in rows)
    (out_dir / "README.md").write_text(
        "# Example competitions\n\nSmall offline competitions in Kaggle layout, regenerated by "
        "`uv run python examples/build.py` and scored by `uv run python examples/grade.py <name> <submission.csv>`. "
        "Hidden answers live in `_private/`.\n\n"
        f"| name | task type | metric | rows (train / test) |\n|---|---|---|---|\n{table}\n"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE, help="output directory (default: examples/)")
    build(parser.parse_args().out)
