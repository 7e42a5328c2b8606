"""The built-in expert policy: inspects the raw data once (agentk.analysis) and writes each stage's
code from its template. Deterministic and free; the offline default."""
from __future__ import annotations

from pathlib import Path

from agentk.analysis import Analysis, CannotAnalyse, analyse
from agentk.engine import Action, Context, Stage


class ExpertPolicy:
    name = "expert"

    def __init__(self):
        self._analysis: dict[Path, Analysis] = {}

    def analysis(self, ws: Path) -> Analysis:
        if ws not in self._analysis:
            self._analysis[ws] = analyse(ws)
        return self._analysis[ws]

    def act(self, stage: Stage, ctx: Context) -> Action:
        try:
            action = stage.expert(self.analysis(ctx.ws), ctx)
        except CannotAnalyse as exc:
            reason = f"The expert cannot write this stage: {exc}"
            return Action(code=f"raise SystemExit({reason!r})\n", thought=reason) if stage.kind == "code" else \
                Action(text="", thought=reason)
        if ctx.mode == "credit_assignment" and stage.kind == "code" and action.code == ctx.previous_code:
            return Action(keep=True, thought="The expert would write the same code again: keep it.")
        return action
