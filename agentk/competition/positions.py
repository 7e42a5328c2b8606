"""Per-position targets: records (JSON) that hold sequences, a string per field with one character per position (the
bases of an RNA, its structure in brackets, its loop types), and number lists with one value per scored position
(the reactivity at each base); the sample submission has one row per test record and position, `<id>_<position>`.

Fetch writes each split one row per position (`<stem>_positions.csv`, standing in for the records): the sample's id,
the position (from the start and from the end), each sequence field's character there and WINDOW characters each
side of it, the record's own fields (its id: a group), and in train each list's value there (train rows only for
the positions the lists cover).
The lists the sample names are then ordinary target columns, scored by the stated metric over the rows."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

WINDOW = 3  # characters each side of a position that are its features
PAD = "_"  # the character before the first position and after the last
MIN_LENGTH, MAX_SYMBOLS = 10, 12  # a sequence: this long at least, of few distinct characters
MIN_COVER = 0.3  # a per-position list covers this share of its sequence's positions at least
POSITION_ID = re.compile(r"^(.+?)([_\-:])(\d+)$")


def _is_list(v) -> bool:
    return isinstance(v, list | tuple | np.ndarray)


def sequence_fields(records: pd.DataFrame) -> list[str]:
    """String fields whose values are sequences: at least MIN_LENGTH characters, few distinct ones in all."""
    out = []
    for c in records.columns:
        s = records[c]
        if s.dtype != object or not s.map(lambda v: isinstance(v, str)).all():
            continue
        lengths = s.str.len()
        symbols = set().union(*(set(v) for v in s.head(200)))
        if lengths.min() >= MIN_LENGTH and len(symbols) <= MAX_SYMBOLS and s.nunique() > 1:
            out.append(c)
    return out


def list_fields(records: pd.DataFrame, length: pd.Series) -> list[str]:
    """Fields holding number lists of one value per position, for some of the positions (30 % or more)."""
    out = []
    for c in records.columns:
        s = records[c]
        if s.dtype != object or not s.map(_is_list).all():
            continue
        n = s.map(len)
        numeric = s.head(50).map(lambda v: all(isinstance(x, int | float) for x in v)).all()
        if numeric and (n <= length).all() and (n >= MIN_COVER * length).all():
            out.append(c)
    return out


def detect(train: pd.DataFrame, test: pd.DataFrame, sample: pd.DataFrame) -> dict | None:
    """{"id": the records' id field, "key": the sample's id column, "sep", "sequences", "lists"} when the sample's
    rows are the test records' positions and its columns are train's number lists; None otherwise."""
    sequences = [c for c in sequence_fields(test) if c in train.columns]
    if not sequences or sample.shape[1] < 2:
        return None
    length = train[sequences].apply(lambda col: col.str.len()).max(axis=1)
    lists = list_fields(train, length)
    key = sample.columns[0]
    if not set(sample.columns[1:]) <= set(lists):
        return None
    parts = sample[key].astype(str).str.extract(POSITION_ID)
    if parts.isna().any().any() or parts[1].nunique() != 1:
        return None
    record_ids = set(parts[0])
    ids = next((c for c in test.columns if test[c].dtype == object and record_ids <= set(test[c].astype(str))), None)
    if ids is None or ids not in train.columns:
        return None
    return {"id": ids, "key": key, "sep": parts[1].iloc[0], "sequences": sequences, "lists": lists}


def as_rows(records: pd.DataFrame, rec: dict, labelled: bool) -> pd.DataFrame:
    """One row per record and position (module docstring); labelled: train, its rows the positions its lists
    cover, each list's value a column."""
    seqs = rec["sequences"]
    length = records[seqs].apply(lambda col: col.str.len()).max(axis=1).to_numpy()
    lists = [c for c in rec["lists"] if c in records.columns] if labelled else []
    covered = records[lists].apply(lambda col: col.map(len)).max(axis=1).to_numpy() if lists else length
    record = np.repeat(np.arange(len(records)), covered)
    position = np.concatenate([np.arange(n) for n in covered]) if len(records) else np.zeros(0, int)
    ids = records[rec["id"]].astype(str).to_numpy()[record]
    out = {rec["key"]: pd.Series(ids) + rec["sep"] + pd.Series(position).astype(str)}
    out["position"] = position
    out["length"] = length[record]
    out["from_end"] = length[record] - position - 1
    for f in seqs:
        padded = records[f].astype(str).map(lambda v: PAD * WINDOW + v + PAD * WINDOW).to_numpy()
        for k in range(-WINDOW, WINDOW + 1):
            name = f if k == 0 else f"{f}_{'prev' if k < 0 else 'next'}{abs(k)}"
            out[name] = [padded[r][p + WINDOW + k] for r, p in zip(record, position, strict=True)]
    # the record's own fields, its id among them: the rows of one record are a group to validate on together
    own = [c for c in records.columns if c not in seqs and not records[c].map(_is_list).any() and c not in rec["lists"]]
    for c in own:
        out[c] = records[c].to_numpy()[record]
    for c in lists:
        values = records[c].to_numpy()
        out[c] = [values[r][p] if p < len(values[r]) else np.nan for r, p in zip(record, position, strict=True)]
    return pd.DataFrame(out)
