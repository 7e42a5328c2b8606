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
# a many-class table and a kind to refuse (detection) on every run; a time-ordered regression (80 s) in the slow run:
# tests/test_fixture_forecasts.py reads test rows after train's in time as a forecast by default
SAMPLE = (
    pytest.param("bike-sharing-demand", marks=pytest.mark.slow),
    "otto-group-product-classification-challenge",
    "global-wheat-detection",
)

pytestmark = pytest.mark.skipif(not (CORPUS / "build.py").is_file(), reason="../shared/kaggle-layouts is not here")


@pytest.fixture(scope="module")
def record(tmp_path_factory):
    """competition -> its benchmark record: each competition set up by its own benchmark run into one output folder
    (the corpus built once; the records accumulate in its kaggle_layouts.json)."""
    out = tmp_path_factory.mktemp("kaggle-layouts")

    def get(name: str) -> dict:
        cmd = [sys.executable, str(ROOT / "benchmarks" / "kaggle_layouts.py"), "--set", "zoo2", "--only", name]
        run = subprocess.run(
            [*cmd, "--out", str(out), "--corpus", str(CORPUS), "--timeout", "900"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=1200,
        )
        path = out / "kaggle_layouts.json"
        recs = json.loads(path.read_text()) if path.is_file() else {}
        assert name in recs, run.stdout[-3000:] + run.stderr[-3000:]
        return recs[name]

    return get


@pytest.mark.parametrize("name", SAMPLE)
def test_a_sampled_competition_is_handled(record, name):
    from benchmarks.kaggle_layouts import handled

    rec = record(name)
    why = rec.get("setup_reason") or (rec.get("setup_grade") or {}).get("error") or rec.get("setup_normalised")
    assert handled(rec), f"{name}: exit {rec.get('setup_rc')}: {why}"
    if rec.get("supported", True):  # a valid submission in the grader's eyes, above the sample submission
        assert rec["setup_grade"]["valid"] and rec["setup_normalised"] > 0
    else:
        assert rec["setup_rc"] == 2 and rec["refused"]
