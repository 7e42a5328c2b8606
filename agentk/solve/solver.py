"""Solution generation (paper 3.2, Algorithm 2): on a finished setup, build solutions, tune each network
with HEBO, blend them with an MLP, and write the best submission.

Every solution goes to its own folder (agentk.workspace.Solution: plan, score, validation and test
predictions, submission, the trials of tuned networks); a finished one is loaded, not redone, so a killed solve
resumes. Predictions are kept in model space (see tools/task_data.py), which is what the blender learns from.

This module runs in a child process of `agentk solve` (cwd the workspace, no credentials): it executes the
setup's generated code (transform, metric, formatters). Everything it and its libraries write goes to
<ws>/logs/solve.log; the console gets progress bars and one line per solution (all of it with --verbose).
solve.json says "running" from the start and "done" only once the final choice is in place: that is the marker
`agentk submit` trusts. Before that, <ws>/submission.csv is at every moment the best solution finished so far (the
constant first, which nothing worse replaces), written whole, and solve.json's "submission" names it, so a solve
killed at any moment leaves it. The solve ends within its budget's bound on the wall clock (agentk/core/deadline.py):
each solution runs under what is left of it."""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import json
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from functools import cache, partial
from pathlib import Path

import numpy as np

from agentk.core.deadline import LEAST_S, MARGIN, Deadline
from agentk.core.fileio import append_jsonl, copy_file, read_json, read_jsonl, write_json, write_text
from agentk.modalities import IMAGE, TABULAR, TEXT
from agentk.parsing import guard_pandas
from agentk.solve import cross_validation
from agentk.solve.budgets import FIELD_INPUT, PRESETS, Machine, SolveBudget, plan_network
from agentk.workspace import Solution as SolutionFiles
from agentk.workspace import Workspace
from tools.fusion_config import STOP_ROWS, FusionConfig
from tools.metrics import RELATIVE_ERROR
from tools.resampling import WIN_SHARE, wins_on_resamples
from tools.submission import format_with_fallback
from tools.task_data import TaskData


@dataclass
class Solution:
    id: str
    kind: str  # constant | autogluon | classical | network | blend
    plan: str
    val_score: float
    val_pred: np.ndarray
    test_pred: np.ndarray
    seconds: float
    details: dict = field(default_factory=dict)
    validated_test_pred: np.ndarray | None = None  # the validated model's, when test_pred comes from a refit

    @property
    def blend_test_pred(self) -> np.ndarray:
        """What the blender combines for the test rows: the predictions of the models whose validation predictions
        it learned from. A refit predicts on another scale (a network refitted on every row for the best trial's
        epochs is more confident): a blend of refits validated at accuracy 0.986 and tested at 0.956, the same
        blend of the validated models at 0.986 (digits-images)."""
        return self.test_pred if self.validated_test_pred is None else self.validated_test_pred


class LeftOut(Exception):
    """A solution the budget does not buy (its plan says why): left out, not failed."""


MAX_LEVELS = 50  # a column with at most this many levels may carry a per-level constant
MIN_LEVEL_ROWS = 5  # a level with fewer rows gets the overall statistic
CONSTANT_FOLDS = 5


