"""The data graph (agentk.competition.graph) and the joins it gives (agentk.competition.joins): links found from
the values whatever the columns and files are called, keys over two columns, chains of tables, and a table attached
to the table whose keys it shares most completely."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from agentk.competition import joins as joins_module
from agentk.competition.graph import Node, link
from agentk.competition.joins import CHUNK_ROWS, apply, find_joins, join_keyed
from agentk.competition.normalise import normalise
from agentk.competition.normalise.split_rows_as_one import split_rows_as_one
from agentk.competition.readers import read_chunks
from agentk.competition.tables import find
from stages.codegen import JOIN_KEYED, join_lines


def _competition(tmp_path, train: pd.DataFrame, test: pd.DataFrame, **others: pd.DataFrame):
    raw = tmp_path / "raw"
    raw.mkdir(parents=True)
    tables = {"train": raw / "train.csv", "test": raw / "test.csv"}
    train.to_csv(tables["train"], index=False)
    test.to_csv(tables["test"], index=False)
    for name, frame in others.items():
        frame.to_csv(raw / f"{name}.csv", index=False)
    train, test = pd.read_csv(tables["train"]), pd.read_csv(tables["test"])
    joins = find_joins(tmp_path, raw, tables, train, test)
    return joins, apply(tmp_path, joins, train, "train"), apply(tmp_path, joins, test, "test")


def _split(frame: pd.DataFrame, n_train: int):
    return frame.iloc[:n_train].reset_index(drop=True), frame.iloc[n_train:].reset_index(drop=True)


def test_a_key_spread_over_two_columns_looks_up_its_row(tmp_path):
    """Flights and the weather by airport and hour: neither column alone names a weather row, the pair does."""
    rng = np.random.default_rng(0)
    airports, hours = ["AAA", "BBB", "CCC", "DDD"], list(range(24))
    weather = pd.DataFrame([(a, h) for a in airports for h in hours], columns=["station", "hr"])
    weather["temp"] = rng.normal(size=len(weather)).round(3)
    flights = pd.DataFrame(
        {"flight": range(300), "origin": rng.choice(airports, 300), "dep_hour": rng.choice(hours, 300)}
    )
    train, test = _split(flights.assign(late=rng.integers(0, 2, 300)), 200)
    joins, tr, te = _competition(tmp_path, train, test.drop(columns="late"), weather_obs=weather)
    assert [(j.keys, j.other_keys, j.columns) for j in joins] == [(["origin", "dep_hour"], ["station", "hr"], ["temp"])]
    truth = weather.set_index(["station", "hr"])["temp"]
    assert te["temp"].tolist() == [truth[(a, h)] for a, h in zip(te["origin"], te["dep_hour"])]
    assert len(tr) == len(train) and tr["temp"].notna().all()


def test_a_chain_of_lookups_reaches_the_second_table(tmp_path):
    """Each customer has a branch; each branch a region: the region's columns reach the customers."""
    rng = np.random.default_rng(1)
    customers = pd.DataFrame({"cid": [f"C{i:04d}" for i in range(150)], "age": rng.integers(18, 80, 150)})
    branches = pd.DataFrame(
        {"client": customers["cid"], "branch_code": [f"B{i:03d}" for i in rng.integers(0, 60, 150)]}
    )
    regions = pd.DataFrame({"code": [f"B{i:03d}" for i in range(60)], "wealth": rng.normal(size=60).round(2)})
    train, test = _split(customers.assign(y=rng.integers(0, 2, 150)), 100)
    joins, tr, te = _competition(tmp_path, train, test.drop(columns="y"), accounts=branches, zones=regions)
    [j] = joins
    assert j.table.endswith("accounts.csv") and [v.table.rsplit("/", 1)[-1] for v in j.via] == ["zones.csv"]
    wealth = dict(zip(regions["code"], regions["wealth"]))
    branch = dict(zip(branches["client"], branches["branch_code"]))
    assert te["wealth"].tolist() == [wealth[branch[c]] for c in te["cid"]]


