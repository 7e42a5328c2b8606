"""The built-in expert policy: inspects the raw data once (agentk.policies.analysis) and writes each stage's
code from its template. Deterministic and free; the offline default."""

from __future__ import annotations

from pathlib import Path

from agentk.core.engine import Action, Context, Stage
from agentk.policies.analysis import Analysis, CannotAnalyse, analyse


class ExpertPolicy:
    name = "expert"

    def __init__(self, tips: bool = False, memory=None):
        """tips: on a retry, look in long-term memory (`memory`, else rag/'s default, opened on the first retry
        only) for a stored fix of a similar error whose edit applies to the expert's code (rag.tips)."""
        self._analysis: dict[Path, Analysis] = {}
        self.tips, self._memory = tips, memory

    def analysis(self, ws: Path) -> Analysis:
        if ws not in self._analysis:
            self._analysis[ws] = analyse(ws)
        return self._analysis[ws]

    def act(self, stage: Stage, ctx: Context) -> Action:
        try:
            action = stage.expert(self.analysis(ctx.ws), ctx)
        except CannotAnalyse as exc:
            reason = f"The expert cannot write this stage: {exc}"
            return (
                Action(code=f"raise SystemExit({reason!r})\n", thought=reason)
                if stage.kind == "code"
                else Action(text="", thought=reason)
            )
        if ctx.mode == "credit_assignment" and stage.kind == "code" and action.code == ctx.previous_code:
            return Action(keep=True, thought="The expert would write the same code again: keep it.")
        if self.tips and ctx.mode == "retry" and stage.kind == "code" and action.code and ctx.error:
            return self._tip(stage, ctx, action)
        return action

    def _tip(self, stage: Stage, ctx: Context, action: Action) -> Action:
        """The expert's code edited by the nearest stored fix that applies to it and gives code not tried yet."""
        from rag.memory import Memory
        from rag.tips import apply_fix

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
