"""Fixture family "features": tabular competitions whose signal sits where tools/features.py looks, so the benefit
of each feature family shows in benchmarks/solve.py with and without `--ablate features`: a high-cardinality
categorical whose per-level target rate carries the signal, a fixed-width letter code whose letters do, a short
free-text column whose words do, a per-type regression where the per-type median is a strong baseline (rows grouped
by an entity the test set does not share), taxi trips whose fare follows the distance between two coordinate pairs
and the hour of a timestamp, and house prices scored by an RMSE between logarithms (worded as Kaggle's house-prices
competition words it, with no "RMSLE" in the text). Every dataset is synthetic."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from testing.competitions import fixture
from testing.competitions.targets import _tabular

FAMILY = "features"


def _split(frame: pd.DataFrame, n_train: int, target: str, id_col: str = "id"):
    train, test = frame.iloc[:n_train].reset_index(drop=True), frame.iloc[n_train:].reset_index(drop=True)
    return train, test.drop(columns=[target]), test[[id_col, target]]


@fixture(FAMILY, "high-cardinality categorical (400 merchants) whose per-level rate carries the signal, AUC")
def high_cardinality_rate(folder: Path, rng: np.random.Generator) -> dict:
    n_train, n_test, n_levels = 3000, 1000, 400
    n = n_train + n_test
    merchants = np.array([f"m{rng.integers(10**6, 10**7)}" for _ in range(n_levels)])
    rate = rng.normal(scale=1.6, size=n_levels)  # each merchant's log-odds
    popularity = rng.dirichlet(np.full(n_levels, 2.0))
    level = rng.choice(n_levels, size=n, p=popularity)
    amount = rng.lognormal(3, 1, size=n).round(2)
    hour = rng.integers(0, 24, size=n)
    logit = rate[level] + 0.3 * (np.log(amount) - 3) + rng.normal(scale=0.5, size=n)
    frame = pd.DataFrame(
        {"id": np.arange(n), "merchant": merchants[level], "amount": amount, "hour": hour, "flagged": (logit > 0.8)}
    )
    frame["flagged"] = frame["flagged"].astype(int)
    train, test, answers = _split(frame, n_train, "flagged")
    sample = pd.DataFrame({"id": test["id"], "flagged": 0.5})
    return _tabular(
        folder,
        "Flagged transactions",
        "Predict the probability that a transaction is flagged.",
        "Submissions are evaluated on area under the ROC curve between the predicted probability and the target.",
        train,
        test,
        sample,
        answers,
        {"task_type": "BinCls", "metric": "roc_auc", "lower_is_better": False},
    )


WORDS = {
    "vintage": 0.6,
    "leather": 0.5,
    "gold": 0.9,
    "new": 0.4,
    "used": -0.5,
    "broken": -1.0,
    "mini": -0.3,
    "bundle": 0.3,
}
FILLER = ["blue", "red", "shirt", "bag", "lamp", "case", "set", "small", "large", "box", "cup", "shoes", "hat"]


@fixture(FAMILY, "short free-text titles (3-6 words) whose words set the price, RMSE on the log price")
def free_text_titles(folder: Path, rng: np.random.Generator) -> dict:
    n_train, n_test = 2000, 600
    n = n_train + n_test
    vocab = list(WORDS) + FILLER
    titles, value = [], np.zeros(n)
    for i in range(n):
        words = list(rng.choice(vocab, size=rng.integers(3, 7), replace=False))
        titles.append(" ".join(w.capitalize() if k == 0 else w for k, w in enumerate(words)))
        value[i] = sum(WORDS.get(w, 0.0) for w in words)
    shipping = rng.integers(0, 2, size=n)
    log_price = 3 + value + 0.2 * shipping + rng.normal(scale=0.25, size=n)
    frame = pd.DataFrame({"id": np.arange(n), "title": titles, "shipping": shipping, "log_price": log_price.round(4)})
    train, test, answers = _split(frame, n_train, "log_price")
    sample = pd.DataFrame({"id": test["id"], "log_price": 3.0})
    return _tabular(
        folder,
        "Listing prices",
        "Predict the log price of each listing from its title and shipping flag.",
        "Submissions are scored on the root mean squared error (RMSE) between predicted and true values.",
        train,
        test,
        sample,
        answers,
        {"task_type": "Reg", "metric": "rmse", "lower_is_better": True},
    )


@fixture(FAMILY, "per-type regression (pairs of atoms in molecules): the per-type median is a strong baseline, MAE")
def per_type_coupling(folder: Path, rng: np.random.Generator) -> dict:
    types = {
        "1JHC": 95.0,
        "1JHN": 47.0,
        "2JHH": -10.0,
        "2JHC": -0.3,
        "2JHN": 3.0,
        "3JHH": 4.8,
        "3JHC": 3.7,
        "3JHN": 0.9,
    }
    spread = {"1JHC": 18.0, "1JHN": 10.0}
    n_molecules = 700
    rows = []
    for m in range(n_molecules):
        size = rng.integers(4, 12)
        for _ in range(size):
            t = rng.choice(list(types))
            rows.append((f"mol_{m:05d}", t, rng.integers(0, 30), rng.integers(0, 30)))
    frame = pd.DataFrame(rows, columns=["molecule_name", "type", "atom_index_0", "atom_index_1"])
    n = len(frame)
    frame.insert(0, "id", np.arange(n))
    distance = rng.uniform(1.0, 3.5, size=n)
    frame["distance"] = distance.round(4)
    frame["noise_a"], frame["noise_b"] = rng.normal(size=n).round(4), rng.normal(size=n).round(4)
    base = frame["type"].map(types).to_numpy()
    scale = frame["type"].map(spread).fillna(2.0).to_numpy()
    target = base + scale * (0.3 * (distance - 2.2) + rng.normal(size=n))
    frame["scalar_coupling_constant"] = target.round(4)
    molecules = frame["molecule_name"].unique()
    test_molecules = set(rng.choice(molecules, size=len(molecules) // 4, replace=False))
    is_test = frame["molecule_name"].isin(test_molecules).to_numpy()
    frame = pd.concat([frame[~is_test], frame[is_test]]).reset_index(drop=True)
    train, test, answers = _split(frame, int((~is_test).sum()), "scalar_coupling_constant")
    sample = pd.DataFrame({"id": test["id"], "scalar_coupling_constant": 0.0})
    return _tabular(
        folder,
        "Coupling constants",
        "Predict the coupling constant of each pair of atoms in a molecule; the type column names the kind of pair. "
        "The test molecules are not in the training set.",
        "Submissions are evaluated on the mean absolute error (MAE) between predicted and true values.",
        train,
        test,
        sample,
        answers,
        {"task_type": "Reg", "metric": "mae", "lower_is_better": True},
    )


@fixture(
    FAMILY, "a 10-letter code column, nearly unique per row, whose letter counts and positions carry the signal, AUC"
)
def letter_codes(folder: Path, rng: np.random.Generator) -> dict:
    n_train, n_test = 3000, 1000
    n = n_train + n_test
    letters = np.array(list("ABCDEFGHIJKLMNOPQRST"))
    weights = rng.dirichlet(np.full(len(letters), 1.5))  # some letters common, some rare
    codes = rng.choice(len(letters), size=(n, 10), p=weights)
    x = rng.normal(size=(n, 4)).round(4)
    counts = np.stack([(codes == k).sum(axis=1) for k in range(len(letters))], axis=1)
    distinct = np.array([len(set(row)) for row in codes])
    top = np.argsort(-weights)[:3]  # the common letters, so their counts vary from row to row
    logit = (
        0.9 * (counts[:, top[0]] - counts[:, top[0]].mean())
        - 0.8 * (counts[:, top[1]] - counts[:, top[1]].mean())
        + 1.2 * (codes[:, 2] == top[2])
        - 0.5 * (distinct - distinct.mean())
        + 0.6 * x[:, 0]
        + rng.normal(scale=0.5, size=n)
    )
    frame = pd.DataFrame({"id": np.arange(n), **{f"f_{j:02d}": x[:, j] for j in range(4)}})
    frame["f_code"] = ["".join(row) for row in letters[codes]]
    frame["target"] = (logit > np.median(logit)).astype(int)
    train, test, answers = _split(frame, n_train, "target")
    sample = pd.DataFrame({"id": test["id"], "target": 0.5})
    return _tabular(
        folder,
        "Machine states",
        "Predict the probability that a machine is in state 1 from its sensor readings and its control code.",
        "Submissions are evaluated on area under the ROC curve between the predicted probability and the observed "
        "target.",
        train,
        test,
        sample,
        answers,
        {"task_type": "BinCls", "metric": "roc_auc", "lower_is_better": False},
    )


@fixture(FAMILY, "taxi trips: pickup/dropoff coordinates and a UTC timestamp; the fare follows distance and hour, RMSE")
def taxi_trip_fares(folder: Path, rng: np.random.Generator) -> dict:
    n_train, n_test = 4000, 1000
    n = n_train + n_test
    start = pd.Timestamp("2012-01-01")
    when = start + pd.to_timedelta(rng.integers(0, 3 * 365 * 24 * 3600, size=n), unit="s")
    lat0, lon0 = rng.normal(40.75, 0.03, n), rng.normal(-73.98, 0.03, n)
    km = rng.gamma(2.0, 1.8, n)  # trip length
    heading = rng.uniform(0, 2 * np.pi, n)
    lat1 = lat0 + km * np.cos(heading) / 111.0
    lon1 = lon0 + km * np.sin(heading) / (111.0 * np.cos(np.radians(40.75)))
    hour = when.hour.to_numpy()
    rush = ((hour >= 16) & (hour < 20)).astype(float)
    night = ((hour >= 20) | (hour < 6)).astype(float)
    years = (when - start).days.to_numpy() / 365
    fare = (2.5 + 1.55 * km) * (1 + 0.05 * years) + 1.0 * rush + 0.5 * night + rng.gamma(1.0, 0.8, n)
    frame = pd.DataFrame(
        {
            "key": [f"{t}.{i:07d}" for i, t in enumerate(when.strftime("%Y-%m-%d %H:%M:%S"))],
            "fare_amount": fare.round(2),
            "pickup_datetime": when.strftime("%Y-%m-%d %H:%M:%S UTC"),
            "pickup_longitude": lon0.round(6),
            "pickup_latitude": lat0.round(6),
            "dropoff_longitude": lon1.round(6),
            "dropoff_latitude": lat1.round(6),
            "passenger_count": rng.choice([1, 1, 1, 1, 2, 3, 5, 6], size=n),
        }
    )
    train, test, answers = _split(frame, n_train, "fare_amount", id_col="key")
    sample = pd.DataFrame({"key": test["key"], "fare_amount": 11.35})
    return _tabular(
        folder,
        "Taxi fares",
        "Predict the fare amount (inclusive of tolls) for a taxi ride given the pickup and dropoff locations.",
        "The evaluation metric for this competition is the root mean-squared error or RMSE. RMSE measures the "
        "difference between the predictions of a model, and the corresponding ground truth.",
        train,
        test,
        sample,
        answers,
        {"task_type": "Reg", "metric": "rmse", "lower_is_better": True},
    )


@fixture(FAMILY, "house prices with missing values and a 25-level neighbourhood, RMSE between the logs of the prices")
def house_prices_log_rmse(folder: Path, rng: np.random.Generator) -> dict:
    n_train, n_test = 1460, 1459
    n = n_train + n_test
    neighbourhoods = np.array([f"N{k:02d}" for k in range(25)])
    hood_effect = rng.normal(scale=0.18, size=25)
    hood = rng.choice(25, size=n, p=rng.dirichlet(np.full(25, 3.0)))
    quality = np.clip(np.round(rng.normal(6, 1.4, n)), 1, 10)
    living = np.round(rng.lognormal(np.log(1500), 0.33, n))
    year = rng.integers(1880, 2010, n)
    garage = rng.choice([0, 1, 2, 3], size=n, p=[0.06, 0.26, 0.56, 0.12])
    lot = np.round(rng.lognormal(np.log(9500), 0.5, n))
    log_price = (
        12.0
        + 0.11 * (quality - 6)
        + 0.45 * np.log(living / 1500)
        + 0.0025 * (year - 1970)
        + 0.05 * garage
        + 0.08 * np.log(lot / 9500)
        + hood_effect[hood]
        + rng.normal(scale=0.1, size=n)
    )
    frontage = np.round(np.sqrt(lot) * rng.uniform(0.5, 0.9, n))
    frontage[rng.random(n) < 0.18] = np.nan  # LotFrontage-like: often missing
    frame = pd.DataFrame(
        {
            "Id": np.arange(1, n + 1),
            "MSZoning": rng.choice(["RL", "RM", "FV", "RH", "C (all)"], size=n, p=[0.78, 0.15, 0.04, 0.02, 0.01]),
            "LotFrontage": frontage,
            "LotArea": lot.astype(int),
            "Neighborhood": neighbourhoods[hood],
            "OverallQual": quality.astype(int),
            "OverallCond": rng.integers(3, 10, n),
            "YearBuilt": year,
            "GrLivArea": living.astype(int),
            "FullBath": np.clip(np.round(living / 900), 1, 3).astype(int),
            "GarageType": np.where(garage == 0, None, rng.choice(["Attchd", "Detchd", "BuiltIn"], size=n)),
            "GarageCars": garage,
            "SaleCondition": rng.choice(["Normal", "Partial", "Abnorml", "Family"], size=n, p=[0.82, 0.09, 0.07, 0.02]),
            "SalePrice": np.round(np.exp(log_price)).astype(int),
        }
    )
    train, test, answers = _split(frame, n_train, "SalePrice", id_col="Id")
    sample = pd.DataFrame({"Id": test["Id"], "SalePrice": 169277.05})
    return _tabular(
        folder,
        "House prices",
        "Predict the sales price for each house. For each Id in the test set, you must predict the value of the "
        "SalePrice variable.",
        "Submissions are evaluated on Root-Mean-Squared-Error (RMSE) between the logarithm of the predicted value "
        "and the logarithm of the observed sales price. (Taking logs means that errors in predicting expensive "
        "houses and cheap houses will affect the result equally.)",
        train,
        test,
        sample,
        answers,
        {"task_type": "Reg", "metric": "rmsle", "lower_is_better": True},
    )
