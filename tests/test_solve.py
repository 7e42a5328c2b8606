"""`agentk solve` end to end: solutions on disk, the best one as a valid submission that beats a constant,
resume without redoing finished work, and bad input."""

from __future__ import annotations

import io
import json
import shutil
import sys
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from conftest import EXAMPLES, agentk, copy_setup, render

from agentk.core.errors import BadInput
from agentk.core.fileio import append_jsonl, read_json, read_jsonl, write_json
from agentk.core.sandbox import MemoryGroup
from agentk.solve.budgets import PRESETS
from agentk.solve.cross_validation import FOLDS
from agentk.solve.kinds.network import trial_history
from agentk.solve.solution import Solution
from agentk.solve.solver import Solver
from agentk.submit import submit_workspace
from agentk.workspace import SUBMISSION_FORMAT, SUBMISSION_FORMAT_ALT, Workspace, code_module
from tools import classical_tab
from tools.classical import predict_outputs
from tools.submission import SubmissionMismatch, compare_with_sample

sys.path.insert(0, str(EXAMPLES))
from grade import grade  # noqa: E402


@pytest.fixture(scope="module")
def solved(tmp_path_factory, example_ws):
    # a copy of its own: solve adds to the workspace
    ws = copy_setup(example_ws, "breast-cancer", tmp_path_factory.mktemp("solve") / "breast-cancer")
    run = agentk("solve", "--workspace", ws, "--budget", "quick", timeout=900)
    return ws, run


def test_the_setups_submission_stays_until_a_model_beats_the_constant(solved):
    """The setup's light solution beat the constant on rows of its own: the solve does not put its own constant in
    its place while the models train (the class priors can grade below the sample's uniform constant)."""
    ws, run = solved
    assert run.returncode == 0, run.stderr[-3000:]
    published = [
        line for line in (ws / "logs" / "solve.log").read_text().splitlines() if line.startswith("submission.csv:")
    ]
    assert published and not any(line.startswith("submission.csv: constant") for line in published), published


def test_solve_writes_every_solution_and_the_best_submission(solved):
    ws, run = solved
    assert run.returncode == 0, run.stderr[-3000:]
    summary = json.loads((ws / "solve.json").read_text())
    ids = [s["id"] for s in summary["solutions"]]
    assert ids[:4] == ["constant", "autogluon", "classical-tab", "network-1"]
    for sid in ids:
        folder = ws / "solutions" / sid
        for f in ("plan.json", "score.json", "val_pred.npy", "test_pred.npy", "submission.csv"):
            assert (folder / f).exists(), f"{sid}/{f}"
        refitted = sid in (
            "autogluon",
            "classical-tab",
            "network-1",
        )  # and, for the blender, the validated model's test rows
        assert (folder / "validated_test_pred.npy").exists() == refitted, sid
        assert len(pd.read_csv(folder / "submission.csv")) == len(
            pd.read_csv(EXAMPLES / "breast-cancer" / "sample_submission.csv")
        )
    trials = [json.loads(line) for line in (ws / "solutions" / "network-1" / "trials.jsonl").read_text().splitlines()]
    plan = json.loads((ws / "solutions" / "network-1" / "plan.json").read_text())
    assert len(trials) == plan["work"]["trials"] > 3 and trials[0]["params"] == {"lr": 1e-3, "optimizer": "Adam"}
    # the default first, then HEBO's random design, then its model's suggestions; the test rows from the refit
    assert plan["search"] == {"method": "HEBO", "initial": 1, "random": 2, "model": len(trials) - 3}
    assert plan["refit"]["rows"] == len(pd.read_csv(EXAMPLES / "breast-cancer" / "train.csv"))
    assert all(t["epochs"] <= t["planned_epochs"] and not t["capped"] for t in trials)
    # 569 rows: a small table, its solutions chosen by their out-of-fold AUC (higher is better) over every row
    assert summary["selected_by"] == "cross-validation"
    scored = [s for s in summary["solutions"] if s.get("cv_score") is not None]
    assert {s["id"] for s in scored} >= {"constant", "autogluon", "classical-tab", "network-1"}
    best = max(scored, key=lambda s: s["cv_score"])
    assert summary["best"] == best["id"]
    assert (ws / "submission.csv").read_text() == (ws / "solutions" / best["id"] / "submission.csv").read_text()
    assert "solutions of" in run.stderr and "solve done" in run.stderr
    # memory planned as well as time (issue 49): the estimate first, the tree's measured peak after, where the
    # machine lets agentk make a memory cgroup
    assert "peak memory estimated at" in run.stderr and "(--memory-limit)" in run.stderr
    if MemoryGroup.make(2**30) is not None:
        assert 0.3 < summary["peak_memory_gb"] < summary["memory_limit_gb"]


