"""The staged MDP of Agent K (paper 3.1, Algorithm 1), independent of Kaggle.

Stages and meta-unit tests are data. Transitions:
  unit test fails   -> same stage again, the error in working memory (until the stage's budget runs out)
  unit tests pass   -> run the meta-tests whose last covered stage this is
  all pass          -> next stage
  a meta-test fails -> back to the first stage it covers, in credit-assignment mode
Every step goes to the trajectory with a reward, and the state (agentk.core.state) to the state file after each
step, so a killed run resumes where it stopped (the files' names: agentk.workspace).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from agentk.core.checks import Check, run_checks
from agentk.core.errors import AgentFailed, BadInput
from agentk.core.fileio import write_text
from agentk.core.memory import WorkingMemory
from agentk.core.state import (
    EpisodeState,
    Fix,
    TrajectoryRecord,
    append_record,
    load_state,
    read_trajectory,
    save_state,
)
from agentk.workspace import Workspace, code_file

HOLE = "# <<FILL-IN-THE-MIDDLE>>"


def fill(template: str, body: str) -> str:
    """Put `body` into the template's hole, indented like the hole."""
    for line in template.splitlines():
        if line.strip() == HOLE:
            indent = line[: len(line) - len(line.lstrip())]
            filled = "\n".join(indent + ln if ln.strip() else ln for ln in body.strip("\n").splitlines())
            return template.replace(line, filled, 1)
    raise ValueError("template has no fill-in-the-middle hole")


@dataclass
class Stage:
    """One step of a pipeline. kind "code": the policy writes code_file, run in the sandbox;
    "text": the policy's text goes to `output`; "tool": agentk itself runs `tool(ws)`."""

    name: str
    goal: str
    kind: Literal["code", "text", "tool"] = "code"
    output: str | None = None
    template: str = ""
    checks: list[Check] = field(default_factory=list)
    tool: Callable[[Path], None] | None = None
    timeout: float = 600
    expert: Callable[..., Action] | None = None  # the built-in expert's action: expert(analysis, ctx)
    hints: str = ""  # prompt pieces: what a good answer to this stage looks like
    role: str = ""  # what the stage does (agentk.workspace ROLE_*): meta-tests select their stages by it
    # A text stage's own LLM request: prompt(ws) is its body, parse(answer) its output text (ValueError: ask
    # again, the error shown); intrinsic names the request on the wire ([agentk:<intrinsic>]), the stage's name if "".
    prompt: Callable[[Path], str] | None = None
    parse: Callable[[str], str] = str.strip
    intrinsic: str = ""

    @property
    def code_file(self) -> str:
        return code_file(self.name)


@dataclass
class MetaTest:
    name: str
    covers: list[str]  # stage names in pipeline order; runs after the last one passes
    checks: list[Check]


@dataclass
class Action:
    code: str | None = None  # the whole program (template with its hole filled)
    text: str | None = None
    keep: bool = False  # credit assignment: this stage's previous output was not at fault
    thought: str | None = None
    tokens: int = 0
    calls: int = 0
    notes: list[tuple[str, str]] = field(default_factory=list)  # extra working-memory entries (kind, text)
    llm: list[dict] = field(default_factory=list)  # one record per LLM call: purpose, tokens, seconds, cached
    hypotheses: dict[str, str] = field(default_factory=dict)  # the hypothesis of each decision the code rests on
    dropped: list[dict] = field(default_factory=list)  # hypotheses dropped before acting (policies.hypotheses)
    give_up: str | None = None  # the policy has nothing left to try: the stage fails now, with this reason


@dataclass
class Context:
    ws: Path
    mode: Literal["first", "retry", "credit_assignment"]
    attempt: int  # attempts of this stage so far
    memory: WorkingMemory
    previous_code: str | None  # the code this stage last ran, if any
    error: str | None  # the last unit-test error (retry) or meta-test error (credit assignment)
    covered: list[str] = field(default_factory=list)  # credit assignment: the stages the failed meta-test covers
    covered_roles: list[str] = field(default_factory=list)  # their roles, in the same order
    dropped: list[dict] = field(default_factory=list)  # the hypotheses dropped so far in this episode
    backtrack: int = 0  # meta-test failures so far: which credit assignment this is


class Policy(Protocol):
    name: str

    def act(self, stage: Stage, ctx: Context) -> Action: ...


@dataclass
class Budget:
    stage_attempts: int = 4  # tries per stage, the first included
    backtracks: int = 3  # meta-test failures tolerated per episode
    gamma: float = 0.95  # reward discount
    memory_gb: float = 16


Pipeline = Callable[[Path], tuple[list[Stage], list[MetaTest]]]


