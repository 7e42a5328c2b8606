"""benchmarks/scale.py without agentk: its generated competitions (the Kaggle layout, the id kinds, a best possible
score a model can approach but not reach), its grader, and the process-tree memory sampler it measures agentk with."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from benchmarks.scale import GENERATORS, PIXELS, graded, measured, write

HEADINGS = ("## Description", "## Evaluation", "## Submission File")


@pytest.mark.parametrize("family, rows", [("table", 2000), ("texts", 2000), ("images", 150)])
def test_each_family_writes_a_kaggle_layout_with_its_kind_of_id(tmp_path, family, rows):
    problem = GENERATORS[family](rows, np.random.default_rng(0))
    write(problem, tmp_path)
    train = pd.read_csv(tmp_path / "train.csv", dtype={"id": str})
    test = pd.read_csv(tmp_path / "test.csv", dtype={"id": str})
    sample = pd.read_csv(tmp_path / "sample_submission.csv", dtype={"id": str})
    assert len(train) + len(test) == rows and len(test) == rows // 5
    target = problem.target
    assert train.columns[0] == "id" and train.columns[-1] == target and list(test.columns) == list(train.columns[:-1])
    assert list(sample.columns) == ["id", target] and sample["id"].tolist() == test["id"].tolist()
    assert set(train[target]) == {0, 1} and not set(train["id"]) & set(test["id"])
    assert all(h in (tmp_path / "description.md").read_text() for h in HEADINGS)
    ids = pd.concat([train["id"], test["id"]])
    if family == "table":
        assert problem.id_kind == "numeric" and train.shape[1] == 62 and ids.str.fullmatch(r"\d+").all()
    elif family == "texts":
        assert problem.id_kind == "hex string" and ids.str.fullmatch(r"[0-9a-f]{16}").all()
        assert ids.str.fullmatch(r"\d+e\d+").any() and ids.str.fullmatch(r"0\d{15}").any()  # they read as numbers
    else:
        assert problem.id_kind == "file name" and ids.str.fullmatch(r"[a-z0-9]{6}\.jpg").all()
        for sub, frame in (("train", train), ("test", test)):
            with Image.open(tmp_path / sub / frame["id"].iloc[0]) as img:
                assert img.size == (PIXELS, PIXELS) and img.format == "JPEG"
        assert sum(1 for _ in (tmp_path / "train").iterdir()) == len(train)


@pytest.mark.parametrize("family", ["table", "texts", "images"])
def test_the_best_possible_score_leaves_room_both_ways(family):
    best = GENERATORS[family](20_000, np.random.default_rng(1)).best()  # 4,000 test rows: AUC within about 0.01
    assert 0.75 < best < 0.92


def test_the_grader_reads_ids_as_text_and_says_which_id_is_missing(tmp_path):
    # not read_csv's inference: pandas 2.3 segfaults on some ids such as 028e454608203890 (pandas issue 62617)
    problem = GENERATORS["texts"](500, np.random.default_rng(0))
    sub = pd.DataFrame({"id": problem.test["id"], "liked": problem.truth})
    sub.to_csv(tmp_path / "right.csv", index=False)
    assert graded(tmp_path / "right.csv", problem) == pytest.approx(problem.best(), abs=1e-3)  # ties one ulp apart
    sub.assign(id=sub["id"].str.upper()).to_csv(tmp_path / "mangled.csv", index=False)
    with pytest.raises(ValueError, match="test ids without a prediction"):
        graded(tmp_path / "mangled.csv", problem)


def test_the_peak_memory_counts_a_grandchilds_allocation_and_a_stuck_command_is_killed(tmp_path):
    allocate = "import time; b = b'x' * (300 << 20); time.sleep(1.5)"  # 315 MB, every page written
    child = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {allocate!r}], check=True)"
    m = measured([sys.executable, "-c", child], tmp_path / "alloc.log")
    assert m.rc == 0 and m.seconds > 1.5 and m.peak_gb > 0.3
    m = measured(
        [sys.executable, "-c", "print('started', flush=True); import time; time.sleep(60)"],
        tmp_path / "stuck.log",
        timeout=1,
    )
    assert m.rc is None and m.seconds < 10 and m.last_line == "started"
