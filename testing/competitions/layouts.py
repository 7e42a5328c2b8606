"""Fixture competitions for where a Kaggle competition puts its data (issue 14's layout families): how the sample
submission, train and test tables are named and packed, targets in a separate file, tables joined by a key, file
formats and encodings, and image layouts. Each is small (a few hundred rows or files) and has a learnable signal.
"""

from __future__ import annotations

import gzip
import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from testing.competitions import fixture

ACCURACY = "Submissions are evaluated on accuracy, the share of rows whose label is predicted correctly."
RMSE = "Submissions are scored on the root mean squared error (RMSE) between predicted and true values."


def description(task: str, evaluation: str, files: list[str]) -> str:
    listing = "\n".join(f"- {f}" for f in files)
    return f"# Synthetic competition\n\n## Description\n\n{task}\n\n## Evaluation\n\n{evaluation}\n\n## Data\n\n{listing}\n"


def tabular(rng: np.random.Generator, n: int = 300, id_col: str = "id", target: str = "target", start: int = 1):
    """(train, test inputs, test answers): x1, x2, a category; a binary target learnable from them."""
    x1, x2 = rng.normal(size=n), rng.normal(size=n)
    cat = rng.choice(["red", "green", "blue"], size=n)
    score = 1.5 * x1 - x2 + np.where(cat == "red", 1.0, 0.0) + rng.normal(scale=0.3, size=n)
    df = pd.DataFrame({id_col: np.arange(start, start + n), "x1": x1.round(4), "x2": x2.round(4), "colour": cat})
    df[target] = (score > 0.3).astype(int)
    cut = int(n * 0.8)
    train, test = df.iloc[:cut].reset_index(drop=True), df.iloc[cut:].reset_index(drop=True)
    return train, test.drop(columns=[target]), test[[id_col, target]]


def finish(
    folder: Path,
    answers: pd.DataFrame,
    sample_rel: str,
    task_type: str = "BinCls",
    metric: str = "accuracy",
    inputs=("tabular",),
    lower: bool = False,
    **extra,
) -> dict:
    answers.to_csv(folder / "private" / "answers.csv", index=False)
    return {
        "modalities": {"inputs": list(inputs), "targets": ["tabular"]},
        "task_type": task_type,
        "metric": metric,
        "lower_is_better": lower,
        "supported": True,
        "answers": "private/answers.csv",
        "sample_submission": f"public/{sample_rel}",
        **extra,
    }


def sample_of(test: pd.DataFrame, id_col: str, target: str, value=0) -> pd.DataFrame:
    return pd.DataFrame({id_col: test[id_col], target: value})


def write(df: pd.DataFrame, path: Path, **kwargs) -> None:
    """A table in the format its name says (csv, tsv, parquet, feather, json, jsonl; .gz/.zip compressed)."""
    name = path.name.lower()
    for packed in (".zip", ".gz"):
        if name.endswith(packed):
            inner = path.name[: -len(packed)]
            buf = io.BytesIO()
            write(df, Path(inner), _buffer=buf, **kwargs)
            if packed == ".gz":
                path.write_bytes(gzip.compress(buf.getvalue(), mtime=0))
            else:
                with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
                    z.writestr(inner, buf.getvalue())
            return
    buf = kwargs.pop("_buffer", None)
    target = buf if buf is not None else path
    if name.endswith(".tsv"):
        data = df.to_csv(sep="\t", index=False, **kwargs)
    elif name.endswith(".csv"):
        data = df.to_csv(index=False, **kwargs)
    elif name.endswith(".jsonl"):
        data = df.to_json(orient="records", lines=True)
    elif name.endswith(".json"):
        data = df.to_json(orient="records")
    elif name.endswith(".parquet"):
        df.to_parquet(target, index=False)
        return
    elif name.endswith(".feather"):
        df.reset_index(drop=True).to_feather(target)
        return
    else:
        raise ValueError(f"no writer for {path.name}")
    if buf is not None:
        buf.write(data.encode(kwargs.get("encoding") or "utf-8"))
    else:
        path.write_text(data)


def tab_competition(folder: Path, rng, names: dict[str, str], id_col="id", target="target", desc_files=None) -> dict:
    """The base binary task written under the given file names (role -> name under public/)."""
    pub = folder / "public"
    train, test, answers = tabular(rng, id_col=id_col, target=target)
    write(train, pub / names["train"])
    write(test, pub / names["test"])
    write(sample_of(test, id_col, target), pub / names["sample"])
    (pub / "description.md").write_text(
        description(
            f"Predict `{target}` (0 or 1) for each row from x1, x2 and colour.",
            ACCURACY,
            desc_files or list(names.values()),
        )
    )
    return finish(folder, answers, names["sample"])


# ---- 1. sample submission discovery ---------------------------------------------------------------------------
@fixture("sample discovery", "sample named gender_submission.csv", fast=True)
def gender_submission(folder, rng):
    return tab_competition(
        folder,
        rng,
        {"train": "train.csv", "test": "test.csv", "sample": "gender_submission.csv"},
        id_col="person_ref",  # an id that is not called "id"
        target="outcome",
    )


@fixture("sample discovery", "camel-case sampleSubmission.csv")
def camel_sample(folder, rng):
    return tab_competition(folder, rng, {"train": "train.csv", "test": "test.csv", "sample": "sampleSubmission.csv"})


@fixture("sample discovery", "prefixed names, every table zipped (en_sample_submission_2.csv.zip)")
def prefixed_zipped(folder, rng):
    return tab_competition(
        folder,
        rng,
        {"train": "en_train.csv.zip", "test": "en_test_2.csv.zip", "sample": "en_sample_submission_2.csv.zip"},
    )


@fixture("sample discovery", "only .7z archives: train.json, test.json and the sample each inside one")
def sevenzip_only(folder, rng):
    import py7zr

    pub = folder / "public"
    train, test, answers = tabular(rng)
    staging = folder / "staging"
    staging.mkdir()
    write(train, staging / "train.json")
    write(test, staging / "test.json")
    write(sample_of(test, "id", "target"), staging / "sample_submission.csv")
    for f in staging.iterdir():
        with py7zr.SevenZipFile(pub / f"{f.name}.7z", "w") as z:
            z.write(f, f.name)
        f.unlink()
    staging.rmdir()
    (pub / "description.md").write_text(
        description(
            "Predict `target` (0 or 1) for each row.",
            ACCURACY,
            ["train.json.7z", "test.json.7z", "sample_submission.csv.7z"],
        )
    )
    return finish(folder, answers, "sample_submission.csv.7z")


@fixture("sample discovery", "two samples: a stale one whose ids are not the test's, and _v2 whose are")
def stale_sample(folder, rng):
    meta = tab_competition(
        folder, rng, {"train": "train.csv", "test": "test.csv", "sample": "sample_submission_v2.csv"}
    )
    stale = pd.read_csv(folder / "public" / "sample_submission_v2.csv")
    stale["id"] = stale["id"] + 10_000  # an earlier version of the test set
    stale.to_csv(folder / "public" / "sample_submission.csv", index=False)
    return meta


