"""The engine's record of an episode, typed: the episode state (the state file, Workspace.SETUP_STATE) with a
state per stage and per meta-test, and one trajectory record per step (Workspace.TRAJECTORY).

to_json/from_json keep the files' keys and values as they have always been: tests, the curriculum and users
read them, and a resume reads a state file that an earlier version wrote.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from agentk.core.fileio import append_jsonl, read_json, read_jsonl, write_json
from agentk.core.memory import Entry


@dataclass
class StageState:
    status: str = "pending"  # pending, passed, failed, or revisit (a meta-test sent the episode back)
    attempts: int = 0
    tests: dict[str, str] = field(default_factory=dict)  # check name -> passed, failed or not run
    error: str | None = None  # the last attempt's


@dataclass
class MetaTestState:
    status: str = "pending"
    runs: int = 0
    error: str | None = None  # "<check>: <error>" of the last failing run


@dataclass
class Fix:
    """A rewrite made in credit assignment: a fix only once the meta-test that prompted it passes."""

    stage: str
    failing_code: str
    error: str  # the meta-test's error that prompted the rewrite
    fixed_code: str


@dataclass
class EpisodeState:
    policy: str = ""  # the name of the policy that acts
    status: str = "running"  # running, done, failed or bad_input
    cursor: int = 0  # index of the stage under way
    mode: str = "first"  # first, retry or credit_assignment
    ca_meta: str | None = None  # the meta-test that sent the episode back, until its stages pass again
    step: int = 0  # steps logged so far
    discounted_return: float = 0.0  # sum of gamma^step * reward ("return" in the file)
    backtracks: int = 0
    tokens: int = 0
    llm_calls: int = 0
    seconds: float = 0.0
    stages: dict[str, StageState] = field(default_factory=dict)
    meta_tests: dict[str, MetaTestState] = field(default_factory=dict)
    failed_stage: str | None = None
    reason: str | None = None
    llm_seconds: float | None = None  # time in LLM calls not answered from a cache; in the file once a step ran
    ca_fixes: list[Fix] = field(default_factory=list)  # held rewrites; in the file only while there are some
    # hypotheses dropped (agentk.policies.hypotheses): which, why, at which stage and backtrack; in the file once any
    hypotheses: list[dict] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)  # the caller's extras (e.g. "source"): top-level keys

    def stage(self, name: str) -> StageState:
        return self.stages.setdefault(name, StageState())

    def meta_test(self, name: str) -> MetaTestState:
        return self.meta_tests.setdefault(name, MetaTestState())

    def to_json(self) -> dict:
        out = {
            "status": self.status,
            "policy": self.policy,
            "cursor": self.cursor,
            "mode": self.mode,
            "ca_meta": self.ca_meta,
            "step": self.step,
            "return": self.discounted_return,
            "backtracks": self.backtracks,
            "tokens": self.tokens,
            "llm_calls": self.llm_calls,
            "seconds": self.seconds,
            "stages": {k: asdict(v) for k, v in self.stages.items()},
            "meta_tests": {k: asdict(v) for k, v in self.meta_tests.items()},
            "failed_stage": self.failed_stage,
            "reason": self.reason,
            **self.info,
        }
        if self.llm_seconds is not None:
            out["llm_seconds"] = self.llm_seconds
        if self.ca_fixes:
            out["ca_fixes"] = [asdict(f) for f in self.ca_fixes]
        if self.hypotheses:
            out["hypotheses"] = self.hypotheses
        return out

    @classmethod
    def from_json(cls, data: dict) -> EpisodeState:
        rest = dict(data)
        typed = {
            "stages": {k: StageState(**v) for k, v in rest.pop("stages", {}).items()},
            "meta_tests": {k: MetaTestState(**v) for k, v in rest.pop("meta_tests", {}).items()},
            "ca_fixes": [Fix(**f) for f in rest.pop("ca_fixes", [])],
        }
        if "return" in rest:
            typed["discounted_return"] = rest.pop("return")
        scalars = {f.name for f in fields(cls)} - set(typed) - {"info"}
        typed.update({k: rest.pop(k) for k in scalars if k in rest})
        return cls(**typed, info=rest)


def load_state(path: Path) -> EpisodeState | None:
    data = read_json(path)
    return None if data is None else EpisodeState.from_json(data)


def save_state(path: Path, state: EpisodeState) -> None:
    write_json(path, state.to_json())


@dataclass
class TrajectoryRecord:
    """One step: an attempt of a stage, or a run of a meta-test (mode "meta")."""

    stage: str  # the stage's or the meta-test's name
    mode: str  # first, retry, credit_assignment or meta
    action: str  # code, text, keep, tool or meta-test
    test: list[str]  # the checks it ran
    passed: bool
    failed_test: str | None
    error: str | None
    seconds: float
    memory: list[Entry] = field(default_factory=list)  # the working-memory entries it added
    tokens: int = 0
    llm_calls: int = 0
    llm: list[dict] = field(default_factory=list)  # one per LLM call (purpose, tokens, seconds, cached)
    step: int = 0  # numbered, and timed, by the engine as it logs the record
    time: float = 0.0
    hypotheses: dict[str, str] = field(default_factory=dict)  # decision -> the hypothesis the code rests on
    dropped: list[dict] = field(default_factory=list)  # hypotheses dropped before this attempt, and why

    @property
    def reward(self) -> float:
        return 1.0 if self.passed else -1.0

    def to_json(self) -> dict:
        return {
            "step": self.step,
            "time": self.time,
            "stage": self.stage,
            "mode": self.mode,
            "action": self.action,
            "test": self.test,
            "passed": self.passed,
            "failed_test": self.failed_test,
            "error": self.error,
            "reward": self.reward,
            "tokens": self.tokens,
            "llm_calls": self.llm_calls,
            "seconds": round(self.seconds, 3),
            "memory": [asdict(e) for e in self.memory],
            **({"llm": self.llm} if self.llm else {}),
            **({"hypotheses": self.hypotheses} if self.hypotheses else {}),
            **({"dropped": self.dropped} if self.dropped else {}),
        }

    @classmethod
    def from_json(cls, row: dict) -> TrajectoryRecord:
        names = {f.name for f in fields(cls)}
        kept = {k: v for k, v in row.items() if k in names}
        return cls(**{**kept, "memory": [Entry(**e) for e in row.get("memory", [])]})


def read_trajectory(path: Path) -> list[TrajectoryRecord]:
    return [TrajectoryRecord.from_json(row) for row in read_jsonl(path)]


def append_record(path: Path, record: TrajectoryRecord) -> None:
    append_jsonl(path, record.to_json())
