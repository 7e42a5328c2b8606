"""The AutoGluon tool (paper 3.2): one TabularPredictor per output of a tabular task, optimising the competition's
own metric (tools.competition_scorer), fitted and tuned on the task's fit rows alone, so its predictions for the
validation rows are an honest figure, comparable with every other solution's, and can feed the blender.

Choices:
- Input: the tab input map only, in the dataset's id order, ids excluded; AutoGluon infers the column types
  (the map keeps booleans, numbers and strings as the setup wrote them).
- Selection kept honest: what tunes a model is not what selects it. AutoGluon tunes (early stopping, ensemble
  weights, its choice of best model) on a holdout it carves out of the fit rows, or on out-of-fold predictions for
  presets that bag (good/high/best quality; folds fitted one after another: 2 cores, no ray workers); the solver
  selects among solutions on the validation rows, which AutoGluon never sees while fitting. Dynamic stacking is off
  (it would spend time on a second holdout).
  Its holdout stays random where the task holds rows out by time or group (the networks' stop rows do not): tuned
  on the latest fit rows, it learnt without them and tested worse on both forecast fixtures (its RMSPE 0.099 ->
  0.115; the chosen blend's SMAPE 14.72 -> 15.37); tuned on whole groups of the fit rows (a fifth, as
  TaskData.holdout), it validated worse on the three grouped fixtures (MAE 0.492 -> 0.503, RMSE 0.434 -> 0.491,
  MAE 3.925 -> 3.931): a few groups are a noisier holdout than the same share of rows.
- What the metric scores: each output fits the rows that teach it what the metric scores (TaskData.learn_rows: a
  known target, not a row the metric skips, such as RMSPE's zero sales or the rows a masked metric leaves out),
  weighted as the metric weighs them (TaskData.fit_weights: RMSPE 1/y^2, MAPE 1/|y|) through AutoGluon's
  sample_weight column (WEIGHT); weight_evaluation stays off, the scorer being the weighted metric already.
- Refit (refit=True): once the validation predictions are made, the best model (an ensemble: its members) is
  refitted on every row, fit and validation (with row weights, on the fit rows alone: AutoGluon takes no extra
  rows beside them), with the iterations it chose (refit_full), and that refit model
  predicts the test rows, unless it predicts the validation rows, which it learnt from, clearly worse than the
  original, which never saw them (a broken refit: see _check_refit). The validation figure is the one of the model
  before refitting, on rows it never saw.
- Classes: every class is kept (label_count_threshold=1), and the binary decision threshold stays at 0.5
  (no calibration) because the model space carries probabilities and inverse_transform thresholds them at 0.5.
- Threads: each model gets the cores that other processes leave idle (at least one; tools/machine.idle_cores),
  but one where an output has more than MAX_CLASSES classes: boosting then grows a small tree per class each round,
  and threads that sleep between them (OMP_WAIT_POLICY=PASSIVE, the solver's) cost more than they share. On 8,000
  rows of 50 classes on 2 cores, LightGBMXT, LightGBM and AutoGluon's network fitted in 169, 130 and 112 s with two
  threads and in 38, 41 and 50 s with one (benchmarks/solve_bound.py, 2026-12-02).
  OpenMP threads waiting for a core spin: on a loaded 2-core machine LightGBM on 500 rows took 19 s with
  AutoGluon's default of every core and 1.2 s with one thread, so the default left the time limit for a single
  model.
- Work, then the clock: the models fitted are planned before the fit from the rows, columns, classes and the
  cores other processes leave free (tools/autogluon_plan.py), each to its own early stopping; AutoGluon's time
  limit is a safety cap, and within a solve (`wall`) also the wall time the solve allots it
  (agentk/core/deadline.py): the plan is cut to half of that (deadline.MARGIN), AutoGluon's time limit to the fit's
  share of it, and the refit is skipped when what is left of it is less than the fit took (issue 60: a quick solve
  of 27,000 rows and 22 classes was still fitting after 30 minutes beside another process).
- Work grows with the data: each output's budget is at least what AutoGluon's first boosted models (its two
  LightGBMs and CatBoost) cost on every fit row (autogluon_plan.least_seconds), so a budget set for small tables
  does not leave a large one a single model or a sample (issue 48).
- Rows: AutoGluon fits on at most the rows its budget can take (tuning_rows: CELLS_PER_CORE_S table cells per
  second per core), a random sample of the fit rows, and refits on the same share of every row: on a
  3.2 M x 56 table in 42 s it trained no model or one at accuracy 0.54, on a 200,000-row sample of it six at 0.75.
- Seeds: `seed` is AutoGluon's random_state (its data splits, e.g. bagging folds); its models seed themselves
  with 0, so a fit is repeatable."""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import pandas as pd