@fixture("sample discovery", "parquet train, test and sample submission")
def parquet_tables(folder, rng):
    return tab_competition(
        folder, rng, {"train": "train.parquet", "test": "test.parquet", "sample": "sample_submission.parquet"}
    )


@fixture("sample discovery", "TSV tables, the sample gzipped (sample_submission.tsv.gz)")
def tsv_gz_sample(folder, rng):
    return tab_competition(
        folder, rng, {"train": "train.tsv", "test": "test.tsv", "sample": "sample_submission.tsv.gz"}
    )


# ---- 2. train/test discovery ----------------------------------------------------------------------------------
@fixture("train/test discovery", "training_set.csv and test_set.csv")
def training_set(folder, rng):
    return tab_competition(
        folder, rng, {"train": "training_set.csv", "test": "test_set.csv", "sample": "sample_submission.csv"}
    )


@fixture("train/test discovery", "versioned train_v2.csv, test_v2.csv, sample_submission_v2.csv")
def versioned_v2(folder, rng):
    return tab_competition(
        folder, rng, {"train": "train_v2.csv", "test": "test_v2.csv", "sample": "sample_submission_v2.csv"}
    )


@fixture("train/test discovery", "train/ folder holding the train table in three parts")
def parts_folder(folder, rng):
    pub = folder / "public"
    meta = tab_competition(
        folder,
        rng,
        {"train": "train.csv", "test": "test.csv", "sample": "sample_submission.csv"},
        desc_files=["train/part-*.csv", "test.csv", "sample_submission.csv"],
    )
    train = pd.read_csv(pub / "train.csv")
    (pub / "train.csv").unlink()
    (pub / "train").mkdir()
    for i, part in enumerate(train.iloc[rows] for rows in np.array_split(np.arange(len(train)), 3)):
        part.to_csv(pub / "train" / f"part-{i}.csv", index=False)
    return meta


@fixture("train/test discovery", "numbered parts train_1.csv, train_2.csv")
def numbered_parts(folder, rng):
    pub = folder / "public"
    meta = tab_competition(
        folder,
        rng,
        {"train": "train.csv", "test": "test.csv", "sample": "sample_submission.csv"},
        desc_files=["train_1.csv", "train_2.csv", "test.csv", "sample_submission.csv"],
    )
    train = pd.read_csv(pub / "train.csv")
    (pub / "train.csv").unlink()
    for i, part in enumerate((train.iloc[rows] for rows in np.array_split(np.arange(len(train)), 2)), start=1):
        part.to_csv(pub / f"train_{i}.csv", index=False)
    return meta


@fixture("train/test discovery", "archive in an archive: data.zip holding train.csv.zip, test.csv.zip, the sample")
def nested_archive(folder, rng):
    pub = folder / "public"
    meta = tab_competition(
        folder, rng, {"train": "train.csv.zip", "test": "test.csv.zip", "sample": "sample_submission.csv.zip"}
    )
    with zipfile.ZipFile(pub / "data.zip", "w") as z:
        for name in ("train.csv.zip", "test.csv.zip", "sample_submission.csv.zip"):
            z.write(pub / name, name)
            (pub / name).unlink()
    meta["sample_submission"] = "public/data.zip"
    return meta


# ---- 4. targets in a separate file, tables joined by a key ----------------------------------------------------
@fixture("separate targets", "train_features.csv + train_labels.csv keyed by id; test_features.csv")
def labels_file(folder, rng):
    pub = folder / "public"
    train, test, answers = tabular(rng, id_col="sample_id")
    train.drop(columns="target").to_csv(pub / "train_features.csv", index=False)
    train[["sample_id", "target"]].sample(frac=1, random_state=0).to_csv(pub / "train_labels.csv", index=False)
    test.to_csv(pub / "test_features.csv", index=False)
    sample_of(test, "sample_id", "target").to_csv(pub / "sample_submission.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Predict `target` (0 or 1) for each sample; the training targets are in train_labels.csv.",
            ACCURACY,
            ["train_features.csv", "train_labels.csv", "test_features.csv", "sample_submission.csv"],
        )
    )
    return finish(folder, answers, "sample_submission.csv")


@fixture("separate targets", "a per-customer table plus transactions.csv, many rows per customer")
def one_to_many(folder, rng):
    pub = folder / "public"
    n = 300
    customers = pd.DataFrame({"customer_id": [f"C{i:04d}" for i in range(n)], "age": rng.integers(18, 80, n)})
    counts = rng.integers(1, 8, n)
    spend = rng.normal(50, 20, n)
    tx = pd.DataFrame(
        {
            "customer_id": np.repeat(customers["customer_id"], counts),
            "amount": np.concatenate([rng.normal(m, 5, c) for m, c in zip(spend, counts)]).round(2),
        }
    )
    customers["churn"] = ((spend - 50) / 20 + counts / 4 + rng.normal(scale=0.3, size=n) > 1.0).astype(int)
    cut = 240
    customers.iloc[:cut].to_csv(pub / "train.csv", index=False)
    test = customers.iloc[cut:]
    test.drop(columns="churn").to_csv(pub / "test.csv", index=False)
    tx.sample(frac=1, random_state=0).to_csv(pub / "transactions.csv", index=False)
    sample_of(test, "customer_id", "churn").to_csv(pub / "sample_submission.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Predict whether each customer churns (`churn`, 0 or 1). transactions.csv lists every customer's purchases.",
            ACCURACY,
            ["train.csv", "test.csv", "transactions.csv", "sample_submission.csv"],
        )
    )
    return finish(folder, test[["customer_id", "churn"]], "sample_submission.csv")


@fixture("separate targets", "X_train.csv and X_test.csv of 32 sensor rows per series_id, y_train.csv of the labels")
def sensor_rows_per_series(folder, rng):
    pub = folder / "public"
    surfaces = ["carpet", "concrete", "wood", "tiles"]

    def split(n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
        rows, labels = [], []
        for s in range(n):
            k = int(rng.integers(0, 4))
            labels.append((s, int(rng.integers(0, 20)), surfaces[k]))
            for m in range(32):  # the surface shifts one axis and shakes another
                rows.append((f"{s}_{m}", s, m, rng.normal(k * 0.3, 1), rng.normal(0, 1 + 0.5 * k), rng.normal(0, 1)))
        columns = ["row_id", "series_id", "measurement_number", "acc_x", "acc_y", "acc_z"]
        return pd.DataFrame(rows, columns=columns).round(4), pd.DataFrame(
            labels, columns=["series_id", "group_id", "surface"]
        )

    x_train, y_train = split(300)
    x_test, y_test = split(100)
    x_train.to_csv(pub / "X_train.csv", index=False)
    y_train.to_csv(pub / "y_train.csv", index=False)
    x_test.to_csv(pub / "X_test.csv", index=False)
    y_test[["series_id"]].assign(surface="wood").to_csv(pub / "sample_submission.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Predict the floor surface a robot drives on from its 32 sensor readings per series.",
            ACCURACY,
            ["X_train.csv", "y_train.csv", "X_test.csv", "sample_submission.csv"],
        )
    )
    return finish(folder, y_test[["series_id", "surface"]], "sample_submission.csv", task_type="MultiCls")


