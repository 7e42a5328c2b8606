"""The setup pipeline of DESIGN.md: stages in order, pruned by modalities.json, and the meta-unit tests."""
from __future__ import annotations

from pathlib import Path

from agentk.core.checks import Check
from agentk.core.engine import MetaTest, Pipeline, Stage
from agentk.core.fileio import read_json
from stages import (fetch, img_input_map, metric, modalities, plan, submission_format, summarise, tab_input_map,
                    tab_target_map, target_transform, txt_input_map)
from unit_tests_lib.meta import check_light_solve, check_test_maps, check_train_map_dataset

# Stages after "plan", by the input modalities they need (None: always).
MAP_STAGES: list[tuple[str | None, Stage]] = [
    ("tab", tab_input_map.make("train")),
    ("img", img_input_map.make("train")),
    ("txt", txt_input_map.make("train")),
    (None, tab_target_map.STAGE),
    (None, target_transform.STAGE),
    ("tab", tab_input_map.make("test")),
    ("img", img_input_map.make("test")),
    ("txt", txt_input_map.make("test")),
    (None, submission_format.make(alternative=False)),
    (None, submission_format.make(alternative=True)),
    (None, metric.STAGE),
]


def remaining_stages(inputs: list[str]) -> list[str]:
    return [s.name for need, s in MAP_STAGES if need is None or need in inputs]


def _meta_tests(names: list[str]) -> list[MetaTest]:
    first_map = next(n for n in names if n.startswith("train_"))
    last_test_map = [n for n in names if n.startswith("test_")][-1]
    return [
        MetaTest("map_dataset_train", names[names.index(first_map):names.index("transform_tab_target_train") + 1],
                 [Check(check_train_map_dataset)]),
        MetaTest("test_maps_match", names[names.index(first_map):names.index(last_test_map) + 1], [Check(check_test_maps)]),
        MetaTest("final_light_solve", names[names.index("train_tab_target_map"):], [Check(check_light_solve)]),
    ]


def setup_pipeline(source: str | Path) -> Pipeline:
    """`source`: a local competition folder or a Kaggle competition URL."""
    fetch_stage = fetch.make(str(source))
    by_name = {s.name: s for _, s in MAP_STAGES}

    def pipeline(ws: Path) -> tuple[list[Stage], list[MetaTest]]:
        spec = read_json(ws / "modalities.json")
        remaining = remaining_stages(spec["inputs"]) if spec and spec.get("inputs") else []
        head = [fetch_stage, summarise.STAGE, modalities.STAGE, plan.make(remaining)]
        if not remaining:
            return head, []
        planned = (read_json(ws / "plan.json") or {}).get("stages")
        names = planned if planned and sorted(planned) == sorted(remaining) else remaining
        return head + [by_name[n] for n in names], _meta_tests(names)

    return pipeline
