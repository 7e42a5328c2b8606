"""Unit tests of the target transform: numeric, finite, invertible into the submission's columns."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from agentk.core.isolated import call_isolated, type_name
from agentk.workspace import TARGET_TRANSFORM, code_file
from unit_tests_lib.common import fail, load, prediction_columns, train_targets

KINDS = {"binary", "multiclass", "regression"}


def check_transform(ws: Path) -> None:
    y = train_targets(ws)
    child = call_isolated(_round_trip, ws, y=y)
    for name in child["missing"]:
        fail(f"{code_file(TARGET_TRANSFORM)} must define {name}")
    t = child["t"]
    t = t[:, None] if t.ndim == 1 else t
    if t.shape[0] != len(y):
        fail(f"transform returned {t.shape[0]} rows for {len(y)} targets: keep one row per sample")
    if not np.isfinite(t).all():
        fail(
            f"transform returned {int((~np.isfinite(t)).sum())} NaN/inf values: every target must encode to a finite number"
        )
    outputs = child["OUTPUTS"]
    if not isinstance(outputs, (list, tuple)) or not all(isinstance(o, dict) for o in outputs):
        fail(f"OUTPUTS must be a list of dicts (name, kind, n_classes), got {type_name(outputs)}")
    if len(outputs) != t.shape[1]:
        fail(f"OUTPUTS lists {len(outputs)} heads but transform returns {t.shape[1]} columns: one per target")
    for j, o in enumerate(outputs):
        if o.get("kind") not in KINDS:
            fail(f"OUTPUTS[{j}] kind {o.get('kind')!r} must be one of {sorted(KINDS)}")
        if o["kind"] == "binary" and not set(np.unique(t[:, j])) <= {0.0, 1.0}:
            fail(f"binary output {o['name']!r} must be 0/1, found {np.unique(t[:, j])[:5]}")
        if o["kind"] == "multiclass":
            n = int(o.get("n_classes", 0))
            if n < 2 or t[:, j].min() < 0 or t[:, j].max() >= n or np.any(t[:, j] % 1):
                fail(
                    f"multiclass output {o['name']!r} must hold integer codes 0..{n - 1}, found {np.unique(t[:, j])[:5]}"
                )
    inv = child["inverse"]
    if not isinstance(inv, pd.DataFrame):
        fail(f"inverse_transform must return a DataFrame, got {type_name(inv)}")
    expected = prediction_columns(ws)
    if list(inv.columns) != expected:
        fail(
            f"inverse_transform columns {list(inv.columns)[:8]} must be the submission's prediction columns {expected[:8]}"
        )
    if len(inv) != len(y) or inv.isna().any().any():
        fail("inverse_transform must return one complete row per input row (no NaN)")
    for c in y.columns:  # a label column submitted as per-class probabilities: the top class must be the label
        labels = y[c].astype(str)
        if c not in inv.columns and set(labels) <= set(inv.columns) and len(set(labels)) > 1:
            top = inv[sorted(set(labels))].idxmax(axis=1).to_numpy()
            wrong = int((top != labels.to_numpy()).sum())
            if wrong:
                fail(
                    f"inverse_transform(transform(y)) gives the highest probability to another class than {c!r} in "
                    f"{wrong} of {len(y)} rows: the two must be inverses (keep rows and class order)"
                )
    for c in set(inv.columns) & set(y.columns):
        a, b = inv[c].to_numpy(), y[c].to_numpy()
        if _numeric(a) != _numeric(b):
            continue  # a probability of a label: checked by the metric's perfect-score test
        same = (
            np.allclose(a.astype(float), b.astype(float), rtol=1e-6, atol=1e-9)
            if _numeric(a)
            else all(_same_labels(x, y) for x, y in zip(a, b))
        )
        if not same and _numeric(a) and _binarised(a.astype(float), b.astype(float)):
            continue  # a fraction the metric scores at a threshold: 0/1 on either side of it
        if not same:
            fail(
                f"inverse_transform(transform(y)) changes column {c!r} (e.g. {b[:3].tolist()} -> {a[:3].tolist()}): "
                "the two must be inverses"
            )


def _round_trip(ws: Path, out: dict, y: pd.DataFrame) -> None:
    """In a child (call_isolated): transform(y) as floats, OUTPUTS, and inverse_transform of the transform."""
    mod = load(ws, TARGET_TRANSFORM)
    out["missing"] = [name for name in ("transform", "inverse_transform", "OUTPUTS") if not hasattr(mod, name)]
    if out["missing"]:
        return
    t = np.asarray(mod.transform(y), dtype=float)
    out["t"], out["OUTPUTS"] = t, mod.OUTPUTS
    out["inverse"] = mod.inverse_transform(t[:, None] if t.ndim == 1 else t)


def _binarised(got: np.ndarray, want: np.ndarray) -> bool:
    """got is want in [0, 1] cut at one threshold: 0/1, and every row given 1 has a larger value than any given 0."""
    if not (np.isin(got, (0, 1)).all() and ((want >= 0) & (want <= 1)).all()) or len(set(got)) < 2:
        return False
    return bool(want[got == 1].min() > want[got == 0].max())


def _same_labels(got, want) -> bool:
    """A label, a set of labels in one string ("3 17 42", any order), or a ranking whose first label is the truth."""
    got, want = str(got), str(want)
    if got == want:
        return True
    g, w = got.split(), want.split()
    return sorted(g) == sorted(w) or (len(w) == 1 and len(g) > 1 and g[0] == w[0])


def _numeric(a) -> bool:
    s = pd.Series(a)
    return pd.api.types.is_numeric_dtype(s) and s.dtype != bool
