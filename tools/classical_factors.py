"""The factorisation candidate (tools/classical.py): for a table whose rows are pairs of entities (a user and an
item, a store and a product), each row's value learnt as an offset plus each entity's bias plus the dot product of
their latent factors: biased matrix factorisation, as in collaborative filtering, fitted by alternating least squares.
The other candidates see ids only through their levels' statistics (counts, out-of-fold target means); factors
learn what two users who rated the same items alike have in common, and an item's bias is judged against the
users who rated it rather than against everyone.

The pair is found from values, never from names (entity_pair): two columns each naming entities (many levels, most
seen in several rows, the test rows' levels mostly seen in train) whose pairs of values name the rows (at least
PAIR_ROWS of the train rows hold a pair no other row holds). Everything else in the table is left to the other
candidates; the blend combines them.

Damping: each entity's bias is penalised once (a prior), not once per row, so an entity seen in few rows keeps a
bias near zero and one seen in many learns its own (DAMPING: an entity's bias is its rows' mean residual shrunk as
if it had DAMPING more rows at zero); its factors are penalised in proportion to its rows (FACTOR_DAMPINGS). The
rank, the factors' damping and the sweeps of alternating least squares are chosen on a holdout of the rows a model
is given, then it is refitted on all of them. Regression targets are standardised first; a binary output learns
logits."""

from __future__ import annotations

import numpy as np
import pandas as pd

from agentk.modalities import TABULAR
from tools.classical import Features
from tools.features import with_keys
from tools.task_data import TaskData

ENTITY_LEVELS = 20  # a column naming entities has more levels than this
REPEATED = 0.5  # and at least this share of its levels in more than one train row,
SHARED = 0.5  # and this share of the test rows' levels seen in the train rows
PAIR_ROWS = 0.9  # of the train rows whose pair of values no other train row holds: the pairs name the rows
DAMPING = 10.0  # rows' worth of prior on each entity's bias
# and on its factors, one of these shares of the entity's own rows (weighted-lambda ALS, Zhou et al. 2008), with
# one of RANKS factors, both chosen on a holdout. On a synthetic rank-4 ratings table of 56,000 rows, a constant
# prior of 3, 10 or 30 rows gave test RMSE 1.01, 0.998 and 1.040 (biases alone 1.052), a share of 0.03, 0.1 and
# 0.3: 1.073, 0.969 and 1.045. On a rank-3 table of 5,000 rows, 3 factors at 0.1: 0.857, 8 factors: 1.04.
FACTOR_DAMPINGS = (0.1, 0.3)
RANKS = (2, 4, 8)
PATIENCE = 3  # sweeps without a better holdout loss before a fit on the holdout stops
MAX_SWEEPS = 20  # alternating sweeps (each side once) at most
HOLDOUT = 0.2  # of the rows a fit is given, held out to choose its sweeps
MIN_HOLDOUT_ROWS = 50  # fewer rows: no holdout, every sweep
INIT_SCALE = 0.5  # the factors' random start
LOGISTIC_WEIGHT = 0.25  # a log loss's curvature at p = 1/2: the damping in rows' worth for classes


def entity_pair(train: pd.DataFrame, test: pd.DataFrame) -> tuple[str, str] | None:
    """The two columns whose values name entities and whose pairs name the rows, or None; of several such pairs,
    the one whose columns have the most levels together."""
    shared = [c for c in train.columns if c in test.columns and train[c].dtype != bool]
    entities = [c for c in shared if _names_entities(train[c], test[c])]
    pairs = []
    for i, a in enumerate(entities):
        for b in entities[i + 1 :]:
            keys = train[a].astype(str) + "\x00" + train[b].astype(str)
            if (~keys.duplicated(keep=False)).mean() >= PAIR_ROWS:
                pairs.append((train[a].nunique() * train[b].nunique(), a, b))
    return max(pairs)[1:] if pairs else None


