"""The solution kinds, a registry: the solver builds each kind's solutions in this order, and cross-validation runs
each kind's recipe on its folds.

A kind is a module with:
- NAME, the kind's name (the key below, and a solution's `kind`);
- plans(solver) -> [(solution id, config)]: the solutions of this kind the task and the budget call for;
- build(solver, sid, **config) -> Solution: one of them, fitted on the fit rows and scored on the validation rows,
  within the wall time the solver allots it (solver.allotted); raises LeftOut when the budget does not buy it;
- fold(cv, sid, plan, train, held, k) -> its model-space predictions of the `held` train rows, rebuilt on the
  `train` rows as the solution was built (plan: its plan.json); cv is the CrossValidation under way;
- optionally fold_seconds(solution, folds) -> about what `fold` takes on every fold (without it: what building the
  solution took).

Adding a kind is adding one module and one line here (docs/solve.md)."""

from __future__ import annotations

from agentk.solve.kinds import autogluon, classical, constant, network

KINDS = {kind.NAME: kind for kind in (constant, autogluon, classical, network)}