class Solver:
    def __init__(
        self,
        ws: Path,
        budget: SolveBudget,
        log=print,
        bar=None,
        parallel_trials: int = 1,
        map_fn=None,
        say=None,
        features: bool = True,
        refit: bool = True,
        cross_validate: bool = True,
        memory_limit: float | None = None,
    ):
        self.ws = Path(ws).resolve()
        self.budget = budget
        self.log = log  # every detail (the log file)
        self.say = say or log  # the few lines a person watching the console wants: one per solution, the verdict
        self.bar = bar  # a rich Progress: one bar for the solutions, one for a network's HEBO trials
        # map_fn(fn, items), e.g. agentk.ray_backend.map_tasks: a network's HEBO trials run through it,
        # parallel_trials at a time, in other processes; None: one after another in this one
        self.parallel_trials = parallel_trials
        self.map_fn = map_fn
        self.task = TaskData(self.ws)
        self.workspace = Workspace(self.ws)
        # generic features (tools/features.py) on the tab inputs before any model reads them; False: the ablation
        self.features = features
        self.feature_record = _add_features(self.task, self.workspace) if features else None
        self.refit = refit  # test predictions from models refitted on every row (AutoGluon, classical, networks)
        # a small table's solutions compared by cross-validation (agentk/solve/cross_validation.py); False: by the
        # validation rows alone, the ablation
        self.cv = cross_validate and cross_validation.applies(self.task)
        self._cv_seconds: dict = {}  # what each solution's cross-validation took, by solution id
        self.memory_limit = memory_limit  # GB: the solve's limit (agentk/solve/memory.py); None: the default
        self.deadline = Deadline(budget.bound)  # the solve's bound on the wall clock
        self.allotted = self.deadline  # the solution under way's own wall time (Deadline.allot)
        self.state: dict = {}  # what solve.json says while the solve runs: the step, the submission in place

    # -- the plan ---------------------------------------------------------------------------------
    def plans(self) -> list[tuple[str, str, dict]]:
        """(id, kind, config) of the solutions to build, in order. The constant comes first: it is the floor the
        chosen submission cannot validate below."""
        plans = [("constant", "constant", {})]
        if TABULAR.name in self.task.modalities:  # AutoGluon fits tables
            plans.append(("autogluon", "autogluon", {}))
        from tools.classical import modules

        for name, module in modules(self.task):  # a strong classical model per modality, and the pair model
            if (why := module.applies(self.task)) is None:
                plans.append((f"classical-{name}", "classical", {"name": name}))
            else:
                self.log(f"classical-{name}: not built ({why})")
        n = 0
        for overrides in self.budget.networks:
            if overrides and all(FIELD_INPUT.get(k) not in (None, *self.task.modalities) for k in overrides):
                continue  # e.g. a trained image backbone on a task without images: the same network again
            n += 1
            plans.append((f"network-{n}", "network", dict(overrides)))
        return plans

    def memory_plan(self):
        """The solve's peak memory, estimated from its inputs (agentk/solve/memory.py), against its limit."""
        from agentk.solve.memory import default_limit_gb, plan_memory

        frames = {m: [self.task.train.inputs[m], self.task.test.inputs[m]] for m in self.task.modalities}
        return plan_memory(
            frames,
            self.budget.image_size,
            self.memory_limit or default_limit_gb(),
            embedded_rows=self._text_embedded_rows(),
        )

    def _text_embedded_rows(self) -> int:
        """The rows the first network's frozen text encoder embeds, as its plan will say (0: no such network)."""
        b = self.budget
        if TEXT.name not in self.task.modalities or b.finetune_text:
            return 0
        fit, val = self.task.split
        learn, stop = self.task.holdout(fit)
        plan = plan_network(
            b,
            fit_rows=len(learn),
            val_rows=len(stop) + len(val),
            test_rows=len(self.task.test),
            modalities=[TEXT.name],
            finetune_image=False,
            finetune_text=False,
            image_size=b.image_size,
            machine=_machine("auto"),
            design=1,  # the search does not change what is embedded
            refit=self.refit,
        )
        return 0 if plan.left_out else (plan.learn_sample or len(learn)) + len(stop) + len(val) + len(self.task.test)

    def _step(self, step: str) -> None:
        """solve.json names the step under way while it runs: what `agentk solve` names if this process dies."""
        self.state.update(step=step)
        write_json(self.workspace.solve_summary, {"status": "running", "budget": self.budget.name, **self.state})

    def publish(self, solutions: list[Solution]) -> Solution:
        """The best solution finished so far (as finish() chooses on the validation rows: never one the constant
        beats) becomes <ws>/submission.csv, replaced whole, and solve.json says which: a solve killed at any moment
        leaves it."""
        best, _, _ = self._choose(solutions)
        if self.state.get("submission") != best.id:
            copy_file(self.workspace.solution(best.id).submission, self.workspace.submission)
            self.state.update(submission=best.id, submission_val_score=best.val_score)
            self.log(f"submission.csv: {best.id}, the best finished so far (validation {best.val_score:.5g})")
            self._step(self.state.get("step", ""))
        return best

    def run(self) -> dict:
        # an earlier "done" no longer describes the workspace: until finish() the solve is unfinished
        before = read_json(self.workspace.solve_summary) or {}
        if before.get("status") not in (None, "done") and before.get("submission"):
            self.say(
                f"resuming an unfinished solve ({before.get('error') or before.get('status')}): submission.csv holds "
                f"{before['submission']}, the best solution it had finished"
            )
        if before.get("submission"):  # still in place until a better one is published
            self.state.update(submission=before["submission"], submission_val_score=before.get("submission_val_score"))
        self._step("start")
        fit, val = self.task.split
        self.say(
            f"{len(fit)} rows to fit, {len(val)} to validate ({self.task.held_out}); metric {self.task.metric_name} "
            f"({'higher' if self.task.higher_is_better else 'lower'} is better); inputs "
            f"{', '.join(self.task.modalities)}; budget {self.budget.name}, ending within {self.budget.bound:.0f} s"
        )
        self.say(self.memory_plan().line())
        if self.feature_record and self.feature_record["added"]:
            added = self.feature_record["added"]
            self.say(
                f"{len(added)} engineered features on the {TABULAR.name} inputs "
                f"({', '.join(list(added)[:4])}{', ...' if len(added) > 4 else ''}); see {self.workspace.features}"
            )
        solutions = []
        plans = self.plans()
        overall = self._bar_task("solutions", len(plans))
        finished = {sid for sid, _, _ in plans if self.workspace.solution(sid).score.exists()}
        loaded = False  # solutions an earlier run finished, not yet weighed for the submission
        for k, (sid, kind, config) in enumerate(plans):
            done = self.load(sid)
            self._step(sid)
            if done is not None:
                self.say(f"{sid}: already done (validation {self.task.metric_name} {done.val_score:.5g})")
            else:
                if loaded:  # all those an earlier run finished, before any new one: its best is among them
                    self.publish(solutions)
                    loaded = False
                build = {"constant": self.constant, "autogluon": self.autogluon, "classical": self.classical}.get(kind)
                later = sum(other not in finished for other, _, _ in plans[k + 1 :])
                self.allotted = self.deadline.until(self.deadline.allot(later))
                self.state.setdefault("allotted", {})[sid] = round(self.allotted.seconds, 1)
                try:
                    if kind != "constant" and self.allotted.seconds < LEAST_S:
                        raise LeftOut(
                            f"the solve's bound of {self.budget.bound:.0f} s leaves it {self.allotted.seconds:.0f} s "
                            "on the wall clock"
                        )
                    done = build(sid, **config) if build else self.network(sid, config)
                except LeftOut as exc:  # a plan past what the budget buys: not an error
                    write_json(self.workspace.solution(sid).skipped, {"left_out": str(exc)})
                    self.say(f"{sid}: left out ({exc})")
                    self._advance(overall)
                    continue
                except Exception as exc:  # noqa: BLE001 - one model that cannot be built leaves the others
                    if kind == "constant":  # the floor of the choice: without it nothing is judged
                        raise
                    traceback.print_exc()  # to the log
                    why = f"{type(exc).__name__}: {str(exc).strip()[:300]}"
                    write_json(self.workspace.solution(sid).skipped, {"failed": why})
                    self.say(f"{sid}: FAILED ({why}); the solve goes on without it (a rerun tries it again)")
                    self._advance(overall)
                    continue
                self.save(done)
                self.say(f"{sid}: validation {self.task.metric_name} {done.val_score:.5g} ({done.seconds:.0f} s)")
            solutions.append(done)
            if sid in finished:
                loaded = True
            else:
                self.publish(solutions)
            self._advance(overall)
        if loaded:
            self.publish(solutions)
        self.allotted = self.deadline
        # a small table: every solution's out-of-fold predictions over all rows; {} when a recipe failed
        self._step("cross-validation" if self.cv else "blend")
        cv = self.cross_validate(solutions) if self.cv and self._cv_fits(solutions) else {}
        self._step("blend")
        if sum(s.kind != "constant" for s in solutions) >= self.budget.blend_after:
            blend = self.load("blend")
            # the constant is among the blend's inputs: on a noisy target the mean of a model and the constant (a
            # shrinkage) beats both (per-type-coupling: MAE 3.888 on the validation rows vs 3.937 and 3.947)
            if blend is None and (blend := self.blend(solutions, cv)) is not None:
                self.save(blend)  # after its out-of-fold predictions: score.json marks it done
            if blend is not None:
                solutions.append(blend)
                self.publish(solutions)
                if cv:
                    cv = self.cross_validate([blend], cv)
        return self.finish(solutions, cv)

    def _bar_task(self, what: str, total: int):
        return self.bar.add_task(what, total=total) if self.bar is not None else None

    def _epoch_bar(self, sid: str, k: int, task):
        """An on_epoch callback moving a trial's epoch bar, with its speed and GPU memory; None without bars."""
        if task is None:
            return None

        def report(r: dict) -> None:
            memory = f", {r['gpu_mem_gb']:.1f} GB GPU" if r["gpu_mem_gb"] is not None else ""
            self.bar.update(
                task,
                total=r["epochs"],
                completed=r["epoch"],
                description=f"{sid} trial {k + 1}: {r['images_per_s']:.0f} samples/s{memory}",
            )

        return report

    def _advance(self, task) -> None:
        if task is not None:
            self.bar.advance(task)

    # -- solutions ------------------------------------------------------------------------------
    def constant(self, sid: str) -> Solution:
        """The best prediction that ignores the inputs, or reads one categorical column: per output the class prior
        or every class alike (a balanced log loss scores that best), or for a regression the mean or the median of the target, or that statistic per level of the tab column of
        few levels that predicts best by cross-validation on the fit rows (e.g. a per-type median). The metric picks
        among them on the validation rows. Statistics come from the fit rows for the validation figure and from
        every row for the test prediction."""
        t0 = time.monotonic()
        fit, val = self.task.split
        every = np.arange(len(self.task.y))
        regression = any(o["kind"] == "regression" for o in self.task.outputs)
        column = self._group_column(fit) if regression else None
        stats = ["mean", "median"] if regression else ["prior", "uniform"]
        stats += ["relative"] if regression and self.task.metric_name in RELATIVE_ERROR else []
        stats += [f"{stat} per {column}" for stat in ("mean", "median")] if column is not None else []
        candidates = {}
        for stat in stats:
            val_pred = self._statistic(stat, fit, val)
            candidates[stat] = (self.task.score(val_pred, val), val_pred)
        stat = next(iter(candidates))
        for other in candidates:
            if self.task.better(candidates[other][0], candidates[stat][0]):
                stat = other
        score, val_pred = candidates[stat]
        if " per " in stat:
            levels = self._levels(column)
            test_pred = self._per_level(every, levels[0], levels[1], stat.split()[0])
            what = f"the target's {stat.split()[0]} per level of {column!r} (the overall one for a rare level)"
        else:
            test_pred = np.tile(self.task.constant_row(every, stat), (len(self.task.test), 1))
            what = {
                "prior": "class priors",
                "uniform": "every class alike",
                "relative": "the relative error's best constant",
            }.get(stat, f"the target's {stat}")
        return Solution(
            sid,
            "constant",
            f"constant prediction: {what} (model space) for every row; the floor every other solution must beat",
            float(score),
            val_pred,
            test_pred,
            time.monotonic() - t0,
            {"statistic": stat, "candidates": {k: v[0] for k, v in candidates.items()}},
        )

    def _levels(self, column: str) -> tuple[np.ndarray, np.ndarray]:
        """The column's values as strings, for the train rows and the test rows."""
        tab = (self.task.train.inputs[TABULAR.name], self.task.test.inputs[TABULAR.name])
        return tuple(frame[column].astype(str).to_numpy() for frame in tab)

    def _per_level(self, rows: np.ndarray, row_levels: np.ndarray, levels: np.ndarray, stat: str) -> np.ndarray:
        """Model-space rows for `levels`: TaskData.constant_row over the `rows` of the same level (row_levels: theirs), the
        one over all `rows` for a level with fewer than MIN_LEVEL_ROWS of them."""
        overall = self.task.constant_row(rows, stat)
        pred = np.tile(overall, (len(levels), 1))
        for level in np.unique(levels):
            mine = rows[row_levels == level]
            if len(mine) >= MIN_LEVEL_ROWS:
                row = self.task.constant_row(mine, stat)
                pred[levels == level] = np.where(np.isfinite(row), row, overall)  # an output this level lacks
        return pred

    def _group_column(self, fit: np.ndarray) -> str | None:
        """The tab column of 2 to MAX_LEVELS levels (an engineered one excluded) whose per-level median or mean
        scores best by K-fold cross-validation on the fit rows, if that beats the overall statistics; None without
        one. The validation rows play no part, so they can still judge the choice. The folds hold rows out as the
        validation split does (whole groups, spans of time): a level shared by a group's rows would else be learnt
        from the held rows' own group."""
        if TABULAR.name not in self.task.modalities or len(fit) < 2 * CONSTANT_FOLDS:
            return None
        tab = self.task.train.inputs[TABULAR.name]
        engineered = set((self.feature_record or {}).get("added", {}))
        columns = [c for c in tab.columns if c not in engineered and 2 <= tab[c].nunique() <= MAX_LEVELS]
        position = np.empty(len(self.task.y), dtype=int)
        position[fit] = np.arange(len(fit))  # a train row's place among the fit rows
        folds = [(position[a], position[b]) for a, b in self.task.folds(CONSTANT_FOLDS, fit)]

        def cv(levels: np.ndarray | None, stat: str) -> float:
            pred = np.zeros((len(fit), sum(self.task.widths)))
            for inner, outer in folds:
                if levels is None:
                    pred[outer] = self.task.constant_row(fit[inner], stat)
                else:
                    pred[outer] = self._per_level(fit[inner], levels[fit[inner]], levels[fit[outer]], stat)
            return self.task.score(pred, fit)

        best, best_score = None, cv(None, "mean")
        for c, levels in [(None, None)] + [(c, tab[c].astype(str).to_numpy()) for c in columns]:
            for stat in ("mean", "median"):
                score = cv(levels, stat)
                if self.task.better(score, best_score):
                    best, best_score = c, score
        return best

    def autogluon(self, sid: str) -> Solution:
        from tools.autogluon_tool import fit_autogluon

        most = self.budget.autogluon_most
        grows = f", growing with the rows to {most:.0f} s" if most else ", growing with the rows"
        self.log(
            f"{sid}: AutoGluon ({self.budget.autogluon_presets}, {self.budget.autogluon_time:.0f} s of modelled "
            f"work{grows}) optimising {self.task.metric_name}"
        )
        t0 = time.monotonic()
        out = fit_autogluon(
            self.task,
            seconds=self.budget.autogluon_time,
            presets=self.budget.autogluon_presets,
            out_dir=self.workspace.solution(sid).models,
            refit=self.refit,
            most=self.budget.autogluon_most,
            wall=self.allotted.left(),
        )
        for m in out["models"]:
            self.log(f"  {m['output']}: {m['plan']}; wall time limit {m['time_limit']:.0f} s")
            if m["refit_rejected"]:
                self.say(f"{sid}: {m['output']}: {m['refit_rejected']}")
        fit, val = self.task.split
        # a table too large for AutoGluon's budget: it fits on a sample (tools/autogluon_tool.tuning_rows)
        sampled = next((m for m in out["models"] if m["tuned_on_rows"] < m["fit_rows"]), None)
        tuned_on = (
            f"a sample of {sampled['tuned_on_rows']} of the {len(fit)} fit rows (what its planned work can take)"
            if sampled
            else f"the {len(fit)} fit rows"
        )
        if sampled:
            self.log(f"  tuned on {tuned_on}")
        every = f"{sampled['refit_on_rows']} rows (the same share of every row)" if sampled else "all rows"
        refitted = (
            f"; then its best model ({', '.join(m['selected'] for m in out['models'])}) refitted on {every} "
            "for the test predictions"
            if self.refit and all(m["refit_on_rows"] for m in out["models"])
            else "; the test predictions from the same model (no refit"
            + ("; the wall time allotted ran short)" if self.refit else ")")
        )
        return Solution(
            sid,
            "autogluon",
            f"AutoGluon TabularPredictor ({self.budget.autogluon_presets}) on the {TABULAR.name} inputs"
            f"{self._features_note()}, one predictor per output, optimising the competition's metric; tuned on its "
            f"own holdout of {tuned_on}, scored on the {len(val)} validation rows it never saw"
            f"{refitted}",
            out["val_score"],
            out["val_pred"],
            out["test_pred"],
            time.monotonic() - t0,
            {
                "models": out.get("models"),
                "refit": self.refit,
                "features": self.feature_record,
                "modelled_seconds": round(out["modelled_seconds"], 1),
            },
            out["validated_test_pred"] if self.refit else None,
        )

    def classical(self, sid: str, name: str) -> Solution:
        """A classical candidate (tools/classical.py): its features into a few scikit-learn models, one chosen by
        cross-validation on the fit rows, refitted on every row for the test predictions."""
        from tools.classical import candidate, fit_candidate

        t0 = time.monotonic()
        module = candidate(name)
        self.log(f"{sid}: building features")
        feats = module.features(self.task, log=self.log)
        res = fit_candidate(self.task, feats, refit=self.refit, log=self.log, deadline=self.allotted)
        return Solution(
            sid,
            "classical",
            res.plan,
            res.val_score,
            res.val_pred,
            res.test_pred,
            time.monotonic() - t0,
            res.details,
            res.validated_test_pred,
        )

    def _features_note(self) -> str:
        if not self.feature_record:
            return " (no engineered features)" if not self.features else ""
        added = self.feature_record["added"]
        return f" plus {len(added)} engineered features (see {self.workspace.features.name})" if added else ""

    def network(self, sid: str, overrides: dict) -> Solution:
        """A late-fusion network, its training tuned by HEBO (lr, optimizer); the default configuration is the
        first trial, and the trial with the lowest loss is kept. Each trial learns on the fit rows less its stop
        rows (task.holdout), early-stops on the stop rows' score, and the loss HEBO minimises is that score
        (negated when higher is better): the training loss (BCE/CE/MSE) at the epoch early stopping keeps can
        disagree with the metric (an over-confident net with AUC 0.98 has a worse BCE than a flat one with AUC
        0.67), and the metric is what is scored. The validation rows chose nothing here, so the solution's
        validation score is as honest as every other solution's (tuned on them, wine's network validated at a
        log loss of 8e-06 and tested at 0.165, and won the selection).

        Its work (trials, epochs, rows per epoch) is planned from the data and the machine before it trains
        (agentk/solve/budgets.py: plan_network), so a busy machine runs the same epochs, only slower. With refit,
        the best trial's configuration is retrained on every row for its best epoch count and predicts the test
        rows; the validation predictions and score stay the trial's, on rows it never trained on."""
        from tools.hebo_tuner import design, tune

        b = self.budget
        base = replace(
            FusionConfig(),
            **{
                "max_epochs": b.max_epochs,
                "batch_size": b.batch_size,
                "image_size": b.image_size,
                "finetune_text": b.finetune_text,
                "finetune_image": b.finetune_image,
                **overrides,
            },
        )
        fit, val = self.task.split
        learn, stop = self.task.holdout(fit)  # a trial learns from these and early-stops on those
        tiny, side = False, base.image_size
        if IMAGE.name in self.task.modalities:  # the tiny CNN, when no weights exist, trains at its own side
            from tools.modality_img import image_encoder

            paths = self.task.train.inputs[IMAGE.name].iloc[:, 0].tolist()
            tiny, side = image_encoder(base.image_backbone, base.pretrained, paths, self.ws, side)
        planned = partial(
            plan_network,
            fit_rows=len(learn),
            val_rows=len(stop) + len(val),
            test_rows=len(self.task.test),
            modalities=self.task.modalities,
            finetune_image=base.finetune_image,
            finetune_text=base.finetune_text,
            image_size=side,
            machine=_machine(base.device),
            design=design(),
            refit=self.refit,
            stop_rows=min(len(stop), STOP_ROWS),  # those it scores after every epoch (watched_rows)
            tiny_image=tiny,
        )
        plan, allotted = planned(b), self.allotted.seconds
        if plan.left_out is None and plan.seconds > allotted / MARGIN:  # the wall time left buys less work
            work = max(1.0, allotted / MARGIN - plan.embed_seconds)
            grown = min(b.grown_network_seconds, work) if b.grown_network_seconds else None
            plan = planned(replace(b, network_seconds=min(b.network_seconds, work), grown_network_seconds=grown))
            self.say(f"{sid}: its work cut to fit the {allotted:.0f} s the solve's bound leaves it")
        if plan.left_out is not None:
            raise LeftOut(plan.left_out)
        if plan.seconds > allotted:
            raise LeftOut(
                f"its least work is modelled at {plan.seconds:.0f} s, past the {allotted:.0f} s the solve's bound "
                "leaves it"
            )
        base = replace(
            base,
            max_epochs=plan.epochs,
            patience=plan.patience,
            epoch_rows=plan.epoch_rows,
            stop_rows=plan.watched_rows or STOP_ROWS,
            learn_sample=plan.learn_sample,
            max_time=min(plan.safety_cap, allotted),
        )
        self.say(f"{sid}: {plan.line()}")
        files = self.workspace.solution(sid)
        files.folder.mkdir(parents=True, exist_ok=True)
        history = trial_history(files.trials)
        t0 = time.monotonic()
        trials_bar = self._bar_task(f"{sid}: HEBO trials", plan.trials)

        def affordable() -> int:
            # from the epochs the recorded trials ran; one the safety cap stopped (a clock) or that failed counts at
            # its most, so that a busy machine runs no more trials than an idle one
            records = read_jsonl(files.trials)
            ran = [plan.epochs if r.get("capped") or not r["ok"] else r["epochs"] for r in records]
            n = plan.affordable(ran)
            if records and self.allotted.left() < max(r.get("seconds", 0.0) for r in records):
                n = len(records)  # another trial, as long as the longest yet, would pass the wall time allotted
            if trials_bar is not None:
                self.bar.update(trials_bar, total=n)
            return n

        default = {"lr": base.lr, "optimizer": base.optimizer}
        observed = [
            {
                "params": h["params"],
                "loss": h["loss"] if h["ok"] else float("nan"),
                "ok": h["ok"],
                "seconds": h.get("seconds", 0.0),
            }
            for h in history
        ]
        if self.map_fn is None:
            tuned = tune(
                self._local_trials(sid, base, files, len(history), trials_bar),
                n_trials=affordable,
                seed=base.seed,
                initial=[default],
                history=observed,
            )
        else:
            _ = self.task.split  # saved to the workspace before the workers read it
            tuned = tune(
                partial(_trial_in_worker, str(self.ws), sid, asdict(base), self.features),
                n_trials=affordable,
                seed=base.seed,
                initial=[default],
                history=observed,
                parallel=self.parallel_trials,
                map_fn=self._mapped_trials(sid, files, trials_bar),
                indexed=True,
            )
        records = read_jsonl(files.trials)
        best = min((r for r in records if r["ok"]), key=lambda r: r["loss"])
        preds = np.load(files.trial(best["trial"]))
        config = replace(base, lr=float(best["params"]["lr"]), optimizer=str(best["params"]["optimizer"]))
        sources = [t.get("source") for t in tuned.trials]
        search = {kind: sources.count(kind) for kind in ("initial", "random", "model")}
        test_pred, refit, refit_note = preds["test_pred"], None, "; test predictions from the best trial (no refit)"
        # a refit trains on every row for the best trial's epochs: about as long as that trial, and more rows
        if self.refit and not files.refit.exists() and self.allotted.left() < best.get("seconds", 0.0) * 1.5:
            refit_note = "; test predictions from the best trial (no refit: the wall time allotted ran short)"
        elif self.refit:
            refit = self._refit_network(
                sid, replace(config, max_time=max(LEAST_S, self.allotted.left())), int(best["best_epoch"]), files
            )
            test_pred = refit.pop("test_pred")
            refit_note = (
                f"; its configuration refitted on all {refit['rows']} rows for {refit['epochs']} epochs (the best "
                f"trial's best epoch) for the test predictions"
            )
        capped = [r["trial"] + 1 for r in records if r.get("capped")]
        if capped or (refit and refit["capped"]):
            self.say(
                f"{sid}: WARNING: the safety cap ({plan.safety_cap:.0f} s per training run) or the wall time "
                f"allotted ({allotted:.0f} s) stopped "
                + ", ".join([f"trial {k}" for k in capped] + (["the refit"] if refit and refit["capped"] else []))
                + " before the planned epochs: this machine ran far slower than planned; the result depends on it"
            )
        modal = "+".join(self.task.modalities)
        method = "HEBO" if search["model"] else "random search" if len(records) > 1 else "no search"
        return Solution(
            sid,
            "network",
            f"late-fusion network over {modal}{self._features_note()} ({_describe(config, self.task.modalities)}); "
            f"{method} over lr and optimizer, {len(records)} trials ({search['model']} suggested by HEBO's model), "
            f"up to {plan.epochs} epochs each{f', learning from {plan.sampled}' if plan.sampled else ''}, "
            f"early-stopped and chosen by {self.task.metric_name} on a holdout of the "
            f"fit rows, scored on the validation rows{refit_note}",
            float(best["val_score"]),
            preds["val_pred"],
            test_pred,
            time.monotonic() - t0,
            {
                "config": asdict(config),
                "modelled_seconds": round(plan.seconds, 1),
                "work": {**asdict(plan), "search": plan.search, "estimated_seconds": round(plan.seconds, 1)},
                "search": {"method": method, **search},
                "refit": refit,
                "capped_trials": capped,
                "best_trial": best,
                "tuner_best": tuned.best,
                "notes": best.get("notes", []),
            },
            preds["test_pred"] if refit is not None else None,
        )

    def _refit_network(self, sid: str, config, epochs: int, files: SolutionFiles) -> dict:
        """The best trial's configuration trained on every row for `epochs` epochs; its record with the test
        predictions (kept in the solution's refit file, so a resumed solve does not train it again)."""
        from tools.fusion import refit_fusion

        done = np.load(files.refit) if files.refit.exists() else None
        if done is None:
            self.log(f"{sid}: refit on every row for {epochs} epochs (lr {config.lr:.2g}, {config.optimizer})")
            res = refit_fusion(self.task, config, epochs, log=lambda m: self.log(f"  {m}"))
            done = {
                "test_pred": res.test_pred,
                "rows": res.rows,
                "epochs": res.epochs,
                "samples": res.samples,
                "seconds": res.seconds,
                "capped": res.capped,
            }
            np.savez(files.refit, **done)
        record = {k: done[k] for k in ("test_pred", "rows", "epochs", "samples", "seconds", "capped")}
        return {k: v if k == "test_pred" else np.asarray(v).item() for k, v in record.items()}

    def _local_trials(self, sid: str, base, files: SolutionFiles, done: int, trials_bar):
        """The objective of the trials run here: trial k (numbered in call order after the `done` ones) appends
        its record to the trials file as soon as it ends, failures included."""
        runs: list[int] = []

        def objective(params: dict) -> float:
            k = done + len(runs)
            runs.append(k)
            self._log_start(sid, k, params)
            t_trial = time.monotonic()
            epochs = self._bar_task(f"{sid} trial {k + 1}: epochs", 0)
            # a training run stops at its safety cap or at the wall time allotted, whichever comes first
            capped = replace(base, max_time=min(base.max_time, max(LEAST_S, self.allotted.left())))
            try:
                record = _train_trial(self.task, capped, params, files, k, self.log, self._epoch_bar(sid, k, epochs))
            except Exception as exc:  # a diverging or crashing trial is HEBO's observation, not the end of the solve
                self._trial_done(
                    sid,
                    files,
                    _failed_record(params, k, f"{type(exc).__name__}: {exc}", time.monotonic() - t_trial),
                    trials_bar,
                )
                raise
            finally:
                if epochs is not None:
                    self.bar.remove_task(epochs)
            self._trial_done(sid, files, record, trials_bar)
            return float(record["loss"])

        return objective

    def _mapped_trials(self, sid: str, files: SolutionFiles, trials_bar):
        """tune's map_fn for trials run elsewhere: this process stays the only writer of the trials file, appending
        a batch's records in trial order once self.map_fn returns them."""

        def run_batch(run_one, items):
            for k, params in items:
                self._log_start(sid, k, params)
            trials = self.map_fn(run_one, items)
            for (k, params), trial in zip(items, trials, strict=True):
                record = trial.get("info") or _failed_record(params, k, trial["error"], trial["seconds"])
                self._trial_done(sid, files, record, trials_bar)
            return trials

        return run_batch

    def _log_start(self, sid: str, k: int, params: dict) -> None:
        self.log(f"{sid} trial {k + 1}: lr {float(params['lr']):.2g}, {params['optimizer']}")

    def _trial_done(self, sid: str, files: SolutionFiles, record: dict, trials_bar) -> None:
        append_jsonl(files.trials, record)
        k = record["trial"]
        if "error" in record:
            self.log(f"{sid} trial {k + 1} failed: {record['error']}")
            return
        self._advance(trials_bar)
        self.log(
            f"{sid} trial {k + 1}: stop rows {self.task.metric_name} {record['stop_score']:.5g} (loss "
            f"{record['stop_loss']:.4g}) at the best epoch, {record['best_epoch']}; validation "
            f"{self.task.metric_name} {record['val_score']:.5g}; {record['epochs']} epochs run, "
            f"{record['seconds']:.0f} s"
        )

    def blend(self, solutions: list[Solution], cv: dict[str, np.ndarray] | None = None) -> Solution | None:
        """A mean of the best solutions or an MLP over their predictions (tools/blender.py), learnt from and judged
        on the validation rows, or with `cv` (a small table's out-of-fold predictions) on every train row."""
        from tools.blender import blend

        val = self.task.split[1]
        rows = np.arange(len(self.task.y)) if cv else val
        t0 = time.monotonic()
        res = blend(
            [cv[s.id] for s in solutions] if cv else [s.val_pred for s in solutions],
            self.task.y[rows],
            self.task.outputs,
            self.task.score,
            self.task.higher_is_better,
            rows,
            [s.blend_test_pred for s in solutions],
            final_test_preds=[s.test_pred for s in solutions],
            # a forecast: the MLP would learn its weights from models that did not see the latest span of time and
            # predict the test from them, two spans ahead, where a mean averages refits that saw it, as does the best
            # single solution (test RMSPE 0.101 against the mean's 0.084 on store sales; SMAPE 14.7 against the
            # best single's 14.2 on daily item sales)
            mlp=self.task.times is None,
            groups=self.task.row_groups(rows),
        )
        # both figures are scored on the same rows: a mean's as it predicted them (it learns nothing), the MLP's
        # out of fold (it is trained on those rows), the single solution's as it predicted them
        verdict = f"kept: the {res.how}" if res.kept else "not kept"
        ids = [s.id for s in solutions]
        verdict_record = {
            "how": res.how if res.kept else None,
            "members": [ids[i] for i in res.members] if res.members else None,
            "cv_score": res.cv_score,  # the best blend's on the validation rows (the MLP's out of fold)
            "best_single": res.best_single_score,  # on the same rows
            "best_single_id": ids[res.best_single_index],
        }
        self.say(
            f"blend of {len(solutions)} solutions (a mean of the best"
            + (", or an MLP" if self.task.times is None else "; no MLP, as the test follows the train in time")
            + f"; kept when better overall and on "
            f"{WIN_SHARE * 100:g} % of {self._resamples}): {verdict}: {self.task.metric_name} {res.cv_score:.5g} (a mean as predicted, the "
            f"MLP's out-of-fold) vs {res.best_single_score:.5g} for {ids[res.best_single_index]} on the same "
            + (f"out-of-fold predictions of all {len(rows)} train rows" if cv else "validation rows")
        )
        if not res.kept:
            write_json(self.workspace.solution("blend").skipped, {**verdict_record, "inputs": ids})
            return None
        learnt = "out-of-fold predictions of every train row" if cv else "validation predictions"
        plan = (
            f"mean of the model-space predictions of {verdict_record['members']} (the best by "
            f"{'cross-validation' if cv else 'validation'}), their own test predictions averaged; its score on the "
            f"{'out-of-fold predictions' if cv else 'validation rows'} (it learns nothing from them)"
            if res.members
            else f"MLP blender over the {learnt} of {ids}; score from cross-validation on those rows; applied to the "
            "test predictions of those models as validated (fitted on the fit rows), not of their refits"
        )
        if cv:  # its own out-of-fold predictions of every row, kept before the solution is saved as done
            folded = cross_validation.Folded(res.val_pred, time.monotonic() - t0)
            cross_validation.keep(self.workspace.solution("blend").cross_validated, folded)
        val_pred = res.val_pred[val] if cv else res.val_pred
        return Solution(
            "blend",
            "blend",
            plan,
            self.task.score(val_pred, val) if cv else float(res.cv_score),
            val_pred,
            res.test_pred,
            time.monotonic() - t0,
            {**verdict_record, "inputs": [s.id for s in solutions]},
        )

    # -- files ----------------------------------------------------------------------------------
    def save(self, s: Solution) -> None:
        files = self.workspace.solution(s.id)
        files.folder.mkdir(parents=True, exist_ok=True)
        np.save(files.val_pred, s.val_pred)
        np.save(files.test_pred, s.test_pred)
        if s.validated_test_pred is not None:
            np.save(files.validated_test_pred, s.validated_test_pred)
        # decoding constants (a multi-label threshold) for this solution's submission only: every validation
        # score is taken at the defaults
        decoding = self.task.tune_decoding(s.val_pred, self.task.split[1])
        formatter, sub = format_with_fallback(
            self.ws, self.task.test.ids, self.task.transform.inverse_transform(s.test_pred)
        )
        self.task.reset_decoding()
        sub.to_csv(files.submission, index=False)
        write_json(files.plan, {"id": s.id, "kind": s.kind, "plan": s.plan, **_jsonable(s.details)})
        write_json(
            files.score,
            {
                "val_score": s.val_score,
                "metric": self.task.metric_name,
                "higher_is_better": self.task.higher_is_better,
                "seconds": s.seconds,
                "formatter": formatter,
                "decoding": decoding,
                "kind": s.kind,
            },
        )  # last: marks the solution done

    def load(self, sid: str) -> Solution | None:
        files = self.workspace.solution(sid)
        score = read_json(files.score)
        if score is None:
            return None
        plan = read_json(files.plan)
        return Solution(
            sid,
            score["kind"],
            plan["plan"],
            score["val_score"],
            np.load(files.val_pred),
            np.load(files.test_pred),
            score["seconds"],
            validated_test_pred=np.load(files.validated_test_pred) if files.validated_test_pred.exists() else None,
        )

    def finish(self, solutions: list[Solution], cv: dict[str, np.ndarray] | None = None) -> dict:
        """The best solution (_choose) becomes the submission, and solve.json says "done"."""
        best, scores, judged = self._choose(solutions, cv, say=True)
        copy_file(self.workspace.solution(best.id).submission, self.workspace.submission)
        summary = {
            "status": "done",
            "budget": self.budget.name,
            "metric": self.task.metric_name,
            "higher_is_better": self.task.higher_is_better,
            "best": best.id,
            "submission": best.id,
            "selected_by": "cross-validation" if cv else "validation",
            "bound_seconds": self.budget.bound,
            "seconds": round(self.deadline.elapsed(), 1),
            "solutions": [
                {
                    "id": s.id,
                    "kind": s.kind,
                    "val_score": s.val_score,
                    **(
                        {"cv_score": scores.get(s.id), "cv_seconds": round(self._cv_seconds.get(s.id, 0.0), 1)}
                        if cv
                        else {}
                    ),
                    "seconds": round(s.seconds, 1),
                    "allotted_seconds": self.state.get("allotted", {}).get(s.id),
                    "modelled_seconds": s.details.get("modelled_seconds"),
                    "plan": s.plan,
                }
                for s in solutions
            ],
        }
        write_json(self.workspace.solve_summary, summary)
        self.say(
            f"best: {best.id} ({self.task.metric_name} {scores[best.id]:.5g} on {judged}) -> {self.workspace.submission}"
        )
        return summary

    def _choose(
        self, solutions: list[Solution], cv: dict[str, np.ndarray] | None = None, say: bool = False
    ) -> tuple[Solution, dict[str, float], str]:
        """(the best solution, the scores that judged it, on what) by validation score, or with `cv` (a small table's
        out-of-fold predictions over every train row: agentk/solve/cross_validation.py) by its cross-validated score
        among those it holds; the constant instead when the best does not beat it on most bootstrap resamples of the
        rows that judge them."""
        if cv:
            rows = np.arange(len(self.task.y))
            preds = cv
            scores = {sid: self.task.score(pred, rows) for sid, pred in cv.items()}
            judged = f"{cross_validation.FOLDS}-fold cross-validation over the {len(rows)} train rows"
        else:
            rows = self.task.split[1]
            preds = {s.id: s.val_pred for s in solutions}
            scores = {s.id: s.val_score for s in solutions}
            judged = f"the {len(rows)} validation rows"
        pool = [s for s in solutions if s.id in scores]
        best = pool[0]
        for s in pool[1:]:
            if self.task.better(scores[s.id], scores[best.id]):
                best = s
        constant = next((s for s in pool if s.kind == "constant"), None)
        if (
            constant is not None
            and best is not constant
            and self._beats(preds[best.id], preds[constant.id], rows) is False
        ):
            # a noisy target (a popularity score): a gain over the constant that a few rows carry is as likely a loss
            # on the test rows
            (self.say if say else self.log)(
                f"{best.id} scores better than the constant ({self.task.metric_name} {scores[best.id]:.5g} vs "
                f"{scores[constant.id]:.5g}) on {judged} but not on {WIN_SHARE * 100:g} % of {self._resamples} of "
                "those rows: the constant is submitted"
            )
            best = constant
        return best, scores, judged

    def _cv_fits(self, solutions: list[Solution]) -> bool:
        """Whether cross-validation fits in the wall time left: it rebuilds each solution's recipe on every fold,
        about as long as the solution took (AutoGluon with a fold's share of its work)."""
        needed = sum(s.seconds for s in solutions if not self.workspace.solution(s.id).cross_validated.exists())
        if needed <= self.deadline.allot(0):
            return True
        self.say(
            f"no cross-validation: rebuilding the solutions on {cross_validation.FOLDS} folds would take about "
            f"{needed:.0f} s, and {self.deadline.allot(0):.0f} s are left of the bound; the validation rows decide"
        )
        return False

    def cross_validate(self, solutions: list[Solution], done: dict | None = None) -> dict[str, np.ndarray]:
        """{id: out-of-fold predictions over every train row} of the solutions with a recipe (an MLP blend learnt
        from the validation rows has none), added to `done` (those of earlier solutions); empty when a recipe fails,
        and then the validation rows decide."""
        folds = cross_validation.FOLDS
        cv = cross_validation.CrossValidation(self.task, self.budget, self._statistic, self.log)
        if done is None:
            self.say(
                f"{len(self.task.y)} train rows (at most {cross_validation.CV_ROWS}): the solutions are compared by "
                f"{folds}-fold cross-validation over every row, each rebuilt on each fold as it was built (its "
                f"model, configuration and epochs fixed; AutoGluon with a {folds}th of its work, among the models it "
                "fitted)"
            )
        bar = self._bar_task("cross-validation", folds * len(solutions))
        done = dict(done or {})
        for s in solutions:
            try:
                folded = cv.predictions(s.id, s.kind, done, advance=lambda: self._advance(bar))
            except Exception as exc:  # noqa: BLE001 - one recipe that fails on a fold leaves no common ground
                self.say(
                    f"{s.id}: its cross-validation failed ({type(exc).__name__}: {str(exc)[:200]}); the solutions "
                    "are compared on the validation rows"
                )
                return {}
            if folded is None:
                self.log(f"{s.id}: not cross-validated (it learns from the validation rows): not a candidate")
                continue
            done[s.id] = folded.pred
            self._cv_seconds[s.id] = folded.seconds
            score = self.task.score(folded.pred, np.arange(len(self.task.y)))
            self.log(
                f"{s.id}: {folds}-fold {self.task.metric_name} {score:.5g} (validation {s.val_score:.5g}; "
                f"{folded.seconds:.0f} s)"
            )
        return done

    def _statistic(self, stat: str, train: np.ndarray, held: np.ndarray) -> np.ndarray:
        """A constant's statistic ("prior", "mean", "median per <column>"...) of the train rows, for the held train
        rows: the constant's validation candidates, and its recipe on each fold of a cross-validation."""
        if " per " in stat:
            levels = self._levels(stat.split(" per ", 1)[1])[0]
            return self._per_level(train, levels[train], levels[held], stat.split()[0])
        return np.tile(self.task.constant_row(train, stat), (len(held), 1))

    @property
    def _resamples(self) -> str:
        """What a bootstrap resample draws, in words: whole groups when the rows come in groups."""
        return (
            f"bootstrap resamples of whole {self.task.groups[0]!r} groups"
            if self.task.groups
            else "bootstrap resamples"
        )

    def _beats(self, ours: np.ndarray, theirs: np.ndarray, rows: np.ndarray) -> bool | None:
        """Do the predictions `ours` (for the train rows `rows`) score better than `theirs` on most bootstrap
        resamples of those rows? None when the metric can score no resample (then no resample says the gain is
        noise)."""
        return wins_on_resamples(
            lambda idx: self.task.score(ours[idx], rows[idx]),
            lambda idx: self.task.score(theirs[idx], rows[idx]),
            len(rows),
            self.task.higher_is_better,
            self.task.row_groups(rows),
        )


