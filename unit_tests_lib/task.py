"""Unit tests of the task-understanding stages: fetch, summarise, modalities."""

from __future__ import annotations

import json
from pathlib import Path

from agentk.competition.dataview import find_tables
from agentk.competition.files import split_folders
from agentk.modalities import MODALITIES
from agentk.workspace import Workspace
from unit_tests_lib.common import fail, prediction_columns, sample_submission

TASK_TYPES = ("BinCls", "MultiCls", "MultiTgtCls", "Reg", "MultiTgtReg")


def check_fetched(ws: Path) -> None:
    w = Workspace(ws)
    raw = w.raw
    if not raw.is_dir() or not any(raw.iterdir()):
        fail(f"{w.RAW}/ is empty: link or download the competition files into it")
    tables = find_tables(raw)
    if "sample" not in tables:
        fail(f"{w.RAW}/ has no sample submission: the competition files are incomplete")
    if "train" not in tables and not split_folders(raw, "train"):
        fail(f"{w.RAW}/ has neither a train table nor a train folder: the competition files are incomplete")
    desc = w.description
    if not desc.exists() or not desc.read_text().strip():
        fail(f"{desc.relative_to(ws)} is missing or empty: save the competition description there")


def check_summary(ws: Path) -> None:
    path = Workspace(ws).summary
    text = path.read_text() if path.exists() else ""
    if len(text.strip()) < 100:
        fail(
            f"{path.name} has {len(text.strip())} characters: summarise the goal, the evaluation metric, "
            "the files and the submission format"
        )
    if "metric" not in text.lower() and "evaluat" not in text.lower():
        fail(f"{path.name} does not say how submissions are evaluated: add the metric")
    sample = sample_submission(ws)
    if sample.columns[0] not in text:
        fail(
            f"{path.name} does not name the submission's id column {sample.columns[0]!r}: describe the submission format"
        )


def check_modalities(ws: Path) -> None:
    path = Workspace(ws).modalities
    try:
        spec = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        fail(f"{path.name} is not valid JSON ({exc}): write an object with inputs, targets and task_type")
    for key in ("inputs", "targets", "task_type"):
        if key not in spec:
            fail(f"{path.name} lacks {key!r}: expected keys inputs, targets, task_type")
    names = sorted(MODALITIES)
    if not spec["inputs"] or not set(spec["inputs"]) <= set(names):
        fail(f"{path.name} inputs {spec['inputs']} must be a non-empty subset of {names}")
    if not spec["targets"] or not set(spec["targets"]) <= set(names):
        fail(f"{path.name} targets {spec['targets']} must be a non-empty subset of {names}")
    if spec["task_type"] not in TASK_TYPES:
        fail(f"{path.name} task_type {spec['task_type']!r} must be one of {sorted(TASK_TYPES)}")
    n_targets = len(prediction_columns(ws))
    if spec["task_type"] == "Reg" and n_targets > 1:
        fail(f"task_type Reg but the sample submission has {n_targets} prediction columns: use MultiTgtReg")
