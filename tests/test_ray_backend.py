"""The optional Ray backend on a real local Ray: tasks run in other processes and come back in order with their
exceptions; commands run with their output logged; HEBO trials run in parallel batches that still find the
optimum, record failures and resume without re-running; the solver's trials run as Ray tasks with one writer."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from functools import partial

import numpy as np
import pytest
from conftest import EXAMPLES, agentk

from agentk import ray_backend
from agentk.core.errors import BadInput
from agentk.solve.solver import PRESETS, Solver
from tools.hebo_tuner import tune

OPT_PENALTY = {"Adam": 0.0, "SGD": 1.0, "AdamW": 0.5}


@pytest.fixture(scope="module")
def cluster():
    ray_backend.connect("local")
    import ray

    # the tests' functions live in this module, which the workers cannot import: ship them by value
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield ray
    ray_backend.shutdown()


def planted(params: dict) -> float:
    return (math.log10(params["lr"]) + 3.5) ** 2 + OPT_PENALTY[params["optimizer"]]


def logged_planted(calls_file: str, params: dict) -> float:
    """planted, leaving a line per call in a file (the calls happen in other processes)."""
    with open(calls_file, "a") as f:
        f.write(json.dumps(params) + "\n")
    if params["optimizer"] == "SGD" and params["lr"] < 1e-4:  # a region that diverges
        raise RuntimeError("loss diverged")
    return planted(params)


def pid_and_square(x: int) -> tuple[int, int]:
    return os.getpid(), x * x


def fails_on_three(x: int) -> int:
    if x == 3:
        raise KeyError(f"no item {x}")
    return x


def test_importing_agentk_does_not_import_ray():
    code = (
        "import agentk.cli, agentk.solve.solver, tools.hebo_tuner, agentk.ray_backend, sys; print('ray' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip() == "False", proc.stderr


def test_a_missing_ray_is_bad_input_saying_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # what `import ray` sees without the extra
    with pytest.raises(BadInput, match="uv sync --extra ray"):
        ray_backend.connect("local")


def test_map_tasks_runs_in_other_processes_in_order(cluster):
    out = ray_backend.map_tasks(pid_and_square, range(6))
    assert [sq for _, sq in out] == [x * x for x in range(6)]
    assert os.getpid() not in {pid for pid, _ in out}


def test_a_task_exception_is_raised_as_itself(cluster):
    with pytest.raises(KeyError, match="no item 3"):
        ray_backend.map_tasks(fails_on_three, [1, 2, 3, 4])


def test_run_command_logs_output_and_returns_the_exit_code(cluster, tmp_path):
    log = tmp_path / "logs" / "round.log"
    code = "import os, sys; print('out', os.getcwd(), os.environ['ROUND']); print('err', file=sys.stderr); sys.exit(3)"
    rc = ray_backend.run_command([sys.executable, "-c", code], log, env={"ROUND": "7"}, cwd=tmp_path)
    assert rc == 3
    text = log.read_text()
    assert f"out {tmp_path} 7" in text and "err" in text
    assert ray_backend.run_command([sys.executable, "-c", "print('again')"], log) == 0
    assert log.read_text().startswith(text) and log.read_text().endswith("again\n")  # appended


@pytest.mark.slow  # a Ray cluster's tuning end to end (35 s); test_parallel_tune_without_ray_runs_batches_here covers the batches by default
def test_parallel_tune_on_ray_finds_the_optimum_records_failures_and_resumes(cluster, tmp_path):
    calls = tmp_path / "calls.jsonl"
    objective = partial(logged_planted, str(calls))
    default = [{"lr": 1e-3, "optimizer": "Adam"}]
    seen = []
    on_trial = lambda i, p, loss: seen.append((i, p, loss))  # noqa: E731
    result = tune(
        objective, n_trials=8, seed=0, initial=default, parallel=2, map_fn=ray_backend.map_tasks, on_trial=on_trial
    )
    assert len(result.trials) == 8 and len(calls.read_text().splitlines()) == 8
    assert [i for i, _, _ in seen] == list(range(8))
    assert [(p, loss) for _, p, loss in seen] == [(t["params"], t["loss"]) for t in result.trials]
    assert result.trials[0]["params"] == default[0]
    assert result.best["optimizer"] == "Adam" and result.best_loss < 0.1  # 0.1: lr within a factor 2 of 10^-3.5
    failed = [t for t in result.trials if not t["ok"]]
    assert failed and all("diverged" in t["error"] and math.isnan(t["loss"]) for t in failed)
    assert not (result.best["optimizer"] == "SGD" and result.best["lr"] < 1e-4)

    calls.unlink()
    history = json.loads(json.dumps(result.trials[:4]))  # as a killed solve left it on disk
    resumed = tune(
        objective, n_trials=6, seed=0, initial=default, history=history, parallel=2, map_fn=ray_backend.map_tasks
    )
    ran = [json.loads(line) for line in calls.read_text().splitlines()]
    old = [t["params"] for t in history]
    assert len(ran) == 2 and not any(p in old for p in ran)  # neither the default nor the other saved trials
    got = [t["params"] for t in resumed.trials]  # the calls file is in finishing order, the trials in batch order
    assert got[:4] == old and sorted(map(str, got[4:])) == sorted(map(str, ran)) and len(got) == 6


def test_parallel_tune_without_ray_runs_batches_here():
    calls = []

    def objective(params):
        calls.append(params)
        return planted(params)

    result = tune(objective, n_trials=5, seed=2, parallel=3)
    assert len(result.trials) == len(calls) == 5
    assert [t["params"] for t in result.trials] == calls
    assert len({(p["lr"], p["optimizer"]) for p in calls}) == 5  # a batch's suggestions differ


def test_indexed_objective_gets_trial_positions_and_keeps_its_info():
    def objective(params, index):
        return {"loss": planted(params), "index": index}

    history = [{"params": {"lr": 1e-4, "optimizer": "SGD"}, "loss": 1.25, "ok": True, "seconds": 0.0}]
    result = tune(objective, n_trials=4, seed=1, history=history, parallel=3, indexed=True)
    assert [t["info"]["index"] for t in result.trials[1:]] == [1, 2, 3]
    assert [t["info"]["loss"] for t in result.trials[1:]] == [t["loss"] for t in result.trials[1:]]


@pytest.fixture(scope="module")
def iris_setup(tmp_path_factory):
    ws = tmp_path_factory.mktemp("ray-solve") / "iris-species"
    proc = agentk("setup", EXAMPLES / "iris-species", "--workspace", ws)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return ws


@pytest.mark.slow  # a setup and a network's trials on Ray (40 s); the cluster's task tests above run by default
def test_solver_network_trials_run_as_ray_tasks(cluster, iris_setup):
    budget = replace(PRESETS["quick"], n_trials=3, max_epochs=5)
    solver = Solver(
        iris_setup, budget, log=lambda m: None, parallel_trials=2, map_fn=partial(ray_backend.map_tasks, num_cpus=1)
    )
    solution = solver.build("network", "network-1")
    folder = iris_setup / "solutions" / "network-1"
    records = [json.loads(line) for line in (folder / "trials.jsonl").read_text().splitlines()]
    assert [r["trial"] for r in records] == [0, 1, 2]
    assert records[0]["params"] == {"lr": 1e-3, "optimizer": "Adam"}  # the default configuration first
    assert all((folder / f"trial_{r['trial']}.npz").exists() for r in records if r["ok"])
    best = min((r for r in records if r["ok"]), key=lambda r: r["loss"])
    assert solution.val_score == best["val_score"] > 0.6  # accuracy on 3 balanced classes
    assert np.array_equal(solution.val_pred, np.load(folder / f"trial_{best['trial']}.npz")["val_pred"])


@pytest.mark.slow
def test_solve_cli_with_ray_finishes(iris_setup):
    """The whole quick solve (AutoGluon included, about two minutes on two cores) with its trials on Ray."""
    shutil.rmtree(iris_setup / "solutions", ignore_errors=True)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentk.solve.solver",
            str(iris_setup),
            "--budget",
            "quick",
            "--ray",
            "local",
            "--parallel-trials",
            "2",
        ],
        cwd=iris_setup,
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "HEBO trials 2 at a time" in proc.stderr  # the solver's console is stderr, as the CLI's
    summary = json.loads((iris_setup / "solve.json").read_text())
    assert summary["status"] == "done"
    folder = iris_setup / "solutions" / "network-1"
    records = [json.loads(line) for line in (folder / "trials.jsonl").read_text().splitlines()]
    assert sorted(r["trial"] for r in records) == list(range(PRESETS["quick"].n_trials))
    assert all((folder / f"trial_{r['trial']}.npz").exists() for r in records)


def test_curriculum_rounds_run_as_ray_tasks(cluster, tmp_path, monkeypatch):
    from curriculum.runner import Curriculum

    broken = tmp_path / "broken"  # no tables: the setup exits 2 with one line, in seconds
    broken.mkdir()
    (broken / "description.md").write_text("# Broken\nPredict y from x.\n")
    (tmp_path / "pool.txt").write_text("broken\n")

    def no_local_run(*args, **kwargs):
        raise AssertionError("with ray the driver must not run the step itself")

    monkeypatch.setattr("curriculum.runner.run_step", no_local_run)
    state = Curriculum(tmp_path / "pool.txt", tmp_path / "out", rounds=1, ray="local").run()
    rec = state["rounds"][0]
    assert (rec["step"], rec["setup_rc"], rec["runs"]) == ("done", 2, {"setup": 1})
    assert "sample submission" in rec["outcome"]  # the CLI's one line, read back from the task's log
    assert "agentk:" in (tmp_path / "out" / "logs" / "round-1-broken-setup.log").read_text()
