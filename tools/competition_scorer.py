"""The competition's metric as an AutoGluon Scorer, so that AutoGluon stops early, selects and ensembles models
on what the competition scores instead of on a stand-in such as accuracy.

AutoGluon scores one label at a time in its internal space: y_true holds the model-space labels we trained on
(binary 0/1, multiclass codes, transformed regression values), and y_pred holds P(class 1) for a binary
needs_proba scorer (positive_class=1), (n, k) probabilities in class order for multiclass, class codes for a
needs_class scorer, and values for regression. The scorer turns both into what the workspace's metric() sees when the
competition scores a submission: the truth decoded to target-map values, the prediction put back in model space
and passed through the workspace's inverse_transform.

Single-output tasks are scored with the workspace's metric() itself. For several outputs the metric adapter scores all
target columns at once, while AutoGluon fits one predictor per output; output j is then scored with the metric's
per-column base from tools.metrics (mean_columnwise_auc -> roc_auc, mcrmse -> rmse, ...; a metric the adapter
averages per target is its own base). A column-wise mean is the average of those per-column scores, so
optimising each column optimises the competition's score.

A metric that reads columns beside the targets (identity sub-groups, a mask of the scored rows: the metric stage's
METRIC_COLUMNS) cannot be computed from the target alone, which is all AutoGluon passes: such an output is scored
with the metric of the target alone that it refines (tools.metrics.TARGET_ALONE: bias AUC -> ROC AUC, masked MAE ->
MAE). The solver still selects among solutions on the competition's own metric.

The score function is picklable (AutoGluon pickles the predictor with its metric): it stores only the workspace
path and indices and reloads the generated modules lazily in whichever process unpickles it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from autogluon.core.metrics import Scorer, make_scorer

from agentk.workspace import METRIC, TARGET_TRANSFORM, Workspace, read_map
from tools.heads import width
from tools.metrics import COLUMNWISE, METRICS, TARGET_ALONE

BASE_METRIC = {columnwise: base for base, columnwise in COLUMNWISE.items()}


def competition_scorer(ws: Path, output_index: int, classes: list[int] | None = None) -> Scorer:
    """An AutoGluon Scorer for output `output_index` of the workspace's task. `classes`: the model-space class codes
    the predictor is trained on, in order (AutoGluon only knows the classes present in its training rows);
    default all codes 0..k-1."""
    score = CompetitionScore(ws, output_index, classes)
    higher = score.higher_is_better
    return make_scorer(
        f"competition_{score.metric_name}_{output_index}",
        score,
        optimum=1 if higher else 0,  # every catalogue score peaks at 1, every loss at 0
        greater_is_better=higher,  # AutoGluon then reports losses negated
        needs_proba=score.needs == "proba",
        needs_class=score.needs == "class",
    )


class CompetitionScore:
    """score(y_true, y_pred) -> the competition's metric for one output (see the module docstring)."""

    def __init__(self, ws: Path, output_index: int, classes: list[int] | None = None):
        self.ws, self.j = str(Path(ws).resolve()), int(output_index)
        self.classes = None if classes is None else [int(c) for c in classes]
        # loaded now: the scorer's flags depend on the workspace, and a bad index should fail here, not mid-fit
        self._loaded = _Loaded(Path(self.ws), self.j)

    def __getstate__(self) -> dict:
        return {"ws": self.ws, "j": self.j, "classes": self.classes}  # modules do not pickle; reload them

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state, _loaded=None)

    @property
    def loaded(self) -> _Loaded:
        if self._loaded is None:
            self._loaded = _Loaded(Path(self.ws), self.j)
        return self._loaded

    @property
    def metric_name(self) -> str:
        return self.loaded.metric_name

    @property
    def higher_is_better(self) -> bool:
        return bool(self.loaded.metric.HIGHER_IS_BETTER)

    @property
    def needs(self) -> str:
        return self.loaded.needs

    def __call__(self, y_true, y_pred, **_) -> float:
        w = self.loaded
        codes, pred = self._model_codes(y_true), self._model_space(y_pred)
        if w.base is None:
            truth = pd.DataFrame({w.column: w.decode(codes)})
            return float(w.metric.metric(truth, w.transform.inverse_transform(pred)))
        # several outputs, or a metric reading other columns: the base metric's inputs, as the adapter builds them
        # for one column: binary the positive-class indicator (= the model-space label), multiclass codes,
        # regression original values
        truth = w.decode(codes).astype(float) if w.kind == "regression" else codes
        return float(w.base(truth, self._base_pred(pred)))

    # ------------------------------------------------------------------ AutoGluon's space -> model space
    def _codes(self) -> np.ndarray:
        return np.arange(self.loaded.width) if self.classes is None else np.asarray(self.classes)

    def _model_codes(self, labels) -> np.ndarray:
        """AutoGluon's internal labels -> model-space labels (multiclass codes index the trained classes)."""
        a = np.asarray(labels)
        if self.loaded.kind == "multiclass":
            return self._codes()[a.astype(int)].astype(float)
        return a.astype(float)

    def _model_space(self, y_pred) -> np.ndarray:
        """AutoGluon's prediction for this output -> (n, width) model space."""
        w, a = self.loaded, np.asarray(y_pred, dtype=float)
        if w.kind == "multiclass":
            proba = np.zeros((len(a), w.width))
            if w.needs == "class":
                proba[np.arange(len(a)), self._model_codes(a).astype(int)] = 1.0
            else:
                proba[:, self._codes()] = a.reshape(len(a), -1)
            return proba
        if a.ndim == 2:  # (n, 2) binary probabilities: the positive class (1) is the last column
            a = a[:, -1]
        return a.reshape(-1, 1)

    def _base_pred(self, pred: np.ndarray) -> np.ndarray:
        w = self.loaded
        if w.kind == "regression":
            return w.submission_column(pred)
        if w.kind == "multiclass":
            return pred if w.needs == "proba" else pred.argmax(axis=1)
        return np.clip(pred[:, 0], 0.0, 1.0)


