"""A large side table in setup (issue 49 part 2: tables read in chunks where joins allow): the data graph reads a
side table past joins.LEAN_BYTES lean, in chunks, keeping only the columns that may hold keys (texts as
categories), where it used to read it whole.

The competition: users (train 40,000, test 10,000) whose target follows their events' count and mean amount; an
events table of --events rows (a user key as text, an event type as text, a time in whole seconds, three amounts
with decimals), as Kaggle ships transactions beside the entities. Measured, each in a subprocess:

- the data graph's joins (agentk.competition.joins.find_joins) reading the events table whole (LEAN_BYTES set past
  its size) and lean: seconds and peak RSS;
- then `agentk setup` on the folder (the lean reading), its seconds and its process tree's peak RSS
  (benchmarks/scale.measured).

    uv run python benchmarks/side_tables.py [--events 10000000] [--out DIR]    # writes benchmarks/results/side_tables.md
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.scale import measured  # noqa: E402
from benchmarks.solve import markdown  # noqa: E402

USERS, TEST_SHARE = 50_000, 0.2
PROBE = """
import json, sys, time
from pathlib import Path
import pandas as pd
sys.path.insert(0, {root!r})
from agentk.competition import joins
if {whole}:
    joins.LEAN_BYTES = 10**15
folder = Path({folder!r})
tables = {{"train": folder / "train.csv", "test": folder / "test.csv"}}
train, test = pd.read_csv(tables["train"]), pd.read_csv(tables["test"])
t0 = time.monotonic()
found = joins.find_joins(folder, folder, tables, train, test)
print(json.dumps({{"seconds": time.monotonic() - t0, "joins": [j.describe() for j in found]}}))
"""


def write(folder: Path, events: int, rng: np.random.Generator) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    users = np.array([f"u{i:07d}" for i in range(USERS)])
    who = rng.integers(0, USERS, events)
    amount = rng.gamma(2.0, 10.0, events).round(2)
    frame = pd.DataFrame(
        {
            "user_ref": users[who],
            "kind": rng.choice(["view", "cart", "buy", "refund", "search"], events),
            "t": rng.integers(1_600_000_000, 1_700_000_000, events),
            "amount": amount,
            "fee": (amount * rng.random(events)).round(3),
            "score": rng.normal(size=events).round(4),
        }
    )
    chunk = 2_000_000
    for start in range(0, events, chunk):
        frame.iloc[start : start + chunk].to_csv(folder / "events.csv", index=False, header=start == 0, mode="a")
    count = np.bincount(who, minlength=USERS)
    mean = np.bincount(who, weights=amount, minlength=USERS) / np.maximum(count, 1)
    z = (count - count.mean()) / count.std() + (mean - mean.mean()) / mean.std() + rng.normal(size=USERS)
    people = pd.DataFrame({"user_id": users, "age": rng.integers(18, 80, USERS), "churned": (z > 0.5).astype(int)})
    n_test = int(USERS * TEST_SHARE)
    people.iloc[n_test:].to_csv(folder / "train.csv", index=False)
    people.iloc[:n_test, :2].to_csv(folder / "test.csv", index=False)
    pd.DataFrame({"user_id": users[:n_test], "churned": 0.5}).to_csv(folder / "sample_submission.csv", index=False)
    (folder / "description.md").write_text(
        "# Churn\n\nPredict whether each user churned (`churned`, 1 or 0) from the user table and the events "
        "table. Submissions are scored on the area under the ROC curve.\n"
    )


def probe(folder: Path, whole: bool, log: Path) -> dict:
    """The joins found, their seconds, and the probe's peak RSS sampled from outside (getrusage's maxrss is kept
    across exec: a child of this process, which held the generated table, would report this process's peak)."""
    code = PROBE.format(root=str(ROOT), whole=whole, folder=str(folder))
    m = measured([sys.executable, "-c", code], log)
    if m.rc != 0:
        raise RuntimeError(f"the probe failed: {m.last_line} ({log})")
    return json.loads(log.read_text().strip().splitlines()[-1]) | {"peak_gb": m.peak_gb}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--events", type=int, default=10_000_000)
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out" / "side_tables")
    args = p.parse_args(argv)
    folder = args.out / "data"
    if not (folder / "events.csv").exists():
        write(folder, args.events, np.random.default_rng(0))
    size_mb = (folder / "events.csv").stat().st_size / 1e6
    rows = []
    args.out.mkdir(parents=True, exist_ok=True)
    for how, whole in (("whole", True), ("lean", False)):
        r = probe(folder, whole, args.out / f"probe-{how}.log")
        print(f"{how}: {r}", flush=True)
        rows.append({"events rows": f"{args.events:,}", "events MB": round(size_mb), "step": f"find_joins, {how}",
                     "seconds": round(r["seconds"], 1), "peak GB": round(r["peak_gb"], 2)})  # fmt: skip
    run = args.out / "run"
    run.mkdir(parents=True, exist_ok=True)
    ws = run / "workspace"
    shutil.rmtree(ws, ignore_errors=True)  # a fresh setup each run
    t0 = time.monotonic()
    m = measured(["uv", "run", "agentk", "setup", str(folder), "--workspace", str(ws)], run / "setup.log")
    print(f"setup: rc {m.rc}, {time.monotonic() - t0:.0f} s, peak {m.peak_gb:.2f} GB; {m.last_line}", flush=True)
    rows.append({"events rows": f"{args.events:,}", "events MB": round(size_mb), "step": "agentk setup (lean)",
                 "seconds": round(m.seconds), "peak GB": round(m.peak_gb, 2)})  # fmt: skip
    text = markdown(rows, list(rows[0])) + f"\n\nJoins found: {r['joins']}; setup's last line: {m.last_line}\n"
    (ROOT / "benchmarks" / "results" / "side_tables.md").write_text(text)
    print(text)
    return 0 if m.rc == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
