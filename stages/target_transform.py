"""Target transform: transform(df) -> numeric array for a model; inverse_transform(array) -> the
submission's prediction columns. inverse_transform takes codes/values (one column per target) or class
probabilities (one column per class of each multi-class target)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from agentk.core.checks import Check
from agentk.core.engine import HOLE, Action, Context, Stage, fill
from agentk.policies.analysis import Analysis
from agentk.workspace import ROLE_TARGET_TRANSFORM, TARGET_MAP, TARGET_TRANSFORM, map_file
from tools.metrics import METRICS
from unit_tests_lib.targets import check_transform

TEMPLATE = f'''"""transform(df) -> float array (n, one column per target) for the model;
inverse_transform(array) -> DataFrame of the submission's prediction columns.
OUTPUTS describes the model's heads: kind binary | multiclass | regression, and n_classes."""
import numpy as np
import pandas as pd

{HOLE}

if __name__ == "__main__":
    y = pd.read_csv("{map_file(TARGET_MAP)}", dtype={{"id": str}}).drop(columns="id")
    t = transform(y)
    print("OUTPUTS:", OUTPUTS)
    print("transformed:", t.shape, t[:3].tolist())
    print(inverse_transform(t).head().to_string())
'''

# The expert's implementation, driven by the SPEC literal it writes above it.
BODY = """SPEC = {spec!r}
THRESHOLD = 0.5  # a binary label, or each label of a set, is predicted when its probability reaches this
TUNABLE = {tunable!r}  # decoding constants the solver tunes on validation rows for the metric
# class probabilities divided by the train class shares (a target's "prior") to this power, for a metric that weighs
# every class alike (a balanced log loss, a macro F1's argmax): 0 submits them as predicted, 1 as if the classes were
# equally common; of label sets, each label's probability against its share of the rows (before THRESHOLD)
BALANCE = {balance!r}
{cuts}

def _outputs(s):
    if s["kind"] == "multilabel":  # one binary head per label
        return [{{"name": f"{{s['column']}}={{c}}", "kind": "binary", "n_classes": 2}} for c in s["classes"]]
    return [{{"name": s["column"], "kind": s["kind"], "n_classes": len(s["classes"])}}]


OUTPUTS = [o for s in SPEC for o in _outputs(s)]


def _balanced(proba, prior):
    w = np.clip(proba, 0.0, None) / np.clip(np.asarray(prior, dtype=float), 1e-6, None) ** BALANCE
    return w / np.clip(w.sum(axis=1, keepdims=True), 1e-15, None)


def transform(df: pd.DataFrame) -> np.ndarray:
    cols = []
    for s in SPEC:
        v = df[s["column"]]
        if s["kind"] == "regression":
            v = v.astype(float).to_numpy()
            cols.append(np.log1p(np.clip(v, 0, None)) if s["log"] else v)
        elif s["kind"] == "multilabel":
            sets = [set(str(x).split()) for x in v.fillna("")]
            cols += [np.array([str(c) in row for row in sets], dtype=float) for c in s["classes"]]
        elif s["kind"] == "binary" and s["threshold"] is not None:  # a fraction the metric binarises
            cols.append((v.astype(float) >= s["threshold"]).to_numpy(float))
        elif s["kind"] == "binary":
            cols.append((v.astype(str) == str(s["positive"])).to_numpy(float))
        else:
            index = {{str(c): i for i, c in enumerate(s["classes"])}}
            cols.append(v.astype(str).map(index).to_numpy(float))
    return np.column_stack(cols)


def inverse_transform(arr) -> pd.DataFrame:
    arr = np.asarray(arr, dtype=float)
    arr = arr[:, None] if arr.ndim == 1 else arr
    n_codes = sum(len(s["classes"]) if s["kind"] == "multilabel" else 1 for s in SPEC)
    codes = arr.shape[1] == n_codes  # else: class probabilities for each multi-class target
    out, j = {{}}, 0
    for s in SPEC:
        classes = s["classes"]
        if s["kind"] == "multilabel":
            proba = arr[:, j:j + len(classes)]
            j += len(classes)
            if s["prior"]:  # each label's probability against its share of the rows, to BALANCE's power
                share = np.clip(np.asarray(s["prior"], dtype=float), 1e-6, 1 - 1e-6)
                on, off = proba / share ** BALANCE, (1 - proba) / (1 - share) ** BALANCE
                proba = on / np.clip(on + off, 1e-15, None)
            on = proba >= THRESHOLD
            on[np.arange(len(proba)), proba.argmax(axis=1)] = True
            out[s["columns"][0]] = [" ".join(str(c) for c, x in zip(classes, row) if x) for row in on]
        elif s["kind"] == "multiclass":
            if codes:
                proba = np.eye(len(classes))[np.clip(np.rint(arr[:, j]), 0, len(classes) - 1).astype(int)]
                j += 1
            else:
                proba = arr[:, j:j + len(classes)]
                j += len(classes)
                if s["prior"]:
                    proba = _balanced(proba, s["prior"])
            if s["submit"] == "proba_columns":  # a class no train row has: its share of train, about 1/(n+1)
                by_name = {{str(c): i for i, c in enumerate(classes)}}
                unseen = [col for col in s["columns"] if col not in by_name]
                for col in s["columns"]:
                    out[col] = proba[:, by_name[col]] * (1 - len(unseen) * s["unseen"]) if col in by_name else np.full(len(arr), s["unseen"])
            elif s["submit"] == "ranking":  # the k most likely classes, best first
                top = np.argsort(-proba, axis=1, kind="stable")[:, :s["k"]]
                out[s["columns"][0]] = [" ".join(str(classes[i]) for i in row) for row in top]
            else:
                out[s["columns"][0]] = [classes[i] for i in proba.argmax(axis=1)]
        else:
            v = arr[:, j]
            j += 1
            if s["kind"] == "regression" and s["cuts"]:  # ordinal ratings: the value cut at the CUT_ points
                cuts = [globals()[name] for name in s["cuts"]]
                out[s["columns"][0]] = [classes[i] for i in np.searchsorted(cuts, v, side="right")]
            elif s["kind"] == "regression":
                out[s["columns"][0]] = np.clip(np.expm1(v), 0, None) if s["log"] else v
            elif s["submit"] == "proba":
                p = np.clip(v, 0.0, 1.0)
                out[s["columns"][0]] = _balanced(np.column_stack([1 - p, p]), s["prior"])[:, 1] if s["prior"] else p
            else:
                negative = [c for c in classes if str(c) != str(s["positive"])]
                out[s["columns"][0]] = [s["positive"] if p >= THRESHOLD else (negative[0] if negative else s["positive"]) for p in v]
    return pd.DataFrame(out)
"""


# the binary (or each label's) decision thresholds tuned on validation rows for a metric of hard labels (F1, MCC,
# accuracy): a rare class's F1 peaks far below 0.5 (5 % positives: F1 0.19 at 0.5, 0.31 tuned out of fold, at 0.1 to
# 0.15; benchmarks/metric_fit.py). Points down to 0.03 were tuned to 0.03 once and scored 0.31 again: noise
THRESHOLDS = [round(float(x), 2) for x in np.arange(0.1, 0.91, 0.05)]
# the powers of the class shares the probabilities are divided by for a metric weighing every class alike: four
# skewed classes (60/25/10/5 %), macro F1 0.378 at 0 (the argmax as predicted), 0.416 at the power tuned out of fold
# (0.75 to 1; benchmarks/metric_fit.py). Of label sets, tuned after THRESHOLD: ten labels of 34 % down to 6 %, macro
# F1 0.213 at the tuned threshold alone, 0.230 with the power tuned after it (0.25 to 0.5)
BALANCES = [0.0, 0.25, 0.5, 0.75, 1.0]
# and the power a solution submits at unless its validation rows show another better on most resamples of them: 1,
# the Bayes decision for a metric that weighs every class alike (what a model fitted with balanced class weights
# predicts). A few hundred validation rows rarely show it: on the human-protein stand-in (28 labels, 56 validation
# rows) the image features' macro F1 was 0.131 at 0 and 0.188 at 1, and 0 was kept; on costa-rican's 415 rows, three
# models 0.464, 0.466 and 0.428 at 0, 0.466, 0.481 and 0.509 at 1
BALANCE_DEFAULT = 1.0


def expert(a: Analysis, ctx: Context) -> Action:
    spec = [
        {
            "column": t.column,
            "kind": t.kind,
            "submit": t.submit,
            "columns": t.columns,
            "classes": t.classes,
            "positive": t.positive,
            "log": t.log,
            "k": t.k,
            "threshold": t.threshold,
            "cuts": [f"CUT_{j}_{i}" for i in range(len(t.classes) - 1)] if t.kind == "regression" else [],
            "prior": _class_shares(ctx.ws, t) if getattr(METRICS.get(a.metric), "balanced", False) else None,
            "unseen": _unseen(a, t),
        }
        for j, t in enumerate(a.targets)
    ]
    decided = any(t.kind == "multilabel" or (t.kind == "binary" and t.submit == "label") for t in a.targets)
    tunable = {"THRESHOLD": THRESHOLDS} if decided else {}
    cuts = []
    for s, t in zip(spec, a.targets):  # between two ratings; ties in tuning keep the midpoint (it comes first)
        for name, lo, hi in zip(s["cuts"], t.classes, t.classes[1:]):
            cuts.append(f"{name} = {(lo + hi) / 2!r}  # between ratings {lo} and {hi}")
            tunable[name] = [round(lo + (hi - lo) * f, 3) for f in (0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8, 0.1, 0.9)]
    if any(s["prior"] for s in spec):
        tunable["BALANCE"] = BALANCES
    balance = BALANCE_DEFAULT if "BALANCE" in tunable else 0.0
    body = BODY.format(spec=spec, tunable=tunable, balance=balance, cuts="".join(line + "\n" for line in cuts))
    return Action(code=fill(TEMPLATE, body))


def _unseen(a: Analysis, t) -> float:
    """The probability each submission column gets whose class no train row has (the sample lists classes train
    lacks): together they take the uniform sample's share of one class, 1 / classes, rather than a 0 the log loss
    cannot forgive. A sample lists such a class because the test holds it (a "none of these" class: a tenth of the
    test rows), and there Laplace's (0 + 1) / (n + classes) scored below the sample (normalised -0.34); where the test
    holds none, the share costs log(1 - 1 / classes) a row. Several such classes are rare ones a train sample missed,
    not a tenth of the test each: at 1 / classes apiece, sf-crime's stand-in's six of 39 took 15 % of every row's
    probability (log loss +0.17 on every solution), their share together 2.6 %."""
    named = {str(c) for c in t.classes} | set(t.named.values())
    missing = [c for c in t.columns if c not in named] if t.submit == "proba_columns" else []
    return round(1 / (len(t.columns) * len(missing)), 8) if missing else 0.0


def _class_shares(ws: Path, t) -> list[float] | None:
    """The share of the train target map's rows in each class a target submits probabilities of (both classes of a
    binary one, negative first) or the most likely of (a multi-class label, which a macro F1 scores best with a rare
    class's probability raised); of a label set, each label's share of the rows; None for targets submitted
    otherwise."""
    y = pd.read_csv(ws / map_file(TARGET_MAP), dtype=str, keep_default_na=False)[t.column]
    if t.kind == "multilabel":  # each label's share of the rows holding it (a macro F1 weighs a rare label alike)
        sets = [set(v.split()) for v in y]
        return [round(float(np.mean([str(c) in row for row in sets])), 6) for c in t.classes]
    if t.submit == "proba_columns" or (t.kind == "multiclass" and t.submit == "label"):
        classes = t.classes
    elif t.kind == "binary" and t.submit == "proba" and t.threshold is None:
        classes = [next((c for c in t.classes if str(c) != str(t.positive)), None), t.positive]
    else:
        return None
    return [round(float((y == str(c)).mean()), 6) for c in classes]


STAGE = Stage(
    TARGET_TRANSFORM,
    "Write transform / inverse_transform / OUTPUTS for the targets.",
    template=TEMPLATE,
    checks=[Check(check_transform)],
    expert=expert,
    role=ROLE_TARGET_TRANSFORM,
    hints=(
        "Encode classes as integer codes, binary as 0/1 of the positive class; RMSLE-scored targets as log1p; "
        "kappa-scored ratings as a value cut into ratings at tuned points. "
        "Label sets in one column: one 0/1 column per label, decoded with a threshold; top-k rankings: one "
        "multi-class output whose k most likely classes are joined by spaces."
    ),
)
