"""agentk at scale (issue 49 part 3): three generated families, each at three sizes (train + test rows together, a
fifth of them test), in plain Kaggle layouts, run as a user runs agentk: `uv run agentk setup <folder> --workspace
<ws>`, then `uv run agentk solve --workspace <ws> --budget quick`, each a subprocess timed and watched for memory.

- table: 10k, 100k, 500k rows of 60 columns (40 numbers, 10 counts, 8 string codes, 2 Y/N flags; 3 % of the
  numbers and 2 % of the codes missing), a binary target, AUC; numeric ids.
- images: 2k, 20k, 50k JPEGs of 96 px: a circle, square or triangle of some hue on grey stripes, with pixel noise;
  the label's odds follow the shape and the hue; AUC; the id column holds the file name (`k3f9a2.jpg`), the
  files are train/<id> and test/<id>.
- texts: 10k, 100k, 300k short reviews drawn from a vocabulary of weighted signal words (a "not" before one flips
  its weight) and Zipf-distributed noise words; AUC; 16-digit hex string ids, some of which read as numbers: all
  digits with a leading zero, or digits around one `e` (`028e454608203890`, a float to pandas).

The goal (issue 49): on a 2-core machine, at every size, setup under 5 minutes, quick solve under 15 minutes,
peak memory under 8 GB, and a score at least the baseline's in the same time. The baseline is what a user would run
instead, given at most agentk's solve seconds: a default lightgbm.LGBMClassifier() on every row (table),
TF-IDF of words and word pairs + LogisticRegression (texts), a small CNN in torch trained for as many epochs as fit
(images). The generator knows each row's true probability: the best possible score is their AUC on the test rows
(for the table an upper bound, as the probabilities were drawn before cells were blanked).

Peak memory is the highest sum of RSS over the agentk process and all its descendants (the sandboxed solver
too, which /usr/bin/time misses), sampled every 0.5 s: pages shared between processes are counted once per
process, so it overstates, and a spike shorter than the interval can be missed.

    uv run python benchmarks/scale.py [--families table images texts] [--sizes small mid large] [--scale FACTOR]
                                      [--out DIR] [--seed N] [--timeout S] [--fresh]

--scale multiplies every size (at least 100 rows each): `--families table --scale 0.01` is a smoke run of 100,
1,000 and 5,000 rows. Each finished run is appended to <out>/scale.json at once, so a long run that dies keeps
what it finished; a rerun skips the runs recorded there (same family, rows and seed) unless --fresh, and runs
those that failed again. The table of the runs at this --scale and --seed goes to <out>/scale.md, and at full
scale (--scale 1) to benchmarks/results/scale.md."""

from __future__ import annotations

import argparse
import colorsys
import json
import multiprocessing
import os
import re
import shutil
import string
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import psutil
from sklearn.metrics import roc_auc_score

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.solve import markdown  # noqa: E402

SIZES = {"table": (10_000, 100_000, 500_000), "images": (2_000, 20_000, 50_000), "texts": (10_000, 100_000, 300_000)}
SIZE_NAMES = ("small", "mid", "large")
FAMILIES = tuple(SIZES)
TEST_SHARE = 0.2
MIN_ROWS = 100
GOAL_SOLVE_S = 900  # the baseline's time when agentk's solve did not finish
PIXELS = 96
COLUMNS = (
    "family",
    "size",
    "id kind",
    "setup s",
    "setup peak GB",
    "solve s",
    "solve peak GB",
    "solve estimate GB",
    "solve cgroup GB",
    "agentk score",
    "baseline",
    "baseline score",
    "baseline s",
    "best possible score",
)


@dataclass
class Problem:
    train: pd.DataFrame  # id, inputs, then the target
    test: pd.DataFrame  # id, inputs
    answers: np.ndarray  # the test rows' targets
    truth: np.ndarray  # the generator's P(target = 1) on the test rows
    id_kind: str
    description: str
    drawings: list[tuple] = field(default_factory=list)  # images: (path under the folder, _draw's arguments)

    @property
    def target(self) -> str:
        return self.train.columns[-1]

    def best(self) -> float:
        return float(roc_auc_score(self.answers, self.truth))