def _names_entities(train: pd.Series, test: pd.Series) -> bool:
    present = train.dropna()
    if present.dtype.kind == "f" and not np.all(np.mod(present, 1) == 0):
        return False  # measurements, not names
    counts = present.astype(str).value_counts()
    if len(counts) <= ENTITY_LEVELS or (counts > 1).mean() < REPEATED:
        return False
    return test.dropna().astype(str).isin(set(counts.index)).mean() >= SHARED


def applies(task: TaskData) -> str | None:
    if TABULAR.name not in task.modalities:
        return f"no {TABULAR.name} input"
    if any(o["kind"] == "multiclass" for o in task.outputs):
        return "a multiclass output: the factorisation predicts values and binary outcomes"
    if entity_pair(*with_keys(task)) is None:
        return "no pair of columns naming entities (users and items) whose pairs name the rows"
    return None


def features(task: TaskData, log=print) -> Features:
    train, test = with_keys(task)
    a, b = entity_pair(train, test)
    codes, levels = [], []
    for c in (a, b):
        # the levels of train and test together; a missing value is a level of its own
        code, uniques = pd.factorize(pd.concat([train[c], test[c]], ignore_index=True).astype(str))
        codes.append(code)
        levels.append(len(uniques))
    X = np.stack(codes, axis=1).astype(float)
    n = len(train)
    return Features(
        X[:n],
        X[n:],
        f"the entity pair ({a!r}: {levels[0]} levels, {b!r}: {levels[1]} levels)",
        {
            "biases": lambda kind: Factorisation(levels, (0,), kind),
            "biases and factors": lambda kind: Factorisation(levels, RANKS, kind),
        },
        {"pair": [a, b], "levels": levels},
    )