def test_a_grandchild_table_is_summarised_into_its_parent_before_the_parent_is(tmp_path):
    """Users, their orders, each order's items: the items are counted per order, the orders per user. The order
    numbers 0..n overlap the user numbers, but all of them are the orders' and only some the users': coverage both
    ways attaches the items to the orders."""
    rng = np.random.default_rng(2)
    users = pd.DataFrame({"user": range(80), "x": rng.normal(size=80).round(3)})
    orders = pd.DataFrame(
        {"order_no": range(400), "buyer": rng.integers(0, 80, 400), "total": rng.random(400).round(2)}
    )
    items = pd.DataFrame({"ord": rng.integers(0, 400, 2000), "price": rng.random(2000).round(2)})
    train, test = _split(users.assign(y=rng.normal(size=80)), 60)
    joins, tr, te = _competition(tmp_path, train, test.drop(columns="y"), orders=orders, lines=items)
    [j] = joins
    assert j.many and j.keys == ["user"] and j.other_keys == ["buyer"]
    assert [(v.table.rsplit("/", 1)[-1], v.keys, v.other_keys, v.many) for v in j.via] == [
        ("lines.csv", ["order_no"], ["ord"], True)
    ]
    per_order = items.groupby("ord").size().reindex(orders["order_no"], fill_value=0).to_numpy()
    mine = orders["buyer"] == te["user"].iloc[0]
    assert te["orders_count"].iloc[0] == mine.sum()
    assert te["orders_lines_count_mean"].iloc[0] == pytest.approx(per_order[mine.to_numpy()].mean())
    assert "orders_order_no_mean" not in te.columns  # the orders' own numbers say nothing


def test_a_text_column_of_few_values_is_summarised_as_each_values_share_per_key(tmp_path):
    """Loans per applicant, each loan's status one of a few words: per applicant, the share of their loans in each
    status (what a Kaggler counts: refused or bad-debt loans), in setup and in the generated map alike, the same
    whole and in chunks; a text of many values (a free note) is not counted."""
    rng = np.random.default_rng(8)
    people = pd.DataFrame({"pid": range(120), "x": rng.normal(size=120).round(3)})
    n = 900
    loans = pd.DataFrame(
        {
            "owner": rng.integers(0, 120, n),
            "status": rng.choice(["Active", "Closed", "Bad debt"], n, p=[0.5, 0.4, 0.1]),
            "note": [f"n{i}" for i in range(n)],
            "amount": rng.random(n).round(3),
        }
    )
    train, test = _split(people.assign(y=rng.normal(size=120)), 90)
    joins, tr, te = _competition(tmp_path, train, test.drop(columns="y"), loans=loans)
    [j] = joins
    assert j.many and j.shares == {"status": ["Active", "Bad debt", "Closed"]}
    assert "loans_status_Bad_debt_share" in j.brought() and not any("note" in c for c in j.brought())
    bad = (loans["status"] == "Bad debt").groupby(loans["owner"]).mean()
    assert te["loans_status_Bad_debt_share"].tolist() == pytest.approx(bad.reindex(te["pid"]).tolist(), nan_ok=True)
    shares = [c for c in te.columns if c.endswith("_share")]
    assert np.allclose(te[shares].sum(axis=1)[te["loans_count"] > 0], 1.0)
    chunks = (loans.iloc[i : i + 50] for i in range(0, n, 50))
    chunked = join_keyed(test, chunks, ["pid"], ["owner"], [], ["amount"], "loans", True, j.shares)
    pd.testing.assert_frame_equal(chunked[te.columns.drop("y", errors="ignore")], te, rtol=1e-9)
    scope = {"pd": pd, "np": np, "df": test.drop(columns="y")}
    exec("\n".join([*JOIN_KEYED, "", *join_lines(j)]).replace(f"'{j.table}'", repr(str(tmp_path / j.table))), scope)
    pd.testing.assert_frame_equal(scope["df"], te, rtol=1e-9)


