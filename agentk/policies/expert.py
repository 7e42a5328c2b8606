"""The built-in expert policy: inspects the raw data (agentk.policies.analysis) and writes each stage's code from
its template, under the current hypothesis of each decision the analysis made (agentk.policies.hypotheses), an
option that passed on a decision of the same shape before (long-term memory) ranked first. A failed unit test moves a decision shaping the failing stage to its next hypothesis, a failed meta-test one of a
stage it covers; with none left it gives up rather than write the same code again. Deterministic and free; the
offline default."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from agentk.core.engine import Action, Context, Stage
from agentk.policies.analysis import Analysis, CannotAnalyse, analyse
from agentk.policies.hypotheses import Decision, chosen_from, dropped_record
from agentk.workspace import ROLE_TASK
from rag.memory import HELD, Memory, default_path
from rag.tips import apply_fix


class ExpertPolicy:
    name = "expert"

    def __init__(self, tips: bool = False, memory=None):
        """tips: on a retry, look in long-term memory (`memory`, else rag/'s default, opened on the first retry
        only) for a stored fix of a similar error whose edit applies to the expert's code (rag.tips)."""
        self._analysis: dict[tuple, Analysis] = {}
        self.tips, self._memory = tips, memory
        self._recalled: dict[tuple, tuple[str, str] | None] = {}

    def analysis(self, ws: Path, chosen: dict[str, int] | None = None) -> Analysis:
        """The analysis under the hypotheses `chosen` (decision -> option index; the first of each if None)."""
        key = (ws, tuple(sorted((chosen or {}).items())))
        if key not in self._analysis:
            self._analysis[key] = analyse(ws, chosen or {}, self._recall)
        return self._analysis[key]

    def _recall(self, decision: Decision) -> tuple[str, str] | None:
        """The option that passed before on a decision of this shape (long-term memory), asked once per shape so
        that the ranking holds for the whole setup; the store is opened only when it holds hypotheses."""

        key = (decision.name, decision.shape)
        if key not in self._recalled:
            path = self._memory.path if self._memory is not None else default_path()
            try:
                if (path / HELD).exists():
                    self._memory = self._memory or Memory()
                    self._recalled[key] = self._memory.passed_hypothesis(decision.name, decision.shape)
                else:
                    self._recalled[key] = None
            except Exception:  # noqa: BLE001 - an unreadable memory costs the experience, never the setup
                self._recalled[key] = None
        return self._recalled[key]

    def act(self, stage: Stage, ctx: Context) -> Action:
        chosen, dropped = chosen_from(ctx.dropped), []
        while True:  # revise until the code differs from what failed, or nothing is left to revise
            revised = self._revise(stage, ctx, chosen, dropped) if stage.kind == "code" else None
            dropped += [revised] if revised else []
            try:
                analysis = self.analysis(ctx.ws, chosen)
                action = stage.expert(analysis, ctx)
            except Exception as exc:  # noqa: BLE001 - CannotAnalyse, or a stage's code the expert could not write
                what = str(exc) if isinstance(exc, CannotAnalyse) else f"{type(exc).__name__}: {exc}"
                reason = f"The expert cannot write this stage: {what}"
                if stage.kind != "code" and (moved := self._unblock(stage, exc, chosen)):
                    dropped.append(moved)  # the task's stages come before every decision is used: any may move
                    continue
                if stage.kind != "code":
                    return Action(text="", thought=reason, dropped=dropped)
                if ctx.mode == "retry" and not dropped:
                    return Action(give_up=self._nothing_left(f"stage {stage.name}", ctx))
                return Action(code=f"raise SystemExit({reason!r})\n", thought=reason, dropped=dropped)
            if not revised or action.code != ctx.previous_code:
                break
        action.hypotheses, action.dropped = analysis.decisions.used({stage.role}), dropped
        if dropped:
            action.thought = "; ".join(f"{d['decision']}: {d['dropped']} dropped, trying {d['next']}" for d in dropped)
        if ctx.mode == "credit_assignment" and stage.kind == "code" and action.code == ctx.previous_code:
            if ctx.covered and stage.name == ctx.covered[0] and not self._moved(ctx) and not dropped:
                return Action(give_up=self._nothing_left("credit assignment", ctx), hypotheses=action.hypotheses)
            return Action(
                keep=True,
                thought="Not this stage's code: the expert would write the same code again.",
                hypotheses=action.hypotheses,
                dropped=dropped,  # a decision of a later covered stage moved here: it must reach the state
            )
        if self.tips and ctx.mode == "retry" and stage.kind == "code" and action.code and ctx.error and not dropped:
            action = replace(self._tip(stage, ctx, action), hypotheses=action.hypotheses)
        if ctx.mode == "retry" and stage.kind == "code" and action.code == ctx.previous_code:
            return Action(give_up=self._nothing_left(f"stage {stage.name}", ctx), hypotheses=action.hypotheses)
        return action

    @staticmethod
    def _moved(ctx: Context) -> bool:
        """Whether this backtrack's credit assignment already moved a decision."""
        return any(d.get("backtrack") == ctx.backtrack and d.get("mode") == "credit_assignment" for d in ctx.dropped)

    def _revise(self, stage: Stage, ctx: Context, chosen: dict[str, int], dropped: list[dict]) -> dict | None:
        """On a retry, or at the first stage a failed meta-test covers (once per backtrack), move the decision that
        the error points at to its next hypothesis (in `chosen`); return what was dropped, or None."""
        if ctx.mode == "retry":
            roles = [stage.role]
        elif ctx.mode == "credit_assignment" and ctx.covered and stage.name == ctx.covered[0]:
            if self._moved(ctx) or dropped:
                return None
            roles = ctx.covered_roles
        else:
            return None
        try:
            decisions = self.analysis(ctx.ws, chosen).decisions
        except CannotAnalyse as exc:  # the current hypotheses lead nowhere: another of the decisions made may
            decisions = exc.decisions
        decision: Decision | None = decisions.to_revise(roles, ctx.error)
        if decision is None:
            return None
        record = dropped_record(decision, stage.name, ctx.error)
        chosen[decision.name] = decision.chosen + 1
        return record

    @staticmethod
    def _unblock(stage: Stage, exc: Exception, chosen: dict[str, int]) -> dict | None:
        """Before any map is written (the task's text stages), an analysis that cannot go on under the current
        hypotheses moves the latest decision it made that has an option left and whose errors the error fits
        (a train table sharing no input with the test moves the train table, not the test ids), else the latest
        with an option left; None when none has."""
        decisions = getattr(exc, "decisions", None)
        if stage.role != ROLE_TASK or decisions is None:
            return None
        left = [d for d in reversed(decisions.items) if d.left > 0]
        decision = next((d for d in left if d.fits(str(exc))), left[0] if left else None)
        if decision is None:
            return None
        record = dropped_record(decision, stage.name, str(exc))
        chosen[decision.name] = decision.chosen + 1
        return record

    @staticmethod
    def _nothing_left(where: str, ctx: Context) -> str:
        lines = [ln.strip() for ln in (ctx.error or "").splitlines() if ln.strip()]
        tried = sorted({d["decision"] for d in ctx.dropped})
        return (
            f"the expert has no hypothesis left to try after this {where} failure"
            f"{' (revised so far: ' + ', '.join(tried) + ')' if tried else ''}: {lines[-1] if lines else 'no error'}"
        )

    def _tip(self, stage: Stage, ctx: Context, action: Action) -> Action:
        """The expert's code edited by the nearest stored fix that applies to it and gives code not tried yet."""

        try:
            self._memory = self._memory or Memory()
            fixes = self._memory.similar_fixes(stage.name, ctx.error, k=3)
        except Exception as exc:  # noqa: BLE001 - an unreadable memory costs the tip, never the setup
            return Action(
                code=action.code, thought=f"{action.thought or ''} (no tips: long-term memory unreadable: {exc})"
            )
        for fix in fixes:
            code = apply_fix(fix["failing_code"], fix["fixed_code"], action.code)
            if code and code != ctx.previous_code:
                return Action(
                    code=code,
                    thought=f"A stored fix of a similar error (from {fix['competition']}, "
                    f"distance {fix['distance']:.2f}) applies to the expert's code: using it.",
                )
        return action
