"""The workspace contract (the setup's and the solve's output): every file of a workspace and every setup
stage is named here and nowhere else, and generated modules and maps are loaded from here.

    <ws>/raw/                                the competition's files (links into the user's folder, or downloads)
    <ws>/task/description.md, evaluation.md, data.md, meta.json      the scraped pages
    <ws>/summary.md, modalities.json, plan.json                      the text stages' outputs
    <ws>/{train,test}_<modality>_input_map.csv                       first column "id"; one per input modality
    <ws>/train_tab_target_map.csv                                     first column "id"; one column per target
    <ws>/code_<stage>.py                                              every stage's generated code
    <ws>/setup.json, trajectory.jsonl, llm_log.jsonl                 the setup's state, steps and LLM calls
    <ws>/solutions/split.json, features.json, <id>/...               the solve (Solution files below)
    <ws>/solve.json, submission.csv, submissions.json, final_pick.json
    <ws>/logs/setup.log, logs/solve.log                               every detail the consoles leave out
    <ws>/report.html                                                  `agentk report`: what happened, self-contained
    <ws>/.agentk.lock                                                 one run at a time (agentk.core.lock)
    <ws>/cache/                                       inputs the solve decoded once (memory-mapped images)
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

# ---- setup stages: names and the roles meta-tests select them by -------------------------------------
FETCH, SUMMARISE, MODALITIES, PLAN = "fetch", "summarise", "modalities", "plan"
TARGET_MAP = "train_tab_target_map"
TARGET_TRANSFORM = "transform_tab_target_train"
SUBMISSION_FORMAT, SUBMISSION_FORMAT_ALT = "submission_format", "submission_format_alt"
METRIC = "metric"
SPLITS = ("train", "test")

# What a stage does: a meta-test covers the pipeline's stages whose role it declares (agentk.setup_pipeline).
ROLE_TASK = "task"  # fetch, summarise, modalities, plan
ROLE_TARGET_MAP, ROLE_TARGET_TRANSFORM = "target_map", "target_transform"
ROLE_SUBMISSION_FORMAT, ROLE_METRIC = "submission_format", "metric"
ROLE_INPUT_MAP = {split: f"{split}_input_map" for split in SPLITS}  # train_input_map, test_input_map


def input_map_stage(split: str, modality: str) -> str:
    """The stage building a split's input map of one modality (e.g. train_img_input_map)."""
    return f"{split}_{modality}_input_map"


def map_file(stage: str) -> str:
    """The table a map stage writes (e.g. train_img_input_map.csv)."""
    return f"{stage}.csv"


def code_file(stage: str) -> str:
    """The file a code stage's program is kept in."""
    return f"code_{stage}.py"


def code_module(stage: str) -> str:
    """The name a stage's generated module is imported under (code_<stage>)."""
    return Path(code_file(stage)).stem


