"""The setup pipeline (docs/architecture.md): stages in order, pruned by modalities.json, and the meta-unit
tests, each covering the stages whose role it declares. The map stages come from the modality registry."""

from __future__ import annotations

from pathlib import Path

from agentk.core.checks import Check
from agentk.core.engine import MetaTest, Pipeline, Stage
from agentk.core.fileio import read_json
from agentk.modalities import MODALITIES
from agentk.workspace import (
    ROLE_INPUT_MAP,
    ROLE_METRIC,
    ROLE_SUBMISSION_FORMAT,
    ROLE_TARGET_MAP,
    ROLE_TARGET_TRANSFORM,
    Workspace,
)
from stages import fetch, metric, modalities, plan, submission_format, summarise, tab_target_map, target_transform
from unit_tests_lib.meta import check_light_solve, check_test_maps, check_train_map_dataset

TRAIN_MAP, TEST_MAP = ROLE_INPUT_MAP["train"], ROLE_INPUT_MAP["test"]
TRAIN_CHAIN = {TRAIN_MAP, ROLE_TARGET_MAP, ROLE_TARGET_TRANSFORM}
# Each meta-test: its name, the roles of the stages it covers, its check.
META_TESTS = [
    ("map_dataset_train", TRAIN_CHAIN, check_train_map_dataset),
    ("test_maps_match", TRAIN_CHAIN | {TEST_MAP}, check_test_maps),
    (
        "final_light_solve",
        {ROLE_TARGET_MAP, ROLE_TARGET_TRANSFORM, TEST_MAP, ROLE_SUBMISSION_FORMAT, ROLE_METRIC},
        check_light_solve,
    ),
]


def map_stages() -> list[tuple[str | None, Stage]]:
    """The stages after "plan", each with the input modality it needs (None: always): the train maps of every
    registered modality, the target map and transform, the test maps, the two formatters, the metric."""

    def maps(split: str) -> list[tuple[str | None, Stage]]:
        return [(m.name, m.input_map(split)) for m in MODALITIES.values()]

    return [
        *maps("train"),
        (None, tab_target_map.STAGE),
        (None, target_transform.STAGE),
        *maps("test"),
        (None, submission_format.make(alternative=False)),
        (None, submission_format.make(alternative=True)),
        (None, metric.STAGE),
    ]


def remaining_stages(inputs: list[str], stages: list[tuple[str | None, Stage]] | None = None) -> list[str]:
    return [s.name for need, s in (stages or map_stages()) if need is None or need in inputs]


def meta_tests(stages: list[Stage]) -> list[MetaTest]:
    """Each meta-test covers the stages whose role it declares, in pipeline order (none: no meta-test)."""
    covers = [(name, [s.name for s in stages if s.role in roles], check) for name, roles, check in META_TESTS]
    return [MetaTest(name, names, [Check(check)]) for name, names, check in covers if names]


def setup_pipeline(source: str | Path, try_unsupported: bool = False) -> Pipeline:
    """`source`: a local competition folder or a Kaggle competition URL; try_unsupported: fetch a task agentk
    cannot do rather than refuse it (for an LLM policy the user asked to try)."""
    head = [fetch.make(str(source), try_unsupported), summarise.STAGE, modalities.make()]
    after_plan = map_stages()
    by_name = {s.name: s for _, s in after_plan}

    def pipeline(ws: Path) -> tuple[list[Stage], list[MetaTest]]:
        w = Workspace(ws)
        spec = read_json(w.modalities)
        remaining = remaining_stages(spec["inputs"], after_plan) if spec and spec.get("inputs") else []
        stages = [*head, plan.make(remaining)]
        if not remaining:
            return stages, []
        planned = (read_json(w.plan) or {}).get("stages")
        names = planned if planned and sorted(planned) == sorted(remaining) else remaining
        tail = [by_name[n] for n in names]
        return stages + tail, meta_tests(tail)

    return pipeline