def test_solve_writes_a_report_with_plots_and_tables(solved, tmp_path):
    """The report `agentk solve` wrote, rendered in headless chromium (a screenshot goes to tmp_path)."""
    solved, run = solved
    path = Workspace(solved).report
    assert f"report {path}" in run.stderr
    shown = render(path, tmp_path / "report.png")
    assert (tmp_path / "report.png").stat().st_size > 10_000
    assert shown["sections"] == ["task", "setup", "solutions", "blend", "submission"]
    widths = dict(shown["images"])
    for alt in ("setup trajectory", "validation scores", "network-1 HEBO trials", "network-1 learning curves"):
        assert widths.get(alt, 0) > 0, f"{alt}: not drawn ({shown['images']})"
    assert all(w > 0 for w in widths.values()), shown["images"]
    assert all(u.startswith(("file:", "data:")) for u in shown["requests"]), shown["requests"]  # nothing fetched
    headers = shown["tables"]
    stages = headers.index(next(h for h in headers if h[:2] == ["stage", "status"]))
    assert shown["rows"][stages] >= 10  # every setup stage
    tables = [i for i, h in enumerate(headers) if "learning rate" in h]
    n_trials = len((solved / "solutions" / "network-1" / "trials.jsonl").read_text().splitlines())
    assert [shown["rows"][i] for i in tables] == [n_trials]  # one row per HEBO trial of the network
    assert any(h[:2] == ["model", "score_val"] for h in headers)  # AutoGluon's leaderboard
    text = shown["text"]
    assert "roc_auc (higher is better)" in text
    assert "every solution shares, random rows" in text  # how the validation rows were held out
    assert "matches the sample submission" in text and "the solve's best solution" in text
    assert "out of fold" in text  # the blend's figure says what it is
    best = json.loads((solved / "solve.json").read_text())["best"]
    assert f"{best} ★" in text


def test_console_is_short_and_the_log_has_every_detail(solved):
    ws, run = solved
    log = (ws / "logs" / "solve.log").read_text()
    assert "fusion epoch" in log and "network-1 trial 2:" in log and "stop rows" in log
    assert "fusion epoch" not in run.stderr and "Warning" not in run.stderr
    assert len(run.stderr.splitlines()) < 25, run.stderr
    # the constant, autogluon, classical-tab, network
    assert "blend of 4 solutions" in run.stderr and "out-of-fold" in run.stderr
    history = json.loads((ws / "solutions" / "network-1" / "trials.jsonl").read_text().splitlines()[0])["history"]
    assert history[0]["epoch"] == 1 and {"train_loss", "stop_loss", "stop_score"} <= set(history[0])


def test_best_submission_beats_the_constant_on_hidden_answers(solved):
    ws, _ = solved
    ours = grade("breast-cancer", ws / "submission.csv")
    constant = grade("breast-cancer", EXAMPLES / "breast-cancer" / "sample_submission.csv")
    assert ours > 0.95 > constant


def test_validation_split_is_shared_and_predictions_are_in_model_space(solved):
    ws, _ = solved
    split = json.loads((ws / "solutions" / "split.json").read_text())
    assert not set(split["fit"]) & set(split["val"])
    for sid in ("autogluon", "network-1"):
        val = np.load(ws / "solutions" / sid / "val_pred.npy")
        assert val.shape == (len(split["val"]), 1) and ((val >= 0) & (val <= 1)).all()