def _train_trial(
    task: TaskData, base, params: dict, files: SolutionFiles, k: int, log, on_epoch: Callable | None = None
) -> dict:
    """Trains HEBO trial k (base with the trial's lr and optimizer) of a solution, saves its predictions in the
    solution's trial k file and returns its record for the trials file; raises when training fails. The loss
    HEBO minimises is the competition's metric on the network's stop rows (a holdout of the fit rows it
    early-stops on), negated when higher is better; the validation rows stay for choosing among solutions. Every
    epoch's report goes to the log, and to on_epoch (the console's bar) when given."""
    from tools.fusion import epoch_line, train_fusion

    def epoch_done(report: dict) -> None:
        log(f"  {epoch_line(report, task.metric_name)}")
        if on_epoch is not None:
            on_epoch(report)

    config = replace(base, lr=float(params["lr"]), optimizer=str(params["optimizer"]))
    result = train_fusion(task, config, log=lambda m: log(f"  {m}"), on_epoch=epoch_done)
    np.savez(files.trial(k), val_pred=result.val_pred, test_pred=result.test_pred)
    loss = -result.stop_score if task.higher_is_better else result.stop_score
    return {
        "params": params,
        "trial": k,
        "ok": bool(np.isfinite(loss)),
        "loss": float(loss),
        "stop_score": float(result.stop_score),  # on the stop rows, which early stopping and HEBO look at
        "stop_loss": float(result.stop_loss),  # the training objective on the stop rows, at the best epoch
        "val_score": float(result.val_score),  # on the validation rows, which nothing here looked at
        "epochs": result.epochs_run,
        "planned_epochs": config.max_epochs,
        "best_epoch": result.best_epoch,
        "capped": result.capped,  # the safety cap stopped it before its planned epochs
        "seconds": result.seconds,
        "notes": list(result.notes),
        "history": _jsonable(result.history),  # per epoch: the learning curve the report draws
    }


