"""Lookups on a key assembled along a chain (issue 63): the weather of a (site, hour), the hour the row's and the
site its building's, reached through the building table, the weather given as one table per period. Decided by
the values: the layouts run under a building-energy competition's names and under names that say nothing."""

from __future__ import annotations

import html
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_fixture_layouts import run_map

from agentk import report
from agentk.competition import joins as joins_module
from agentk.competition.joins import apply, find_joins
from agentk.policies.analysis import analyse
from agentk.workspace import Workspace
from stages.codegen import JOIN_KEYED, join_lines
from stages.fetch import fetch_local
from testing.competitions.layouts import ENERGY_NAMES, energy_layout

NAMELESS = {  # the same layout under names that say nothing, each table spelling its keys its own way
    "train": "rows_l.csv",
    "test": "rows_t.csv",
    "buildings": "units.csv",
    "weather_train": "obs_a.csv",
    "weather_test": "obs_b.csv",
    "sample": "submission_form.csv",
    "building": "u",
    "meter": "k",
    "time": "t",
    "reading": "v",
    "row": "n",
    "site": "zone",
    "weather_site": "loc",
    "weather_time": "when",
    "temperature": "c1",
}


@pytest.mark.parametrize("names", [ENERGY_NAMES, NAMELESS], ids=["energy names", "names saying nothing"])
def test_the_weather_of_each_rows_hour_at_its_buildings_site_reaches_both_input_maps(tmp_path, names):
    """Not a summary of the weather per building (the test period's, stale for every train row): each train and
    test row's own hour's temperature at its building's site, from the table of its period."""
    tables = energy_layout(tmp_path / "folder", np.random.default_rng(0), names)
    ws = tmp_path / "ws"
    ws.mkdir()
    fetch_local(tmp_path / "folder" / "public", ws)
    a = analyse(ws)
    weather = pd.concat([tables["weather_train"], tables["weather_test"]])
    truth = dict(
        zip(zip(weather[names["weather_site"]], weather[names["weather_time"]]), weather[names["temperature"]])
    )
    site = dict(zip(tables["buildings"][names["building"]], tables["buildings"][names["site"]]))
    for split in ("train", "test"):
        rows = tables[split]
        out = run_map(ws, split, a)
        assert len(out) == len(rows) and not any(c.endswith(("_mean", "_count")) for c in out.columns)
        expected = [truth.get((site[b], t), np.nan) for b, t in zip(rows[names["building"]], rows[names["time"]])]
        np.testing.assert_array_equal(out[names["temperature"]].to_numpy(), np.array(expected))
        assert out[names["temperature"]].notna().mean() > 0.95
    [record] = [r for r in json.loads(Workspace(ws).joins.read_text()) if names["temperature"] in r["columns"]]
    path = (
        f"train.{names['building']} -> {names['buildings']} -> ({names['site']}, {names['time']}) -> "
        f"{names['weather_train']} + {names['weather_test']}"
    )
    assert record["path"] == path and html.escape(path) in report._joins(Workspace(ws))


def _joins(tmp_path, train: pd.DataFrame, test: pd.DataFrame, **others: pd.DataFrame):
    raw = tmp_path / "raw"
    raw.mkdir()
    paths = {"train": raw / "train.csv", "test": raw / "test.csv"}
    for name, frame in {"train": train, "test": test, **others}.items():
        frame.to_csv(raw / f"{name}.csv", index=False)
    return find_joins(tmp_path, raw, paths, pd.read_csv(paths["train"]), pd.read_csv(paths["test"]))


def test_older_and_newer_transactions_of_the_same_cards_stay_two_tables(tmp_path):
    """Two tables of the same columns that both hold train's and test's cards (a card's older purchases and its
    newer ones, the dates of the two apart) are no periods of one table: each is summarised per card on its own."""
    rng = np.random.default_rng(1)
    cards = pd.DataFrame({"card": [f"c{i:04d}" for i in range(300)], "since": rng.integers(2010, 2018, 300)})
    old_days = pd.date_range("2017-01-01", periods=300, freq="D").strftime("%Y-%m-%d")
    new_days = pd.date_range("2018-01-01", periods=60, freq="D").strftime("%Y-%m-%d")

    def purchases(days, n):
        return pd.DataFrame({"card": rng.choice(cards["card"], n), "day": rng.choice(days, n), "amount": rng.random(n)})

    train, test = cards.iloc[:200].assign(y=rng.random(200)), cards.iloc[200:]
    joins = _joins(tmp_path, train, test, older=purchases(old_days, 3000), newer=purchases(new_days, 900))
    assert sorted((j.name(), j.many, j.parts) for j in joins) == [("newer.csv", True, {}), ("older.csv", True, {})]