def test_second_run_resumes_without_redoing_solutions(solved):
    ws, _ = solved
    stamps = {p: p.stat().st_mtime_ns for p in (ws / "solutions").glob("*/score.json")}
    stamps |= {p: p.stat().st_mtime_ns for p in (ws / "solutions").glob("*/cross_validated.npz")}  # not done again
    assert len(stamps) > 8
    again = agentk("solve", "--workspace", ws, "--verbose", timeout=600)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "already done" in again.stderr
    assert "---- agentk solve --budget quick" in again.stderr  # --verbose: the log as it is written
    assert (ws / "logs" / "solve.log").read_text().count("---- agentk solve") == 2  # a rerun appends
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps


def test_a_small_tables_solutions_are_compared_out_of_fold_over_every_row(solved):
    """Each solution's out-of-fold predictions cover every train row, each fold's from its recipe fitted without
    that fold's rows; its cross-validated score is theirs, and the report shows it."""
    ws, _ = solved
    summary = json.loads((ws / "solve.json").read_text())
    task = Solver(ws, PRESETS["quick"], log=lambda m: None).task  # with the engineered features the solve added
    rows = np.arange(len(task.y))
    for s in summary["solutions"]:
        if s.get("cv_score") is not None:
            oof = np.load(ws / "solutions" / s["id"] / "cross_validated.npz")["pred"]
            assert oof.shape == (len(rows), 1) and task.score(oof, rows) == pytest.approx(s["cv_score"])
    # the classical candidate's first fold again: its chosen model fitted on the other folds' rows alone, with
    # what it learnt on the fit rows (its kernel) fixed
    plan = json.loads((ws / "solutions" / "classical-tab" / "plan.json").read_text())
    train, held = task.folds(FOLDS)[0]
    feats = classical_tab.features(task, log=lambda m: None)
    model, learnt = feats.models[plan["chosen"]], plan.get("learnt")
    oof = np.load(ws / "solutions" / "classical-tab" / "cross_validated.npz")["pred"]
    assert np.allclose(
        oof[held], predict_outputs(task, model, feats.train, train, feats.train[held], learnt), atol=1e-6
    )
    leaky = predict_outputs(task, model, feats.train, rows, feats.train[held], learnt)  # had it seen the held rows
    assert not np.allclose(oof[held], leaky, atol=1e-6)
    assert "cross-validated" in (ws / "report.html").read_text()


def test_solve_refuses_a_workspace_without_a_finished_setup(tmp_path):
    proc = agentk("solve", "--workspace", tmp_path)
    assert proc.returncode == 2 and "holds no setup" in proc.stderr
    (tmp_path / "setup.json").write_text(json.dumps({"status": "running"}))
    proc = agentk("solve", "--workspace", tmp_path)
    assert proc.returncode == 2 and "not finished" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_unknown_budget(solved):
    ws, _ = solved
    proc = agentk("solve", "--workspace", ws, "--budget", "huge")
    assert proc.returncode == 2 and "unknown budget 'huge'" in proc.stderr


def test_a_torn_last_trial_line_does_not_break_a_resumed_solve(tmp_path):
    trials = tmp_path / "trials.jsonl"
    done = [
        {"params": {"lr": 1e-3, "optimizer": "Adam"}, "trial": 0, "ok": True, "loss": -0.9},
        {"params": {"lr": 1e-2, "optimizer": "SGD"}, "trial": 1, "ok": False, "loss": None},
    ]
    trials.write_text("".join(json.dumps(r) + "\n" for r in done) + '{"params": {"lr": 0.0')  # killed mid-write
    assert trial_history(trials) == done
    append_jsonl(trials, {"params": {"lr": 3e-3, "optimizer": "Adam"}, "trial": 2, "ok": True, "loss": -0.95})
    assert [r["trial"] for r in read_jsonl(trials)] == [0, 1, 2]  # the resumed solve's record is read back whole


@pytest.fixture
def setup_ws(example_ws, tmp_path, monkeypatch):
    good, proc = example_ws("breast-cancer")
    assert proc.returncode == 0, proc.stderr[-2000:]
    ws = tmp_path / "breast-cancer"
    shutil.copytree(good, ws, symlinks=True)
    monkeypatch.chdir(ws)  # generated code runs from the workspace
    return ws


