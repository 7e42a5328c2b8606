"""The CLI's bad-input contract, through real `agentk setup` subprocesses.

Bad input or an unsupported task: exit 2, stderr is ONE line `agentk: <what is wrong>`, and the
workspace is not created. The agent trying and failing: exit 1, one `agentk:` line naming the
stage, and <ws>/setup.json says where it failed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).parents[1]

DESCRIPTION = """# Toy competition

## Description

Predict the binary label `y` of each row from `x` and `cat`.

## Evaluation

Submissions are evaluated on accuracy, the share of rows whose label is predicted correctly.

## Data

- train.csv - the training set with the target `y`
- test.csv - the test set
- sample_submission.csv - a sample submission in the correct format
"""

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16  # a few bytes with a PNG signature
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt " + b"\x00" * 16


def agentk(*args: str | Path, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "80"}  # a fixed, ordinary terminal width
    return subprocess.run(
        [sys.executable, "-m", "agentk.cli", *map(str, args)],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def setup(src: Path, ws: Path, *extra: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return agentk("setup", src, "--workspace", ws, *extra, timeout=timeout)


def make_base(folder: Path, n_train: int = 40, n_test: int = 10) -> Path:
    """A valid tiny tabular competition."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    n = n_train + n_test
    x = rng.normal(size=n).round(4)
    cat = rng.choice(["a", "b", "c"], size=n)
    y = (x + rng.normal(scale=0.5, size=n) > 0).astype(int)
    (folder / "description.md").write_text(DESCRIPTION)
    pd.DataFrame({"id": range(n_train), "x": x[:n_train], "cat": cat[:n_train], "y": y[:n_train]}).to_csv(
        folder / "train.csv", index=False
    )
    pd.DataFrame({"id": range(n_train, n), "x": x[n_train:], "cat": cat[n_train:]}).to_csv(
        folder / "test.csv", index=False
    )
    pd.DataFrame({"id": range(n_train, n), "y": 0}).to_csv(folder / "sample_submission.csv", index=False)
    return folder


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    return make_base(tmp_path_factory.mktemp("base") / "toy-comp")


@pytest.fixture
def comp(base, tmp_path) -> Path:
    """A fresh copy of the valid competition to break."""
    return Path(shutil.copytree(base, tmp_path / "comp"))


def assert_bad_input(proc: subprocess.CompletedProcess, keyword: str, ws: Path | None = None) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, f"exit {proc.returncode}, stderr:\n{proc.stderr}"
    assert len(lines) == 1, f"bad input must be ONE stderr line, got {len(lines)}:\n{proc.stderr}"
    line = lines[0]
    assert line.startswith("agentk:"), line
    assert "Traceback" not in proc.stderr
    assert keyword.lower() in line.lower(), f"{keyword!r} not in {line!r}"
    if ws is not None:
        assert not ws.exists(), f"the workspace was created for bad input: {sorted(p.name for p in ws.iterdir())}"
    return line


# ---- the competition folder -------------------------------------------------------------------
def test_missing_folder(tmp_path):
    ws = tmp_path / "ws"
    assert_bad_input(setup(tmp_path / "no-such-competition", ws), "no such folder", ws)


def test_a_file_instead_of_a_folder(tmp_path):
    ws = tmp_path / "ws"
    archive = tmp_path / "competition.zip"
    archive.write_bytes(b"PK\x03\x04 not really a zip")
    assert_bad_input(setup(archive, ws), "not a folder", ws)


@pytest.mark.parametrize(
    "missing, keyword",
    [("train.csv", "no training data"), ("test.csv", "no test data"), ("sample_submission.csv", "sample submission")],
)
def test_missing_table(comp, tmp_path, missing, keyword):
    (comp / missing).unlink()
    ws = tmp_path / "ws"
    assert_bad_input(setup(comp, ws), keyword, ws)


