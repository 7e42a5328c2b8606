"""The constant: the floor every other solution must beat. The best prediction that ignores the inputs (a class
prior, the target's mean or median), or reads one categorical column of few levels (that statistic per level)."""

from __future__ import annotations

import time

import numpy as np

from agentk.modalities import TABULAR
from agentk.solve.solution import Solution
from tools.metrics import RELATIVE_ERROR
from tools.task_data import TaskData

NAME = "constant"
MAX_LEVELS = 50  # a column with at most this many levels may carry a per-level constant
MIN_LEVEL_ROWS = 5  # a level with fewer rows gets the overall statistic
CONSTANT_FOLDS = 5
WORDS = {"prior": "class priors", "uniform": "every class alike", "relative": "the relative error's best constant"}


def plans(solver) -> list[tuple[str, dict]]:
    return [(NAME, {})]


def build(solver, sid: str) -> Solution:
    """The best prediction that ignores the inputs, or reads one categorical column: per output the class prior
    or every class alike (what a balanced log loss scores best), or for a regression the mean or the median of the
    target (or a relative error's weighted one), or that statistic per level of the tab column of
    few levels that predicts best by cross-validation on the fit rows (e.g. a per-type median). The metric picks
    among them on the validation rows. Statistics come from the fit rows for the validation figure and from
    every row for the test prediction."""
    t0 = time.monotonic()
    fit, val = solver.task.split
    every = np.arange(len(solver.task.y))
    regression = any(o["kind"] == "regression" for o in solver.task.outputs)
    column = group_column(solver, fit) if regression else None
    stats = ["mean", "median"] if regression else ["prior", "uniform"]
    stats += ["relative"] if regression and solver.task.metric_name in RELATIVE_ERROR else []
    stats += [f"{stat} per {column}" for stat in ("mean", "median")] if column is not None else []
    candidates = {}
    for stat in stats:
        val_pred = statistic(solver.task, stat, fit, val)
        candidates[stat] = (solver.task.score(val_pred, val), val_pred)
    stat = next(iter(candidates))
    for other in candidates:
        if solver.task.better(candidates[other][0], candidates[stat][0]):
            stat = other
    score, val_pred = candidates[stat]
    if " per " in stat:
        levels = levels_of(solver.task, column)
        test_pred = per_level(solver.task, every, levels[0], levels[1], stat.split()[0])
        what = f"the target's {stat.split()[0]} per level of {column!r} (the overall one for a rare level)"
    else:
        test_pred = np.tile(solver.task.constant_row(every, stat), (len(solver.task.test), 1))
        what = WORDS.get(stat, f"the target's {stat}")
    return Solution(
        sid,
        "constant",
        f"constant prediction: {what} (model space) for every row; the floor every other solution must beat",
        float(score),
        val_pred,
        test_pred,
        time.monotonic() - t0,
        {"statistic": stat, "candidates": {k: v[0] for k, v in candidates.items()}},
    )


def statistic(task: TaskData, stat: str, train: np.ndarray, held: np.ndarray) -> np.ndarray:
    """A constant's statistic ("prior", "mean", "median per <column>"...) of the train rows, for the held train
    rows: the constant's validation candidates, and its recipe on each fold of a cross-validation."""
    if " per " in stat:
        levels = levels_of(task, stat.split(" per ", 1)[1])[0]
        return per_level(task, train, levels[train], levels[held], stat.split()[0])
    return np.tile(task.constant_row(train, stat), (len(held), 1))


def levels_of(task: TaskData, column: str) -> tuple[np.ndarray, np.ndarray]:
    """The column's values as strings, for the train rows and the test rows."""
    tab = (task.train.inputs[TABULAR.name], task.test.inputs[TABULAR.name])
    return tuple(frame[column].astype(str).to_numpy() for frame in tab)


def per_level(task: TaskData, rows: np.ndarray, row_levels: np.ndarray, levels: np.ndarray, stat: str) -> np.ndarray:
    """Model-space rows for `levels`: TaskData.constant_row over the `rows` of the same level (row_levels: theirs), the
    one over all `rows` for a level with fewer than MIN_LEVEL_ROWS of them."""
    overall = task.constant_row(rows, stat)
    pred = np.tile(overall, (len(levels), 1))
    for level in np.unique(levels):
        mine = rows[row_levels == level]
        if len(mine) >= MIN_LEVEL_ROWS:
            row = task.constant_row(mine, stat)
            pred[levels == level] = np.where(np.isfinite(row), row, overall)  # an output this level lacks
    return pred


def group_column(solver, fit: np.ndarray) -> str | None:
    """The tab column of 2 to MAX_LEVELS levels (an engineered one excluded) whose per-level median or mean
    scores best by K-fold cross-validation on the fit rows, if that beats the overall statistics; None without
    one. The validation rows play no part, so they can still judge the choice. The folds hold rows out as the
    validation split does (whole groups, spans of time): a level shared by a group's rows would else be learnt
    from the held rows' own group."""
    if TABULAR.name not in solver.task.modalities or len(fit) < 2 * CONSTANT_FOLDS:
        return None
    tab = solver.task.train.inputs[TABULAR.name]
    engineered = set((solver.feature_record or {}).get("added", {}))
    columns = [c for c in tab.columns if c not in engineered and 2 <= tab[c].nunique() <= MAX_LEVELS]
    position = np.empty(len(solver.task.y), dtype=int)
    position[fit] = np.arange(len(fit))  # a train row's place among the fit rows
    folds = [(position[a], position[b]) for a, b in solver.task.folds(CONSTANT_FOLDS, fit)]

    def cv(levels: np.ndarray | None, stat: str) -> float:
        pred = np.zeros((len(fit), sum(solver.task.widths)))
        for inner, outer in folds:
            if levels is None:
                pred[outer] = solver.task.constant_row(fit[inner], stat)
            else:
                pred[outer] = per_level(solver.task, fit[inner], levels[fit[inner]], levels[fit[outer]], stat)
        return solver.task.score(pred, fit)

    best, best_score = None, cv(None, "mean")
    for c, levels in [(None, None)] + [(c, tab[c].astype(str).to_numpy()) for c in columns]:
        for stat in ("mean", "median"):
            score = cv(levels, stat)
            if solver.task.better(score, best_score):
                best, best_score = c, score
    return best


def fold(cv, sid: str, plan: dict, train: np.ndarray, held: np.ndarray, k: int) -> np.ndarray:
    """Its recipe on a fold of a cross-validation: the same statistic of the fold's train rows."""
    return statistic(cv.task, plan["statistic"], train, held)