@fixture("separate targets", "train.csv and test.csv of a row per item bought, many per trip; the sample one per trip")
def items_per_trip(folder, rng):
    pub = folder / "public"
    kinds = ["grocery", "repair", "party"]  # a trip's kind: what its items are mostly for
    shelves = {"grocery": ["DAIRY", "PRODUCE", "BAKERY"], "repair": ["HARDWARE", "PAINT"], "party": ["CANDY", "TOYS"]}

    def split(first: int, n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
        rows, trips = [], []
        for trip in range(first, first + n):
            kind = kinds[int(rng.integers(3))]
            day = str(rng.choice(["Monday", "Friday", "Sunday"]))
            trips.append((trip, kind))
            for _ in range(int(rng.integers(1, 7))):
                shelf = str(rng.choice(shelves[kind] if rng.random() < 0.8 else sum(shelves.values(), [])))
                rows.append((kind, trip, day, int(rng.integers(1, 4)), shelf, int(rng.integers(10**9, 10**10))))
        columns = ["TripKind", "Trip", "Day", "Count", "Shelf", "Code"]
        return pd.DataFrame(rows, columns=columns), pd.DataFrame(trips, columns=["Trip", "TripKind"])

    train, _ = split(1, 240)
    test, answers = split(1000, 80)
    train.to_csv(pub / "train.csv", index=False)
    test.drop(columns="TripKind").to_csv(pub / "test.csv", index=False)
    answers[["Trip"]].assign(TripKind="grocery").to_csv(pub / "sample_submission.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Predict the kind of each shopping trip from the items bought on it (one row per item).",
            ACCURACY,
            ["train.csv", "test.csv", "sample_submission.csv"],
        )
    )
    return finish(folder, answers, "sample_submission.csv", task_type="MultiCls")


# ---- 7. file formats and encodings ----------------------------------------------------------------------------
@fixture("formats", "UTF-16 TSV train and test")
def utf16_tsv(folder, rng):
    pub = folder / "public"
    meta = tab_competition(folder, rng, {"train": "train.tsv", "test": "test.tsv", "sample": "sample_submission.csv"})
    for name in ("train.tsv", "test.tsv"):
        text = (pub / name).read_text()
        (pub / name).write_bytes(text.replace("red", "rouge é").encode("utf-16"))
    return meta


@fixture("formats", "semicolon-delimited CSVs with decimal commas (as European spreadsheets write them)")
def semicolon_decimal_comma(folder, rng):
    pub = folder / "public"
    train, test, answers = tabular(rng)
    for frame, name in ((train, "train.csv"), (test, "test.csv")):
        frame.to_csv(pub / name, sep=";", decimal=",", index=False)
    sample_of(test, "id", "target").to_csv(pub / "sample_submission.csv", sep=";", index=False)
    (pub / "description.md").write_text(
        description("Predict the target (0 or 1).", ACCURACY, ["train.csv", "test.csv", "sample_submission.csv"])
    )
    return finish(folder, answers, "sample_submission.csv")


@fixture("formats", "latin-1 CSV with quoted multi-line text, UTF-8 BOM sample")
def latin1_multiline(folder, rng):
    pub = folder / "public"
    train, test, answers = tabular(rng)
    notes = np.array(["café\nnoté", 'crème, "brûlée"', "naïve", "déjà\nvu"])
    for df in (train, test):
        df["note"] = notes[rng.integers(0, len(notes), len(df))]
    train.to_csv(pub / "train.csv", index=False, encoding="latin-1")
    test.to_csv(pub / "test.csv", index=False, encoding="latin-1")
    sample_of(test, "id", "target").to_csv(pub / "sample_submission.csv", index=False, encoding="utf-8-sig")
    (pub / "description.md").write_text(
        description(
            "Predict `target` (0 or 1) for each row.", ACCURACY, ["train.csv", "test.csv", "sample_submission.csv"]
        )
    )
    return finish(folder, answers, "sample_submission.csv")


@fixture("formats", "NA, na and empty as missing; numbers with thousands separators")
def missing_and_thousands(folder, rng):
    pub = folder / "public"
    train, test, answers = tabular(rng)
    for df in (train, test):
        df["income"] = [f"{v:,}" for v in (df["x1"] * 20000 + 60000).round().astype(int)]
        df["x2"] = df["x2"].astype(object)
        holes = rng.random(len(df)) < 0.1
        df.loc[holes, "x2"] = rng.choice(["NA", "na", ""], size=int(holes.sum()))
        df.drop(columns="x1", inplace=True)
    train.to_csv(pub / "train.csv", index=False)
    test.to_csv(pub / "test.csv", index=False)
    sample_of(test, "id", "target").to_csv(pub / "sample_submission.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Predict `target` (0 or 1) for each row.", ACCURACY, ["train.csv", "test.csv", "sample_submission.csv"]
        )
    )
    return finish(folder, answers, "sample_submission.csv")


@fixture("formats", "JSON lines train, feather test")
def jsonl_feather(folder, rng):
    return tab_competition(
        folder, rng, {"train": "train.jsonl", "test": "test.feather", "sample": "sample_submission.csv"}
    )


@fixture("formats", "JSON records train and test")
def json_records(folder, rng):
    return tab_competition(folder, rng, {"train": "train.json", "test": "test.json", "sample": "sample_submission.csv"})


@fixture(
    "formats", "JSON records with list-valued fields (the forums a user posts in), free text and train-only fields"
)
def json_nested_fields(folder, rng):
    pub = folder / "public"
    forums = ["books", "pics", "food", "gaming", "music", "giving", "movies", "science"]
    words = "i am broke and hungry please help student job lost rent family kids pay forward tonight thanks".split()
    records = []
    for i in range(600):
        joined = sorted(rng.choice(forums, rng.integers(0, 5), replace=False).tolist())
        text = " ".join(rng.choice(words, rng.integers(6, 30)))
        age = round(float(rng.exponential(200)), 2)
        z = 0.004 * age + 0.8 * ("job" in text.split()) + 1.2 * ("giving" in joined) + rng.normal(scale=0.6) - 1.4
        records.append(
            {
                "request_id": f"t3_{i:05x}",
                "request_text": text,
                "account_age_days": age,
                "forums": joined,  # a list in each record
                "flair": {"colour": str(rng.choice(["red", "blue"])), "size": int(rng.integers(1, 4))},
                "upvotes_at_retrieval": int(rng.poisson(5 + 3 * (z > 0))),  # known after the outcome: train only
                "received": bool(z > 0),
            }
        )
    train, test = records[:450], records[450:]
    hidden = ("upvotes_at_retrieval", "received")
    (pub / "train.json").write_text(json.dumps(train))
    (pub / "test.json").write_text(json.dumps([{k: v for k, v in r.items() if k not in hidden} for r in test]))
    ids = [r["request_id"] for r in test]
    pd.DataFrame({"request_id": ids, "received": 0}).to_csv(pub / "sample_submission.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Predict the probability that a request receives a gift (`received`).",
            "Submissions are evaluated on area under the ROC curve between the predicted probability and the "
            "observed outcome.",
            ["train.json", "test.json", "sample_submission.csv"],
        )
    )
    answers = pd.DataFrame({"request_id": ids, "received": [int(r["received"]) for r in test]})
    return finish(folder, answers, "sample_submission.csv", metric="roc_auc", inputs=("tabular", "text"))


