"""Generic feature engineering for a tab input map, from what its columns hold, never from what a competition or a
column is called beyond generic patterns:
- datetimes: a text column whose values parse as dates becomes its parts (year, month, day, day of week, day of
  year, hour, minute where they vary), cyclic encodings (sin/cos of month, day of week, hour) and the elapsed days
  since the earliest train time; the text column itself goes (a network cannot read it, AutoGluon gets the parts).
- coordinates: numeric columns named like a latitude/longitude (a lat/latitude and a lon/lng/long/longitude token)
  whose values lie in [-90, 90] / [-180, 180], paired by the rest of their names into points; between two points
  the haversine distance (km), the initial bearing (sin/cos) and the coordinate differences.
- high-cardinality categoricals: a text column with many levels gets the count of each value over the train and
  test rows together (no targets involved, so nothing leaks and every row can be encoded).

engineer(train, test) returns both frames with the new columns and a record of what was added and why; the solver
applies it (apply_features) to the task's tab inputs before AutoGluon and the networks see them."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd

from agentk.modalities import TABULAR

DATE_SHARE = 0.95  # of a sample of a column's values that must parse as dates
DATE_SAMPLE = 500
HIGH_CARDINALITY = 20  # text columns with more levels than this get a count encoding
EARTH_KM = 6371.0
LAT_TOKENS, LON_TOKENS = {"lat", "latitude"}, {"lon", "lng", "long", "longitude"}
CYCLES = {"month": 12, "dayofweek": 7, "hour": 24}


def engineer(train: pd.DataFrame, test: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """(train, test) with the generic features added; record: {"added": {column: how}, "dropped": [columns]}."""
    train, test = train.copy(), test.copy()
    added: dict[str, str] = {}
    dropped: list[str] = []
    shared = [c for c in train.columns if c in test.columns]
    for c in shared:
        if _is_datetime(train[c]):
            t_train, t_test = _to_datetime(train[c]), _to_datetime(test[c])
            origin = t_train.min()
            for frame, t in ((train, t_train), (test, t_test)):
                for name, values in _date_parts(t, origin, t_train).items():
                    frame[f"{c}__{name}"] = values
            added.update({f"{c}__{name}": f"datetime {c!r}: {name}" for name in _date_parts(t_train, origin, t_train)})
            train, test = train.drop(columns=c), test.drop(columns=c)
            dropped.append(c)
    points = coordinate_points(train[[c for c in shared if c in train.columns]])
    names = list(points)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            for frame in (train, test):
                for name, values in _between(frame, points[a], points[b]).items():
                    frame[f"{a}_{b}__{name}".strip("_")] = values
            for name in _between(train.head(1), points[a], points[b]):
                added[f"{a}_{b}__{name}".strip("_")] = f"points {points[a]} -> {points[b]}: {name}"
    for c in shared:
        if c in dropped or pd.api.types.is_numeric_dtype(train[c]) or train[c].dtype == bool:
            continue
        if train[c].nunique() > HIGH_CARDINALITY:
            counts = pd.concat([train[c], test[c]]).astype(str).value_counts()
            if counts.max() == 1:
                continue  # an identifier: every count is one
            for frame in (train, test):
                frame[f"{c}__count"] = frame[c].astype(str).map(counts).where(frame[c].notna()).astype(float)
            added[f"{c}__count"] = f"categorical {c!r} ({train[c].nunique()} levels): count over train and test rows"
    return train, test, {"added": added, "dropped": dropped}


def apply_features(task) -> dict:
    """Replaces the tab inputs of a tools.task_data.TaskData with engineer()'s frames (what AutoGluon and the
    networks read); returns the record. A task without a tab map is left as it is."""
    if TABULAR.name not in task.modalities:
        return {"added": {}, "dropped": []}
    train, test, record = engineer(task.train.inputs[TABULAR.name], task.test.inputs[TABULAR.name])
    task.train.inputs[TABULAR.name], task.test.inputs[TABULAR.name] = train, test
    return record


# -- datetimes ---------------------------------------------------------------------------------------------------
def _is_datetime(s: pd.Series) -> bool:
    if pd.api.types.is_datetime64_any_dtype(s):
        return True
    if pd.api.types.is_numeric_dtype(s) or s.dtype == bool:
        return False
    values = s.dropna().astype(str)
    if values.empty:
        return False
    sample = values.sample(min(len(values), DATE_SAMPLE), random_state=0)
    # a date has digits and a date or time separator; plain numbers and codes like "B/0/P" do not parse
    if not sample.str.contains(r"\d[-/:.]\d|\d{4}-\d", regex=True).mean() >= DATE_SHARE:
        return False
    return _to_datetime(sample).notna().mean() >= DATE_SHARE


def _to_datetime(s: pd.Series) -> pd.Series:
    if pd.api.types.is_datetime64_any_dtype(s):
        return s.dt.tz_localize(None) if getattr(s.dt, "tz", None) is not None else s
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas warns when it infers the format element by element
        return pd.to_datetime(s.astype("string"), errors="coerce", utc=True, format="mixed").dt.tz_localize(None)


def _date_parts(t: pd.Series, origin, reference: pd.Series) -> dict[str, pd.Series]:
    """The parts that vary over the train times (`reference`), each cyclic part's sin/cos, and the elapsed days."""
    parts = {}
    for name in ("year", "month", "day", "dayofweek", "dayofyear", "hour", "minute"):
        if getattr(reference.dt, name).nunique() > 1:
            parts[name] = getattr(t.dt, name).astype(float)
            if name in CYCLES:
                angle = 2 * np.pi * parts[name] / CYCLES[name]
                parts[f"{name}_sin"], parts[f"{name}_cos"] = np.sin(angle), np.cos(angle)
    parts["elapsed_days"] = (t - origin).dt.total_seconds() / 86400.0
    return parts


