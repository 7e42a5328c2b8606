"""The quick solve's bound on the wall clock (issue 60): tables of 10,000 and 100,000 train rows with 2 and 50
classes (log loss), each solved with `agentk solve --budget quick` alone and beside a second busy process (one
that keeps a core busy with matrix products, as another user's job would). Per cell it prints the
solve's planned seconds (the modelled work of its solutions, each within what the bound allotted it), the actual
wall seconds, their ratio, whether it ended within the bound, and the test log loss beside the constant's (the
train rows' class frequencies): the submission is never worse.

    uv run python benchmarks/solve_bound.py [--rows 10000 100000] [--classes 2 50] [--loads alone busy] [--out DIR]

Each (rows, classes) is set up once (expert policy); each cell solves a fresh copy of that setup. Records go to
<out>/solve_bound.json (a finished cell is not run again), the table to benchmarks/results/solve_bound.md.
Goal: every cell ends within the bound (15 minutes on 2 cores) and its actual time is within 2x of its plan."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentk import api  # noqa: E402
from agentk.solve.budgets import PRESETS  # noqa: E402
from agentk.workspace import Workspace  # noqa: E402
from rag.memory import Memory  # noqa: E402

DESCRIPTION = """# Field Records

## Description

Each row is a field record of a captured animal: measurements and the plot and season it was caught in. Predict
its species.

## Evaluation

Submissions are evaluated with the multi-class logarithmic loss: for every record, submit a probability for each
species.

## Submission File

