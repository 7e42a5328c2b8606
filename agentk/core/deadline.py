"""The solve's bound on the wall clock (issue 60: "quick" ends on time on a busy machine).

A budget's work is planned from the data and the machine (agentk/solve/budgets.py, tools/autogluon_plan.py), and on
an idle machine that plan decides everything. A busy machine runs the same work slower: a quick solve of 27,000 rows
and 22 classes, planned at minutes, was still in AutoGluon after 30 minutes beside a second process. So every
solution also runs under the wall time the solve has left (`Deadline.allot`): each one is given what is left less a
floor for each solution still to come and a reserve for the end (the blend, the choice), and stops on its own when
that is spent (AutoGluon's time limit, a network's training runs and trials, a classical candidate's choices, a
refit skipped); the solve then moves on. `agentk solve` stops the whole tree a little past the bound
(SolveBudget.wall_cap), where the best submission finished so far is already in place."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

FINISH_SHARE = 0.05  # of the bound, kept for the end: cross-validation's verdicts, the blend, the choice
LATER_SHARE = 0.1  # of the bound, the floor kept for each solution still to come
LEAST_S = 5.0  # a solution allotted less than this is left out: nothing useful fits in it
MARGIN = 2.0  # a solution's modelled work is at most this share of its allotment: a model of work can be 2x off


@dataclass
class Deadline:
    seconds: float  # the bound: wall seconds from `start`
    start: float = field(default_factory=time.monotonic)

    def left(self) -> float:
        """Wall seconds until the bound."""
        return self.seconds - (time.monotonic() - self.start)

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def allot(self, later: int) -> float:
        """Wall seconds the next solution may take, with `later` solutions still to come after it: what is left,
        less the end's reserve and each later solution's floor (0: none left)."""
        kept = self.seconds * (FINISH_SHARE + LATER_SHARE * later)
        return max(0.0, self.left() - kept)

    def until(self, seconds: float) -> Deadline:
        """A deadline `seconds` from now (a solution's own, within the solve's)."""
        return Deadline(max(0.0, min(seconds, self.left())))