def test_a_table_named_like_a_role_is_still_joined_by_its_values(tmp_path):
    """samples_events.tsv reads as a sample submission by its name; its values make it an events table."""
    rng = np.random.default_rng(3)
    ids = [f"r{i}" for i in range(120)]
    events = pd.DataFrame({"ref": rng.choice(ids, 600), "reading": rng.normal(size=600).round(3)})
    train, test = _split(pd.DataFrame({"key": ids, "a": rng.random(120), "y": rng.random(120)}), 90)
    joins, tr, te = _competition(tmp_path, train, test.drop(columns="y"), samples_events=events)
    assert [j.table.rsplit("/", 1)[-1] for j in joins] == ["samples_events.csv"]
    assert te["samples_events_count"].sum() == events["ref"].isin(test["key"]).sum()


def test_an_older_version_of_the_test_table_is_not_joined(tmp_path):
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"id": range(200), "store": rng.integers(0, 60, 200), "a": rng.random(200)})
    old = pd.DataFrame({"id": range(500, 560), "store": rng.integers(0, 60, 60), "a": rng.random(60)})
    train, test = _split(frame.assign(y=rng.random(200)), 150)
    joins, _, _ = _competition(tmp_path, train, test.drop(columns="y"), test_2019=old)
    assert joins == []


def test_pairs_of_columns_are_not_linked_when_one_alone_names_the_rows():
    table = Node("t", pd.DataFrame({"a": ["x", "y", "z"], "b": [1, 2, 3]}))
    grid = Node("g", pd.DataFrame({"k": ["x", "y", "z"], "m": [1, 1, 1], "v": [0.5, 0.25, 0.125]}))
    edge = link(table, grid)
    assert edge is not None and edge.cols == ("a",) and edge.dst_cols == ("k",) and not edge.many


def test_a_pair_that_names_the_rows_outranks_a_shared_column_that_does_not():
    """Both tables have an hour column: alone it links many flights to many weather rows; with the airport, one."""
    rng = np.random.default_rng(5)
    weather = pd.DataFrame([(a, h) for a in "ABCD" for h in range(24)], columns=["station", "hour"])
    weather["temp"] = rng.normal(size=len(weather))
    flights = Node("train", pd.DataFrame({"origin": rng.choice(list("ABCD"), 200), "hour": rng.integers(0, 24, 200)}))
    edge = link(flights, Node("weather", weather))
    assert edge.cols == ("origin", "hour") and edge.dst_cols == ("station", "hour") and not edge.many


def test_a_link_between_large_tables_in_different_orders_is_found():
    """More distinct keys than are sampled: each side's sample is looked up in all of the other's values (the
    first 20,000 of each in file order would share a third of their values here)."""
    rng = np.random.default_rng(6)
    ids = np.array([f"u{i:06d}" for i in range(60_000)])
    users = Node("train", pd.DataFrame({"uid": ids, "a": rng.random(60_000)}))
    profiles = Node("p", pd.DataFrame({"who": rng.permutation(ids), "b": rng.random(60_000)}))
    edge = link(users, profiles)
    assert edge is not None and edge.cols == ("uid",) and edge.dst_cols == ("who",)
    assert edge.cover == edge.back == 1.0 and not edge.many


