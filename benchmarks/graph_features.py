"""What the data graph's joins, the entity statistics and the factorisation add (issues 47 part 3 and 48 parts 1-2), as ablations on
three generated relational problems, each scored by one default gradient-boosting model (scikit-learn's
HistGradientBoosting) fitted on the inputs each variant gives it:

- chain: customers, their orders, each order's items (order numbers overlap the customer numbers); the target
  rests on the customer's number of orders and the mean price of their items. Variants: the customer table
  alone; with the orders summarised per customer (one level); the whole graph (items summarised per order first).
- weather: flights and the weather by airport and hour (a key over two columns); the target rests on the
  temperature at departure. Variants: the flights alone; with the weather joined on the composite key.
- energy: hourly meter readings of buildings and the weather by (site, hour), the site the building's (a key
  assembled along a chain: issue 63), the weather one table per period (the test's hours after the train's); the
  reading rests on the hour's temperature at the building's site. Variants: the rows alone; what agentk did before
  (the building table, first joined with each period's weather summarised per site); the chained lookup the graph
  finds now (the periods stacked, looked up on the building's site and the row's hour).
- loans: applicants and their earlier loans, each loan's status one of four words; default rests on the share of
  an applicant's loans gone bad and their income. Variants: the applicant table alone; with the loans summarised
  per applicant as agentk did before (the count and the amounts' statistics); with each status's share of the
  applicant's loans too (issue 63: a text column of few values summarised per key).
- quotes: an order book's quotes, many per stock and time window, and one row per window of each stock to predict
  the next window's volatility, which rests on how far the price moved from quote to quote. Variants: the rows
  alone; the quotes summarised per stock (what agentk did before: the stock is the one column both repeat); per
  (stock, window), the pair naming the rows, without and with the moves (the root of the summed squared changes).
- ratings: users rate items, ids as whole numbers, each pair once; the rating is a user bias plus an item bias
  plus the product of rank-3 latent tastes, plus noise. Variants: the ids as numbers; with their out-of-fold level
  statistics (tools.features.engineer); the factorisation candidate alone (tools/classical_factors.py); the mean
  of the last two (what the solver's blend can reach at least).

    uv run python benchmarks/graph_features.py [--seeds 3]

Prints one table (mean and spread over seeds; RMSE, lower is better, or AUC, higher is better) and writes it to
benchmarks/results/graph_features.md."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.metrics import mean_squared_error, roc_auc_score

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentk.competition.joins import Join, apply, find_joins  # noqa: E402
from testing.competitions.layouts import ENERGY_NAMES, energy_tables  # noqa: E402
from tools.classical_factors import RANKS, Factorisation  # noqa: E402
from tools.features import Labels, engineer  # noqa: E402


def _joined(
    tables: dict[str, pd.DataFrame],
    train: pd.DataFrame,
    test: pd.DataFrame,
    keep: set[str] | None,
    joins: list[Join] | None = None,
):
    """train and test with the joins the graph finds among `tables` (only those named in `keep`, if given), or with
    `joins` where given."""
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "raw"
        raw.mkdir()
        paths = {"train": raw / "train.csv", "test": raw / "test.csv"}
        train.to_csv(paths["train"], index=False)
        test.to_csv(paths["test"], index=False)
        for name, frame in tables.items():
            if keep is None or name in keep:
                frame.to_csv(raw / f"{name}.csv", index=False)
        tr, te = pd.read_csv(paths["train"]), pd.read_csv(paths["test"])
        joins = find_joins(Path(tmp), raw, paths, tr, te) if joins is None else joins
        return apply(Path(tmp), joins, tr, "train"), apply(Path(tmp), joins, te, "test")


def chain(seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    n_cust, n_orders = 1500, 9000
    customers = pd.DataFrame({"customer": np.arange(n_cust), "age": rng.integers(18, 80, n_cust)})
    orders = pd.DataFrame({"order_no": np.arange(n_orders), "buyer": rng.integers(0, n_cust, n_orders)})
    orders["shipping"] = rng.random(n_orders).round(2)
    items = pd.DataFrame({"order_ref": rng.integers(0, n_orders, 4 * n_orders)})
    taste = rng.normal(size=n_cust)  # what a customer's items cost, on average
    items["price"] = (
        taste[orders["buyer"].to_numpy()[items["order_ref"]]] + rng.normal(scale=0.5, size=len(items))
    ).round(2)
    n_per = orders.groupby("buyer").size().reindex(customers["customer"], fill_value=0).to_numpy()
    mean_price = pd.Series(items["price"].to_numpy(), index=orders["buyer"].to_numpy()[items["order_ref"]])
    mean_price = mean_price.groupby(level=0).mean().reindex(customers["customer"]).fillna(0).to_numpy()
    y = 0.3 * n_per + 2 * mean_price + 0.01 * customers["age"] + rng.normal(scale=0.3, size=n_cust)
    train, test = customers.iloc[:1100].assign(y=y[:1100]), customers.iloc[1100:]
    out = {}
    for name, keep in (
        ("customer table alone", set()),
        ("+ orders (1 level)", {"orders"}),
        ("+ items via orders (graph)", None),
    ):
        tr, te = _joined({"orders": orders, "lines": items}, train, test, keep)
        out[name] = _rmse(tr.drop(columns=["y", "customer"]), tr["y"], te.drop(columns=["customer"]), y[1100:])
    return out


def weather(seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    airports, hours = [f"A{i:02d}" for i in range(30)], np.arange(24)
    obs = pd.DataFrame([(a, h) for a in airports for h in hours], columns=["station", "hr"])
    obs["temp"] = rng.normal(size=len(obs)).round(2)
    n = 6000
    flights = pd.DataFrame(
        {"flight": np.arange(n), "origin": rng.choice(airports, n), "dep_hour": rng.choice(hours, n)}
    )
    flights["distance"] = rng.integers(100, 3000, n)
    temp = obs.set_index(["station", "hr"])["temp"]
    t = temp.loc[list(zip(flights["origin"], flights["dep_hour"]))].to_numpy()
    late = (1.5 * t + 0.0003 * flights["distance"] + rng.normal(scale=0.7, size=n) > 0.5).astype(int)
    train, test = flights.iloc[:4500].assign(late=late[:4500]), flights.iloc[4500:]
    out = {}
    for name, keep in (("flights alone", set()), ("+ weather on (airport, hour)", None)):
        tr, te = _joined({"weather": obs}, train, test, keep)
        x_tr = tr.drop(columns=["late", "flight"]).assign(origin=tr["origin"].astype("category"))
        x_te = te.drop(columns=["flight"]).assign(origin=pd.Categorical(te["origin"], x_tr["origin"].cat.categories))
        model = HistGradientBoostingClassifier(random_state=0, categorical_features="from_dtype").fit(x_tr, tr["late"])
        out[name] = roc_auc_score(late[4500:], model.predict_proba(x_te[x_tr.columns])[:, 1])
    return out


def energy(seed: int) -> dict[str, float]:
    n = ENERGY_NAMES
    tables = energy_tables(np.random.default_rng(seed), buildings=60, hours=480)
    y_train, y_test = tables["train"][n["reading"]], tables["answers"][n["reading"]].to_numpy()
    train, test = tables["train"].drop(columns=n["reading"]), tables["test"].drop(columns=n["row"])
    side = {k: tables[k] for k in ("buildings", "weather_train", "weather_test")}
    weather = [c for c in tables["weather_train"] if c not in (n["weather_site"], n["weather_time"])]
    per_site = [  # each period's weather summarised per site, into the building table (the joins agentk made before)
        Join(
            f"raw/{name}.csv",
            [n["site"]],
            [],
            aggregate=weather,
            prefix=name,
            other_keys=[n["weather_site"]],
            many=True,
        )
        for name in ("weather_test", "weather_train")
    ]
    cols = [n["site"], "primary_use", "square_feet"]
    before = [Join("raw/buildings.csv", [n["building"]], ["train", "test"], cols, via=per_site)]
    out = {}
    for name, joins in (("rows alone", []), ("+ weather per site (before)", before), ("+ chained lookup", None)):
        tr, te = _joined(side, train, test, None, joins)
        out[name] = _rmse(_numbers(tr), y_train, _numbers(te), y_test)
    return out


def loans(seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    n, n_loans = 3000, 15000
    people = pd.DataFrame({"applicant": np.arange(n) + 10_000, "income": rng.lognormal(3, 0.5, n).round(1)})
    owner = rng.integers(0, n, n_loans)
    risk = rng.beta(1, 6, n)  # each applicant's chance that a loan of theirs goes bad
    bad = rng.random(n_loans) < risk[owner]
    status = np.where(bad, "Bad debt", rng.choice(["Active", "Closed", "Sold"], n_loans, p=[0.45, 0.45, 0.1]))
    history = pd.DataFrame({"owner": owner + 10_000, "status": status, "amount": rng.lognormal(8, 1, n_loans).round(0)})
    share = pd.Series(bad).groupby(owner).mean().reindex(range(n)).fillna(0).to_numpy()
    logit = 6 * share - 0.02 * people["income"].to_numpy() - 1.5 + rng.normal(scale=0.5, size=n)
    y = (logit > 0).astype(int)
    cut = 2200
    train, test = people.iloc[:cut].assign(default=y[:cut]), people.iloc[cut:]
    before = Join(
        "raw/history.csv", ["applicant"], ["train", "test"], aggregate=["amount"], prefix="history",
        other_keys=["owner"], many=True,
    )  # fmt: skip
    out = {}
    for name, keep, joins in (
        ("applicant table alone", set(), None),
        ("+ loans: count and amounts (before)", None, [before]),
        ("+ each status's share per applicant", None, None),
    ):
        tr, te = _joined({"history": history}, train, test, keep, joins)
        x_tr, x_te = tr.drop(columns=["default", "applicant"]), te.drop(columns=["applicant"])
        model = HistGradientBoostingClassifier(random_state=0).fit(x_tr, tr["default"])
        out[name] = roc_auc_score(y[cut:], model.predict_proba(x_te[x_tr.columns])[:, 1])
    return out


def quotes(seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    stocks, windows = np.arange(8), rng.choice(np.arange(5, 30_000), 250, replace=False)
    market = rng.lognormal(0, 0.45, len(windows))  # each window's market-wide volatility
    rows, book = [], []
    for s in stocks:
        base = rng.uniform(0.5, 2.0)
        for w, m in zip(windows, market):
            sigma = base * m * rng.lognormal(0, 0.2)  # this stock's volatility in this window
            ticks = np.sort(rng.choice(600, int(rng.integers(25, 46)), replace=False))
            price = 100 + np.cumsum(rng.normal(0, sigma, len(ticks)))  # a random walk: its steps are the signal
            book += [
                (int(w), int(t), round(float(p), 4), int(rng.geometric(0.01)), int(s)) for t, p in zip(ticks, price)
            ]
            rows.append((int(s), int(w), sigma * rng.lognormal(0, 0.15)))  # the next window's volatility
    quotes_table = pd.DataFrame(book, columns=["time_id", "seconds", "price", "size", "stock_id"])
    frame = pd.DataFrame(rows, columns=["stock_id", "time_id", "target"]).sample(frac=1, random_state=seed)
    cut = int(0.75 * len(frame))
    train, test = frame.iloc[:cut], frame.iloc[cut:].drop(columns="target")
    per_stock = Join(
        "raw/book.csv", ["stock_id"], ["train", "test"], aggregate=["time_id", "seconds", "price", "size"],
        prefix="book", many=True,
    )  # fmt: skip
    out = {}
    for name, keep, joins, moves in (
        ("the rows alone", set(), None, False),
        ("+ quotes summarised per stock (before)", None, [per_stock], False),
        ("+ per (stock, window): count, mean, min, max, std", None, None, False),
        ("+ the moves: root of summed squared changes", None, None, True),
    ):
        tr, te = _joined({"book": quotes_table}, train, test, keep, joins)
        x_tr = tr.drop(columns=["target", *[c for c in tr.columns if c.endswith("_moves") and not moves]])
        out[name] = _rmse(x_tr, tr["target"], te, frame["target"].iloc[cut:].to_numpy())
    return out


def _numbers(frame: pd.DataFrame) -> pd.DataFrame:
    """The inputs as numbers: a time stamp as its hour of the day (the test hours follow the train's), a text as its
    category code."""
    out = frame.copy()
    for c in out.select_dtypes(include="object").columns:
        stamp = pd.to_datetime(out[c], errors="coerce", format="ISO8601")
        out[c] = stamp.dt.hour if stamp.notna().all() else out[c].astype("category").cat.codes
    return out


def ratings(seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    n, n_test, n_users, n_items, rank = 60_000, 15_000, 1000, 1500, 3
    pairs = np.unique(np.stack([rng.integers(0, n_users, 2 * n), rng.integers(0, n_items, 2 * n)], axis=1), axis=0)
    users, items = pairs[rng.permutation(len(pairs))[: n + n_test]].T
    taste, kind = rng.normal(scale=0.7, size=(n_users, rank)), rng.normal(scale=0.7, size=(n_items, rank))
    y = rng.normal(size=n_users)[users] + rng.normal(size=n_items)[items] + (taste[users] * kind[items]).sum(axis=1)
    y += rng.normal(scale=0.5, size=n + n_test)
    frame = pd.DataFrame({"user": users + 1, "item": items + 1})
    fit, val = np.arange(int(0.8 * n)), np.arange(int(0.8 * n), n)
    labels = Labels(y[:n, None].copy(), [{"kind": "regression", "name": "rating"}], [1], fit, val)
    out = {"ids as numbers": _rmse(frame.iloc[:n], y[:n], frame.iloc[n:], y[n:])}
    tr, te, _ = engineer(frame.iloc[:n], frame.iloc[n:], labels)
    trees = _fitted(tr, y[:n])
    out["+ entity statistics (out of fold)"] = _error(y[n:], trees.predict(te[tr.columns]))
    codes = frame.to_numpy() - 1
    factors = Factorisation([n_users, n_items], RANKS, "regression").fit(codes[:n], y[:n])
    out["factorisation candidate (biases + factors)"] = _error(y[n:], factors.predict(codes[n:]))
    out["mean of the two"] = _error(y[n:], (factors.predict(codes[n:]) + trees.predict(te[tr.columns])) / 2)
    return out


def _rmse(x_train, y_train, x_test, y_test) -> float:
    return _error(y_test, _fitted(x_train, y_train).predict(x_test[x_train.columns]))


def _fitted(x_train, y_train):
    return HistGradientBoostingRegressor(random_state=0).fit(x_train, y_train)


def _error(truth, pred) -> float:
    return float(np.sqrt(mean_squared_error(truth, pred)))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--only", nargs="*", help="these problems alone (written to graph_features_<names>.md)")
    args = p.parse_args(argv)
    if args.seeds < 1:
        p.error("--seeds must be at least 1")
    lines = ["| problem | metric | variant | score (mean ± sd over seeds) |", "|---|---|---|---|"]
    problems = {
        "chain": ("RMSE", chain),
        "weather": ("AUC", weather),
        "energy": ("RMSE", energy),
        "ratings": ("RMSE", ratings),
        "loans": ("AUC", loans),
        "quotes": ("RMSE", quotes),
    }
    for problem, (metric, fn) in problems.items():
        if args.only and problem not in args.only:
            continue
        runs = [fn(s) for s in range(args.seeds)]
        for variant in runs[0]:
            scores = np.array([r[variant] for r in runs])
            lines.append(f"| {problem} | {metric} | {variant} | {scores.mean():.4f} ± {scores.std():.4f} |")
    text = "\n".join(lines)
    out = ROOT / "benchmarks" / "results" / f"graph_features{''.join('_' + name for name in args.only or [])}.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
