"""agentk.competition.wide_series: a table of one row per entity and one column per day, whose test names (entity,
day) pairs as composite values in a key table, melted into one row per entity and day, so that the forecast lies
as any other (tools.lags reads each entity's past)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from agentk.competition import wide_series
from agentk.competition.tables import find
from agentk.parsing import to_numeric
from agentk.policies.analysis import analyse
from stages.fetch import fetch_local
from testing.competitions import build
from tools.lags import forecast_layout


@pytest.fixture(scope="module")
def fetched(tmp_path_factory):
    folder = build("page-views-wide", tmp_path_factory.mktemp("fixtures"))
    ws = tmp_path_factory.mktemp("ws") / "ws"
    fetch_local(folder / "public", ws)
    return folder, ws


def _public(folder, name: str) -> pd.DataFrame:
    return pd.read_csv(folder / "public" / name, dtype=str)


def test_the_header_dates_and_the_composite_keys_are_read_off_the_values(fetched):
    folder, _ = fetched
    wide, key, sample = (_public(folder, n) for n in ("train_1.csv", "key_1.csv", "sample_submission_1.csv"))
    rec = wide_series.detect(wide, key, sample)
    assert rec is not None and (rec["key"], rec["composite"], rec["sep"]) == ("Page", "Page", "_")
    assert (rec["id"], rec["target"]) == ("Id", "Visits") and len(rec["dates"]) == wide.shape[1] - 1
    # the page names hold the separator too: the date is what follows the last one
    test = wide_series.test_rows(key, wide, rec)
    assert (test["Page"] + "_" + test["date"] == key["Page"]).all() and (test["Id"] == key["Id"]).all()
    assert set(test["Page"]) <= set(wide["Page"])


def test_the_melted_train_holds_every_recorded_cell_once(fetched):
    folder, _ = fetched
    wide, key, sample = (_public(folder, n) for n in ("train_1.csv", "key_1.csv", "sample_submission_1.csv"))
    rec = wide_series.detect(wide, key, sample)
    long = wide_series.train_rows(wide, rec)
    assert list(long.columns) == ["Page", "date", "Visits"]
    cells = wide.set_index("Page").apply(to_numeric)
    assert len(long) == cells.notna().sum().sum()  # the days not recorded are no rows
    back = long.pivot(index="Page", columns="date", values="Visits").loc[cells.index, cells.columns]
    assert np.allclose(back.to_numpy(float), cells.to_numpy(float), equal_nan=True)


def test_tables_of_other_columns_or_keys_without_dates_are_no_wide_series(fetched):
    folder, _ = fetched
    wide, key, sample = (_public(folder, n) for n in ("train_1.csv", "key_1.csv", "sample_submission_1.csv"))
    pixels = wide.set_axis(["Page", *[f"pixel{k}" for k in range(wide.shape[1] - 1)]], axis=1)
    assert wide_series.date_columns(pixels) == [] and wide_series.detect(pixels, key, sample) is None
    numbered = key.assign(Page=key["Page"].str.rsplit("_", n=1).str[0] + "_" + key.index.astype(str))
    assert wide_series.detect(wide, numbered, sample) is None  # the tail is a number, not a day


def test_setup_reads_the_melted_tables_as_a_forecast_of_each_page(fetched):
    _, ws = fetched
    raw = ws / "raw"
    paths = find(raw).paths
    assert paths["train"].name == "train_1_series.csv" and paths["test"].name == "key_1_series.csv"
    a = analyse(ws)
    assert a.metric == "smape" and [(t.column, t.kind) for t in a.targets] == [("Visits", "regression")]
    assert {"Page", "date"} <= set(a.features)
    train, test = pd.read_csv(paths["train"]), pd.read_csv(paths["test"])
    layout = forecast_layout(train, test)
    assert layout is not None and layout.key == ["Page"] and layout.time == "date" and layout.season == 7