def _trial_in_worker(ws: str, sid: str, base: dict, features: bool, params: dict, k: int) -> dict:
    """A HEBO trial in another process (a Ray task): the task is rebuilt from the workspace, which the nodes share;
    the record goes back to the solver, which writes the trials file. cwd is the workspace, as for `agentk solve`,
    because the setup's generated code may rely on it."""

    with contextlib.chdir(ws):
        task = TaskData(Path(ws))
        if features:
            from tools.features import apply_features

            apply_features(task)
        return _train_trial(
            task,
            FusionConfig(**base),
            params,
            Workspace(ws).solution(sid),
            k,
            log=lambda m: print(f"{sid} trial {k + 1}: {m.strip()}", flush=True),
        )


@cache
def _machine(device: str) -> Machine:
    """The machine a network's work is planned for: the CPU cores this process may use that other processes leave
    free (measured once: a busy machine trains slower, and the plan says so), and whether it trains on CUDA (device
    as FusionConfig names it)."""
    from tools.fusion import resolve_device
    from tools.machine import idle_cores

    return Machine(cores=idle_cores(), cuda=resolve_device(device).type == "cuda")


def _add_features(task: TaskData, workspace: Workspace) -> dict:
    """Applies tools/features.py to the task's tab inputs and records what it added in the workspace."""
    from tools.features import apply_features

    record = apply_features(task)
    # the columns the setup's maps joined in (the data graph), each with where it came from
    columns = task.train.inputs[TABULAR.name].columns if TABULAR.name in task.modalities else []
    record["joined"] = {c: j["how"] for j in _joins_of(workspace) for c in j["columns"] if c in columns}
    workspace.solutions.mkdir(parents=True, exist_ok=True)
    write_json(workspace.features, record)
    return record