def description(title: str, story: str, target: str, example_id: str) -> str:
    return f"""# {title}

## Description

{story}

## Evaluation

Submissions are evaluated on area under the ROC curve between the predicted probability and the observed target.

## Submission File

For each `id` in the test set, predict a probability for the `{target}` variable. The file should contain a
header and have the following format:

```
id,{target}
{example_id},0.5
```
"""


def split(frame: pd.DataFrame, target: str, p: np.ndarray, rng: np.random.Generator) -> tuple:
    """(train with the target drawn from p, test without it, the test answers, the test probabilities)."""
    y = (rng.random(len(p)) < p).astype(int)
    n_train = len(p) - round(len(p) * TEST_SHARE)
    train = frame.iloc[:n_train].assign(**{target: y[:n_train]})
    return train, frame.iloc[n_train:].reset_index(drop=True), y[n_train:], p[n_train:]


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-z))


# -- the table ---------------------------------------------------------------------------------------------------
CARDINALITIES = (3, 5, 8, 12, 20, 50, 100, 4)


def table(rows: int, rng: np.random.Generator) -> Problem:
    x = rng.normal(size=(rows, 40))
    x[:, 8] = 0.7 * x[:, 4] + 0.7 * x[:, 8]  # a noisy proxy of a signal column: real features overlap
    counts = rng.poisson(3, size=(rows, 10))
    codes = [rng.integers(0, k, rows) for k in CARDINALITIES]
    flags = rng.random((rows, 2)) < [0.3, 0.5]
    logit = x[:, 0] * x[:, 1] + 1.2 * (x[:, 2] > 0.5) + np.sin(2 * x[:, 3]) + 0.5 * x[:, 4] - 0.3 * x[:, 5] ** 2
    logit += 0.4 * x[:, 6] + 0.25 * (counts[:, 0] - 3) + np.linspace(-0.6, 0.6, 3)[codes[0]]
    logit += rng.normal(0, 0.5, CARDINALITIES[5])[codes[5]] + 0.5 * flags[:, 0] - 1.0  # a code with odds per level
    frame = pd.DataFrame(x.round(4), columns=[f"num_{i:02d}" for i in range(40)])
    frame = frame.mask(rng.random(frame.shape) < 0.03)
    frame[[f"count_{i}" for i in range(10)]] = counts
    for i, (k, code) in enumerate(zip(CARDINALITIES, codes)):
        levels = np.array([f"{string.ascii_uppercase[i]}{j:03d}" for j in range(k)], dtype=object)[code]
        frame[f"code_{i}"] = np.where(rng.random(rows) < 0.02, None, levels)
    frame["flag_0"], frame["flag_1"] = np.where(flags, "Y", "N").T
    frame.insert(0, "id", np.arange(rows))  # test ids follow train's, as in Kaggle's playground series
    train, test, answers, truth = split(frame, "churned", sigmoid(logit), rng)
    story = (
        "Each row is a customer of a subscription service: forty measurements, ten counts of events, eight "
        "coded fields and two flags. Predict whether the customer leaves (`churned`)."
    )
    return Problem(
        train, test, answers, truth, "numeric", description("Customer Churn", story, "churned", test["id"][0])
    )


# -- the texts ---------------------------------------------------------------------------------------------------
POSITIVE = "great excellent superb love perfect wonderful amazing delightful reliable sturdy comfortable fast friendly"
POSITIVE += " fresh tasty bright smooth generous charming recommend"
NEGATIVE = "awful terrible broken hate poor disappointing slow rude stale bland flimsy noisy leaking refund cheap late"
NEGATIVE += " dirty faulty boring useless"
FILLER = "the a and it was is this to of for with my but very i we they on at so".split()