def test_a_key_over_four_columns_is_found_greedily():
    """The weather by airport, month, day and hour (a year column holding one value, one hour repeated): no column
    alone, nor any pair or triple, names a weather row; the four together do, and the flights' values of them are
    found there. The flights' 0/1 target, whose values a wind direction holds, is no part of the key."""
    rng = np.random.default_rng(8)
    grid = [(a, m, d, h) for a in ("EWR", "JFK", "LGA") for m in range(1, 4) for d in range(1, 29) for h in range(24)]
    weather = pd.DataFrame(grid, columns=["origin", "month", "day", "hour"]).assign(year=2013)
    weather["temp"] = rng.normal(size=len(weather)).round(2)
    weather["wind_dir"] = rng.integers(0, 37, len(weather)) * 10  # 0 among them: the target's values seem found
    weather = pd.concat([weather, weather.iloc[[5]]], ignore_index=True)  # an hour repeated (the clocks went back)
    n = 3000
    flights = pd.DataFrame(
        {
            "year": 2013,
            "month": rng.integers(1, 4, n),
            "day": rng.integers(1, 29, n),
            "dep_hour": rng.integers(0, 24, n),
            "airport": rng.choice(["EWR", "JFK", "LGA"], n),
            "distance": rng.integers(100, 3000, n),
            "delayed": rng.integers(0, 2, n),
        }
    )
    edge = link(Node("train", flights), Node("weather", weather))
    assert edge is not None and not edge.many
    assert edge.dst_cols == ("origin", "month", "day", "hour")
    assert edge.cols == ("airport", "month", "day", "dep_hour")
    assert edge.cover == 1.0


def test_a_table_summarised_in_chunks_gives_what_it_gives_whole():
    """Issue 49: a many-rows table is summarised a chunk at a time (read_csv's chunksize), the chunks' counts,
    means, squared deviations, extremes and changes combined: the same count, mean, min, max, spread and moves per
    key as on the whole table, with missing values, keys over two columns and keys found in one chunk only."""
    rng = np.random.default_rng(4)
    n = 1500
    other = pd.DataFrame(
        {"a": rng.integers(0, 30, n), "b": rng.integers(0, 3, n), "v": rng.normal(size=n), "w": rng.random(n) * 1e6}
    )
    other.loc[rng.random(n) < 0.3, "v"] = np.nan
    other.loc[other["a"] % 7 == 0, "w"] = np.nan  # some keys have no value of w at all
    other.loc[n - 3 :, ["a", "b"]] = [[99, 99]] * 3  # a key only the last chunk holds
    df = pd.DataFrame({"a": [*range(30), 99, 500], "b": [*(i % 3 for i in range(30)), 99, 0]})
    whole = join_keyed(df, other, ["a", "b"], ["a", "b"], [], ["v", "w"], "t", True)
    grouped = other.groupby(["a", "b"])[["v", "w"]]
    for size in (n, 200, 3):  # one chunk, several, and chunks of three rows (a key's rows spread over many)
        chunked = join_keyed(df, (other.iloc[i : i + size] for i in range(0, n, size)), ["a", "b"], ["a", "b"], [], ["v", "w"], "t", True)  # fmt: skip
        pd.testing.assert_frame_equal(chunked, whole, rtol=1e-9)
    stats = ("mean", "min", "max", "std", "moves")
    assert list(whole.columns[2:]) == ["t_count", *(f"t_{c}_{h}" for c in "vw" for h in stats)]
    moves = other.dropna(subset=["v"]).groupby(["a", "b"])["v"].apply(lambda v: np.sqrt((v.diff() ** 2).sum()))
    assert whole.loc[3, "t_v_moves"] == pytest.approx(moves.loc[(3, 0)]) and whole.loc[3, "t_v_moves"] > 0
    assert whole["t_count"].tolist()[-2:] == [3, 0]  # the last chunk's key; a key without rows counts 0
    key = (3, 0)  # row 3 of df
    assert whole.loc[3, "t_v_std"] == pytest.approx(grouped.std().loc[key, "v"])
    assert whole.loc[3, "t_w_mean"] == pytest.approx(grouped.mean().loc[key, "w"])
    assert np.isnan(whole.loc[7, "t_w_mean"]) and np.isnan(whole.loc[31, "t_v_max"])  # no values; no rows


