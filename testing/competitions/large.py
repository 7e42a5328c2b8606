"""Fixture family "large tables": a synthetic table of millions of rows in a tabular-playground layout, for the
row budgets of the solve (AutoGluon's sample, the network's rows per epoch, the blender's rows) and its memory; and
a wide one of 200 anonymous columns each carrying a little of the signal (as in Santander's transaction
prediction), for the work planned per column (tools/autogluon_plan.py).
Not in the default test run: the first takes a minute to write and a quarter of an hour to set up and solve on 2
cores; benchmarks/solve.py and benchmarks/vs_autogluon.py run them with --fixtures."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from testing.competitions import fixture
from testing.competitions.features import _split
from testing.competitions.targets import _description, _tabular

FAMILY = "large tables"
TRAIN_ROWS, TEST_ROWS = 2_000_000, 500_000


@fixture(FAMILY, "2,000,000 train rows x 54 columns (10 numbers, 44 indicators), 7 classes, one very rare; accuracy")
def millions_of_rows(folder: Path, rng: np.random.Generator) -> dict:
    n = TRAIN_ROWS + TEST_ROWS
    cols = {f"Num_{i}": (rng.normal(size=n) * 100).astype("float32").round(2) for i in range(10)}
    cols |= {f"Area_{i + 1}": (rng.uniform(size=n) < 0.25).astype("int8") for i in range(4)}
    cols |= {f"Soil_{i + 1}": (rng.uniform(size=n) < 0.05).astype("int8") for i in range(40)}
    frame = pd.DataFrame(cols)
    z = (
        frame["Num_0"] / 100
        + 0.5 * frame["Num_1"] / 100 * frame["Area_1"]
        - 0.4 * frame["Soil_3"]
        + 0.3 * np.sin(frame["Num_2"] / 50)
    )
    cuts = np.quantile(z, [0.35, 0.7, 0.85, 0.95, 0.99, 0.99999])
    label = np.digitize(z + rng.normal(scale=0.3, size=n), cuts) + 1
    frame.insert(0, "Id", np.arange(n))
    pub = folder / "public"
    frame.iloc[:TRAIN_ROWS].assign(Cover_Type=label[:TRAIN_ROWS]).to_csv(pub / "train.csv", index=False)
    test = frame.iloc[TRAIN_ROWS:]
    test.to_csv(pub / "test.csv", index=False)
    pd.DataFrame({"Id": test["Id"], "Cover_Type": 2}).to_csv(pub / "sample_submission.csv", index=False)
    pd.DataFrame({"Id": test["Id"], "Cover_Type": label[TRAIN_ROWS:]}).to_csv(
        folder / "private" / "answers.csv", index=False
    )
    (pub / "description.md").write_text(
        _description(
            "Forest cover types",
            "Predict the forest cover type (1 to 7) of each area from cartographic variables. The data is synthetic.",
            "Submissions are evaluated on multi-class classification accuracy.",
            "- train.csv\n- test.csv\n- sample_submission.csv",
        )
    )
    return {
        "modalities": {"inputs": ["tabular"], "targets": ["tabular"]},
        "task_type": "MultiCls",
        "metric": "accuracy",
        "lower_is_better": False,
        "supported": True,
        "n_train": TRAIN_ROWS,
        "n_test": TEST_ROWS,
        "answers": "private/answers.csv",
        "sample_submission": "public/sample_submission.csv",
    }


@fixture(FAMILY, "16,000 train rows x 200 anonymous numeric columns, each a small share of the signal; binary, AUC")
def wide_anonymous_columns(folder: Path, rng: np.random.Generator) -> dict:
    n_train, n_test, k = 16_000, 4_000, 200
    n = n_train + n_test
    x = rng.normal(size=(n, k)) * rng.uniform(1, 20, size=k) + rng.uniform(-10, 10, size=k)
    z = (x - x.mean(0)) / x.std(0)
    weight = rng.normal(scale=0.12, size=k)  # a little each: no column alone predicts much
    bump = rng.choice(k, size=20, replace=False)  # and a few that act only away from their middle
    logit = z @ weight + 0.6 * (np.abs(z[:, bump]) > 1.5).sum(1) - 2.8 + rng.normal(scale=0.5, size=n)
    frame = pd.DataFrame(x.round(4), columns=[f"var_{j}" for j in range(k)])
    frame.insert(0, "ID_code", [f"train_{i}" if i < n_train else f"test_{i - n_train}" for i in range(n)])
    frame.insert(1, "target", (logit > 0).astype(int))
    train, test, answers = _split(frame, n_train, "target", "ID_code")
    sample = pd.DataFrame({"ID_code": test["ID_code"], "target": 0})
    return _tabular(
        folder,
        "Customer transactions",
        "Identify which customers will make a specific transaction in the future. The 200 anonymised numeric "
        "variables are all there is. The data is synthetic.",
        "Submissions are evaluated on area under the ROC curve between the predicted probability and the target.",
        train,
        test,
        sample,
        answers,
        {"task_type": "BinCls", "metric": "roc_auc", "lower_is_better": False},
    )
