"""code_metric.py: metric(y_true, y_pred) -> float and HIGHER_IS_BETTER, self-contained (numpy/pandas only).

y_true: the train target map's columns (original form); y_pred: the submission's prediction columns."""

from __future__ import annotations

from agentk.core.checks import Check
from agentk.core.engine import HOLE, Action, Context, Stage, fill
from agentk.policies.analysis import Analysis
from agentk.workspace import METRIC, ROLE_METRIC, code_file
from tools.metrics import METRICS, PER_LABEL, metric_source
from unit_tests_lib.metric import check_metric

TEMPLATE = f'''"""The competition's metric. metric(y_true, y_pred) -> float, HIGHER_IS_BETTER.
y_true: DataFrame of the target map's columns (original values); y_pred: DataFrame of the submission's
prediction columns (the submission without its id column), rows aligned."""
import numpy as np
import pandas as pd

{HOLE}

if __name__ == "__main__":
    print("HIGHER_IS_BETTER =", HIGHER_IS_BETTER)
'''

ADAPTER = """

HIGHER_IS_BETTER = {higher}
METRIC = {name!r}
PREDICTION = {prediction!r}  # what the metric scores: label | proba | value | ranking
MULTI_TARGET = {multi}
TARGETS = {targets!r}
METRIC_COLUMNS = {metric_columns!r}  # target-map columns the metric reads beside the targets (sub-groups, mask)
SCORED_VALUE = {scored_value!r}  # a masked metric scores only the rows whose METRIC_COLUMNS[0] holds this value
PER_LABEL = {per_label}  # label sets ("3 17 42") scored label by label, as 0/1 columns


def _indicators(truth: np.ndarray, guess: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # two columns of label sets as 0/1 matrices over the labels either holds (an empty cell: no label)
    sets = [[set() if x is None or x != x else set(str(x).split()) for x in v] for v in (truth, guess)]
    labels = sorted(set().union(*sets[0], *sets[1])) or [""]
    index = {{label: i for i, label in enumerate(labels)}}
    out = []
    for rows in sets:
        m = np.zeros((len(rows), max(len(labels), 2)), dtype=int)  # two columns at least: read as label columns
        for i, row in enumerate(rows):
            m[i, [index[label] for label in row]] = 1
        out.append(m)
    return out[0], out[1]


def _truth(y_true: pd.DataFrame, t: dict) -> np.ndarray:
    v = pd.Series(np.asarray(y_true[t["column"]]))
    if t["submit"] == "proba_columns":
        codes = v.astype(str).map({{c: i for i, c in enumerate(t["columns"])}}).to_numpy()
        if MULTI_TARGET:  # a column-wise metric (mean AUC over the class columns) scores each class as 0/1
            return np.eye(len(t["columns"]))[codes.astype(int)]
        return codes
    if t["kind"] == "regression":
        return v.astype(float).to_numpy()
    if t["threshold"] is not None:  # a fraction the metric scores as 0/1
        return (v.astype(float) >= t["threshold"]).to_numpy(int)
    if t["kind"] == "binary" and PREDICTION in ("proba", "label"):
        return (v.astype(str) == str(t["positive"])).to_numpy(int)
    if PREDICTION == "value" or METRIC == "qwk":
        return v.astype(float).to_numpy()
    if PER_LABEL and t["kind"] == "multilabel":
        return v.where(v.notna(), None).to_numpy(object)
    return v.astype(str).to_numpy()


def _guess(y_pred: pd.DataFrame, t: dict) -> np.ndarray:
    if t["submit"] == "proba_columns":
        return y_pred[t["columns"]].to_numpy(float)
    v = pd.Series(np.asarray(y_pred[t["columns"][0]]))
    if t["kind"] == "regression":
        return v.astype(float).to_numpy()
    if t["kind"] == "binary" and PREDICTION == "label":
        return (v.astype(str) == str(t["positive"])).to_numpy(int)
    if PREDICTION in ("proba", "value") or METRIC == "qwk":
        return v.astype(float).to_numpy()
    if PER_LABEL and t["kind"] == "multilabel":
        return v.where(v.notna(), None).to_numpy(object)
    return v.astype(str).to_numpy()


def metric(y_true, y_pred) -> float:
    y_true = pd.DataFrame(y_true).reset_index(drop=True)
    y_pred = pd.DataFrame(y_pred).reset_index(drop=True)
    truths = [_truth(y_true, t) for t in TARGETS]
    guesses = [_guess(y_pred, t) for t in TARGETS]
    for i, t in enumerate(TARGETS):
        if PER_LABEL and t["kind"] == "multilabel":
            truths[i], guesses[i] = _indicators(truths[i], guesses[i])
    if SCORED_VALUE is not None:  # only the rows whose METRIC_COLUMNS[0] holds it are scored
        keep = y_true[METRIC_COLUMNS[0]].astype(float).to_numpy() == SCORED_VALUE
        if METRIC == "masked_mae":
            return float(np.mean([score(a, b, mask=keep) for a, b in zip(truths, guesses)]))
        truths, guesses = [a[keep] for a in truths], [b[keep] for b in guesses]
    else:
        truths += [y_true[c].astype(float).to_numpy() for c in METRIC_COLUMNS]
    if MULTI_TARGET:
        return float(score(np.column_stack(truths), np.column_stack(guesses)))
    return float(np.mean([score(a, b) for a, b in zip(truths, guesses)]))
"""


def expert(a: Analysis, ctx: Context) -> Action:
    m = METRICS[a.metric]
    targets = [
        {
            "column": t.column,
            "kind": t.kind,
            "submit": t.submit,
            "columns": t.columns,
            "positive": t.positive,
            "threshold": t.threshold,
        }
        for t in a.targets
    ]
    if a.metric_from == "proxy":
        found = (
            f"# PROXY: the evaluation text names {a.official_metric}, which also weighs sub-groups of the rows through "
            f"train columns it does not name; {a.metric}, its score of the target alone, is optimised in its place.\n"
        )
    elif a.metric_from == "fallback":
        found = f"# FALLBACK: the evaluation text names no metric agentk knows; {a.metric} suits these targets.\n"
    else:
        found = f"# {a.metric}: named in the competition's evaluation text.\n"
    body = (
        found
        + metric_source(a.metric)
        + ADAPTER.format(
            higher=m.higher_is_better,
            name=m.name,
            prediction=m.prediction,
            multi=m.multi_target,
            targets=targets,
            metric_columns=a.metric_columns,
            scored_value=a.scored_value,
            per_label=m.name in PER_LABEL,
        )
    )
    return Action(code=fill(TEMPLATE, body))


STAGE = Stage(
    METRIC,
    f"Write {code_file(METRIC)}: metric(y_true, y_pred) -> float for the competition's metric, and "
    "HIGHER_IS_BETTER. Self-contained: numpy/pandas only.",
    template=TEMPLATE,
    checks=[Check(check_metric)],
    expert=expert,
    role=ROLE_METRIC,
    hints="Implement exactly what the evaluation text describes, clipping probabilities as Kaggle does.",
)
