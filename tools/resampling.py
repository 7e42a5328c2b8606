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
    ours: Callable[[np.ndarray], float],
    theirs: Callable[[np.ndarray], float],
    n_rows: int,
    higher_is_better: bool,
    groups: np.ndarray | None = None,
) -> bool | None:
    """ours(idx) and theirs(idx) score the rows at positions idx (the same resample for both: n_rows drawn with
    replacement, MAX_DRAW at most); resamples a metric cannot score (AUC on one class) are left aside. None (falsy)
    when no resample could be scored: no verdict. groups: each row's group when the rows come in groups the test
    does not share (time steps of episodes); a resample then draws whole groups (a cluster bootstrap), as the rows of
    one group err together and a gain they carry is one group's, however many rows it has."""
    rng = np.random.default_rng(0)
    draw = _group_draw(groups, rng) if groups is not None else lambda: rng.integers(0, n_rows, min(n_rows, MAX_DRAW))
    wins, scored = 0, 0
    for _ in range(RESAMPLES):
        idx = draw()
        try:
            a, b = ours(idx), theirs(idx)
        except Exception:  # noqa: BLE001 - the setup's generated metric: a resample it cannot score
            continue
        if np.isfinite(a) and np.isfinite(b):
            scored += 1
            wins += bool(a > b if higher_is_better else a < b)
    return wins >= WIN_SHARE * scored if scored else None


def _group_draw(groups: np.ndarray, rng: np.random.Generator) -> Callable[[], np.ndarray]:
    """A cluster bootstrap's draws: as many groups as there are, with replacement (fewer, in proportion, when the
    rows exceed MAX_DRAW), each drawn group's rows all taken."""
    _, of_row, sizes = np.unique(np.asarray(groups), return_inverse=True, return_counts=True)
    order = np.argsort(of_row, kind="stable")  # the rows group by group
    starts = np.cumsum(sizes) - sizes
    n_draw = max(1, min(len(sizes), round(len(sizes) * MAX_DRAW / len(of_row))))

    def draw() -> np.ndarray:
        picked = rng.integers(0, len(sizes), n_draw)
        counts = sizes[picked]
        offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
        return order[np.repeat(starts[picked], counts) + offsets]

    return draw