# -- coordinates -------------------------------------------------------------------------------------------------
def _tokens(name: str) -> list[str]:
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", str(name))  # camelCase -> camel Case
    return [t for t in re.split(r"[^a-z0-9]+", spaced.lower()) if t]


def coordinate_points(frame: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """{point name: (latitude column, longitude column)}: numeric columns with a latitude/longitude token in their
    names and values in range, paired by the rest of their names (pickup_latitude + pickup_longitude -> pickup)."""
    lats, lons = {}, {}
    for c in frame.columns:
        s = frame[c]
        if not pd.api.types.is_numeric_dtype(s) or s.dtype == bool or s.notna().sum() == 0:
            continue
        tokens = _tokens(c)
        lo, hi = s.min(), s.max()
        rest = "_".join(t for t in tokens if t not in LAT_TOKENS | LON_TOKENS)
        if LAT_TOKENS & set(tokens) and -90 <= lo and hi <= 90:
            lats[rest] = c
        elif LON_TOKENS & set(tokens) and -180 <= lo and hi <= 180:
            lons[rest] = c
    return {rest: (lats[rest], lons[rest]) for rest in lats if rest in lons}


def _between(frame: pd.DataFrame, a: tuple[str, str], b: tuple[str, str]) -> dict[str, np.ndarray]:
    lat1, lon1 = np.radians(frame[a[0]].to_numpy(float)), np.radians(frame[a[1]].to_numpy(float))
    lat2, lon2 = np.radians(frame[b[0]].to_numpy(float)), np.radians(frame[b[1]].to_numpy(float))
    dlat, dlon = lat2 - lat1, lon2 - lon1
    h = np.sin(dlat / 2) ** 2 + np.cos(lat1) * np.cos(lat2) * np.sin(dlon / 2) ** 2
    bearing = np.arctan2(
        np.sin(dlon) * np.cos(lat2), np.cos(lat1) * np.sin(lat2) - np.sin(lat1) * np.cos(lat2) * np.cos(dlon)
    )
    return {
        "haversine_km": 2 * EARTH_KM * np.arcsin(np.sqrt(np.clip(h, 0, 1))),
        "bearing_sin": np.sin(bearing),
        "bearing_cos": np.cos(bearing),
        "dlat": np.degrees(dlat),
        "dlon": np.degrees(dlon),
    }
