"""What a forecast's own past targets add (tools/lags.py): one default HistGradientBoosting model on the features
tools/features.py engineers, with and without the lags, on two generated forecasts, against the seasonal naive
forecast a user would try first (each entity's value on the same weekday of the last train week).

    uv run python benchmarks/forecasting.py [--seeds 0 1 2]

Problems (testing/competitions/forecasts.py, each seed its own draw):
- store sales: 30 stores x 200 days, a store table joined by its key, promotions and closed days; the test the next
  40 days of the same stores; RMSPE over the rows with sales.
- page views: 300 pages x 200 days kept wide (one column per day), each page's level wandering; the test 40 days
  named "<page>_<date>" in a key file; melted by the setup's own agentk.competition.wide_series; SMAPE.
Variants: "no lags" (the inputs, the date as elapsed days only); "calendar only" (engineer's features, the date's
parts among them, no lags); "lags + calendar" (engineer's features with the lags always); "as the solve" (the lags
kept only where a quick model validates better with them, the latest fifth of the train days judging, as the
solve's split holds them out). The model learns log(1 + target) (the same for every variant, as the features'
targets), fitted on every train row, scored on the test's answers.
Prints the table and writes it to benchmarks/results/forecasting.md.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentk.competition import wide_series  # noqa: E402
from testing.competitions import registry  # noqa: E402
from tools.features import Labels, engineer  # noqa: E402
from tools.lags import forecast_layout  # noqa: E402
from tools.metrics import rmspe, smape  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "forecasting.md"
VARIANTS = ("no lags", "calendar only", "lags + calendar", "as the solve")


def store_sales(folder: Path, seed: int) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray, np.ndarray]:
    """(train inputs, test inputs, train targets, test answers): the store table joined by its key."""
    registry()["store-table-rmspe"].build(folder, np.random.default_rng(seed))
    pub = folder / "public"
    train, test, store = (pd.read_csv(pub / f"{name}.csv") for name in ("train", "test", "store"))
    answers = pd.read_csv(folder / "private" / "answers.csv")["Sales"].to_numpy(float)
    y = train["Sales"].to_numpy(float)
    train = train.drop(columns=["Sales", "Customers"]).merge(store, on="Store", how="left")
    test = test.drop(columns="Id").merge(store, on="Store", how="left")
    return train, test, y, answers


def page_views(folder: Path, seed: int) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray, np.ndarray]:
    """The wide page views melted as the setup melts them: (page, date) rows, Visits the target."""
    registry()["page-views-wide"].build(folder, np.random.default_rng(seed))
    pub = folder / "public"
    wide = pd.read_csv(pub / "train_1.csv", dtype=str)
    key = pd.read_csv(pub / "key_1.csv", dtype=str)
    sample = pd.read_csv(pub / "sample_submission_1.csv", dtype=str)
    rec = wide_series.detect(wide, key, sample)
    train, test = wide_series.train_rows(wide, rec), wide_series.test_rows(key, wide, rec)
    answers = pd.read_csv(folder / "private" / "answers.csv", dtype={"Id": str}).set_index("Id")
    y = train.pop(rec["target"]).to_numpy(float)
    truth = answers.loc[test.pop(rec["id"]), "Visits"].to_numpy(float)
    return train, test, y, truth


def seasonal_naive(train: pd.DataFrame, test: pd.DataFrame, y: np.ndarray) -> np.ndarray:
    """Each test row's entity's value on the same weekday in the last train week (the train mean where missing)."""
    layout = forecast_layout(train, test)
    time_col, key = layout.time, layout.key
    t_train, t_test = pd.to_datetime(train[time_col]), pd.to_datetime(test[time_col])
    weeks = np.ceil((t_test - t_train.max()).dt.days / 7).astype(int)
    asked = test[key].astype(str).assign(when=(t_test - pd.to_timedelta(7 * weeks, unit="D")).to_numpy())
    known = train[key].astype(str).assign(when=t_train.to_numpy(), y=y).drop_duplicates([*key, "when"])
    found = asked.merge(known, on=[*key, "when"], how="left")["y"].to_numpy()
    return np.where(np.isfinite(found), found, np.nanmean(y))


def variant_frames(train, test, y, variant: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The columns a variant's model reads: engineer's features, less the lags or the date's parts."""
    time_col = forecast_layout(train, test).time
    when = pd.to_datetime(train[time_col]).to_numpy()
    late = when >= np.sort(when)[int(0.8 * len(when))]
    fit, val = (
        (np.flatnonzero(~late), np.flatnonzero(late))
        if variant == "as the solve"
        else (np.arange(len(y)), np.arange(0))
    )
    head = [{"name": "y", "kind": "regression"}]
    new_train, new_test, record = engineer(train, test, Labels(np.log1p(y)[:, None], head, [1], fit, val))
    lags = [c for c, how in record["added"].items() if " series over " in how]
    parts = [c for c in record["added"] if c.startswith(f"{time_col}__") and c not in lags and "elapsed" not in c]
    drop = {"no lags": lags + parts, "calendar only": lags}.get(variant, [])
    return new_train.drop(columns=drop), new_test.drop(columns=drop)


def fit_predict(train: pd.DataFrame, test: pd.DataFrame, y: np.ndarray, seed: int) -> np.ndarray:
    from sklearn.ensemble import HistGradientBoostingRegressor

    both = pd.concat([train, test])
    for c in both.columns:  # text columns as their levels' codes
        if not pd.api.types.is_numeric_dtype(both[c]):
            both[c] = pd.factorize(both[c].astype(str))[0]
    x = both.to_numpy(float)
    model = HistGradientBoostingRegressor(random_state=seed).fit(x[: len(train)], np.log1p(y))
    return np.expm1(model.predict(x[len(train) :])).clip(0, None)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = ap.parse_args()
    problems = {"store sales (RMSPE)": (store_sales, rmspe), "page views, melted (SMAPE, %)": (page_views, smape)}
    columns = ("seasonal naive", *VARIANTS)
    lines = [
        f"One default HistGradientBoostingRegressor on log(1 + target); test scores, mean (sd) over seeds "
        f"{', '.join(map(str, args.seeds))}; lower is better.",
        "",
        f"| problem | {' | '.join(columns)} |",
        f"|---|{'---|' * len(columns)}",
    ]
    started = time.time()
    for label, (make, metric) in problems.items():
        scores = {c: [] for c in columns}
        for seed in args.seeds:
            with tempfile.TemporaryDirectory() as tmp:
                folder = Path(tmp) / "problem"
                (folder / "public").mkdir(parents=True)
                (folder / "private").mkdir()
                train, test, y, truth = make(folder, seed)
            scores["seasonal naive"].append(metric(truth, seasonal_naive(train, test, y)))
            for variant in VARIANTS:
                x_train, x_test = variant_frames(train, test, y, variant)
                scores[variant].append(metric(truth, fit_predict(x_train, x_test, y, seed)))
            print(f"{label}, seed {seed}: " + ", ".join(f"{c} {v[-1]:.3f}" for c, v in scores.items()), flush=True)
        cells = [f"{np.mean(v):.3f} ({np.std(v):.3f})" for v in scores.values()]
        lines.append(f"| {label} | {' | '.join(cells)} |")
    lines += ["", f"({time.time() - started:.0f} s)"]
    table = "\n".join(lines)
    print("\n" + table)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(f"# Forecasting: lags of the target per entity\n\n`benchmarks/forecasting.py`\n\n{table}\n")


if __name__ == "__main__":
    main()
