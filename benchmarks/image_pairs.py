"""Setup + solve on image-to-image competitions scored per pixel (the "image pairs" fixtures of
testing/competitions/image_pairs.py: stained scanned pages in train/, clean ones in train_cleaned/, every test
pixel a row of the sample, RMSE), graded on hidden answers beside what a user would run instead: the stained page as
it is, and the classic clean-up of a scan, each pixel divided by its background (the median of the 31x31 square
around it) and clipped to white.

    uv run python benchmarks/image_pairs.py [--only NAME ...] [--fresh] [--out DIR] [--budget quick]

The table is benchmarks/solve.py's with a column per baseline's test score; it goes to <out>/image_pairs.md. A
finished setup in <out>/<name> is reused.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentk.parsing import read_csv  # noqa: E402
from benchmarks import solve  # noqa: E402

FIXTURES = ("stained-pages",)


def baselines(c: solve.Competition, ws: Path) -> dict[str, Path]:
    """The stained page and its background division, for every pixel the sample lists, written beside agentk's."""
    from scipy import ndimage

    sample = read_csv(next(c.source.glob("*ample*.csv")), dtype={"id": str})
    parts = sample["id"].str.rsplit("_", n=2, expand=True)
    rows, cols = parts[1].astype(int).to_numpy() - 1, parts[2].astype(int).to_numpy() - 1
    copy, divided = np.zeros(len(sample)), np.zeros(len(sample))
    for image, idx in parts.groupby(0).groups.items():
        path = next((c.source / "test").glob(f"{image}.*"))
        page = np.asarray(Image.open(path).convert("L"), dtype=np.float64) / 255
        background = ndimage.median_filter(page, size=31, mode="nearest")
        at = sample.index.get_indexer(idx)
        copy[at] = page[rows[at], cols[at]]
        divided[at] = np.clip(page / np.maximum(background, 1e-3), 0, 1)[rows[at], cols[at]]
    out = {}
    for name, values in (("stained page", copy), ("background divided", divided)):
        out[name] = ws / f"{name.replace(' ', '_')}_submission.csv"
        sample.assign(**{sample.columns[1]: values.round(4)}).to_csv(out[name], index=False)
    return out


def main(argv: list[str] | None = None) -> int:
    return solve.beside_baselines(
        __doc__, "image_pairs", FIXTURES, baselines, ("stained page", "background divided"), argv
    )


if __name__ == "__main__":
    raise SystemExit(main())
