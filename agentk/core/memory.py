"""Working memory of an episode (paper section 2): typed entries the policy reads and the trajectory keeps.

Kinds: PLAN, CODE, CODE-OUTPUT, ERROR (a unit test's), REFLECTION, META-ERROR, META-ERROR-THOUGHT,
CA-THOUGHT, KEEP, TEXT.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agentk.core.text import truncate


@dataclass
class Entry:
    kind: str
    stage: str
    text: str


@dataclass
class WorkingMemory:
    entries: list[Entry] = field(default_factory=list)

    def add(self, kind: str, stage: str, text: str) -> Entry:
        entry = Entry(kind, stage, truncate(text or "", 6000))
        self.entries.append(entry)
        return entry

    def record(self, stage: str, mode: str, kind: str, action, output: str, error: str | None) -> list[Entry]:
        """Entries for one attempt of a stage; returned so the trajectory line shows them."""
        added = [self.add(kind_, stage, text) for kind_, text in (action.notes if action is not None else [])]
        if action is not None and action.thought:
            thought_kind = (
                "CA-THOUGHT" if mode == "credit_assignment" else ("REFLECTION" if mode == "retry" else "PLAN")
            )
            added.append(self.add(thought_kind, stage, action.thought))
        if kind == "keep":
            added.append(self.add("KEEP", stage, "kept the previous output"))
        elif action is not None and action.code:
            added.append(self.add("CODE", stage, action.code))
        elif action is not None and action.text:
            added.append(self.add("TEXT", stage, action.text))
        if output:
            added.append(self.add("CODE-OUTPUT", stage, output))
        if error:
            added.append(self.add("ERROR", stage, error))
        return added

    def for_stage(self, stage: str, kinds: tuple[str, ...] | None = None) -> list[Entry]:
        return [e for e in self.entries if e.stage == stage and (kinds is None or e.kind in kinds)]

    def last(self, kind: str, stage: str | None = None) -> Entry | None:
        for e in reversed(self.entries):
            if e.kind == kind and (stage is None or e.stage == stage):
                return e
        return None
