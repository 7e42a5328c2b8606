"""What the entity context of tools/features.py adds (issue 63 part 2: key pair counts, counts within the day and
hour, the time since a key's previous row and until its next), as an ablation on three generated problems and one
fixture without entity structure, each scored by one default gradient-boosting model (scikit-learn's
HistGradientBoosting) fitted on engineer()'s frames, with and without the entity context's columns:

- clicks: ip, app, device, os, channel (whole numbers of 120 to 3,000 levels) and a click time over three days, the
  test rows the third; sessions of a few human clicks or of many fast bot clicks; ~2 % downloads, whose log-odds
  fall with the clicks of the row's ip x app within its hour and rise with the time until the ip's next click.
- ratings: users rate items they come back to; a pair of user and item repeats as often as the user likes the item,
  and the rating is a user bias plus an item bias plus that liking, plus noise. No time.
- cards: card payments over 60 days, the test rows the last 15; 15 % of the cards go on a shopping spree (3 to 8
  payments 30 minutes apart on average), 15 % are stolen and pay in a burst (4 to 11 payments 10 minutes apart):
  those payments are the frauds (~2 %), a little larger on average.
- clicks, downloads by app and os only: the clicks above, the downloads' log-odds a per-app plus a per-os effect;
  no entity context in the signal, so the context's columns are noise the model must ignore.
- house prices (fixture house-prices-log-rmse, no entity structure but whole-number columns of many levels, such as
  a year, that read as keys): the log of the price, the train rows split 3:1.

    uv run python benchmarks/entity_features.py [--seeds 3]

Prints one table (mean and spread over seeds; AUC, higher is better, or RMSE, lower is better) and writes it to
benchmarks/results/entity_features.md."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.metrics import mean_squared_error, roc_auc_score

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from testing.competitions import build  # noqa: E402
from tools.features import Labels, engineer  # noqa: E402

CONTEXT = ("key ", "key pair ")  # how the record describes the entity context's columns (single keys: "entity key")
DAY = 86400


def _stamps(seconds: np.ndarray) -> pd.Series:
    return pd.Series((pd.Timestamp("2017-11-06") + pd.to_timedelta(seconds.astype(int), unit="s")).astype(str))


def _skewed(rng, levels: int, size: int, power: float = 1.0) -> np.ndarray:
    """Levels drawn with Zipf-like popularity (a few busy ips, apps, merchants), as whole numbers from 1."""
    weights = 1.0 / np.arange(1, levels + 1) ** power
    return rng.permutation(levels)[rng.choice(levels, size, p=weights / weights.sum())] + 1


def _intercept(logit: np.ndarray, rate: float) -> float:
    """The shift of the log-odds that makes their mean probability `rate`."""
    lo, hi = -30.0, 30.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if np.mean(1 / (1 + np.exp(-(logit + mid)))) < rate else (lo, mid)
    return lo


def clicks(rng, context: bool = True) -> tuple[pd.DataFrame, np.ndarray, int, str]:
    n_sessions = 16_000
    ip, app = _skewed(rng, 3000, n_sessions, 0.8), _skewed(rng, 200, n_sessions)
    bot = rng.random(n_sessions) < 0.25
    k = np.where(bot, rng.integers(4, 25, n_sessions), rng.geometric(0.6, n_sessions))
    session = np.repeat(np.arange(n_sessions), k)
    gaps = rng.exponential(np.where(bot, 8.0, 900.0)[session])
    offset = pd.Series(gaps).groupby(session).cumsum().to_numpy() - gaps
    seconds = np.floor(rng.uniform(0, 3 * DAY, n_sessions)[session] + offset)
    n = len(session)
    frame = pd.DataFrame(
        {
            "ip": ip[session],
            "app": app[session],
            "device": _skewed(rng, 150, n, 1.2),
            "os": _skewed(rng, 120, n, 1.1),
            "channel": _skewed(rng, 160, n),
            "click_time": _stamps(seconds),
        }
    )
    t = pd.Series(seconds)  # the signal, computed independently of tools.features
    per_hour = frame.groupby([frame["ip"], frame["app"], np.floor(seconds / 3600)])["ip"].transform("size")
    ordered = t.sort_values(kind="stable")
    until = (-ordered.groupby(frame["ip"].loc[ordered.index]).diff(-1)).sort_index().fillna(DAY)
    logit = -1.2 * np.log(per_hour.to_numpy()) + 0.6 * np.log1p(until.to_numpy() / 60)
    if not context:  # the same clicks, downloads that rest on the app and the os alone
        logit = rng.normal(scale=1.5, size=201)[frame["app"]] + rng.normal(scale=1.0, size=121)[frame["os"]]
    y = (rng.random(n) < 1 / (1 + np.exp(-(logit + _intercept(logit, 0.02))))).astype(float)
    order = np.argsort(seconds, kind="stable")
    return frame.iloc[order].reset_index(drop=True), y[order], int((seconds < 2 * DAY).sum()), "binary"


def clicks_without_context(rng) -> tuple[pd.DataFrame, np.ndarray, int, str]:
    return clicks(rng, context=False)


def ratings(rng) -> tuple[pd.DataFrame, np.ndarray, int, str]:
    n_users, n_items = 800, 600
    picks = rng.integers(10, 30, n_users)
    user = np.repeat(np.arange(n_users), picks)
    item = _skewed(rng, n_items, len(user), 0.7) - 1
    pairs = np.unique(np.stack([user, item], axis=1), axis=0)
    liking = rng.normal(size=len(pairs))
    repeats = 1 + rng.poisson(np.exp(0.8 * liking + 0.3))
    rows = np.repeat(np.arange(len(pairs)), repeats)
    rows = rows[rng.permutation(len(rows))]
    u, i = pairs[rows].T
    y = rng.normal(size=n_users)[u] + rng.normal(size=n_items)[i] + liking[rows] + rng.normal(scale=0.5, size=len(rows))
    frame = pd.DataFrame({"user": u + 1, "item": i + 1, "weekday": rng.integers(0, 7, len(rows))})
    return frame, y, int(0.8 * len(rows)), "regression"


def cards(rng) -> tuple[pd.DataFrame, np.ndarray, int, str]:
    n_cards, days = 1000, 60
    per_day = rng.gamma(2.0, 0.5, n_cards)
    card = np.repeat(np.arange(n_cards), rng.poisson(per_day * days))
    seconds = rng.uniform(0, days * DAY, len(card))
    burst, card_of, gap, fraud = [], [], [], []  # shopping sprees (30 min apart) and thefts (10 min apart)
    for k, (mean_gap, is_fraud) in enumerate(((1800.0, 0.0), (600.0, 1.0))):
        who = rng.choice(n_cards, int(0.15 * n_cards), replace=False)
        size = rng.integers(3 + k, 9 + 3 * k, len(who))
        burst.append(np.repeat(np.arange(len(who)) + k * n_cards, size))
        card_of.append(np.repeat(who, size))
        gap.append(rng.exponential(mean_gap, size.sum()))
        fraud.append(np.full(size.sum(), is_fraud))
    burst, gaps = np.concatenate(burst), np.concatenate(gap)
    offset = pd.Series(gaps).groupby(burst).cumsum().to_numpy()
    start = rng.uniform(0, days * DAY - DAY, 2 * n_cards)[burst]
    card = np.concatenate([card, *card_of])
    seconds = np.floor(np.concatenate([seconds, start + offset]))
    y = np.concatenate([np.zeros(len(card) - len(burst)), *fraud])
    amount = np.where(y == 1, rng.lognormal(3.3, 1.0, len(y)), rng.lognormal(3.0, 1.0, len(y))).round(2)
    frame = pd.DataFrame(
        {"card": card + 1000, "merchant": _skewed(rng, 400, len(y)), "amount": amount, "when": _stamps(seconds)}
    )
    order = np.argsort(seconds, kind="stable")
    return frame.iloc[order].reset_index(drop=True), y[order], int((seconds < 45 * DAY).sum()), "binary"


def house_prices(rng) -> tuple[pd.DataFrame, np.ndarray, int, str]:
    with tempfile.TemporaryDirectory() as tmp:
        train = pd.read_csv(build("house-prices-log-rmse", Path(tmp)) / "public" / "train.csv")
    train = train.iloc[rng.permutation(len(train))].reset_index(drop=True)
    return train.drop(columns=["Id", "SalePrice"]), np.log(train["SalePrice"].to_numpy(float)), 1095, "regression"


def _inputs(train: pd.DataFrame, test: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Text columns as categories a tree splits on (those of at most 255 levels; the others' counts and encodings
    stand for them), with the train rows' categories."""
    train, test = train.copy(), test.copy()
    for c in train.columns:
        if train[c].dtype == object:
            if train[c].nunique() > 255:
                train, test = train.drop(columns=c), test.drop(columns=c)
                continue
            train[c] = train[c].astype("category")
            test[c] = pd.Categorical(test[c], categories=train[c].cat.categories)
    return train, test


