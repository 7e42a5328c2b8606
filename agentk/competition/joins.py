"""Tables joined to the train and test tables by a key: the targets in a labels table (train_labels.csv keyed by
id), and per-entity tables with many rows per key (transactions per customer, atoms per molecule), which are
summarised per key (row count, mean of each numeric column) before the join. The expert's analysis joins its
frames with `apply`; the input maps' generated code does the same with `code`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from agentk.competition.dataview import read_table
from agentk.competition.tables import candidates, file_role

MIN_COVER = 0.5  # share of the train table's keys the other table must hold to be joined on that key


@dataclass
class Join:
    table: str  # workspace-relative path of the joined table
    key: str  # column of both tables
    splits: list[str]  # "train" (a labels table) or "train" and "test" (inputs)
    columns: list[str] = field(default_factory=list)  # one row per key: the columns brought in
    aggregate: list[str] = field(default_factory=list)  # many rows per key: the numeric columns averaged
    prefix: str = ""  # names the aggregated columns (<prefix>_count, <prefix>_<column>_mean)

    def describe(self) -> str:
        if self.aggregate or not self.columns:
            return (
                f"{Path(self.table).name}: many rows per {self.key!r}, summarised per {self.key!r} as a row count and "
                f"the mean of {self.aggregate} and joined to {' and '.join(self.splits)}"
            )
        return (
            f"{Path(self.table).name}: joined to {' and '.join(self.splits)} on {self.key!r}, bringing {self.columns}"
        )


def find_joins(ws: Path, raw: Path, tables: dict[str, Path], train: pd.DataFrame, test: pd.DataFrame) -> list[Join]:
    """The labels table (train only) and the other tables sharing a key with both train and test."""
    joins = []
    if "labels" in tables:
        other = read_table(tables["labels"])
        key = _key(train, other)
        if key:
            cols = [c for c in other.columns if c != key and c not in train.columns]
            joins.append(Join(str(tables["labels"].relative_to(ws)), key, ["train"], cols))
    used = set(tables.values())
    for path in candidates(raw):
        if path in used or file_role(path, raw) is not None:
            continue
        try:
            other = read_table(path)
        except Exception:  # noqa: BLE001 - a table that does not read is not joined (it is no train/test table)
            continue
        key = _key(train, other)
        if key is None or key not in test.columns or _key(test, other) != key:
            continue
        rel = str(path.relative_to(ws))
        if other[key].is_unique:
            cols = [c for c in other.columns if c != key and c not in train.columns]
            if cols:
                joins.append(Join(rel, key, ["train", "test"], cols))
        else:
            numeric = [c for c in other.columns if c != key and pd.api.types.is_numeric_dtype(other[c])]
            prefix = "".join(ch if ch.isalnum() else "_" for ch in path.name.split(".")[0])
            joins.append(Join(rel, key, ["train", "test"], aggregate=numeric, prefix=prefix))
    return joins


def _key(table: pd.DataFrame, other: pd.DataFrame) -> str | None:
    """The shared column whose values in `table` are mostly found in `other`."""
    for c in [c for c in table.columns if c in other.columns]:
        mine = table[c].dropna().astype(str)
        if len(mine) and mine.isin(set(other[c].dropna().astype(str))).mean() >= MIN_COVER:
            return c
    return None


def aggregated(other: pd.DataFrame, j: Join) -> pd.DataFrame:
    """One row per key: the row count and the means (the same as the generated code's)."""
    grouped = other.groupby(other[j.key].astype(str))
    out = pd.DataFrame({f"{j.prefix}_count": grouped.size()})
    for c in j.aggregate:
        out[f"{j.prefix}_{c}_mean"] = grouped[c].mean()
    return out.rename_axis(j.key).reset_index()


def apply(ws: Path, joins: list[Join], df: pd.DataFrame, split: str) -> pd.DataFrame:
    """`df` (a split's table) with the joined tables' columns."""
    for j in (j for j in joins if split in j.splits):
        other = read_table(Path(ws) / j.table)
        right = aggregated(other, j) if j.aggregate or not j.columns else other[[j.key, *j.columns]]
        right = right.assign(**{j.key: right[j.key].astype(str)})
        df = (
            df.assign(**{"_key": df[j.key].astype(str)})
            .merge(right.rename(columns={j.key: "_key"}), on="_key", how="left")
            .drop(columns="_key")
        )
    return df