def _joins_of(workspace: Workspace) -> list[dict]:
    """joins.json's joins (agentk.competition.joins.Join.record), a nested join's after its own; [] when none."""
    from agentk.competition.joins import recorded

    flat, todo = [], recorded(workspace.root)
    while todo:
        j = todo.pop(0)
        flat.append(j)
        todo += j["via"]
    return flat


def _failed_record(params: dict, k: int, error: str, seconds: float) -> dict:
    return {"params": params, "trial": k, "ok": False, "loss": None, "error": error[:300], "seconds": seconds}


def trial_history(path: Path) -> list[dict]:
    """The trials a killed solve recorded. A torn last line (killed mid-write) is dropped from the file too, so
    that the resumed solve's records start on a line of their own."""
    history = read_jsonl(path)
    if path.exists():
        write_text(path, "".join(json.dumps(r) + "\n" for r in history))
    return history


def _describe(config, modalities: list[str]) -> str:
    parts = []
    if IMAGE.name in modalities:
        parts.append(
            f"{config.image_backbone} at {config.image_size}px, {'fine-tuned' if config.finetune_image else 'frozen'}"
        )
    if TEXT.name in modalities:
        parts.append(f"MiniLM text encoder, {'fine-tuned' if config.finetune_text else 'frozen'}")
    if TABULAR.name in modalities:
        parts.append("tabular MLP")
    return "; ".join(parts)


