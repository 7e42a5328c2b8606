"""A simulated LLM that answers the LLM policy's requests with what the built-in expert would write.

It speaks the policy's protocol (the `[agentk:<intrinsic>] stage=<stage>` header and the answer formats
of agentk.policies.intrinsics), so tests and the fault-injection benchmark can serve it from a ScriptedLLM and
layer faults on top of it."""

from __future__ import annotations

import re
from pathlib import Path

from agentk.core.engine import Context, Stage
from agentk.core.memory import WorkingMemory
from agentk.policies.expert import ExpertPolicy

HEADER = re.compile(r"^\[agentk:(\w+)\] stage=(\S+)")


def header(messages: list[dict]) -> tuple[str, str]:
    """(intrinsic, stage) of a request, from its last user message."""
    text = next(m["content"] for m in reversed(messages) if m["role"] == "user")
    m = HEADER.match(text)
    if not m:
        raise ValueError(f"not an agentk request: {text[:80]!r}")
    return m.group(1), m.group(2)


def fenced(code: str) -> str:
    return f"```python\n{code.rstrip()}\n```"


class ExpertAnswers:
    def __init__(self, source: Path, ws: Path):
        from agentk.setup_pipeline import setup_pipeline

        self.pipeline, self.ws, self.expert = setup_pipeline(Path(source)), Path(ws), ExpertPolicy()

    def stage(self, name: str) -> Stage:
        stages, _ = self.pipeline(self.ws)
        return next(s for s in stages if s.name == name)

    def action(self, name: str):
        return self.expert.act(self.stage(name), Context(self.ws, "first", 0, WorkingMemory(), None, None))

    def code(self, name: str) -> str:
        return self.action(name).code

    def __call__(self, messages: list[dict]) -> str:
        intrinsic, stage = header(messages)
        stages, _ = self.pipeline(self.ws)
        if any(s.name == stage and s.kind == "text" for s in stages):  # a text stage's own request: its output
            return self.action(stage).text
        if intrinsic == "code":
            return "Here is the program.\n" + fenced(self.code(stage))
        if intrinsic == "plan":
            return "1. Read the raw table.\n2. Build the output the goal asks for.\n3. Write it into the workspace."
        if intrinsic == "reflect":
            return "The code did not do what the unit test checks; follow the error message."
        if intrinsic == "meta_error_thought":
            return "The stages passed alone but disagree together; the last covered stage is the likeliest culprit."
        if intrinsic == "ca_thought":
            return "CA-THOUGHT: This stage's code does what its goal asks.\nDECISION: KEEP"
        raise ValueError(f"unknown intrinsic {intrinsic!r}")