from autogluon.tabular import TabularPredictor  # slow import: only when the tool runs

from agentk.core import deadline
from agentk.modalities import TABULAR
from agentk.workspace import Workspace
from tools import machine
from tools.autogluon_plan import MAX_CLASSES, least_rows, least_seconds, plan_models
from tools.competition_scorer import competition_scorer
from tools.resampling import at_most
from tools.task_data import TaskData

LABEL = "__agentk_target__"
WEIGHT = "__agentk_weight__"  # the column of the metric's row weights (AutoGluon's sample_weight)
BAGGING_PRESETS = ("good", "high", "best", "extreme", "experimental")
REFIT_SLACK = 0.1  # a refit scoring this much (relative) worse than its original on the checked rows is rejected
FIT_SHARE = 0.7  # of the time limit for the first fit when a refit follows (a refit costs about one more fit)
# the refit check scores both models on at most this many validation rows: on 800,000 it predicted for over 15 minutes
CHECK_ROWS = 20_000
# table cells (rows x columns) AutoGluon's medium-quality models fit per second of its limit per core: 42 s on 2
# cores fitted six models on 50,000 x 56 (accuracy 0.744), four on 200,000 (0.752), two on 800,000 (0.750)
CELLS_PER_CORE_S = 150_000
MIN_TUNING_ROWS = 10_000


