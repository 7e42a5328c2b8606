"""Fixture family "targets": what is predicted and how it is scored.

Tabular competitions whose targets take the shapes Kaggle uses (label sets as strings, top-k rankings, ordinal
ratings, several correlated regression targets, one-hot outcome columns, fractions binarised by the metric, extra
train-only columns) and whose evaluation texts name the metrics of
tools/metrics.py; and the tasks agentk refuses (image-to-image, segmentation, object detection, text generation, span
extraction, audio, per-position sequence outputs), each with the evidence a real competition of that kind carries.
Every dataset is synthetic: a few numeric features and a signal a small model learns in seconds.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd

from testing.competitions import fixture

FAMILY = "targets"
N_TRAIN, N_TEST = 600, 200


def _description(title: str, task: str, evaluation: str, files: str) -> str:
    return f"# {title}\n\n## Description\n\n{task}\n\n## Evaluation\n\n{evaluation}\n\n## Data\n\n{files}\n"


def _features(rng: np.random.Generator, n: int, k: int = 6) -> pd.DataFrame:
    x = rng.normal(size=(n, k)).round(4)
    return pd.DataFrame(x, columns=[f"f{j}" for j in range(k)])


def _tabular(
    folder: Path,
    title: str,
    task: str,
    evaluation: str,
    train: pd.DataFrame,
    test: pd.DataFrame,
    sample: pd.DataFrame,
    answers: pd.DataFrame,
    meta: dict,
    fields: str = "",
) -> dict:
    """Write a train/test/sample competition and its hidden answers; returns meta with the usual keys. `fields`:
    the data section's description of columns, after its list of files."""
    pub = folder / "public"
    files = (
        "- train.csv - the training set\n- test.csv - the test set (no targets)\n"
        "- sample_submission.csv - a sample submission in the correct format" + (f"\n\n{fields}" if fields else "")
    )
    (pub / "description.md").write_text(_description(title, task, evaluation, files))
    train.to_csv(pub / "train.csv", index=False)
    test.to_csv(pub / "test.csv", index=False)
    sample.to_csv(pub / "sample_submission.csv", index=False)
    answers.to_csv(folder / "private" / "answers.csv", index=False)
    return {
        "modalities": {"inputs": ["tabular"], "targets": ["tabular"]},
        "supported": True,
        "n_train": len(train),
        "n_test": len(test),
        "answers": "private/answers.csv",
        "sample_submission": "public/sample_submission.csv",
        **meta,
    }


