"""What a table's column holds, read from its values: dates and times (below features and the task's split, which
both ask)."""

from __future__ import annotations

import warnings

import pandas as pd
from pandas.tseries.api import guess_datetime_format

DATE_SHARE = 0.95  # of a sample of a column's values that must parse as dates
DATE_SAMPLE = 500


def text_sample(s: pd.Series) -> pd.Series:
    """Up to DATE_SAMPLE of a column's known values as text, the same draw for every check of the column."""
    values = s.dropna()  # drawn before it is made text: a column of millions of rows as text takes gigabytes
    return values.sample(min(len(values), DATE_SAMPLE), random_state=0).astype(str)


def is_datetime(s: pd.Series) -> bool:
    """Whether the column holds dates or times: a datetime dtype, or text whose sample nearly all parses."""
    if pd.api.types.is_datetime64_any_dtype(s):
        return True
    if pd.api.types.is_numeric_dtype(s) or s.dtype == bool:
        return False
    sample = text_sample(s)
    if sample.empty:
        return False
    # a date has digits and a date or time separator; plain numbers and codes like "B/0/P" do not parse
    if not sample.str.contains(r"\d[-/:.]\d|\d{4}-\d", regex=True).mean() >= DATE_SHARE:
        return False
    return as_datetime(sample).notna().mean() >= DATE_SHARE


def as_datetime(s: pd.Series) -> pd.Series:
    """Dates and times as naive UTC timestamps, NaT where a value does not parse. The first value's format parses
    the column at once; only the values it misses are parsed one by one ("mixed"): on a million timestamps, 13 s
    instead of 64."""
    if pd.api.types.is_datetime64_any_dtype(s):
        return s.dt.tz_localize(None) if getattr(s.dt, "tz", None) is not None else s
    text = s.astype("string")
    known = text.dropna()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas warns when it infers the format element by element
        fmt = guess_datetime_format(known.iloc[0]) if len(known) else None
        parsed = pd.to_datetime(text, errors="coerce", utc=True, format=fmt or "mixed")
        missed = parsed.isna() & text.notna()
        if fmt and missed.any():
            parsed[missed] = pd.to_datetime(text[missed], errors="coerce", utc=True, format="mixed")
    return parsed.dt.tz_localize(None)
