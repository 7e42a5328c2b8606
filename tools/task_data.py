"""What every solver needs from a finished setup: the map datasets, the heads (transform.OUTPUTS), one fixed
train/validation split shared by all solutions (so the blender can learn from their validation predictions),
the competition's metric on predictions in model space, and what a model should fit for it: the rows it scores
and their weights (learn_rows, fit_weights).

Model space: an array (rows, sum of widths) with, per output, P(class 1) for binary, n_classes probabilities
for multiclass, the transformed value for regression. `transform.inverse_transform` turns it into the
submission's columns."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from functools import cached_property, partial
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pandas as pd

from agentk.core.fileio import read_json, write_json
from agentk.workspace import METRIC, SUBMISSION_FORMAT, TARGET_TRANSFORM, Workspace, read_map
from tools.columns import as_datetime, is_datetime
from tools.heads import width
from tools.map_dataset import MapDataset
from tools.metrics import LOG_ERROR, RELATIVE_ERROR, relative_weights
from tools.resampling import wins_on_resamples

VAL_FRACTION, SPLIT_SEED = 0.2, 0
STOP_FRACTION = 0.2  # of the fit rows: the stop rows a network early-stops and is tuned on (TaskData.holdout)
# under a log error (RMSLE), a train value of 0 is a placeholder (a price never set) rather than a value when zeros are
# at most this share of the rows and every other value lies at least PLACEHOLDER_GAP log units (a factor e) above
# them: left out of fitting, as it only pulls the model's log scale down for rows it cannot tell apart. Mercari's
# stand-in (6 prices of 0 in 3,000, the least other 3): the text model's validation RMSLE 0.4277 -> 0.4245, test
# 0.4424 -> 0.4396. A count's zeros (the least other value 1: 0.69 log units away) stay values
PLACEHOLDER_SHARE, PLACEHOLDER_GAP = 0.01, 1.0


class TaskData:
    engineered: tuple[str, ...] = ()  # the tab columns tools/features.py added (apply_features)
    # the tab columns tools/features.py took out of the models' inputs, {column: (train, test)}: text keys replaced by
    # their target encodings, which name entities still (the factorisation's)
    set_aside: Mapping[str, tuple[pd.Series, pd.Series]] = MappingProxyType({})

    def __init__(self, ws: Path):
        self.ws = Path(ws).resolve()
        self.workspace = Workspace(self.ws)
        needed = [
            *(self.workspace.code(s) for s in (TARGET_TRANSFORM, METRIC, SUBMISSION_FORMAT)),
            self.workspace.target_map,
        ]
        missing = [p.name for p in needed if not p.exists()]
        if missing:
            raise FileNotFoundError(
                f"{self.ws} is not a finished setup (missing {', '.join(missing)}): run `agentk setup` first"
            )
        self.transform = self.workspace.load(TARGET_TRANSFORM)
        self.metric_module = self.workspace.load(METRIC)
        self.outputs: list[dict] = list(self.transform.OUTPUTS)
        self.widths = [width(o) for o in self.outputs]
        self.higher_is_better = bool(self.metric_module.HIGHER_IS_BETTER)
        self.metric_name = str(getattr(self.metric_module, "METRIC", "metric"))
        self.decoding_defaults = {name: getattr(self.transform, name) for name in self._tunable}

    @cached_property
    def train(self) -> MapDataset:
        return MapDataset(self.ws, "train", self.transform.transform)

    @cached_property
    def test(self) -> MapDataset:
        return MapDataset(self.ws, "test")

    @property
    def modalities(self) -> list[str]:
        return self.train.modalities

    @cached_property
    def y(self) -> np.ndarray:
        """Targets in model space for the heads: (n_train, n_outputs); class codes for multiclass."""
        return self.train.targets

    @cached_property
    def targets(self) -> pd.DataFrame:
        """The target map (original values), in the train dataset's row order: what the metric compares with."""
        return read_map(self.workspace.target_map).set_index("id").loc[self.train.ids].reset_index(drop=True)

    @cached_property
    def split(self) -> tuple[np.ndarray, np.ndarray]:
        """(fit rows, validation rows), split as _split says; saved in the workspace's split file so every
        solution, and a resumed run, uses the same rows."""
        path = self.workspace.split
        ids = np.asarray(self.train.ids)
        saved = read_json(path)
        if saved is not None:
            pos = {i: k for k, i in enumerate(ids)}
            if set(saved["fit"]) | set(saved["val"]) == set(ids):
                return np.array([pos[i] for i in saved["fit"]]), np.array([pos[i] for i in saved["val"]])
        fit, val = self._split(np.arange(len(ids)), VAL_FRACTION)
        record = {"fit": ids[fit].tolist(), "val": ids[val].tolist(), "seed": SPLIT_SEED}
        rule = {"time": self.times[0]} if self.times else {"groups": self.groups[0]} if self.groups else {}
        write_json(path, record | rule)
        return fit, val

    @property
    def held_out(self) -> str:
        """How _split holds rows out, in words for the console."""
        return held_out({"time": self.times[0]} if self.times else {"groups": self.groups[0]} if self.groups else {})

    def holdout(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(learn rows, stop rows): `rows` (the fit rows) split the way the validation rows were split off, for a
        model that early-stops or is tuned on rows of its own, so that the validation rows, which select among
        solutions, stay unseen by everything that shaped it."""
        return self._split(np.asarray(rows), STOP_FRACTION)

    def _split(self, rows: np.ndarray, fraction: float) -> tuple[np.ndarray, np.ndarray]:
        """`rows` split into (kept, held out): when the test rows come after the train rows in time, the latest rows
        held out, as the test holds times the training has not reached; when the rows come in groups, whole groups
        held out, as the test set holds groups the training set has not seen; else stratified on the first
        classification output. A forecast's days are groups too (the test shares none): time comes first."""
        if self.times is not None:
            t = self.times[1][rows]
            cut = np.sort(t)[-max(1, int(round(fraction * len(rows))))]  # a time's rows all on one side of it
            keep, out = np.flatnonzero(t < cut), np.flatnonzero(t >= cut)
            if not len(keep):  # most rows at the earliest time: no span before the cut to learn from
                keep, out = _stratified_split(self.y[rows], self.outputs, fraction, SPLIT_SEED)
        elif self.groups is not None:
            from sklearn.model_selection import GroupShuffleSplit

            splitter = GroupShuffleSplit(n_splits=1, test_size=fraction, random_state=SPLIT_SEED)
            keep, out = next(splitter.split(rows, groups=self.groups[1][rows]))
        else:
            keep, out = _stratified_split(self.y[rows], self.outputs, fraction, SPLIT_SEED)
        return rows[np.sort(keep)], rows[np.sort(out)]

    def folds(self, k: int, rows: np.ndarray | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
        """k (train rows, held-out rows) pairs over `rows` (default: every train row), each row held out once:
        spans of time when the test follows the train in time, whole groups when the rows come in groups, else
        stratified on the first classification output (when each class has k rows), as _split holds rows out."""
        from sklearn.model_selection import GroupKFold, KFold, StratifiedKFold

        rows = np.arange(len(self.y)) if rows is None else np.asarray(rows)
        if self.times is not None:
            splits = _time_folds(self.times[1][rows], k)
        elif self.groups is not None:
            splits = GroupKFold(k).split(rows, groups=self.groups[1][rows])
        else:
            first = next((j for j, o in enumerate(self.outputs) if o["kind"] != "regression"), None)
            strata = None if first is None else np.nan_to_num(self.y[rows, first], nan=-1).astype(int)
            if strata is not None and np.unique(strata, return_counts=True)[1].min() >= k:
                splits = StratifiedKFold(k, shuffle=True, random_state=SPLIT_SEED).split(rows, strata)
            else:
                splits = KFold(k, shuffle=True, random_state=SPLIT_SEED).split(rows)
        return [(rows[np.sort(a)], rows[np.sort(b)]) for a, b in splits]

    def with_split(self, fit: np.ndarray, val: np.ndarray) -> TaskData:
        """This task with other (fit, validation) rows, for the workspace's split file untouched: what a solution's
        recipe is run on for one fold of a cross-validation. Data read so far is shared, not read again."""
        other = copy.copy(self)
        other.__dict__["split"] = (np.asarray(fit), np.asarray(val))
        return other

    def _tab_maps(self) -> tuple[pd.DataFrame, pd.DataFrame] | None:
        """The train and test tab input maps as read, or None without both."""
        paths = [self.workspace.input_maps(split).get("tab") for split in ("train", "test")]
        return None if None in paths else (read_map(paths[0]), read_map(paths[1]))

    @cached_property
    def groups(self) -> tuple[str, np.ndarray] | None:
        """(column, each train row's group) when the tabular maps' rows come in groups that the test set does not
        share (time steps of episodes, readings of patients): validation must hold out whole groups."""
        if (maps := self._tab_maps()) is None:
            return None
        train, test = maps
        column = group_column(train, test)
        if column is None:
            return None
        return column, train.set_index("id").loc[list(self.train.ids), column].astype(str).to_numpy()

    def row_groups(self, rows: np.ndarray) -> np.ndarray | None:
        """These train rows' groups when the rows come in groups (see groups), else None: what a bootstrap of
        them or a fold over them keeps whole."""
        return None if self.groups is None else self.groups[1][np.asarray(rows)]

    @cached_property
    def times(self) -> tuple[str, np.ndarray] | None:
        """(column, each train row's time in days) when the test rows come after the train rows in time (a
        forecast): validation must hold out the latest rows, or it would score interpolation, not a forecast."""
        if (maps := self._tab_maps()) is None:
            return None
        train, test = maps
        column = time_column(train, test)
        if column is None:
            return None

        t = as_datetime(train.set_index("id", drop=False).loc[list(self.train.ids), column])  # the id may be it
        return column, ((t - t.min()).dt.total_seconds() / 86400).fillna(-1.0).to_numpy()  # no time: earliest

    def score(self, pred: np.ndarray, rows: np.ndarray) -> float:
        """The competition's metric (the metric stage's code) of model-space predictions for train rows."""
        truth = self.targets.iloc[np.asarray(rows)].reset_index(drop=True)
        return float(self.metric_module.metric(truth, self.transform.inverse_transform(np.asarray(pred))))

    def fit_weights(self, j: int, rows: np.ndarray) -> np.ndarray | None:
        """Each of these train rows' weight in fitting output j, as the metric weighs its error: 1/|y|^power under a
        relative error (RMSPE, MAPE: RELATIVE_ERROR; 0 where y is 0, a row RMSPE skips), and 0 off the rows a masked
        metric scores (masked MAE); None where the metric weighs every row alike."""
        rows = np.asarray(rows, dtype=int)
        weight = None
        if self.metric_name in RELATIVE_ERROR and self._values is not None:
            weight = relative_weights(self.metric_name, self._values[rows, j])
        if self._scored is not None:
            weight = self._scored[rows] * (1.0 if weight is None else weight)
        return weight

    def learn_rows(self, j: int, rows: np.ndarray) -> np.ndarray:
        """Those of these train rows that teach output j what the metric scores: its target known and a weight
        (fit_weights) above 0, and not a placeholder (_placeholders). A row the metric skips only pulls a model
        toward values it is never scored on (RMSPE's zero sales)."""
        rows = np.asarray(rows, dtype=int)
        rows = rows[np.isfinite(self.y[rows, j]) & ~self._placeholders[rows, j]]
        weight = self.fit_weights(j, rows)
        return rows if weight is None else rows[weight > 0]

    @cached_property
    def _placeholders(self) -> np.ndarray:
        """(train rows, outputs): True where a log error's value output holds a placeholder 0 (PLACEHOLDER_SHARE,
        PLACEHOLDER_GAP); the targets are log1p values in model space."""
        out = np.zeros(self.y.shape, dtype=bool)
        if self.metric_name not in LOG_ERROR:
            return out
        for j, o in enumerate(self.outputs):
            y = self.y[:, j].astype(float)
            zero, other = y == 0, y[np.isfinite(y) & (y != 0)]
            if (
                o["kind"] == "regression"
                and zero.mean() <= PLACEHOLDER_SHARE
                and len(other)
                and other.min() >= PLACEHOLDER_GAP
            ):
                out[:, j] = zero
        return out

    @cached_property
    def _values(self) -> np.ndarray | None:
        """The train targets in the metric's own scale, one column per output, where every output is a value (a log
        target's expm1): what a relative error divides by. None where an output holds classes."""
        if any(o["kind"] != "regression" for o in self.outputs):
            return None
        values = self.transform.inverse_transform(self.y)
        return values.to_numpy(dtype=float) if values.shape[1] == len(self.outputs) else None

    @cached_property
    def _scored(self) -> np.ndarray | None:
        """1 for the train rows a masked metric scores (its METRIC_COLUMNS[0] at SCORED_VALUE), 0 for the others;
        None for a metric that scores every row."""
        value, columns = (getattr(self.metric_module, a, None) for a in ("SCORED_VALUE", "METRIC_COLUMNS"))
        if value is None or not columns:
            return None
        return (self.targets[columns[0]].astype(float).to_numpy() == value).astype(float)

    @property
    def _tunable(self) -> dict:
        return dict(getattr(self.transform, "TUNABLE", {}))

    def tune_decoding(self, pred: np.ndarray, rows: np.ndarray) -> dict:
        """Set each decoding constant the transform offers (its TUNABLE grid, e.g. a multi-label threshold) for
        these predictions: the grid value that scores best on these rows, when it beats the transform's default
        on most bootstrap resamples of them (tools/resampling.py), else the default. The rows are the validation
        rows, which also choose among solutions: a threshold that wins by a few of them is noise, and the
        submission would carry it. Returns the values set."""

        rows, chosen = np.asarray(rows), {}
        every = np.arange(len(rows))
        for name, grid in self._tunable.items():
            default = self.decoding_defaults[name]

            def at(value, idx, name=name):
                setattr(self.transform, name, value)
                return self.score(pred[idx], rows[idx])

            scores = [at(value, every) for value in grid]
            best = grid[int(np.argmax(scores) if self.higher_is_better else np.argmin(scores))]
            keep = (
                best != default
                and self.better(at(best, every), at(default, every))
                and bool(
                    wins_on_resamples(
                        partial(at, best), partial(at, default), len(rows), self.higher_is_better, self.row_groups(rows)
                    )
                )
            )
            chosen[name] = best if keep else default
            setattr(self.transform, name, chosen[name])
        return chosen

    def reset_decoding(self) -> None:
        """The transform's decoding constants back to their defaults."""
        for name, value in self.decoding_defaults.items():
            setattr(self.transform, name, value)

    def constant_row(self, rows: np.ndarray, stat: str) -> np.ndarray:
        """One model-space row of a statistic of these train rows' targets: per output P(class 1) or the class
        frequencies ("prior"), every class alike ("uniform": what a metric weighing each class the same, a balanced
        log loss, scores best), or the mean or median value ("mean", "median"), or a relative error's best constant
        ("relative": the mean or median weighted by RELATIVE_ERROR's 1/|y|^power)."""
        parts = []
        for j, o in enumerate(self.outputs):
            y = self.y[rows, j]
            y = y[np.isfinite(y)]  # a row without this output's target
            if o["kind"] != "regression" and stat == "uniform":
                parts.append(np.full(self.widths[j], 1 / max(self.widths[j], 2)))
            elif o["kind"] == "multiclass":
                parts.append(np.bincount(y.astype(int), minlength=self.widths[j])[: self.widths[j]] / len(y))
            elif o["kind"] == "regression" and stat == "median":
                parts.append(np.array([np.median(y)]))
            elif o["kind"] == "regression" and stat == "relative":  # the relative error's own best constant
                parts.append(np.array([_relative_constant(self.metric_name, y)]))
            else:
                parts.append(np.array([y.mean()]))
        return np.concatenate(parts)

    def better(self, a: float, b: float) -> bool:
        """Is score a strictly better than score b?"""
        return a > b if self.higher_is_better else a < b


def _relative_constant(metric: str, y: np.ndarray) -> float:
    """The constant a relative-error metric scores best: RMSPE's weighted mean, MAPE's weighted median."""
    w = relative_weights(metric, y)
    if w is None or not (w > 0).any():
        return float(np.median(y))
    if RELATIVE_ERROR[metric] == 2:
        return float(np.sum(w * y) / np.sum(w))
    order = np.argsort(y)
    cumulative = np.cumsum(w[order])
    return float(y[order][np.searchsorted(cumulative, cumulative[-1] / 2)])


def _stratified_split(y: np.ndarray, outputs: list[dict], fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = len(y)
    strata = next((y[:, j] for j, o in enumerate(outputs) if o["kind"] != "regression"), None)
    val = []
    if strata is None:
        val = rng.permutation(n)[: max(1, int(round(fraction * n)))].tolist()
    else:
        for value in np.unique(strata):
            rows = rng.permutation(np.flatnonzero(strata == value))
            val += rows[: int(round(fraction * len(rows)))].tolist()  # a class with one row stays in fit
    val = np.sort(np.asarray(val, dtype=int))
    fit = np.setdiff1d(np.arange(n), val)
    return fit, val


def held_out(split: dict) -> str:
    """How a split (the split file's record: its "time" or "groups" column, if any) held its rows out, in words."""
    if "time" in split:
        return f"the latest by {split['time']!r}, as the test rows come after every train row"
    if "groups" in split:
        return f"whole groups of {split['groups']!r}, as the test shares none of the train's"
    return "random rows"


def _time_folds(t: np.ndarray, k: int):
    """k (kept, held out) position pairs over rows at times t, each fold a span of time, a time's rows together."""
    edges = np.sort(t)[[len(t) * i // k for i in range(1, k)]]
    block = np.searchsorted(edges, t, side="right")
    for b in np.unique(block):
        yield np.flatnonzero(block != b), np.flatnonzero(block == b)


MIN_GROUPS = 5
FUTURE_SHARE = 0.9  # of the test rows later than every train row: the test is the train's future
MIN_TIMES = 10  # distinct train times, for a latest span to hold out


def group_column(train: pd.DataFrame, test: pd.DataFrame) -> str | None:
    """A whole-number or text column of both maps whose values repeat (three rows or more per value on average)
    and of which the test map shares none with the train map: the rows' groups."""
    for c in train.columns[1:]:
        if c not in test.columns or train[c].isna().any():
            continue
        values = train[c]
        if pd.api.types.is_float_dtype(values) and not (values % 1 == 0).all():
            continue
        n = values.nunique()
        if MIN_GROUPS <= n and 3 * n <= len(values) and not set(values.astype(str)) & set(test[c].astype(str)):
            return c
    return None


def time_column(train: pd.DataFrame, test: pd.DataFrame) -> str | None:
    """A date or time column of both maps, with MIN_TIMES distinct train times at least, after whose latest train
    time come FUTURE_SHARE of the test rows: the test is a forecast of the train's future. Test days interleaved
    with the train's (the first days of each month to train on, the rest to predict) are not."""

    for c in sorted(train.columns, key=lambda c: c == "id"):  # a map's id last: a timestamp id is the rows' time
        if c not in test.columns or not is_datetime(train[c]):
            continue
        t_train, t_test = as_datetime(train[c]), as_datetime(test[c])
        if t_train.nunique() >= MIN_TIMES and (t_test > t_train.max()).mean() >= FUTURE_SHARE:
            return c
    return None
