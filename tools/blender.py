"""The MLP blender (paper 3.2): after `blend_after` solutions, a small network learns to combine the solutions'
validation predictions. It is kept only when its honest score, K-fold cross-validated over the validation rows it
learns from, strictly beats the best single solution on those rows, and does so on 90 % of bootstrap resamples
of them.
A plain mean of the best solutions competes with it under the same rule: on a few hundred validation rows the
mean is often the sturdier blend, and the MLP displaces a qualifying mean only by beating it on most resamples too
(blend()). On a forecast the solver lets means alone compete (mlp=False; agentk/solve/solver.py says why).

Features are the solutions' model-space predictions side by side: logits for binary outputs, centred
log-probabilities for multiclass, values for regression, standardised. The network is one hidden layer plus a
linear skip (so a plain weighted average is easy to learn), with one head per output, trained full-batch with
weight decay; the number of steps is chosen by early stopping on an inner split of each training fold and the
final refit on all validation rows uses their median."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from tools.heads import head_loss, output_losses, target_scaling, to_model_space, width
from tools.resampling import at_most, wins_on_resamples

HIDDEN, LR, WEIGHT_DECAY, MAX_STEPS, PATIENCE, INNER_FRACTION, EPS = 32, 1e-2, 1e-3, 500, 40, 0.2, 1e-6
# the MLP learns from at most this many rows (a sample): a few dozen inputs need no more, and full-batch steps on
# the 800,000 validation rows of a 4 M-row table took over ten minutes; it still predicts every row
FIT_ROWS = 50_000
TINY = 1e-9  # a feature's spread below this (relative to its size) is rounding: the feature is constant


class BlendNet(nn.Module):
    def __init__(self, n_features: int, widths: list[int]):
        super().__init__()
        self.hidden = nn.Sequential(nn.Linear(n_features, HIDDEN), nn.ReLU())
        self.heads = nn.ModuleList(nn.Linear(HIDDEN, w) for w in widths)
        self.skips = nn.ModuleList(nn.Linear(n_features, w, bias=False) for w in widths)

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        h = self.hidden(x)
        return [head(h) + skip(x) for head, skip in zip(self.heads, self.skips)]


@dataclass
class Blender:
    """A fitted blender: feature and target scaling plus the network, applied to model-space predictions."""

    outputs: list[dict]
    net: BlendNet
    mean: np.ndarray
    std: np.ndarray
    y_mean: np.ndarray  # per output; 0 and 1 for classification outputs
    y_std: np.ndarray

    def predict(self, preds: list[np.ndarray]) -> np.ndarray:
        x = (features(preds, self.outputs) - self.mean) / self.std
        with _torch_local(0), torch.no_grad():
            raw = self.net(torch.tensor(x, dtype=torch.float32))
        return to_model_space(raw, self.outputs, self.y_mean, self.y_std)


@dataclass
class BlendResult:
    kept: bool
    cv_score: float  # the kept blend's: out of fold for the MLP, the validation score for a mean (it learns nothing)
    best_single_score: float
    best_single_index: int
    test_pred: np.ndarray
    val_pred: np.ndarray  # the kept blend's validation predictions (the MLP's out of fold), else the best single's
    model: Blender | None  # the MLP refit on all validation rows, when it is the kept blend
    members: list[int] | None = None  # the solutions averaged, when a mean is the kept blend

    @property
    def how(self) -> str:
        return "mean" if self.members else "MLP"

    def predict(self, preds: list[np.ndarray]) -> np.ndarray:
        """Model-space predictions for new rows from the solutions' predictions there: what this result chose."""
        if not self.kept:
            return np.asarray(preds[self.best_single_index], dtype=float)
        if self.members:
            return np.mean([np.asarray(preds[i], dtype=float) for i in self.members], axis=0)
        return self.model.predict(preds)