def vocabulary() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(words, their weight on the log odds, the noise words' sampling probabilities), the same for every size:
    signal words first, then "not", then the fillers and 3,000 pseudo-words ("bakori") by a Zipf law."""
    rng = np.random.default_rng(0)
    syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
    pseudo: set[str] = set()
    while len(pseudo) < 3000:
        pseudo.add("".join(rng.choice(syllables, rng.integers(2, 4))))
    signal = POSITIVE.split() + NEGATIVE.split()
    weights = np.r_[np.linspace(0.6, 1.6, 20), -np.linspace(0.6, 1.6, 20)]
    noise = FILLER + sorted(pseudo)
    zipf = 1 / np.arange(1, len(noise) + 1) ** 1.1
    words = np.array(signal + ["not"] + noise, dtype=object)
    return words, np.r_[weights, np.zeros(1 + len(noise))], zipf / zipf.sum()


def hex_ids(n: int, rng: np.random.Generator) -> np.ndarray:
    """16-digit hex strings; about 1 % all digits with a leading zero, and 1 % digits around one `e`: ids a CSV
    reader takes for numbers (the first loses its zero, the second becomes a float)."""
    ids = np.array([f"{v:016x}" for v in rng.integers(0, 2**64, n, dtype=np.uint64)], dtype=object)
    special = rng.choice(n, max(2, n // 50), replace=False)
    for k, i in enumerate(special):
        digits = "".join(map(str, rng.integers(0, 10, 15)))
        ids[i] = "0" + digits if k % 2 else digits[:3] + "e" + digits[3:]  # e.g. 028e454608203890
    if len(set(ids)) < n:  # a collision among 2^64 values: draw again
        return hex_ids(n, rng)
    return ids


def texts(rows: int, rng: np.random.Generator) -> Problem:
    words, weight, noise_p = vocabulary()
    n_signal, negation = 40, 40
    lengths = rng.integers(6, 31, rows)
    kind = rng.random(lengths.sum())
    tokens = np.where(
        kind < 0.12,
        rng.integers(0, n_signal, len(kind)),
        np.where(kind < 0.15, negation, negation + 1 + rng.choice(len(noise_p), len(kind), p=noise_p)),
    )
    doc = np.repeat(np.arange(rows), lengths)
    w = weight[tokens]
    negated = (np.r_[-1, tokens[:-1]] == negation) & (np.r_[-1, doc[:-1]] == doc)
    w[negated] *= -1
    logit = np.bincount(doc, weights=w, minlength=rows) - 0.3
    text = [" ".join(ws) for ws in np.split(words[tokens], np.cumsum(lengths)[:-1])]
    frame = pd.DataFrame({"id": hex_ids(rows, rng), "text": text})
    train, test, answers, truth = split(frame, "liked", sigmoid(logit), rng)
    story = "Each row is a short customer review of a product. Predict whether the customer liked it (`liked`)."
    return Problem(
        train, test, answers, truth, "hex string", description("Review Sentiment", story, "liked", test["id"][0])
    )


# -- the images --------------------------------------------------------------------------------------------------
SHAPE_LOGIT = np.array([1.5, 0.0, -1.5])  # circle, square, triangle


def file_ids(n: int, rng: np.random.Generator) -> np.ndarray:
    alphabet = np.array(list(string.ascii_lowercase + string.digits))
    names = {"".join(rng.choice(alphabet, 6)) + ".jpg" for _ in range(n)}
    while len(names) < n:
        names.add("".join(rng.choice(alphabet, 6)) + ".jpg")
    return rng.permutation(sorted(names))


def images(rows: int, rng: np.random.Generator) -> Problem:
    shape, hue = rng.integers(0, 3, rows), rng.random(rows)
    logit = SHAPE_LOGIT[shape] + 1.5 * np.cos(2 * np.pi * hue)  # red circles likely, cyan triangles not
    frame = pd.DataFrame({"id": file_ids(rows, rng)})
    train, test, answers, truth = split(frame, "label", sigmoid(logit), rng)
    size, centre = rng.integers(18, 41, rows), rng.integers(24, PIXELS - 23, (rows, 2))
    angle, seed = rng.random(rows) * np.pi, rng.integers(0, 2**31, rows)
    paths = np.where(np.arange(rows) < len(train), "train/", "test/").astype(object) + frame["id"].to_numpy()
    columns = (paths, shape.tolist(), hue.tolist(), size.tolist(), *centre.T.tolist(), angle.tolist(), seed.tolist())
    drawings = list(zip(*columns))  # plain Python values: they go to the drawing processes
    story = (
        f"Each image is a {PIXELS}x{PIXELS} photo of a sticker on a striped background, named by the `id` column: "
        "train/<id> and test/<id>. Predict whether the sticker passes the quality check (`label`)."
    )
    return Problem(
        train, test, answers, truth, "file name", description("Sticker Check", story, "label", test["id"][0]), drawings
    )


def _draw(folder: str, drawing: tuple) -> None:
    from PIL import Image, ImageDraw

    path, shape, hue, size, cx, cy, angle, seed = drawing
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:PIXELS, :PIXELS]
    stripes = np.sin((xx * np.cos(angle) + yy * np.sin(angle)) * rng.uniform(0.2, 0.6)) > 0
    dark, light = rng.integers(30, 100) + rng.integers(-15, 16, 3), rng.integers(140, 210) + rng.integers(-15, 16, 3)
    img = Image.fromarray(np.where(stripes[..., None], dark, light).astype(np.uint8))
    colour = tuple(int(255 * c) for c in colorsys.hsv_to_rgb(hue, 0.85, 0.95))
    r = size / 2
    box = [cx - r, cy - r, cx + r, cy + r]
    draw = ImageDraw.Draw(img)
    if shape == 0:
        draw.ellipse(box, fill=colour)
    elif shape == 1:
        draw.rectangle(box, fill=colour)
    else:
        draw.polygon([(cx, cy - r), (cx - r, cy + r), (cx + r, cy + r)], fill=colour)
    noisy = np.asarray(img, dtype=float) + rng.normal(0, 12, (PIXELS, PIXELS, 3))
    Image.fromarray(noisy.clip(0, 255).astype(np.uint8)).save(Path(folder) / path, quality=90)


def write(problem: Problem, folder: Path) -> None:
    """The Kaggle layout: train.csv, test.csv, sample_submission.csv, description.md (and the images, drawn by
    one process per core)."""
    shutil.rmtree(folder, ignore_errors=True)
    for sub in ("train", "test") if problem.drawings else ():
        (folder / sub).mkdir(parents=True)
    folder.mkdir(parents=True, exist_ok=True)
    problem.train.to_csv(folder / "train.csv", index=False)
    problem.test.to_csv(folder / "test.csv", index=False)
    sample = pd.DataFrame({"id": problem.test["id"], problem.target: 0.5})
    sample.to_csv(folder / "sample_submission.csv", index=False)
    (folder / "description.md").write_text(problem.description)
    if problem.drawings:
        with multiprocessing.Pool() as pool:
            for _ in pool.imap_unordered(partial(_draw, str(folder)), problem.drawings, chunksize=64):
                pass


GENERATORS: dict[str, Callable[[int, np.random.Generator], Problem]] = {
    "table": table,
    "images": images,
    "texts": texts,
}


# -- running agentk ----------------------------------------------------------------------------------------------
@dataclass
class Measured:
    rc: int | None  # None: killed at the time limit
    seconds: float
    peak_gb: float
    last_line: str  # the log's, for a failure


def tree_rss(root: psutil.Process) -> int:
    """RSS summed over a process and all its descendants (0 once it is gone)."""
    try:
        processes = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0
    total = 0
    for p in processes:
        try:
            total += p.memory_info().rss
        except psutil.Error:  # it ended between the listing and the reading
            pass
    return total


def kill_tree(root: psutil.Process) -> None:
    for p in [*root.children(recursive=True), root]:
        try:
            p.kill()
        except psutil.Error:
            pass


def measured(cmd: list[str], log: Path, env: dict | None = None, timeout: float = 3600) -> Measured:
    """Run cmd (output to log), its wall seconds and its process tree's peak RSS sampled every 0.5 s."""
    t0, peak = time.monotonic(), 0
    with open(log, "w") as out:
        child = subprocess.Popen(cmd, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env)
        root = psutil.Process(child.pid)
        while True:
            peak = max(peak, tree_rss(root))
            try:
                rc = child.wait(timeout=0.5)
                break
            except subprocess.TimeoutExpired:
                if time.monotonic() - t0 > timeout:
                    kill_tree(root)
                    child.wait()
                    rc = None
                    break
    lines = [s.strip() for s in log.read_text(errors="replace").replace("\r", "\n").splitlines() if s.strip()]
    return Measured(rc, time.monotonic() - t0, peak / 1e9, lines[-1][:200] if lines else "")


def agentk(folder: Path, run_dir: Path, timeout: float) -> dict:
    """Setup then quick solve in run_dir/workspace, a fresh long-term memory per run (runs must not learn from
    each other); their seconds, peak GB, and an "error" when one failed."""
    shutil.rmtree(run_dir, ignore_errors=True)  # a run that died midway starts over
    run_dir.mkdir(parents=True)
    ws = run_dir / "workspace"
    env = {**os.environ, "AGENTK_MEMORY": str(run_dir / "memory"), "COLUMNS": "80"}
    record = {}
    for step, args in (
        ("setup", ["setup", str(folder), "--workspace", str(ws)]),
        ("solve", ["solve", "--workspace", str(ws), "--budget", "quick"]),
    ):
        m = measured(["uv", "run", "agentk", *args], run_dir / f"{step}.log", env, timeout)
        record |= {f"{step} s": round(m.seconds), f"{step} peak GB": round(m.peak_gb, 2)}
        if m.rc != 0:
            why = f"killed after {timeout:.0f} s" if m.rc is None else f"exit {m.rc}"
            return record | {"error": f"{step} {why}: {m.last_line} ({run_dir / step}.log)"}
    return record | solve_memory(ws)


def solve_memory(ws: Path) -> dict:
    """What the solver estimated its peak at before it started (its log's line), and the peak its memory cgroup
    measured over the whole tree, page cache included (solve.json; absent where no cgroup could be made)."""
    found = re.search(r"peak memory estimated at ([0-9.]+) GB", (ws / "logs" / "solve.log").read_text(errors="replace"))
    summary = json.loads((ws / "solve.json").read_text())
    return {
        "solve estimate GB": float(found.group(1)) if found else None,
        "solve cgroup GB": summary.get("peak_memory_gb"),
    }


def graded(path: Path, problem: Problem) -> float:
    """AUC of a submission on the test rows, its ids read as text (as the answers hold them)."""
    sub = pd.read_csv(path, dtype=str)
    ids = problem.test["id"].astype(str)
    pred = pd.to_numeric(sub.set_index(sub.columns[0])[problem.target], errors="coerce").reindex(ids)
    if missing := int(pred.isna().sum()):
        raise ValueError(
            f"{missing} of {len(ids)} test ids without a prediction, e.g. {ids[pred.isna().to_numpy()].iloc[0]}"
        )
    return float(roc_auc_score(problem.answers, pred.to_numpy()))


# -- the baselines: (test probabilities) from (problem, data folder, seconds allowed) -----------------------------
def lightgbm(problem: Problem, folder: Path, seconds: float) -> np.ndarray:
    import lightgbm as lgb

    x, x_test = problem.train.drop(columns=["id", problem.target]), problem.test.drop(columns=["id"])
    for c in x.select_dtypes(exclude="number").columns:  # the codes and flags, as categories
        x[c] = x[c].astype("category")
        x_test[c] = pd.Categorical(x_test[c], categories=x[c].cat.categories)
    return lgb.LGBMClassifier(verbose=-1).fit(x, problem.train[problem.target]).predict_proba(x_test)[:, 1]


def tfidf_logistic(problem: Problem, folder: Path, seconds: float) -> np.ndarray:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    model = make_pipeline(TfidfVectorizer(ngram_range=(1, 2), min_df=2), LogisticRegression(max_iter=1000))
    return model.fit(problem.train["text"], problem.train[problem.target]).predict_proba(problem.test["text"])[:, 1]


def _decode(path: str) -> np.ndarray:
    from PIL import Image

    with Image.open(path) as img:
        return np.asarray(img.convert("RGB"))


def small_cnn(problem: Problem, folder: Path, seconds: float, max_epochs: int = 30) -> np.ndarray:
    """Four conv blocks from scratch, Adam, flips; it stops before an epoch that would overrun `seconds` (the
    decoding of the JPEGs counted)."""
    import torch
    from torch import nn

    t0 = time.monotonic()
    with multiprocessing.Pool() as pool:

        def pixels(sub: str, frame: pd.DataFrame) -> torch.Tensor:  # uint8, n x 3 x 96 x 96
            decoded = pool.map(_decode, [str(folder / sub / i) for i in frame["id"]], chunksize=64)
            return torch.from_numpy(np.stack(decoded)).permute(0, 3, 1, 2)

        x, x_test = pixels("train", problem.train), pixels("test", problem.test)
    y = torch.tensor(problem.train[problem.target].to_numpy(), dtype=torch.float32)
    blocks = [nn.Conv2d(a, b, 3, padding=1) for a, b in ((3, 16), (16, 32), (32, 64), (64, 64))]
    model = nn.Sequential(
        *(layer for conv in blocks[:3] for layer in (conv, nn.ReLU(), nn.MaxPool2d(2))),
        *(blocks[3], nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 1)),
    )
    optimiser, loss = torch.optim.Adam(model.parameters(), 1e-3), nn.BCEWithLogitsLoss()
    epoch_s = 0.0
    for epoch in range(max_epochs):
        if epoch and time.monotonic() - t0 + 1.3 * epoch_s > seconds:  # 0.3 epochs kept for predicting test
            break
        e0 = time.monotonic()
        model.train()
        for batch in torch.randperm(len(y)).split(128):
            xb = x[batch].float() / 255 - 0.5
            xb = torch.where(torch.rand(len(batch), 1, 1, 1) < 0.5, xb.flip(3), xb)
            optimiser.zero_grad()
            loss(model(xb).squeeze(1), y[batch]).backward()
            optimiser.step()
        epoch_s = time.monotonic() - e0
    model.eval()
    with torch.no_grad():
        return torch.cat([torch.sigmoid(model(b.float() / 255 - 0.5)).squeeze(1) for b in x_test.split(512)]).numpy()