def _jsonable(obj):
    return json.loads(json.dumps(obj, default=lambda o: o.item() if hasattr(o, "item") else str(o)))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description="Build, tune and blend solutions in a finished setup (run by `agentk solve`)."
    )
    p.add_argument("workspace", type=Path)
    p.add_argument("--budget", choices=sorted(PRESETS), default="quick")
    p.add_argument(
        "--ray",
        metavar="ADDRESS",
        default=None,
        help="run the HEBO trials as Ray tasks: local (a Ray on this machine), auto or ray://host:port "
        "(a running cluster whose nodes share the workspace's filesystem) [default: $AGENTK_RAY_ADDRESS, "
        "else no Ray]",
    )
    p.add_argument(
        "--parallel-trials",
        type=int,
        default=None,
        metavar="K",
        help="with Ray, a network's HEBO trials run K at a time [default: the cluster's GPUs, else 2]",
    )
    p.add_argument(
        "--weights",
        type=Path,
        metavar="DIR",
        help="a folder of pretrained image backbone weights (tools/modality_img.py:weights_file says which names), "
        "looked in before the local caches",
    )
    p.add_argument(
        "--memory-limit",
        type=float,
        metavar="GB",
        help="the memory limit the solve runs under (agentk solve sets it), for the estimate it states",
    )
    p.add_argument(
        "--bound",
        type=float,
        metavar="SECONDS",
        help="the wall seconds the solve ends within [default: the budget's, quick 900]",
    )
    p.add_argument("--verbose", action="store_true", help="show everything the log gets as it comes")
    p.add_argument("--no-features", action="store_true", help="ablation: no engineered features on the tab inputs")
    p.add_argument(
        "--no-refit",
        action="store_true",
        help="ablation: test predictions from the models as validated (fitted on the fit rows alone): no refit on "
        "every row of AutoGluon's best model, the classical candidates or the networks' best trials",
    )
    p.add_argument(
        "--no-cv",
        action="store_true",
        help="ablation: a small table's solutions compared on the validation rows alone, not by cross-validation",
    )
    args = p.parse_args(argv)
    # before torch loads OpenMP: its threads sleep rather than spin while they wait, which on a busy machine made a
    # trained CNN 2-3 samples/s instead of 16-19 on two threads (measured at load 13 on two cores)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    if args.weights:  # the image modality reads it, here and in Ray workers started from this process
        from tools.modality_img import WEIGHTS_ENV

        os.environ[WEIGHTS_ENV] = str(args.weights.resolve())
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    ws = Workspace(args.workspace)
    guard_pandas()  # AutoGluon's type inference reads text columns as numbers: not on a crashing string
    ws.logs.mkdir(parents=True, exist_ok=True)
    # a native crash's traceback straight to the log: what fd 2 gets goes through a thread that dies with the process
    faulthandler.enable(file=open(ws.solve_log, "ab"), all_threads=True)  # noqa: SIM115 - open until the end
    with _output(ws.solve_log, args.verbose) as (console, log, say):
        log(f"---- agentk solve --budget {args.budget}, {datetime.now(UTC).isoformat(timespec='seconds')}")
        address = None
        try:
            from agentk.ray_backend import requested_address

            address = requested_address(args.ray)
            parallel = _ray_trials(address, args.parallel_trials, say) if address else {}
            bars = console is not None and console.is_terminal  # a file or a pipe gets the lines alone
            with (
                Progress(
                    TextColumn("{task.description}"),
                    BarColumn(),
                    MofNCompleteColumn(),
                    TimeElapsedColumn(),
                    console=console,
                    transient=True,
                    redirect_stdout=False,  # print() goes to the log, not above the bars
                    redirect_stderr=False,
                )
                if bars
                else contextlib.nullcontext()
            ) as bar:
                budget = PRESETS[args.budget]
                Solver(
                    args.workspace,
                    replace(budget, bound=args.bound) if args.bound else budget,
                    log=log,
                    bar=bar,
                    say=say,
                    features=not args.no_features,
                    refit=not args.no_refit,
                    cross_validate=not args.no_cv,
                    memory_limit=args.memory_limit,
                    **parallel,
                ).run()
        except Exception as exc:  # the parent reads the reason from the solve summary; the traceback goes to the log
            traceback.print_exc()
            write_json(
                ws.solve_summary, {"status": "failed", "budget": args.budget, "error": f"{type(exc).__name__}: {exc}"}
            )
            return 1
        finally:
            if address:
                from agentk.ray_backend import shutdown

                shutdown()
    return 0


