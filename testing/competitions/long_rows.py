"""Fixture competitions whose sample submission has one row per (test sample, target): the id is the sample's key
and the target's name joined by "_", beside one value column. Kaggle does this for scans scored per finding, subjects
scored per measure, handwritten characters scored per component, and sequences scored per position (`<id>_<position>`,
the targets number lists in JSON records). Each has a learnable signal; the answers are
long, as the grader reads them.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from testing.competitions import fixture
from testing.competitions.layouts import description, finish

RMSE = "Submissions are scored on the root mean squared error (RMSE) between predicted and true values."
LOG_LOSS = (
    "Submissions are evaluated on the log loss of the predicted probability of each finding, averaged over the "
    "rows of the submission."
)
AUC = "Submissions are evaluated on the area under the ROC curve between the predicted probability and the label."


def long_rows(keys, frame: pd.DataFrame, id_col: str, value: str) -> pd.DataFrame:
    """One row per key and column of `frame` (in that order), ids <key>_<column>."""
    return pd.DataFrame({id_col: [f"{k}_{c}" for k in keys for c in frame.columns], value: frame.to_numpy().ravel()})


@fixture(
    "long submissions",
    "no test table: the test subjects are only in the sample's <Id>_<measure> rows; some train measures missing",
    fast=True,
)
def measures_per_subject(folder, rng):
    pub = folder / "public"
    n, n_test = 400, 100
    ids = rng.choice(np.arange(10000, 30000), n + n_test, replace=False)
    loading = pd.DataFrame(rng.normal(size=(n + n_test, 8)).round(4), columns=[f"IC_{i:02d}" for i in range(1, 9)])
    x = loading.to_numpy()
    targets = pd.DataFrame(
        {
            "age": (50 + 8 * x[:, 0] - 5 * x[:, 1] + rng.normal(scale=3, size=n + n_test)).round(2),
            "domain1_var1": (50 + 6 * x[:, 2] + 4 * x[:, 3] * x[:, 0] + rng.normal(scale=4, size=n + n_test)).round(2),
            "domain2_var1": (45 + 7 * x[:, 4] - 3 * x[:, 5] + rng.normal(scale=4, size=n + n_test)).round(2),
        }
    )
    loading.insert(0, "Id", ids)
    loading.sample(frac=1, random_state=1).to_csv(pub / "loading.csv", index=False)
    targets.insert(0, "Id", ids)
    train = targets.iloc[:n].copy()
    for c in ("domain1_var1", "domain2_var1"):  # some train subjects lack an assessment
        train.loc[rng.random(n) < 0.08, c] = np.nan
    train.to_csv(pub / "train_scores.csv", index=False)
    test = targets.iloc[n:]
    long_rows(test["Id"], test.drop(columns="Id") * 0, "Id", "Predicted").to_csv(
        pub / "sample_submission.csv", index=False
    )
    (pub / "description.md").write_text(
        description(
            "Predict each test subject's age and two assessment scores from the subject's loading features. "
            "Each row of the submission is one subject and one measure: the Id is the subject's Id, an underscore "
            "and the measure's name.",
            RMSE,
            [
                "train_scores.csv: the measures of the train subjects",
                "loading.csv: every subject's features",
                "sample_submission.csv",
            ],
        )
    )
    answers = long_rows(test["Id"], test.drop(columns="Id"), "Id", "Predicted")
    return finish(folder, answers, "sample_submission.csv", task_type="Reg", metric="rmse", lower=True)


@fixture("long submissions", "train.csv and the sample both one row per <scan>_<finding>; scans as PNGs in folders")
def findings_per_scan(folder, rng):
    from PIL import Image

    pub = folder / "public"
    findings = ["bleed", "fracture", "swelling", "any"]
    n, n_test, size = 320, 80, 24
    keys = [f"ID_{v:07x}" for v in rng.choice(16**7, n + n_test, replace=False)]
    has = rng.random((n + n_test, 3)) < [0.3, 0.25, 0.2]
    for split, rows in (("train", range(n)), ("test", range(n, n + n_test))):
        (pub / f"stage_1_{split}_images").mkdir(parents=True)
        for i in rows:
            img = rng.normal(0.4, 0.1, (size, size))
            if has[i, 0]:
                img[: size // 3] += 0.35  # a bright band on top
            if has[i, 1]:
                img[:, : size // 4] += 0.35  # a bright band on the left
            if has[i, 2]:
                img[size // 3 : 2 * size // 3, size // 3 : 2 * size // 3] += 0.4  # a bright centre
            grey = (np.clip(img, 0, 1) * 255).astype(np.uint8)
            Image.fromarray(grey).save(pub / f"stage_1_{split}_images" / f"{keys[i]}.png")
    labels = pd.DataFrame(np.c_[has, has.any(axis=1)].astype(int), columns=findings)
    train = long_rows(keys[:n], labels.iloc[:n], "ID", "Label")
    train.sample(frac=1, random_state=0).to_csv(pub / "stage_1_train.csv", index=False)
    answers = long_rows(keys[n:], labels.iloc[n:], "ID", "Label")
    answers.assign(Label=0.5).to_csv(pub / "stage_1_sample_submission.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Find which of three kinds of lesion each scan shows, and whether it shows any. Each row of "
            "stage_1_train.csv and of the submission is one scan and one finding: ID_<scan>_<finding>.",
            LOG_LOSS,
            [
                "stage_1_train.csv",
                "stage_1_train_images/<scan>.png",
                "stage_1_test_images/<scan>.png",
                "stage_1_sample_submission.csv",
            ],
        )
    )
    return finish(
        folder,
        answers,
        "stage_1_sample_submission.csv",
        task_type="BinCls",
        metric="log_loss",
        lower=True,
        inputs=("image",),
    )


@fixture("long submissions", "test.csv long too: one row per <sample>_<component>, the sample's inputs repeated")
def components_per_sample(folder, rng):
    pub = folder / "public"
    n, n_test = 400, 100
    parts = ["part_a", "part_b", "part_c"]
    x = rng.normal(size=(n + n_test, 4)).round(4)
    colour = rng.choice(["red", "green", "blue"], n + n_test)
    noise = rng.normal(scale=0.5, size=(n + n_test, 3))
    labels = pd.DataFrame(
        {
            "part_a": (x[:, 0] + x[:, 1] + noise[:, 0] > 0).astype(int),
            "part_b": (x[:, 2] - (colour == "red") + noise[:, 1] > -0.3).astype(int),
            "part_c": (x[:, 3] * x[:, 0] + noise[:, 2] > 0).astype(int),
        }
    )
    keys = [f"Train_{i}" for i in range(n)] + [f"Test_{i}" for i in range(n_test)]
    inputs = pd.DataFrame(
        {"sample_id": keys, "x1": x[:, 0], "x2": x[:, 1], "x3": x[:, 2], "x4": x[:, 3], "colour": colour}
    )
    pd.concat([inputs.iloc[:n], labels.iloc[:n]], axis=1).to_csv(pub / "train.csv", index=False)
    test = inputs.iloc[n:].loc[np.repeat(np.arange(n, n + n_test), 3)].reset_index(drop=True)
    test.insert(0, "component", parts * n_test)
    test.insert(0, "row_id", test["sample_id"] + "_" + test["component"])
    test.to_csv(pub / "test.csv", index=False)
    answers = long_rows(keys[n:], labels.iloc[n:], "row_id", "target")
    answers.assign(target=0).to_csv(pub / "sample_submission.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Predict three binary components of each sample. test.csv and the submission have one row per sample "
            "and component; row_id is <sample_id>_<component>.",
            AUC,
            ["train.csv: one row per sample, its three components", "test.csv", "sample_submission.csv"],
        )
    )
    return finish(folder, answers, "sample_submission.csv", task_type="BinCls", metric="roc_auc")


def _fold(rng: np.random.Generator, length: int) -> tuple[str, str]:
    """A random secondary structure in brackets (stems of 3-5 pairs closing loops of 3-6) and each position's loop
    type: S paired, H in a hairpin's loop, E outside."""
    struct, p = ["."] * length, 0
    while p < length - 12:
        stem, loop = int(rng.integers(3, 6)), int(rng.integers(3, 7))
        if rng.random() < 0.3 and p + 2 * stem + loop <= length:
            for k in range(stem):
                struct[p + k], struct[p + 2 * stem + loop - 1 - k] = "(", ")"
            p += 2 * stem + loop
        else:
            p += 1
    depth, loops = 0, []
    for c in struct:
        depth += c == "("
        loops.append("S" if c in "()" else "H" if depth > 0 else "E")
        depth -= c == ")"
    return "".join(struct), "".join(loops)


