"""The quick budget on a ladder of sizes (issue 48 part 3): one generated binary problem at 1k, 10k, 100k and 500k
train rows, in a Kaggle layout (train.csv, test.csv with a quarter as many rows, sample_submission.csv,
description.md; AUC). Beside agentk (setup, then `solve --budget quick`), what a user would run instead:

- a default LightGBM (lightgbm.LGBMClassifier()) fitted on every train row, ids dropped, strings as categories;
- plain AutoGluon (TabularPredictor, its defaults, AUC) given agentk's own wall time, setup and solve together.

    uv run python benchmarks/size_ladder.py [--sizes 1000 10000 100000 500000] [--out DIR]

Prints one table (test AUC and wall seconds of each, per size) and writes it to
benchmarks/results/size_ladder.md. The problem: twelve numbers (four carry the signal through a product, a
threshold and a sine), three string categories (one shifts the odds), five noise columns, 3 % missing cells."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentk import api  # noqa: E402
from agentk.core.state import load_state  # noqa: E402
from agentk.workspace import Workspace  # noqa: E402
from benchmarks.vs_autogluon import plain_autogluon  # noqa: E402
from rag.memory import Memory  # noqa: E402

DESCRIPTION = """# Loan Default Ladder

## Description

Each row is a loan application: numeric measurements of the applicant and three categorical fields. Predict
whether the applicant defaults.

## Evaluation

Submissions are evaluated on area under the ROC curve between the predicted probability and the observed target.

## Submission File

For each `id` in the test set, predict a probability for the `default` variable. The file should contain a
header and have the following format:

```
id,default
1,0.5
```
"""


def problem(rows: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray]:
    """(train with its target, test without, the test answers)."""
    rng = np.random.default_rng(seed)
    n = rows + rows // 4
    x = rng.normal(size=(n, 12))
    region = rng.choice(["north", "south", "east", "west", "centre"], n)
    channel = rng.choice(["web", "branch", "phone"], n)
    grade = rng.choice(list("ABCDEFG"), n)
    logit = 1.2 * x[:, 0] * x[:, 1] + 1.5 * (x[:, 2] > 0.5) + np.sin(2 * x[:, 3]) + 0.4 * x[:, 4]
    logit += pd.Series(grade).map({g: 0.3 * i - 0.9 for i, g in enumerate("ABCDEFG")}).to_numpy()
    y = (logit + rng.logistic(size=n) > 0.5).astype(int)
    frame = pd.DataFrame(x, columns=[f"f{i}" for i in range(12)]).round(4)
    frame[[f"noise{i}" for i in range(5)]] = rng.normal(size=(n, 5)).round(4)
    frame = frame.mask(rng.random(frame.shape) < 0.03)
    frame.insert(0, "id", rng.permutation(n) + 100_000)
    frame["region"], frame["channel"], frame["grade"] = region, channel, grade
    train = frame.iloc[:rows].assign(default=y[:rows])
    return train, frame.iloc[rows:].reset_index(drop=True), y[rows:]


def write(folder: Path, train: pd.DataFrame, test: pd.DataFrame) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    train.to_csv(folder / "train.csv", index=False)
    test.to_csv(folder / "test.csv", index=False)
    pd.DataFrame({"id": test["id"], "default": 0.5}).to_csv(folder / "sample_submission.csv", index=False)
    (folder / "description.md").write_text(DESCRIPTION)


def graded(path: Path, test: pd.DataFrame, answers: np.ndarray) -> float:
    sub = pd.read_csv(path).set_index("id").reindex(test["id"])
    return float(roc_auc_score(answers, sub["default"].to_numpy()))


def agentk(folder: Path, ws: Path, test, answers) -> tuple[float, float]:
    t0 = time.monotonic()
    api.run_setup(folder, ws, force=True, memory=Memory(ws.parent / f"memory-{ws.name}"))
    with open(os.devnull, "w") as quiet:
        api.run_solve(ws, "quick", output=quiet)
    seconds = time.monotonic() - t0
    return graded(Workspace(ws).submission, test, answers), seconds


def lightgbm(train: pd.DataFrame, test: pd.DataFrame, answers) -> tuple[float, float]:
    import lightgbm as lgb

    t0 = time.monotonic()
    x = train.drop(columns=["id", "default"])
    x_test = test.drop(columns=["id"])
    for c in ("region", "channel", "grade"):
        x[c] = x[c].astype("category")
        x_test[c] = pd.Categorical(x_test[c], categories=x[c].cat.categories)
    model = lgb.LGBMClassifier(verbose=-1).fit(x, train["default"])
    p = model.predict_proba(x_test)[:, 1]
    return float(roc_auc_score(answers, p)), time.monotonic() - t0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000, 500_000])
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out" / "size_ladder")
    args = p.parse_args(argv)
    if any(s < 100 for s in args.sizes):
        p.error("--sizes: at least 100 rows each")
    head = "| train rows | agentk AUC | agentk s | LightGBM AUC | LightGBM s | AutoGluon AUC (agentk's time) |"
    head += " AutoGluon s |"
    lines = [head, "|---|---|---|---|---|---|---|"]
    records = []
    for rows in args.sizes:
        train, test, answers = problem(rows)
        folder = args.out.resolve() / f"data-{rows}"
        write(folder, train, test)
        ours, ours_s = agentk(folder, args.out.resolve() / f"ws-{rows}", test, answers)
        lgb_auc, lgb_s = lightgbm(train, test, answers)
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.monotonic()
            ag = graded(plain_autogluon(folder, "roc_auc", ours_s, Path(tmp))[0], test, answers)
            ag_s = time.monotonic() - t0
        setup_s = float(load_state(Workspace(args.out.resolve() / f"ws-{rows}").setup_state).seconds)
        record = {"rows": rows, "agentk": ours, "agentk s": ours_s, "setup s": setup_s, "lightgbm": lgb_auc}
        records.append(record | {"lightgbm s": lgb_s, "autogluon": ag, "autogluon s": ag_s})
        lines.append(
            f"| {rows:,} | {ours:.4f} | {ours_s:.0f} (setup {setup_s:.0f}) | {lgb_auc:.4f} | {lgb_s:.1f} | "
            f"{ag:.4f} | {ag_s:.0f} |"
        )
        print(lines[-1], flush=True)
    text = "\n".join(lines)
    out = ROOT / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "size_ladder.md").write_text(text + "\n")
    (args.out / "size_ladder.json").write_text(json.dumps(records, indent=1))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
