"""Tables joined to the train and test tables by a key: the targets in a labels table (train_labels.csv keyed by
id), and per-entity tables with many rows per key (transactions per customer, atoms per molecule), which are
summarised per key (row count, mean of each numeric column) before the join. The key is found from the values,
never the names: a column of the split's table whose values are distinct (an entity's key) and mostly found in a
column of the other table, whatever either is called. The expert's analysis joins its frames with `apply`; the
input maps' generated code does the same (stages/codegen.py: join_lines)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from agentk.competition.dataview import read_table
from agentk.competition.tables import candidates, file_role, stand_ins

MIN_COVER = 0.5  # share of the train table's keys the other table must hold to be joined on that key


@dataclass
class Join:
    table: str  # workspace-relative path of the joined table
    key: str  # column of the train/test table
    splits: list[str]  # "train" (a labels table) or "train" and "test" (inputs)
    columns: list[str] = field(default_factory=list)  # one row per key: the columns brought in
    aggregate: list[str] = field(default_factory=list)  # many rows per key: the numeric columns averaged
    prefix: str = ""  # names the aggregated columns (<prefix>_count, <prefix>_<column>_mean)
    other_key: str = ""  # the key's column in the joined table (default: the same name)

    def __post_init__(self):
        self.other_key = self.other_key or self.key

    def describe(self) -> str:
        on = self.key if self.other_key == self.key else f"{self.key!r} = its {self.other_key!r}"
        if self.aggregate or not self.columns:
            return (
                f"{Path(self.table).name}: many rows per {on}, summarised per {self.key!r} as a row count and "
                f"the mean of {self.aggregate} and joined to {' and '.join(self.splits)}"
            )
        return f"{Path(self.table).name}: joined to {' and '.join(self.splits)} on {on}, bringing {self.columns}"


def find_joins(ws: Path, raw: Path, tables: dict[str, Path], train: pd.DataFrame, test: pd.DataFrame) -> list[Join]:
    """The labels table (train only) and the other tables sharing a key with both train and test."""
    joins = []
    if "labels" in tables:
        other = read_table(tables["labels"])
        key = _key(train, other)
        if key:
            mine, theirs = key
            cols = [c for c in other.columns if c != theirs and c not in train.columns]
            joins.append(Join(str(tables["labels"].relative_to(ws)), mine, ["train"], cols, other_key=theirs))
    used = set(tables.values()) | {raw / original for original in stand_ins(raw)}  # a written table stands in
    for path in candidates(raw):
        if path in used or file_role(path, raw) is not None:
            continue
        try:
            other = read_table(path)
        except Exception:  # noqa: BLE001 - a table that does not read is not joined (it is no train/test table)
            continue
        key = _key(train, other)
        if key is None:
            continue
        mine, theirs = key
        rel = str(path.relative_to(ws))
        if key[0] not in test.columns or _key(test, other, [key]) != key:
            # keyed by train's entities alone: what it adds only train has (targets, or leaks no map may use)
            cols = [c for c in other.columns if c != theirs and c not in train.columns]
            if "labels" not in tables and other[theirs].is_unique and cols:
                joins.append(Join(rel, mine, ["train"], cols, other_key=theirs))
            continue
        if other[theirs].is_unique:
            cols = [c for c in other.columns if c != theirs and c not in train.columns]
            if cols:
                joins.append(Join(rel, mine, ["train", "test"], cols, other_key=theirs))
        else:
            numeric = [c for c in other.columns if c != theirs and pd.api.types.is_numeric_dtype(other[c])]
            prefix = "".join(ch if ch.isalnum() else "_" for ch in path.name.split(".")[0])
            joins.append(Join(rel, mine, ["train", "test"], aggregate=numeric, prefix=prefix, other_key=theirs))
    return joins


def key_text(values: pd.Series) -> pd.Series:
    """A key's values as text, as both sides of a join compare them: "12.0" read as a float is "12", and a number's
    zero padding goes ("00012" read as text on one side is 12 read as a number on the other)."""
    text = values.astype(str).str.strip()
    text = text.str.replace(r"^(-?\d+)\.0$", r"\1", regex=True) if values.dtype.kind == "f" else text
    return text.str.replace(r"^0+(?=\d+$)", "", regex=True)


def _key(table: pd.DataFrame, other: pd.DataFrame, only: list | None = None) -> tuple[str, str] | None:
    """(the column of `table`, the column of `other`) that key one to the other, found from their values: most of
    the table column's values are found in the other's, and neither holds measurements (numbers with decimals).
    The table's column is an entity's key (its values distinct), or refers to the rows of a lookup table (the other
    column distinct) with many values of its own or the same name: a column of small counts is found in any
    numbered lookup table. The best covered pair wins; ties go to the table's leftmost column (ids come first),
    then to a pair that shares its name."""
    found = []
    for i, c in enumerate(table.columns):
        mine = table[c].dropna()
        if not len(mine) or _measured(mine):
            continue
        distinct = mine.nunique() >= 0.9 * len(mine)
        values = set(key_text(mine))
        for d in other.columns:
            if only is not None and (c, d) not in only:
                continue
            theirs = other[d].dropna()
            if _measured(theirs) or not (distinct or c == d or (len(values) >= 50 and theirs.is_unique)):
                continue
            cover = len(values & set(key_text(theirs))) / len(values)
            if cover >= MIN_COVER:
                found.append((-round(cover, 2), i, c != d, c, d))
    return min(found)[3:] if found else None


def _measured(values: pd.Series) -> bool:
    """Numbers with decimals: measurements, not keys."""
    return values.dtype.kind == "f" and bool((values != values.round()).any())


def aggregated(other: pd.DataFrame, j: Join) -> pd.DataFrame:
    """One row per key: the row count and the means (the same as the generated code's)."""
    grouped = other.groupby(key_text(other[j.other_key]))
    out = pd.DataFrame({f"{j.prefix}_count": grouped.size()})
    for c in j.aggregate:
        out[f"{j.prefix}_{c}_mean"] = grouped[c].mean()
    return out.rename_axis("_key").reset_index()


def apply(ws: Path, joins: list[Join], df: pd.DataFrame, split: str) -> pd.DataFrame:
    """`df` (a split's table) with the joined tables' columns: a key without rows in a per-entity table has a
    row count of 0."""
    for j in (j for j in joins if split in j.splits):
        other = read_table(Path(ws) / j.table)
        if j.aggregate or not j.columns:
            right = aggregated(other, j)
        else:
            right = other[j.columns].assign(_key=key_text(other[j.other_key]))
        df = df.assign(_key=key_text(df[j.key])).merge(right, on="_key", how="left").drop(columns="_key")
        if j.aggregate or not j.columns:
            df[f"{j.prefix}_count"] = df[f"{j.prefix}_count"].fillna(0)
    return df