BASELINES = {
    "table": ("LightGBM defaults", lightgbm),
    "texts": ("TF-IDF + logistic", tfidf_logistic),
    "images": ("small CNN", small_cnn),
}


# -- the benchmark -----------------------------------------------------------------------------------------------
def machine() -> str:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{cores} CPU cores, {psutil.virtual_memory().total / 2**30:.0f} GiB RAM"


def sizes(family: str, names: list[str], scale: float) -> list[tuple[str, int]]:
    return [(name, max(MIN_ROWS, round(SIZES[family][SIZE_NAMES.index(name)] * scale))) for name in names]


def run(family: str, rows: int, seed: int, out: Path, timeout: float) -> dict:
    """One family at one size: generate, write, agentk, grade, baseline."""
    t0 = time.monotonic()
    problem = GENERATORS[family](rows, np.random.default_rng([seed, FAMILIES.index(family), rows]))
    folder = out / "data" / f"{family}-{rows}"
    write(problem, folder)
    record = {"family": family, "rows": rows, "seed": seed, "machine": machine()}
    record |= {"id kind": problem.id_kind, "data s": round(time.monotonic() - t0)}
    record |= {"best possible score": round(problem.best(), 4)}
    run_dir = out / "runs" / f"{family}-{rows}"
    record |= agentk(folder, run_dir, timeout)
    seconds = record["solve s"] if "error" not in record else GOAL_SOLVE_S  # the baseline's time
    if "error" not in record:
        try:
            record["agentk score"] = round(graded(run_dir / "workspace" / "submission.csv", problem), 4)
        except Exception as e:  # a submission the grader cannot read is a finding, not a crash of the benchmark
            record["error"] = f"grading: {type(e).__name__}: {e}"
    name, baseline = BASELINES[family]
    t0 = time.monotonic()
    try:
        p = baseline(problem, folder, seconds)
        score = round(float(roc_auc_score(problem.answers, p)), 4)
    except Exception as e:  # the record keeps agentk's figures
        score = f"failed: {type(e).__name__}: {e}"[:200]
    return record | {"baseline": name, "baseline score": score, "baseline s": round(time.monotonic() - t0)}


