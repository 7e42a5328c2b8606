"""AutoGluon's planned work (tools/autogluon_plan.py) against its wall-clock time limit, on an idle and a busy machine.

    uv run python benchmarks/autogluon_plan.py [--rows 4000 40000] [--columns 20] [--classes 2 10] [--seconds 42]
                                               [--busy 2]
    uv run python benchmarks/autogluon_plan.py --calibrate [--shapes 4000x20 40000x20 600x192x99 ...]
    uv run python benchmarks/autogluon_plan.py --rounds 0 4000 2000 3000@0.1
    uv run python benchmarks/autogluon_plan.py --epochs 100 300 1000 --workspace WS

On synthetic tables (rows x columns of normal features, a nonlinear score cut into `classes` classes, 20,000 test
rows) it fits AutoGluon's medium_quality twice, each on an idle machine and beside `--busy` processes spinning
on a core:
- "wall clock": what agentk did before, and what a user does: every model of the preset, time_limit=seconds;
- "planned": the models tools/autogluon_plan.py plans for `seconds` of modelled work, AutoGluon's time limit at
  its safety cap.
Per run it prints the models fitted, the seconds, the test accuracy, and per model the modelled against the
measured fit seconds (the cost table's check). The planned runs should fit the same models, and score the same,
idle or busy; the wall-clock ones need not.

--calibrate measures the cost table itself: on each rows x columns table (binary unless a third figure gives
the classes) it fits every model of the preset alone on one thread (a time limit of --limit seconds, reported
where it stopped a model), and prints per model the modelled against the measured seconds and their ratio (tools/autogluon_plan.py's COSTS were fitted to these figures; rerun it to recalibrate a machine).

--rounds asks what capping boosting's rounds (a work budget for them) would cost: on the wide fixture
(wide-anonymous-columns: 16,000 x 200, every column a little of the signal) it fits AutoGluon's LightGBMXT on 80 %
of the train rows, on one thread, with each CAP[@LEARNING_RATE] given (0: AutoGluon's default of 10,000 rounds,
early stopping decides), scored by AUC through a custom scorer as agentk's competition scorer is (LightGBM then
stops on AutoGluon's own AUC, not its native one), and prints the rounds kept, seconds, holdout and test AUC.

--epochs asks what capping AutoGluon's network in epochs costs (tools/autogluon_plan.py's CAPS): on a workspace
that agentk set up (with a table input), it fits AutoGluon's NeuralNetTorch alone on agentk's fit rows, as agentk's
AutoGluon tool does (its own holdout of them; no refit), with each cap, and prints the epochs it ran to (its best
epoch), the seconds, its holdout score (AutoGluon's sign: higher is better, losses negated) and agentk's validation
score on the rows AutoGluon never saw."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentk.parsing import read_csv  # noqa: E402
from tools import machine  # noqa: E402
from tools.autogluon_plan import plan_models  # noqa: E402

TEST_ROWS = 20_000


def table(rows: int, columns: int, classes: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows + TEST_ROWS, columns))
    score = X[:, 0] * X[:, 1] + np.sin(3 * X[:, 2]) + X[:, 3] ** 2 + 0.5 * rng.normal(size=len(X))
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, classes + 1)[1:-1]))
    return pd.DataFrame(X, columns=[f"x{i}" for i in range(columns)]).assign(y=y)


def fit(data: pd.DataFrame, rows: int, classes: int, seconds: float, planned: bool, busy: int) -> dict:
    from autogluon.tabular import TabularPredictor

    kind = "binary" if classes == 2 else "multiclass"
    plan = plan_models(
        presets="medium_quality",
        hyperparameters=None,
        kind=kind,
        rows=rows,
        columns=data.shape[1] - 1,
        classes=classes,
        seconds=seconds,
        cores=machine.cores(),
    )
    options = {"hyperparameters": plan.hyperparameters, "time_limit": plan.time_limit} if planned else {}
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(busy)]
    path = Path(tempfile.mkdtemp(prefix="ag-plan-"))
    try:
        time.sleep(1 if busy else 0)
        t0 = time.monotonic()
        predictor = TabularPredictor("y", problem_type=kind, path=str(path), verbosity=0).fit(
            data[:rows],
            presets="medium_quality",
            time_limit=options.pop("time_limit", seconds),
            ag_args_fit={"num_cpus": machine.idle_cores()},  # as the tool does: the cores others leave idle
            dynamic_stacking=False,
            **options,
        )
        seconds_taken = time.monotonic() - t0
    finally:
        for s in spinners:
            s.kill()
    board = predictor.leaderboard(silent=True).set_index("model")
    test = data[rows:]
    return {
        "models": [m for m in predictor.model_names() if not m.startswith("WeightedEnsemble")],
        "fit": board["fit_time_marginal"].to_dict(),
        "seconds": seconds_taken,
        "accuracy": float((predictor.predict(test) == test["y"]).mean()),
        "plan": plan,
        "path": path,
    }


def shape(text: str) -> tuple[int, int, int]:
    """--shapes: ROWSxCOLUMNS[xCLASSES] (two classes unless given), e.g. 10000x200 or 600x192x99."""
    parts = text.split("x")
    if not (len(parts) in (2, 3) and all(p.isdigit() and int(p) > 0 for p in parts) and int((parts + ["2"])[2]) > 1):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not ROWSxCOLUMNS[xCLASSES] with positive numbers and at least 2 classes, e.g. 600x192x99"
        )
    rows, columns, classes = (int(p) for p in parts + ["2"][: 3 - len(parts)])
    return rows, columns, classes


def calibrate(shapes: list[tuple[int, int, int]], limit: float) -> None:
    from autogluon.tabular import TabularPredictor

    print("| table | model | modelled s | measured s | measured / modelled |")
    print("|---|---|---|---|---|")
    for rows, columns, classes in shapes:
        data = table(rows, columns, classes)
        kind = "binary" if classes == 2 else "multiclass"
        plan = plan_models(
            presets="medium_quality",
            hyperparameters=None,
            kind=kind,
            rows=rows,
            columns=columns,
            classes=classes,
            seconds=float("inf"),
            cores=1,
        )
        for name, (key, config) in zip(plan.models, plan.configs, strict=True):
            path = Path(tempfile.mkdtemp(prefix="ag-cost-"))
            try:  # each model alone, so that one runaway shows as such and the rest still print
                # every class kept however few its rows, as agentk's AutoGluon tool does
                predictor = TabularPredictor(
                    "y", problem_type=kind, path=str(path), verbosity=0, learner_kwargs={"label_count_threshold": 1}
                ).fit(
                    data[:rows],
                    hyperparameters={key: [config]},
                    time_limit=limit,
                    ag_args_fit={"num_cpus": 1},
                    dynamic_stacking=False,
                    fit_weighted_ensemble=False,
                )
                measured = float(predictor.leaderboard(silent=True)["fit_time_marginal"].sum())
            finally:
                shutil.rmtree(path, ignore_errors=True)
            stopped = " (stopped by the time limit)" if measured >= 0.9 * limit else ""
            modelled = plan.costs[name]
            table_name = f"{rows}x{columns}" + (f"x{classes}" if classes > 2 else "")
            print(
                f"| {table_name} | {name} | {modelled:.1f} | {measured:.1f}{stopped} | {measured / modelled:.2f} |",
                flush=True,
            )


def rounds(specs: list[tuple[int, float | None]]) -> None:
    from autogluon.core.metrics import make_scorer
    from autogluon.tabular import TabularPredictor
    from sklearn.metrics import roc_auc_score

    from testing.competitions import build

    folder = build("wide-anonymous-columns", Path(tempfile.mkdtemp(prefix="ag-rounds-")))
    key, label = read_csv(folder / "public" / "sample_submission.csv", nrows=1).columns
    train = read_csv(folder / "public" / "train.csv").drop(columns=key).sample(frac=0.8, random_state=0)
    test = pd.read_csv(folder / "public" / "test.csv").merge(pd.read_csv(folder / "private" / "answers.csv"), on=key)
    auc = make_scorer("auc", roc_auc_score, optimum=1, greater_is_better=True, needs_proba=True)
    print(f"LightGBMXT on {folder.name}, {len(train)} x {train.shape[1] - 1}, one thread\n")
    print("| rounds cap | learning rate | rounds kept | seconds | holdout AUC | test AUC |")
    print("|---|---|---|---|---|---|")
    for cap, rate in specs:
        config = (
            {"extra_trees": True}
            | ({"num_boost_round": cap} if cap else {})
            | ({"learning_rate": rate} if rate else {})
        )
        path = Path(tempfile.mkdtemp(prefix="ag-rounds-"))
        try:
            t0 = time.monotonic()
            predictor = TabularPredictor(label, problem_type="binary", eval_metric=auc, path=str(path), verbosity=0)
            predictor.fit(
                train, hyperparameters={"GBM": [config]}, ag_args_fit={"num_cpus": 1}, fit_weighted_ensemble=False
            )
            seconds = time.monotonic() - t0
            model = predictor._trainer.load_model(predictor.model_names()[0])
            kept = model.params_trained["num_boost_round"]
            holdout = predictor.leaderboard(silent=True)["score_val"].iloc[0]
            score = roc_auc_score(test[label], predictor.predict_proba(test)[1])
        finally:
            shutil.rmtree(path, ignore_errors=True)
        print(
            f"| {cap or 'none (10,000)'} | {rate or 0.05} | {kept} | {seconds:.1f} | {holdout:.4f} | {score:.4f} |",
            flush=True,
        )
    shutil.rmtree(folder.parent, ignore_errors=True)


def epochs(caps: list[int], task) -> None:
    from autogluon.tabular import TabularPredictor

    from tools.autogluon_tool import fit_autogluon

    fit, val = task.split
    print(f"AutoGluon's network alone on {Path(task.ws).name}: {len(fit)} fit rows, {len(val)} validation rows\n")
    print(f"| epochs cap | best epoch | seconds | AutoGluon's holdout score | validation {task.metric_name} |")
    print("|---|---|---|---|---|")
    for cap in caps:
        path = Path(tempfile.mkdtemp(prefix="ag-epochs-"))
        try:
            t0 = time.monotonic()
            out = fit_autogluon(task, 60, out_dir=path, refit=False, hyperparameters={"NN_TORCH": {"num_epochs": cap}})
            seconds = time.monotonic() - t0
            best = []
            for model in out["models"]:
                predictor = TabularPredictor.load(model["path"], verbosity=0)
                best.append(predictor._trainer.load_model("NeuralNetTorch").params_trained["num_epochs"])
            holdout = [
                r["score_val"] for m in out["models"] for r in m["leaderboard"] if r["model"] == "NeuralNetTorch"
            ]
        finally:
            shutil.rmtree(path, ignore_errors=True)
        print(
            f"| {cap} | {', '.join(map(str, best))} | {seconds:.1f} | {', '.join(f'{h:.5g}' for h in holdout)} | "
            f"{out['val_score']:.5g} |",
            flush=True,
        )


def cap(text: str) -> tuple[int, float | None]:
    """--rounds: CAP or CAP@LEARNING_RATE, e.g. 4000 or 3000@0.1; 0 is no cap."""
    rounds, _, rate = text.partition("@")
    try:
        return int(rounds), float(rate) if rate else None
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not ROUNDS or ROUNDS@LEARNING_RATE, e.g. 3000@0.1") from None


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, nargs="+", default=[4000, 40000])
    p.add_argument("--columns", type=int, default=20)
    p.add_argument("--classes", type=int, nargs="+", default=[2, 10])
    p.add_argument("--seconds", type=float, default=42.0, help="the budget (quick: 60 s x 0.7 before the refit)")
    p.add_argument("--busy", type=int, default=2, help="processes spinning beside the busy runs")
    p.add_argument("--calibrate", action="store_true", help="measure every model's cost on --shapes instead")
    p.add_argument(
        "--shapes",
        type=shape,
        nargs="+",
        default=[(4000, 20, 2), (40000, 20, 2), (20000, 60, 2), (10000, 200, 2), (4000, 500, 2)],
        help="ROWSxCOLUMNS tables for --calibrate",
    )
    p.add_argument(
        "--limit", type=float, default=300.0, help="for --calibrate: AutoGluon's time limit per model, in seconds"
    )
    p.add_argument(
        "--rounds", type=cap, nargs="+", metavar="CAP[@LR]", help="capped boosting on the wide fixture instead"
    )
    p.add_argument("--epochs", type=int, nargs="+", metavar="CAP", help="AutoGluon's network capped, on --workspace")
    p.add_argument("--workspace", type=Path, help="for --epochs: a workspace agentk set up, with a table input")
    args = p.parse_args()
    if args.epochs:
        if args.workspace is None or not (args.workspace / "setup.json").is_file():
            p.error("--epochs needs --workspace WS: a folder where `agentk setup` finished (it has setup.json)")
        from agentk.modalities import TABULAR
        from tools.task_data import TaskData

        task = TaskData(args.workspace)
        if TABULAR.name not in task.modalities:
            p.error(f"--epochs needs a workspace with a {TABULAR.name} input; {args.workspace} has {task.modalities}")
        return epochs(args.epochs, task)
    if args.rounds:
        return rounds(args.rounds)
    if args.calibrate:
        return calibrate(args.shapes, args.limit)
    print("| table | time limit | machine | models fitted | seconds | test accuracy |")
    print("|---|---|---|---|---|---|")
    costs = []
    for rows in args.rows:
        for classes in args.classes:
            data = table(rows, args.columns, classes)
            for planned in (False, True):
                for busy in sorted({0, args.busy}):  # --busy 0: the idle runs alone
                    r = fit(data, rows, classes, args.seconds, planned, busy)
                    shutil.rmtree(r["path"], ignore_errors=True)
                    how = (
                        f"planned (cap {r['plan'].time_limit:.0f} s)" if planned else f"wall clock {args.seconds:.0f} s"
                    )
                    print(
                        f"| {rows} x {args.columns}, {classes} classes | {how} | {'busy' if busy else 'idle'} | "
                        f"{len(r['models'])}: {', '.join(r['models'])} | {r['seconds']:.1f} | {r['accuracy']:.4f} |",
                        flush=True,
                    )
                    if planned and not busy:
                        costs.append((rows, classes, r))
    print("\nModelled against measured fit seconds (planned runs, idle):\n")
    print("| table | model | modelled s | measured s |")
    print("|---|---|---|---|")
    for rows, classes, r in costs:
        plan = r["plan"]
        for name in plan.models:
            measured = r["fit"].get(name, float("nan"))
            print(f"| {rows} x {args.columns}, {classes} classes | {name} | {plan.costs[name]:.1f} | {measured:.1f} |")


if __name__ == "__main__":
    main()
