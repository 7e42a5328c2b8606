"""Series kept wide: a train table of one row per entity (a page, a product) and one column per day, the header's
names dates and the cells numbers, whose test table names each (entity, day) to predict as one composite value,
`<entity><sep><date>` (the entity a value of the train table's key column, the date after the train's days), beside
the sample submission's id.

Models learn one row per observation, so fetch writes both long (`<stem>_series.csv`, standing in for each): train
as (key, date, target) rows, one per entity and day with a value (the target named as the sample's predicted
column; the train table's other columns carried along), and the test as (id, key, date) rows split from the
composite values (the train's other columns joined by the key). The forecast then lies like any other: a time
column whose test days follow the train's, an entity key both share (tools.lags reads each entity's past from it).
Nothing is recognised by a name: the dates are read off the header, the composite values split where their tail
parses as a date and their head is a train key."""

from __future__ import annotations

import warnings

import pandas as pd

from agentk.parsing import to_numeric

SERIES = "_series"  # <stem>_series.csv: one row per entity and day, written by normalise
DATE = "date"  # the long tables' time column
MIN_DATES = 10  # date columns a wide series table has at least, and
DATE_COLUMNS = 0.8  # this share of its columns
SEPARATORS = ("_", "-", ":", "|", " ", "/")
MATCH = 0.9  # of a sample of the composite values that must split into a train key and a date
SAMPLE = 500
MAX_ROWS = 20_000_000  # long train rows at most: the latest days of every entity past it


def _dates(values: pd.Series) -> pd.Series:
    """Values parsed as dates (NaT where one does not): text with a digit-separator-digit pattern only."""
    text = values.astype(str)
    datelike = text.str.contains(r"\d[-/.]\d|\d{8}", regex=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas warns when it infers the format element by element
        parsed = pd.to_datetime(text.where(datelike), errors="coerce", format="mixed")
    return parsed


def date_columns(train: pd.DataFrame) -> list[str]:
    """The columns whose names are dates, when they are MIN_DATES at least and DATE_COLUMNS of the table's."""
    parsed = _dates(pd.Series(train.columns.astype(str), index=train.columns))
    dates = [c for c in train.columns if pd.notna(parsed[c])]
    return dates if len(dates) >= MIN_DATES and len(dates) >= DATE_COLUMNS * train.shape[1] else []


def detect(train: pd.DataFrame, test: pd.DataFrame, sample: pd.DataFrame) -> dict | None:
    """How a wide series table's test is named, or None: {"key", "dates", "composite", "sep", "id", "target"}: the
    train's key column (one row per value), its date columns, the test column of composite values and their
    separator, the sample's id column (a test column too) and its one predicted column."""
    dates = date_columns(train)
    if not dates or sample.shape[1] != 2 or sample.columns[0] not in test.columns:
        return None
    keys = [c for c in train.columns if c not in dates and train[c].notna().all() and train[c].is_unique]
    for composite in [c for c in test.columns if c != sample.columns[0]]:
        values = test[composite].dropna().astype(str)
        values = values.sample(min(len(values), SAMPLE), random_state=0)
        for sep in SEPARATORS:
            parts = values.str.rsplit(sep, n=1)
            if not (parts.str.len() == 2).all():
                continue
            head, tail = parts.str[0], parts.str[1]
            if _dates(tail).notna().mean() < MATCH:
                continue
            for key in keys:
                if head.isin(set(train[key].astype(str))).mean() >= MATCH:
                    found = {"key": key, "dates": dates, "composite": composite, "sep": sep}
                    return found | {"id": sample.columns[0], "target": sample.columns[1]}
    return None


def train_rows(train: pd.DataFrame, rec: dict) -> pd.DataFrame:
    """The wide train table as one row per entity and day with a value: key, date (ISO), target, other columns;
    the latest days only, when every day would make more than MAX_ROWS rows."""
    dates = rec["dates"]
    days = pd.Series(_dates(pd.Series(dates)).dt.strftime("%Y-%m-%d").to_numpy(), index=dates)
    keep = max(1, MAX_ROWS // max(1, len(train)))
    dates = sorted(dates, key=lambda c: days[c])[-keep:]
    others = [c for c in train.columns if c not in rec["dates"]]
    long = train[others + dates].melt(id_vars=others, value_vars=dates, var_name=DATE, value_name=rec["target"])
    long[DATE] = long[DATE].map(days)
    long[rec["target"]] = to_numeric(long[rec["target"]], errors="coerce")
    long = long.dropna(subset=[rec["target"]])
    return long[[rec["key"], DATE, rec["target"], *[c for c in others if c != rec["key"]]]].reset_index(drop=True)


def test_rows(test: pd.DataFrame, train: pd.DataFrame, rec: dict) -> pd.DataFrame:
    """The test table as (id, key, date) rows, its composite values split, the train's other columns joined by the
    key (its own other columns kept)."""
    parts = test[rec["composite"]].astype(str).str.rsplit(rec["sep"], n=1)
    rows = pd.DataFrame({rec["id"]: test[rec["id"]], rec["key"]: parts.str[0]})
    rows[DATE] = _dates(parts.str[1]).dt.strftime("%Y-%m-%d").to_numpy()
    own = [c for c in test.columns if c not in (rec["id"], rec["composite"], rec["key"], DATE)]
    rows = pd.concat([rows, test[own]], axis=1)
    attributes = [c for c in train.columns if c not in rec["dates"] and c != rec["key"] and c not in rows]
    if attributes:
        table = train[[rec["key"], *attributes]].astype({rec["key"]: str})
        rows = rows.merge(table, on=rec["key"], how="left")
    return rows
