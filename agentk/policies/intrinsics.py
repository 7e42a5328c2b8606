"""Intrinsic functions of the LLM policy (paper 2, 3.1.2-3.1.3, Appendix D): one small function per
reasoning step, each with its prompt and its parser. Text stages bring their own prompt and parser
(Stage.prompt, Stage.parse), asked through the one text_answer. The last user message of every request
starts with `[agentk:<intrinsic>] stage=<stage>` so logs, caches and scripted servers can tell the calls apart."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from agentk.competition.dataview import cut, data_view, task_view
from agentk.core.engine import HOLE, Stage, fill
from agentk.policies.llm import LLMClient, Reply
from agentk.workspace import Workspace, code_file

SYSTEM = (
    "You are Agent K, a Kaggle grandmaster who sets competitions up for automated machine learning. "
    "You write correct, complete, runnable Python 3.11 (pandas, numpy, scikit-learn). Programs run with the "
    f"workspace as the current directory; the competition's raw files are under {Workspace.RAW}/."
)


class Calls:
    """The replies of one policy action, for the trajectory (tokens, seconds, cache hits)."""

    def __init__(self, llm: LLMClient):
        self.llm, self.log = llm, []

    def ask(self, intrinsic: str, stage: str, body: str) -> str:
        messages = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"[agentk:{intrinsic}] stage={stage}\n\n{body.strip()}"},
        ]
        reply: Reply = self.llm.chat(messages, purpose=f"{intrinsic}:{stage}")
        self.log.append(
            {"purpose": intrinsic, "tokens": reply.tokens, "seconds": round(reply.seconds, 3), "cached": reply.cached}
        )
        return reply.text or ""

    @property
    def tokens(self) -> int:
        return sum(c["tokens"] for c in self.log if not c["cached"])

    @property
    def calls(self) -> int:
        return sum(not c["cached"] for c in self.log)


# ---- the earlier stages' code, a view beside dataview's task and data views (Appendix D) ----------
def earlier_code(ws: Path, stage: Stage) -> str:
    files = sorted(p for p in ws.glob(code_file("*")) if p.name != stage.code_file)
    return "\n\n".join(f"# {p.name}\n{cut(p.read_text(), 2500)}" for p in files) or "(none yet)"


# ---- parsers ---------------------------------------------------------------------------------------
FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)```", re.S)


def extract_code(answer: str, template: str) -> str | None:
    """The program in a messy answer: the longest fenced block (or the bare answer if it parses as Python),
    put into the template's hole when the answer is only the hole's body. None when there is no valid code."""
    blocks = [body for lang, body in FENCE.findall(answer) if lang.lower() in ("", "python", "py", "python3")]
    candidates = sorted(blocks, key=len, reverse=True) or [answer.strip()]
    for code in candidates:
        code = code.strip("\n")
        if not code.strip() or HOLE in code:
            continue
        if template and HOLE in template and 'if __name__ == "__main__":' not in code:
            try:
                code = fill(template, code)
            except ValueError:
                pass
        try:
            ast.parse(code)
        except SyntaxError:
            continue
        if not blocks and not re.search(r"^\s*(import|from|def|class|[\w.\[\]'\"]+\s*=)", code, re.M):
            continue  # prose, not code
        return code + "\n"
    return None


def first_sentence(text: str) -> str:
    text = " ".join(text.strip().split())
    m = re.match(r"(.+?[.!?])(\s|$)", text)
    return (m.group(1) if m else text)[:400]


# ---- the intrinsic functions --------------------------------------------------------------------
def text_answer(calls: Calls, ws: Path, stage: Stage, tries: int = 3) -> str:
    """A text stage's output: the stage's own prompt asked and its answer parsed (Stage.prompt, Stage.parse);
    asked again with the parser's complaint while the answer is invalid, "" when it never was valid."""
    if stage.prompt is None:
        raise ValueError(f"text stage {stage.name!r} has no prompt for the LLM")
    complaint = ""
    for _ in range(tries):
        answer = calls.ask(stage.intrinsic or stage.name, stage.name, stage.prompt(ws) + complaint)
        try:
            return stage.parse(answer)
        except ValueError as exc:
            complaint = (
                f"\n\nYour previous answer was invalid ({first_sentence(str(exc))}). Answer in the asked format only."
            )
    return ""


def plan(calls: Calls, ws: Path, stage: Stage) -> str:
    answer = calls.ask(
        "plan",
        stage.name,
        f"""
Goal of this stage: {stage.goal}
{stage.hints}
Write a plan of at most 3 short numbered steps for the code. No code yet.

{task_view(ws)}

{data_view(ws)}""",
    )
    steps = [l.strip() for l in answer.splitlines() if re.match(r"^\s*(\d+[.)]|[-*])\s+", l)][:3]
    return "\n".join(steps) or first_sentence(answer)