# ---- 8. image layouts ---------------------------------------------------------------------------------------------
def picture(rng, label: int, size: int = 16, mode: str = "RGB"):
    """A small image whose brightness pattern tells its class."""
    from PIL import Image

    base = rng.normal(0.5, 0.12, (size, size))
    if label == 1:
        base[: size // 2] += 0.3
    elif label == 2:
        base[:, : size // 2] += 0.3
    arr = np.clip(base, 0, 1)
    if mode == "I;16":
        return Image.fromarray((arr * 65535).astype(np.uint16))
    grey = Image.fromarray((arr * 255).astype(np.uint8))
    if mode == "P":
        return grey.convert("RGB").convert("P", palette=Image.Palette.ADAPTIVE, colors=32)
    return grey.convert(mode)


@fixture("images", "class-named folders whose names have spaces; unlabelled test/ folder", fast=True)
def class_folders_spaces(folder, rng):
    pub = folder / "public"
    classes = ["golden retriever", "house cat", "red fox"]
    rows = []
    for k, cls in enumerate(classes):
        (pub / "train" / cls).mkdir(parents=True)
        for i in range(40):
            picture(rng, k).save(pub / "train" / cls / f"img_{k}{i:03d}.png")
    (pub / "test").mkdir()
    for i in range(45):
        k = int(rng.integers(0, 3))
        name = f"t{i:03d}.png"
        picture(rng, k).save(pub / "test" / name)
        rows.append((name, classes[k]))
    answers = pd.DataFrame(rows, columns=["file", "species"])
    answers.assign(species=classes[0]).to_csv(pub / "sample_submission.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Name the species in each image.",
            ACCURACY,
            ["train/<species>/*.png", "test/*.png", "sample_submission.csv"],
        )
    )
    return finish(folder, answers, "sample_submission.csv", task_type="MultiCls", inputs=("image",))


@fixture("images", "trainLabels.csv with zero-padded numeric ids without extension; 16-bit, palette and grey PNGs")
def png_modes(folder, rng):
    pub = folder / "public"
    (pub / "train").mkdir()
    (pub / "test").mkdir()
    modes = ["I;16", "P", "L", "RGB"]
    labels, answers = [], []
    for split, n, out in (("train", 120, labels), ("test", 40, answers)):
        for i in range(n):
            k = int(rng.integers(0, 2))
            name = f"{i + (120 if split == 'test' else 0):05d}"  # 00042: read as a number, it names no file
            picture(rng, k, mode=modes[i % 4]).save(pub / split / f"{name}.png")
            out.append((name, k))
    pd.DataFrame(labels, columns=["id", "label"]).to_csv(pub / "trainLabels.csv", index=False)
    answers = pd.DataFrame(answers, columns=["id", "label"])
    answers.assign(label=0).to_csv(pub / "sample_submission.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Predict the label (0 or 1) of each image.",
            ACCURACY,
            ["train/*.png", "trainLabels.csv", "test/*.png", "sample_submission.csv"],
        )
    )
    return finish(folder, answers, "sample_submission.csv", inputs=("image",))


@fixture(
    "images", "train_images/ and test_images/ named by id_code, a 0-4 severity grade scored by quadratic weighted kappa"
)
def image_grades_qwk(folder, rng):
    from PIL import Image

    pub = folder / "public"
    rows = {"train": [], "test": []}
    for split, n in (("train", 200), ("test", 60)):
        (pub / f"{split}_images").mkdir()
        for _ in range(n):
            grade = int(rng.choice(5, p=[0.4, 0.2, 0.2, 0.1, 0.1]))
            level = 0.25 + 0.12 * grade + rng.normal(0, 0.06)  # brighter with the grade, give or take
            arr = np.clip(rng.normal(level, 0.08, (24, 24)), 0, 1)
            code = f"{rng.integers(16**9, 16**10):010x}"
            Image.fromarray((arr * 255).astype(np.uint8)).convert("RGB").save(pub / f"{split}_images" / f"{code}.png")
            rows[split].append({"id_code": code, "diagnosis": grade})
    train, truth = pd.DataFrame(rows["train"]), pd.DataFrame(rows["test"])
    train.to_csv(pub / "train.csv", index=False)
    truth[["id_code"]].to_csv(pub / "test.csv", index=False)
    truth.assign(diagnosis=0).to_csv(pub / "sample_submission.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Rate the severity of the condition in each image on a scale of 0 to 4.",
            "Submissions are scored based on the quadratic weighted kappa, which measures the agreement between two "
            "ratings.",
            ["train_images/*.png", "test_images/*.png", "train.csv", "test.csv", "sample_submission.csv"],
        )
    )
    return finish(folder, truth, "sample_submission.csv", "MultiCls", "qwk", inputs=("image",))


@fixture(
    "images", "one images/ folder for train and test (Train_0.jpg, Test_0.jpg), classes as one-hot columns, mean AUC"
)
def shared_folder_onehot(folder, rng):
    pub = folder / "public"
    (pub / "images").mkdir()
    names = ["healthy", "mixed", "rust", "scab"]
    rows = {"train": [], "test": []}
    for split, n in (("train", 160), ("test", 60)):
        for i in range(n):
            k = int(rng.integers(0, 4))  # 0, 1, 2 as picture()'s patterns; 3 the first pattern, brighter
            image = picture(rng, k % 3, size=24)
            if k == 3:
                image = image.point(lambda v: min(255, v + 60))
            name = f"{split.title()}_{i}"
            image.save(pub / "images" / f"{name}.jpg", quality=95)
            rows[split].append({"image_id": name, **{c: int(j == k) for j, c in enumerate(names)}})
    train, truth = pd.DataFrame(rows["train"]), pd.DataFrame(rows["test"])
    train.to_csv(pub / "train.csv", index=False)
    truth[["image_id"]].to_csv(pub / "test.csv", index=False)
    truth.assign(**{c: 0.25 for c in names}).to_csv(pub / "sample_submission.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Classify each leaf image as healthy, with mixed diseases, with rust or with scab: submit the probability "
            "of each class.",
            "Submissions are evaluated on mean column-wise ROC AUC: the score is the average of the individual AUCs "
            "of each predicted column.",
            ["images/*.jpg", "train.csv", "test.csv", "sample_submission.csv"],
        )
    )
    return finish(folder, truth, "sample_submission.csv", "MultiCls", "mean_columnwise_auc", inputs=("image",))


