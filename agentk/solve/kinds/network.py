"""Late-fusion networks (tools/fusion.py) over every modality, their training tuned by HEBO (lr, optimizer): the
budget's networks, one solution each. Each trial's work is planned from the data and the machine before it trains
(agentk/solve/budgets.py: plan_network) and cut to the wall time the solve allots it."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from functools import cache, partial
from pathlib import Path

import numpy as np

from agentk.core.deadline import LEAST_S, MARGIN
from agentk.core.fileio import append_jsonl, read_jsonl, write_text
from agentk.modalities import IMAGE, TABULAR, TEXT
from agentk.solve.budgets import FIELD_INPUT, Machine, plan_network
from agentk.solve.solution import LeftOut, Solution, features_note, jsonable
from agentk.workspace import Solution as SolutionFiles
from agentk.workspace import Workspace
from tools.features import apply_features
from tools.fusion_config import STOP_ROWS, FusionConfig
from tools.machine import idle_cores
from tools.task_data import TaskData

NAME = "network"
# a refit scoring this much (relative) worse on the validation rows it learnt from than its trial did on them unseen
# is rejected, as AutoGluon's refits are (tools/autogluon_tool.py)
REFIT_SLACK = 0.1


def plans(solver) -> list[tuple[str, dict]]:
    found = []
    for overrides in solver.budget.networks:
        if overrides and all(FIELD_INPUT.get(k) not in (None, *solver.task.modalities) for k in overrides):
            continue  # e.g. a trained image backbone on a task without images: the same network again
        found.append((f"network-{len(found) + 1}", dict(overrides)))
    return found


def build(solver, sid: str, **overrides) -> Solution:
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

    b = solver.budget
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
    fit, val = solver.task.split
    learn, stop = solver.task.holdout(fit)  # a trial learns from these and early-stops on those
    tiny, side = False, base.image_size
    if IMAGE.name in solver.task.modalities:  # the tiny CNN, when no weights exist, trains at its own side
        from tools.modality_img import image_encoder

        paths = solver.task.train.inputs[IMAGE.name].iloc[:, 0].tolist()
        tiny, side = image_encoder(base.image_backbone, base.pretrained, paths, solver.ws, side)
    planned = partial(
        plan_network,
        fit_rows=len(learn),
        val_rows=len(stop) + len(val),
        test_rows=len(solver.task.test),
        modalities=solver.task.modalities,
        finetune_image=base.finetune_image,
        finetune_text=base.finetune_text,
        image_size=side,
        machine=machine(base.device),
        design=design(),
        refit=solver.refit,
        stop_rows=min(len(stop), STOP_ROWS),  # those it scores after every epoch (watched_rows)
        tiny_image=tiny,
    )
    plan, allotted = planned(b), solver.allotted.seconds
    if plan.left_out is None and plan.seconds > allotted / MARGIN:  # the wall time left buys less work
        work = max(1.0, allotted / MARGIN - plan.embed_seconds)
        grown = min(b.grown_network_seconds, work) if b.grown_network_seconds else None
        plan = planned(replace(b, network_seconds=min(b.network_seconds, work), grown_network_seconds=grown))
        solver.say(f"{sid}: its work cut to fit the {allotted:.0f} s the solve's bound leaves it")
    if plan.left_out is not None:
        raise LeftOut(plan.left_out)
    if plan.seconds > allotted:
        raise LeftOut(
            f"its least work is modelled at {plan.seconds:.0f} s, past the {allotted:.0f} s the solve's bound leaves it"
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
    solver.say(f"{sid}: {plan.line()}")
    files = solver.workspace.solution(sid)
    files.folder.mkdir(parents=True, exist_ok=True)
    history = trial_history(files.trials)
    t0 = time.monotonic()
    trials_bar = solver.bar_task(f"{sid}: HEBO trials", plan.trials)

    def affordable() -> int:
        # from the epochs the recorded trials ran; one the safety cap stopped (a clock) or that failed counts at
        # its most, so that a busy machine runs no more trials than an idle one
        records = read_jsonl(files.trials)
        ran = [plan.epochs if r.get("capped") or not r["ok"] else r["epochs"] for r in records]
        n = plan.affordable(ran)
        if records and solver.allotted.left() < max(r.get("seconds", 0.0) for r in records):
            n = len(records)  # another trial, as long as the longest yet, would pass the wall time allotted
        if trials_bar is not None:
            solver.bar.update(trials_bar, total=n)
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
    if solver.map_fn is None:
        tuned = tune(
            _local_trials(solver, sid, base, files, len(history), trials_bar),
            n_trials=affordable,
            seed=base.seed,
            initial=[default],
            history=observed,
        )
    else:
        _ = solver.task.split  # saved to the workspace before the workers read it
        tuned = tune(
            partial(_trial_in_worker, str(solver.ws), sid, asdict(base), solver.features),
            n_trials=affordable,
            seed=base.seed,
            initial=[default],
            history=observed,
            parallel=solver.parallel_trials,
            map_fn=_mapped_trials(solver, sid, files, trials_bar),
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
    if solver.refit and not files.refit.exists() and solver.allotted.left() < best.get("seconds", 0.0) * 1.5:
        refit_note = "; test predictions from the best trial (no refit: the wall time allotted ran short)"
    elif solver.refit:
        refit = _refit(
            solver, sid, replace(config, max_time=max(LEAST_S, solver.allotted.left())), int(best["best_epoch"]), files
        )
        test_pred, checked = refit.pop("test_pred"), refit.pop("checked_pred")
        refit_note = (
            f"; its configuration refitted on all {refit['rows']} rows for {refit['epochs']} epochs (the best "
            f"trial's best epoch) for the test predictions"
        )
        # a refit that predicts the validation rows it learnt from clearly worse than the trial predicted them unseen
        # went astray (its epochs end where the trial's curve happened to be low): the trial's test predictions stay.
        # A baseball table's refit for 7 epochs tested at RMSE 2.70, its trial at 2.25
        fitted = solver.task.score(checked, solver.task.split[1]) if checked is not None else None
        if fitted is not None and _astray(fitted, float(best["val_score"]), solver.task.higher_is_better):
            test_pred, refit["rejected"] = preds["test_pred"], round(fitted, 6)
            refit_note = (
                f"; test predictions from the best trial (its refit on all {refit['rows']} rows predicted the "
                f"validation rows it learnt from at {fitted:.5g}, the trial {best['val_score']:.5g} unseen)"
            )
    capped = [r["trial"] + 1 for r in records if r.get("capped")]
    if capped or (refit and refit["capped"]):
        solver.say(
            f"{sid}: WARNING: the safety cap ({plan.safety_cap:.0f} s per training run) or the wall time "
            f"allotted ({allotted:.0f} s) stopped "
            + ", ".join([f"trial {k}" for k in capped] + (["the refit"] if refit and refit["capped"] else []))
            + " before the planned epochs: this machine ran far slower than planned; the result depends on it"
        )
    modal = "+".join(solver.task.modalities)
    method = "HEBO" if search["model"] else "random search" if len(records) > 1 else "no search"
    return Solution(
        sid,
        "network",
        f"late-fusion network over {modal}{features_note(solver)} ({_describe(config, solver.task.modalities)}); "
        f"{method} over lr and optimizer, {len(records)} trials ({search['model']} suggested by HEBO's model), "
        f"up to {plan.epochs} epochs each{f', learning from {plan.sampled}' if plan.sampled else ''}, "
        f"early-stopped and chosen by {solver.task.metric_name} on a holdout of the "
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
        preds["test_pred"] if refit is not None and "rejected" not in refit else None,
    )


def _astray(fitted: float, unseen: float, higher_is_better: bool) -> bool:
    """Whether a refit's score on rows it learnt from is worse than the trial's on them unseen by over REFIT_SLACK."""
    worse = unseen - fitted if higher_is_better else fitted - unseen
    return worse > REFIT_SLACK * abs(unseen)


def _refit(solver, sid: str, config, epochs: int, files: SolutionFiles) -> dict:
    """The best trial's configuration trained on every row for `epochs` epochs; its record with the test
    predictions (kept in the solution's refit file, so a resumed solve does not train it again)."""
    from tools.fusion import refit_fusion

    done = np.load(files.refit) if files.refit.exists() else None
    if done is None:
        solver.log(f"{sid}: refit on every row for {epochs} epochs (lr {config.lr:.2g}, {config.optimizer})")
        res = refit_fusion(solver.task, config, epochs, log=lambda m: solver.log(f"  {m}"), check=solver.task.split[1])
        done = {
            "test_pred": res.test_pred,
            "checked_pred": res.checked_pred if res.checked_pred is not None else np.empty((0, 0)),
            "rows": res.rows,
            "epochs": res.epochs,
            "samples": res.samples,
            "seconds": res.seconds,
            "capped": res.capped,
        }
        np.savez(files.refit, **done)
    record = {k: done[k] for k in ("test_pred", "rows", "epochs", "samples", "seconds", "capped")}
    record = {k: v if k == "test_pred" else np.asarray(v).item() for k, v in record.items()}
    # the validation rows as the refit predicts them (none from a refit file written before it kept them)
    checked = done["checked_pred"] if "checked_pred" in done else None
    return record | {"checked_pred": checked if checked is not None and checked.size else None}


def _local_trials(solver, sid: str, base, files: SolutionFiles, done: int, trials_bar):
    """The objective of the trials run here: trial k (numbered in call order after the `done` ones) appends
    its record to the trials file as soon as it ends, failures included."""
    runs: list[int] = []

    def objective(params: dict) -> float:
        k = done + len(runs)
        runs.append(k)
        _log_start(solver, sid, k, params)
        t_trial = time.monotonic()
        epochs = solver.bar_task(f"{sid} trial {k + 1}: epochs", 0)
        # a training run stops at its safety cap or at the wall time allotted, whichever comes first
        capped = replace(base, max_time=min(base.max_time, max(LEAST_S, solver.allotted.left())))
        try:
            record = train_trial(solver.task, capped, params, files, k, solver.log, solver.epoch_bar(sid, k, epochs))
        except Exception as exc:  # a diverging or crashing trial is HEBO's observation, not the end of the solve
            _trial_done(
                solver,
                sid,
                files,
                _failed_record(params, k, f"{type(exc).__name__}: {exc}", time.monotonic() - t_trial),
                trials_bar,
            )
            raise
        finally:
            if epochs is not None:
                solver.bar.remove_task(epochs)
        _trial_done(solver, sid, files, record, trials_bar)
        return float(record["loss"])

    return objective


def _mapped_trials(solver, sid: str, files: SolutionFiles, trials_bar):
    """tune's map_fn for trials run elsewhere: this process stays the only writer of the trials file, appending
    a batch's records in trial order once solver.map_fn returns them."""

    def run_batch(run_one, items):
        for k, params in items:
            _log_start(solver, sid, k, params)
        trials = solver.map_fn(run_one, items)
        for (k, params), trial in zip(items, trials, strict=True):
            record = trial.get("info") or _failed_record(params, k, trial["error"], trial["seconds"])
            _trial_done(solver, sid, files, record, trials_bar)
        return trials

    return run_batch


def _log_start(solver, sid: str, k: int, params: dict) -> None:
    solver.log(f"{sid} trial {k + 1}: lr {float(params['lr']):.2g}, {params['optimizer']}")


def _trial_done(solver, sid: str, files: SolutionFiles, record: dict, trials_bar) -> None:
    append_jsonl(files.trials, record)
    k = record["trial"]
    if "error" in record:
        solver.log(f"{sid} trial {k + 1} failed: {record['error']}")
        return
    solver.advance(trials_bar)
    solver.log(
        f"{sid} trial {k + 1}: stop rows {solver.task.metric_name} {record['stop_score']:.5g} (loss "
        f"{record['stop_loss']:.4g}) at the best epoch, {record['best_epoch']}; validation "
        f"{solver.task.metric_name} {record['val_score']:.5g}; {record['epochs']} epochs run, "
        f"{record['seconds']:.0f} s"
    )


def train_trial(
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
        "history": jsonable(result.history),  # per epoch: the learning curve the report draws
    }


def _trial_in_worker(ws: str, sid: str, base: dict, features: bool, params: dict, k: int) -> dict:
    """A HEBO trial in another process (a Ray task): the task is rebuilt from the workspace, which the nodes share;
    the record goes back to the solver, which writes the trials file. cwd is the workspace, as for `agentk solve`,
    because the setup's generated code may rely on it."""

    with contextlib.chdir(ws):
        task = TaskData(Path(ws))
        if features:
            apply_features(task)
        return train_trial(
            task,
            FusionConfig(**base),
            params,
            Workspace(ws).solution(sid),
            k,
            log=lambda m: print(f"{sid} trial {k + 1}: {m.strip()}", flush=True),
        )


@cache
def machine(device: str) -> Machine:
    """The machine a network's work is planned for: the CPU cores this process may use that other processes leave
    free (measured once: a busy machine trains slower, and the plan says so), and whether it trains on CUDA (device
    as FusionConfig names it)."""
    from tools.fusion import resolve_device

    return Machine(cores=idle_cores(), cuda=resolve_device(device).type == "cuda")


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


def fold(cv, sid: str, plan: dict, train: np.ndarray, held: np.ndarray, k: int) -> np.ndarray:
    """Its recipe on a fold: its configuration trained for its best trial's epochs."""
    from tools.fusion import refit_fusion

    config = FusionConfig(**plan["config"])
    epochs = int(plan["best_trial"]["best_epoch"])
    return refit_fusion(cv.task, config, epochs, log=cv.log, rows=train, held=held).test_pred
