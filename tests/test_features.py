"""Generic feature engineering (tools/features.py) finds datetimes, coordinate pairs and high-cardinality
categoricals from what the columns hold, and computes the right values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tools.features import coordinate_points, engineer


def _frame(n: int, rng, start: str = "2015-01-01") -> pd.DataFrame:
    return pd.DataFrame(
        {
            "when": (pd.date_range(start, periods=n, freq="37h").astype(str) + " UTC").tolist(),
            "pickup_latitude": rng.uniform(40.6, 40.9, n),
            "pickup_longitude": rng.uniform(-74.1, -73.8, n),
            "dropoffLat": rng.uniform(40.6, 40.9, n),
            "dropoffLon": rng.uniform(-74.1, -73.8, n),
            "cabin": [f"B/{i % 7}/P" for i in range(n)],  # slashes and digits, but no date
            "code": rng.integers(1000, 9999, n).astype(str),  # numbers as text, no date
            "city": rng.choice([f"c{i}" for i in range(40)], n),
            "name": [f"person {i} {start}" for i in range(n)],  # unique: an identifier
            "x": rng.normal(size=n),
        },
        index=[f"{start}-{i}" for i in range(n)],
    )


def test_datetimes_become_parts_cyclic_encodings_and_elapsed_days():
    rng = np.random.default_rng(0)
    train, test = _frame(300, rng), _frame(50, rng, start="2016-03-01")
    new_train, new_test, record = engineer(train, test)
    assert record["dropped"] == ["when"] and "when" not in new_train and "when" not in new_test
    t = pd.to_datetime(train["when"].str.replace(" UTC", ""))
    assert np.array_equal(new_train["when__hour"], t.dt.hour.to_numpy(float))
    assert np.array_equal(new_train["when__dayofweek"], t.dt.dayofweek.to_numpy(float))
    assert np.allclose(new_train["when__month_sin"], np.sin(2 * np.pi * t.dt.month / 12))
    assert np.allclose(new_train["when__hour_cos"], np.cos(2 * np.pi * t.dt.hour / 24))
    assert new_train["when__elapsed_days"].iloc[0] == 0 and new_train["when__elapsed_days"].iloc[1] == pytest.approx(
        37 / 24
    )
    # the test rows count from the earliest train time: 2016-03-01 is 425 days after 2015-01-01
    assert new_test["when__elapsed_days"].iloc[0] == pytest.approx(425)
    assert "when__year" in new_train  # 300 steps of 37 h span two years
    assert list(new_train.index) == list(train.index)  # the ids stay the rows' keys
    for c in ("cabin", "code"):  # neither is a date
        assert c in new_train and not any(k.startswith(f"{c}__") and k != f"{c}__count" for k in record["added"])


def test_coordinate_pairs_give_haversine_distance_and_bearing():
    # Paris -> London: 343.5 km, heading north-west
    train = pd.DataFrame(
        {"from_lat": [48.8566], "from_lon": [2.3522], "toLatitude": [51.5072], "toLongitude": [-0.1276]}
    )
    new, _, record = engineer(train, train.copy())
    assert new["from_to__haversine_km"].iloc[0] == pytest.approx(343.5, abs=1.0)
    bearing = np.degrees(np.arctan2(new["from_to__bearing_sin"].iloc[0], new["from_to__bearing_cos"].iloc[0]))
    assert -40 < bearing < -20  # the initial bearing is about 330 degrees
    assert record["added"]["from_to__haversine_km"].startswith("points")


def test_coordinates_need_both_a_name_token_and_values_in_range():
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(
        {
            "a_lat": rng.uniform(-30, 30, 50),
            "a_lon": rng.uniform(100, 170, 50),
            "b_lat": rng.uniform(100, 300, 50),  # named like a latitude, out of range
            "b_lon": rng.uniform(0, 10, 50),
            "latency": rng.uniform(0, 10, 50),  # "lat" inside a word is no token
            "c_x": rng.uniform(0, 10, 50),  # in range, not named
            "c_longitude": rng.uniform(0, 10, 50),
        }
    )
    assert coordinate_points(frame) == {"a": ("a_lat", "a_lon")}


def test_high_cardinality_text_gets_counts_over_train_and_test_but_identifiers_do_not():
    rng = np.random.default_rng(2)
    train, test = _frame(300, rng), _frame(100, rng, start="2017-01-01")
    new_train, new_test, record = engineer(train, test)
    both = pd.concat([train["city"], test["city"]])
    assert np.array_equal(new_train["city__count"], train["city"].map(both.value_counts()).to_numpy(float))
    assert np.array_equal(new_test["city__count"], test["city"].map(both.value_counts()).to_numpy(float))
    assert "name__count" not in new_train  # every value once: an identifier, nothing to count
    assert "cabin__count" not in new_train  # 7 levels: AutoGluon and the networks encode it as a category
    assert set(record["added"]) == set(new_train.columns) - set(train.columns)