@fixture(
    "images",
    "photos named by id in train/ and test/ beside metadata flags; a 1-100 score they barely explain (RMSE): the "
    "train mean is hard to beat",
)
def noisy_photo_scores(folder, rng):
    pub = folder / "public"
    n_train, n_test = 400, 100
    n = n_train + n_test
    flags = pd.DataFrame(rng.integers(0, 2, (n, 6)), columns=["Near", "Blur", "Group", "Indoor", "Caption", "Frame"])
    bright = rng.integers(0, 2, n)
    # a weak signal (a few points from two flags and the image) under noise of 20 points, as in popularity scores
    score = 38 + 3 * flags["Near"] - 2 * flags["Blur"] + 2 * bright + rng.normal(0, 20, n)
    frame = flags.assign(Id=[f"{rng.integers(0, 16**12):012x}" for _ in range(n)], Score=np.clip(score.round(), 1, 100))
    frame = frame[["Id", *flags.columns, "Score"]].astype({"Score": int})
    for split, rows in (("train", frame.iloc[:n_train]), ("test", frame.iloc[n_train:])):
        (pub / split).mkdir()
        for i, row_id in zip(rows.index, rows["Id"], strict=True):
            picture(rng, int(bright[i]), size=32).save(pub / split / f"{row_id}.jpg")
    frame.iloc[:n_train].to_csv(pub / "train.csv", index=False)
    test = frame.iloc[n_train:].reset_index(drop=True)
    test.drop(columns="Score").to_csv(pub / "test.csv", index=False)
    answers = test[["Id", "Score"]]
    answers.assign(Score=50).to_csv(pub / "sample_submission.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Predict each photo's score (1 to 100) from the photo and its metadata flags.",
            RMSE,
            ["train/*.jpg", "train.csv", "test/*.jpg", "test.csv", "sample_submission.csv"],
        )
    )
    return finish(
        folder,
        answers,
        "sample_submission.csv",
        task_type="Reg",
        metric="rmse",
        inputs=("image", "tabular"),
        lower=True,
    )


@fixture("images", "pixel columns in a CSV (digit-recognizer layout), ImageId 1..n in the sample only")
def pixel_csv(folder, rng):
    pub = folder / "public"
    rows, labels = [], []
    for _ in range(300):
        k = int(rng.integers(0, 3))
        rows.append(np.asarray(picture(rng, k, size=16, mode="L")).ravel())
        labels.append(k)
    pixels = pd.DataFrame(np.array(rows), columns=[f"pixel{i}" for i in range(256)])
    train = pd.concat([pd.DataFrame({"label": labels[:240]}), pixels.iloc[:240]], axis=1)
    test = pixels.iloc[240:].reset_index(drop=True)
    train.to_csv(pub / "train.csv", index=False)
    test.to_csv(pub / "test.csv", index=False)
    answers = pd.DataFrame({"ImageId": np.arange(1, len(test) + 1), "Label": labels[240:]})
    answers.assign(Label=0).to_csv(pub / "sample_submission.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Predict the digit drawn in each 16x16 image.", ACCURACY, ["train.csv", "test.csv", "sample_submission.csv"]
        )
    )
    return finish(folder, answers, "sample_submission.csv", task_type="MultiCls", inputs=("image",))


# ---- 3. sample columns that echo test inputs ------------------------------------------------------------------
@fixture("echo columns", "sample id, target, then a test input column repeated (region)")
def echo_with_id(folder, rng):
    pub = folder / "public"
    train, test, answers = tabular(rng)
    region = np.array(["north", "south", "east", "west"])
    for df in (train, test):
        df["region"] = region[rng.integers(0, 4, len(df))]
    train.to_csv(pub / "train.csv", index=False)
    test.to_csv(pub / "test.csv", index=False)
    sample_of(test, "id", "target").assign(region=test["region"]).to_csv(pub / "sample_submission.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Predict `target` (0 or 1) for each row; the submission repeats each row's region.",
            ACCURACY,
            ["train.csv", "test.csv", "sample_submission.csv"],
        )
    )
    return finish(folder, answers.assign(region=test["region"]), "sample_submission.csv", targets=["target"])


WORDS = "the a this that comment thread post reply people really think game team news article point view".split()
RUDE = "idiot moron stupid loser clown fool".split()


@fixture("echo columns", "id-less sample Insult,Date,Comment repeating the test's Date and Comment")
def echo_idless(folder, rng):
    pub = folder / "public"
    n = 300
    insult = (rng.random(n) < 0.4).astype(int)
    comments = []
    for y in insult:
        words = list(rng.choice(WORDS, 12)) + (list(rng.choice(RUDE, 2)) if y else [])
        rng.shuffle(words)
        comments.append(" ".join(words).capitalize() + ".")
    dates = [
        f"2012{int(m):02d}{int(d):02d}{int(h):02d}0000Z" for m, d, h in rng.integers([1, 1, 0], [13, 29, 24], (n, 3))
    ]
    df = pd.DataFrame({"Insult": insult, "Date": dates, "Comment": comments})
    cut = 240
    df.iloc[:cut].to_csv(pub / "train.csv", index=False)
    test = df.iloc[cut:].reset_index(drop=True)
    test[["Date", "Comment"]].to_csv(pub / "test.csv", index=False)
    test.assign(Insult=0).to_csv(pub / "sample_submission_null.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Predict whether each comment is an insult to a participant of the conversation (`Insult`, 0 or 1).",
            "Submissions are scored on the area under the ROC curve (AUC).",
            ["train.csv", "test.csv", "sample_submission_null.csv"],
        )
    )
    test.to_csv(folder / "private" / "answers.csv", index=False)
    return {
        **finish(folder, test, "sample_submission_null.csv", metric="roc_auc", inputs=("text",)),
        "by_position": True,
        "targets": ["Insult"],
    }


@fixture("images", "train/<label>/<id>.png plus train.csv and test.csv of extra columns without the label")
def split_label_folders_csv(folder, rng):
    pub = folder / "public"
    classes = ["benign", "malignant"]
    rows = {"train": [], "test": []}
    for split, n in (("train", 120), ("test", 40)):
        for i in range(n):
            k = int(rng.integers(0, 2))
            name = f"ISIC_{split[:2]}{i:04d}"
            where = pub / split / classes[k] if split == "train" else pub / split
            where.mkdir(parents=True, exist_ok=True)
            picture(rng, k).save(where / f"{name}.png")
            rows[split].append((name, round(float(rng.normal(50 + 10 * k, 8)), 1), classes[k]))
    for split in rows:
        df = pd.DataFrame(rows[split], columns=["image_name", "age", "diagnosis"])
        df.drop(columns="diagnosis").to_csv(pub / f"{split}.csv", index=False)
    answers = pd.DataFrame(rows["test"], columns=["image_name", "age", "diagnosis"]).drop(columns="age")
    answers.assign(diagnosis="benign").to_csv(pub / "sample_submission.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Diagnose each lesion image (`diagnosis`: benign or malignant); train.csv and test.csv add the age.",
            ACCURACY,
            ["train/<diagnosis>/<image_name>.png", "test/<image_name>.png", "train.csv", "test.csv"],
        )
    )
    return finish(folder, answers, "sample_submission.csv", inputs=("tabular", "image"))


