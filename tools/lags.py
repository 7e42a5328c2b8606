"""A forecast's own past targets as features: when the test rows are later times of the same entities as the train
rows (tools.task_data.time_column: the test's times after every train time, on a regular grid of steps; an entity
key of shared columns under which each (entity, time) comes once, the test's entities the train's), each row gets
its entity's earlier targets, read at a horizon the test allows.

Horizon-aware (direct) lags. A test row h steps after the last train time (its origin) can know targets up to the
origin only, so each of its features is read at or before it: the target at the origin, the means of the last
P, 4P and 13P steps up to it (P the season: a week of daily steps, a day of hourly ones, else one step), the target
at the latest step of the row's own phase of the season (a lag that is a multiple of P, at least h), the mean of the
four latest such targets, and h itself. They are added when a quick model validates better with them than without (the latest rows judge, as
the solve's split holds them out). Fixed lags of at least the test's longest horizon H would be leak-free too,
but would give every row the history of H steps back, where the test's first days have yesterday's. Train rows get
origins the same way: the train span cut into blocks of H steps back from the last train time, each block forecast
from the step before it, so that the train rows' horizons run 1..H as the test's do. No feature reads a target at or
after its own row's time, nor after its origin; rows of the first block, and entities without history, get NaN.

add_lags(train, test, targets, fit, val) adds the columns to both frames (tools.features.engineer calls it)."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd

from tools.columns import as_datetime
from tools.task_data import MIN_TIMES, time_column

REGULAR = 0.9  # of the gaps between consecutive distinct train times that must be the step
ON_GRID = 0.95  # of the train and test times that must fall on the step's grid
MAX_DUPLICATES = 0.01  # of the rows whose (entity, time) another row holds too
MIN_SHARED_ENTITIES = 0.9  # of the test rows whose entity the train rows hold
MAX_KEY_CANDIDATES = 8  # columns of the most levels tried in pairs as the key
MAX_CELLS = 20_000_000  # entities x steps held as one array
SEASONS = (pd.Timedelta(days=1), pd.Timedelta(days=7))  # the shortest of at least two steps is the season
WINDOWS = (1, 4, 13)  # rolling means over this many seasons
SEASON_LAGS = 4  # same-phase targets averaged
GATE_ROWS = 200_000  # fit rows the check that the lags validate learns from


@dataclass(frozen=True)
class Layout:
    """How a forecast's rows lie: the time column, the entity key (no column: one series), the time step, the
    season and the test's longest horizon in steps."""

    time: str
    key: list[str]
    step: pd.Timedelta
    season: int
    horizon: int


def forecast_layout(train: pd.DataFrame, test: pd.DataFrame) -> Layout | None:
    """The layout of a forecast whose rows are series of entities on a regular time grid, or None."""
    time = time_column(train, test)
    if time is None:
        return None
    t_train, t_test = as_datetime(train[time]), as_datetime(test[time])
    step = _step(t_train)
    if step is None:
        return None
    origin = t_train.min()
    s_train, s_test = (t_train - origin) / step, (t_test - origin) / step
    if pd.concat([s_train, s_test]).dropna().mod(1).ne(0).mean() > 1 - ON_GRID:
        return None
    last, horizon = s_train.max(), s_test.max() - s_train.max()
    if not 1 <= horizon <= (last - s_train.min()) / 2:  # at least half the train rows with history
        return None
    key = entity_key(train, test, s_train, s_test)
    if key is None:
        return None
    season = next((int(p / step) for p in SEASONS if p % step == pd.Timedelta(0) and p / step >= 2), 1)
    return Layout(time, key, step, season, int(horizon))


def _step(t: pd.Series) -> pd.Timedelta | None:
    """The most common gap between consecutive distinct times, when REGULAR of the gaps are it; else None."""
    gaps = pd.Series(np.sort(t.dropna().unique())).diff().dropna()
    if gaps.empty:
        return None
    step = gaps.mode().iloc[0]
    return step if step > pd.Timedelta(0) and (gaps == step).mean() >= REGULAR else None