def test_empty_train(comp, tmp_path):
    (comp / "train.csv").write_bytes(b"")
    ws = tmp_path / "ws"
    line = assert_bad_input(setup(comp, ws), "empty", ws)
    assert "train.csv" in line


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(b"\x00\xff\xfe garbage", id="binary"),
        pytest.param(b"id,x,cat,y\n0,0.5,a,1\n1,0.2,b,0,7,8,9\n2,0.1,c,1\n", id="ragged"),
    ],
)
def test_corrupt_train(comp, tmp_path, content):
    (comp / "train.csv").write_bytes(content)
    ws = tmp_path / "ws"
    line = assert_bad_input(setup(comp, ws), "not a readable table", ws)
    assert "train.csv" in line


def test_header_only_train(comp, tmp_path):
    (comp / "train.csv").write_text("id,x,cat,y\n")
    ws = tmp_path / "ws"
    assert_bad_input(setup(comp, ws), "no rows", ws)


def test_corrupt_gzipped_train(comp, tmp_path):
    (comp / "train.csv").unlink()
    (comp / "train.csv.gz").write_bytes(b"this is not gzip data")
    ws = tmp_path / "ws"
    assert_bad_input(setup(comp, ws), "train.csv.gz", ws)


def test_sample_submission_with_one_column(comp, tmp_path):
    pd.DataFrame({"id": range(40, 50)}).to_csv(comp / "sample_submission.csv", index=False)
    ws = tmp_path / "ws"
    assert_bad_input(setup(comp, ws), "one column", ws)


# ---- unsupported tasks ------------------------------------------------------------------------
def test_audio_competition(comp, tmp_path):
    (comp / "train").mkdir()
    for i in range(6):
        (comp / "train" / f"clip_{i}.wav").write_bytes(WAV)
    ws = tmp_path / "ws"
    assert_bad_input(setup(comp, ws), "audio", ws)


def test_image_to_image_competition(comp, tmp_path):
    for folder in ("train", "train_cleaned"):
        (comp / folder).mkdir()
        for i in range(6):
            (comp / folder / f"{i}.png").write_bytes(PNG)
    ws = tmp_path / "ws"
    assert_bad_input(setup(comp, ws), "image-to-image", ws)


def test_sequence_to_sequence_competition(comp, tmp_path):
    rng = np.random.default_rng(1)
    words = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta", "zeta", "lambda"]
    before = [f"token {i}" for i in range(50)]
    after = [" ".join(rng.choice(words, size=3)) + f" {i}" for i in range(50)]
    pd.DataFrame({"id": range(40), "before": before[:40], "after": after[:40]}).to_csv(comp / "train.csv", index=False)
    pd.DataFrame({"id": range(40, 50), "before": before[40:]}).to_csv(comp / "test.csv", index=False)
    pd.DataFrame({"id": range(40, 50), "after": "x"}).to_csv(comp / "sample_submission.csv", index=False)
    ws = tmp_path / "ws"
    assert_bad_input(setup(comp, ws), "sequence-to-sequence", ws)


def test_unlabelled_train_image_folder(tmp_path):
    comp = tmp_path / "images"
    for split in ("train", "test"):
        (comp / split).mkdir(parents=True)
        for i in range(12):
            (comp / split / f"{i}.png").write_bytes(PNG)  # no class folders, no label in the name, no CSV
    (comp / "description.md").write_text(DESCRIPTION)
    pd.DataFrame({"id": range(12), "label": "cat"}).to_csv(comp / "sample_submission.csv", index=False)
    ws = tmp_path / "ws"
    assert_bad_input(setup(comp, ws), "carry no labels", ws)


def test_no_training_data_at_all(tmp_path):
    comp = tmp_path / "comp"
    comp.mkdir()
    (comp / "description.md").write_text(DESCRIPTION)
    pd.DataFrame({"id": range(4), "x": 1.0}).to_csv(comp / "test.csv", index=False)
    pd.DataFrame({"id": range(4), "y": 0}).to_csv(comp / "sample_submission.csv", index=False)
    ws = tmp_path / "ws"
    assert_bad_input(setup(comp, ws), "no training data", ws)


