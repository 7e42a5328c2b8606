"""AutoGluon's work, planned before it fits (issue 17: budgets counted in work, wall time only as a safety cap).

AutoGluon has no work budget of its own: its time limit decides how many of its preset's models it fits, so with a
wall-clock limit a busy machine fits fewer models and gets another result (leaf-like 99 classes: 2 of the 9 models
in 60 s; 50,000 x 30 rows: 3 of 9 in 42 s, where all 9 take 200 s). Here the models are chosen before the fit from
the data and the machine's cores, never from a clock: each model of the portfolio (the preset's hyperparameters,
or those given), in AutoGluon's own fitting order, is modelled as

    (set-up + seconds per million table cells x cells x (columns / 20) ** (exponent - 1)), more for several
      classes (boosting: per class up to ten, past it as a power of the classes) x the bagging preset's folds and
      stack levels / the cores' speed-up

and a model is fitted when it fits in what the earlier ones left of the budget; when none fits alone, the cheapest
is fitted alone (not the first: on leaf-like 99 classes LightGBMXT, AutoGluon's first, alone models above the
budget, and the network that wins there costs an eighth of it). A model whose package is not installed is left out.
AutoGluon then fits the planned models to their own early stopping, with a time limit of SAFETY times the budget:
on a sane machine that limit never decides anything, so the same data on the same machine fits the same models
whatever else the machine runs. The network's epochs and CatBoost's iterations, which early stopping alone lets run
to 1,000 and 10,000 on a small separable table, are capped (CAPS).

The costs (COSTS) are measured with AutoGluon 1.6's medium_quality on one thread, no time limit, on synthetic binary
tables of 2,000 to 40,000 rows and 20 to 1,000 columns (benchmarks/autogluon_plan.py --calibrate prints modelled
against measured). A model's seconds do not follow the cells alone: on 40,000 x 20 and on 2,000 x 1,000 (2.5 times
the cells) CatBoost took 3 s and 120 s, LightGBM 3 s and 29 s, while a random forest (a few columns per split) took
51 s and 6 s and AutoGluon's network (its work is per row) 58 s and 4 s. So each family's cost per cell carries a
power of the columns, fitted over those shapes: measured over modelled lies between 0.4 and 1.7 on all of them,
where a cost per cell alone was off by up to 40 times. Below 20 columns the cost is per cell (not measured lower).
What the model cannot see is how many rounds boosting runs before it stops: those tables' signal sits in four
columns; on a 12,800 x 200 table whose every column carries a little of it (on one thread),
LightGBMXT ran 132 s (8,849 rounds) against 11 s modelled, and the safety cap then left out the planned forest.
Boosting's rounds are not capped by the plan: `benchmarks/autogluon_plan.py --rounds` measures what a cap would
cost, and on that table AutoGluon's early stopping on a 1,280-row holdout ends anywhere from 1,300 to 8,800 rounds
with the same settings on another sample, so a cap (with or without a higher learning rate) moved the test AUC by
-0.003 to +0.006; a sound cap needs a cost per round, per class, which is not modelled yet."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

# (AutoGluon key, name suffix) or key: (set-up seconds, seconds per million cells at 20 columns, column exponent)
# on one core; the cost of a cell goes with (columns / 20) ** (exponent - 1). Boosting's exponent is above 1 (more
# columns, more split candidates and rounds), the forests' below (a few columns per split), the network's 0 (its
# work is per row). XGBoost, KNN and fastai are not installed here and not measured: cost per cell alone.
COSTS = {
    ("GBM", "XT"): (0.8, 3.2, 1.3),
    "GBM": (0.8, 2.2, 1.5),
    ("GBM", "Large"): (4.0, 5.0, 1.6),
    "CAT": (2.0, 2.4, 1.9),
    "XGB": (1.0, 4.0, 1.0),
    "RF": (0.3, 50.0, 0.3),
    "XT": (0.3, 11.0, 0.15),
    "KNN": (0.2, 1.0, 1.0),
    "NN_TORCH": (3.0, 65.0, 0.0),
    "FASTAI": (3.0, 70.0, 1.0),
}
DEFAULT_COST = (3.0, 70.0, 1.0)  # a family not measured: as dear as the dearest
# CatBoost's cost of a million cells of category (or text) columns beside that: its per-category target statistics
# and their combinations. On 40,000 rows of the scale benchmark's table (benchmarks/scale.py) on one thread it ran
# 8.6 s (504 iterations) on the 50 number columns, and 87.8 s (1,008) with its 10 category columns too; in a quick
# solve, 439 s on 288,000 rows of 64 columns (10 of categories) on 2 cores. The number columns alone were planned
# at 13 s, all of them at 17 s: the category columns' cells cost about 175 s a million more.
CATEGORY_CELL = 175.0
REFERENCE_COLUMNS = 20  # the column count the costs per cell are given at
# several classes: boosting grows a tree per class each round, each with a set-up of its own (10 classes:
# LightGBM 13-16 s on 80,000 cells and 20 s on 400,000, against 1-5 s for two); up to MAX_CLASSES, per class.
# Past it the rounds fall as the classes rise, but not enough: on 600 x 192 (one thread), 30 and 99 classes cost
# LightGBM 33 and 69 s, LightGBMLarge 149 and over 240 s, CatBoost over 230 s for both (benchmarks/autogluon_plan.py
# --calibrate). So past MAX_CLASSES the cost grows as (classes / MAX_CLASSES) ** MANY_CLASSES[family].
BOOSTING = {"GBM", "CAT", "XGB"}
CLASS_SETUP = 1.5  # seconds per class
CLASS_SHARE = 0.4  # of the two-class cost per million cells, per class
MAX_CLASSES = 10
MANY_CLASSES = {"GBM": 0.6, ("GBM", "Large"): 1.5, "CAT": 2.0, "XGB": 0.6}
MULTICLASS = 2.0  # the other families, several classes against two
# regression: forests grow every tree to single rows, and large-leaved boosting runs longer (20,000 x 20: random
# forest 75 s, extra trees 21 s, LightGBMLarge 44 s, beside two busy processes)
REGRESSION = {"RF": 4.0, "XT": 4.0, ("GBM", "Large"): 4.0}
PACKAGES = {"GBM": "lightgbm", "CAT": "catboost", "XGB": "xgboost", "NN_TORCH": "torch", "FASTAI": "fastai"}
BAGGED_FITS = 16  # a bagging preset fits each model on 8 folds, on two stack levels
CORE_GAIN = 0.5  # each core past the first adds this much speed (the costs are for one core)
MIN_MODELS = 3  # a budget affords at least AutoGluon's first boosted models on every row (least_seconds)
MIN_ROWS = 10_000  # past a budget's ceiling, those models fit on a sample of at least this many rows (least_rows)
SAFETY = 5.0  # AutoGluon's time limit, in multiples of its budget: a runaway stops there, a busy machine does not
# Caps on a model's epochs or iterations (unless a configuration sets them), which early stopping alone does not
# bound. AutoGluon's network trains up to 1,000 epochs, ended by early stopping on its holdout (patience: half the
# best epoch plus 20) or by its time limit. On ordinary tables it stops after 25-45 epochs, which NN_TORCH's cost per
# row models; on a small, separable table its holdout loss keeps creeping towards 0: leaf-like, 99 classes on 458
# rows, it ran 715 epochs (best 463), 70 s plus about as long for its refit, planned at 7 s. Capped at 300, a runaway
# costs about 7 times the modelled cost. Up to its best epoch a capped run is the same run: of 59 fits in this
# project's benchmark runs (arena, examples, fixtures) only that leaf table had its best epoch past 221, so the cap
# changed no other model. There, 300 epochs ran 18 s and validated at a log loss of 0.0017 against 58 s and 0.0201
# for 1,000 (the best epoch overfitted the 115-row holdout; benchmarks/autogluon_plan.py --epochs). CatBoost runs
# up to 10,000 iterations at a fixed learning rate (0.05), so up to its best iteration a capped run is the same run
# too: the wine example (142 rows, 3 classes) ran all 10,000 in 145 s, and one output of the digits example 8,174 in
# 100 s, after which the safety cap stopped AutoGluon before the rest of its plan; no other of 65 CatBoost fits kept
# more than 1,280.
CAPS = {"NN_TORCH": ("num_epochs", 300), "CAT": ("iterations", 2000)}  # key: (parameter, most)


@dataclass(frozen=True)
class ModelPlan:
    """The models AutoGluon fits for one output, what plan.json records and the log shows."""

    hyperparameters: dict  # what AutoGluon is given: {key: [config, ...]}, the planned models only
    models: tuple[str, ...]  # their names, in AutoGluon's fitting order
    configs: tuple[tuple[str, dict], ...]  # (AutoGluon key, config) of each, in the same order
    skipped: tuple[str, ...]  # "name (why)"
    costs: dict  # {name: modelled seconds} of the planned models
    seconds: float  # their sum
    budget: float
    time_limit: float  # AutoGluon's wall clock: SAFETY times the budget

    def line(self) -> str:
        left = f"; left out: {', '.join(self.skipped)}" if self.skipped else ""
        models = f"{len(self.models)} model{'s' if len(self.models) > 1 else ''} ({', '.join(self.models)})"
        return (
            f"{models}, modelled at {self.seconds:.0f} s of the {self.budget:.0f} s budget "
            f"(safety cap {self.time_limit:.0f} s){left}"
        )


def plan_models(
    *,
    presets: str,
    hyperparameters: dict | str | None,
    kind: str,
    rows: int,
    columns: int,
    classes: int,
    seconds: float,
    cores: int,
    only: list[str] | None = None,
    categorical: int = 0,
    boosted_first: bool = False,
) -> ModelPlan:
    """Plans the models of the portfolio (hyperparameters, else the preset's) for an output of `kind` (binary,
    multiclass, regression) on rows x columns (`categorical` of them texts or categories) within `seconds` of
    modelled work; `only`: of these model names alone (a cross-validation fold, on a smaller budget, fits those of
    its solution's models that fit it); boosted_first: the seconds grew to fit the first boosted models
    (least_seconds), which are planned before the rest."""
    candidates, skipped = _modelled(presets, hyperparameters, kind, rows, columns, classes, cores, only, categorical)
    # in AutoGluon's order (with boosted_first, the first boosted models before it: the work grew for them), each
    # model that fits in what the earlier ones left; when none fits alone, the cheapest. On a 16,000-row table of
    # flights the forests before CatBoost scored a test AUC of 0.746, CatBoost before them 0.727
    cheapest = min(candidates, key=lambda c: c[3], default=None)
    alone = cheapest[2] if cheapest and cheapest[3] > seconds else None
    boosted = [c[2] for c in candidates if c[0] in BOOSTING][:MIN_MODELS] if boosted_first else []
    chosen, spent = set(), 0.0
    for _, _, name, cost in sorted(candidates, key=lambda c: c[2] not in boosted):  # stable: AutoGluon's order
        if name == alone or spent + cost <= seconds:
            chosen.add(name)
            spent += cost
    planned, costs, configs = {}, {}, []
    for key, config, name, cost in candidates:
        if name not in chosen:
            skipped.append(f"{name} (~{cost:.0f} s)")
            continue
        if key in CAPS and CAPS[key][0] not in config:
            config = {**config, CAPS[key][0]: CAPS[key][1]}
        planned.setdefault(key, []).append(config)
        configs.append((key, config))
        costs[name] = cost
    if not planned:
        raise ValueError(f"no AutoGluon model can be fitted for a {kind} output: {', '.join(skipped) or 'none asked'}")
    return ModelPlan(
        planned, tuple(costs), tuple(configs), tuple(skipped), costs, sum(costs.values()), seconds, SAFETY * seconds
    )


def least_seconds(
    *,
    presets: str,
    hyperparameters: dict | str | None,
    kind: str,
    rows: int,
    columns: int,
    classes: int,
    cores: int,
    categorical: int = 0,
) -> float:
    """The modelled seconds of the portfolio's first MIN_MODELS boosted models (in AutoGluon's order, those
    installed: LightGBM twice and CatBoost) on rows x columns: the least work any budget gives AutoGluon, so that a
    large table still gets its boosted trees fitted on every row rather than one model, or a sample (issue 48: the
    quick budget grows with the data). The forests and the network, dearer per row, fit when the budget allows."""
    candidates, _ = _modelled(presets, hyperparameters, kind, rows, columns, classes, cores, None, categorical)
    return sum(c[3] for c in [c for c in candidates if c[0] in BOOSTING][:MIN_MODELS])


def least_rows(seconds: float, *, rows: int, **shape) -> int:
    """The most of `rows` on which AutoGluon's first boosted models (least_seconds) cost at most `seconds`: a
    budget with a ceiling fits them on a sample of a table too large for it (MIN_ROWS at least)."""
    if least_seconds(**shape, rows=rows) <= seconds:
        return rows
    lo, hi = min(MIN_ROWS, rows), rows  # least_seconds grows with the rows: bisect
    while hi - lo > max(1, lo // 100):
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if least_seconds(**shape, rows=mid) <= seconds else (lo, mid)
    return lo


def _modelled(presets, hyperparameters, kind, rows, columns, classes, cores, only, categorical=0) -> tuple[list, list]:
    """([(key, config, name, modelled seconds)] of the portfolio's installed models in AutoGluon's fitting order,
    [the models left out, and why])."""
    bagged = _preset(presets).get("auto_stack", False)
    speed = 1 + CORE_GAIN * (max(1, cores) - 1)
    cells = rows * max(1, columns) / 1e6
    wide = max(columns, REFERENCE_COLUMNS) / REFERENCE_COLUMNS
    candidates, skipped = [], []
    for key, config, name, _ in sorted(_portfolio(presets, hyperparameters, kind), key=lambda e: -e[3]):
        if only is not None and name not in only:
            continue
        package = PACKAGES.get(key)
        if package and importlib.util.find_spec(package) is None:
            skipped.append(f"{name} ({package} not installed)")
            continue
        which = (key, _suffix(config))
        setup, per_million, exponent = COSTS.get(which, COSTS.get(key, DEFAULT_COST))
        per_million *= wide ** (exponent - 1)
        if key == "CAT":  # its statistics of each category's targets: a category column's cell costs far more
            per_million += CATEGORY_CELL * min(categorical, columns) / max(1, columns)
        if kind == "regression":
            cost = (setup + per_million * cells) * REGRESSION.get(which, REGRESSION.get(key, 1.0))
        elif kind != "multiclass":
            cost = setup + per_million * cells
        elif key in BOOSTING:
            beyond = (max(classes, MAX_CLASSES) / MAX_CLASSES) ** MANY_CLASSES.get(which, MANY_CLASSES.get(key))
            cost = setup + min(classes, MAX_CLASSES) * (CLASS_SETUP + CLASS_SHARE * per_million * cells) * beyond
        else:
            cost = MULTICLASS * (setup + per_million * cells)
        candidates.append((key, config, name, cost * (BAGGED_FITS if bagged else 1) / speed))
    return candidates, skipped


def _preset(presets: str) -> dict:
    from autogluon.tabular.configs.presets_configs import tabular_presets_alias, tabular_presets_dict

    return tabular_presets_dict[tabular_presets_alias.get(presets, presets)]


def _suffix(config: dict) -> str:
    return config.get("ag_args", {}).get("name_suffix", "")


def _portfolio(presets: str, hyperparameters: dict | str | None, kind: str) -> list[tuple[str, dict, str, int]]:
    """(key, config, model name, priority) of every model the portfolio fits for this kind of output."""
    from autogluon.tabular.configs.hyperparameter_configs import get_hyperparameter_config
    from autogluon.tabular.registry import ag_model_registry

    if hyperparameters is None:
        hyperparameters = _preset(presets).get("hyperparameters", "default")
    if isinstance(hyperparameters, str):
        hyperparameters = get_hyperparameter_config(hyperparameters)
    entries = []
    for key, configs in hyperparameters.items():
        model = ag_model_registry.key_to_cls(key)
        for config in configs if isinstance(configs, list) else [configs]:
            args = config.get("ag_args", {})
            if kind not in args.get("problem_types", [kind]):
                continue
            name = args.get("name_main", model.ag_name) + args.get("name_suffix", "")
            entries.append((key, config, name, args.get("priority", ag_model_registry.priority(model, kind))))
    return entries
