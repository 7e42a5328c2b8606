"""Regenerate the bundled offline competitions (Kaggle layout) from data shipped with installed packages.

    uv run python examples/build.py [--out DIR]

Everything is deterministic (fixed seeds, PNGs without timestamps): `examples/<name>/` holds what a
competitor sees (description.md, sample_submission.csv and the data files of the spec's layout, see
LAYOUTS); `examples/_private/<name>/` holds the hidden answers.csv and meta.json used by examples/grade.py.

docstring-library's texts are the docstrings of the installed numpy, pandas, scipy and scikit-learn:
regenerating with other versions of those libraries changes them, so the committed files are the reference.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import re
import shutil
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image
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
    layout: str = "csv"  # how the public data files are written: a key of LAYOUTS
    inputs: tuple[str, ...] = ("tab",)  # input modalities recorded in meta.json


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


def _digit_images(rng):
    """sklearn's 8x8 digits as 32x32 grayscale images: intensities 0..16 -> 0..255, each pixel a 4x4 block."""
    b = datasets.load_digits()
    pixels = np.round(b.images * 255 / 16).astype(np.uint8).repeat(4, axis=1).repeat(4, axis=2)
    df = pd.DataFrame({"file": _ids(rng, len(pixels), 0, 10_000, "img_{:04d}.png"), "pixels": list(pixels),
                       "label": b.target})
    return df, b.target


# Where docstring-library's texts come from: modules (or a class, for methods) per library.
DOC_SOURCES = {
    "numpy": ("numpy", "numpy.fft", "numpy.linalg"),
    "pandas": ("pandas", "pandas.api.types", "pandas.DataFrame"),
    "scipy": ("scipy.interpolate", "scipy.linalg", "scipy.optimize", "scipy.special", "scipy.stats"),
    "sklearn": ("sklearn.cluster", "sklearn.datasets", "sklearn.decomposition", "sklearn.ensemble",
                "sklearn.feature_selection", "sklearn.linear_model", "sklearn.metrics", "sklearn.model_selection",
                "sklearn.neighbors", "sklearn.preprocessing", "sklearn.svm", "sklearn.tree"),
}
# A library's name with the lower-case (module) part of a dotted path after it: "sklearn.linear_model.Ridge"
# -> "lib.Ridge", "numpy.linalg.norm" -> "lib"; the target must not be spelled out in the text.
_LIBRARY_PATH = re.compile(r"(?i:scikit[-_]learn|numpy|pandas|scipy|sklearn)(?:\.[a-z_][a-z0-9_]*\b)*")


def _owner(path: str):
    """A module, or a class named "module.Class" (for its methods)."""
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name) if name[:1].isupper() else importlib.import_module(path)


def _docstrings(library: str, path: str):
    """(name, text, n_parameters) of the public callables `path` defines (not re-exports), by sorted name."""
    owner = _owner(path)
    for name in sorted(n for n in dir(owner) if not n.startswith("_")):
        obj = getattr(owner, name, None)
        if inspect.ismodule(obj) or not callable(obj):
            continue
        if (getattr(obj, "__module__", None) or library).split(".")[0] != library:  # scipy.special's ufuncs: None
            continue
        # each line without its indentation: pandas assembles docstrings from parts, and Python 3.13's compiler
        # strips the parts' indentation where 3.11 kept it, so indented text differs between the two
        text = "\n".join(line.strip() for line in _LIBRARY_PATH.sub("lib", inspect.getdoc(obj) or "").splitlines())
        try:
            n_parameters = len([p for p in inspect.signature(obj).parameters if p != "self"])
        except (TypeError, ValueError):  # builtins and some ufuncs have no signature
            n_parameters = None
        yield name, text, n_parameters