def blend(
    val_preds: list[np.ndarray],
    y_val: np.ndarray,
    outputs: list[dict],
    score_fn: Callable[[np.ndarray, np.ndarray], float],
    higher_is_better: bool,
    val_rows: np.ndarray,
    test_preds: list[np.ndarray],
    folds: int = 5,
    seed: int = 0,
    final_test_preds: list[np.ndarray] | None = None,
    mlp: bool = True,
    groups: np.ndarray | None = None,
) -> BlendResult:
    """Blend the solutions' validation predictions (each (rows, total width), model space) against y_val
    ((rows, n_outputs): 0/1, class codes or values). score_fn(pred, val_rows) is the competition metric.
    Two kinds of blend compete: the mean of the k best solutions by validation (k >= 2; it learns no weights, so
    its validation score is honest, and it averages final_test_preds, the solutions' own test predictions, refits
    included) and the MLP (its score cross-validated; it predicts from test_preds, the models it learned from).
    Either must beat the best single solution overall and on most bootstrap resamples of the validation
    rows (tools/resampling.py); the better one is kept (the mean on a tie), and the MLP over a qualifying mean only
    when it also beats that mean on most resamples. mlp=False: means alone compete. groups: each validation row's
    group when the rows come in groups the test does not share; the MLP's folds and the resamples then keep each
    group whole, as the validation split did (a group's rows on both sides of a fold would score the MLP on rows
    whose group it learnt from)."""
    total = sum(width(o) for o in outputs)
    shapes = {np.shape(p) for p in val_preds}
    if not val_preds or shapes != {(len(val_rows), total)} or len(test_preds) != len(val_preds):
        raise ValueError(
            f"blend needs one validation and one test prediction per solution, each validation one of "
            f"shape ({len(val_rows)}, {total}); got validation shapes {sorted(shapes)} for "
            f"{len(val_preds)} solutions and {len(test_preds)} test predictions"
        )
    y_val = np.asarray(y_val, dtype=float).reshape(len(val_rows), len(outputs))
    vals = [np.asarray(p, dtype=float) for p in val_preds]
    finals = [np.asarray(p, dtype=float) for p in (final_test_preds or test_preds)]
    singles = [score_fn(p, val_rows) for p in vals]
    pick = max if higher_is_better else min
    best = singles.index(pick(singles))
    fallback = BlendResult(False, float("nan"), singles[best], best, finals[best], vals[best], None)
    fold_of = _folds(y_val, outputs, folds, seed, groups)
    if fold_of is None or len(val_preds) < 2:
        return fallback

    def beats(score: float, pred: np.ndarray, their_score: float, theirs: np.ndarray) -> bool:
        better = score > their_score if higher_is_better else score < their_score
        return (
            bool(np.isfinite(pred).all())
            and better
            and bool(
                wins_on_resamples(
                    lambda idx: score_fn(pred[idx], val_rows[idx]),
                    lambda idx: score_fn(theirs[idx], val_rows[idx]),
                    len(val_rows),
                    higher_is_better,
                    groups,
                )
            )
        )

    def qualifies(score: float, pred: np.ndarray) -> bool:
        return beats(score, pred, singles[best], vals[best])

    kept, tried = [], []  # the blends that qualify; every blend's score (the log shows the best)
    order = sorted(range(len(vals)), key=lambda i: singles[i], reverse=higher_is_better)
    for k in range(2, len(vals) + 1):
        members = order[:k]
        mean = np.mean([vals[i] for i in members], axis=0)
        tried.append(score := score_fn(mean, val_rows))
        if qualifies(score, mean):
            test = np.mean([finals[i] for i in members], axis=0)
            kept.append(BlendResult(True, score, singles[best], best, test, mean, None, members))
    oof, steps = np.zeros_like(vals[0]), []
    for k in range(fold_of.max() + 1 if mlp else 0):
        held = fold_of == k
        model, n = _fit([p[~held] for p in vals], y_val[~held], outputs, seed + k)
        oof[held] = model.predict([p[held] for p in vals])
        steps.append(n)
    if mlp and np.isfinite(oof).all():
        tried.append(cv := score_fn(oof, val_rows))
        if qualifies(cv, oof):
            model, _ = _fit(vals, y_val, outputs, seed, steps=int(np.median(steps)))
            kept.append(BlendResult(True, cv, singles[best], best, model.predict(test_preds), oof, model))
    if not kept:
        fallback.cv_score = pick(tried) if tried else float("nan")
        return fallback
    mlp = next((r for r in kept if not r.members), None)
    means = [r for r in kept if r.members]
    if not means:
        return mlp
    mean = min(means, key=lambda r: -r.cv_score if higher_is_better else r.cv_score)
    # the MLP over a qualifying mean only by the same rule: it learns weights on the rows that judge it and predicts
    # from the models before their refits, so a gain a few rows carry does not reach the test (digits images: out
    # of fold 0.9965 against the mean's 0.993, test 0.986 against 0.994)
    if mlp and beats(mlp.cv_score, mlp.val_pred, mean.cv_score, mean.val_pred):
        return mlp
    return mean


def features(preds: list[np.ndarray], outputs: list[dict]) -> np.ndarray:
    """The solutions' predictions as network inputs: probabilities on the logit scale, where blending is additive."""
    cols = []
    for pred in preds:
        pred = np.asarray(pred, dtype=float)
        start = 0
        for o in outputs:
            block = pred[:, start : start + width(o)]
            start += width(o)
            if o["kind"] == "binary":
                p = np.clip(block, EPS, 1 - EPS)
                cols.append(np.log(p) - np.log1p(-p))
            elif o["kind"] == "multiclass":
                logp = np.log(np.clip(block, EPS, 1.0))
                cols.append(logp - logp.mean(axis=1, keepdims=True))
            else:
                cols.append(block)
    return np.concatenate(cols, axis=1)