def test_broken_zip_archive(comp, tmp_path):
    (comp / "test_images.zip").write_bytes(b"PK\x03\x04 this is not really a zip")
    ws = tmp_path / "ws"
    assert_bad_input(setup(comp, ws), "broken archive", ws)


# ---- the workspace ----------------------------------------------------------------------------
def test_non_empty_folder_that_is_not_a_workspace(base, tmp_path):
    ws = tmp_path / "precious"
    ws.mkdir()
    (ws / "notes.txt").write_text("do not delete me")
    (ws / "sub").mkdir()
    (ws / "sub" / "data.bin").write_bytes(b"\x01\x02")
    proc = setup(base, ws)
    assert_bad_input(proc, "not an agentk workspace")
    assert sorted(str(p.relative_to(ws)) for p in ws.rglob("*")) == ["notes.txt", "sub", "sub/data.bin"]
    assert (ws / "notes.txt").read_text() == "do not delete me"
    assert (ws / "sub" / "data.bin").read_bytes() == b"\x01\x02"


def test_resume_with_nothing_to_resume(tmp_path):
    ws = tmp_path / "empty-ws"
    ws.mkdir()
    assert_bad_input(agentk("setup", "--resume", "--workspace", ws), "nothing to resume")
    assert list(ws.iterdir()) == []


def test_resume_of_a_missing_workspace(tmp_path):
    ws = tmp_path / "no-ws"
    assert_bad_input(agentk("setup", "--resume", "--workspace", ws), "nothing to resume", ws)


def test_setup_twice_needs_resume_or_force(base, tmp_path):
    ws = tmp_path / "ws"
    first = setup(base, ws, timeout=240)
    assert first.returncode == 0, first.stderr[-3000:]
    state = json.loads((ws / "setup.json").read_text())
    assert state["status"] == "done"
    assert (ws / "submission.csv").exists()
    before = (ws / "setup.json").read_text()

    second = setup(base, ws)
    line = assert_bad_input(second, "--resume")
    assert "--force" in line
    assert (ws / "setup.json").read_text() == before, "the refused run must leave the workspace as it was"
    assert (ws / "submission.csv").exists()


# ---- the agent tries and fails: exit 1 ---------------------------------------------------------
def test_undecidable_target_fails_with_exit_1(comp, tmp_path):
    rng = np.random.default_rng(2)
    train = pd.read_csv(comp / "train.csv").drop(columns="y")
    train["u"] = rng.integers(0, 2, len(train))  # two train-only columns: which one is 'z'?
    train["v"] = rng.normal(size=len(train)).round(3)
    train.to_csv(comp / "train.csv", index=False)
    pd.DataFrame({"id": range(40, 50), "z": 0}).to_csv(comp / "sample_submission.csv", index=False)
    ws = tmp_path / "ws"

    proc = setup(comp, ws, "--stage-attempts", "2")
    assert proc.returncode == 1, f"exit {proc.returncode}, stderr:\n{proc.stderr}"
    assert "Traceback" not in proc.stderr
    state = json.loads((ws / "setup.json").read_text())
    assert state["status"] == "failed"
    assert state["failed_stage"]
    assert state["reason"]
    assert state["stages"][state["failed_stage"]]["status"] == "failed"
    assert state["stages"][state["failed_stage"]]["attempts"] == 2

    lines = proc.stderr.strip().splitlines()
    said = [l for l in lines if l.startswith("agentk:")]
    assert len(said) == 1, proc.stderr
    assert said[0] == lines[-1], f"the agentk: line must be the whole last line of stderr:\n{proc.stderr}"
    assert state["failed_stage"] in said[0]
    assert "setup.json" in said[0]
