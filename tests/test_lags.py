"""tools.lags: a forecast's past targets per entity, read at a horizon the test allows, and nothing where the rows
are no entities' series."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tools.features import Labels, engineer
from tools.lags import add_lags, forecast_layout

TRAIN_DAYS, TEST_DAYS = 120, 20


def _panel(
    rng: np.random.Generator, stores: int = 6, items: int = 1, drift: float = 0.0
) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray]:
    """(train, test, train targets): daily sales per store (and item), a weekly pattern and a level per entity that
    wanders by `drift` a day (a random walk in log); the test the TEST_DAYS after the train's, its rows shuffled."""
    days = pd.date_range("2020-01-01", periods=TRAIN_DAYS + TEST_DAYS, freq="D")
    d, s, i = (a.ravel() for a in np.meshgrid(np.arange(len(days)), np.arange(stores), np.arange(items), indexing="ij"))
    walk = np.exp(np.cumsum(rng.normal(0, drift, (stores, items, len(days))), axis=2))
    level = rng.uniform(50, 150, (stores, items))[s, i] * walk[s, i, d]
    y = level * (1 + 0.3 * np.sin(2 * np.pi * days.dayofweek.to_numpy()[d] / 7)) + rng.normal(0, 5, len(d))
    frame = pd.DataFrame(
        {"store": s + 1, "promo": rng.integers(0, 2, len(d)), "date": days[d].strftime("%Y-%m-%d")}
        | ({"item": i + 1} if items > 1 else {})
    )
    frame.index = pd.Index([f"r{k}" for k in range(len(frame))], name="id")
    train = frame[d < TRAIN_DAYS].sample(frac=1, random_state=0)  # row order says nothing
    test = frame[d >= TRAIN_DAYS].sample(frac=1, random_state=1)
    return train, test, pd.Series(y, index=frame.index).loc[train.index].to_numpy()


def _lagged(train, test, y, fit=None, val=None):
    """add_lags on copies; without fit and validation rows, nothing to judge the lags by: they are kept."""
    train, test = train.copy(), test.copy()
    fit = np.arange(len(train)) if fit is None else fit
    added = add_lags(train, test, {"sales": y}, fit, np.arange(0) if val is None else val)
    return train, test, added