def _fit(
    preds: list[np.ndarray], y: np.ndarray, outputs: list[dict], seed: int, steps: int | None = None
) -> tuple[Blender, int]:
    """A blender fitted on these rows (FIT_ROWS of them at most), and its step count: `steps` if given, else
    early-stopped on an inner split."""
    if len(y) > FIT_ROWS:
        sample = at_most(np.arange(len(y)), FIT_ROWS, np.random.default_rng(seed))
        preds, y = [np.asarray(p)[sample] for p in preds], y[sample]
    x = features(preds, outputs)
    mean, std = x.mean(axis=0), x.std(axis=0)
    # a column constant up to rounding (the constant solution's; std ~1e-14) is centred, not scaled: its test value
    # differs by the refit's small shift of the prior, which 1 / 1e-14 blew up into every test prediction
    std = np.where(std > TINY * np.maximum(1.0, np.abs(mean)), std, 1.0)
    y_mean, y_std = target_scaling(y, outputs)
    x = torch.tensor((x - mean) / std, dtype=torch.float32)
    yt = torch.tensor((y - y_mean) / y_std, dtype=torch.float32)
    with _torch_local(seed):
        net = BlendNet(x.shape[1], [width(o) for o in outputs])
        if steps is None:
            inner = torch.from_numpy(np.random.default_rng(seed).random(len(x)) < INNER_FRACTION)
            if inner.all() or not inner.any():
                inner[0] = ~inner[0]
            steps = _train(net, x[~inner], yt[~inner], outputs, MAX_STEPS, (x[inner], yt[inner]))
        else:
            _train(net, x, yt, outputs, steps)
    return Blender(outputs, net.eval(), mean, std, y_mean, y_std), steps


def _train(
    net: BlendNet,
    x: torch.Tensor,
    y: torch.Tensor,
    outputs: list[dict],
    steps: int,
    stop_on: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> int:
    """Full-batch AdamW; with stop_on, keeps the weights of the step with the lowest loss there and returns it."""
    opt = torch.optim.AdamW(net.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)
    losses = output_losses(outputs)
    best_loss, best_step, best_state = float("inf"), 0, None
    for step in range(1, steps + 1):
        opt.zero_grad()
        head_loss(net(x), y, losses).backward()
        opt.step()
        if stop_on is not None:
            with torch.no_grad():
                loss = head_loss(net(stop_on[0]), stop_on[1], losses).item()
            if loss < best_loss:
                best_loss, best_step = loss, step
                best_state = {k: v.clone() for k, v in net.state_dict().items()}
            elif step - best_step >= PATIENCE:
                break
    if best_state is not None:
        net.load_state_dict(best_state)
    return max(best_step, 1) if stop_on is not None else steps


def _folds(
    y: np.ndarray, outputs: list[dict], folds: int, seed: int, groups: np.ndarray | None = None
) -> np.ndarray | None:
    """Each row's fold, stratified on the first classification output: a class's rows are dealt round-robin in
    random order, so every fold sees the classes that have enough rows and a rare class only misses some folds.
    The fold count shrinks to the smallest class with at least two rows; None when there are too few rows. With
    groups, whole groups are dealt instead (scikit-learn's GroupKFold, shuffled), at most one fold per group."""
    if groups is not None:
        from sklearn.model_selection import GroupKFold

        k = min(folds, len(y) // 4, len(np.unique(groups)))
        if k < 2:
            return None
        fold_of = np.empty(len(y), dtype=int)
        for i, (_, held) in enumerate(GroupKFold(k, shuffle=True, random_state=seed).split(y, groups=groups)):
            fold_of[held] = i
        return fold_of
    rng = np.random.default_rng(seed)
    strata = next((y[:, j] for j, o in enumerate(outputs) if o["kind"] != "regression"), np.zeros(len(y)))
    _, counts = np.unique(strata, return_counts=True)
    k = min(folds, len(y) // 4, min((c for c in counts if c >= 2), default=0))
    if k < 2:
        return None
    fold_of = np.empty(len(y), dtype=int)
    offset = 0
    for value in np.unique(strata):
        rows = rng.permutation(np.flatnonzero(strata == value))
        fold_of[rows] = (offset + np.arange(len(rows))) % k
        offset += len(rows)  # continue the deal where the last class stopped, so fold sizes stay even
    return fold_of


@contextmanager
def _torch_local(seed: int):
    """One thread and a seeded CPU generator for deterministic training, with the caller's settings restored."""
    threads, state = torch.get_num_threads(), torch.get_rng_state()
    torch.set_num_threads(1)
    torch.default_generator.manual_seed(seed)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
        torch.set_rng_state(state)