def _break_formatter(ws, stage):
    code = Workspace(ws).code(stage)
    code.write_text(
        code.read_text() + "\n\ndef format_submission(test_ids, predictions):\n    raise ValueError('broken')\n"
    )


def test_solver_saves_with_the_alternative_formatter_when_the_first_is_broken(setup_ws):
    _break_formatter(setup_ws, SUBMISSION_FORMAT)
    solver = Solver(setup_ws, PRESETS["quick"], log=lambda m: None)
    n_val, n_test = len(solver.task.split[1]), len(solver.task.test)
    solver.save(
        Solution("constant", "network", "a constant", 0.5, np.full((n_val, 1), 0.5), np.full((n_test, 1), 0.3), 1.0)
    )
    files = Workspace(setup_ws).solution("constant")
    assert read_json(files.score)["formatter"] == code_module(SUBMISSION_FORMAT_ALT)
    compare_with_sample(setup_ws, pd.read_csv(files.submission), "the saved submission")
    assert solver.load("constant").val_score == 0.5

    _break_formatter(setup_ws, SUBMISSION_FORMAT_ALT)
    with pytest.raises(
        SubmissionMismatch, match=f"both submission formatters failed: {code_module(SUBMISSION_FORMAT)}: broken"
    ):
        solver.save(Solution("none", "network", "a constant", 0.5, np.zeros((n_val, 1)), np.zeros((n_test, 1)), 1.0))


def test_submit_refuses_a_workspace_whose_solve_did_not_finish(setup_ws):
    paths = Workspace(setup_ws)
    write_json(paths.setup_state, {**read_json(paths.setup_state), "source": "https://www.kaggle.com/competitions/x"})
    with pytest.raises(BadInput, match="did not finish \\(no solve was run\\).*--light"):
        submit_workspace(setup_ws, "m", None, timeout=1)
    write_json(paths.solve_summary, {"status": "running", "budget": "quick"})  # killed mid-solve
    with pytest.raises(BadInput, match="a solve is running or was killed"):
        submit_workspace(setup_ws, "m", None, timeout=1)
    with pytest.raises(BadInput, match="solution 'network-1' .* is not finished"):
        submit_workspace(setup_ws, "m", "network-1", timeout=1)


def test_submit_refuses_a_submission_that_does_not_match_the_sample(setup_ws):
    paths = Workspace(setup_ws)
    write_json(paths.setup_state, {**read_json(paths.setup_state), "source": "https://www.kaggle.com/competitions/x"})
    write_json(paths.solve_summary, {"status": "done"})
    pd.read_csv(paths.light.submission).iloc[1:].to_csv(paths.submission, index=False)  # a row lost
    with pytest.raises(BadInput, match="does not match the sample submission: .* 1 sample ids missing"):
        submit_workspace(setup_ws, "m", None, timeout=1)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["digits-images", "docstring-library"])
def test_solve_image_and_text_examples_beat_the_sample_submission(tmp_path, name):
    """The quick budget on an image and a text+tab example (a few minutes each on CPU: `pytest -m slow`)."""
    ws = tmp_path / name
    assert agentk("setup", EXAMPLES / name, "--workspace", ws, timeout=900).returncode == 0
    run = agentk("solve", "--workspace", ws, timeout=1800)
    assert run.returncode == 0, run.stderr[-3000:]
    summary = json.loads((ws / "solve.json").read_text())
    assert {"network-1"} <= {s["id"] for s in summary["solutions"]}
    meta = json.loads((EXAMPLES / "_private" / name / "meta.json").read_text())
    ours = grade(name, ws / "submission.csv")
    constant = grade(name, EXAMPLES / name / "sample_submission.csv")
    assert (ours < constant) if meta["lower_is_better"] else (ours > constant), (ours, constant)