def test_a_summarised_table_is_read_in_chunks_by_setup_and_by_the_generated_map(tmp_path, monkeypatch):
    """Setup's joins and the map's generated code read a summarised table with no table hanging from it a chunk
    at a time, and give the same columns as reading it whole."""
    rng = np.random.default_rng(5)
    users = pd.DataFrame({"user": range(50), "x": rng.normal(size=50).round(3)})
    events = pd.DataFrame({"who": rng.integers(0, 50, 3000), "amount": rng.random(3000).round(3)})
    train, test = _split(users.assign(y=rng.normal(size=50)), 40)
    joins, whole, _ = _competition(tmp_path / "whole", train, test.drop(columns="y"), events=events)
    monkeypatch.setattr(joins_module, "CHUNK_ROWS", 128)
    chunks = list(read_chunks(tmp_path / "whole" / joins[0].table, 128))
    assert len(chunks) == 24 and pd.concat(chunks).reset_index(drop=True).equals(pd.read_csv(tmp_path / "whole" / joins[0].table))  # fmt: skip
    _, chunked, _ = _competition(tmp_path / "chunked", train, test.drop(columns="y"), events=events)
    pd.testing.assert_frame_equal(chunked, whole, rtol=1e-9)
    [read] = [line for line in join_lines(joins[0]) if "read_csv" in line]
    assert read.endswith(f", chunksize={CHUNK_ROWS})")


def test_large_side_tables_read_lean_give_the_joins_they_give_whole(tmp_path, monkeypatch):
    """Past LEAN_BYTES a side table is read in chunks keeping only the columns that may hold keys (texts as
    categories, united over the chunks): the links found, the joins planned and the joined tables are those of
    reading every table whole, a chain, a lookup by a text key and a summary included."""
    rng = np.random.default_rng(6)
    users = pd.DataFrame({"user": [f"u{i:03d}" for i in range(60)], "x": rng.normal(size=60).round(3)})
    shops = pd.DataFrame({"shop": [f"s{i:02d}" for i in range(20)], "size": rng.random(20).round(3)})
    orders = pd.DataFrame(
        {
            "order_no": range(500),
            "buyer": rng.choice(users["user"], 500),
            "shop": rng.choice(shops["shop"], 500),
            "total": rng.random(500).round(2),
        }
    )
    items = pd.DataFrame({"ord": rng.integers(0, 500, 3000), "price": rng.random(3000).round(2)})
    profiles = pd.DataFrame({"who": users["user"], "score": rng.normal(size=60).round(3)})
    train, test = _split(users.assign(y=rng.normal(size=60)), 45)
    others = {"orders": orders, "lines": items, "shops": shops, "profiles": profiles}
    whole = _competition(tmp_path / "whole", train, test.drop(columns="y"), **others)
    monkeypatch.setattr(joins_module, "LEAN_BYTES", 0)
    monkeypatch.setattr(joins_module, "CHUNK_ROWS", 97)
    lean = _competition(tmp_path / "lean", train, test.drop(columns="y"), **others)
    assert [j.record() for j in lean[0]] == [j.record() for j in whole[0]]
    assert {Path(j.table).name for j in whole[0]} == {"orders.csv", "profiles.csv"}
    for a, b in zip(lean[1:], whole[1:], strict=True):
        pd.testing.assert_frame_equal(a, b)
    raw = tmp_path / "lean" / "raw"
    tables = {"train": raw / "train.csv", "test": raw / "test.csv"}
    nodes = joins_module._side_tables(tmp_path / "lean", raw, tables, train, test.drop(columns="y"))
    node = nodes["raw/orders.csv"]
    assert list(node.frame.columns) == ["order_no", "buyer", "shop"] and len(node.frame) == 500
    assert isinstance(node.frame["buyer"].dtype, pd.CategoricalDtype) and list(node.schema.columns) == list(orders)