class _Loaded:
    """What the score function loads from the workspace, once per process."""

    def __init__(self, ws: Path, j: int):
        self.transform = Workspace(ws).load(TARGET_TRANSFORM)
        self.metric = Workspace(ws).load(METRIC)
        self.metric_name = str(getattr(self.metric, "METRIC", "metric"))
        self.outputs = list(self.transform.OUTPUTS)
        self.widths = [width(o) for o in self.outputs]
        if not 0 <= j < len(self.outputs):
            raise ValueError(f"output_index {j} is out of range: the task has {len(self.outputs)} outputs")
        self.j, self.kind, self.width = j, self.outputs[j]["kind"], self.widths[j]
        self.offset = sum(self.widths[:j])
        targets = read_map(Workspace(ws).target_map).drop(columns="id")
        name = self.outputs[j].get("name")
        if name not in targets.columns and j >= targets.shape[1]:  # e.g. one label's head of a label-set target
            raise ValueError(
                f"output {j} ({name}) is one of several heads of one target column: the competition's metric "
                "scores the column, not this head alone"
            )
        self.column = name if name in targets.columns else targets.columns[j]
        model = np.asarray(self.transform.transform(targets), dtype=float).reshape(len(targets), -1)[:, j]
        self.lookup = _lookup(model, targets[self.column], unique=self.kind == "regression")
        self.needs = "value" if self.kind == "regression" else self._probe_needs()
        self.base = None  # the metric of this output alone, where the competition's metric() cannot score it
        beside = list(getattr(self.metric, "METRIC_COLUMNS", None) or [])
        if beside:
            if self.metric_name not in TARGET_ALONE:
                raise ValueError(
                    f"metric {self.metric_name!r} reads {beside} beside the targets and has no metric of the target "
                    "alone in tools.metrics.TARGET_ALONE"
                )
            self.base = METRICS[TARGET_ALONE[self.metric_name]].fn
        elif len(self.outputs) > 1:
            base = BASE_METRIC.get(self.metric_name, self.metric_name)
            if base == "log_loss" and self.kind == "multiclass":
                base = "multi_log_loss"
            if base not in METRICS or METRICS[base].multi_target:
                raise ValueError(
                    f"cannot score output {j} of a {len(self.outputs)}-output task alone: metric "
                    f"{self.metric_name!r} has no per-column base metric in tools.metrics"
                )
            self.base = METRICS[base].fn

    def _probe_needs(self) -> str:
        """'proba' if the submission changes with the probabilities beyond the predicted class, else 'class'."""
        if self.kind == "binary":
            probe = np.array([[0.6], [0.9]])
        else:
            k = self.width
            rest = np.arange(1, k, dtype=float)
            probe = np.zeros((2, k))
            probe[:, 0] = 0.5, 0.7  # class 0 wins both rows; the others are ranked in opposite orders
            probe[0, 1:], probe[1, 1:] = 0.5 * rest / rest.sum(), 0.3 * rest[::-1] / rest.sum()
        sub = self.submission(probe)
        return "class" if sub.iloc[0].equals(sub.iloc[1]) else "proba"

    def submission(self, part: np.ndarray) -> pd.DataFrame:
        """This output's model-space columns -> the submission columns (the other outputs held at zero)."""
        full = np.zeros((len(part), sum(self.widths)))
        full[:, self.offset : self.offset + self.width] = part
        return self.transform.inverse_transform(full)

    def submission_column(self, part: np.ndarray) -> np.ndarray:
        frame = self.submission(part)
        name = self.outputs[self.j].get("name")
        if name in frame.columns:
            return frame[name].to_numpy(dtype=float)
        if len(frame.columns) == len(self.outputs):
            return frame.iloc[:, self.j].to_numpy(dtype=float)
        raise ValueError(
            f"cannot tell which submission column holds output {self.j} ({name!r}) among {list(frame.columns)[:6]}"
        )

    def decode(self, model: np.ndarray) -> np.ndarray:
        """Model-space labels -> target-map values: looked up in the training targets; a regression value the
        lookup cannot tell (clipped by the transform, or unseen) goes through inverse_transform."""
        values = pd.Series(model).map(self.lookup)
        missing = values.isna().to_numpy()
        if missing.any():
            if self.kind != "regression":
                bad = model[missing][:3].tolist()
                raise ValueError(
                    f"labels {bad} of output {self.j} ({self.column!r}) are not codes of the training targets"
                )
            values = values.astype(float)
            values[missing] = self.submission_column(model[missing].reshape(-1, 1))
        return values.to_numpy()


def _lookup(model: np.ndarray, original: pd.Series, unique: bool) -> dict:
    """model-space value -> target-map value, from the training pairs. unique: drop values several originals map to
    (a clipping transform); otherwise the first original wins."""
    pairs = pd.DataFrame({"model": model, "original": original.to_numpy()}).drop_duplicates()
    pairs = pairs.drop_duplicates("model", keep=False if unique else "first")
    return dict(zip(pairs["model"], pairs["original"]))