@fixture(
    "long submissions",
    "JSON-lines records of a sequence, its structure and loop types; per-base target lists for the first 45 of 60 "
    "positions; the sample one row per <id>_<position>, MCRMSE",
)
def positions_per_sequence(folder, rng):
    pub, length, scored = folder / "public", 60, 45
    base = {"A": 0.9, "C": 0.3, "G": 0.5, "U": 0.7}
    answers = []
    for split, n in (("train", 240), ("test", 80)):
        with open(pub / f"{split}.json", "w") as f:
            for i in range(n):
                seq = "".join(rng.choice(list("ACGU"), length))
                struct, loops = _fold(rng, length)
                pos = np.arange(length)
                paired = np.array([c != "." for c in struct])
                after_g = np.array([i > 0 and seq[i - 1] == "G" for i in pos])
                reactivity = (
                    np.array([base[b] for b in seq]) * np.where(paired, 0.25, 1.0)
                    + 0.25 * after_g
                    + 0.3 * np.exp(-pos / 10)
                    + rng.normal(0, 0.08, length)
                )
                hairpin = np.array([c == "H" for c in loops])
                degradation = 0.6 * reactivity + 0.3 * hairpin + rng.normal(0, 0.08, length)
                rid = f"id_{rng.integers(0, 16**9):09x}"
                rec = {"index": i, "id": rid, "sequence": seq, "structure": struct, "predicted_loop_type": loops}
                rec |= {"seq_length": length, "seq_scored": scored}
                targets = {"reactivity": reactivity[:scored].round(4), "deg_Mg_pH10": degradation[:scored].round(4)}
                if split == "train":
                    rec |= {k: v.tolist() for k, v in targets.items()}
                    rec["signal_to_noise"] = round(float(rng.uniform(1, 10)), 3)  # train-only
                else:
                    answers += [
                        (f"{rid}_{p}", targets["reactivity"][p], targets["deg_Mg_pH10"][p]) for p in range(scored)
                    ]
                f.write(json.dumps(rec) + "\n")
    answers = pd.DataFrame(answers, columns=["id_seqpos", "reactivity", "deg_Mg_pH10"])
    test = pd.read_json(pub / "test.json", lines=True)
    ids = [f"{rid}_{p}" for rid in test["id"] for p in range(length)]
    pd.DataFrame({"id_seqpos": ids, "reactivity": 0.0, "deg_Mg_pH10": 0.0}).to_csv(
        pub / "sample_submission.csv", index=False
    )
    (pub / "description.md").write_text(
        description(
            "Predict the reactivity and the degradation at each base of each sequence.",
            "Submissions are scored using MCRMSE, mean columnwise root mean squared error, over the scored "
            "positions (the first seq_scored of each sequence).",
            ["train.json, test.json: one record per line", "sample_submission.csv: one row per id_seqpos"],
        )
    )
    return finish(folder, answers, "sample_submission.csv", task_type="MultiTgtReg", metric="mcrmse", lower=True)


