"""The curriculum's task choice (paper 3.3, eq. 6–7), as pure functions on numpy arrays.

Symbols, for the n tasks still in the pool and the experiences in long-term memory:

- d_i      : embedding of task i's description;          t_i : embedding of task i's data-tree description
- D⁺ / D⁻  : description embeddings of the RAG⁺ (solved) / RAG⁻ (failed) experiences
- T⁺ / T⁻  : data-tree embeddings of the same experiences
- top_r(s) : eq. 6, the mean of the r largest entries of a similarity row s (all of them when fewer than r,
             0 for an empty memory, so an empty side neither helps nor hurts)
- sim±_i   = top_r(cos(d_i, D±))   how alike task i's *description* is to what was solved / failed
- diff±_i  = top_r(cos(t_i, T±))   the paper estimates difficulty "from embeddings of the data-tree
             descriptions": we use the same top-r similarity, on the trees (a tree like a solved one looks
             as hard as something already managed; one like a failed one looks too hard)
- λ_i      : rounds since task i was last tried (∞ when never tried, so its penalty e^(−λ) is 0)
- α, β     : weights of the difficulty terms and of the recency penalty

eq. 7:  score_i = sim⁺_i + α·diff⁺_i − sim⁻_i − α·diff⁻_i − β·e^(−λ_i); the round picks argmax_i score_i.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def similarity(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine similarity matrix (len(a), len(b)); rows are normalised here so callers may pass raw vectors."""
    a = np.atleast_2d(np.asarray(a, dtype=float))
    b = np.asarray(b, dtype=float)
    if b.size == 0:
        return np.zeros((a.shape[0], 0))
    b = np.atleast_2d(b)
    an = np.linalg.norm(a, axis=1, keepdims=True)
    bn = np.linalg.norm(b, axis=1, keepdims=True)
    # a zero vector (an empty text's embedding) is similar to nothing rather than a division by zero
    return (a / np.where(an == 0, 1, an)) @ (b / np.where(bn == 0, 1, bn)).T


def top_r(sims: np.ndarray, r: int) -> np.ndarray:
    """eq. 6 per row: the mean of the r largest similarities (of all of them when a row has fewer; 0 when none)."""
    sims = np.atleast_2d(np.asarray(sims, dtype=float))
    if r < 1:
        raise ValueError("r must be at least 1")
    if sims.shape[1] == 0:
        return np.zeros(sims.shape[0])
    k = min(r, sims.shape[1])
    return np.sort(sims, axis=1)[:, -k:].mean(axis=1)


def recency_penalty(last_tried: Sequence[int | None], round: int, beta: float) -> np.ndarray:
    """β·e^(−λ_i) with λ_i = round − last_tried_i; a never-tried task (λ = ∞) gets 0."""
    lam = np.array([np.inf if t is None else round - t for t in last_tried], dtype=float)
    return beta * np.exp(-lam)


def scores(
    task_desc_emb: np.ndarray,
    task_tree_emb: np.ndarray,
    pos_desc: np.ndarray,
    pos_tree: np.ndarray,
    neg_desc: np.ndarray,
    neg_tree: np.ndarray,
    last_tried: Sequence[int | None],
    round: int,
    alpha: float,
    beta: float,
    r: int,
) -> np.ndarray:
    """eq. 7 for every task of the pool: sim⁺ + α·diff⁺ − sim⁻ − α·diff⁻ − β·e^(−λ)."""
    sim_pos = top_r(similarity(task_desc_emb, pos_desc), r)
    sim_neg = top_r(similarity(task_desc_emb, neg_desc), r)
    diff_pos = top_r(similarity(task_tree_emb, pos_tree), r)
    diff_neg = top_r(similarity(task_tree_emb, neg_tree), r)
    return sim_pos + alpha * diff_pos - sim_neg - alpha * diff_neg - recency_penalty(last_tried, round, beta)


def pick(score: np.ndarray, ease: Sequence[float] | None = None, tol: float = 1e-9) -> int:
    """Index of the best score; ties (within tol) go to the easiest-looking task (smallest `ease` rank), so
    with an empty memory (every score 0) the first pick is the easiest data tree."""
    score = np.asarray(score, dtype=float)
    if score.size == 0:
        raise ValueError("the pool is empty")
    best = np.flatnonzero(score >= score.max() - tol)
    if ease is None:
        return int(best[0])
    return int(min(best, key=lambda i: (ease[i], i)))
