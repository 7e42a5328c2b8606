"""Partitioned datasets (agentk.competition.partitions): key=value folders become columns, a folder named as a table
holding its parts becomes one table, and table discovery then sees one table where there were many files."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from agentk.competition.normalise import normalise
from agentk.competition.partitions import datasets
from agentk.competition.tables import find


def _frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "row_id": np.arange(n) + 1000 * seed,
            "year": rng.choice([2019, 2020], n),
            "shop": rng.choice(["north", "south", "west"], n),
            "x": rng.normal(size=n).round(4),
        }
    )


def test_key_value_folders_become_columns_of_one_table(tmp_path):
    train, test = _frame(120, 0).assign(sold=lambda d: d["x"] > 0), _frame(40, 1)
    pq.write_to_dataset(pa.Table.from_pandas(train, preserve_index=False), tmp_path / "train.parquet", ["year", "shop"])
    pq.write_to_dataset(pa.Table.from_pandas(test, preserve_index=False), tmp_path / "test.parquet", ["year", "shop"])
    pd.DataFrame({"row_id": test["row_id"], "sold": False}).to_csv(tmp_path / "sample_submission.csv", index=False)
    assert datasets(tmp_path) == [tmp_path / "test.parquet", tmp_path / "train.parquet"]
    done = normalise(tmp_path)
    assert any("partitioned by ['year', 'shop']" in line for line in done), done
    tables = find(tmp_path)
    assert tables.paths["train"] == tmp_path / "train.csv" and tables.paths["test"] == tmp_path / "test.csv"
    got = pd.read_csv(tmp_path / "train.csv").set_index("row_id").loc[train["row_id"]]
    assert got["year"].tolist() == train["year"].tolist() and got["shop"].tolist() == train["shop"].tolist()
    assert np.allclose(got["x"], train["x"])
    assert not any("parts of" in line for line in normalise(tmp_path))  # done once


def test_a_folder_named_as_a_table_holding_its_parts_is_one_table(tmp_path):
    events = _frame(90, 2)
    (tmp_path / "data" / "events.parquet").mkdir(parents=True)
    for i, rows in enumerate(np.array_split(np.arange(90), 3)):
        events.iloc[rows].to_parquet(tmp_path / "data" / "events.parquet" / f"part-{i:05d}.parquet", index=False)
    assert datasets(tmp_path) == [tmp_path / "data" / "events.parquet"]
    normalise(tmp_path)
    got = pd.read_csv(tmp_path / "events.csv")
    assert sorted(got["row_id"]) == sorted(events["row_id"]) and list(got.columns) == list(events.columns)


def test_folders_that_are_no_partitions_are_left_alone(tmp_path):
    (tmp_path / "train" / "cats").mkdir(parents=True)
    _frame(10, 3).to_csv(tmp_path / "train" / "cats" / "list.csv", index=False)
    assert datasets(tmp_path) == []
