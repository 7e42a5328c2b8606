"""Fitting what the metric scores (issue 63): each rule of docs/solve.md's "Fitting what the metric scores" on a
generated problem where it matters, one default scikit-learn HistGradientBoosting model per variant, over seeds.

    uv run python benchmarks/metric_fit.py [--seeds 0 1 2] [--rows 4000] [--autogluon SECONDS]

- (a) RMSPE on store-sales-like rows: 60 stores whose levels spread over two orders of magnitude, a weekday and a
  promotion effect, multiplicative noise, and closed days of 0 sales (a sixth of the rows, which RMSPE skips).
  Fitted on every row, unweighted; without the zero rows; without them and weighted by 1/y^2 (the rule: the squared
  error is then RMSPE's); on log(y) without them (the Rossmann trick), unweighted and weighted.
- (b) RMSLE on a skewed value (lognormal, a long right tail): fitted on the value, or on log1p of it (the rule).
- (c) binary F1 with 5 % positives: labels at probability 0.5, or at the threshold of the target transform's grid
  (stages/target_transform.THRESHOLDS) that scores best on 5-fold out-of-fold predictions of the train rows (the rule).
- (d) macro F1 of four skewed classes (about 60/25/10/5 %): the most likely class as predicted, or after dividing
  the probabilities by the train shares to the power of the grid (stages/target_transform.BALANCES) that scores
  best out of fold (the rule).
- (e) macro F1 of label sets, ten labels from about 34 % of the rows down to 6 %: each label at the threshold tuned
  out of fold (THRESHOLDS; every row keeps its most likely label), then also its probability weighed against its
  share of the rows to the BALANCES power tuned after it (the rule, as TaskData.tune_decoding tunes one after the
  other).

Each variant is scored on as many fresh rows of the same problem. With --autogluon SECONDS, (a) also runs through
the solve's own AutoGluon path (tools/autogluon_tool.fit_autogluon, sklearn forests and LightGBM, no refit) and
late-fusion network (tools/fusion.train_fusion, its default configuration) on a setup of the store-table-rmspe
fixture, with the metric's row weights and without them (TaskData.fit_weights returning None: what they did
before). Prints the table and writes benchmarks/results/metric_fit.md.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from stages.target_transform import BALANCE_DEFAULT, BALANCES, THRESHOLDS  # noqa: E402
from tools.metrics import f1, f1_macro, relative_weights, rmsle, rmspe  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "metric_fit.md"


def _regressor(seed: int):
    from sklearn.ensemble import HistGradientBoostingRegressor

    return HistGradientBoostingRegressor(random_state=seed)


def store_sales(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(features: store, weekday, promotion, open; sales): 0 on closed days."""
    stores = 60
    level = np.exp(np.linspace(np.log(200), np.log(20_000), stores))  # two orders of magnitude apart
    store, day, promo = rng.integers(0, stores, n), rng.integers(0, 7, n), rng.random(n) < 0.4
    closed = (day == 6) | (rng.random(n) < 0.03)
    sales = level[store] * (1 + 0.1 * day) * (1 + 0.3 * promo) * rng.lognormal(0, 0.25, n)
    x = np.column_stack([store, day, promo, ~closed]).astype(float)
    return x, np.where(closed, 0.0, sales)


