"""Fixture family "large tables": a synthetic table of millions of rows in a tabular-playground layout, for the
row budgets of the solve (AutoGluon's sample, the network's rows per epoch, the blender's rows) and its memory.
Not in the default test run: it takes a minute to write and a quarter of an hour to set up and solve on 2 cores;
benchmarks/solve.py and benchmarks/vs_autogluon.py run it with --fixtures."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from agentk.testing.competitions import fixture
from agentk.testing.competitions.targets import _description

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
