"""Unit test of the metric stage's code: self-contained, finite, and it ranks the truth above shuffled targets."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from agentk.workspace import METRIC, TARGET_TRANSFORM, Workspace, code_file
from unit_tests_lib.common import fail, load, train_targets

FORBIDDEN = re.compile(r"^\s*(from|import)\s+(agentk|tools|stages|unit_tests_lib)\b", re.M)


def check_metric(ws: Path) -> None:
    file = code_file(METRIC)
    if FORBIDDEN.search(Workspace(ws).code(METRIC).read_text()):
        fail(f"{file} must be self-contained: do not import agentk, tools, stages or unit_tests_lib")
    mod = load(ws, METRIC)
    if not isinstance(getattr(mod, "HIGHER_IS_BETTER", None), bool):
        fail(f"{file} must set HIGHER_IS_BETTER = True or False")
    if not callable(getattr(mod, "metric", None)):
        fail(f"{file} must define metric(y_true, y_pred)")
    transform = load(ws, TARGET_TRANSFORM)
    y = train_targets(ws).iloc[:3000].reset_index(drop=True)
    t = np.asarray(transform.transform(y), dtype=float).reshape(len(y), -1)
    perfect = float(mod.metric(y, transform.inverse_transform(t)))
    if not np.isfinite(perfect):
        fail(f"metric of the true targets against themselves is {perfect}: it must be a finite number")
    shuffled = float(mod.metric(y, transform.inverse_transform(np.random.default_rng(0).permutation(t))))
    if y.drop_duplicates().shape[0] > 1:
        better = perfect > shuffled if mod.HIGHER_IS_BETTER else perfect < shuffled
        if not better:
            fail(
                f"metric scores perfect predictions {perfect:.6g} and shuffled ones {shuffled:.6g} with "
                f"HIGHER_IS_BETTER={mod.HIGHER_IS_BETTER}: fix the direction or the column alignment"
            )