class Factorisation:
    """y ~ offset + bias_a[i] + bias_b[j] + <factors_a[i], factors_b[j]> on X's two columns of level codes, with as
    many factors as the one of `factors` (ranks) that does best on a holdout of the rows; kind
    "regression" (squared error, on the standardised target) or "classification" (two classes, logistic).

    Fitted by alternating least squares: with one side's parameters fixed, each entity of the other side has a
    ridge problem of its own (its bias and factors against the other side's), all solved at once; for classes a
    Newton step of the same problem on the log loss (iteratively reweighted). The sweeps are chosen on a holdout."""

    def __init__(self, levels: list[int], factors: tuple[int, ...], kind: str, seed: int = 0):
        self.levels, self.factors, self.kind, self.seed = levels, factors, kind, seed

    def fit(self, X: np.ndarray, y: np.ndarray) -> Factorisation:
        X = np.asarray(X, dtype=np.int64)
        y = np.asarray(y, dtype=float)
        if self.kind == "classification":
            self.classes_ = np.unique(y).astype(int)
            if len(self.classes_) != 2:
                raise ValueError(f"the factorisation takes two classes, not {len(self.classes_)}")
            y = (y == self.classes_[1]).astype(float)
            self.mean_, self.scale_ = 0.0, 1.0
        else:
            self.mean_, self.scale_ = float(y.mean()), float(y.std()) or 1.0
            y = (y - self.mean_) / self.scale_
        order = np.random.default_rng(self.seed).permutation(len(y))
        held = order[: int(len(y) * HOLDOUT)] if len(y) >= MIN_HOLDOUT_ROWS else order[:0]
        # the rank, its damping and the sweeps, chosen on the holdout: too many factors for the rows, or too little
        # damping, overfit within a few sweeps; too much pulls every factor to zero
        self.rank_, self.damping_, self.sweeps_ = self.factors[-1], FACTOR_DAMPINGS[0], MAX_SWEEPS
        if len(held):
            kept = order[len(held) :]
            best = np.inf
            for rank in self.factors:
                for damping in FACTOR_DAMPINGS if rank else FACTOR_DAMPINGS[:1]:
                    losses = self._fit(X[kept], y[kept], rank, damping, MAX_SWEEPS, (X[held], y[held]))
                    if min(losses) < best:
                        best, self.rank_, self.damping_ = min(losses), rank, damping
                        self.sweeps_ = int(np.argmin(losses)) + 1
        self._fit(X, y, self.rank_, self.damping_, self.sweeps_)
        return self

    def _fit(self, X, y, rank: int, damping: float, sweeps: int, holdout=None) -> list[float]:
        """Fits `rank` factors damped by `damping` (and the biases) on (X, y) for `sweeps` sweeps, or until the
        holdout's loss has not improved for PATIENCE sweeps; the holdout's loss after each sweep."""
        rng = np.random.default_rng(self.seed)
        logistic = self.kind == "classification"
        share = float(np.clip(y.mean(), 1e-6, 1 - 1e-6))
        self.offset_ = float(np.log(share / (1 - share))) if logistic else 0.0
        # per side: each entity's [bias, factors...]; a side's design against the other is [1, other's factors]
        self.theta_ = [np.hstack([np.zeros((n, 1)), rng.normal(0.0, INIT_SCALE, (n, rank))]) for n in self.levels]
        penalty = DAMPING * (LOGISTIC_WEIGHT if logistic else 1.0)
        losses = []
        for _ in range(sweeps):
            for side in (0, 1):
                self._sweep(X, y, side, penalty, damping, logistic)
            eta = self._eta(X)
            residual = y - (_sigmoid(eta) if logistic else eta)
            weight = _sigmoid(eta) * (1 - _sigmoid(eta)) if logistic else np.ones_like(y)
            self.offset_ += float(residual.sum() / max(weight.sum(), 1e-9))
            if holdout is not None:
                losses.append(self._loss(*holdout))
                if len(losses) > PATIENCE and min(losses[-PATIENCE:]) > min(losses):
                    break
        return losses

    def _sweep(self, X, y, side: int, penalty: float, damping: float, logistic: bool) -> None:
        """One (Newton) step of every entity of `side` on its ridge problem, the other side held fixed."""
        own, other = X[:, side], X[:, 1 - side]
        theta = self.theta_[side]
        design = np.hstack([np.ones((len(y), 1)), self.theta_[1 - side][other, 1:]])
        eta = self._eta(X)
        if logistic:
            p = _sigmoid(eta)
            residual, weight = y - p, p * (1 - p)
        else:
            residual, weight = y - eta, np.ones_like(y)
        d, n = design.shape[1], len(theta)
        hessian = np.zeros((n, d, d))
        for i in range(d):
            for j in range(i, d):
                hessian[:, i, j] = np.bincount(own, weight * design[:, i] * design[:, j], minlength=n)
                hessian[:, j, i] = hessian[:, i, j]
        # the bias's prior: DAMPING rows' worth; the factors': a share of the entity's own rows (ALS-WR)
        rows = np.bincount(own, minlength=n).astype(float)
        prior = np.zeros((n, d))
        prior[:, 0] = penalty
        prior[:, 1:] = (penalty / DAMPING * damping * np.maximum(rows, 1.0))[:, None]
        hessian[:, np.arange(d), np.arange(d)] += prior
        gradient = np.stack([np.bincount(own, residual * design[:, i], minlength=n) for i in range(d)], axis=1)
        gradient -= prior * theta
        theta += np.linalg.solve(hessian, gradient[:, :, None])[:, :, 0]

    def _eta(self, X: np.ndarray) -> np.ndarray:
        a, b = self.theta_[0][X[:, 0]], self.theta_[1][X[:, 1]]
        return self.offset_ + a[:, 0] + b[:, 0] + np.einsum("ij,ij->i", a[:, 1:], b[:, 1:])

    def _loss(self, X: np.ndarray, y: np.ndarray) -> float:
        eta = self._eta(X)
        if self.kind != "classification":
            return float(np.mean((eta - y) ** 2))
        p = np.clip(_sigmoid(eta), 1e-12, 1 - 1e-12)
        return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self._eta(np.asarray(X, dtype=np.int64)) * self.scale_ + self.mean_

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        p1 = _sigmoid(self._eta(np.asarray(X, dtype=np.int64)))
        return np.stack([1 - p1, p1], axis=1)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x, -35, 35)))
