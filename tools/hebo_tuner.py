"""HEBO tuning of a solution's training (paper 3.2): the learning rate on a log scale and the optimizer, minimising
the validation loss the objective returns.

Trials are recorded as dicts {"params", "loss", "seconds", "ok", "source"}; passing them back as `history` observes
them without re-running, so a killed solve resumes where it stopped. A trial whose objective raises or returns a
non-finite loss is kept as failed (loss nan): HEBO sees it as slightly worse than the worst finite loss so it
moves away, without one huge value flattening the other losses in its power transform.

HEBO draws its first `design(space)` observations (the initial points included) from a scrambled Sobol sequence
and only then fits its GP and suggests from it (hebo/optimizers/hebo.py: `rand_sample`, 1 + the number of
parameters): fewer trials than design(space) + 1 are a random search. Each trial records where its point came
from ("source": initial, random or model) and TuneResult.model_based counts the model's suggestions."""

from __future__ import annotations

import math
import random
import time
import warnings
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import pandas as pd
import torch

SPACE: list[dict] = [
    {"name": "lr", "type": "pow", "lb": 1e-6, "ub": 1e-2, "base": 10},
    {"name": "optimizer", "type": "cat", "categories": ["Adam", "SGD", "AdamW"]},
]


@dataclass
class TuneResult:
    best: dict
    best_loss: float
    trials: list[dict] = field(default_factory=list)

    @property
    def model_based(self) -> int:
        """How many trials HEBO's model suggested (the rest: initial points and its random design)."""
        return sum(t.get("source") == "model" for t in self.trials)


def design(space: list[dict] = SPACE) -> int:
    """The observations HEBO draws at random before its model suggests: HEBO's own default, 1 + parameters."""
    return 1 + len(space)


def tune(
    objective: Callable[..., float | dict],
    n_trials: int | Callable[[], int],
    space: list[dict] = SPACE,
    seed: int = 0,
    initial: list[dict] | None = None,
    on_trial: Callable[[int, dict, float], None] | None = None,
    history: list[dict] | None = None,
    parallel: int = 1,
    map_fn: Callable | None = None,
    indexed: bool = False,
) -> TuneResult:
    """Minimise objective(params) over `space` in n_trials evaluations, history included (a callable: asked again
    before every step how many trials the search may have by then, e.g. from the work the done ones used).
    `initial` points (e.g. the default configuration) are evaluated first unless history already holds them;
    on_trial(index, params, loss) is called after each new trial (loss nan when it failed). Raises if no trial
    succeeded.

    The objective returns the loss, or a dict holding it under "loss" with whatever else the trial should keep
    (as trial["info"]: a trial run in another process has no other way back). indexed: call it as
    objective(params, index), index being the trial's position (history included), e.g. to name its files.

    parallel > 1: each step takes up to `parallel` trials, the remaining initial points first and HEBO's batch
    suggestions for the rest (a batch may mix both), runs them with map_fn(run_one, items) (like the builtin
    map, the default, which runs them one after another here; agentk.ray_backend.map_tasks runs them as Ray
    tasks, the objective then has to pickle) and observes them in the batch's order. parallel=1 is the
    sequential search, suggestion for suggestion."""
    hebo_cls, design_space = _hebo()
    opt = hebo_cls(design_space().parse(space), scramble_seed=seed, rand_sample=design(space))
    initial = [dict(p) for p in initial or []]
    trials: list[dict] = []
    for t in map(_normalised, history or []):
        source = "initial" if t["params"] in initial else "random" if len(trials) < opt.rand_sample else "model"
        if source == "random":
            opt.sobol.fast_forward(1)  # it came from a random draw: the resumed run draws the next points
        _record(opt, trials, {"source": source, **t})
    pending = [p for p in initial if p not in [t["params"] for t in trials]]
    run_all = map_fn or map
    allowed = n_trials if callable(n_trials) else lambda: n_trials
    while len(trials) < (n := allowed()):
        size = min(max(1, parallel), n - len(trials))
        batch, pending = pending[:size], pending[size:]
        sources = ["initial"] * len(batch)
        if len(batch) < size:
            # HEBO answers from its random design while it holds fewer observations than it needs
            sources += ["random" if len(trials) < opt.rand_sample else "model"] * (size - len(batch))
            batch += _suggest(opt, trials, size - len(batch), seed)
        items = [(len(trials) + i, params) for i, params in enumerate(batch)]
        runs = run_all(partial(_run_item, objective, indexed), items)
        for (index, params), source, trial in zip(items, sources, runs, strict=True):
            _record(opt, trials, {**trial, "source": source})
            if on_trial is not None:
                on_trial(index, params, trial["loss"])
    ok = [t for t in trials if t["ok"]]
    if not ok:
        raise RuntimeError(f"all {len(trials)} tuning trials failed; the last error: {trials[-1].get('error')}")
    best = min(ok, key=lambda t: t["loss"])
    return TuneResult(dict(best["params"]), best["loss"], trials)


