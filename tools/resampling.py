"""Whether one way of predicting beats another on bootstrap resamples of the validation rows: the rule for any
choice made on the rows that also choose among solutions (a blend over the best single solution, a decoding
constant over its default, the best solution over the constant). A gain that a few rows carry is noise."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

RESAMPLES, WIN_SHARE = 200, 0.9  # the challenger must win on this share of the resamples
# a resample draws at most this many rows (an m-out-of-n bootstrap, stricter than drawing all n): 400 scores of
# 800,000 validation rows by a generated metric ran for over ten minutes
MAX_DRAW = 20_000


def at_most(rows: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """`rows` when there are at most n of them, else n of them drawn at random without replacement, in order: what
    a step that need not see every row of a large table works on."""
    return rows if len(rows) <= n else np.sort(rng.choice(rows, n, replace=False))


def wins_on_resamples(
    ours: Callable[[np.ndarray], float], theirs: Callable[[np.ndarray], float], n_rows: int, higher_is_better: bool
) -> bool | None:
    """ours(idx) and theirs(idx) score the rows at positions idx (the same resample for both: n_rows drawn with
    replacement, MAX_DRAW at most); resamples a metric cannot score (AUC on one class) are left aside. None (falsy)
    when no resample could be scored: no verdict."""
    rng = np.random.default_rng(0)
    wins, scored = 0, 0
    for _ in range(RESAMPLES):
        idx = rng.integers(0, n_rows, min(n_rows, MAX_DRAW))
        try:
            a, b = ours(idx), theirs(idx)
        except Exception:  # noqa: BLE001 - the setup's generated metric: a resample it cannot score
            continue
        if np.isfinite(a) and np.isfinite(b):
            scored += 1
            wins += bool(a > b if higher_is_better else a < b)
    return wins >= WIN_SHARE * scored if scored else None