For each `record_id` in the test set, a probability for every species column of the sample submission.
"""
# keeps one core busy with matrix products until killed: another user's numerical job
BUSY = "import numpy as np\na = np.random.rand(1500, 1500)\nwhile True:\n    a = (a @ a) / 1500.0\n"


def problem(rows: int, classes: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray]:
    """(train with its target, test without, the test answers as class codes): 12 numbers (eight carry the signal
    through a class's centre, two through a product), a plot of 24 and a season of 4 that shift the classes' odds,
    4 noise columns, 3 % missing cells."""
    rng = np.random.default_rng(seed)
    n = rows + rows // 4
    centres = rng.normal(scale=0.6, size=(classes, 8))
    odds = rng.dirichlet(np.full(classes, 2.0))
    y = rng.choice(classes, size=n, p=odds)
    x = rng.normal(size=(n, 12))
    x[:, :8] += centres[y]
    x[:, 8] = x[:, 9] * np.where(y % 2 == 0, 1.0, -1.0) + 0.5 * rng.normal(size=n)
    plot = (y * 7 + rng.integers(0, 6, n)) % 24 + 1
    season = np.where(rng.random(n) < 0.7, y % 4, rng.integers(0, 4, n))
    frame = pd.DataFrame(x, columns=[f"m{i}" for i in range(12)]).round(4)
    frame[[f"noise{i}" for i in range(4)]] = rng.normal(size=(n, 4)).round(4)
    frame = frame.mask(rng.random(frame.shape) < 0.03)
    frame.insert(0, "record_id", rng.permutation(n) + 10_000)
    frame["plot"] = plot
    frame["season"] = np.array(["winter", "spring", "summer", "autumn"])[season]
    names = np.array([f"SP{c:02d}" for c in range(classes)])
    train = frame.iloc[:rows].assign(species=names[y[:rows]])
    return train, frame.iloc[rows:].reset_index(drop=True), y[rows:]


def write(folder: Path, train: pd.DataFrame, test: pd.DataFrame, classes: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    train.to_csv(folder / "train.csv", index=False)
    test.to_csv(folder / "test.csv", index=False)
    sample = pd.DataFrame({"record_id": test["record_id"]})
    for c in range(classes):
        sample[f"SP{c:02d}"] = 1 / classes
    sample.to_csv(folder / "sample_submission.csv", index=False)
    (folder / "description.md").write_text(DESCRIPTION)


def log_loss(sub: pd.DataFrame, test: pd.DataFrame, answers: np.ndarray, classes: int) -> float:
    """The submission's multi-class log loss on the hidden answers (rows normalised, clipped at 1e-15)."""
    probs = sub.set_index("record_id").loc[test["record_id"], [f"SP{c:02d}" for c in range(classes)]].to_numpy()
    probs = np.clip(probs / probs.sum(axis=1, keepdims=True), 1e-15, 1)
    return float(-np.log(probs[np.arange(len(answers)), answers]).mean())


def solve_cell(setup_ws: Path, ws: Path, load: str) -> dict:
    """A fresh copy of the setup solved with the quick budget, alone or beside BUSY; its wall seconds and plan."""
    shutil.rmtree(ws, ignore_errors=True)
    shutil.copytree(setup_ws, ws, symlinks=True)
    busy = None
    if load == "busy":
        busy = subprocess.Popen([sys.executable, "-c", BUSY], env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
        time.sleep(3)  # at work before the solve looks at the cores
    t0 = time.monotonic()
    try:
        with open(os.devnull, "w") as quiet:
            api.run_solve(ws, "quick", output=quiet)
        error = None
    except Exception as exc:  # noqa: BLE001 - a failed or stopped solve is a result of the cell
        error = f"{type(exc).__name__}: {exc}"
    finally:
        seconds = time.monotonic() - t0
        if busy is not None:
            busy.kill()
            busy.wait()
    summary = json.loads(Workspace(ws).solve_summary.read_text())
    planned = 0.0
    for s in summary.get("solutions", []):  # each solution's modelled work, within what the bound allotted it
        allotted = s.get("allotted_seconds")
        modelled = s.get("modelled_seconds")
        if modelled is not None:
            planned += min(modelled, allotted) if allotted is not None else modelled
    return {
        "seconds": round(seconds, 1),
        "planned": round(planned, 1),
        "error": error,
        "status": summary.get("status"),
        "submission": summary.get("submission"),
        "solutions": [
            {k: s.get(k) for k in ("id", "val_score", "seconds", "allotted_seconds", "modelled_seconds")}
            for s in summary.get("solutions", [])
        ],
    }


def table(records: list[dict], bound: float) -> str:
    lines = [
        f"| train rows | classes | load | setup s | planned s | actual s | actual / planned | within {bound:.0f} s | "
        "submission | test log loss | constant's |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in records:
        ratio = r["seconds"] / r["planned"] if r["planned"] else float("nan")
        lines.append(
            f"| {r['rows']:,} | {r['classes']} | {r['load']} | {r['setup_seconds']:.0f} | {r['planned']:.0f} | "
            f"{r['seconds']:.0f} | {ratio:.2f} | {'yes' if r['seconds'] <= bound else 'NO'} | {r['submission']} | "
            f"{r['test_loss']:.4f} | {r['constant_loss']:.4f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, nargs="+", default=[10_000, 100_000])
    p.add_argument("--classes", type=int, nargs="+", default=[2, 50])
    p.add_argument("--loads", nargs="+", choices=["alone", "busy"], default=["alone", "busy"])
    p.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "agentk-solve-bound")
    p.add_argument("--setup-only", action="store_true", help="set the tables up (ahead of a quiet machine) and stop")
    args = p.parse_args(argv)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    records_path = out / "solve_bound.json"
    records = json.loads(records_path.read_text()) if records_path.exists() else []
    bound = PRESETS["quick"].bound
    memory = Memory(out / "memory")
    for load in args.loads[:1] if args.setup_only else args.loads:
        for rows in args.rows:
            for classes in args.classes:
                if any((r["rows"], r["classes"], r["load"]) == (rows, classes, load) for r in records):
                    continue
                name = f"r{rows}-k{classes}"
                train, test, answers = problem(rows, classes)
                setup_ws = out / "setups" / name
                done = out / "setups" / f"{name}.json"
                if not done.exists():
                    write(out / "comps" / name, train, test, classes)
                    shutil.rmtree(setup_ws, ignore_errors=True)
                    t0 = time.monotonic()
                    api.run_setup(out / "comps" / name, setup_ws, memory=memory)
                    done.write_text(json.dumps({"seconds": round(time.monotonic() - t0, 1)}))
                if args.setup_only:
                    continue
                cell = solve_cell(setup_ws, out / "solves" / f"{name}-{load}", load)
                sub = pd.read_csv(Workspace(out / "solves" / f"{name}-{load}").submission)
                prior = pd.Series(train["species"]).value_counts(normalize=True)
                constant = prior.reindex([f"SP{c:02d}" for c in range(classes)]).fillna(0).to_numpy()
                records.append(
                    {
                        "rows": rows,
                        "classes": classes,
                        "load": load,
                        "setup_seconds": json.loads(done.read_text())["seconds"],
                        **cell,
                        "test_loss": log_loss(sub, test, answers, classes),
                        "constant_loss": float(-np.log(np.clip(constant[answers], 1e-15, 1)).mean()),
                    }
                )
                records_path.write_text(json.dumps(records, indent=1))
                print(table(records[-1:], bound).splitlines()[-1], flush=True)
    if args.setup_only:
        return 0
    text = table(records, bound)
    print(text)
    (ROOT / "benchmarks" / "results" / "solve_bound.md").write_text(
        f"# The quick solve's bound (benchmarks/solve_bound.py)\n\n{text}\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