def test_a_trials_epoch_bar_shows_its_epochs_speed_and_gpu_memory(setup_ws):
    from rich.console import Console
    from rich.progress import Progress

    bar = Progress(console=Console(file=io.StringIO()))
    solver = Solver(setup_ws, PRESETS["quick"], log=lambda m: None, bar=bar)
    report = solver.epoch_bar("network-1", 0, solver.bar_task("network-1 trial 1: epochs", 0))
    report({"epoch": 3, "epochs": 30, "images_per_s": 1234.4, "gpu_mem_gb": 2.5})
    (task,) = bar.tasks
    assert (task.completed, task.total) == (3, 30)
    assert task.description == "network-1 trial 1: 1234 samples/s, 2.5 GB GPU"
    report({"epoch": 4, "epochs": 30, "images_per_s": 99.0, "gpu_mem_gb": None})  # on CPU: no memory figure
    assert bar.tasks[0].description == "network-1 trial 1: 99 samples/s"
    assert Solver(setup_ws, PRESETS["quick"], log=lambda m: None).epoch_bar("network-1", 0, None) is None


@pytest.mark.parametrize("name", ["diabetes", "iris-species"])
def test_the_constant_is_a_solution_and_the_floor_of_the_choice(example_copy, name):
    """The trivial candidate is the best input-free prediction the metric allows (class priors; the target's
    mean or median, whichever validates better), and a solution that validates worse is never chosen over it."""
    ws = example_copy(name)
    solver = Solver(ws, PRESETS["quick"], log=lambda m: None, features=False, cross_validate=False)
    assert solver.plans()[0] == ("constant", "constant", {})
    task = solver.task
    fit, val = task.split
    constant = solver.build("constant", "constant")
    y = task.y[fit, 0]
    if task.outputs[0]["kind"] == "regression":
        scores = {
            s: task.score(np.full((len(val), 1), f(y)), val) for s, f in (("mean", np.mean), ("median", np.median))
        }
        best = min(scores, key=scores.get) if not task.higher_is_better else max(scores, key=scores.get)
        assert constant.details["statistic"] == best and constant.val_score == pytest.approx(scores[best])
        assert np.allclose(constant.test_pred, {"mean": np.mean, "median": np.median}[best](task.y[:, 0]))
    else:
        prior = np.bincount(y.astype(int), minlength=task.widths[0]) / len(y)
        assert np.allclose(constant.val_pred, prior) and constant.val_score == pytest.approx(
            task.score(constant.val_pred, val)
        )
    assert constant.test_pred.shape == (len(task.test.ids), sum(task.widths))
    kind, k = task.outputs[0]["kind"], task.widths[0]
    if kind == "regression":  # a model that learnt nothing: the targets of other rows
        noise = np.random.default_rng(0).permutation(task.y[:, :1])
    else:  # a model that learnt the wrong thing: another class for every row
        wrong = (task.y[:, 0].astype(int) + 1) % max(k, 2)
        noise = wrong[:, None].astype(float) if kind == "binary" else np.eye(k)[wrong]
    worse = Solution("guess", "network", "shuffled targets", 0.0, noise[val], noise[: len(task.test.ids)], 0.0)
    worse.val_score = task.score(worse.val_pred, val)
    assert task.better(constant.val_score, worse.val_score)
    for s in (worse, constant):
        solver.save(s)
    summary = solver.finish([worse, constant])
    assert summary["best"] == "constant"
    assert (ws / "submission.csv").read_text() == (ws / "solutions" / "constant" / "submission.csv").read_text()


def test_a_solution_replaces_the_constant_only_when_it_wins_on_most_resamples(example_copy):
    """On a noisy target, a validation gain over the constant that a few rows carry is noise: the constant is
    submitted unless the best solution also beats it on 90 % of bootstrap resamples of the validation rows."""
    ws = example_copy("diabetes")
    said = []
    solver = Solver(ws, PRESETS["quick"], log=said.append, features=False, cross_validate=False)
    task = solver.task
    val = task.split[1]
    constant = solver.build("constant", "constant")
    error = task.y[val] - constant.val_pred
    # the constant's errors, halved on every other row by size (largest first) and grown by 30 % on the rest: a
    # few percent better overall, worse on half the rows
    factor = np.ones(len(val))
    by_size = np.argsort(-np.abs(error[:, 0]))
    factor[by_size[0::2]], factor[by_size[1::2]] = 0.5, 1.3
    noisy = task.y[val] - factor[:, None] * error
    clear = task.y[val] - 0.4 * error
    candidates = {
        name: Solution(name, "network", name, task.score(pred, val), pred, constant.test_pred + k + 1.0, 0.0)
        for k, (name, pred) in enumerate((("noisy", noisy), ("clear", clear)))
    }
    for s in (*candidates.values(), constant):
        solver.save(s)
    assert task.better(candidates["noisy"].val_score, constant.val_score)
    summary = solver.finish([candidates["noisy"], constant])
    assert summary["best"] == "constant"
    assert (ws / "submission.csv").read_text() == (ws / "solutions" / "constant" / "submission.csv").read_text()
    assert any("not on 90 % of bootstrap resamples" in line for line in said)
    summary = solver.finish([candidates["noisy"], candidates["clear"], constant])
    assert summary["best"] == "clear"
    assert (ws / "submission.csv").read_text() == (ws / "solutions" / "clear" / "submission.csv").read_text()