@fixture(
    "long submissions",
    "characters as pixel tables in parquet parts (image_id + one column per pixel of a 24 x 36 picture), three "
    "components per character; test.csv and the sample one row per <image>_<component>",
)
def pixel_parts_components(folder, rng):
    pub = folder / "public"
    height, width = 24, 36
    n, n_test = 360, 90
    sizes = {"root": 6, "vowel": 4, "consonant": 3}
    labels = pd.DataFrame({k: rng.integers(0, m, n + n_test) for k, m in sizes.items()})
    pictures = np.full((n + n_test, height, width), 250, np.uint8)
    for i, (r, v, c) in enumerate(labels.to_numpy()):
        x0 = int(rng.integers(0, 6))
        pictures[i, 4 + 2 * r : 7 + 2 * r, x0 : x0 + 18] = 30  # the root: a bar whose height says which
        pictures[i, 2:20, 24 + 2 * v : 26 + 2 * v] = 60  # the vowel: a column whose place says which
        pictures[i, 20 + c : 22 + c, 26:34] = 90 if c else 250  # the consonant: a low bar or none
    pictures = np.clip(pictures + rng.normal(0, 25, pictures.shape), 0, 255).astype(np.uint8)
    ids = [f"Train_{i}" for i in range(n)] + [f"Test_{i}" for i in range(n_test)]
    flat = pd.DataFrame(pictures.reshape(n + n_test, -1), columns=[str(j) for j in range(height * width)])
    flat.insert(0, "image_id", ids)
    for part, rows in enumerate(np.array_split(np.arange(n), 2)):
        flat.iloc[rows].to_parquet(pub / f"train_image_data_{part}.parquet", index=False)
    flat.iloc[n:].to_parquet(pub / "test_image_data_0.parquet", index=False)
    names = {"root": "grapheme_root", "vowel": "vowel_diacritic", "consonant": "consonant_diacritic"}
    train = labels.iloc[:n].rename(columns=names)
    train.insert(0, "image_id", ids[:n])
    train["grapheme"] = train[list(names.values())].astype(str).agg("-".join, axis=1)  # train-only
    train.to_csv(pub / "train.csv", index=False)
    comps = list(names.values())
    test = pd.DataFrame(
        [(f"{i}_{c}", i, c) for i in ids[n:] for c in comps], columns=["row_id", "image_id", "component"]
    )
    test.to_csv(pub / "test.csv", index=False)
    answers = long_rows(ids[n:], labels.iloc[n:].rename(columns=names).reset_index(drop=True), "row_id", "target")
    answers.assign(target=0).to_csv(pub / "sample_submission.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Classify the three components of each handwritten character image.",
            "Submissions are evaluated on the accuracy of the predicted class of each component (row).",
            [
                "train.csv",
                "train_image_data_*.parquet, test_image_data_*.parquet: image_id, then one column per pixel",
                "test.csv",
                "sample_submission.csv",
            ],
        )
    )
    return finish(folder, answers, "sample_submission.csv", task_type="MultiCls", metric="accuracy", inputs=("image",))