def fix_example(fix: dict) -> str:
    """A fix retrieved from long-term memory (rag/), shown on a retry as in the paper's Appendix D.2."""
    return f"""
An example of a similar error being fixed (stage {fix["stage"]}, from an earlier setup):
Failing code:
```python
{cut(fix["failing_code"], 2000)}
```
Its error:
{cut(fix["error"], 1000)}
Fixed code (passed its unit tests):
```python
{cut(fix["fixed_code"], 2000)}
```
"""


def write_code(
    calls: Calls,
    ws: Path,
    stage: Stage,
    plan_text: str,
    previous: str | None = None,
    output: str = "",
    error: str = "",
    reflection: str = "",
    tries: int = 3,
    example: str = "",
) -> str | None:
    """Code that fills the template's hole; asked again (never executed) when the answer has no valid code.
    `example`: a retrieved fix of a similar error (fix_example), put after the error."""
    last = (
        f"""
Your previous attempt:
```python
{cut(previous or "", 6000)}
```
Its output:
{cut(output, 1500) or "(none)"}
The error:
{cut(error, 3000)}
Reflection: {reflection}
{example}"""
        if error
        else ""
    )
    nudge = ""
    for _ in range(tries):
        answer = calls.ask(
            "code",
            stage.name,
            f"""
Goal of this stage: {stage.goal}
{stage.hints}
Plan:
{plan_text}
{last}
Fill the hole `{HOLE}` of this template and answer with the complete program in one ```python block:
```python
{stage.template}
```
{nudge}
{task_view(ws)}

{data_view(ws)}

Code of earlier stages (already passing their tests):
{earlier_code(ws, stage)}""",
        )
        code = extract_code(answer, stage.template)
        if code is not None:
            return code
        nudge = "Your previous answer contained no valid Python program: answer with the complete program in a ```python block."
    return None


def reflect(calls: Calls, stage: Stage, code: str | None, error: str) -> str:
    return first_sentence(
        calls.ask(
            "reflect",
            stage.name,
            f"""
The code of stage {stage.name} failed its unit test. In one sentence, say what went wrong and how to fix it.
Code:
```python
{cut(code or "(none)", 5000)}
```
Error:
{cut(error, 3000)}""",
        )
    )


def meta_error_thought(calls: Calls, stage: Stage, error: str, covered: list[str]) -> str:
    return calls.ask(
        "meta_error_thought",
        stage.name,
        f"""
META-ERROR: a meta-unit test covering the stages {covered} failed after each of them passed its own tests:
{cut(error, 3000)}
In a few sentences, reason about which stage's code most likely causes this and why.""",
    ).strip()


def ca_thought(
    calls: Calls, ws: Path, stage: Stage, previous: str | None, error: str, meta_thought: str, example: str = ""
) -> tuple[bool, str, str | None]:
    """Credit assignment for one covered stage: (keep the previous code?, the thought, the new code).
    `example`: a retrieved fix of a similar meta-test error in this stage (fix_example)."""
    answer = calls.ask(
        "ca_thought",
        stage.name,
        f"""
A meta-unit test failed:
{cut(error, 2500)}
META-ERROR-THOUGHT: {meta_thought}
{example}
Is the code of stage {stage.name} at fault? Its goal: {stage.goal}
```python
{cut(previous or "(none)", 6000)}
```
Answer with "CA-THOUGHT: <one sentence>" then "DECISION: KEEP" or "DECISION: REWRITE"; when you rewrite, add the
complete corrected program (the template below, hole filled) in one ```python block.
```python
{stage.template}
```
Code of the other stages:
{earlier_code(ws, stage)}""",
    )
    m = re.search(r"CA-THOUGHT:\s*(.+)", answer)
    thought = first_sentence(m.group(1)) if m else first_sentence(answer)
    keep = not re.search(r"DECISION:\s*\**\s*REWRITE", answer, re.I)
    code = None if keep else extract_code(answer, stage.template)
    return keep, thought, code


def first_task(calls: Calls, trees: list[tuple[str, str]]) -> str | None:
    """The curriculum's first pick while long-term memory is empty (paper 3.3): the task whose data looks easiest
    to set up, named by the LLM; None when the answer names no task of the pool."""
    listing = "\n\n".join(f"Task {name}:\n{cut(tree or '(not downloaded yet)', 1500)}" for name, tree in trees)
    answer = calls.ask(
        "first_task",
        "curriculum",
        f"""
These competitions are waiting to be set up. Which one looks easiest to start with (few, simple files; one table
before many; tables before images, audio or text)? End your answer with a line "TASK: <name>".

{listing}""",
    )
    names = [name for name, _ in trees]
    m = re.search(r"TASK:\s*`?([^\s`]+)", answer)
    if m and m.group(1) in names:
        return m.group(1)
    named = sorted((answer.find(n), n) for n in names if n in answer)
    return named[0][1] if named else None