@fixture("images", "multi-frame grayscale TIFF stacks named by id in train.csv")
def multiframe_tiff(folder, rng):
    pub = folder / "public"
    rows = {"train": [], "test": []}
    for split, n in (("train", 120), ("test", 40)):
        (pub / f"{split}_images").mkdir()
        for i in range(n):
            k = int(rng.integers(0, 2))
            frames = [picture(rng, k, mode="L") for _ in range(3)]
            frames[0].save(
                pub / f"{split}_images" / f"s{split[:2]}{i:04d}.tif", save_all=True, append_images=frames[1:]
            )
            rows[split].append((f"s{split[:2]}{i:04d}", k))
    pd.DataFrame(rows["train"], columns=["id", "label"]).to_csv(pub / "train.csv", index=False)
    answers = pd.DataFrame(rows["test"], columns=["id", "label"])
    answers.assign(label=0).to_csv(pub / "sample_submission.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Predict the label (0 or 1) of each TIFF stack.",
            ACCURACY,
            ["train_images/<id>.tif", "test_images/<id>.tif", "train.csv", "sample_submission.csv"],
        )
    )
    return finish(folder, answers, "sample_submission.csv", inputs=("image",))


DICOM_ENCODINGS = ("ct", "xray-inverted", "rle", "jpeg2000")  # how dicom_scan stores a scan


def dicom_scan(path: Path, level: np.ndarray, encoding: str) -> None:
    """A 12-bit DICOM scan of `level` (0..1, brighter = denser) stored as scanners do: "ct" in Hounsfield units
    (rescale intercept -1024, a display window of -200 to 400), "xray-inverted" as MONOCHROME1 (low values white, no
    window), "rle" and "jpeg2000" as "ct" compressed losslessly. A reader that skips the rescale, the window or the
    inversion sees other pictures than the scanner's viewer does."""
    from pydicom.dataset import Dataset, FileMetaDataset
    from pydicom.uid import CTImageStorage, ExplicitVRLittleEndian, JPEG2000Lossless, RLELossless, generate_uid

    meta = FileMetaDataset()
    meta.MediaStorageSOPClassUID, meta.MediaStorageSOPInstanceUID = CTImageStorage, generate_uid()
    meta.TransferSyntaxUID = ExplicitVRLittleEndian
    ds = Dataset()
    ds.file_meta, ds.SOPClassUID, ds.SOPInstanceUID = meta, CTImageStorage, meta.MediaStorageSOPInstanceUID
    ds.Rows, ds.Columns = level.shape
    ds.SamplesPerPixel, ds.BitsAllocated, ds.BitsStored, ds.HighBit, ds.PixelRepresentation = 1, 16, 12, 11, 0
    hu = -200 + 500 * level  # fat to bone
    if encoding == "xray-inverted":
        ds.Modality, ds.PhotometricInterpretation = "CR", "MONOCHROME1"
        stored = 4095 - (level * 4095)
    else:
        ds.Modality, ds.PhotometricInterpretation = "CT", "MONOCHROME2"
        ds.RescaleSlope, ds.RescaleIntercept, ds.WindowCenter, ds.WindowWidth = 1, -1024, 100, 600
        stored = hu + 1024
    stored = stored.round().clip(0, 4095).astype(np.uint16)
    ds.PixelData = stored.tobytes()
    if encoding in ("rle", "jpeg2000"):
        ds.compress(RLELossless if encoding == "rle" else JPEG2000Lossless, stored)
    ds.save_as(path, enforce_file_format=True)


@fixture("images", "DICOM scans (CT with a display window, inverted X-ray, RLE and JPEG 2000) with patient metadata")
def dicom_scans(folder, rng):
    pub = folder / "public"
    rows = {"train": [], "test": []}
    for split, n in (("train", 160), ("test", 60)):
        (pub / split).mkdir(parents=True)
        for i in range(n):
            age = int(rng.integers(30, 85))
            finding = int(rng.random() < 1 / (1 + np.exp(-(age - 60) / 12)))  # older patients more often
            level = rng.normal(0.45, 0.06, (32, 32))
            if finding:  # a dense round spot somewhere in the middle
                cy, cx = rng.integers(8, 24, 2)
                yy, xx = np.mgrid[:32, :32]
                level += 0.5 * np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 12)
            name = f"ID_{rng.integers(16**8, 16**9):09x}"
            dicom_scan(pub / split / f"{name}.dcm", level.clip(0, 1), DICOM_ENCODINGS[i % 4])
            rows[split].append((name, f"P{i % 97:03d}", age, finding))
    return _scans_scored_by_auc(
        folder,
        rows,
        ["image_name", "patient_id", "age_approx", "target"],
        0.0,
        "Predict the probability that each scan shows the finding (`target`).",
        ["train/<image_name>.dcm", "test/<image_name>.dcm", "train.csv", "test.csv", "sample_submission.csv"],
    )


def _scans_scored_by_auc(folder: Path, rows: dict, columns: list[str], guess: float, task: str, files: list[str]):
    """The scan fixtures' tables: train.csv and test.csv of the rows (the test without its target, the last column),
    a sample of the key (the first) and `guess`, the description; the meta, scored by AUC on tabular and image
    inputs."""
    pub, key, target = folder / "public", columns[0], columns[-1]
    pd.DataFrame(rows["train"], columns=columns).to_csv(pub / "train.csv", index=False)
    test = pd.DataFrame(rows["test"], columns=columns)
    test.drop(columns=target).to_csv(pub / "test.csv", index=False)
    test[[key]].assign(**{target: guess}).to_csv(pub / "sample_submission.csv", index=False)
    auc = "Submissions are evaluated on area under the ROC curve between the predicted probability and the observed target."
    (pub / "description.md").write_text(description(task, auc, files))
    return finish(folder, test[[key, target]], "sample_submission.csv", metric="roc_auc", inputs=("tabular", "image"))


@fixture("images", "a folder of DICOM slices per patient (train/<Patient>/<n>.dcm), the finding in the middle slices")
def slices_per_patient(folder, rng):
    pub = folder / "public"
    rows = {"train": [], "test": []}
    yy, xx = np.mgrid[:24, :24]
    for split, n in (("train", 160), ("test", 60)):
        for _ in range(n):
            patient = f"ID{rng.integers(10**8, 10**9)}"
            age = int(rng.integers(40, 85))
            finding = int(rng.random() < 1 / (1 + np.exp(-(age - 62) / 20)))  # age tells a little
            cy, cx = rng.integers(7, 17, 2)
            (pub / split / patient).mkdir(parents=True)
            for k in range(1, 9):  # named 1..8: "10" would sort before "2" as text
                level = rng.normal(0.4, 0.06, (24, 24))
                if finding and 3 <= k <= 6:  # a dense spot in the middle slices only
                    level += 0.3 * np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 10)
                dicom_scan(pub / split / patient / f"{k}.dcm", level.clip(0, 1), "ct")
            rows[split].append((patient, age, rng.choice(["Male", "Female"]), finding))
    return _scans_scored_by_auc(
        folder,
        rows,
        ["Patient", "Age", "Sex", "finding"],
        0.5,
        "Predict the probability that each patient's scan shows the finding, from the CT slices and the patient's age "
        "and sex.",
        ["train/<Patient>/<slice>.dcm", "test/<Patient>/<slice>.dcm", "train.csv", "test.csv", "sample_submission.csv"],
    )


