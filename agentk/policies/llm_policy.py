"""The LLM policy (structured reasoning over intrinsic functions) and the hybrid policy (expert first,
LLM when a stage fails or a meta-test sends the episode back)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentk.core.engine import Action, Context, Stage
from agentk.policies import intrinsics as fn
from agentk.policies.expert import ExpertPolicy
from agentk.policies.llm import LLMClient

if TYPE_CHECKING:
    from rag.memory import Memory


class LLMPolicy:
    name = "llm"

    def __init__(self, llm: LLMClient, memory: Memory | None = None):
        self.llm, self.memory = llm, memory  # memory: long-term, for examples of similar errors being fixed
        self._meta_thoughts: dict[str, str] = {}  # one META-ERROR-THOUGHT per meta-test failure

    def act(self, stage: Stage, ctx: Context) -> Action:
        calls = fn.Calls(self.llm)
        # every text stage alike, by its own prompt and parser; code stages by plan, code, reflection, CA
        action = (
            Action(text=fn.text_answer(calls, ctx.ws, stage)) if stage.kind == "text" else self._code(stage, ctx, calls)
        )
        action.tokens, action.calls, action.llm = calls.tokens, calls.calls, calls.log
        return action

    def _code(self, stage: Stage, ctx: Context, calls: fn.Calls) -> Action:
        last_output = next((e.text for e in reversed(ctx.memory.for_stage(stage.name, ("CODE-OUTPUT",)))), "")
        if ctx.mode == "credit_assignment":
            notes = []
            if ctx.error not in self._meta_thoughts:
                self._meta_thoughts[ctx.error] = fn.meta_error_thought(calls, stage, ctx.error, ctx.covered)
                notes.append(("META-ERROR-THOUGHT", self._meta_thoughts[ctx.error]))
            example = self._example(stage.name, ctx.error)
            keep, thought, code = fn.ca_thought(
                calls, ctx.ws, stage, ctx.previous_code, ctx.error, self._meta_thoughts[ctx.error], example
            )
            if keep and ctx.previous_code is not None:
                return Action(keep=True, thought=thought, notes=notes)
            if code is None:
                code = fn.write_code(
                    calls, ctx.ws, stage, thought, ctx.previous_code, last_output, ctx.error, thought, example=example
                )
            return Action(code=code, thought=thought, notes=notes)
        if ctx.mode == "retry":
            reflection = fn.reflect(calls, stage, ctx.previous_code, ctx.error or "")
            example = self._example(stage.name, ctx.error)
            code = fn.write_code(
                calls,
                ctx.ws,
                stage,
                reflection,
                ctx.previous_code,
                last_output,
                ctx.error or "",
                reflection,
                example=example,
            )
            return Action(code=code, thought=reflection)
        steps = fn.plan(calls, ctx.ws, stage)
        return Action(code=fn.write_code(calls, ctx.ws, stage, steps), thought=steps)

    def _example(self, stage: str, error: str | None) -> str:
        """The nearest stored fix of a similar error in this stage, as the prompt's example ("" when none is close)."""
        fixes = self.memory.similar_fixes(stage, error, k=1) if self.memory and error else []
        return fn.fix_example(fixes[0]) if fixes else ""


class HybridPolicy:
    """Expert first; the LLM on a stage's retries and in credit assignment."""

    name = "hybrid"

    def __init__(self, llm: LLMClient, memory: Memory | None = None):
        self.expert, self.llm = ExpertPolicy(), LLMPolicy(llm, memory)

    def act(self, stage: Stage, ctx: Context) -> Action:
        return self.expert.act(stage, ctx) if ctx.mode == "first" else self.llm.act(stage, ctx)