class Workspace:
    """Paths of one workspace. Attributes are file names relative to the root; properties are paths."""

    RAW, TASK = "raw", "task"
    DESCRIPTION, EVALUATION, DATA, META = "description.md", "evaluation.md", "data.md", "meta.json"
    SUMMARY, MODALITIES, PLAN = "summary.md", "modalities.json", "plan.json"
    SETUP_STATE, TRAJECTORY, LLM_LOG = "setup.json", "trajectory.jsonl", "llm_log.jsonl"
    SOLUTIONS, SPLIT, SOLVE_SUMMARY = "solutions", "split.json", "solve.json"
    FEATURES = "features.json"  # the generic features the solve added to the tab inputs (tools/features.py)
    JOINS = "joins.json"  # the tables the expert's input maps join to train and test (the data graph)
    SUBMISSION, SUBMISSIONS, FINAL_PICK = "submission.csv", "submissions.json", "final_pick.json"
    LIGHT = "light"  # the solution id of the setup's final light solve
    LOCK = ".agentk.lock"  # held by the run using the folder (agentk.core.lock); the curriculum's out folder too
    LOGS, SETUP_LOG, SOLVE_LOG = "logs", "setup.log", "solve.log"
    REPORT = "report.html"
    CURRICULUM_STATE = "curriculum.json"  # a curriculum's out folder: its rounds (curriculum/runner.py)
    CACHE = "cache"  # decoded images too large for memory, frozen embeddings (tools/fusion.py); safe to delete

    def __init__(self, root: str | Path):
        self.root = Path(root)

    # the competition and its pages
    @property
    def raw(self) -> Path:
        return self.root / self.RAW

    @property
    def task(self) -> Path:
        return self.root / self.TASK

    @property
    def description(self) -> Path:
        return self.task / self.DESCRIPTION

    @property
    def evaluation(self) -> Path:
        return self.task / self.EVALUATION

    @property
    def data_page(self) -> Path:
        return self.task / self.DATA

    @property
    def meta(self) -> Path:
        return self.task / self.META

    # the text stages
    @property
    def summary(self) -> Path:
        return self.root / self.SUMMARY

    @property
    def modalities(self) -> Path:
        return self.root / self.MODALITIES

    @property
    def plan(self) -> Path:
        return self.root / self.PLAN

    # maps and generated code
    def input_map(self, split: str, modality: str) -> Path:
        return self.root / map_file(input_map_stage(split, modality))

    def input_maps(self, split: str) -> dict[str, Path]:
        """The split's input maps on disk, by modality (sorted by file name)."""
        prefix, suffix = map_file(input_map_stage(split, "*")).split("*")
        found = sorted(self.root.glob(f"{prefix}*{suffix}"))
        return {p.name[len(prefix) : -len(suffix)]: p for p in found}

    @property
    def target_map(self) -> Path:
        return self.root / f"{TARGET_MAP}.csv"

    def code(self, stage: str) -> Path:
        return self.root / code_file(stage)

    def load(self, stage: str):
        """Import a stage's generated module (code_<stage>.py) fresh from the workspace."""
        path = self.code(stage)
        if not path.exists():
            raise FileNotFoundError(f"{path.name} does not exist")
        name = path.stem
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module

    # the setup's record
    @property
    def lock(self) -> Path:
        return self.root / self.LOCK

    @property
    def setup_state(self) -> Path:
        return self.root / self.SETUP_STATE

    @property
    def trajectory(self) -> Path:
        return self.root / self.TRAJECTORY

    @property
    def llm_log(self) -> Path:
        return self.root / self.LLM_LOG

    # the solve
    @property
    def solutions(self) -> Path:
        return self.root / self.SOLUTIONS

    @property
    def split(self) -> Path:
        return self.solutions / self.SPLIT

    @property
    def features(self) -> Path:
        return self.solutions / self.FEATURES

    @property
    def joins(self) -> Path:
        return self.root / self.JOINS

    def solution(self, sid: str) -> Solution:
        return Solution(self.solutions / sid)

    @property
    def light(self) -> Solution:
        return self.solution(self.LIGHT)

    def image_cache(self, size: int, key: str) -> Path:
        """Images decoded at size x size px, uint8 (rows, size, size, 3) in .npy format; key: what was decoded."""
        return self.root / self.CACHE / f"img_{size}px_{key}.npy"

    def embedding_cache(self, modality: str, key: str) -> Path:
        """A frozen encoder's features of every row, float16 (rows, dim) in .npy format; key: what was embedded."""
        return self.root / self.CACHE / f"emb_{modality}_{key}.npy"

    @property
    def solve_summary(self) -> Path:
        return self.root / self.SOLVE_SUMMARY

    @property
    def submission(self) -> Path:
        return self.root / self.SUBMISSION

    @property
    def submissions(self) -> Path:
        return self.root / self.SUBMISSIONS

    @property
    def final_pick(self) -> Path:
        return self.root / self.FINAL_PICK

    # what a person reads
    @property
    def logs(self) -> Path:
        return self.root / self.LOGS

    @property
    def setup_log(self) -> Path:
        return self.logs / self.SETUP_LOG

    @property
    def solve_log(self) -> Path:
        return self.logs / self.SOLVE_LOG

    @property
    def report(self) -> Path:
        return self.root / self.REPORT

    @property
    def curriculum_state(self) -> Path:
        return self.root / self.CURRICULUM_STATE


@dataclass(frozen=True)
class Solution:
    """The files of solutions/<id>/: score.json is written last and marks the solution done."""

    folder: Path

    @property
    def id(self) -> str:
        return self.folder.name

    @property
    def plan(self) -> Path:
        return self.folder / Workspace.PLAN

    @property
    def score(self) -> Path:
        return self.folder / "score.json"

    @property
    def val_pred(self) -> Path:
        return self.folder / "val_pred.npy"

    @property
    def test_pred(self) -> Path:
        return self.folder / "test_pred.npy"

    @property
    def validated_test_pred(self) -> Path:
        """Test predictions of the model as validated (fitted on the fit rows), when the solution's own come from a
        refit: the blender's inputs, since the blender learned how those models predict."""
        return self.folder / "validated_test_pred.npy"

    @property
    def cross_validated(self) -> Path:
        """A small table's out-of-fold predictions over every train row, and the seconds they took
        (agentk/solve/cross_validation.py)."""
        return self.folder / "cross_validated.npz"

    @property
    def submission(self) -> Path:
        return self.folder / Workspace.SUBMISSION

    @property
    def trials(self) -> Path:
        return self.folder / "trials.jsonl"

    def trial(self, k: int) -> Path:
        return self.folder / f"trial_{k}.npz"

    @property
    def refit(self) -> Path:
        """A network's best trial retrained on every row: its test predictions and what it did."""
        return self.folder / "refit.npz"

    @property
    def models(self) -> Path:
        return self.folder / "models"

    @property
    def skipped(self) -> Path:
        return self.folder / "skipped.json"


def read_map(path: Path) -> pd.DataFrame:
    """A map (first column "id", read as text); ValueError naming the file when it is not one."""
    from agentk.parsing import read_csv  # here: the engine and the CLI name files without paying pandas' import

    frame = read_csv(path, dtype={"id": str})
    if len(frame.columns) == 0 or frame.columns[0] != "id":
        raise ValueError(f"{Path(path).name}: the first column must be 'id', found {list(frame.columns[:3])}")
    return frame