def _library_docstrings(rng, per_library: int = 300):
    with warnings.catch_warnings():  # deprecated names warn when looked up
        warnings.simplefilter("ignore")
        rows = [(lib, *doc) for lib, paths in DOC_SOURCES.items() for path in paths for doc in _docstrings(lib, path)]
    df = pd.DataFrame(rows, columns=["library", "name", "docstring", "n_parameters"])
    df = df[df["docstring"].str.len() >= 200].drop_duplicates("docstring")  # aliases share a docstring
    keep = np.concatenate([rng.choice(g.index, size=min(per_library, len(g)), replace=False)
                           for _, g in df.groupby("library", sort=True)])
    df = df.loc[np.sort(keep)].reset_index(drop=True)  # roughly balanced classes, in collection order
    out = pd.DataFrame({
        "id": [f"doc_{i:06x}" for i in rng.choice(16**6, size=len(df), replace=False)],
        "docstring": df["docstring"].str.slice(0, 1500),
        "n_parameters": df["n_parameters"].astype("Int64"),
        "name_length": df["name"].str.len(),
        "library": df["library"],
    })
    return out, out["library"].to_numpy()


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
    Spec(
        "digits-images", "Handwritten Digit Images", "MultiCls", "accuracy", False, 66, "file", ("label",),
        _digit_images, 0, False,
        story="Each image is a 32x32 grayscale PNG of a handwritten digit, sorted into one folder per digit for "
        "training. Your task is to recognise the digit (0 to 9) in each test image.",
        evaluation="Submissions are evaluated on accuracy, the share of test images whose digit is predicted "
        "correctly.",
        submission="For each image `file` in test/, you must predict its `label` (the digit). The file should "
        "contain a header and have the following format:",
        fields=(
            ("file", "the image file name (with extension): train/<label>/<file> or test/<file>"),
            ("label", "the target: the digit 0 to 9, the name of the image's folder under train/"),
        ),
        layout="image_folders", inputs=("img",),
    ),
    Spec(
        "docstring-library", "Which Library Wrote This Docstring?", "MultiCls", "multi_log_loss", True, 77, "id",
        ("library",), _library_docstrings, 0.25, True,
        story="Each record is the documentation of a public function, class or method of one of four scientific Python "
        "libraries: numpy, pandas, scipy or sklearn. Your task is to predict which library it comes from. The "
        "libraries' names and module paths have been replaced with `lib` in the texts, which are cut at 1,500 "
        "characters. Two numeric fields describe the documented object.",
        evaluation="Submissions are evaluated using the multi-class logarithmic loss. Each docstring has been labeled "
        "with one true library. For each docstring, you must submit a set of predicted probabilities (one for every "
        "library). The submitted probabilities for a given row are not required to sum to one because they are "
        "rescaled prior to being scored (each row is divided by the row sum). In order to avoid the extremes of the "
        "log function, predicted probabilities are replaced with max(min(p, 1 - 10^-15), 10^-15).",
        submission=_PROBA.format(id="id", what="each library"),
        fields=(
            ("id", "unique identifier of the docstring"),
            ("docstring", "the documentation text"),
            ("n_parameters", "number of parameters in the object's signature; null when it has no signature"),
            ("name_length", "number of characters in the object's name"),
            ("library", "the target: numpy, pandas, scipy or sklearn (train.json only)"),
        ),
        layout="json", inputs=("tab", "txt"),
    ),
)


def _target_names(targets: list[str]) -> str:
    return ", ".join(f"`{c}`" for c in targets)


def _write_csv(public: Path, train: pd.DataFrame, test: pd.DataFrame, targets: list[str]) -> list[str]:
    train.to_csv(public / "train.csv", index=False, lineterminator="\n")
    test.to_csv(public / "test.csv", index=False, lineterminator="\n")
    return [f"- **train.csv** - the training set ({len(train)} rows) with the target {_target_names(targets)}",
            f"- **test.csv** - the test set ({len(test)} rows); predict the target for each row"]