@contextlib.contextmanager
def _output(path: Path, verbose: bool):
    """Sends everything this process writes to fds 1 and 2 (its log lines, AutoGluon's and torch's output, warnings,
    tracebacks) to the log file `path`, through a pipe copied by a thread; yields (console, log, say): the console
    (a rich Console on the original stderr, as the CLI's; None when verbose), log(line) for the file alone and say(line) for the
    file and the console. With verbose, the console gets everything the file gets, as it comes."""
    from rich.console import Console

    path.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    read, write = os.pipe()
    file = open(path, "ab", buffering=0)  # closed below, once the copying thread has ended

    def copy() -> None:
        while chunk := os.read(read, 65536):
            file.write(chunk)
            if verbose:
                os.write(saved[1], chunk)

    thread = threading.Thread(target=copy, daemon=True)
    thread.start()
    os.dup2(write, 1)
    os.dup2(write, 2)
    os.close(write)
    console = None if verbose else Console(file=open(saved[1], "w", closefd=False), highlight=False, soft_wrap=True)

    def log(message: str) -> None:
        print(message, flush=True)

    def say(message: str) -> None:
        log(message)
        if console is not None:
            console.print(message, markup=False)

    try:
        yield console, log, say
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)  # the pipe's last writers gone, the thread reads to its end
        os.dup2(saved[1], 2)
        thread.join(timeout=10)
        os.close(read)
        os.close(saved[0])
        os.close(saved[1])
        file.close()


def _ray_trials(address: str, parallel: int | None, log) -> dict:
    """Solver options that run HEBO trials `parallel` at a time as Ray tasks, each with an equal share of the
    cluster (one trial per GPU by default: a trial trains a whole network)."""
    from agentk.ray_backend import cluster_gpus, cluster_share, connect, map_tasks

    connect(address)
    parallel = max(1, parallel or cluster_gpus() or 2)
    share = cluster_share(parallel)
    log(
        f"Ray ({address}): HEBO trials {parallel} at a time, each on {share['num_cpus']} CPUs and "
        f"{share['num_gpus']:g} GPUs"
    )
    return {"parallel_trials": parallel, "map_fn": partial(map_tasks, **share)}


if __name__ == "__main__":
    sys.exit(main())