def fit_autogluon(
    task: TaskData,
    seconds: float,
    presets: str = "medium_quality",
    out_dir: Path | None = None,
    verbosity: int = 0,
    seed: int = 0,
    hyperparameters: dict | str | None = None,
    refit: bool = True,
    only: list[list[str]] | None = None,
    most: float | None = None,
    wall: float | None = None,
) -> dict:
    """Fit and predict within `seconds` of modelled work (tools/autogluon_plan.py; the wall clock stops AutoGluon
    only at its safety cap), which grows with a large table up to `most` (None: no ceiling); past it, on a sample
    of the fit rows. only: per output, the model names to plan among (a fold: its solution's models).
    Returns val_pred (model space, task.split[1] rows), test_pred (model space, all test rows;
    from the refitted model when refit), validated_test_pred (the test rows by the model before its refit),
    val_score (task.score on the val rows), models (per output: the plan, best model,
    the refitted one, the rows tuned and refitted on, and the leaderboard; AutoGluon's score_val is on its own
    holdout and higher-is-better, so losses appear negated) and seconds. wall: the wall seconds it may take in
    all, fits and refits (None: only the plan's safety cap bounds it)."""
    if TABULAR.name not in task.modalities:
        raise ValueError(
            f"the AutoGluon tool needs a {TABULAR.name} input map; this task has {', '.join(task.modalities)}"
        )
    start = time.monotonic()
    out_dir = Path(out_dir) if out_dir is not None else Workspace(task.ws).solutions / "autogluon"
    fit_rows, val_rows = task.split
    X, X_test = _features(task.train.inputs[TABULAR.name]), _features(task.test.inputs[TABULAR.name])
    free = machine.idle_cores()  # the cores other processes leave: AutoGluon's threads, and its plan's speed
    bagging = {"ag_args_ensemble": {"fold_fitting_strategy": "sequential_local"}} if _bags(presets) else {}
    val_parts, test_parts, validated_parts, models, modelled = [], [], [], [], 0.0
    categorical = sum(not pd.api.types.is_numeric_dtype(t) for t in X.dtypes)  # texts and categories
    for j, output in enumerate(task.outputs):
        output_start = time.monotonic()
        label = _labels(task.y[:, j], output["kind"])
        # rows without this output's target, or that the metric skips (RMSPE's zeros), teach it nothing
        fit_j, val_j = task.learn_rows(j, fit_rows), task.learn_rows(j, val_rows)
        # each output an equal share of the work, the refit's part set aside: a plan, not what a clock left; and at
        # least what AutoGluon's first boosted models cost on every fit row (a large table's budget grows with it),
        # up to the budget's ceiling, past which they fit on a sample of the rows
        share = (FIT_SHARE if refit else 1.0) / len(task.outputs)
        limit, ceiling = max(seconds * share, 1.0), most * share if most is not None else math.inf
        # this output's wall share of what is left, and of it the fit's (the refit's part set aside)
        mine = (wall - (time.monotonic() - start)) / (len(task.outputs) - j) if wall is not None else math.inf
        fit_wall = max(1.0, mine * (FIT_SHARE if refit else 1.0))
        classes_j = task.widths[j] if output["kind"] == "multiclass" else 1
        threads = 1 if classes_j > MAX_CLASSES else free  # many classes: one thread (the docstring's Threads)
        options = {"ag_args_fit": {"num_cpus": threads}, **bagging}
        shape = {
            "presets": presets,
            "hyperparameters": hyperparameters,
            "kind": output["kind"],
            "columns": X.shape[1],
            "classes": classes_j,
            "cores": threads,
            "categorical": categorical,
        }
        least = least_seconds(**shape, rows=len(fit_j)) if only is None else 0.0  # a fold: its models, its share
        grown = least > limit
        limit = min(max(limit, min(least, ceiling)), fit_wall / deadline.MARGIN)
        cap = tuning_rows(limit, X.shape[1], threads)
        if least > limit:  # past the ceiling: the first boosted models on as many rows as it affords them
            cap = min(cap, least_rows(limit, **shape, rows=len(fit_j)))
        classes = output["kind"] != "regression"
        rng = np.random.default_rng(seed + j)
        n_fit = len(fit_j)
        fit_j = sample_rows(fit_j, label, cap, rng, classes)
        val_j = sample_rows(val_j, label, round(len(val_j) * len(fit_j) / n_fit), rng, classes)  # the same share
        plan = plan_models(
            **shape, rows=len(fit_j), seconds=limit, only=only[j] if only else None, boosted_first=grown
        )  # only None: every model of the portfolio
        modelled += plan.seconds * (2 if refit else 1)  # a refit costs about one more fit
        predictor = _fit_output(
            task,
            j,
            _weighted(X.iloc[fit_j].assign(**{LABEL: label[fit_j]}), task.fit_weights(j, fit_j)),
            out_dir / f"output_{j}",
            time_limit=min(plan.time_limit, fit_wall),
            presets=presets,
            verbosity=verbosity,
            seed=seed,
            hyperparameters=plan.hyperparameters,
            **options,
        )
        val_parts.append(_predict(predictor, X.iloc[val_rows], output["kind"], task.widths[j]))
        # the selected model's test predictions, for the blender, and the test's if no refit follows
        validated_parts.append(_predict(predictor, X_test, output["kind"], task.widths[j]))
        selected, refit_note = predictor.model_best, None
        # AutoGluon refuses extra rows beside row weights: a weighted refit learns the fit rows alone
        extra = val_j if predictor.sample_weight is None else val_j[:0]
        # a refit costs what the fit and its predictions did, grown with the rows it adds: past the wall time left, none
        fitted_s = time.monotonic() - output_start
        left = mine - fitted_s
        skipped = refit and left < fitted_s * (len(fit_j) + len(extra)) / max(len(fit_j), 1)
        if skipped:
            refit_note = (
                f"no refit: the fit took {fitted_s:.0f} s and {max(0.0, left):.0f} s of the wall time allotted is left"
            )
        if refit and not skipped:  # the validation rows join the fit rows; the refitted best model becomes the best
            refitted = predictor.refit_full(
                model="best", train_data_extra=X.iloc[extra].assign(**{LABEL: label[extra]}) if len(extra) else None
            )
            checked = np.sort(np.random.default_rng(seed).permutation(val_j)[:CHECK_ROWS])
            if len(checked):  # no validation rows: the refit learnt nothing new, and nothing can check it
                refit_note = _check_refit(
                    predictor, refitted, selected, X.iloc[checked].assign(**{LABEL: label[checked]})
                )
        refitted_best = refit and not skipped and predictor.model_best != selected
        test_parts.append(
            _predict(predictor, X_test, output["kind"], task.widths[j]) if refitted_best else validated_parts[-1]
        )
        models.append(
            _summary(predictor, output, out_dir / f"output_{j}")
            | {
                "plan": plan.line(),
                "planned": list(plan.models),
                "selected": selected,
                "members": _members(predictor, selected),
                "refit": predictor.model_best if refit and refit_note is None else None,
                "time_limit": round(min(plan.time_limit, fit_wall), 1),
                "refit_rejected": refit_note,
                "tuned_on_rows": len(fit_j),
                "fit_rows": n_fit,
                "threads": options["ag_args_fit"]["num_cpus"],
                "refit_on_rows": len(fit_j) + len(extra) if refit and not skipped else None,
                "weighted": predictor.sample_weight is not None,
            }
        )
    val_pred, test_pred = np.hstack(val_parts), np.hstack(test_parts)
    return {
        "val_pred": val_pred,
        "test_pred": test_pred,
        "validated_test_pred": np.hstack(validated_parts) if refit else test_pred,
        "val_score": task.score(val_pred, val_rows),
        "models": models,
        "modelled_seconds": modelled,
        "seconds": time.monotonic() - start,
    }


