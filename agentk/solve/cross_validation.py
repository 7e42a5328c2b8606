"""Cross-validated selection for small tables. On a few hundred rows the validation rows (a fifth of them) are too few
to choose among solutions: on wine's 28 validation rows a network validated at a log loss of 0.0007 and tested at
0.18, where the classical candidate validated at 0.07 and tested at 0.13. So when a tabular-only task has at most
CV_ROWS train rows, each solution's recipe, as it was built (its model, configuration and epochs fixed), is run
again on FOLDS folds of every train row, and the solutions are compared by their out-of-fold score over all rows
(5-fold on wine: classical 0.057, AutoGluon 0.061, network 0.245).

A recipe per kind: the constant's statistic; the classical candidate's chosen model on its features, with what it
learnt on the fit rows fixed (a Gaussian process's kernel: tools/classical.py); the network's
configuration trained for its best trial's epochs; AutoGluon's chosen model's members with the solution's whole work
(agentk/solve/kinds/autogluon.fold says why). The blend then learns from these out-of-fold predictions of every
row (not from the validation rows alone) and keeps its own (the MLP's out of fold, a mean's as it predicts). A blend made without them (an earlier solve
that did not cross-validate) counts as the mean of its members' out-of-fold predictions, or, an MLP that learnt
from the validation rows, is no candidate. The recipes never read the validation split: every fold is a split of
its own (TaskData.with_split)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from agentk.core.fileio import read_json
from agentk.modalities import TABULAR
from agentk.solve.kinds import KINDS
from agentk.workspace import Workspace
from tools.task_data import TaskData

# tables up to this many train rows are compared by cross-validation; on 2 cores it adds 65-70 s to the solve on
# 810-2,000 rows, nearly all of it AutoGluon's time once more, shared by the folds (which fit as many models as
# the solution's own fit did: 10 of 10 per fold on spaceship-like 1,800 rows)
CV_ROWS = 2000
FOLDS = 5


@dataclass
class Folded:
    pred: np.ndarray  # out-of-fold predictions in model space, every train row
    seconds: float  # what rebuilding the recipe on every fold took


def keep(path: Path, folded: Folded) -> None:
    """Writes a solution's out-of-fold predictions whole or not at all (a resumed solve trusts the file)."""
    path.parent.mkdir(parents=True, exist_ok=True)  # a blend's folder is made when it is saved, after this
    tmp = path.with_name(f".{path.name}")
    with open(tmp, "wb") as f:
        np.savez(f, pred=folded.pred, seconds=folded.seconds)
    os.replace(tmp, path)


def seconds(solution) -> float:
    """About what rebuilding a solution's recipe on every fold takes: its kind's estimate where it has one
    (fold_seconds), else what building the solution took."""
    estimate = getattr(KINDS.get(solution.kind), "fold_seconds", None)
    return estimate(solution, FOLDS) if estimate else solution.seconds


def applies(task: TaskData) -> bool:
    """Small tables only: a table's recipes refit in seconds, and there the validation rows are fewest."""
    return task.modalities == [TABULAR.name] and len(task.y) <= CV_ROWS


class CrossValidation:
    """Out-of-fold predictions over every train row of a solution's recipe (its kind's `fold`, agentk/solve/kinds),
    kept in its folder (a resumed solve reads them)."""

    def __init__(self, task: TaskData, budget, log, deadline=None):
        self.task, self.budget, self.log = task, budget, log
        self.deadline = deadline  # the solve's (agentk/core/deadline.py): a recipe's folds share what is left
        self.workspace = Workspace(task.ws)
        self.folds = task.folds(FOLDS)
        self.features: dict = {}  # a classical candidate's features, built once for every fold

    def predictions(self, sid: str, kind: str, done: dict[str, np.ndarray], advance=lambda: None) -> Folded | None:
        """The solution's out-of-fold predictions (model space, every train row), None for a solution without a
        recipe (an MLP blend). `done`: the out-of-fold predictions of the solutions before it (a blend's members)."""
        files = self.workspace.solution(sid)
        if files.cross_validated.exists():
            with np.load(files.cross_validated) as saved:
                return Folded(saved["pred"], float(saved["seconds"]))
        plan = read_json(files.plan)
        if kind == "blend":
            members = plan.get("members")
            return Folded(np.mean([done[m] for m in members], axis=0), 0.0) if members else None
        recipe = KINDS[kind].fold
        t0 = time.monotonic()
        oof = np.zeros((len(self.task.y), sum(self.task.widths)))
        for k, (train, held) in enumerate(self.folds):
            oof[held] = recipe(self, sid, plan, train, held, k)
            advance()
        folded = Folded(oof, time.monotonic() - t0)
        keep(files.cross_validated, folded)
        return folded