def _quake_signal(rng: np.random.Generator, rows: int) -> pd.DataFrame:
    """A long signal and the time left to the next event: the events come every 3,000-9,000 rows, and the signal's
    spread grows as one nears (so a window's spread tells the time left)."""
    left, ttf = 0, np.empty(rows)
    while left < rows:
        cycle = int(rng.integers(3000, 9000))
        ttf[left : left + cycle] = np.linspace(cycle / 1000, 0.001, cycle)[: rows - left]
        left += cycle
    acoustic = rng.normal(size=rows) * (1 + 4 * np.exp(-ttf)) + 4
    return pd.DataFrame({"acoustic_data": acoustic.round().astype(int), "time_to_failure": ttf.round(6)})


@fixture(
    "long signal",
    "train.csv is one long signal (a value and the time to the next event per row); each test sample is a segment "
    "of another such signal, one CSV per seg_id under test/, scored at its last row",
    fast=True,
)
def signal_cut_into_segments(folder, rng):
    pub = folder / "public"
    length, n_test = 400, 60
    _quake_signal(rng, 120_000).to_csv(pub / "train.csv", index=False)
    (pub / "test").mkdir()
    other = _quake_signal(rng, 200 * length)
    starts = np.sort(rng.choice(np.arange(0, len(other) - length, length), n_test, replace=False))
    ids = [f"seg_{v:06x}" for v in rng.choice(2**24, n_test, replace=False)]
    for seg, start in zip(ids, starts, strict=True):
        other.iloc[start : start + length][["acoustic_data"]].to_csv(pub / "test" / f"{seg}.csv", index=False)
    answers = pd.DataFrame(
        {"seg_id": ids, "time_to_failure": [other["time_to_failure"].iloc[s + length - 1] for s in starts]}
    )
    answers.assign(time_to_failure=0).to_csv(pub / "sample_submission.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Predict the time remaining before the next laboratory earthquake from a segment of acoustic data. "
            "train.csv is one continuous recording: acoustic_data and the time_to_failure at every row. Each file "
            "in test/ is a segment of other recordings; predict the time_to_failure at the end of each segment.",
            "Submissions are evaluated on the mean absolute error (MAE) between the predicted and the actual time "
            "remaining before the next event.",
            ["train.csv - the training signal", "test/ - the test segments, one per seg_id", "sample_submission.csv"],
        )
    )
    return finish(folder, answers, "sample_submission.csv", task_type="Reg", metric="mae", lower=True)