def _split_readings(folder, labelled_rows: bool = True) -> None:
    """training_set.csv / test_set.csv: 3-5 readings per sample; their samples' own tables beside (metadata)."""
    rng = np.random.default_rng(0)
    ids = [f"obj{k}" for k in range(40)]
    readings = pd.DataFrame(
        [(i, round(float(v), 3)) for i in ids for v in rng.normal(size=int(rng.integers(3, 6)))],
        columns=["object", "flux"],
    )
    train, test = ids[:30], ids[30:]
    readings[readings["object"].isin(train)].to_csv(folder / "training_set.csv", index=False)
    readings[readings["object"].isin(test)].to_csv(folder / "test_set.csv", index=False)
    meta = pd.DataFrame({"object": ids, "z": rng.normal(size=40).round(3), "target": rng.integers(0, 2, size=40)})
    meta.iloc[:30].to_csv(folder / "training_set_metadata.csv", index=False)
    meta.iloc[30:, :2].to_csv(folder / "test_set_metadata.csv", index=False)
    pd.DataFrame({"object": test, "target": 0}).to_csv(folder / "sample_submission.csv", index=False)


def test_readings_cut_by_split_become_one_table_and_the_samples_tables_are_train_and_test(tmp_path):
    """training_set.csv and test_set.csv hold many readings per sample (by their names, the train and test tables);
    each sample's own row is in *_metadata.csv. Read off the values, the readings become one table
    (set_rows.csv, standing in for both), so the metadata tables are train and test, and the readings are
    summarised per sample for both splits."""
    _split_readings(tmp_path)
    older = pd.read_csv(tmp_path / "test_set_metadata.csv").assign(object=lambda f: f["object"] + "_2019")
    older.to_csv(tmp_path / "test_set_2019.csv", index=False)  # an older test set: other ids
    assert find(tmp_path).paths["test"].name == "test_set_metadata.csv"  # each sample id once
    assert normalise(tmp_path) == [
        "set_rows.csv: training_set.csv and test_set.csv (many rows per sample, of the train and of the test "
        "samples) as one table"
    ]
    rows = pd.read_csv(tmp_path / "set_rows.csv")
    whole = pd.concat([pd.read_csv(tmp_path / f) for f in ("training_set.csv", "test_set.csv")], ignore_index=True)
    pd.testing.assert_frame_equal(rows, whole)
    paths = find(tmp_path).paths
    assert (paths["train"].name, paths["test"].name) == ("training_set_metadata.csv", "test_set_metadata.csv")
    train, test = pd.read_csv(paths["train"]), pd.read_csv(paths["test"])
    (j,) = find_joins(tmp_path.parent, tmp_path, paths, train, test)
    assert (j.table, j.splits, j.many) == (f"{tmp_path.name}/set_rows.csv", ["train", "test"], True)
    assert normalise(tmp_path) == []  # once


def test_readings_without_a_table_of_the_test_samples_stay_the_train_and_test_tables(tmp_path):
    """Readings per sample with no other table of the test samples (X_train.csv, X_test.csv, y_train.csv), and
    train and test tables of one row per sample whose targets are in a labels table: nothing is merged."""
    _split_readings(tmp_path)
    (tmp_path / "test_set_metadata.csv").unlink()
    assert split_rows_as_one(tmp_path) == []
    other = tmp_path / "labels"
    other.mkdir()
    ids = [f"s{k}" for k in range(40)]
    frame = pd.DataFrame({"sid": ids, "x": range(40)})
    frame.iloc[:30].to_csv(other / "train.csv", index=False)
    frame.iloc[30:].to_csv(other / "test.csv", index=False)
    pd.DataFrame({"sid": ids[:30], "y": 1}).to_csv(other / "train_labels.csv", index=False)
    pd.DataFrame({"sid": ids[:30], "note": "a"}).to_csv(other / "extra.csv", index=False)
    pd.DataFrame({"sid": ids[30:], "y": 0}).to_csv(other / "sample_submission.csv", index=False)
    assert split_rows_as_one(other) == []


