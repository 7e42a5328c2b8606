"""The modality registry drives the setup: a modality registered in agentk.modalities (here a toy audio
entry) gets its train and test map stages in the pipeline, inside the meta-tests' coverage, a place in the
modalities stage's prompt and schema, and its files found in a competition folder."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from agentk.competition.file_inputs import modality_files
from agentk.competition.support import unsupported_reason
from agentk.modalities import MODALITIES, TABULAR, Modality
from agentk.setup_pipeline import setup_pipeline
from agentk.workspace import (
    METRIC,
    SUBMISSION_FORMAT,
    SUBMISSION_FORMAT_ALT,
    TARGET_MAP,
    TARGET_TRANSFORM,
    Workspace,
    input_map_stage,
)
from agentk.workspace import MODALITIES as MODALITIES_STAGE
from unit_tests_lib.task import check_modalities

TOY_MAP = """
from agentk.core.engine import Stage
from agentk.workspace import ROLE_INPUT_MAP, input_map_stage, map_file


def make(split):
    name = input_map_stage(split, "aud")
    return Stage(name, "Build the audio map.", output=map_file(name), role=ROLE_INPUT_MAP[split])
"""


@pytest.fixture
def audio(tmp_path, monkeypatch):
    (tmp_path / "toy_aud_input_map.py").write_text(TOY_MAP)
    monkeypatch.syspath_prepend(str(tmp_path))
    entry = Modality("aud", "audio", "audio clips", (".m4a",), "toy_aud_input_map", "tools.modality_aud")
    monkeypatch.setitem(MODALITIES, entry.name, entry)
    return entry


def workspace(tmp_path, inputs: list[str]) -> Workspace:
    w = Workspace(tmp_path / "ws")
    (w.raw / "train").mkdir(parents=True)
    for i in range(12):
        (w.raw / "train" / f"clip_{i}.m4a").write_bytes(b"RIFF")
    pd.DataFrame({"id": ["train/clip_0.m4a"], "label": ["a"]}).to_csv(w.raw / "sample_submission.csv", index=False)
    w.task.mkdir()
    w.description.write_text("Label each clip.")
    w.modalities.write_text(json.dumps({"inputs": inputs, "targets": [TABULAR.name], "task_type": "BinCls"}))
    return w


def test_a_registered_modality_gets_map_stages_in_pipeline_order_and_meta_test_coverage(tmp_path, audio):
    w = workspace(tmp_path, [TABULAR.name, audio.name])
    stages, metas = setup_pipeline(tmp_path)(w.root)
    train_maps = [input_map_stage("train", m) for m in (TABULAR.name, audio.name)]
    test_maps = [input_map_stage("test", m) for m in (TABULAR.name, audio.name)]
    assert [s.name for s in stages[4:]] == [
        *train_maps,
        TARGET_MAP,
        TARGET_TRANSFORM,
        *test_maps,
        SUBMISSION_FORMAT,
        SUBMISSION_FORMAT_ALT,
        METRIC,
    ]
    covers = {m.name: m.covers for m in metas}
    assert covers["map_dataset_train"] == [*train_maps, TARGET_MAP, TARGET_TRANSFORM]
    assert covers["test_maps_match"] == [*train_maps, TARGET_MAP, TARGET_TRANSFORM, *test_maps]
    assert covers["final_light_solve"] == [
        TARGET_MAP,
        TARGET_TRANSFORM,
        *test_maps,
        SUBMISSION_FORMAT,
        SUBMISSION_FORMAT_ALT,
        METRIC,
    ]

    only_audio = workspace(tmp_path / "other", [audio.name])
    names = [s.name for s in setup_pipeline(tmp_path)(only_audio.root)[0]]
    assert input_map_stage("train", audio.name) in names and input_map_stage("train", TABULAR.name) not in names


def test_a_registered_modality_is_in_the_modalities_prompt_schema_and_check(tmp_path, audio):
    w = workspace(tmp_path, [audio.name])
    stage = next(s for s in setup_pipeline(tmp_path)(w.root)[0] if s.name == MODALITIES_STAGE)
    prompt = stage.prompt(w.root)
    assert '"aud"' in prompt and '"aud": audio clips' in prompt and "'aud'" in stage.hints and '"aud"' in stage.goal
    answer = '{"inputs": ["aud"], "targets": ["tab"], "task_type": "BinCls"}'
    assert json.loads(stage.parse(answer))["inputs"] == [audio.name]
    with pytest.raises(ValueError):
        stage.parse('{"inputs": ["video"], "targets": ["tab"], "task_type": "BinCls"}')
    check_modalities(w.root)  # the unit test accepts it too


def test_a_registered_modality_has_its_files_found_and_is_no_longer_unsupported(tmp_path, monkeypatch):
    w = workspace(tmp_path, [TABULAR.name])
    sample = pd.read_csv(w.raw / "sample_submission.csv")
    assert modality_files(w.raw) == {} and "audio" in unsupported_reason(w.raw, None, sample)
    monkeypatch.setitem(MODALITIES, "aud", Modality("aud", "audio", "audio clips", (".m4a",), "toy", "tools.toy"))
    assert sorted(modality_files(w.raw)) == ["aud"] and len(modality_files(w.raw)["aud"]) == 12
    assert unsupported_reason(w.raw, None, sample) is None
