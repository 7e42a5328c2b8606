"""Generated fixture competitions: small folders in real Kaggle layouts, built by code so nothing large is committed.

Each fixture is a function that writes one competition in the arena layout (what `benchmarks/arena.py` reads):

    <dest>/<name>/public/      what a competitor downloads (description.md, data files, a sample submission)
    <dest>/<name>/private/     the hidden answers
    <dest>/<name>/meta.json    family, quirk, task type, metric, supported (and, when not, the refusal kind)

Families live in their own modules (`layouts.py`: where the data is; `targets.py`: what is predicted and how it
is scored; `features.py`: signal where generic feature engineering looks; `text.py`: answers in how two texts
relate; `forecasts.py`: sales over days, the test rows the days after the train's; `long_rows.py`: sample
submissions of one row per test sample and target; `audio.py`: sound clips; `large.py`: a table of millions of rows,
for benchmarks) and register themselves with `@fixture`. The data are synthetic with a learnable signal; nothing here
is, or imitates, a real competition's data, and the product never sees a fixture's name.

    uv run python -m testing.competitions --out /tmp/fixtures [--only NAME ...] [--list]
"""

from __future__ import annotations

import importlib
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

FAMILY_MODULES = (
    "layouts",
    "targets",
    "features",
    "text",
    "forecasts",
    "large",
    "long_rows",
    "audio",
    "rewrites",
    "image_pairs",
)  # imported on first use, each registering its fixtures


@dataclass(frozen=True)
class Fixture:
    name: str
    family: str  # e.g. "sample discovery", "metric"
    quirk: str  # one line: what makes this layout or task unusual
    build: Callable[[Path, np.random.Generator], dict]  # writes public/ and private/ under the folder; returns meta
    seed: int = 0
    fast: bool = False  # small and quick enough for the default test run


_REGISTRY: dict[str, Fixture] = {}


def fixture(family: str, quirk: str, seed: int = 0, fast: bool = False):
    """Register `build(folder, rng) -> meta` under its function name, underscores as dashes."""

    def register(build: Callable[[Path, np.random.Generator], dict]):
        name = build.__name__.strip("_").replace("_", "-")
        if name in _REGISTRY:
            raise ValueError(f"fixture {name!r} registered twice")
        _REGISTRY[name] = Fixture(name, family, quirk, build, seed, fast)
        return build

    return register


def registry() -> dict[str, Fixture]:
    for module in FAMILY_MODULES:
        try:
            importlib.import_module(f"{__name__}.{module}")
        except ModuleNotFoundError as e:  # a family module not written yet
            if e.name != f"{__name__}.{module}":
                raise
    return dict(sorted(_REGISTRY.items()))


def build(name: str, dest: Path) -> Path:
    """Writes fixture `name` into dest/<name> (replacing it) and returns that folder."""
    fx = registry()[name]
    folder = dest / name
    if folder.exists():
        shutil.rmtree(folder)
    (folder / "public").mkdir(parents=True)
    (folder / "private").mkdir()
    meta = fx.build(folder, np.random.default_rng(fx.seed))
    meta = {"competition": name, "family": fx.family, "quirk": fx.quirk, "set": "fixtures", "seed": fx.seed, **meta}
    (folder / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    return folder
