"""`agentk setup` end to end on the bundled examples: every unit and meta-unit test passes, the expert
picks the competition's metric, and the formatter reproduces the sample submission's format."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest
from conftest import EXAMPLE_NAMES, EXAMPLES, ROOT, agentk, example_meta

from agentk.core.errors import BadInput
from agentk.core.fileio import read_jsonl
from agentk.core.lock import hold
from agentk.workspace import Workspace

sys.path.insert(0, str(EXAMPLES))
from grade import grade  # noqa: E402

# the one example whose setup no other test shares, in the slow run (`pytest -m slow`): docstring-library (60 s, a
# text field in JSON records; tests/test_layout_fuzz.py's seed 341 sets up JSON records by default, and
# tests/test_classical_txt.py and tests/test_fusion.py fit texts)
SLOW_EXAMPLES = ("docstring-library",)
NAMES = [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_EXAMPLES else n for n in EXAMPLE_NAMES]


def load(ws, name):
    spec = importlib.util.spec_from_file_location(f"{ws.name}_{name}", ws / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("name", NAMES)
def test_setup_passes_every_test(example_ws, name):
    ws, proc = example_ws(name)
    assert proc.returncode == 0, proc.stderr[-3000:]
    state = json.loads((ws / "setup.json").read_text())
    assert state["status"] == "done"
    tests = [v for st in state["stages"].values() for v in st["tests"].values()]
    assert tests and all(v == "passed" for v in tests)
    assert {k: v["status"] for k, v in state["meta_tests"].items()} == {
        "map_dataset_train": "passed",
        "test_maps_match": "passed",
        "final_light_solve": "passed",
    }
    modalities = json.loads((ws / "modalities.json").read_text())
    meta = example_meta(name)
    assert modalities == {"inputs": meta["modalities"]["inputs"], "targets": ["tab"], "task_type": meta["task_type"]}
    assert sorted(p.name for p in ws.glob("*_input_map.csv")) == sorted(
        f"{split}_{m}_input_map.csv" for split in ("train", "test") for m in modalities["inputs"]
    )
    rows = read_jsonl(ws / "trajectory.jsonl")
    assert {r["stage"] for r in rows} >= set(state["stages"]) and all(r["passed"] for r in rows)


@pytest.mark.parametrize("name", NAMES)
def test_expert_picks_the_competitions_metric(example_ws, name):
    ws, _ = example_ws(name)
    metric = load(ws, "code_metric")
    assert metric.METRIC == example_meta(name)["metric"]
    assert metric.HIGHER_IS_BETTER == (not example_meta(name)["lower_is_better"])
    assert "import agentk" not in (ws / "code_metric.py").read_text()


@pytest.mark.parametrize("name", NAMES)
def test_formatter_turns_training_targets_into_the_sample_format(example_ws, name, monkeypatch, tmp_path):
    ws, _ = example_ws(name)
    monkeypatch.chdir(ws)  # generated code runs with the workspace as its working directory
    transform, sample = (
        load(ws, "code_transform_tab_target_train"),
        pd.read_csv(EXAMPLES / name / "sample_submission.csv"),
    )
    targets = pd.read_csv(ws / "train_tab_target_map.csv", dtype={"id": str}).drop(columns="id")
    rows = np.resize(np.arange(len(targets)), len(sample))
    preds = transform.inverse_transform(transform.transform(targets.iloc[rows].reset_index(drop=True)))
    for module in ("code_submission_format", "code_submission_format_alt"):
        sub = load(ws, module).format_submission(sample.iloc[:, 0].astype(str), preds)
        path = tmp_path / f"check_{module}.csv"
        sub.to_csv(path, index=False)
        back = pd.read_csv(path)
        assert list(back.columns) == list(sample.columns)
        assert set(back.iloc[:, 0]) == set(sample.iloc[:, 0]) and len(back) == len(sample)
        assert back.dtypes.map(lambda d: d.kind).tolist() == sample.dtypes.map(lambda d: d.kind).tolist() or all(
            (a.kind in "if") == (b.kind in "if") for a, b in zip(back.dtypes, sample.dtypes)
        )


@pytest.mark.parametrize("name", NAMES)
def test_light_solve_submission_beats_the_sample_submission(example_ws, name):
    ws, _ = example_ws(name)
    meta = example_meta(name)
    ours = grade(name, ws / "submission.csv")
    constant = grade(name, EXAMPLES / name / "sample_submission.csv")
    assert (ours < constant) if meta["lower_is_better"] else (ours > constant), (ours, constant)


def test_resume_after_kill_does_not_redo_passed_stages(tmp_path):
    """A setup killed mid-run leaves its lock free at once (the OS drops it with its holder) and a state that
    --resume finishes without redoing a passed stage."""
    ws = tmp_path / "ws"
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentk", "setup", EXAMPLES / "iris-species", "--workspace", ws],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            state = json.loads((ws / "setup.json").read_text())
        except (OSError, json.JSONDecodeError):
            state = {}
        if state.get("stages", {}).get("train_tab_input_map", {}).get("status") == "passed":
            break
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)  # the `agentk` process and the watched child running the setup
    proc.wait()
    for _ in range(
        100
    ):  # free as soon as the child is gone too, though a stage's sandboxed process may still be ending
        try:
            with hold(Workspace(ws).lock):
                break
        except BadInput:
            time.sleep(0.05)
    else:
        raise AssertionError("the killed setup's lock was still held after 5 s")
    before = json.loads((ws / "setup.json").read_text())
    assert before["status"] == "running"
    done_before = [r["stage"] for r in read_jsonl(ws / "trajectory.jsonl")]
    assert "train_tab_input_map" in done_before and "metric" not in done_before

    resumed = agentk("setup", "--resume", "--workspace", ws)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    rows = read_jsonl(ws / "trajectory.jsonl")
    stages = [r["stage"] for r in rows]
    assert stages[: len(done_before)] == done_before
    assert len(stages) == len(set(stages))  # nothing passed was redone
    assert json.loads((ws / "setup.json").read_text())["status"] == "done"


@pytest.mark.slow  # a full setup (22 s); tests/test_analysis.py reads this layout's TSV, ids and target by default
def test_awkward_layout_end_to_end(tmp_path):
    """TSV tables, no id column in test (ids from the sample by position), a target under another name,
    True/False features with gaps, labels scored by F1."""
    rng = np.random.default_rng(0)
    n = 300
    x = rng.normal(size=n + 60)
    flag = np.where(rng.random(n + 60) < 0.1, None, np.where(x > 0, "True", "False"))
    src = tmp_path / "comp"
    src.mkdir()
    (src / "README.md").write_text(
        "# Spam or ham\n\nTell spam from ham.\n\n## Evaluation\n\nSubmissions are scored by their F1 score.\n"
    )
    pd.DataFrame(
        {"x": x[:n], "flag": flag[:n], "label": np.where(x[:n] + rng.normal(0, 0.3, n) > 0, "spam", "ham")}
    ).to_csv(src / "train.tsv", sep="\t", index=False)
    pd.DataFrame({"x": x[n:], "flag": flag[n:]}).to_csv(src / "test.tsv", sep="\t", index=False)
    pd.DataFrame({"ImageId": range(1, 61), "Prediction": "ham"}).to_csv(src / "sample_submission.csv", index=False)
    ws = tmp_path / "ws"
    proc = agentk("setup", src, "--workspace", ws)
    assert proc.returncode == 0, proc.stderr[-3000:]
    sub = pd.read_csv(ws / "submission.csv")
    assert sub["ImageId"].tolist() == list(range(1, 61)) and set(sub["Prediction"]) <= {"spam", "ham"}
    truth = np.where(x[n:] > 0, "spam", "ham")
    assert (sub["Prediction"].to_numpy() == truth).mean() > 0.8  # rows kept in the sample's order