def table_text(records: list[dict], scale: float, seed: int) -> str:
    """The recorded runs of this seed at this scale's sizes, whichever invocation ran them."""
    names = {(f, rows): name for f in FAMILIES for name, rows in sizes(f, list(SIZE_NAMES), scale)}
    kept = [r for r in records if (r["family"], r["rows"]) in names and r["seed"] == seed]
    shown = [
        r
        | {"size": f"{names[r['family'], r['rows']]} {r['rows']:,}"}
        | ({"agentk score": f"failed: {r['error']}".replace("|", "/")} if "error" in r else {})
        for r in sorted(kept, key=lambda r: (FAMILIES.index(r["family"]), r["rows"]))
    ]
    head = f"Scale benchmark on {machine()}; agentk `solve --budget quick`; seed {seed}"
    head += "" if scale == 1 else f"; every size times {scale:g}"
    return (
        f"{head}; sizes are train + test rows ({TEST_SHARE:.0%} test); peak GB sums RSS over the process tree.\n\n"
        + markdown(shown, COLUMNS)
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--families", nargs="+", choices=FAMILIES, default=list(FAMILIES))
    p.add_argument("--sizes", nargs="+", choices=SIZE_NAMES, default=list(SIZE_NAMES))
    p.add_argument("--scale", type=float, default=1.0, help="multiplies every size (at least 100 rows)")
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out" / "scale")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=float, default=3600, help="seconds before a setup or solve is killed")
    p.add_argument("--fresh", action="store_true", help="ignore the runs recorded in <out>/scale.json")
    args = p.parse_args(argv)
    if args.scale <= 0:
        p.error("--scale: a positive factor")
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    log = out / "scale.json"
    records = [] if args.fresh or not log.exists() else json.loads(log.read_text())
    for family in args.families:
        for _, rows in sizes(family, args.sizes, args.scale):
            key = (family, rows, args.seed)
            if any((r["family"], r["rows"], r["seed"]) == key and "error" not in r for r in records):
                print(f"{family} {rows:,}: recorded in {log}, skipped", flush=True)
                continue
            t0 = time.monotonic()
            records = [r for r in records if (r["family"], r["rows"], r["seed"]) != key]  # a failure, run again
            records.append(run(family, rows, args.seed, out, args.timeout))
            log.write_text(json.dumps(records, indent=1))  # at once: a long run that dies keeps what it finished
            print(f"{family} {rows:,} ({time.monotonic() - t0:.0f} s): {json.dumps(records[-1])}", flush=True)
    text = table_text(records, args.scale, args.seed)
    (out / "scale.md").write_text(text + "\n")
    if args.scale == 1:
        (ROOT / "benchmarks" / "results").mkdir(exist_ok=True)
        (ROOT / "benchmarks" / "results" / "scale.md").write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