def test_a_table_of_many_rows_per_pair_of_columns_is_summarised_per_pair(tmp_path):
    """An order book's quotes, many per stock and time window, and one train row per window: summarised by the
    stock alone, every window of a stock had the same numbers; by the pair, each window its own (the stock is
    repeated by train and by the book alike, and no column alone names a train row)."""
    rng = np.random.default_rng(11)
    stocks, windows = [0, 1, 3, 6], rng.permutation(np.arange(5, 3000, 7))[:60]
    rows = [(s, w) for s in stocks for w in windows]
    vol = {r: rng.uniform(0.5, 2.0) for r in rows}
    book = pd.DataFrame(
        [(w, t, round(float(rng.normal(100, vol[(s, w)])), 4), int(rng.integers(1, 300)), s)
         for s, w in rows for t in rng.choice(600, 20, replace=False)],
        columns=["time_id", "seconds", "price", "size", "stock_id"],
    )  # fmt: skip
    frame = pd.DataFrame(rows, columns=["stock_id", "time_id"]).assign(target=[vol[r] for r in rows])
    train, test = _split(frame.sample(frac=1, random_state=0).reset_index(drop=True), 180)
    joins, tr, te = _competition(tmp_path, train, test.drop(columns="target"), book=book)
    [j] = joins
    assert j.many and j.keys == j.other_keys and sorted(j.keys) == ["stock_id", "time_id"]
    truth = book.groupby(["stock_id", "time_id"])["price"].std()
    for out in (tr, te):
        std = [c for c in out.columns if c.endswith("price_std")][0]
        assert np.allclose(out[std], [truth[(s, w)] for s, w in zip(out["stock_id"], out["time_id"])])
    assert np.corrcoef(tr[std], tr["target"])[0, 1] > 0.8  # each window's own spread: the signal


def test_a_small_count_is_not_added_to_a_key_it_only_seems_to_match():
    """Train repeats a shop (many rows per shop) and has a month 1-12; the side table has many rows per shop and a
    quantity 1-40: every month is a quantity, but most (shop, quantity) pairs are no (shop, month) of train's."""
    rng = np.random.default_rng(12)
    train = Node("train", pd.DataFrame({"shop": rng.integers(0, 20, 400), "month": rng.integers(1, 13, 400)}))
    sales = Node("s", pd.DataFrame({"shop": rng.integers(0, 20, 3000), "qty": rng.integers(1, 41, 3000)}))
    edge = link(train, sales)
    assert edge is not None and edge.cols == ("shop",) and edge.many


def test_a_category_both_tables_hold_does_not_outrank_the_entity_key():
    """Applicants and their previous applications, both with the weekday the application was made: the weekday
    covers every value both ways, the applicant's number only the 88 % of applicants with an earlier application.
    Summarised per weekday, every applicant of a weekday had the same history."""
    rng = np.random.default_rng(13)
    days = ["MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY"]
    people = pd.DataFrame({"applicant": np.arange(2000) + 100_000, "weekday": rng.choice(days, 2000)})
    owners = rng.choice(people["applicant"][rng.random(2000) < 0.88], 4300)
    earlier = pd.DataFrame({"prev": np.arange(4300), "applicant": owners, "weekday": rng.choice(days, 4300)})
    edge = link(Node("train", people), Node("prev", earlier.assign(amount=rng.random(4300))))
    assert edge is not None and edge.cols == ("applicant",) and edge.many and edge.cover < 0.9


def test_a_data_dictionary_beside_the_tables_is_not_joined(tmp_path):
    """A table describing the columns (a row number, the table, the column's name, its description) is no data:
    its row numbers 1..120 hold most of a count of days late, which looked them up."""
    rng = np.random.default_rng(14)
    n = 400
    people = pd.DataFrame(
        {"person": np.arange(n) + 5000, "days_late": rng.integers(0, 100, n), "income": rng.random(n)}
    )
    names = [*people.columns, "default", *(f"FLAG_DOC_{k}" for k in range(117))]
    dictionary = pd.DataFrame(
        {"Unnamed: 0": np.arange(1, len(names) + 1), "Table": "people.csv", "Row": names, "Description": "what it is"}
    )
    train, test = _split(people.assign(default=rng.integers(0, 2, n)), 300)
    joins, tr, _ = _competition(tmp_path, train, test.drop(columns="default"), columns_description=dictionary)
    assert joins == [] and list(tr.columns) == list(train.columns)