def entity_key(train: pd.DataFrame, test: pd.DataFrame, s_train: pd.Series, s_test: pd.Series) -> list[str] | None:
    """The fewest shared columns under which each (entity, step) comes once in train and in test, MIN_TIMES rows per
    entity on average, and MIN_SHARED_ENTITIES of the test rows of entities the train holds: [] for one series,
    one column (a store, a page) or two (store and item); None when no such key exists. s_train and s_test are the
    rows' steps (named after the time column)."""
    candidates = [
        c
        for c in train.columns
        if c in test.columns
        and c != s_train.name
        and not (pd.api.types.is_float_dtype(train[c]) and (train[c].dropna() % 1 != 0).any())
        and 2 <= train[c].nunique() <= len(train) / MIN_TIMES
    ]
    candidates.sort(key=lambda c: -train[c].nunique())
    keys = [[], *([c] for c in candidates)]
    keys += [list(pair) for pair in combinations(candidates[:MAX_KEY_CANDIDATES], 2)]
    for key in keys:
        if not (_unique(train, key, s_train) and _unique(test, key, s_test)):
            continue
        entities = train[key].drop_duplicates() if key else train.head(1)
        if len(train) >= MIN_TIMES * len(entities) and _shared(train, test, key) >= MIN_SHARED_ENTITIES:
            return key
    return None


def _entities(frame: pd.DataFrame, key: list[str]) -> pd.Series:
    """Each row's entity as one string ("" for one series)."""
    entity = pd.Series("", index=frame.index)
    for k, c in enumerate(key):
        entity = entity + ("\x1f" if k else "") + frame[c].astype(str)
    return entity


def _unique(frame: pd.DataFrame, key: list[str], steps: pd.Series) -> bool:
    return bool(pd.concat([frame[key], steps.rename("__step")], axis=1).duplicated().mean() <= MAX_DUPLICATES)


def _shared(train: pd.DataFrame, test: pd.DataFrame, key: list[str]) -> float:
    return float(_entities(test, key).isin(set(_entities(train, key))).mean()) if len(test) else 0.0


def origins(steps: np.ndarray, last: int, horizon: int) -> np.ndarray:
    """Each row's origin, the latest step whose target its features may read: the last train step for a row after
    it (the test), else the step before the row's block of `horizon` steps, counted back from the last train step."""
    steps = np.asarray(steps, dtype=int)
    blocks = np.floor_divide(last - steps, horizon) + 1
    return np.where(steps > last, last, last - blocks * horizon)