def _bags(presets: str) -> bool:
    return any(presets.startswith(p) for p in BAGGING_PRESETS)


def tuning_rows(time_limit: float, columns: int, cores: int) -> int:
    """The most rows AutoGluon fits on in time_limit seconds on `cores` cores (CELLS_PER_CORE_S)."""
    return max(MIN_TUNING_ROWS, int(CELLS_PER_CORE_S * time_limit * cores / max(1, columns)))


def sample_rows(rows: np.ndarray, label: np.ndarray, n: int, rng: np.random.Generator, classes: bool) -> np.ndarray:
    """`rows` when there are at most n of them, else a random n of them (in order). With classes, a class the
    sample missed keeps all its rows: AutoGluon cannot predict a class it never saw."""
    if len(rows) <= n:
        return rows
    picked = at_most(rows, n, rng)
    if classes:
        missing = np.setdiff1d(np.unique(label[rows]), np.unique(label[picked]))
        picked = np.concatenate([picked, rows[np.isin(label[rows], missing)]])
    return np.sort(picked)


def _fit_output(
    task: TaskData,
    j: int,
    train: pd.DataFrame,
    path: Path,
    time_limit: float,
    presets: str,
    verbosity: int,
    seed: int,
    **options,
):

    kind = task.outputs[j]["kind"]
    classes = sorted(train[LABEL].unique().tolist()) if kind == "multiclass" else None
    try:
        eval_metric = competition_scorer(task.ws, j, classes)
    except ValueError:  # a head the metric cannot score alone (one label of a set): AutoGluon's default for its kind
        eval_metric = None
    predictor = TabularPredictor(
        label=LABEL,
        problem_type=kind,
        eval_metric=eval_metric,
        path=str(path),
        verbosity=verbosity,
        positive_class=1 if kind == "binary" else None,
        # the metric's row weights (TaskData.fit_weights); not weight_evaluation: the scorer is the metric itself,
        # which weighs the rows already
        sample_weight=WEIGHT if WEIGHT in train.columns else None,
        learner_kwargs={"random_state": seed, "label_count_threshold": 1},
    )
    predictor.fit(
        train,
        time_limit=time_limit,
        presets=presets,
        calibrate_decision_threshold=False,
        dynamic_stacking=False,
        raise_on_no_models_fitted=False,
        **options,
    )
    if not predictor.model_names():  # AutoGluon's own error hides why at low verbosity
        failures = predictor.model_failures()
        reasons = "; ".join(f"{r.model}: {r.exc_type}: {r.exc_str}" for r in failures.head(3).itertuples())
        raise RuntimeError(
            f"AutoGluon trained no model for output {j} ({task.outputs[j].get('name')}): "
            f"{reasons or 'no model fitted in the time limit'}"
        )
    return predictor


