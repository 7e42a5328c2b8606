"""agentk (setup + solve) against plain AutoGluon and a constant, on tabular competitions, graded on hidden answers.

    uv run python benchmarks/vs_autogluon.py [--arena ../shared/arena-dev] [--examples] [--fixtures NAME ...]
                                             [--budget quick]

Plain AutoGluon is what a user would run instead, on fair terms:
- the same rows: every row of train.csv (agentk's final AutoGluon model is refitted on every row too), ids
  dropped;
- the labels the sample submission asks for where train has them, else every train column test lacks;
- the problem type a user states, from the metric's kind of prediction (problem_type: a value metric is
  regression even for integer ratings or counts, which AutoGluon alone would take for classes);
- the competition's metric where AutoGluon has it (AG_METRICS) and accepts it for the label (not AUC for a
  fraction); a log-error metric is AutoGluon's RMSE on a log1p target, as a user would do; AutoGluon's default
  metric otherwise, said on stderr and in the table's 'fallback' column;
- the same total wall time as agentk's setup + solve (from the setup state and the measured solve; with a
  reused solve, the solutions' recorded seconds);
then predict (probabilities where the metric scores probabilities) into the sample submission's format.
agentk's side reuses benchmarks/solve.py (a finished setup/solve in --out is reused; --fresh rebuilds the
solutions). Ratios are agentk / AutoGluon for higher-is-better metrics and AutoGluon / agentk for losses, so
> 1 means agentk did better; the table ends with their geometric mean and each side's mean normalised score.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentk.competition.class_names import class_columns  # noqa: E402
from agentk.competition.dataview import find_tables  # noqa: E402
from agentk.competition.readers import read_table  # noqa: E402
from agentk.modalities import TABULAR  # noqa: E402
from agentk.workspace import Workspace  # noqa: E402
from benchmarks.solve import check_fixtures, competitions, fmt, run  # noqa: E402
from tools.metrics import METRICS  # noqa: E402

COLUMNS = (
    "competition",
    "metric",
    "agentk",
    "AutoGluon",
    "constant",
    "ratio",
    "agentk norm.",
    "AutoGluon norm.",
    "time limit s",
    "fallback",
)
# tools.metrics name -> AutoGluon's eval_metric (per label for the column-wise ones)
AG_METRICS = {
    "accuracy": "accuracy",
    "f1": "f1",
    "f1_macro": "f1_macro",
    "f1_micro": "f1_micro",
    "f1_weighted": "f1_weighted",
    "gini": "roc_auc",  # 2 AUC - 1: the same order
    "log_loss": "log_loss",
    "multi_log_loss": "log_loss",
    "mean_columnwise_log_loss": "log_loss",
    "roc_auc": "roc_auc",
    "mean_columnwise_auc": "roc_auc",
    "mcc": "mcc",
    "qwk": "quadratic_kappa",
    "mae": "mae",
    "median_ae": "median_absolute_error",
    "mape": "mape",
    "smape": "smape",
    "mse": "mse",
    "rmse": "rmse",
    "mcrmse": "rmse",
    "r2": "r2",
    "rmsle": "rmse",  # on log1p(label)
    "mean_columnwise_rmsle": "rmse",
}
LOG_TARGET = ("rmsle", "mean_columnwise_rmsle")


def problem_type(metric: str, label: pd.Series) -> str | None:
    """The problem type a user states for the label, from the metric's kind of prediction: a value metric is
    regression (ratings 1-5 or counts scored by RMSE too); a label or probability metric is binary on two values
    and multiclass on more, but a probability metric on fractions (AUC of a share) is regression; None, AutoGluon's
    own inference, for a ranking metric."""
    kind = METRICS[metric].prediction
    if kind == "value":
        return "regression"
    if kind not in ("label", "proba"):
        return None
    values = label.dropna()
    if values.nunique() <= 2:
        return "binary"
    numeric = pd.api.types.is_numeric_dtype(values)
    if kind == "proba" and numeric and not np.array_equal(values, np.round(values)):
        return "regression"
    return "multiclass"


def plain_autogluon(source: Path, metric: str, time_limit: float, out: Path) -> tuple[Path, str]:
    """TabularPredictor on the raw tables with its defaults but the problem type and the competition's metric: the
    submission in the sample's format, and the fallbacks taken ('' when none: the labels AutoGluon fitted with its
    default metric because it refused the competition's)."""
    from autogluon.tabular import TabularPredictor

    tables = find_tables(source)
    train, test = read_table(tables["train"]), read_table(tables["test"])
    sample = read_table(tables["sample"], dtype=str)
    id_col, sub_cols = sample.columns[0], list(sample.columns[1:])
    only_train = [c for c in train.columns if c not in test.columns and c != id_col]
    labels = [c for c in sub_cols if c in only_train] or only_train  # what the sample asks for, where train has it
    features = [c for c in train.columns if c in test.columns and c != id_col]
    proba = METRICS[metric].prediction == "proba"
    sub = pd.DataFrame({id_col: test[id_col].astype(str) if id_col in test.columns else sample[id_col]})
    log = metric in LOG_TARGET
    fallbacks = []
    for label in labels:
        data = train[features + [label]].dropna(subset=[label])
        kind = problem_type(metric, data[label])
        if log:
            data[label] = np.log1p(data[label].astype(float))
        fit = {"label": label, "problem_type": kind, "verbosity": 0}
        try:
            predictor = TabularPredictor(eval_metric=AG_METRICS.get(metric), path=str(out / f"ag_{label}"), **fit)
            predictor.fit(data, time_limit=time_limit / len(labels))
        except ValueError as exc:  # the metric does not fit the label (AUC of a fraction): the type's default
            if "is not a valid metric for problem_type" not in str(exc):
                raise
            fallbacks.append(f"{label}: {kind} with AutoGluon's default metric, not {AG_METRICS.get(metric)}")
            print(f"  plain AutoGluon fallback: {fallbacks[-1]}", file=sys.stderr, flush=True)
            predictor = TabularPredictor(path=str(out / f"ag_{label}_default"), **fit)
            predictor.fit(data, time_limit=time_limit / len(labels))
        x = test[features]
        classes = {str(c) for c in train[label].dropna().unique()}
        # one probability column per class, named as the class or with an affix ("class_0" for a class 0)
        named = {c: c for c in sub_cols} if set(sub_cols) <= classes else class_columns(classes, sub_cols)
        if named and predictor.problem_type != "regression":
            p = predictor.predict_proba(x)
            for value, column in named.items():
                sub[column] = p[[k for k in p.columns if str(k) == value][0]].to_numpy()
        elif proba and predictor.problem_type == "binary":
            p = predictor.predict_proba(x)
            positive = next((k for k in p.columns if str(k).lower() in ("1", "true")), predictor.positive_class)
            sub[label if label in sub_cols else sub_cols[0]] = p[positive].to_numpy()
        else:
            pred = predictor.predict(x).to_numpy()
            sub[label if label in sub_cols else sub_cols[0]] = np.expm1(pred) if log else pred
    path = out / "autogluon_submission.csv"
    sub[[id_col] + sub_cols].to_csv(path, index=False)
    return path, "; ".join(fallbacks)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--arena", type=Path)
    p.add_argument("--examples", action="store_true")
    p.add_argument("--fixtures", nargs="+", default=[], metavar="NAME", help="also these generated fixtures")
    p.add_argument("--budget", default="quick")
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out" / "solve")
    p.add_argument("--only", nargs="+", metavar="NAME")
    p.add_argument("--fresh", action="store_true", help="rebuild agentk's solutions (keeps the setups)")
    args = p.parse_args(argv)
    if not args.arena and not args.examples and not args.fixtures:
        p.error("give --arena, --examples and/or --fixtures")
    check_fixtures(p, args.fixtures)
    comps = [
        c
        for c in competitions(args.arena, args.examples, args.fixtures, args.out.resolve())
        if c.inputs in (TABULAR.name, TABULAR.title) and (not args.only or c.name in args.only)
    ]
    rows = []
    for c in comps:
        print(f"… {c.name}", file=sys.stderr, flush=True)
        r = run(c, args.out.resolve(), args.budget, fresh=args.fresh)
        if "error" in r:
            rows.append({"competition": c.name, "metric": c.metric, "agentk": r["error"]})
            continue
        ws = args.out.resolve() / c.name
        solved = json.loads(Workspace(ws).solve_summary.read_text())["solutions"]
        recorded = sum(s["seconds"] + s.get("cv_seconds", 0.0) for s in solved)  # a small table's cross-validation
        limit = r["setup s"] + max(r["solve s"], recorded)  # a resumed solve measures only its reloading
        with tempfile.TemporaryDirectory() as tmp:
            path, fallback = plain_autogluon(c.source, c.metric, limit, Path(tmp))
            ag = c.grade(path)
        higher = METRICS[c.metric].higher_is_better
        ours, const, top = r["test score"], r["constant"], r["perfect"]
        rows.append(
            {
                "competition": c.name,
                "metric": c.metric,
                "agentk": ours,
                "AutoGluon": ag,
                "constant": const,
                "ratio": (ours / ag if higher else ag / ours) if ours and ag else float("nan"),
                "agentk norm.": (ours - const) / (top - const),
                "AutoGluon norm.": (ag - const) / (top - const),
                "time limit s": limit,
                "fallback": fallback or "-",
            }
        )
        print(f"  agentk {fmt(ours)}  AutoGluon {fmt(ag)}  constant {fmt(const)}", file=sys.stderr, flush=True)
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(fmt(r.get(k, "-")) for k in COLUMNS) + " |" for r in rows]
    scored = [r for r in rows if isinstance(r.get("ratio"), float) and np.isfinite(r["ratio"])]
    if scored:
        ratios = [r["ratio"] for r in scored]
        lines.append(
            f"\ngeometric mean ratio agentk vs AutoGluon ({len(ratios)} competitions): "
            f"{float(np.exp(np.mean(np.log(ratios)))):.3f}; mean normalised: agentk "
            f"{np.mean([r['agentk norm.'] for r in scored]):.3f}, AutoGluon "
            f"{np.mean([r['AutoGluon norm.'] for r in scored]):.3f}"
        )
    table = "\n".join(lines)
    print(table)
    (args.out / "vs_autogluon.md").write_text(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