def test_the_constant_is_among_the_blends_inputs(example_copy):
    """On a noisy target the mean of a model and the constant (a shrinkage towards it) beats both (here the model
    errs by about the target's own spread, so the mean errs about 30 % less than either): the solve's
    blend may average the constant in. The models are saved as done, so run() only blends and chooses."""
    ws = example_copy("diabetes")
    solver = Solver(ws, PRESETS["quick"], log=lambda m: None, features=False, cross_validate=False)
    task = solver.task
    val = task.split[1]
    constant = solver.build("constant", "constant")
    solver.save(constant)
    rng = np.random.default_rng(0)
    for k, (sid, kind, _) in enumerate(solver.plans()[1:]):  # independent errors: the first model the best
        pred = task.y[val] + rng.normal(0, 80.0 * (k + 1), (len(val), 1))
        solver.save(Solution(sid, kind, sid, task.score(pred, val), pred, np.full((len(task.test), 1), k + 1.0), 0))
    first = solver.plans()[1][0]
    mean = (solver.load(first).val_pred + constant.val_pred) / 2
    assert task.better(task.score(mean, val), solver.load(first).val_score)
    summary = solver.run()
    blend = read_json(Workspace(ws).solution("blend").plan)
    assert summary["best"] == "blend" and "constant" in blend["inputs"]
    if blend["how"] == "mean":  # the MLP may learn the same shrinkage; a mean of the two best is exactly it
        assert blend["members"] == [first, "constant"]
        np.testing.assert_allclose(np.load(Workspace(ws).solution("blend").val_pred), mean)


def test_the_solver_adds_generic_features_to_the_tab_inputs_and_records_them(example_copy):
    ws = example_copy("diabetes")
    layout = Workspace(ws)
    for split in ("train", "test"):  # a date column the setup could have mapped
        path = layout.input_maps(split)["tab"]
        frame = pd.read_csv(path)
        frame["visit"] = pd.date_range("2020-01-01", periods=len(frame), freq="5h").astype(str)
        frame.to_csv(path, index=False)
    plain = Solver(ws, PRESETS["quick"], log=lambda m: None, features=False)
    assert "visit" in plain.task.train.inputs["tab"] and not layout.features.exists()
    solver = Solver(ws, PRESETS["quick"], log=lambda m: None)
    record = read_json(layout.features)
    assert record["dropped"] == ["visit"] and "visit__hour_sin" in record["added"]
    tab = solver.task.train.inputs["tab"]  # what AutoGluon and the networks read
    assert "visit" not in tab and {"visit__hour", "visit__elapsed_days"} <= set(tab.columns)
    assert list(tab.index) == list(plain.task.train.inputs["tab"].index)
    assert set(solver.task.test.inputs["tab"].columns) == set(tab.columns)


