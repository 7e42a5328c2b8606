"""The "forecasting" fixture family: sales over days, the test rows the days after the train's. What the expert
reads off each (metric, inputs, the store table joined by its key), and the metrics it names scoring as their
definitions say."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from agentk.policies.analysis import analyse
from stages.fetch import fetch_local
from testing.competitions import build, registry
from tools.metrics import METRICS
from tools.task_data import time_column

FIXTURES = sorted(n for n, fx in registry().items() if fx.family == "forecasting")
FUTURE = ("store-item-forecast", "store-table-rmspe")  # test rows the days after the train rows


@pytest.fixture(scope="module")
def fetched(tmp_path_factory) -> dict[str, tuple[Path, Path]]:
    dest = tmp_path_factory.mktemp("fixtures")
    out = {}
    for name in FIXTURES:
        folder = build(name, dest)
        ws = tmp_path_factory.mktemp(name) / "ws"
        fetch_local(folder / "public", ws)
        out[name] = folder, ws
    return out


@pytest.mark.parametrize("name", FIXTURES)
def test_the_metric_is_read_off_the_description_and_the_test_days_are_other_days(fetched, name):
    folder, ws = fetched[name]
    a, meta = analyse(ws), json.loads((folder / "meta.json").read_text())
    assert a.metric == meta["metric"] and a.metric_from == "description"
    assert [(t.kind, t.submit) for t in a.targets] == [("regression", "value")]
    if name in FUTURE:
        train, test = (pd.read_csv(folder / "public" / f"{s}.csv") for s in ("train", "test"))
        date = next(c for c in test.columns if c.lower() == "date")
        assert pd.to_datetime(test[date]).min() > pd.to_datetime(train[date]).max()


@pytest.mark.parametrize(
    "name, column", [("store-item-forecast", "date"), ("store-table-rmspe", "Date"), ("datetime-id-counts", None)]
)
def test_a_test_set_after_the_train_rows_in_time_is_a_forecast(fetched, name, column):
    public = fetched[name][0] / "public"
    train, test = pd.read_csv(public / "train.csv"), pd.read_csv(public / "test.csv")
    assert time_column(train, test) == column  # the hourly rentals' test days are interleaved with the train's
    assert time_column(train, train) is None
    if column:
        shuffled = test.assign(**{column: train[column].sample(len(test), replace=True, random_state=0).to_numpy()})
        assert time_column(train, shuffled) is None  # test days drawn from the train's span: not a forecast


def test_the_store_table_is_joined_and_the_train_only_column_is_no_input(fetched):
    folder, ws = fetched["store-table-rmspe"]
    a = analyse(ws)
    store = pd.read_csv(folder / "public" / "store.csv")
    assert set(store.columns) - {"Store"} <= set(a.features)  # the store's attributes, through its key
    assert "Customers" not in a.features and "Sales" not in a.features


def test_rmspe_leaves_out_the_rows_without_sales(fetched):
    folder, _ = fetched["store-table-rmspe"]
    answers = pd.read_csv(folder / "private" / "answers.csv")["Sales"].to_numpy(float)
    assert (answers == 0).any()  # closed days
    guess = np.where(answers == 0, 1e6, answers * 1.1)  # 10 % off on every open day, absurd on closed ones
    assert METRICS["rmspe"].fn(answers, guess) == pytest.approx(0.1)


def test_a_timestamp_id_is_also_an_input_unless_another_column_gives_the_time(fetched, tmp_path):
    _, ws = fetched["datetime-id-counts"]
    a = analyse(ws)
    assert a.id_col == "datetime" and "datetime" in a.features  # the hour of each row is the main signal
    assert not {"casual", "registered", "count"} & set(a.features)  # train-only parts of the count
    taxi = tmp_path / "taxi"
    fetch_local(build("taxi-trip-fares", tmp_path) / "public", taxi)
    a = analyse(taxi)  # its key is a timestamp too, but pickup_datetime gives the time: the key stays a name
    assert a.id_col == "key" and "key" not in a.features and "pickup_datetime" in a.features