@pytest.mark.parametrize("lean", [False, True], ids=["read whole", "read lean"])
def test_a_table_split_by_period_and_keyed_by_the_rows_own_columns_is_looked_up_as_one(tmp_path, monkeypatch, lean):
    """Daily prices per store, one table for the train days and one for the test's (the second spelling its
    columns otherwise): one table, looked up on (store, day) by train's rows and test's alike, each its own day's
    row; read lean (past LEAN_BYTES: the key columns alone, in chunks), the same."""
    if lean:
        monkeypatch.setattr(joins_module, "LEAN_BYTES", 0)
        monkeypatch.setattr(joins_module, "CHUNK_ROWS", 97)
    rng = np.random.default_rng(2)
    days = pd.date_range("2020-01-01", periods=120, freq="D").strftime("%Y-%m-%d")
    prices = pd.DataFrame([(s, d) for s in range(8) for d in days], columns=["store", "day"])
    for c in ("price", "cost", "stock"):  # most of its columns its own: no version of the train table
        prices[c] = rng.normal(size=len(prices)).round(3)
    rows = prices[["store", "day"]].sample(700, random_state=0).sort_values("day").reset_index(drop=True)
    late = rows["day"] >= days[90]
    train, test = rows[~late].assign(y=rng.random((~late).sum())), rows[late]
    first, second = prices[prices["day"] < days[90]], prices[prices["day"] >= days[90]]
    second = second.rename(columns={"store": "Store", "price": "Price"})
    [j] = _joins(tmp_path, train, test, prices_a=first, prices_b=second)
    assert (j.keys, j.columns, j.splits, j.parts) == (
        ["store", "day"], ["price", "cost", "stock"], ["train", "test"], {"raw/prices_b.csv": {"Store": "store", "Price": "price"}}
    )  # fmt: skip
    assert j.record()["path"] == "train.(store, day) -> prices_a.csv + prices_b.csv"
    truth = prices.set_index(["store", "day"])["price"]
    for split, rows in (("train", train), ("test", test)):
        joined = apply(tmp_path, [j], rows.reset_index(drop=True), split)
        assert joined["price"].tolist() == truth.loc[list(zip(rows["store"], rows["day"]))].tolist()


def test_a_summarised_table_split_by_period_is_summarised_for_each_split_from_its_own_period(tmp_path, monkeypatch):
    """Readings of the train users in one table and of the test users in another (the second spelling its columns
    otherwise): each split's rows are summarised from their own table, under the same column names, by setup and
    by the generated map's code alike."""
    rng = np.random.default_rng(3)
    users = pd.DataFrame({"user": range(260), "age": rng.integers(18, 80, 260)})
    events = pd.DataFrame({"who": rng.integers(0, 260, 3000), "amount": rng.random(3000).round(3)})
    train, test = users.iloc[:200].assign(y=rng.random(200)), users.iloc[200:].reset_index(drop=True)
    early = events[events["who"] < 200]
    late = events[events["who"] >= 200].rename(columns={"who": "WHO", "amount": "Amount"})
    joins = _joins(tmp_path, train, test, events_a=early, events_b=late)
    assert [(Path(j.table).name, j.splits, j.many, j.prefix) for j in joins] == [
        ("events_a.csv", ["train"], True, "events_a"), ("events_b.csv", ["test"], True, "events_a")
    ]  # fmt: skip
    joined = apply(tmp_path, joins, test, "test")
    assert joined["events_a_count"].tolist() == [(late["WHO"] == u).sum() for u in test["user"]]
    monkeypatch.chdir(tmp_path)
    namespace = {"pd": pd, "df": test}
    exec("\n".join([*JOIN_KEYED, *join_lines(joins[1])]), namespace)  # noqa: S102 - the map's own code
    pd.testing.assert_frame_equal(namespace["df"], joined)