# ---- 5. per-sample files beyond images and text ---------------------------------------------------------------
@fixture("per-sample files", "one sensor time-series CSV per sample in train/ and test/, labels in train.csv")
def series_per_sample(folder, rng):
    pub = folder / "public"
    ids = [f"s{i:04d}" for i in range(300)]
    labels = rng.integers(0, 2, len(ids))
    for split in ("train", "test"):
        (pub / split).mkdir()
    for i, (sid, y) in enumerate(zip(ids, labels)):
        t = np.arange(int(rng.integers(30, 60)))
        acc = rng.normal(0, 1, len(t)) + (1.5 if y else 0) * np.sin(t / 3)
        gyro = rng.normal(0.5 * y, 1, len(t))
        split = "train" if i < 240 else "test"
        pd.DataFrame({"t": t, "acc": acc.round(4), "gyro": gyro.round(4)}).to_csv(
            pub / split / f"{sid}.csv", index=False
        )
    pd.DataFrame({"series_id": ids[:240], "activity": labels[:240]}).to_csv(pub / "train.csv", index=False)
    answers = pd.DataFrame({"series_id": ids[240:], "activity": labels[240:]})
    answers.assign(activity=0).to_csv(pub / "sample_submission.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Predict the activity (0 or 1) recorded in each sensor series.",
            ACCURACY,
            ["train/<series_id>.csv", "test/<series_id>.csv", "train.csv", "sample_submission.csv"],
        )
    )
    return finish(folder, answers, "sample_submission.csv")


@fixture("per-sample files", "one .npy array per sample in arrays/, a regression target in train.csv")
def npy_per_sample(folder, rng):
    pub = folder / "public"
    (pub / "arrays").mkdir()
    ids = [f"m{i:04d}" for i in range(300)]
    values = []
    for mid in ids:
        arr = rng.normal(0, 1, (12, 12))
        arr[:6] += rng.normal(0, 1)
        values.append(float(arr.mean() * 10 + rng.normal(0, 0.3)))
        np.save(pub / "arrays" / f"{mid}.npy", arr)
    pd.DataFrame({"id": ids[:240], "energy": values[:240]}).to_csv(pub / "train.csv", index=False)
    pd.DataFrame({"id": ids[240:]}).to_csv(pub / "test.csv", index=False)
    answers = pd.DataFrame({"id": ids[240:], "energy": values[240:]})
    answers.assign(energy=0.0).to_csv(pub / "sample_submission.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Predict the energy of each sample from its array.",
            RMSE,
            ["arrays/<id>.npy", "train.csv", "test.csv", "sample_submission.csv"],
        )
    )
    return finish(folder, answers, "sample_submission.csv", task_type="Reg", metric="rmse", lower=True)


@fixture("per-sample files", "features and labels as arrays: X_train.npy, y_train.npy, X_test.npy")
def npy_arrays(folder, rng):
    pub = folder / "public"
    x = rng.normal(size=(300, 8))
    y = (x[:, 0] - x[:, 3] + rng.normal(scale=0.3, size=300) > 0).astype(int)
    np.save(pub / "X_train.npy", x[:240])
    np.save(pub / "y_train.npy", y[:240])
    np.save(pub / "X_test.npy", x[240:])
    answers = pd.DataFrame({"Id": np.arange(60), "Category": y[240:]})
    answers.assign(Category=0).to_csv(pub / "sample_submission.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Predict the category (0 or 1) of each test row.",
            ACCURACY,
            ["X_train.npy", "y_train.npy", "X_test.npy", "sample_submission.csv"],
        )
    )
    return finish(folder, answers, "sample_submission.csv")


@fixture("per-sample files", "image bands as number lists in train.json/test.json (band_1, band_2, inc_angle)")
def json_bands(folder, rng):
    pub = folder / "public"
    rows = []
    for i in range(200):
        y = int(rng.integers(0, 2))
        img = np.asarray(picture(rng, y, size=12, mode="L"), dtype=float) / 10 - 20
        rows.append(
            {
                "id": f"b{i:04x}",
                "band_1": img.ravel().round(3).tolist(),
                "band_2": (img.T.ravel() + rng.normal(0, 0.5, 144)).round(3).tolist(),
                "inc_angle": round(float(rng.uniform(30, 45)), 2),
                "is_iceberg": y,
            }
        )
    df = pd.DataFrame(rows)
    df.iloc[:160].to_json(pub / "train.json", orient="records")
    test = df.iloc[160:]
    test.drop(columns="is_iceberg").to_json(pub / "test.json", orient="records")
    test[["id", "is_iceberg"]].assign(is_iceberg=0.5).to_csv(pub / "sample_submission.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Predict the probability that each radar image shows an iceberg (`is_iceberg`).",
            "Submissions are evaluated on the log loss between the predicted values and the ground truth.",
            ["train.json", "test.json", "sample_submission.csv"],
        )
    )
    return finish(
        folder,
        test[["id", "is_iceberg"]],
        "sample_submission.csv",
        metric="log_loss",
        lower=True,
        inputs=("tabular", "image"),
    )


# ---- 6. grouped rows ----------------------------------------------------------------------------------------------
@fixture("grouped rows", "many time steps per episode_id, a per-row target, test episodes unseen in train")
def grouped_rows(folder, rng):
    pub = folder / "public"
    rows = []
    for ep in range(30):
        drift = rng.normal(0, 1)
        for step in range(10):
            x = rng.normal(drift, 1)
            rows.append((f"{ep}_{step}", ep, step, round(x, 4), round(2 * x + 0.3 * step + rng.normal(0, 0.3), 4)))
    df = pd.DataFrame(rows, columns=["row_id", "episode_id", "step", "sensor", "reading"])
    train, test = df[df["episode_id"] < 24], df[df["episode_id"] >= 24]
    train.to_csv(pub / "train.csv", index=False)
    test.drop(columns="reading").to_csv(pub / "test.csv", index=False)
    test[["row_id", "reading"]].assign(reading=0.0).to_csv(pub / "sample_submission.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Predict the `reading` at every time step of each episode.",
            RMSE,
            ["train.csv", "test.csv", "sample_submission.csv"],
        )
    )
    return finish(
        folder, test[["row_id", "reading"]], "sample_submission.csv", task_type="Reg", metric="rmse", lower=True
    )


