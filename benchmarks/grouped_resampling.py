"""How often the 90 %-of-resamples rule (tools/resampling.py) keeps a challenger on validation rows that come in
groups, when the challenger is no better and when it is, with resamples of rows and of whole groups.

    uv run python benchmarks/grouped_resampling.py [--trials 300] [--groups 30] [--rows-per-group 1 5 20 80]

Each trial draws a validation set of G groups (episodes, patients) of m rows with the target 0 and two predictions
whose errors share a part per group (the group's difficulty for that model, sd 1) and a part per row (sd 1), as
the rows of one episode err together. The challenger is kept when its RMSE is lower overall and on 90 % of the
resamples: what a blend, a decoding constant or the best solution over the constant must pass. "no better": both
errors drawn alike (a kept challenger is luck); "better": the challenger's group part has sd 0.7. Prints, per
group size, the share of trials that keep the challenger under each resampling; for one row per group both agree.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.resampling import wins_on_resamples  # noqa: E402


def kept(groups: np.ndarray, single: np.ndarray, challenger: np.ndarray, by_group: bool) -> bool:
    rmse = lambda err, idx: float(np.sqrt(np.mean(err[idx] ** 2)))  # noqa: E731
    every = np.arange(len(groups))
    if rmse(challenger, every) >= rmse(single, every):
        return False
    return bool(
        wins_on_resamples(
            lambda idx: rmse(challenger, idx),
            lambda idx: rmse(single, idx),
            len(groups),
            False,
            groups if by_group else None,
        )
    )


def errors(rng: np.random.Generator, groups: np.ndarray, n_groups: int, group_sd: float) -> np.ndarray:
    return rng.normal(0, group_sd, n_groups)[groups] + rng.normal(0, 1, len(groups))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=300)
    ap.add_argument("--groups", type=int, default=30, help="validation groups per trial")
    ap.add_argument("--rows-per-group", type=int, nargs="+", default=[1, 5, 20, 80])
    args = ap.parse_args()
    if args.trials < 1 or args.groups < 2 or min(args.rows_per_group) < 1:
        ap.error("--trials must be at least 1, --groups at least 2 and every --rows-per-group at least 1")
    print(f"{args.trials} trials of {args.groups} groups; share of trials that keep the challenger\n")
    print("| rows per group | challenger | resampling rows | resampling whole groups |")
    print("|---|---|---|---|")
    for m in args.rows_per_group:
        groups = np.repeat(np.arange(args.groups), m)
        for label, sd in (("no better", 1.0), ("better (group sd 0.7)", 0.7)):
            rng = np.random.default_rng(m)
            counts = np.zeros(2)
            for _ in range(args.trials):
                single = errors(rng, groups, args.groups, 1.0)
                challenger = errors(rng, groups, args.groups, sd)
                counts += [kept(groups, single, challenger, by_group) for by_group in (False, True)]
            rows, whole = counts / args.trials
            print(f"| {m} | {label} | {rows:.1%} | {whole:.1%} |")


if __name__ == "__main__":
    main()
