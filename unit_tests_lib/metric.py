"""Unit test of the metric stage's code: self-contained, finite, and it ranks the truth above shuffled targets."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from agentk.core.isolated import call_isolated
from agentk.workspace import METRIC, TARGET_TRANSFORM, Workspace, code_file
from unit_tests_lib.common import fail, load, train_targets

FORBIDDEN = re.compile(r"^\s*(from|import)\s+(agentk|tools|stages|unit_tests_lib)\b", re.M)


def check_metric(ws: Path) -> None:
    file = code_file(METRIC)
    if FORBIDDEN.search(Workspace(ws).code(METRIC).read_text()):
        fail(f"{file} must be self-contained: do not import agentk, tools, stages or unit_tests_lib")
    y = train_targets(ws).iloc[:3000].reset_index(drop=True)
    child = call_isolated(_scores, ws, y=y)
    higher = child["HIGHER_IS_BETTER"]
    if not isinstance(higher, bool):
        fail(f"{file} must set HIGHER_IS_BETTER = True or False")
    if not child["has_metric"]:
        fail(f"{file} must define metric(y_true, y_pred)")
    perfect = child["perfect"]
    if not np.isfinite(perfect):
        fail(f"metric of the true targets against themselves is {perfect}: it must be a finite number")
    shuffled = child["shuffled"]
    if y.drop_duplicates().shape[0] > 1:
        better = perfect > shuffled if higher else perfect < shuffled
        if not better:
            fail(
                f"metric scores perfect predictions {perfect:.6g} and shuffled ones {shuffled:.6g} with "
                f"HIGHER_IS_BETTER={higher}: fix the direction or the column alignment"
            )


def _scores(ws: Path, out: dict, y: pd.DataFrame) -> None:
    """In a child (call_isolated): the metric of the targets' round trip through the transform, and of it shuffled."""
    mod = load(ws, METRIC)
    out["HIGHER_IS_BETTER"] = getattr(mod, "HIGHER_IS_BETTER", None)
    out["has_metric"] = callable(getattr(mod, "metric", None))
    if not isinstance(out["HIGHER_IS_BETTER"], bool) or not out["has_metric"]:
        return
    transform = load(ws, TARGET_TRANSFORM)
    t = np.asarray(transform.transform(y), dtype=float).reshape(len(y), -1)
    out["perfect"] = float(mod.metric(y, transform.inverse_transform(t)))
    out["shuffled"] = float(mod.metric(y, transform.inverse_transform(np.random.default_rng(0).permutation(t))))
