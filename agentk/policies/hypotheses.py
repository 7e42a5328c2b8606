"""Ranked hypotheses, searched under the unit tests (the Agent K way: propose, test, revise).

Each decision the analysis makes (which column holds the target, which test column holds the sample's ids...)
is a `Decision`: its options ranked best first, each with the evidence that ranked it, and the roles of the
stages whose code it shapes. The expert writes a stage from the current option of every decision. When a unit
test fails, it moves a decision shaping that stage to its next option; when a meta-test fails, credit
assignment moves a decision of a stage the meta-test covers, the earliest first. A dropped option and the error
that dropped it go to the state file (`hypotheses` in setup.json), which is also where the search resumes from:
the chosen option of a decision is the number of its options dropped so far.

Experience carries over: when a setup passes on an option other than the first, long-term memory keeps the
decision's shape (its options' evidence, numbers left out: no names) and the evidence of the option that passed
(rag.memory.Memory.add_hypothesis). A later analysis whose decision has the same shape ranks that option first
(`Decisions.recall`, set by the expert policy).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar


def shape(evidence: str) -> str:
    """Evidence without its numbers: how an option looks from one competition to the next."""
    return re.sub(r"\d+(?:\.\d+)?", "#", evidence)


@dataclass
class Hypothesis:
    value: Any  # what the analysis uses: a column name, None for "by position", a kind...
    evidence: str  # why it ranks where it does
    remembered: str = ""  # the competition where it passed on a decision of the same shape (ranked first for that)

    def describe(self) -> str:
        passed = f"; ranked first: it passed on {self.remembered}" if self.remembered else ""
        return f"{self.value!r} ({self.evidence}{passed})"


@dataclass
class Decision:
    name: str
    roles: set[str]  # the roles (agentk.workspace ROLE_*) of the stages whose code it shapes
    options: list[Hypothesis]  # ranked, best first
    explains: str = ""  # a regex over errors this decision can cause; "": any error of its stages
    owner: str = ""  # the role of the first stage it shapes: only a failure there or after it can revise it
    chosen: int = 0

    @property
    def current(self) -> Hypothesis:
        return self.options[min(self.chosen, len(self.options) - 1)]

    @property
    def left(self) -> int:
        """How many options remain after the current one."""
        return len(self.options) - 1 - self.chosen

    def fits(self, error: str | None) -> bool:
        return not self.explains or bool(error and re.search(self.explains, error, re.I))

    @property
    def shape(self) -> str:
        """What memory matches a later decision by: the name and the options' evidence, without numbers."""
        return " | ".join(shape(o.evidence) for o in self.options)


@dataclass
class Decisions:
    """The decisions of one analysis, in the order the analysis made them."""

    items: list[Decision] = field(default_factory=list)
    # memory's answer for a decision: (the evidence shape of the option that passed on its shape, where), or None
    recall: ClassVar[Callable[[Decision], tuple[str, str] | None] | None] = None

    def add(self, decision: Decision, chosen: dict[str, int]) -> Hypothesis:
        """Record `decision` with its option chosen so far; return that option. An option that passed before on a
        decision of the same shape is ranked first."""
        remembered = self.recall(decision) if self.recall is not None and len(decision.options) > 1 else None
        if remembered is not None:
            at = next((i for i, o in enumerate(decision.options) if shape(o.evidence) == remembered[0]), 0)
            if at:
                first = decision.options.pop(at)
                first.remembered = remembered[1]
                decision.options.insert(0, first)
        decision.chosen = min(chosen.get(decision.name, 0), len(decision.options) - 1)
        self.items = [d for d in self.items if d.name != decision.name] + [decision]
        return decision.current

    def shaping(self, roles: set[str]) -> list[Decision]:
        return [d for d in self.items if d.roles & roles]

    def used(self, roles: set[str]) -> dict[str, str]:
        """The current option of each decision shaping these roles, for the trajectory."""
        return {d.name: d.current.describe() for d in self.shaping(roles) if len(d.options) > 1}

    def to_revise(self, owners: list[str], error: str | None) -> Decision | None:
        """The decision to move on: one with an option left, first made at a stage whose role is in `owners` (the
        stages that run again: a retried stage, or those a failed meta-test covers), the earliest stage first; at
        each, one whose pattern the error matches before one that takes any error. A decision first made before
        them cannot move: the stages that already used it would not run again."""
        for owner in owners:
            open_ = [d for d in self.items if d.owner == owner and d.left > 0]
            found = next((d for d in open_ if d.explains and d.fits(error)), None) or next(
                (d for d in open_ if not d.explains), None
            )
            if found:
                return found
        return None


def chosen_from(dropped: list[dict]) -> dict[str, int]:
    """Each decision's current option: how many of its options were dropped (setup.json's `hypotheses`)."""
    out: dict[str, int] = {}
    for d in dropped:
        out[d["decision"]] = out.get(d["decision"], 0) + 1
    return out


def dropped_record(decision: Decision, stage: str, error: str | None) -> dict:
    """What the state file keeps of a dropped option: which, its evidence, the stage and error that dropped it,
    and the option tried next."""
    nxt = decision.options[decision.chosen + 1]
    lines = [ln.strip() for ln in (error or "").splitlines() if ln.strip()]
    return {
        "decision": decision.name,
        "dropped": decision.current.describe(),
        "stage": stage,
        "because": lines[-1][:500] if lines else "",
        "next": nxt.describe(),
        "shape": decision.shape,  # for long-term memory, should the next option pass
        "next_shape": shape(nxt.evidence),
    }