def _check_refit(predictor, refitted: dict[str, str], selected: str, checked: pd.DataFrame) -> str | None:
    """Keeps the refit only if every refitted model ({original: refitted}, refit_full's answer) predicts the
    `checked` rows (up to CHECK_ROWS validation rows: the refit learnt from them, the original never saw them) about
    as well as the model it copies; otherwise the original selected model becomes the predictor's best again and the
    reason is returned. A refit can break: a CatBoost refitted with the iterations chosen on the holdout merged two
    target levels 45 apart (validation MAE 7.6 where the original, not having seen them, had 4.1; test 8.4 against
    4.2). Not the fit rows: both models learnt from those, and a refitted network fitted them 12 % less tightly than
    its early-stopped original while it predicted a forecast's latest rows and the test far better (RMSPE 0.115
    against 0.187; its ensemble 0.083 against 0.099)."""
    for original, refit in refitted.items():
        if original == refit:
            continue
        try:
            before, after = (
                next(iter(predictor.evaluate(checked, model=m, auxiliary_metrics=False, silent=True).values()))
                for m in (original, refit)
            )  # higher is better: AutoGluon negates losses
        except AttributeError:  # a bagged original whose fold models the preset did not keep (save_bag_folds=False)
            continue
        if after < before - REFIT_SLACK * abs(before):
            predictor.set_model_best(selected)
            return (
                f"{refit} scored {after:.5g} on validation rows it learnt from, against {before:.5g} for {original}, "
                f"which never saw them: kept {selected}"
            )
    return None


def _features(tab: pd.DataFrame) -> pd.DataFrame:
    frame = tab.reset_index(drop=True)  # the index holds the ids
    if clash := {LABEL, WEIGHT} & set(frame.columns):
        raise ValueError(
            f"the {TABULAR.name} input map has a column named {clash.pop()!r}, which the AutoGluon tool uses for "
            "labels or row weights"
        )
    return frame


def _weighted(train: pd.DataFrame, weight: np.ndarray | None) -> pd.DataFrame:
    """The fit rows with the metric's row weights as the WEIGHT column, where it weighs rows unequally."""
    return train if weight is None else train.assign(**{WEIGHT: weight})


def _labels(y: np.ndarray, kind: str) -> np.ndarray:
    # AutoGluon's classes are the label's values: integer codes keep class j at probability column j
    return y.astype(float) if kind == "regression" else np.rint(y).astype(int)


def _predict(predictor, X: pd.DataFrame, kind: str, width: int) -> np.ndarray:
    """Predictions in model space: P(class 1), the probability of every class code (0 for a class AutoGluon never
    saw), or the transformed value."""
    if kind == "regression":
        return predictor.predict(X).to_numpy(dtype=float).reshape(-1, 1)
    proba = predictor.predict_proba(X, as_multiclass=True)
    if kind == "binary":
        return proba[1].to_numpy(dtype=float).reshape(-1, 1)
    return proba.reindex(columns=range(width), fill_value=0.0).to_numpy(dtype=float)


def _members(predictor, model: str) -> dict[str, float]:
    """{model: weight} of the models that `model` predicts with: an ensemble's members of weight above 0, else the
    model alone; what a cross-validation fold rebuilds (agentk/solve/kinds/autogluon.fold)."""
    children = predictor.model_info(model).get("children_info", {})  # a bagged ensemble: one child per bag
    weights: dict[str, float] = {}
    for child in children.values():
        for name, weight in child.get("model_weights", {}).items():
            weights[name] = weights.get(name, 0.0) + float(weight) / len(children)
    return {name: round(w, 4) for name, w in weights.items() if w > 0} or {model: 1.0}


def _summary(predictor, output: dict, path: Path) -> dict:
    board = predictor.leaderboard(silent=True)
    rows = board[["model", "score_val", "fit_time"]].to_dict("records")
    return {
        "output": output.get("name"),
        "path": str(path),
        "best": predictor.model_best,
        "leaderboard": [{k: (float(v) if k != "model" else str(v)) for k, v in row.items()} for row in rows],
    }