def lag_features(
    entities: np.ndarray, steps: np.ndarray, rows_origin: np.ndarray, grid: np.ndarray, season: int
) -> dict[str, np.ndarray]:
    """The features of rows (entity index, step, origin) read off `grid` (entities x steps, the known targets, NaN
    elsewhere): the target at the origin, rolling means up to it, the latest same-phase target and the mean of
    SEASON_LAGS of them, and the horizon."""
    e, s, o = np.asarray(entities), np.asarray(steps, dtype=int), np.asarray(rows_origin, dtype=int)
    known = np.isfinite(grid)
    sums = np.concatenate([np.zeros((len(grid), 1)), np.cumsum(np.where(known, grid, 0.0), axis=1)], axis=1)
    counts = np.concatenate([np.zeros((len(grid), 1)), np.cumsum(known, axis=1)], axis=1)

    def at(step: np.ndarray) -> np.ndarray:
        inside = step >= 0
        return np.where(inside, grid[e, np.clip(step, 0, None)], np.nan)

    h = s - o
    out = {"horizon": h.astype(float), "last": at(o)}
    for w in WINDOWS:
        hi, lo = np.clip(o + 1, 0, None), np.clip(o + 1 - w * season, 0, None)
        n = counts[e, hi] - counts[e, lo]
        with np.errstate(invalid="ignore", divide="ignore"):
            out[f"mean_{w * season}"] = np.where(n > 0, (sums[e, hi] - sums[e, lo]) / n, np.nan)
    if season > 1:
        first = season * -(-h // season)  # the shortest lag of the row's phase that reaches the origin
        same = np.stack([at(s - first - k * season) for k in range(SEASON_LAGS)])
        out["season_last"] = same[0]
        with np.errstate(invalid="ignore"):
            n = np.isfinite(same).sum(axis=0)
            out[f"season_mean_{SEASON_LAGS}"] = np.where(n > 0, np.nansum(same, axis=0) / np.maximum(n, 1), np.nan)
    return out


def add_lags(
    train: pd.DataFrame, test: pd.DataFrame, targets: dict[str, np.ndarray], fit: np.ndarray, val: np.ndarray
) -> dict[str, str]:
    """Adds each target's lag features (targets: name -> the train rows' values, NaN where unknown) to both frames
    when they lie as a forecast of entities' series and the lags validate (_validates: fit rows learn, validation
    rows judge); returns the record's entries ({} when none is added)."""
    flat_train, flat_test = train.reset_index(), test.reset_index()  # the time may be the id
    layout = forecast_layout(flat_train, flat_test) if targets else None
    if layout is None:
        return {}
    t_train, t_test = as_datetime(flat_train[layout.time]), as_datetime(flat_test[layout.time])
    first = t_train.min()
    s_train = ((t_train - first) / layout.step).round().fillna(-1).astype(int).to_numpy()
    s_test = ((t_test - first) / layout.step).round().fillna(-1).astype(int).to_numpy()
    codes, levels = pd.factorize(pd.concat([_entities(flat_train, layout.key), _entities(flat_test, layout.key)]))
    e_train, e_test = codes[: len(train)], codes[len(train) :]
    last = int(s_train.max())
    if len(levels) * (last + 1) > MAX_CELLS:
        return {}
    o_train, o_test = origins(s_train, last, layout.horizon), origins(s_test, last, layout.horizon)
    keyed = f"{', '.join(layout.key)} " if layout.key else ""
    what = f"{keyed}series over {layout.time!r} (step {layout.step}, horizon {layout.horizon}, season {layout.season})"
    added = {}
    ids = [c for c in flat_train.columns[: train.index.nlevels] if c != layout.time]  # the rows' names: no input
    base = _plain(flat_train.drop(columns=ids), layout.time)
    for name, y in targets.items():
        grid = np.full((len(levels), last + 1), np.nan)
        timed = s_train >= 0
        grid[e_train[timed], s_train[timed]] = y[timed]
        lags = {
            frame_name: lag_features(e, s, o, grid, layout.season)
            for frame_name, e, s, o in (("train", e_train, s_train, o_train), ("test", e_test, s_test, o_test))
        }
        if not _validates(base, pd.DataFrame(lags["train"]), y, fit, val):
            continue
        for frame, frame_name in ((train, "train"), (test, "test")):
            for part, values in lags[frame_name].items():
                column = f"{layout.time}__horizon" if part == "horizon" else f"{layout.time}__{name}_{part}"
                frame[column] = values
                added[column] = f"{what}: {part}" + ("" if part == "horizon" else f" of {name!r}, read by the origin")
    return added


def _plain(frame: pd.DataFrame, time: str) -> pd.DataFrame:
    """The frame as numbers a tree reads without the lags: numbers as they are, texts as their levels' codes, the
    time as elapsed days and day of week."""
    out = pd.DataFrame(index=frame.index)
    for c in frame.columns:
        if c == time:
            t = as_datetime(frame[c])
            out[f"{c}__elapsed"], out[f"{c}__dayofweek"] = (t - t.min()).dt.total_seconds() / 86400, t.dt.dayofweek
        elif pd.api.types.is_numeric_dtype(frame[c]):
            out[c] = frame[c].astype(float)
        else:
            out[c] = pd.factorize(frame[c].astype(str))[0]
    return out


def _validates(base: pd.DataFrame, lags: pd.DataFrame, y: np.ndarray, fit: np.ndarray, val: np.ndarray) -> bool:
    """Whether a default gradient boosting learnt on the fit rows (at most GATE_ROWS of them) predicts the validation
    rows' targets with a lower squared error with the lags than without: where the key alone tells each entity's
    level (stores of steady sales), the lags add noise a model fits; where levels wander (page views), they tell
    where each series is now. True without validation rows to judge by."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    fit, val = np.asarray(fit, dtype=int), np.asarray(val, dtype=int)
    fit, val = fit[np.isfinite(y[fit])], val[np.isfinite(y[val])]
    if not len(val) or not len(fit):
        return True
    fit = np.random.default_rng(0).permutation(fit)[:GATE_ROWS]
    errors = []
    for x in (base.to_numpy(float), np.hstack([base.to_numpy(float), lags.to_numpy(float)])):
        model = HistGradientBoostingRegressor(random_state=0).fit(x[fit], y[fit])
        errors.append(float(np.mean((model.predict(x[val]) - y[val]) ** 2)))
    return errors[1] < errors[0]