@fixture("grouped rows", "time steps per breath_id, a valve column masking the scored rows (masked MAE)")
def grouped_masked(folder, rng):
    pub = folder / "public"
    rows = []
    for breath in range(40):
        lung = rng.uniform(5, 50)
        for step in range(20):
            valve_open = int(step >= 8)  # only the first, inspiratory steps are scored
            flow = round(float(rng.uniform(0, 100)), 3)
            pressure = lung * 0.2 + 0.1 * flow + (2.0 * step if not valve_open else 6.0) + rng.normal(0, 0.3)
            rows.append((f"{breath}-{step}", breath, step, flow, valve_open, round(lung, 2), round(pressure, 4)))
    df = pd.DataFrame(rows, columns=["id", "breath_id", "time_step", "flow_in", "valve_open", "lung", "pressure"])
    train, test = df[df["breath_id"] < 32], df[df["breath_id"] >= 32]
    train.to_csv(pub / "train.csv", index=False)
    test.drop(columns="pressure").to_csv(pub / "test.csv", index=False)
    test[["id", "pressure"]].assign(pressure=0.0).to_csv(pub / "sample_submission.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Predict the airway `pressure` at every time step of each breath.",
            "Submissions are scored on the mean absolute error between the predicted and actual pressures, "
            "only over the inspiratory phase: only rows where valve_open == 0 are scored. "
            "Rows where valve_open is 1 are not scored.",
            ["train.csv", "test.csv", "sample_submission.csv"],
        )
    )
    scored = test["pressure"].where(test["valve_open"] == 0)  # NaN: a row the grader does not score
    answers = pd.DataFrame({"id": test["id"], "pressure": scored.astype(str)})
    return finish(folder, answers, "sample_submission.csv", task_type="Reg", metric="masked_mae", lower=True)


# ---- what cannot be supported: refused in one line naming what was found -------------------------------------
@fixture("unsupported layout", "train and test only as HDF5 files: refused, naming them")
def hdf5_only(folder, rng):
    pub = folder / "public"
    train, test, answers = tabular(rng)
    (pub / "train.h5").write_bytes(b"\x89HDF\r\n\x1a\n" + train.to_csv(index=False).encode())
    (pub / "test.h5").write_bytes(b"\x89HDF\r\n\x1a\n" + test.to_csv(index=False).encode())
    sample_of(test, "id", "target").to_csv(pub / "sample_submission.csv", index=False)
    (pub / "description.md").write_text(
        description("Predict `target` for each row.", ACCURACY, ["train.h5", "test.h5", "sample_submission.csv"])
    )
    return {**finish(folder, answers, "sample_submission.csv"), "supported": False, "refusal": "layout"}


# ---- a lookup through a chain: weather by (site, hour), the site the building's ------------------------------------
ENERGY_NAMES = {  # role -> file name, and each table's column names (the defaults of a building-energy layout)
    "train": "train.csv",
    "test": "test.csv",
    "buildings": "building_metadata.csv",
    "weather_train": "weather_train.csv",
    "weather_test": "weather_test.csv",
    "sample": "sample_submission.csv",
    "building": "building_id",
    "meter": "meter",
    "time": "timestamp",
    "reading": "meter_reading",
    "row": "row_id",
    "site": "site_id",
    "weather_site": "site_id",
    "weather_time": "timestamp",
    "temperature": "air_temperature",
}


def energy_tables(rng, names=None, buildings: int = 40, hours: int = 360) -> dict[str, pd.DataFrame]:
    """A building-energy layout (table role -> frame, named by `names`, ENERGY_NAMES's keys): hourly meter readings
    of buildings, the test period the hours after the train's; a building table (building -> site, use, area); the
    weather one row per (site, hour), one table for the train period and one for the test's. The reading rests on
    the hour's temperature at the building's site (which wanders from hour to hour, so a site's mean says little),
    and on the area. `answers` holds the test readings."""
    n = {**ENERGY_NAMES, **(names or {})}
    sites = 5
    meta = pd.DataFrame(
        {
            n["site"]: rng.integers(0, sites, buildings),
            n["building"]: np.arange(buildings),
            "primary_use": rng.choice(["office", "school", "lodging"], buildings),
            "square_feet": rng.integers(2_000, 80_000, buildings),
        }
    )
    stamps = pd.date_range("2016-01-01", periods=2 * hours, freq="h").strftime("%Y-%m-%d %H:%M:%S")
    weather = pd.DataFrame(
        [(s, t) for s in range(sites) for t in stamps], columns=[n["weather_site"], n["weather_time"]]
    )
    walk = np.cumsum(rng.normal(scale=1.5, size=(sites, 2 * hours)), axis=1) + rng.normal(10, 5, (sites, 1))
    weather[n["temperature"]] = walk.ravel().round(1)
    weather["dew_temperature"] = (weather[n["temperature"]] - rng.gamma(2, 2, len(weather))).round(1)
    weather["wind_speed"] = rng.gamma(2, 1.5, len(weather)).round(1)
    weather = weather.sample(frac=0.98, random_state=int(rng.integers(1 << 30))).sort_index()  # a few hours missing
    rows = pd.DataFrame(
        [(b, m, t) for b in range(buildings) for m in (0, 1) for t in stamps],
        columns=[n["building"], n["meter"], n["time"]],
    )
    rows = rows.sample(frac=0.35, random_state=int(rng.integers(1 << 30))).sort_index().reset_index(drop=True)
    temp = dict(zip(zip(weather[n["weather_site"]], weather[n["weather_time"]]), weather[n["temperature"]]))
    site = meta.set_index(n["building"])[n["site"]]
    hot = np.array([temp.get((s, t), np.nan) for s, t in zip(site[rows[n["building"]]], rows[n["time"]])])
    area = meta.set_index(n["building"])["square_feet"][rows[n["building"]]].to_numpy()
    reading = (
        np.abs(np.nan_to_num(hot, nan=10) - 12) * 6
        + area / 2_000 * (1 + rows[n["meter"]])
        + rng.normal(0, 2, len(rows))
    )
    rows[n["reading"]] = reading.round(3)
    late = rows[n["time"]] >= stamps[hours]
    train, test = rows[~late].reset_index(drop=True), rows[late].reset_index(drop=True)
    test.insert(0, n["row"], np.arange(len(test)))
    in_train = weather[n["weather_time"]] < stamps[hours]
    return {
        "train": train,
        "test": test.drop(columns=n["reading"]),
        "buildings": meta,
        "weather_train": weather[in_train].reset_index(drop=True),
        "weather_test": weather[~in_train].reset_index(drop=True),
        "sample": pd.DataFrame({n["row"]: test[n["row"]], n["reading"]: 0.0}),
        "answers": test[[n["row"], n["reading"]]],
    }


def energy_layout(folder: Path, rng, names=None, **sizes) -> dict[str, pd.DataFrame]:
    """energy_tables written under folder/public (names[role] its file name) with a description; returns them."""
    n = {**ENERGY_NAMES, **(names or {})}
    tables = energy_tables(rng, names, **sizes)
    pub = folder / "public"
    pub.mkdir(parents=True, exist_ok=True)
    for role, frame in tables.items():
        if role != "answers":
            frame.to_csv(pub / n[role], index=False)
    files = [n[r] for r in tables if r != "answers"]
    (pub / "description.md").write_text(description(f"Predict `{n['reading']}` for each test row.", RMSE, files))
    return tables