def _suggest(opt, trials: list[dict], n: int, seed: int) -> list[dict]:
    """HEBO's next n points (random draws until it has enough observations), fitted on every trial so far."""
    opt.y = _observed_losses(trials)  # failures' penalty follows the worst loss seen so far
    with _quiet_single_thread(), _seeded(seed + len(trials)):
        rec = opt.suggest(n_suggestions=n)
    return [{k: _plain(v) for k, v in row.items()} for _, row in rec.iterrows()]


def _hebo():
    """HEBO's classes, imported on first use because pymoo makes the import slow; importing hebo.optimizers.hebo
    sets torch's thread count to 1 for the whole process, which _quiet_single_thread undoes."""
    from pymoo.config import Config

    Config.warnings["not_compiled"] = False  # pymoo prints a notice about its optional C extensions otherwise
    with _quiet_single_thread():
        from agentk._vendor.hebo.design_space.design_space import DesignSpace
        from agentk._vendor.hebo.optimizers.hebo import HEBO
    return HEBO, DesignSpace


@contextmanager
def _quiet_single_thread():
    """HEBO's GP and evolutionary search on one torch thread, as HEBO itself intends (with two threads on a busy
    machine a suggestion took ten times longer), without its libraries' internal warnings; the caller's thread
    count is restored."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        torch.set_num_threads(threads)


def _run_item(objective: Callable, indexed: bool, item: tuple[int, dict]) -> dict:
    index, params = item
    return _run(lambda p: objective(p, index) if indexed else objective(p), params)


def _run(objective: Callable[[dict], float | dict], params: dict) -> dict:
    start = time.perf_counter()
    info = None
    try:
        value = objective(dict(params))
        if isinstance(value, dict):
            info, value = value, value["loss"]
        loss, error = float(value), None
        if not math.isfinite(loss):
            error = f"objective returned {loss}"
    except Exception as exc:  # a diverging or crashing configuration is a result, not the end of tuning
        loss, error = math.nan, f"{type(exc).__name__}: {exc}"
    trial = {
        "params": params,
        "loss": loss if error is None else math.nan,
        "seconds": time.perf_counter() - start,
        "ok": error is None,
    }
    if error is not None:
        trial["error"] = error
    if info is not None:
        trial["info"] = info
    return trial


def _normalised(trial: dict) -> dict:
    """A history trial as tune records it (a JSON round trip may turn nan into None)."""
    loss = trial.get("loss")
    ok = bool(trial.get("ok", True)) and loss is not None and math.isfinite(float(loss))
    return {**trial, "params": dict(trial["params"]), "loss": float(loss) if ok else math.nan, "ok": ok}


def _record(opt, trials: list[dict], trial: dict) -> None:
    """Appends a trial and shows it to HEBO; every trial is observed (failures with a finite penalty), so HEBO's
    rows stay aligned with `trials`."""
    trials.append(trial)
    frame = pd.DataFrame([{name: trial["params"][name] for name in opt.space.para_names}])
    with _quiet_single_thread():  # pandas warns about HEBO concatenating onto its empty initial frame
        opt.observe(frame, _observed_losses(trials)[-1:])


def _observed_losses(trials: list[dict]) -> np.ndarray:
    """The losses HEBO fits, failures replaced by a penalty just beyond the worst finite loss."""
    finite = [t["loss"] for t in trials if t["ok"]]
    if finite:
        worst, best = max(finite), min(finite)
        penalty = worst + max(worst - best, abs(worst), 1e-6)
    else:
        penalty = 1.0
    return np.array([t["loss"] if t["ok"] else penalty for t in trials], dtype=float).reshape(-1, 1)


def _plain(value):
    """numpy scalars (np.float64, np.str_) as the Python values an objective and JSON expect."""
    return value.item() if isinstance(value, np.generic) else value


@contextmanager
def _seeded(seed: int):
    """Seeds random, numpy and torch's CPU generator for one HEBO suggestion and restores them afterwards, so a
    suggestion depends only on the seed and the observations, not on what the objective did to the generators."""
    states = random.getstate(), np.random.get_state(), torch.get_rng_state()
    random.seed(seed)
    np.random.seed(seed)
    torch.default_generator.manual_seed(seed)
    try:
        yield
    finally:
        random.setstate(states[0])
        np.random.set_state(states[1])
        torch.set_rng_state(states[2])