def rmspe_variants(seed: int, n: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    (x, y), (x_test, y_test) = store_sales(n, rng), store_sales(n, rng)
    kept = y > 0
    w = relative_weights("rmspe", y[kept])
    fits = {
        "every row, unweighted": lambda: _regressor(seed).fit(x, y).predict(x_test),
        "zero rows out, unweighted": lambda: _regressor(seed).fit(x[kept], y[kept]).predict(x_test),
        "zero rows out, 1/y^2 weights (the rule)": lambda: (
            _regressor(seed).fit(x[kept], y[kept], sample_weight=w).predict(x_test)
        ),
        "log(y), zero rows out": lambda: np.exp(_regressor(seed).fit(x[kept], np.log(y[kept])).predict(x_test)),
        "log(y), zero rows out, 1/y^2 weights": lambda: np.exp(
            _regressor(seed).fit(x[kept], np.log(y[kept]), sample_weight=w).predict(x_test)
        ),
    }
    return {name: rmspe(y_test, fit()) for name, fit in fits.items()}


def skewed(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    x = rng.normal(size=(n, 5))
    return x, np.expm1(np.clip(2 + x[:, 0] + 0.5 * x[:, 1] * x[:, 2] + rng.normal(0, 0.6, n), 0, None) * 1.5)


def rmsle_variants(seed: int, n: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    (x, y), (x_test, y_test) = skewed(n, rng), skewed(n, rng)
    raw = np.clip(_regressor(seed).fit(x, y).predict(x_test), 0, None)
    logged = np.clip(np.expm1(_regressor(seed).fit(x, np.log1p(y)).predict(x_test)), 0, None)
    return {"the value": rmsle(y_test, raw), "log1p of it (the rule)": rmsle(y_test, logged)}


def rare(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    x = rng.normal(size=(n, 8))
    logit = 1.5 * x[:, 0] + x[:, 1] - 0.8 * x[:, 2] * x[:, 3] - 4.4  # about 5 % positives
    return x, (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)


def f1_variants(seed: int, n: int) -> dict[str, float]:
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    rng = np.random.default_rng(seed)
    (x, y), (x_test, y_test) = rare(n, rng), rare(n, rng)
    model = HistGradientBoostingClassifier(random_state=seed)
    folds = StratifiedKFold(5, shuffle=True, random_state=seed)
    oof = cross_val_predict(model, x, y, cv=folds, method="predict_proba")[:, 1]
    tuned = max(THRESHOLDS, key=lambda t: f1(y, (oof >= t).astype(int)))
    p = model.fit(x, y).predict_proba(x_test)[:, 1]
    return {
        "threshold 0.5": f1(y_test, (p >= 0.5).astype(int)),
        "threshold tuned out of fold (the rule)": f1(y_test, (p >= tuned).astype(int)),
        "  the tuned threshold": tuned,
        "  positives in train": y.mean(),
    }


def skewed_classes(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Four classes of about 60, 25, 10 and 5 % of the rows, each but the first raised by its own features."""
    x = rng.normal(size=(n, 8))
    logits = np.column_stack([np.zeros(n), x[:, 0] - 1.0, x[:, 1] + 0.5 * x[:, 0] - 2.0, x[:, 2] - x[:, 3] - 2.8])
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return x, (rng.random(n)[:, None] > p.cumsum(axis=1)).sum(axis=1)


def macro_f1_variants(seed: int, n: int) -> dict[str, float]:
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    rng = np.random.default_rng(seed)
    (x, y), (x_test, y_test) = skewed_classes(n, rng), skewed_classes(n, rng)
    shares = np.bincount(y) / len(y)
    model = HistGradientBoostingClassifier(random_state=seed)
    folds = StratifiedKFold(5, shuffle=True, random_state=seed)
    oof = cross_val_predict(model, x, y, cv=folds, method="predict_proba")

    def labels(proba, power):  # the target transform's decoding: the argmax after dividing by shares ** BALANCE
        return (proba / shares**power).argmax(axis=1)

    tuned = max(BALANCES, key=lambda b: f1_macro(y, labels(oof, b)))
    p = model.fit(x, y).predict_proba(x_test)
    return {
        "argmax as predicted (BALANCE 0)": f1_macro(y_test, labels(p, 0.0)),
        "argmax at the untuned default (BALANCE_DEFAULT)": f1_macro(y_test, labels(p, BALANCE_DEFAULT)),
        "argmax after BALANCE tuned out of fold (the rule)": f1_macro(y_test, labels(p, tuned)),
        "  the tuned BALANCE": tuned,
        "  the rarest class's share of train": shares.min(),
    }


def label_sets(n: int, rng: np.random.Generator, labels: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """0/1 columns of `labels` labels, each from its own mix of the features, ever rarer (about 34 % to 6 %)."""
    x = rng.normal(size=(n, 12))
    weights = rng.normal(size=(12, labels)) * 0.6
    logits = x @ weights + np.linspace(-1, -4, labels)
    return x, (rng.random((n, labels)) < 1 / (1 + np.exp(-logits))).astype(int)


def label_set_variants(seed: int, n: int) -> dict[str, float]:
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.model_selection import KFold, cross_val_predict

    rng = np.random.default_rng(seed)
    (x, y), (x_test, y_test) = label_sets(n, rng), label_sets(n, rng)
    shares = y.mean(axis=0)
    folds = KFold(5, shuffle=True, random_state=seed)
    models = [HistGradientBoostingClassifier(random_state=seed) for _ in range(y.shape[1])]
    oof = np.column_stack(
        [cross_val_predict(m, x, y[:, j], cv=folds, method="predict_proba")[:, 1] for j, m in enumerate(models)]
    )
    p = np.column_stack([m.fit(x, y[:, j]).predict_proba(x_test)[:, 1] for j, m in enumerate(models)])

    def sets(proba, threshold, power):  # the target transform's decoding of label sets
        on, off = proba / shares**power, (1 - proba) / (1 - shares) ** power
        proba = on / (on + off)
        chosen = proba >= threshold
        chosen[np.arange(len(proba)), proba.argmax(axis=1)] = True
        return chosen.astype(int)

    threshold = max(THRESHOLDS, key=lambda t: f1_macro(y, sets(oof, t, 0.0)))
    power = max(BALANCES, key=lambda b: f1_macro(y, sets(oof, threshold, b)))
    return {
        "threshold 0.5": f1_macro(y_test, sets(p, 0.5, 0.0)),
        "threshold 0.5 at the untuned default (BALANCE_DEFAULT)": f1_macro(y_test, sets(p, 0.5, BALANCE_DEFAULT)),
        "threshold tuned out of fold": f1_macro(y_test, sets(p, threshold, 0.0)),
        "threshold, then BALANCE tuned out of fold (the rule)": f1_macro(y_test, sets(p, threshold, power)),
        "  the tuned threshold": threshold,
        "  the tuned BALANCE": power,
        "  the rarest label's share of train": shares.min(),
    }


def solve_variants(seconds: float) -> dict[str, float]:
    """fit_autogluon and the late-fusion network (default configuration) on a setup of the store-table-rmspe
    fixture, with and without the metric's row weights."""
    from testing.competitions import build
    from tools.autogluon_tool import fit_autogluon
    from tools.fusion import train_fusion
    from tools.fusion_config import FusionConfig
    from tools.task_data import TaskData

    root = Path(tempfile.mkdtemp(prefix="metric-fit-"))
    public = build("store-table-rmspe", root / "fixtures") / "public"
    ws = root / "ws"
    run = [sys.executable, "-m", "agentk", "setup", str(public), "--workspace", str(ws)]
    subprocess.run(run, cwd=root, check=True, stdin=subprocess.DEVNULL, capture_output=True)
    models = {"RF": {}, "XT": {}, "GBM": {}}
    out = {}
    for name, weighted in (("weighted, zero rows out (the rule)", True), ("unweighted, every row", False)):
        task = TaskData(ws)
        if not weighted:
            task.fit_weights = lambda j, rows: None  # what the tool did before: every row alike
        fitted = fit_autogluon(task, seconds, out_dir=root / name[:8], hyperparameters=models, refit=False)
        out[f"AutoGluon {seconds:g} s, {name}"] = fitted["val_score"]
        out[f"  rows fitted ({name.split(',')[0]})"] = fitted["models"][0]["tuned_on_rows"]
        out[f"network, {name}"] = train_fusion(task, FusionConfig(), log=lambda line: None).val_score
    return out


def table(results: dict[str, dict[str, list[float]]], seeds: list[int]) -> str:
    lines = [
        "| problem | variant | " + " | ".join(f"seed {s}" for s in seeds) + " | mean |",
        "|---|---|" + "---|" * (len(seeds) + 1),
    ]
    for problem, variants in results.items():
        for name, values in variants.items():
            cells = [f"{v:.4g}" for v in values] + [""] * (len(seeds) - len(values))
            lines.append(f"| {problem} | {name} | " + " | ".join(cells) + f" | {np.mean(values):.4g} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--rows", type=int, default=4000)
    parser.add_argument("--autogluon", type=float, default=0.0, help="seconds of AutoGluon work on (a); 0: none")
    args = parser.parse_args()
    problems = {
        "(a) RMSPE, store sales": rmspe_variants,
        "(b) RMSLE, skewed value": rmsle_variants,
        "(c) F1, 5 % positives": f1_variants,
        "(d) macro F1, four skewed classes": macro_f1_variants,
        "(e) macro F1, label sets of ten labels": label_set_variants,
    }
    results: dict[str, dict[str, list[float]]] = {}
    for problem, run in problems.items():
        results[problem] = {}
        for seed in args.seeds:
            for name, value in run(seed, args.rows).items():
                results[problem].setdefault(name, []).append(value)
            print(f"{problem}, seed {seed}: done", flush=True)
    if args.autogluon:
        results["(a) RMSPE, store-table-rmspe fixture"] = {k: [v] for k, v in solve_variants(args.autogluon).items()}
    text = table(results, args.seeds)
    print(text)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        "# Fitting what the metric scores\n\n`uv run python benchmarks/metric_fit.py"
        + (f" --autogluon {args.autogluon:g}" if args.autogluon else "")
        + f"` (seeds {' '.join(map(str, args.seeds))}, {args.rows} train rows and as many test rows; "
        "RMSPE and RMSLE lower is better, F1 and macro F1 higher). The fixture's rows: one run, scored on its "
        "validation rows.\n\n" + text + "\n"
    )


if __name__ == "__main__":
    main()
