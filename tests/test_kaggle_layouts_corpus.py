"""A sample of ../shared/kaggle-layouts on every run: benchmarks/kaggle_layouts.py builds the zoo2 set (no mle-bench
mirror needed), sets each sampled competition up with the expert policy and grades its submission with the corpus'
own grader. Each must be handled as the corpus benchmark counts it: set up with a valid submission above the
constant (the sample submission), or refused by kind. The whole corpus runs in the benchmark."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "kaggle-layouts"
# a time-ordered regression, a many-class table and a kind to refuse (detection)
SAMPLE = ("bike-sharing-demand", "otto-group-product-classification-challenge", "global-wheat-detection")

pytestmark = pytest.mark.skipif(not (CORPUS / "build.py").is_file(), reason="../shared/kaggle-layouts is not here")


@pytest.fixture(scope="module")
def records(tmp_path_factory) -> dict[str, dict]:
    out = tmp_path_factory.mktemp("kaggle-layouts")
    cmd = [sys.executable, str(ROOT / "benchmarks" / "kaggle_layouts.py"), "--set", "zoo2", "--only", *SAMPLE]
    run = subprocess.run(
        [*cmd, "--out", str(out), "--corpus", str(CORPUS), "--timeout", "900"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=2400,
    )
    recs = json.loads((out / "kaggle_layouts.json").read_text()) if (out / "kaggle_layouts.json").is_file() else {}
    assert set(recs) == set(SAMPLE), run.stdout[-3000:] + run.stderr[-3000:]
    return recs


@pytest.mark.parametrize("name", SAMPLE)
def test_a_sampled_competition_is_handled(records, name):
    from benchmarks.kaggle_layouts import handled

    rec = records[name]
    why = rec.get("setup_reason") or (rec.get("setup_grade") or {}).get("error") or rec.get("setup_normalised")
    assert handled(rec), f"{name}: exit {rec.get('setup_rc')}: {why}"
    if rec.get("supported", True):  # a valid submission in the grader's eyes, above the sample submission
        assert rec["setup_grade"]["valid"] and rec["setup_normalised"] > 0
    else:
        assert rec["setup_rc"] == 2 and rec["refused"]