def _latest(train: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(fit rows, validation rows): the validation rows the latest fifth of the days, as the solve holds out."""
    when = pd.to_datetime(train["date"]).to_numpy()
    late = when >= np.sort(when)[int(0.8 * len(when))]
    return np.flatnonzero(~late), np.flatnonzero(late)


def _value_at(train: pd.DataFrame, y: np.ndarray, key: list[str], when: pd.Series, rows: pd.DataFrame) -> np.ndarray:
    """The train target of each row's entity at `when`, looked up by merging (NaN where no train row is there)."""
    known = train[key].assign(when=pd.to_datetime(train["date"]), y=y)
    asked = rows[key].assign(when=when.to_numpy())
    return asked.merge(known, on=[*key, "when"], how="left")["y"].to_numpy()


def test_the_layout_is_read_off_the_values():
    train, test, _ = _panel(np.random.default_rng(0), stores=4, items=3)
    layout = forecast_layout(train.reset_index(), test.reset_index())
    assert layout is not None and layout.time == "date" and layout.season == 7 and layout.horizon == TEST_DAYS
    assert sorted(layout.key) == ["item", "store"]  # neither alone holds each day once; promo is no entity


def test_lags_are_each_entitys_own_targets_shifted_by_the_rows_horizon():
    train, test, y = _panel(np.random.default_rng(1))
    new_train, new_test, added = _lagged(train, test, y)
    assert {"date__horizon", "date__sales_last", "date__sales_mean_7", "date__sales_season_last"} <= set(added)
    when = pd.to_datetime(new_train["date"])
    h = new_train["date__horizon"].astype(int)
    assert h.min() == 1 and h.max() == TEST_DAYS  # the train rows' horizons run as the test's
    origin = when - pd.to_timedelta(h, unit="D")
    assert np.allclose(new_train["date__sales_last"], _value_at(train, y, ["store"], origin, train), equal_nan=True)
    phase = when - pd.to_timedelta(7 * np.ceil(h / 7), unit="D")  # the latest same weekday by the origin
    assert np.allclose(
        new_train["date__sales_season_last"], _value_at(train, y, ["store"], phase, train), equal_nan=True
    )
    # the 7-day mean up to the origin: a shift per store of the rolling mean, computed the pandas way
    ordered = train.assign(y=y, when=when).sort_values("when")
    rolled = ordered.groupby("store")["y"].transform(lambda v: v.rolling(7, min_periods=1).mean())
    by_origin = _value_at(ordered, rolled.to_numpy(), ["store"], origin, train)
    assert np.allclose(new_train["date__sales_mean_7"], by_origin, equal_nan=True)
    # the test rows read the last train day, however far ahead they are
    last = pd.Series(pd.to_datetime(train["date"]).max(), index=test.index)
    assert np.allclose(new_test["date__sales_last"], _value_at(train, y, ["store"], last, test))
    assert (new_test["date__horizon"] == (pd.to_datetime(test["date"]) - last).dt.days).all()


def test_no_feature_reads_a_target_at_or_after_its_own_rows_time():
    train, test, y = _panel(np.random.default_rng(2))
    before, _, added = _lagged(train, test, y)
    when = pd.to_datetime(train["date"]).to_numpy()
    for cut in np.sort(np.unique(when))[[30, 61, 100, -1]]:
        changed = np.where(when >= cut, y + 1000.0, y)  # every target from the cut on
        after, _, _ = _lagged(train, test, changed)
        rows = when <= cut
        for c in added:
            assert np.array_equal(before.loc[rows, c], after.loc[rows, c], equal_nan=True), c


def test_a_row_whose_horizon_reaches_back_past_the_history_gets_nan():
    train, test, y = _panel(np.random.default_rng(3))
    new_train, _, added = _lagged(train, test, y)
    origin = pd.to_datetime(train["date"]) - pd.to_timedelta(new_train["date__horizon"], unit="D")
    early = origin < pd.to_datetime(train["date"]).min()  # the first block: its origin before the first day
    assert early.sum() > 0 and (~early).sum() > 0
    lags = [c for c in added if c != "date__horizon"]
    assert new_train.loc[early, lags].isna().all().all()
    assert new_train.loc[~early, "date__sales_last"].notna().all()


def test_no_lags_without_a_forecast_of_entities_series():
    rng = np.random.default_rng(4)
    train, test, y = _panel(rng)
    mixed = pd.concat([train, test]).sample(frac=1, random_state=0)  # test days drawn from the train's span
    assert _lagged(mixed.iloc[: len(train)], mixed.iloc[len(train) :], y)[2] == {}
    once = train.assign(store=np.arange(len(train)))  # every row its own entity, many rows a day
    assert _lagged(once, test.assign(store=np.arange(len(test)) + len(train)), y)[2] == {}
    undated = train.drop(columns="date"), test.drop(columns="date")
    assert _lagged(*undated, y)[2] == {}


def test_lags_are_kept_where_they_validate_better_wandering_levels_not_steady_ones():
    rng = np.random.default_rng(6)
    train, test, y = _panel(rng, stores=20, drift=0.05)
    assert _lagged(train, test, y, *_latest(train))[2]  # where each store is now: only its recent days tell
    train, test, y = _panel(rng, stores=20)
    assert _lagged(train, test, y, *_latest(train))[2] == {}  # the store's number tells its level, without noise
    assert _lagged(train, test, y)[2]  # no validation rows to judge by: kept


def test_engineer_adds_the_lags_given_labels_and_the_calendar_always():
    train, test, y = _panel(np.random.default_rng(5), drift=0.05)
    labels = Labels(y[:, None], [{"name": "sales", "kind": "regression"}], [1], *_latest(train))
    new_train, new_test, record = engineer(train, test, labels)
    assert "date__sales_last" in record["added"] and "date__sales_last" in new_test
    assert {"date__weekofyear", "date__dayofweek", "date__day", "date__month"} <= set(new_train.columns)
    assert not any("__sales_" in c for c in engineer(train, test)[2]["added"])  # no labels, no lags
    assert new_train["date__weekofyear"].iloc[0] == pd.Timestamp(train["date"].iloc[0]).isocalendar().week


@pytest.mark.parametrize("step, season", [("h", 24), ("D", 7), ("7D", 1)])
def test_the_season_is_a_day_of_hours_or_a_week_of_days(step, season):
    times = pd.date_range("2021-01-01", periods=400, freq=step)
    frame = pd.DataFrame({"shop": np.tile([1, 2], 200), "t": times.repeat(2)[:400]})
    train, test = frame.iloc[:360], frame.iloc[360:]
    layout = forecast_layout(train, test)
    assert layout is not None and layout.season == season and layout.key == ["shop"]