def run(problem, seed: int) -> tuple[dict[str, float], dict]:
    """Scores of the variants on one draw of the problem, and how it went (columns added, engineer's seconds)."""
    rng = np.random.default_rng(seed)
    frame, y, n, kind = problem(rng)
    fit, val = np.arange(int(0.8 * n)), np.arange(int(0.8 * n), n)
    labels = Labels(y[:n, None].copy(), [{"kind": kind, "name": "target"}], [1], fit, val)
    start = time.perf_counter()
    train, test, record = engineer(frame.iloc[:n], frame.iloc[n:], labels)
    seconds = time.perf_counter() - start
    context = [c for c, how in record["added"].items() if how.startswith(CONTEXT)]
    out = {}
    for variant, columns in (("without entity context", [c for c in train if c not in context]), ("with", list(train))):
        x_train, x_test = _inputs(train[columns], test[columns])
        if kind == "binary":
            model = HistGradientBoostingClassifier(random_state=0, categorical_features="from_dtype")
            out[variant] = roc_auc_score(y[n:], model.fit(x_train, y[:n]).predict_proba(x_test)[:, 1])
        else:
            model = HistGradientBoostingRegressor(random_state=0, categorical_features="from_dtype")
            out[variant] = float(np.sqrt(mean_squared_error(y[n:], model.fit(x_train, y[:n]).predict(x_test))))
    return out, {"rows": len(frame), "positives": float(y.mean()), "context": context, "seconds": seconds}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, default=3)
    args = p.parse_args(argv)
    if args.seeds < 1:
        p.error("--seeds must be at least 1")
    lines = [
        "| problem | metric | rows | without entity context | with | entity context columns | engineer s |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, metric, problem in (
        ("clicks", "AUC", clicks),
        ("ratings", "RMSE", ratings),
        ("cards", "AUC", cards),
        ("clicks, downloads by app and os only", "AUC", clicks_without_context),
        ("house prices (fixture)", "RMSE", house_prices),
    ):
        runs = [run(problem, s) for s in range(args.seeds)]
        cells = []
        for variant in runs[0][0]:
            scores = np.array([r[variant] for r, _ in runs])
            cells.append(f"{scores.mean():.4f} ± {scores.std():.4f}")
        info = runs[0][1]
        added = ", ".join(info["context"]) or "none"
        rows = f"{info['rows']:,}" + (f" ({info['positives']:.1%} positive)" if metric == "AUC" else "")
        seconds = np.mean([i["seconds"] for _, i in runs])
        lines.append(f"| {name} | {metric} | {rows} | {cells[0]} | {cells[1]} | {added} | {seconds:.1f} |")
        print(lines[-1], flush=True)
    text = "\n".join(lines)
    out = ROOT / "benchmarks" / "results" / "entity_features.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
