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
import os
import sys
import threading
import time
import traceback
from dataclasses import replace
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from agentk.competition.joins import recorded
from agentk.core.deadline import LEAST_S, Deadline
from agentk.core.fileio import copy_file, read_json, write_json
from agentk.modalities import TABULAR, TEXT
from agentk.parsing import guard_pandas
from agentk.ray_backend import cluster_gpus, cluster_share, connect, map_tasks, requested_address, shutdown
from agentk.solve import cross_validation
from agentk.solve.budgets import PRESETS, SolveBudget, plan_network
from agentk.solve.kinds import KINDS
from agentk.solve.kinds.network import machine
from agentk.solve.memory import default_limit_gb, plan_memory
from agentk.solve.solution import LeftOut, Solution, jsonable, stray_test_predictions
from agentk.workspace import Workspace
from tools.features import apply_features
from tools.resampling import WIN_SHARE, wins_on_resamples
from tools.submission import format_with_fallback
from tools.task_data import TaskData


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
        # the solve's bound on the wall clock, from before the engineered features, which count against it: on
        # google-quest's stand-in they took 140 s, uncounted, and the solve ended 50 s past its bound
        self.deadline = Deadline(budget.bound)
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
        self.allotted = self.deadline  # the solution under way's own wall time (Deadline.allot)
        self.state: dict = {}  # what solve.json says while the solve runs: the step, the submission in place

    # -- the plan ---------------------------------------------------------------------------------
    def plans(self) -> list[tuple[str, str, dict]]:
        """(id, kind, config) of the solutions to build: each kind's (agentk/solve/kinds), in the registry's order.
        The constant comes first: it is the floor the chosen submission cannot validate below."""
        return [(sid, name, config) for name, kind in KINDS.items() for sid, config in kind.plans(self)]

    def build(self, kind: str, sid: str, **config) -> Solution:
        """Builds one solution of a kind of the registry (raises LeftOut for a plan the bound does not buy)."""
        return KINDS[kind].build(self, sid, **config)

    def memory_plan(self):
        """The solve's peak memory, estimated from its inputs (agentk/solve/memory.py), against its limit."""

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
            machine=machine("auto"),
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
        leaves it. Until a model beats the constant, the setup's submission stays: its light solution beat the
        constant on rows of its own (or the setup wrote its constant), where the solve's constant of the class priors
        can grade below the sample's uniform one."""
        best, _, _ = self._choose(solutions)
        if best.kind == "constant" and self.state.get("submission") is None and self.workspace.submission.exists():
            return best
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
        overall = self.bar_task("solutions", len(plans))
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
                later = sum(other not in finished for other, _, _ in plans[k + 1 :])
                self.allotted = self.deadline.until(self.deadline.allot(later))
                self.state.setdefault("allotted", {})[sid] = round(self.allotted.seconds, 1)
                try:
                    if kind != "constant" and self.allotted.seconds < LEAST_S:
                        raise LeftOut(
                            f"the solve's bound of {self.budget.bound:.0f} s leaves it {self.allotted.seconds:.0f} s "
                            "on the wall clock"
                        )
                    done = self.build(kind, sid, **config)
                    if kind != "constant" and (stray := self._stray(done)) is not None:
                        raise ValueError(stray)
                except LeftOut as exc:  # a plan past what the budget buys: not an error
                    write_json(self.workspace.solution(sid).skipped, {"left_out": str(exc)})
                    self.say(f"{sid}: left out ({exc})")
                    self.advance(overall)
                    continue
                except Exception as exc:  # noqa: BLE001 - one model that cannot be built leaves the others
                    if kind == "constant":  # the floor of the choice: without it nothing is judged
                        raise
                    traceback.print_exc()  # to the log
                    why = f"{type(exc).__name__}: {str(exc).strip()[:300]}"
                    write_json(self.workspace.solution(sid).skipped, {"failed": why})
                    self.say(f"{sid}: FAILED ({why}); the solve goes on without it (a rerun tries it again)")
                    self.advance(overall)
                    continue
                self.save(done)
                self.say(f"{sid}: validation {self.task.metric_name} {done.val_score:.5g} ({done.seconds:.0f} s)")
            solutions.append(done)
            if sid in finished:
                loaded = True
            else:
                self.publish(solutions)
            self.advance(overall)
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
                if (stray := self._stray(blend)) is not None:
                    self.say(f"blend: left out ({stray})")
                    blend = None
                else:
                    self.save(blend)  # after its out-of-fold predictions: score.json marks it done
            if blend is not None:
                solutions.append(blend)
                self.publish(solutions)
                if cv:
                    cv = self.cross_validate([blend], cv)
        return self.finish(solutions, cv)

    def bar_task(self, what: str, total: int):
        return self.bar.add_task(what, total=total) if self.bar is not None else None

    def epoch_bar(self, sid: str, k: int, task):
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

    def advance(self, task) -> None:
        if task is not None:
            self.bar.advance(task)

    # -- solutions ------------------------------------------------------------------------------
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
    def _stray(self, s: Solution) -> str | None:
        """Why s's test predictions are not what its validation score vouches for, or None."""
        return stray_test_predictions(s, self.task.outputs, self.task.y[self.task.split[1]])

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
        write_json(files.plan, {"id": s.id, "kind": s.kind, "plan": s.plan, **jsonable(s.details)})
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
        about as long as the solution took (cross_validation.seconds: AutoGluon's rebuilt members, once per fold)."""
        needed = sum(
            cross_validation.seconds(s) for s in solutions if not self.workspace.solution(s.id).cross_validated.exists()
        )
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
        cv = cross_validation.CrossValidation(self.task, self.budget, self.log, self.deadline)
        if done is None:
            self.say(
                f"{len(self.task.y)} train rows (at most {cross_validation.CV_ROWS}): the solutions are compared by "
                f"{folds}-fold cross-validation over every row, each rebuilt on each fold as it was built (its "
                "model, configuration and epochs fixed; AutoGluon's chosen model's members with its whole work)"
            )
        bar = self.bar_task("cross-validation", folds * len(solutions))
        done = dict(done or {})
        for s in solutions:
            left, needed = self.deadline.allot(0), cross_validation.seconds(s)
            if not self.workspace.solution(s.id).cross_validated.exists() and needed > left:
                # a busy machine runs the folds slower than planned: stop before a recipe the bound cannot hold
                self.say(
                    f"{s.id}: no time left to cross-validate it (about {needed:.0f} s, {left:.0f} s are left of the "
                    "bound); the solutions are compared on the validation rows"
                )
                return {}
            try:
                folded = cv.predictions(s.id, s.kind, done, advance=lambda: self.advance(bar))
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


def _add_features(task: TaskData, workspace: Workspace) -> dict:
    """Applies tools/features.py to the task's tab inputs and records what it added in the workspace."""

    record = apply_features(task)
    # the columns the setup's maps joined in (the data graph), each with where it came from
    columns = task.train.inputs[TABULAR.name].columns if TABULAR.name in task.modalities else []
    record["joined"] = {c: j["how"] for j in _joins_of(workspace) for c in j["columns"] if c in columns}
    workspace.solutions.mkdir(parents=True, exist_ok=True)
    write_json(workspace.features, record)
    return record


def _joins_of(workspace: Workspace) -> list[dict]:
    """joins.json's joins (agentk.competition.joins.Join.record), a nested join's after its own; [] when none."""

    flat, todo = [], recorded(workspace.root)
    while todo:
        j = todo.pop(0)
        flat.append(j)
        todo += j["via"]
    return flat


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

    ws = Workspace(args.workspace)
    guard_pandas()  # AutoGluon's type inference reads text columns as numbers: not on a crashing string
    ws.logs.mkdir(parents=True, exist_ok=True)
    # a native crash's traceback straight to the log: what fd 2 gets goes through a thread that dies with the process
    faulthandler.enable(file=open(ws.solve_log, "ab"), all_threads=True)  # noqa: SIM115 - open until the end
    with _output(ws.solve_log, args.verbose) as (console, log, say):
        log(f"---- agentk solve --budget {args.budget}, {datetime.now(UTC).isoformat(timespec='seconds')}")
        address = None
        try:
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
                shutdown()
    return 0


@contextlib.contextmanager
def _output(path: Path, verbose: bool):
    """Sends everything this process writes to fds 1 and 2 (its log lines, AutoGluon's and torch's output, warnings,
    tracebacks) to the log file `path`, through a pipe copied by a thread; yields (console, log, say): the console
    (a rich Console on the original stderr, as the CLI's; None when verbose), log(line) for the file alone and say(line) for the
    file and the console. With verbose, the console gets everything the file gets, as it comes."""

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