def test_a_network_refits_on_every_row_for_its_best_epochs_unless_no_refit(example_copy):
    ws = example_copy("diabetes")
    budget = replace(PRESETS["quick"], n_trials=1, max_epochs=4, min_epochs=4)
    kept = Solver(ws, budget, log=lambda m: None, features=False, refit=False).build("network", "network-1")
    files = Workspace(ws).solution("network-1")
    np.testing.assert_array_equal(kept.test_pred, np.load(files.trial(0))["test_pred"])  # the trial's own
    assert kept.details["refit"] is None and not files.refit.exists()
    assert (kept.details["work"]["trials"], kept.details["work"]["epochs"]) == (1, 4)
    assert kept.details["search"]["method"] == "no search"
    solver = Solver(ws, budget, log=lambda m: None, features=False)  # resumes the recorded trial, then refits
    refitted = solver.build("network", "network-1")
    rows, epochs = len(solver.task.y), refitted.details["best_trial"]["best_epoch"]
    whole = rows - (rows % budget.batch_size == 1)  # a last batch of one row is dropped (batch norm)
    assert refitted.details["refit"]["rows"] == rows and refitted.details["refit"]["epochs"] == epochs
    assert refitted.details["refit"]["samples"] == epochs * whole
    np.testing.assert_array_equal(refitted.val_pred, kept.val_pred)  # validated on rows the trial never saw
    assert refitted.val_score == kept.val_score and not np.allclose(refitted.test_pred, kept.test_pred)
    assert f"refitted on all {rows} rows for {epochs} epochs" in refitted.plan
    # the blender combines the test predictions of the model it saw validate: the trial's, kept beside the refit's
    assert kept.validated_test_pred is None
    solver.save(refitted)
    reloaded = solver.load("network-1")
    np.testing.assert_array_equal(reloaded.test_pred, refitted.test_pred)
    np.testing.assert_array_equal(reloaded.blend_test_pred, kept.test_pred)


def test_a_networks_early_stopped_trials_pay_for_more_trials_within_its_planned_work(example_copy):
    """A trial is planned at its most epochs, but early stopping ends most sooner: the work a trial leaves unspent,
    counted from the epochs it ran, pays for another, as far as the budget's trials."""
    from agentk.solve.budgets import NetworkPlan

    quick = replace(PRESETS["quick"], n_trials=4, max_epochs=40, min_epochs=40, patience=1, network_seconds=1e6)
    ws = example_copy("diabetes")
    roomy = Solver(ws, quick, log=lambda m: None, features=False).build("network", "network-1").details["work"]
    assert roomy["trials"] == 4
    # room for one trial and a half at their most epochs: the plan runs one, early stopping leaves room for more
    tight = replace(quick, network_seconds=roomy["fixed_seconds"] + 1.5 * roomy["trial_seconds"])
    shutil.rmtree(Workspace(ws).solution("network-1").folder)
    said = []
    solution = Solver(ws, tight, log=said.append, features=False).build("network", "network-1")
    work = NetworkPlan(**{k: v for k, v in solution.details["work"].items() if k in NetworkPlan.__dataclass_fields__})
    records = read_jsonl(Workspace(ws).solution("network-1").trials)
    ran = [r["epochs"] for r in records]
    assert work.trials == 1 and len(records) > 1 and all(e < work.epochs for e in ran[:-1])
    assert len(records) == work.affordable(ran) <= tight.n_trials  # as many as the epochs run pay for, no more
    assert work.affordable(ran[:-1]) == len(records)  # the last one was paid for by those before it
    assert f"{len(records)} trials" in solution.plan and "more (up to 4)" in " ".join(said)


def test_a_model_that_cannot_be_built_leaves_the_others(example_copy, monkeypatch):
    """AutoGluon on 3.2 million rows trained no model in its time limit: that solution is reported as failed and
    the solve goes on with the others."""
    import tools.autogluon_tool

    def no_model(task, **kwargs):
        raise RuntimeError("AutoGluon trained no model for output 0 (y): LightGBM: TimeLimitExceeded")

    monkeypatch.setattr(tools.autogluon_tool, "fit_autogluon", no_model)
    ws = example_copy("diabetes")
    said = []
    budget = replace(PRESETS["quick"], n_trials=1, max_epochs=3, min_epochs=3)
    summary = Solver(ws, budget, log=said.append, features=False, cross_validate=False).run()
    ids = [s["id"] for s in summary["solutions"]]
    assert summary["status"] == "done" and "autogluon" not in ids and {"constant", "network-1"} <= set(ids)
    assert read_json(Workspace(ws).solution("autogluon").skipped)["failed"].startswith("RuntimeError: AutoGluon")
    assert any(line.startswith("autogluon: FAILED (RuntimeError") for line in said)
    assert (ws / "submission.csv").exists()
