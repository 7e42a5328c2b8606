"""The classical text candidate (tools/classical_txt.py) on finished setups: its validation score and seconds, and
the same fit with the TF-IDF columns alone into the linear models (what the candidate was before the dense field
and pair features), beside the light network's validation score that setup recorded.

    uv run python benchmarks/classical_txt.py WORKSPACE [WORKSPACE ...]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from agentk.core.fileio import read_json
from agentk.workspace import Workspace
from tools import classical_txt
from tools.classical import Features, fit_candidate
from tools.task_data import TaskData


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("workspaces", nargs="+", type=Path)
    args = p.parse_args()
    rows = []
    for ws in args.workspaces:
        cwd = os.getcwd()
        os.chdir(ws)  # the workspace's generated code imports relative to it
        try:
            task = TaskData(ws)
            t0 = time.monotonic()
            feats = classical_txt.features(task, log=lambda *_: None)
            full = fit_candidate(task, feats, log=lambda *_: None)
            seconds = time.monotonic() - t0
            k = feats.details["terms"]
            only = Features(
                feats.train[:, :k],
                feats.test[:, :k],
                "TF-IDF only",
                {n: f for n, f in feats.models.items() if n.startswith("linear (C=") and n.endswith(")")},
            )
            t1 = time.monotonic()
            base = fit_candidate(task, only, log=lambda *_: None)
            base_seconds = time.monotonic() - t1
        finally:
            os.chdir(cwd)
        light = read_json(Workspace(ws).light.score) or {}
        rows.append(
            (
                ws.name,
                task.metric_name,
                len(task.train.inputs[classical_txt.TEXT.name].columns),
                full.val_score,
                full.details["chosen"],
                seconds,
                base.val_score,
                base_seconds,
                light.get("score"),
            )
        )
    print(
        f"{'workspace':28s} {'metric':22s} {'fields':>6s} {'candidate':>10s} {'chosen':40s} {'s':>6s} "
        f"{'tfidf-only':>10s} {'s':>6s} {'light net':>10s}"
    )
    for r in rows:
        light = f"{r[8]:10.5f}" if isinstance(r[8], float) else f"{'-':>10s}"
        print(f"{r[0]:28s} {r[1]:22s} {r[2]:6d} {r[3]:10.5f} {r[4]:40s} {r[5]:6.1f} {r[6]:10.5f} {r[7]:6.1f} {light}")


if __name__ == "__main__":
    main()
