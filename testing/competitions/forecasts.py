"""Fixture family "forecasting": sales per store and item over days, the test rows the days after the train rows,
as Kaggle's demand-forecasting competitions lay them out: one long table of (date, store, item, sales), scored by
SMAPE; a store-sales table whose store attributes sit in a second table keyed by store, with a train-only
column (customers) and closed days, scored by RMSPE over the days with sales; and hourly rentals whose timestamp is
also the submission's id, the hour of day their main signal, scored by RMSLE. Every dataset is synthetic: weekly
and yearly seasonality, a trend and per-store and per-item levels."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from testing.competitions import fixture
from testing.competitions.targets import _description

FAMILY = "forecasting"


def _days(start: str, n: int) -> pd.DatetimeIndex:
    return pd.date_range(start, periods=n, freq="D")


def _seasonal(days: pd.DatetimeIndex, rng: np.random.Generator) -> np.ndarray:
    """A multiplicative level per day: a weekly pattern, a yearly wave and a slow trend."""
    week = 1 + 0.25 * np.sin(2 * np.pi * (days.dayofweek.to_numpy() + rng.uniform()) / 7)
    year = 1 + 0.2 * np.sin(2 * np.pi * days.dayofyear.to_numpy() / 365.25)
    trend = 1 + 0.15 * np.arange(len(days)) / 365
    return week * year * trend


def _write(
    folder: Path, title: str, task: str, evaluation: str, files: dict[str, pd.DataFrame], answers, metric: str
) -> dict:
    """Writes the description, the tables (train.csv, test.csv, the sample and any other) and the answers of a
    regression scored by `metric` (lower is better); returns its meta."""
    pub = folder / "public"
    listing = "\n".join(f"- {name}" for name in files)
    (pub / "description.md").write_text(_description(title, task, evaluation, listing))
    for name, frame in files.items():
        frame.to_csv(pub / name, index=False)
    answers.to_csv(folder / "private" / "answers.csv", index=False)
    return {
        "modalities": {"inputs": ["tabular"], "targets": ["tabular"]},
        "task_type": "Reg",
        "metric": metric,
        "lower_is_better": True,
        "supported": True,
        "n_train": len(files["train.csv"]),
        "n_test": len(files["test.csv"]),
        "answers": "private/answers.csv",
        "sample_submission": "public/sample_submission.csv",
    }


@fixture(FAMILY, "daily sales per store and item over two years, the test the 90 days after the train's, SMAPE")
def store_item_forecast(folder: Path, rng: np.random.Generator) -> dict:
    # two years of history, as such competitions give: the test's season was seen a year before
    stores, items, n_train_days, n_test_days = 4, 6, 730, 90
    days = _days("2016-01-01", n_train_days + n_test_days)
    level = np.outer(rng.uniform(0.6, 1.6, stores), rng.uniform(8, 40, items))  # store x item mean sales
    season = _seasonal(days, rng)
    rows = [
        (d, s + 1, i + 1, rng.poisson(level[s, i] * season[k]))
        for k, d in enumerate(days)
        for s in range(stores)
        for i in range(items)
    ]
    frame = pd.DataFrame(rows, columns=["date", "store", "item", "sales"])
    frame["date"] = frame["date"].dt.strftime("%Y-%m-%d")
    cut = n_train_days * stores * items
    train, future = frame.iloc[:cut], frame.iloc[cut:].reset_index(drop=True)
    test = future.drop(columns="sales").assign(id=np.arange(len(future)))[["id", "date", "store", "item"]]
    answers = pd.DataFrame({"id": test["id"], "sales": future["sales"]})
    return _write(
        folder,
        "Store item demand",
        "Predict the daily sales of each item at each store for the three months after the training data.",
        "Submissions are evaluated on SMAPE between forecasts and actual values. We define SMAPE = 0 when the "
        "actual and predicted values are both 0.",
        {"train.csv": train, "test.csv": test, "sample_submission.csv": pd.DataFrame({"id": test["id"], "sales": 52})},
        answers,
        "smape",
    )


@fixture(FAMILY, "store sales with a store table keyed by store, a train-only customers column, closed days; RMSPE")
def store_table_rmspe(folder: Path, rng: np.random.Generator) -> dict:
    n_stores, n_train_days, n_test_days = 30, 200, 40
    days = _days("2014-03-01", n_train_days + n_test_days)
    store = pd.DataFrame(
        {
            "Store": np.arange(1, n_stores + 1),
            "StoreType": rng.choice(list("abcd"), n_stores),
            "Assortment": rng.choice(list("abc"), n_stores),
            "CompetitionDistance": rng.lognormal(7.5, 1.0, n_stores).round(-1),
        }
    )
    type_effect = {"a": 1.0, "b": 1.6, "c": 0.9, "d": 1.2}
    base = (
        rng.uniform(3000, 9000, n_stores)
        * store["StoreType"].map(type_effect).to_numpy()
        * (1 + 0.15 * (np.log(store["CompetitionDistance"].to_numpy()) - 7.5))
    )
    season = _seasonal(days, rng)
    day, shop = np.meshgrid(np.arange(len(days)), np.arange(n_stores), indexing="ij")
    day, shop = day.ravel(), shop.ravel()
    when = days[day]
    promo = (rng.random(len(day)) < 0.4).astype(int)
    closed = (when.dayofweek.to_numpy() == 6) | (rng.random(len(day)) < 0.02)
    holiday = rng.random(len(day)) < 0.03
    sales = base[shop] * season[day] * (1 + 0.25 * promo) * rng.lognormal(0, 0.08, len(day))
    sales = np.where(closed, 0, sales).round()
    frame = pd.DataFrame(
        {
            "Store": shop + 1,
            "DayOfWeek": when.dayofweek.to_numpy() + 1,
            "Date": when.strftime("%Y-%m-%d"),
            "Sales": sales.astype(int),
            "Customers": np.where(closed, 0, sales / rng.uniform(8, 11, len(day))).round().astype(int),
            "Open": (~closed).astype(int),
            "Promo": promo,
            "StateHoliday": np.where(holiday, "a", "0"),
            "SchoolHoliday": (rng.random(len(day)) < 0.2).astype(int),
        }
    )
    cut = n_train_days * n_stores
    train, future = frame.iloc[:cut], frame.iloc[cut:].reset_index(drop=True)
    test = future.drop(columns=["Sales", "Customers"]).assign(Id=np.arange(1, len(future) + 1))
    test = test[["Id", *[c for c in test.columns if c != "Id"]]]
    answers = pd.DataFrame({"Id": test["Id"], "Sales": future["Sales"]})
    return _write(
        folder,
        "Store sales",
        "Forecast the daily sales of each store for the six weeks after the training data. store.csv holds "
        "supplemental information about the stores.",
        "Submissions are evaluated on the Root Mean Square Percentage Error (RMSPE). Any day and store with 0 "
        "sales is ignored in scoring.",
        {
            "train.csv": train,
            "test.csv": test,
            "store.csv": store,
            "sample_submission.csv": pd.DataFrame({"Id": test["Id"], "Sales": 0}),
        },
        answers,
        "rmspe",
    )


@fixture(
    FAMILY,
    "hourly rentals keyed by their timestamp (the sample's id), the hour the main signal; train-only parts of the count; RMSLE",
)
def datetime_id_counts(folder: Path, rng: np.random.Generator) -> dict:
    hours = pd.date_range("2011-01-01", periods=24 * 120, freq="h")
    hour, day = hours.hour.to_numpy(), hours.dayofweek.to_numpy()
    working = (day < 5).astype(int)
    temp = (
        15 + 10 * np.sin(2 * np.pi * (hours.dayofyear.to_numpy() - 100) / 365) + rng.normal(0, 3, len(hours))
    ).round(1)
    commute = working * (np.exp(-((hour - 8) ** 2) / 3) + np.exp(-((hour - 18) ** 2) / 4))
    leisure = (1 - working) * np.exp(-((hour - 14) ** 2) / 12)
    level = np.clip(20 + 300 * commute + 200 * leisure + 4 * temp, 1, None)
    registered = rng.poisson(0.8 * level)
    casual = rng.poisson(0.2 * level)
    frame = pd.DataFrame(
        {
            "datetime": hours.strftime("%Y-%m-%d %H:%M:%S"),
            "workingday": working,
            "weather": rng.choice([1, 2, 3], len(hours), p=[0.6, 0.3, 0.1]),
            "temp": temp,
            "humidity": rng.integers(20, 100, len(hours)),
            "casual": casual,
            "registered": registered,
            "count": casual + registered,
        }
    )
    in_test = hours.day.to_numpy() > 19  # the last days of each month, as a month's first days train
    train, future = frame[~in_test].reset_index(drop=True), frame[in_test].reset_index(drop=True)
    test = future.drop(columns=["casual", "registered", "count"])
    return _write(
        folder,
        "Bike rentals",
        "Forecast the number of bikes rented in each hour of the test days.",
        "Submissions are evaluated on the Root Mean Squared Logarithmic Error (RMSLE).",
        {
            "train.csv": train,
            "test.csv": test,
            "sample_submission.csv": pd.DataFrame({"datetime": test["datetime"], "count": 0}),
        },
        future[["datetime", "count"]],
        "rmsle",
    )


@fixture(
    FAMILY,
    "daily views of pages, one row per page and one column per day; the test days keyed by page_day in a key file; SMAPE",
)
def page_views_wide(folder: Path, rng: np.random.Generator) -> dict:
    n_pages, n_train_days, n_test_days = 300, 200, 40
    days = _days("2016-01-01", n_train_days + n_test_days)
    projects = ["en.wiki.org", "de.wiki.org", "fr.wiki.org", "ja.wiki.org"]
    pages = [
        f"Topic_{k}_{rng.choice(projects)}_{rng.choice(['all-access', 'mobile-web'])}_all-agents"
        for k in range(n_pages)
    ]
    level = rng.lognormal(5, 1.5, n_pages)  # some pages seen by a few, others by thousands
    weekly = 1 + rng.uniform(0, 0.4, n_pages)[:, None] * np.sin(2 * np.pi * (days.dayofweek.to_numpy() + 1) / 7)
    drift = np.exp(np.cumsum(rng.normal(0, 0.03, (n_pages, len(days))), axis=1))  # each page's slow wander
    views = rng.poisson(level[:, None] * weekly * drift).astype(float)
    views[:, :n_train_days][rng.random((n_pages, n_train_days)) < 0.02] = np.nan  # days not recorded
    stamps = days.strftime("%Y-%m-%d")
    train = pd.DataFrame(views[:, :n_train_days], columns=stamps[:n_train_days]).round()
    train.insert(0, "Page", pages)
    future = [
        (f"{p}_{d}", views[k, n_train_days + j])
        for k, p in enumerate(pages)
        for j, d in enumerate(stamps[n_train_days:])
    ]
    ids = [f"{v:012x}" for v in rng.choice(16**12, len(future), replace=False)]
    key = pd.DataFrame({"Page": [p for p, _ in future], "Id": ids})
    answers = pd.DataFrame({"Id": ids, "Visits": [v for _, v in future]})
    pub = folder / "public"
    listing = "\n".join(f"- {name}" for name in ("train_1.csv", "key_1.csv", "sample_submission_1.csv"))
    (pub / "description.md").write_text(
        _description(
            "Page views forecasting",
            "Forecast the daily views of each page for the days after the training data. key_1.csv maps each page "
            "and day (the page's name, an underscore and the date) to the Id of the submission's row.",
            "Submissions are evaluated on SMAPE between forecasts and actual values. We define SMAPE = 0 when the "
            "actual and predicted values are both 0.",
            listing,
        )
    )
    train.to_csv(pub / "train_1.csv", index=False)
    key.sample(frac=1, random_state=0).to_csv(pub / "key_1.csv", index=False)
    pd.DataFrame({"Id": key["Id"], "Visits": 0}).to_csv(pub / "sample_submission_1.csv", index=False)
    answers.to_csv(folder / "private" / "answers.csv", index=False)
    return {
        "modalities": {"inputs": ["tabular"], "targets": ["tabular"]},
        "task_type": "Reg",
        "metric": "smape",
        "lower_is_better": True,
        "supported": True,
        "n_train": n_pages,
        "n_test": len(key),
        "answers": "private/answers.csv",
        "sample_submission": "public/sample_submission_1.csv",
    }