def _write_image_folders(public: Path, train: pd.DataFrame, test: pd.DataFrame, targets: list[str]) -> list[str]:
    """Class sub-folders, as in Kaggle's plant-seedlings-classification: train/<label>/<file>, test/<file>, no CSVs.
    The frames hold the file name first and a `pixels` column of uint8 arrays."""
    id_column, label = train.columns[0], targets[0]
    paths = [public / "train" / str(y) / f for f, y in zip(train[id_column], train[label])]
    paths += [public / "test" / f for f in test[id_column]]
    for path, pixels in zip(paths, [*train["pixels"], *test["pixels"]]):
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(pixels).save(path, format="PNG", compress_level=9)  # PIL writes no timestamp: same bytes
    classes = ", ".join(sorted(train[label].astype(str).unique()))
    return [f"- **train/** - {len(train)} training images, one sub-folder per `{label}` ({classes})",
            f"- **test/** - {len(test)} test images without labels; predict the `{label}` of each"]


def _write_json(public: Path, train: pd.DataFrame, test: pd.DataFrame, targets: list[str]) -> list[str]:
    """A JSON list of records per split, as in Kaggle's random-acts-of-pizza; missing values are null."""
    for name, frame in (("train", train), ("test", test)):
        records = frame.astype(object).where(frame.notna(), None).to_dict("records")
        (public / f"{name}.json").write_text(json.dumps(records, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return [f"- **train.json** - the training set ({len(train)} records) with the target {_target_names(targets)}",
            f"- **test.json** - the test set ({len(test)} records); predict the target for each record"]


LAYOUTS = {"csv": _write_csv, "image_folders": _write_image_folders, "json": _write_json}


def _description(spec: Spec, files: list[str], sample: pd.DataFrame) -> str:
    files = "\n".join(files)
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

{files}
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
    for folder in (public, private):  # start empty: no stale files from an earlier build
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
    files = LAYOUTS[spec.layout](public, train, test, targets)
    sample.to_csv(public / "sample_submission.csv", index=False, lineterminator="\n")
    answers.to_csv(private / "answers.csv", index=False, lineterminator="\n")
    (public / "description.md").write_text(_description(spec, files, sample))
    meta = {
        "competition": spec.name,
        "modalities": {"inputs": list(spec.inputs), "targets": ["tab"]},
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
    rows = [(spec, build_one(spec, out_dir)) for spec in SPECS]
    table = "\n".join(f"| {m['competition']} | {m['task_type']} | {m['metric']} | {', '.join(spec.inputs)} | "
                      f"{spec.layout} | {m['n_train']} / {m['n_test']} |" for spec, m in rows)
    (out_dir / "README.md").write_text(
        "# Example competitions\n\nSmall offline competitions in Kaggle layout, regenerated by "
        "`uv run python examples/build.py` and scored by `uv run python examples/grade.py <name> <submission.csv>`. "
        "Hidden answers live in `_private/`.\n\n"
        f"| name | task type | metric | inputs | layout | rows (train / test) |\n|---|---|---|---|---|---|\n{table}\n\n"
        "Every competition has `description.md` and `sample_submission.csv` (the id column, then the target or one "
        "probability column per class); the data files depend on the layout:\n\n"
        "- **csv** - `train.csv` (id, features, targets) and `test.csv` (id, features).\n"
        "- **image_folders** - class sub-folders, as in Kaggle's plant-seedlings-classification: "
        "`train/<label>/<file>.png` and unlabelled `test/<file>.png`; the submission's id is the file name with its "
        "extension. No CSV besides the sample submission.\n"
        "- **json** - `train.json` and `test.json`, each a list of records (objects; missing values are null), as "
        "in Kaggle's random-acts-of-pizza; `test.json` lacks the target.\n\n"
        "docstring-library's texts come from the installed numpy, pandas, scipy and scikit-learn, so rebuilding with "
        "other versions of those libraries changes them; the committed files are the reference.\n"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE, help="output directory (default: examples/)")
    build(parser.parse_args().out)