def _split(frame: pd.DataFrame, targets: list[str]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(train with targets, test without, the test rows' answers)."""
    train, test = frame.iloc[:N_TRAIN].reset_index(drop=True), frame.iloc[N_TRAIN:].reset_index(drop=True)
    return train, test.drop(columns=targets), test[["id", *targets]]


# ----------------------------------------------------------------------------- supported target shapes
@fixture(FAMILY, "multi-label: space-separated label ids in one column, F2 averaged over samples", fast=True)
def multilabel_label_ids(folder: Path, rng: np.random.Generator) -> dict:
    n = N_TRAIN + N_TEST
    x = _features(rng, n)
    w = rng.normal(size=(x.shape[1], 8))
    scores = x.to_numpy() @ w + rng.normal(scale=0.7, size=(n, 8))
    labels = [
        " ".join(str(j * 3 + 1) for j in np.flatnonzero(row > 1.0)) or str(int(row.argmax()) * 3 + 1) for row in scores
    ]
    frame = pd.concat([pd.DataFrame({"id": [f"r{i:04d}" for i in range(n)]}), x], axis=1)
    frame["attribute_ids"] = labels
    train, test, answers = _split(frame, ["attribute_ids"])
    sample = pd.DataFrame({"id": test["id"], "attribute_ids": "1 4"})
    return _tabular(
        folder,
        "Attribute tagging",
        "Each row has one or more attributes. Predict all attribute ids of each test row, separated by spaces.",
        # as real tagging competitions word it: "mean F2", the per-row mean left for the label sets to say
        "Submissions will be evaluated based on their mean F2 score. The F score, commonly used in information "
        "retrieval, measures accuracy using the precision p and recall r, with beta = 2 weighing recall higher.",
        train,
        test,
        sample,
        answers,
        {"task_type": "MultiLabel", "metric": "f2_samples", "lower_is_better": False},
    )


@fixture(FAMILY, "multi-label: label words in one column, sample-based F1", fast=True)
def multilabel_label_words(folder: Path, rng: np.random.Generator) -> dict:
    n = N_TRAIN + N_TEST
    x = _features(rng, n)
    names = ["haze", "cloudy", "road", "water", "farm", "forest"]
    w = rng.normal(size=(x.shape[1], len(names)))
    scores = x.to_numpy() @ w + rng.normal(scale=0.6, size=(n, len(names)))
    tags = [" ".join(names[j] for j in np.flatnonzero(row > 0.8)) or names[int(row.argmax())] for row in scores]
    frame = pd.concat([pd.DataFrame({"image_name": [f"img_{i}" for i in range(n)]}), x], axis=1)
    frame["tags"] = tags
    train, test = frame.iloc[:N_TRAIN], frame.iloc[N_TRAIN:].drop(columns="tags")
    answers = frame.iloc[N_TRAIN:][["image_name", "tags"]]
    sample = pd.DataFrame({"image_name": test["image_name"], "tags": "haze road"})
    return _tabular(
        folder,
        "Scene tags",
        "Predict the tags of each scene, as a space-delimited list.",
        "The metric is the sample-based F1 score: the F1 of each row's predicted tags, averaged over rows.",
        train,
        test,
        sample,
        answers,
        {"task_type": "MultiLabel", "metric": "f1_samples", "lower_is_better": False},
    )


@fixture(FAMILY, "top-5 ranked labels in one column, MAP@5, with a 'new' class for unseen individuals", fast=True)
def top5_ranking_new_class(folder: Path, rng: np.random.Generator) -> dict:
    n = N_TRAIN + N_TEST
    x = _features(rng, n)
    centres = rng.normal(scale=1.5, size=(12, x.shape[1]))
    dist = ((x.to_numpy()[:, None, :] - centres[None]) ** 2).sum(axis=2)
    label = np.array([f"w_{k:02d}" for k in dist.argmin(axis=1)], dtype=object)
    label[dist.min(axis=1) > np.quantile(dist.min(axis=1), 0.8)] = "new_whale"  # far from every known one
    frame = pd.concat([pd.DataFrame({"Image": [f"{i:05x}.jpg" for i in range(n)]}), x], axis=1)
    frame["Id"] = label
    train, test = frame.iloc[:N_TRAIN], frame.iloc[N_TRAIN:].drop(columns="Id")
    answers = frame.iloc[N_TRAIN:][["Image", "Id"]]
    sample = pd.DataFrame({"Image": test["Image"], "Id": "new_whale w_00 w_01 w_02 w_03"})
    return _tabular(
        folder,
        "Individual identification",
        "Identify the individual of each test row; individuals not seen in training are new_whale. For each row, "
        "predict up to 5 labels, most likely first, separated by spaces.",
        "Submissions are evaluated according to the Mean Average Precision @ 5 (MAP@5).",
        train,
        test,
        sample,
        answers,
        {"task_type": "MultiCls", "metric": "map_at_5", "lower_is_better": False},
    )


@fixture(FAMILY, "ordinal rating 0-4 scored by quadratic weighted kappa", fast=True)
def ordinal_qwk(folder: Path, rng: np.random.Generator) -> dict:
    n = N_TRAIN + N_TEST
    x = _features(rng, n)
    latent = x.to_numpy() @ rng.normal(size=x.shape[1]) + rng.normal(scale=0.6, size=n)
    rating = np.digitize(latent, np.quantile(latent, [0.3, 0.55, 0.75, 0.9]))
    frame = pd.concat([pd.DataFrame({"id": np.arange(n)}), x], axis=1)
    frame["rating"] = rating
    train, test, answers = _split(frame, ["rating"])
    sample = pd.DataFrame({"id": test["id"], "rating": 0})
    return _tabular(
        folder,
        "Severity rating",
        "Predict the severity rating (0 = none to 4 = severe) of each case.",
        "Submissions are scored based on the quadratic weighted kappa, which measures the agreement between two "
        "ratings.",
        train,
        test,
        sample,
        answers,
        {"task_type": "MultiCls", "metric": "qwk", "lower_is_better": False},
    )


@fixture(FAMILY, "several regression targets in [0, 1] scored by mean column-wise Spearman", fast=True)
def multi_target_spearman(folder: Path, rng: np.random.Generator) -> dict:
    n = N_TRAIN + N_TEST
    x = _features(rng, n)
    names = ["question_clarity", "answer_helpful", "answer_relevance", "question_interest"]
    z = x.to_numpy() @ rng.normal(size=(x.shape[1], len(names))) + rng.normal(scale=0.8, size=(n, len(names)))
    y = np.round(1 / (1 + np.exp(-z)) * 6) / 6  # raters' averages: a few distinct values
    frame = pd.concat([pd.DataFrame({"qa_id": np.arange(n)}), x, pd.DataFrame(y.round(6), columns=names)], axis=1)
    train, test = frame.iloc[:N_TRAIN], frame.iloc[N_TRAIN:].drop(columns=names)
    answers = frame.iloc[N_TRAIN:][["qa_id", *names]]
    sample = pd.DataFrame({"qa_id": test["qa_id"], **{c: 0.5 for c in names}})
    return _tabular(
        folder,
        "Answer quality",
        "Predict the four quality ratings of each question-answer pair.",
        "Submissions are evaluated on the mean column-wise Spearman's correlation coefficient: the Spearman's rank "
        "correlation is computed for each target column, and the mean of these values is the score.",
        train,
        test,
        sample,
        answers,
        {"task_type": "MultiTgtReg", "metric": "mean_spearman", "lower_is_better": False},
    )


@fixture(FAMILY, "one regression target scored by Pearson correlation", fast=True)
def pearson_regression(folder: Path, rng: np.random.Generator) -> dict:
    n = N_TRAIN + N_TEST
    x = _features(rng, n)
    frame = pd.concat([pd.DataFrame({"row_id": np.arange(n)}), x], axis=1)
    frame["target"] = (x.to_numpy() @ rng.normal(size=x.shape[1]) + rng.normal(scale=1.0, size=n)).round(5)
    train, test = frame.iloc[:N_TRAIN], frame.iloc[N_TRAIN:].drop(columns="target")
    answers = frame.iloc[N_TRAIN:][["row_id", "target"]]
    sample = pd.DataFrame({"row_id": test["row_id"], "target": 0.0})
    return _tabular(
        folder,
        "Return prediction",
        "Predict the target of each row.",
        "Submissions are evaluated on the Pearson correlation coefficient between the predicted and the actual target.",
        train,
        test,
        sample,
        answers,
        {"task_type": "Reg", "metric": "pearson", "lower_is_better": False},
    )


@fixture(FAMILY, "train-only target-like and leak columns beside the label; only the label is submitted", fast=True)
def extra_train_columns(folder: Path, rng: np.random.Generator) -> dict:
    n = N_TRAIN + N_TEST
    x = _features(rng, n)
    p = 1 / (1 + np.exp(-(x.to_numpy() @ rng.normal(size=x.shape[1]))))
    target = (rng.random(n) < p).astype(int)
    frame = pd.concat([pd.DataFrame({"image_name": [f"ISIC_{i:07d}" for i in range(n)]}), x], axis=1)
    frame["diagnosis"] = np.where(target == 1, "melanoma", rng.choice(["nevus", "unknown", "keratosis"], n))  # leak
    frame["benign_malignant"] = np.where(target == 1, "malignant", "benign")  # leak: the label in words
    frame["lesion_size_followup"] = (target * 2 + rng.normal(size=n)).round(3)  # measured later: target-like
    frame["target"] = target
    extra = ["diagnosis", "benign_malignant", "lesion_size_followup", "target"]
    train, test = frame.iloc[:N_TRAIN], frame.iloc[N_TRAIN:].drop(columns=extra)
    answers = frame.iloc[N_TRAIN:][["image_name", "target"]]
    sample = pd.DataFrame({"image_name": test["image_name"], "target": 0})
    return _tabular(
        folder,
        "Lesion classification",
        "Predict the probability that each lesion is malignant. The training set also holds the diagnosis and "
        "follow-up measurements, which are not available for the test set.",
        "Submissions are evaluated on area under the ROC curve between the predicted probability and the observed "
        "target.",
        train,
        test,
        sample,
        answers,
        {"task_type": "BinCls", "metric": "roc_auc", "lower_is_better": False},
    )


@fixture(FAMILY, "continuous toxicity fraction in train, scored as AUC after binarising at 0.5", fast=True)
def fraction_binarised_auc(folder: Path, rng: np.random.Generator) -> dict:
    n = N_TRAIN + N_TEST
    x = _features(rng, n)
    z = x.to_numpy() @ rng.normal(size=x.shape[1]) + rng.normal(scale=0.8, size=n)
    raters = 10
    fraction = rng.binomial(raters, 1 / (1 + np.exp(-(z - 1.0)))) / raters  # share of raters calling it toxic
    frame = pd.concat([pd.DataFrame({"id": np.arange(n)}), x], axis=1)
    frame["target"] = fraction
    train, test = frame.iloc[:N_TRAIN], frame.iloc[N_TRAIN:].drop(columns="target")
    answers = pd.DataFrame({"id": test["id"], "target": (fraction[N_TRAIN:] >= 0.5).astype(int)})
    sample = pd.DataFrame({"id": test["id"], "target": 0.5})
    return _tabular(
        folder,
        "Toxicity",
        "The target is the fraction of raters who found the comment toxic. Predict the probability that a comment "
        "is toxic.",
        "Submissions are evaluated on the ROC AUC, where comments with a target of 0.5 or more are the positive class.",
        train,
        test,
        sample,
        answers,
        {"task_type": "BinCls", "metric": "roc_auc", "lower_is_better": False},
    )


@fixture(FAMILY, "three mutually exclusive outcomes as one-hot columns (A wins, B wins, tie), log loss", fast=True)
def exclusive_outcomes(folder: Path, rng: np.random.Generator) -> dict:
    n = N_TRAIN + N_TEST
    x = _features(rng, n)
    logits = x.to_numpy() @ rng.normal(size=(x.shape[1], 3))
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    outcome = np.array([rng.choice(3, p=row) for row in p])
    cols = ["winner_model_a", "winner_model_b", "winner_tie"]
    onehot = pd.DataFrame(np.eye(3, dtype=int)[outcome], columns=cols)
    frame = pd.concat([pd.DataFrame({"id": np.arange(n) + 1000}), x, onehot], axis=1)
    train, test, answers = _split(frame, cols)
    sample = pd.DataFrame({"id": test["id"], **{c: 1 / 3 for c in cols}})
    return _tabular(
        folder,
        "Preference",
        "Predict the probability of each outcome of the contest: model A wins, model B wins, or a tie.",
        "Submissions are evaluated on the log loss between the predicted probabilities and the ground truth "
        "values. For each id, predict a probability for each of the three outcomes.",
        train,
        test,
        sample,
        answers,
        {"task_type": "MultiCls", "metric": "multi_log_loss", "lower_is_better": True},
    )


@fixture(FAMILY, "binary labels scored by F2 (recall weighs more)", fast=True)
def binary_f2(folder: Path, rng: np.random.Generator) -> dict:
    n = N_TRAIN + N_TEST
    x = _features(rng, n)
    p = 1 / (1 + np.exp(-(x.to_numpy() @ rng.normal(size=x.shape[1]) - 1.0)))
    frame = pd.concat([pd.DataFrame({"id": np.arange(n)}), x], axis=1)
    frame["defect"] = (rng.random(n) < p).astype(int)
    train, test, answers = _split(frame, ["defect"])
    sample = pd.DataFrame({"id": test["id"], "defect": 0})
    return _tabular(
        folder,
        "Defects",
        "Predict whether each part is defective (1) or not (0).",
        "Submissions are evaluated on the F-beta score with beta = 2, which weighs recall higher than precision.",
        train,
        test,
        sample,
        answers,
        {"task_type": "BinCls", "metric": "f2", "lower_is_better": False},
    )


@fixture(FAMILY, "four skewed classes (about 60/25/10/5 %) submitted as one label, macro F1", fast=True)
def multiclass_macro_f1(folder: Path, rng: np.random.Generator) -> dict:
    n = N_TRAIN + N_TEST
    x = _features(rng, n)
    f = x.to_numpy()
    logits = np.column_stack([np.zeros(n), f[:, 0] - 1.0, f[:, 1] + 0.5 * f[:, 0] - 2.0, f[:, 2] - f[:, 3] - 2.8])
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    frame = pd.concat([pd.DataFrame({"id": np.arange(n)}), x], axis=1)
    frame["level"] = 1 + (rng.random(n)[:, None] > p.cumsum(axis=1)).sum(axis=1)
    train, test, answers = _split(frame, ["level"])
    sample = pd.DataFrame({"id": test["id"], "level": 1})
    return _tabular(
        folder,
        "Need levels",
        "Predict the need level (1 to 4) of each household.",
        "Submissions are evaluated on the macro F1 score: the F1 score of each level, averaged with equal weight.",
        train,
        test,
        sample,
        answers,
        {"task_type": "MultiCls", "metric": "f1_macro", "lower_is_better": False},
    )


@fixture(FAMILY, "multi-label: label ids of ever rarer labels (35 % to 5 % of rows) in one column, macro F1", fast=True)
def multilabel_macro_f1(folder: Path, rng: np.random.Generator) -> dict:
    n = N_TRAIN + N_TEST
    x = _features(rng, n)
    shares = np.linspace(0.35, 0.05, 8)
    scores = x.to_numpy() @ rng.normal(size=(x.shape[1], len(shares))) + rng.normal(scale=0.7, size=(n, 8))
    over = scores - [np.quantile(scores[:, j], 1 - share) for j, share in enumerate(shares)]  # on in its share
    labels = [" ".join(f"p{j}" for j in np.flatnonzero(row > 0)) or f"p{int(row.argmax())}" for row in over]
    frame = pd.concat([pd.DataFrame({"id": [f"s{i:04d}" for i in range(n)]}), x], axis=1)
    frame["Target"] = labels
    train, test, answers = _split(frame, ["Target"])
    sample = pd.DataFrame({"id": test["id"], "Target": "p0"})
    return _tabular(
        folder,
        "Protein places",
        "Each sample shows one or more of eight patterns, some rare. Predict all pattern labels of each test sample, "
        "separated by spaces.",
        "Submissions are evaluated on the macro F1 score: the F1 of each label, averaged with equal weight.",
        train,
        test,
        sample,
        answers,
        {"task_type": "MultiLabel", "metric": "f1_macro", "lower_is_better": False},
    )


@fixture(FAMILY, "rows per household member, only the heads scored (said in words), macro F1", fast=True)
def household_heads_macro_f1(folder: Path, rng: np.random.Generator) -> dict:
    rows, homes = [], (N_TRAIN + N_TEST) // 3
    for home in range(homes):
        x = rng.normal(size=4)
        level = 1 + int(np.digitize(x[0] + 0.6 * x[1] + rng.normal(scale=0.3), [-0.9, 0.0, 0.9]))
        for member in range(int(rng.integers(1, 6))):
            head = int(member == 0)
            # a head's inputs are the household's own; other members' are noisier, and their own labels
            # (which the grader never reads) half the time another level
            seen = x + rng.normal(scale=0.2 if head else 1.2, size=4)
            label = level if head or rng.random() < 0.5 else int(rng.integers(1, 5))
            rows.append(
                {
                    "Id": f"ID_{home:04d}{member}",
                    "home": f"h{home:04d}",
                    **{f"v{j}": round(float(v), 4) for j, v in enumerate(seen)},
                    "is_head": head,
                    "Target": label,
                }
            )
    frame = pd.DataFrame(rows)
    train = frame[frame["home"] < f"h{homes * 3 // 4:04d}"]
    test = frame[frame["home"] >= f"h{homes * 3 // 4:04d}"]
    answers = test[["Id"]].assign(Target=test["Target"].where(test["is_head"] == 1).astype("Int64"))
    return _tabular(
        folder,
        "Household need",
        "Predict the need level (1 to 4) of each person's household.",
        "Submissions are evaluated on the macro F1 score. Note that only the heads of household are used in "
        "scoring: every member is in the test set and the sample submission, but only heads of household are scored.",
        train,
        test.drop(columns="Target"),
        test[["Id"]].assign(Target=4),
        answers,
        {"task_type": "MultiCls", "metric": "f1_macro", "lower_is_better": False},
        fields="- Id: a unique identifier for each person\n- home: the household\n"
        "- is_head: indicates if this person is the head of the household\n- Target: the need level, 1 to 4",
    )


@fixture(FAMILY, "non-negative claim amounts scored by normalized Gini", fast=True)
def gini_claims(folder: Path, rng: np.random.Generator) -> dict:
    n = N_TRAIN + N_TEST
    x = _features(rng, n)
    z = x.to_numpy() @ rng.normal(size=x.shape[1])
    claimed = rng.random(n) < 1 / (1 + np.exp(-(z - 0.5)))  # riskier properties claim more often, and more
    claims = np.where(claimed, rng.gamma(2.0, np.exp(0.3 * z)), 0.0).round(2)
    frame = pd.concat([pd.DataFrame({"Id": np.arange(n) + 1}), x], axis=1)
    frame["Hazard"] = claims
    train, test, answers = _split(frame.rename(columns={"Id": "id"}), ["Hazard"])
    train, test, answers = (t.rename(columns={"id": "Id"}) for t in (train, test, answers))
    sample = pd.DataFrame({"Id": test["Id"], "Hazard": 0.0})
    return _tabular(
        folder,
        "Property hazard",
        "Predict the hazard (claim amount) of each property.",
        "Submissions are evaluated on the normalized Gini coefficient: predictions only need to order the "
        "properties by hazard.",
        train,
        test,
        sample,
        answers,
        {"task_type": "Reg", "metric": "gini", "lower_is_better": False},
    )


@fixture(FAMILY, "imbalanced binary label 0/1 submitted as class_0, class_1 probability columns, balanced log loss")
def balanced_log_loss_classes(folder: Path, rng: np.random.Generator) -> dict:
    n = N_TRAIN + N_TEST
    x = _features(rng, n)
    x["EJ"] = rng.choice(["A", "B"], n)
    z = x.drop(columns="EJ").to_numpy() @ rng.normal(size=6) + 0.8 * (x["EJ"] == "B")
    frame = pd.concat([pd.DataFrame({"Id": [f"{rng.integers(16**11, 16**12):012x}" for _ in range(n)]}), x], axis=1)
    frame["Class"] = (z + rng.normal(scale=0.8, size=n) > 1.6).astype(int)  # about one row in six
    train, test = frame.iloc[:N_TRAIN], frame.iloc[N_TRAIN:].drop(columns="Class")
    answers = frame.iloc[N_TRAIN:][["Id", "Class"]]
    sample = pd.DataFrame({"Id": test["Id"], "class_0": 0.5, "class_1": 0.5})
    return _tabular(
        folder,
        "Age-related conditions",
        "Predict the probability that a subject has any of the conditions (Class 1) or none (Class 0).",
        "Submissions are evaluated using a balanced logarithmic loss. The overall effect is such that each class "
        "is roughly equally important for the final score. Each observation is either of class 0 or of class 1. "
        "For each observation, you must submit a probability for each class.",
        train,
        test,
        sample,
        answers,
        {"task_type": "BinCls", "metric": "balanced_log_loss", "lower_is_better": True},
    )


@fixture(FAMILY, "three regression targets scored by MCRMSE", fast=True)
def multi_target_mcrmse(folder: Path, rng: np.random.Generator) -> dict:
    n = N_TRAIN + N_TEST
    x = _features(rng, n)
    names = ["cohesion", "syntax", "vocabulary"]
    y = 3 + x.to_numpy() @ rng.normal(scale=0.3, size=(x.shape[1], 3)) + rng.normal(scale=0.3, size=(n, 3))
    frame = pd.concat([pd.DataFrame({"text_id": [f"t{i:05d}" for i in range(n)]}), x], axis=1)
    frame[names] = (np.round(y * 2) / 2).clip(1, 5)
    train, test = frame.iloc[:N_TRAIN], frame.iloc[N_TRAIN:].drop(columns=names)
    answers = frame.iloc[N_TRAIN:][["text_id", *names]]
    sample = pd.DataFrame({"text_id": test["text_id"], **{c: 3.0 for c in names}})
    return _tabular(
        folder,
        "Essay scores",
        "Predict three analytic scores of each essay.",
        "Submissions are scored using MCRMSE, mean columnwise root mean squared error.",
        train,
        test,
        sample,
        answers,
        {"task_type": "MultiTgtReg", "metric": "mcrmse", "lower_is_better": True},
    )


@fixture(FAMILY, "three regression targets of different scales, mean of each target's log MAE", fast=True)
def grouped_log_mae_targets(folder: Path, rng: np.random.Generator) -> dict:
    n = N_TRAIN + N_TEST
    x = _features(rng, n)
    names = ["coupling_1J", "coupling_2J", "coupling_3J"]
    scale = np.array([50.0, 5.0, 0.5])
    y = (x.to_numpy() @ rng.normal(size=(x.shape[1], 3)) + rng.normal(scale=0.3, size=(n, 3))) * scale
    frame = pd.concat([pd.DataFrame({"id": np.arange(n)}), x, pd.DataFrame(y.round(4), columns=names)], axis=1)
    train, test, answers = _split(frame, names)
    sample = pd.DataFrame({"id": test["id"], **{c: 0.0 for c in names}})
    return _tabular(
        folder,
        "Coupling constants",
        "Predict the three coupling constants of each molecule.",
        "Submissions are evaluated on the log of the mean absolute error, calculated for each coupling type and "
        "then averaged across types, so that a 1% improvement counts the same for every type.",
        train,
        test,
        sample,
        answers,
        {"task_type": "MultiTgtReg", "metric": "grouped_log_mae", "lower_is_better": True},
    )


@fixture(FAMILY, "several binary label columns scored by prevalence-weighted AUC", fast=True)
def weighted_auc_labels(folder: Path, rng: np.random.Generator) -> dict:
    n = N_TRAIN + N_TEST
    x = _features(rng, n)
    names = ["label_a", "label_b", "label_c", "label_d"]
    z = x.to_numpy() @ rng.normal(size=(x.shape[1], 4)) - np.array([0.5, 1.0, 1.5, 0.0])
    y = (rng.random((n, 4)) < 1 / (1 + np.exp(-z))).astype(int)
    frame = pd.concat([pd.DataFrame({"id": np.arange(n)}), x, pd.DataFrame(y, columns=names)], axis=1)
    train, test, answers = _split(frame, names)
    sample = pd.DataFrame({"id": test["id"], **{c: 0.5 for c in names}})
    return _tabular(
        folder,
        "Findings",
        "Predict the probability of each of the four findings.",
        "Submissions are evaluated on the weighted average of the ROC AUCs of each label, each weighted by its "
        "number of positive cases.",
        train,
        test,
        sample,
        answers,
        {"task_type": "MultiTgtCls", "metric": "weighted_auc", "lower_is_better": False},
    )


@fixture(
    FAMILY, "toxicity fraction scored by the sub-group bias AUCs over identity columns named in the text", fast=True
)
def bias_auc_identities(folder: Path, rng: np.random.Generator) -> dict:
    n = N_TRAIN + N_TEST
    x = _features(rng, n)
    identities = ["male", "female", "christian", "muslim"]
    member = rng.random((n, len(identities))) < [0.2, 0.2, 0.15, 0.1]
    z = x.to_numpy() @ rng.normal(size=x.shape[1]) + member @ np.array([0.0, 0.0, 0.3, 0.8]) - 0.8
    fraction = rng.binomial(10, 1 / (1 + np.exp(-z))) / 10
    frame = pd.concat([pd.DataFrame({"id": np.arange(n) + 7000000}), x], axis=1)
    frame["target"] = fraction
    annotated = rng.random(n) < 0.7  # identities are annotated for some comments only
    for j, c in enumerate(identities):
        frame[c] = np.where(annotated, np.where(member[:, j], rng.uniform(0.5, 1, n), rng.uniform(0, 0.4, n)), np.nan)
        frame[c] = frame[c].round(2)
    frame["severe_toxicity"] = (fraction * rng.uniform(0, 0.3, n)).round(3)  # train-only subtypes, not scored
    frame["insult"] = (fraction * rng.uniform(0.3, 1, n)).round(3)
    train = frame.iloc[:N_TRAIN]
    test = frame.iloc[N_TRAIN:][["id", *x.columns]]
    answers = frame.iloc[N_TRAIN:][["id", "target", *identities]].fillna(0)
    sample = pd.DataFrame({"id": test["id"], "prediction": 0.0})
    return _tabular(
        folder,
        "Unintended bias",
        "Predict the toxicity of each comment without penalising comments that mention an identity. The target is "
        "the fraction of raters who found the comment toxic; a target of 0.5 or more is toxic.",
        "Submissions are scored on a combination of the overall ROC AUC and the generalized mean of the Bias AUCs "
        "(Subgroup AUC, BPSN AUC and BNSP AUC) over the identity subgroups male, female, christian and muslim.",
        train,
        test,
        sample,
        answers,
        {"task_type": "BinCls", "metric": "bias_auc", "lower_is_better": False},
    )


# ----------------------------------------------------------------------------- what agentk refuses
def _refused(folder: Path, kind: str, title: str, task: str, evaluation: str, inputs: list[str]) -> dict:
    (folder / "public" / "description.md").write_text(_description(title, task, evaluation, "See the files."))
    (folder / "private" / "answers.csv").write_text("id\n")
    return {
        "modalities": {"inputs": inputs, "targets": [kind]},
        "task_type": kind,
        "metric": "-",
        "supported": False,
        "refusal": kind,
        "answers": "private/answers.csv",
    }


def _png(rng: np.random.Generator, size: int = 8) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(rng.integers(0, 255, (size, size), dtype=np.uint8)).save(buf, format="PNG")
    return buf.getvalue()


@fixture(
    FAMILY, "refused: paired noisy/clean image folders, a row of pixels per test image (image-to-image)", fast=True
)
def refuse_image_to_image(folder: Path, rng: np.random.Generator) -> dict:
    pub = folder / "public"
    for split in ("train", "train_cleaned", "test"):
        (pub / split).mkdir()
        for i in range(8 if split != "test" else 4):
            (pub / split / f"{i + (100 if split == 'test' else 0)}.png").write_bytes(_png(rng))
    # one row per test image holding all its pixels: no per-pixel rows (agentk.competition.image_pairs) to predict
    pd.DataFrame({"id": [f"{i}" for i in range(100, 104)], "pixels": " ".join(["255"] * 64)}).to_csv(
        pub / "sampleSubmission.csv", index=False
    )
    return _refused(
        folder,
        "image-to-image",
        "Denoising documents",
        "Remove the noise from scanned documents.",
        "Submissions are evaluated on the RMSE between cleaned pixel intensities and the ground truth.",
        ["image"],
    )


@fixture(FAMILY, "refused: run-length encoded mask targets (segmentation)", fast=True)
def refuse_segmentation_rle(folder: Path, rng: np.random.Generator) -> dict:
    pub = folder / "public"
    for split, n in (("train", 12), ("test", 4)):
        (pub / split).mkdir()
        for i in range(n):
            (pub / split / f"{split}_{i}.png").write_bytes(_png(rng))
    rle = [" ".join(f"{s} {rng.integers(2, 9)}" for s in sorted(rng.choice(4000, 3, replace=False))) for _ in range(12)]
    pd.DataFrame({"ImageId": [f"train_{i}" for i in range(12)], "EncodedPixels": rle}).to_csv(
        pub / "train.csv", index=False
    )
    pd.DataFrame({"ImageId": [f"test_{i}" for i in range(4)], "EncodedPixels": "1 1"}).to_csv(
        pub / "sample_submission.csv", index=False
    )
    return _refused(
        folder,
        "segmentation",
        "Salt regions",
        "Segment the regions of each image.",
        "Submissions are evaluated on the mean IoU of the run-length encoded masks.",
        ["image"],
    )


@fixture(FAMILY, "refused: bounding boxes in train, prediction strings to submit (object detection)", fast=True)
def refuse_object_detection(folder: Path, rng: np.random.Generator) -> dict:
    pub = folder / "public"
    for split, n in (("train", 10), ("test", 4)):
        (pub / split).mkdir()
        for i in range(n):
            (pub / split / f"{split}{i}.png").write_bytes(_png(rng))
    boxes = [f"[{a}, {b}, {c}, {d}]" for a, b, c, d in rng.integers(0, 100, (30, 4))]
    pd.DataFrame({"image_id": [f"train{i % 10}" for i in range(30)], "bbox": boxes, "source": "a"}).to_csv(
        pub / "train.csv", index=False
    )
    pd.DataFrame({"image_id": [f"test{i}" for i in range(4)], "PredictionString": "1.0 0 0 50 50"}).to_csv(
        pub / "sample_submission.csv", index=False
    )
    return _refused(
        folder,
        "object detection",
        "Wheat heads",
        "Detect the wheat heads in each image: a confidence and a box per head.",
        "Submissions are evaluated on the mean average precision at IoU thresholds 0.5 to 0.75.",
        ["image"],
    )


@fixture(FAMILY, "refused: DICOM scans, a row per box (x, y, width, height, Target) in a labels table (detection)")
def refuse_box_rows_dicom(folder: Path, rng: np.random.Generator) -> dict:
    from testing.competitions.layouts import dicom_scan

    pub = folder / "public"
    rows, ids = [], {"train": [], "test": []}
    for split, n in (("train", 12), ("test", 4)):
        (pub / f"stage_2_{split}_images").mkdir()
        for i in range(n):
            pid = f"{rng.integers(16**7, 16**8):08x}-{i:04d}"
            dicom_scan(pub / f"stage_2_{split}_images" / f"{pid}.dcm", rng.random((16, 16)), "ct")
            ids[split].append(pid)
    for pid in ids["train"]:  # no box: one row with empty coordinates; an opacity: a row per box
        found = int(rng.random() < 0.5)
        for _ in range(1 + found):
            rows.append((pid, *(rng.integers(0, 900, 4) if found else [None] * 4), found))
    pd.DataFrame(rows, columns=["patientId", "x", "y", "width", "height", "Target"]).to_csv(
        pub / "stage_2_train_labels.csv", index=False
    )
    pd.DataFrame({"patientId": ids["test"], "PredictionString": "0.5 0 0 100 100"}).to_csv(
        pub / "stage_2_sample_submission.csv", index=False
    )
    return _refused(
        folder,
        "object detection",
        "Pneumonia",
        "Locate lung opacities on chest radiographs: a confidence and a bounding box per opacity.",
        "Submissions are evaluated on the mean average precision at IoU thresholds 0.4 to 0.75.",
        ["image"],
    )


@fixture(FAMILY, "refused: a transcription per image (image-to-string, text generation)", fast=True)
def refuse_image_to_string(folder: Path, rng: np.random.Generator) -> dict:
    pub = folder / "public"
    for split, n in (("train", 60), ("test", 10)):
        (pub / split).mkdir()
        for i in range(n):
            (pub / split / f"{split}_{i:03d}.png").write_bytes(_png(rng))
    letters = list("abcdefghkmnpqrstuvwxyz23456789")
    words = ["".join(rng.choice(letters, 6)) for _ in range(60)]
    pd.DataFrame({"image_id": [f"train_{i:03d}" for i in range(60)], "text": words}).to_csv(
        pub / "train.csv", index=False
    )
    pd.DataFrame({"image_id": [f"test_{i:03d}" for i in range(10)], "text": "abc"}).to_csv(
        pub / "sample_submission.csv", index=False
    )
    return _refused(
        folder,
        "text generation / sequence-to-sequence",
        "Read the captcha",
        "Transcribe the characters shown in each image.",
        "Submissions are evaluated on the share of exactly transcribed images.",
        ["image"],
    )


@fixture(FAMILY, "refused: the answer is a substring of the input text (span extraction)", fast=True)
def refuse_span_extraction(folder: Path, rng: np.random.Generator) -> dict:
    pub = folder / "public"
    vocab = "good great awful sad happy day the movie was really quite so very not at all today my friend".split()
    rows = []
    for i in range(120):
        text = " ".join(rng.choice(vocab, 12))
        tokens = text.split()
        start = int(rng.integers(0, 9))
        rows.append({"textID": f"t{i}", "text": text, "selected_text": " ".join(tokens[start : start + 3])})
    frame = pd.DataFrame(rows)
    frame["sentiment"] = rng.choice(["positive", "negative", "neutral"], len(frame))
    frame.iloc[:100].to_csv(pub / "train.csv", index=False)
    frame.iloc[100:].drop(columns="selected_text").to_csv(pub / "test.csv", index=False)
    pd.DataFrame({"textID": frame.textID.iloc[100:], "selected_text": ""}).to_csv(
        pub / "sample_submission.csv", index=False
    )
    return _refused(
        folder,
        "span extraction",
        "Sentiment span",
        "Pick out the part of each tweet that reflects its sentiment.",
        "Submissions are evaluated on the word-level Jaccard score.",
        ["text"],
    )


@fixture(FAMILY, "refused: audio clips in a format no decoder here reads (AAC in .m4a), labels in a CSV", fast=True)
def refuse_audio(folder: Path, rng: np.random.Generator) -> dict:
    # WAV, FLAC, Ogg, MP3 and AIFF clips are pictured as spectrograms (tools/audio_clips.py); libsndfile has no AAC.
    # The refusal reads the file names alone, so the clips' bytes are an MPEG-4 header and noise.
    pub = folder / "public"
    (pub / "train_audio").mkdir()
    (pub / "test_audio").mkdir()
    for split, n in (("train_audio", 10), ("test_audio", 4)):
        for i in range(n):
            head = b"\x00\x00\x00\x20ftypM4A \x00\x00\x00\x00M4A mp42isom"
            (pub / split / f"clip_{split[:2]}{i}.m4a").write_bytes(head + rng.bytes(800))
    pd.DataFrame({"fname": [f"clip_tr{i}.m4a" for i in range(10)], "label": rng.choice(["bird", "dog"], 10)}).to_csv(
        pub / "train_labels.csv", index=False
    )
    pd.DataFrame({"fname": [f"clip_te{i}.m4a" for i in range(4)], "label": "bird"}).to_csv(
        pub / "sample_submission.csv", index=False
    )
    return _refused(
        folder,
        "audio",
        "Sound tagging",
        "Label the sound in each clip.",
        "Submissions are evaluated on accuracy.",
        ["audio"],
    )