class Engine:
    """Runs a pipeline (a function of the workspace, so a stage such as "plan" can shape what follows)."""

    def __init__(
        self,
        ws: Path,
        pipeline: Pipeline,
        policy: Policy,
        budget: Budget | None = None,
        state_file: str = Workspace.SETUP_STATE,
        on_event: Callable[[str, dict], None] | None = None,
        info: dict | None = None,
        on_fix: Callable[[str, str, str, str], None] | None = None,
    ):
        self.ws, self.pipeline, self.policy = Path(ws), pipeline, policy
        self.budget = budget or Budget()
        self.state_path = self.ws / state_file
        self.trajectory = self.ws / Workspace.TRAJECTORY
        self.on_event = on_event or (lambda kind, info: None)
        self.info = info or {}  # recorded in the state file (e.g. the source, so --resume needs nothing else)
        self.on_fix = on_fix  # on_fix(stage, failing code, its error, passing code): for long-term memory (rag/)

    def _save(self) -> None:
        save_state(self.state_path, self.state)

    # ---- main loop ---------------------------------------------------------------------------
    def run(self, resume: bool = False) -> EpisodeState:
        old = load_state(self.state_path) if resume else None
        if old and old.status == "done":
            return old
        self.state = old or EpisodeState(self.policy.name, info=dict(self.info))
        self.state.status = "running"
        # a resumed episode's working memory: every entry its trajectory kept
        self.memory = WorkingMemory([e for r in read_trajectory(self.trajectory) for e in r.memory] if resume else [])
        if not resume and self.trajectory.exists():
            self.trajectory.unlink()
        self._save()
        try:
            self._loop()
        except BadInput as exc:
            self.state.status, self.state.reason = "bad_input", str(exc)
            self._save()
            raise
        return self.state

    def _loop(self) -> None:
        state = self.state
        while True:
            stages, metas = self.pipeline(self.ws)
            i = state.cursor
            if i >= len(stages):
                state.status, state.mode, state.ca_meta = "done", "first", None
                self._save()
                self.on_event("done", {"state": state})
                return
            stage = stages[i]
            passed = self._attempt(stage, stages, metas)
            if not passed:
                continue
            failed_meta = self._run_metas(stage, stages, metas)
            if failed_meta is None:
                ca = state.ca_meta
                if ca and stage.name == next(m for m in metas if m.name == ca).covers[-1]:
                    state.ca_meta = None
                    self._store_ca_fixes()
                state.cursor = i + 1
                state.mode = "credit_assignment" if state.ca_meta else "first"
            else:
                state.ca_fixes = []  # rewrites after which a meta-test still fails fixed nothing
                state.backtracks += 1
                if state.backtracks > self.budget.backtracks:
                    self._fail(
                        failed_meta.covers[0],
                        f"meta-test {failed_meta.name} still failing after "
                        f"{self.budget.backtracks} backtracks: {state.meta_tests[failed_meta.name].error}",
                    )
                names = [s.name for s in stages]
                state.cursor, state.mode = names.index(failed_meta.covers[0]), "credit_assignment"
                state.ca_meta = failed_meta.name
                for name in failed_meta.covers:
                    state.stage(name).status = "revisit"
            self._save()

    def _attempt(self, stage: Stage, stages: list[Stage], metas: list[MetaTest]) -> bool:
        st = self.state.stage(stage.name)
        mode = self.state.mode
        if st.attempts > 0 and mode == "first":
            mode = "retry"
        code_path = self.ws / stage.code_file
        previous = code_path.read_text() if stage.kind == "code" and code_path.exists() else None
        ca_state = self.state.meta_tests.get(self.state.ca_meta or "")
        error = st.error if mode == "retry" else (ca_state.error if ca_state else None)
        covered = (
            next((m.covers for m in metas if m.name == self.state.ca_meta), []) if mode == "credit_assignment" else []
        )
        roles = {s.name: s.role for s in stages}
        ctx = Context(
            self.ws,
            mode,
            st.attempts,
            self.memory,
            previous,
            error,
            covered,
            [roles[n] for n in covered if n in roles],
            list(self.state.hypotheses),
            self.state.backtracks,
        )
        error_ca = error if mode == "credit_assignment" else None
        self.on_event("stage", {"stage": stage.name, "mode": mode, "attempt": st.attempts + 1})
        t0 = time.monotonic()
        action = self.policy.act(stage, ctx) if stage.kind != "tool" else Action()
        self.state.hypotheses.extend({**d, "backtrack": self.state.backtracks, "mode": mode} for d in action.dropped)
        if action.give_up:
            self._log(
                TrajectoryRecord(
                    stage.name,
                    mode,
                    "give up",
                    [],
                    False,
                    None,
                    action.give_up,
                    time.monotonic() - t0,
                    hypotheses=action.hypotheses,
                )
            )
            self._fail(stage.name, action.give_up)
        kind, run_code, output_error = self._execute(stage, action, previous)
        report = None
        if not output_error:
            if run_code and stage.output:
                (self.ws / stage.output).unlink(missing_ok=True)  # a stale output must not pass for a new one
            report = run_checks(
                stage.checks,
                self.ws,
                timeout=stage.timeout,
                memory_gb=self.budget.memory_gb,
                code=stage.code_file if run_code else None,
                output=stage.output,
            )
        output = report.output if report else ""
        passed = output_error is None and report.passed
        error = output_error or (report.error if not passed else None)
        failed_test = None if passed else (report.failed if report else "execution")
        prior_error = st.error
        st.attempts += 1
        st.status = "passed" if passed else "failed"
        st.error = error
        if passed and action.code and mode == "retry" and previous and prior_error and self.on_fix:
            self.on_fix(stage.name, previous, prior_error, action.code)
        if passed and action.code and mode == "credit_assignment" and previous and action.code != previous and error_ca:
            # a rewrite in credit assignment is a fix only once the meta-test passes: held until then (_loop)
            self.state.ca_fixes.append(Fix(stage.name, previous, error_ca, action.code))
        first_failed = len(stage.checks) if passed else (report.index if report else -1)
        for i, c in enumerate(stage.checks):
            st.tests[c.name] = "passed" if i < first_failed else "failed" if i == first_failed else "not run"
        self._log(
            TrajectoryRecord(
                stage.name,
                mode,
                kind,
                [c.name for c in stage.checks],
                passed,
                failed_test,
                error,
                time.monotonic() - t0,
                self.memory.record(stage.name, mode, kind, action, output, error),
                action.tokens,
                action.calls,
                action.llm,
                hypotheses=action.hypotheses,
                dropped=action.dropped,
            )
        )
        self.on_event("result", {"stage": stage.name, "passed": passed, "error": error, "attempt": st.attempts})
        if not passed and st.attempts >= self.budget.stage_attempts:
            self._fail(stage.name, error)
        return passed

    def _store_ca_fixes(self) -> None:
        """The meta-test that sent the episode back passes now: the rewrites credit assignment made on the way
        (each with the meta-test error that prompted it) fixed it, and go to long-term memory."""
        fixes, self.state.ca_fixes = self.state.ca_fixes, []
        for fix in fixes:
            if self.on_fix:
                self.on_fix(fix.stage, fix.failing_code, fix.error, fix.fixed_code)

    def _execute(self, stage: Stage, action: Action, previous: str | None) -> tuple[str, bool, str | None]:
        """Carry the action out; return (what was done, whether the stage's code must run, an error if the
        action could not even be carried out)."""
        if stage.kind == "tool":
            try:
                stage.tool(self.ws)
            except BadInput:
                raise
            except Exception as exc:  # noqa: BLE001 - a failing tool is an observation
                return "tool", False, f"{type(exc).__name__}: {exc}"
            return "tool", False, None
        if action.keep:
            if stage.kind == "code" and previous is None:
                return "keep", False, "Cannot keep: this stage has no previous code. Write the code."
            return "keep", stage.kind == "code", None
        if stage.kind == "text":
            if not (action.text or "").strip():
                why = f" ({action.thought})" if action.thought else ""
                return "text", False, f"The answer was empty{why}: write the stage's text."
            write_text(self.ws / stage.output, action.text.rstrip() + "\n")
            return "text", False, None
        if not (action.code or "").strip():
            return "code", False, "The answer contained no code: write the complete program."
        write_text(self.ws / stage.code_file, action.code)
        return "code", True, None

    def _run_metas(self, stage: Stage, stages: list[Stage], metas: list[MetaTest]) -> MetaTest | None:
        for meta in metas:
            if meta.covers[-1] != stage.name:
                continue
            t0 = time.monotonic()
            report = run_checks(meta.checks, self.ws, memory_gb=self.budget.memory_gb)
            ms = self.state.meta_test(meta.name)
            ms.status, ms.runs = "passed" if report.passed else "failed", ms.runs + 1
            ms.error = None if report.passed else f"{report.failed}: {report.error}"
            entries = [] if report.passed else [self.memory.add("META-ERROR", meta.covers[0], ms.error)]
            self._log(
                TrajectoryRecord(
                    meta.name,
                    "meta",
                    "meta-test",
                    [c.name for c in meta.checks],
                    report.passed,
                    report.failed,
                    ms.error,
                    time.monotonic() - t0,
                    entries,
                )
            )
            self.on_event("meta", {"meta": meta.name, "passed": report.passed, "error": ms.error})
            if not report.passed:
                return meta
        return None

    def _log(self, record: TrajectoryRecord) -> None:
        """Number the step, add its discounted reward and its costs to the episode, append it to the trajectory."""
        state = self.state
        record.step, record.time = state.step, time.time()
        state.discounted_return += self.budget.gamma**state.step * record.reward
        state.step += 1
        state.tokens += record.tokens
        state.llm_calls += record.llm_calls
        state.llm_seconds = round(
            (state.llm_seconds or 0.0) + sum(c["seconds"] for c in record.llm if not c.get("cached")), 3
        )
        state.seconds += record.seconds
        append_record(self.trajectory, record)

    def _fail(self, stage: str, reason: str | None) -> None:
        self.state.status, self.state.failed_stage, self.state.reason = "failed", stage, reason
        self._save()
        lines = [ln.strip() for ln in (reason or "").splitlines() if ln.strip()]
        raise AgentFailed(f"stage {stage} failed: {lines[-1] if lines else 'no reason'} (details in {self.state_path})")
