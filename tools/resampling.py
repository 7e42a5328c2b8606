"""Whether one way of predicting beats another on bootstrap resamples of the validation rows: the rule for any
choice made on the rows that also choose among solutions (a blend over the best single solution, a decoding
constant over its default, the best solution over the constant). A gain that a few rows carry is noise."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

RESAMPLES, WIN_SHARE = 200, 0.9  # the challenger must win on this share of the resamples


def wins_on_resamples(
    ours: Callable[[np.ndarray], float], theirs: Callable[[np.ndarray], float], n_rows: int, higher_is_better: bool
) -> bool | None:
    """ours(idx) and theirs(idx) score the rows at positions idx (the same resample for both); resamples a metric
    cannot score (AUC on one class) are left aside. None (falsy) when no resample could be scored: no verdict."""
    rng = np.random.default_rng(0)
    wins, scored = 0, 0
    for _ in range(RESAMPLES):
        idx = rng.integers(0, n_rows, n_rows)
        try:
            a, b = ours(idx), theirs(idx)
        except Exception:  # noqa: BLE001 - the setup's generated metric: a resample it cannot score
            continue
        if np.isfinite(a) and np.isfinite(b):
            scored += 1
            wins += bool(a > b if higher_is_better else a < b)
    return wins >= WIN_SHARE * scored if scored else None
