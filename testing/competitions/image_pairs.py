"""Fixture family "image pairs": an image-to-image task scored per pixel. Scanned pages of dark glyphs on white come
stained (smooth blotches, a shade across the page, speckle) in train/, clean in train_cleaned/ under the same names,
and stained only in test/; the sample lists every test pixel as `<image>_<row>_<col>` with a value to predict, and
the score is the RMSE of the intensities. Two page heights, as a scanner gives.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from testing.competitions import fixture
from testing.competitions.layouts import description, finish

FAMILY = "image pairs"
WIDTH, HEIGHTS = 80, (48, 64)


def _page(rng: np.random.Generator, height: int) -> np.ndarray:
    """A clean page: lines of 3x5 glyphs, dark on white (values 0..1)."""
    page = np.ones((height, WIDTH), dtype=np.float32)
    for top in range(4, height - 8, 9):
        left = int(rng.integers(3, 8))
        while left < WIDTH - 6:
            if rng.random() < 0.15:  # a space between words
                left += 4
                continue
            glyph = rng.random((5, 3)) < 0.55
            page[top : top + 5, left : left + 3][glyph] = rng.uniform(0.05, 0.25)
            left += 4
    return page


def _stained(rng: np.random.Generator, page: np.ndarray) -> np.ndarray:
    """The page as scanned: blotches and a shade that darken the paper (less the ink), speckle noise."""
    from scipy import ndimage

    h, w = page.shape
    blotches = ndimage.gaussian_filter(rng.random((h, w)), sigma=6)
    blotches = (blotches - blotches.min()) / (np.ptp(blotches) + 1e-9)
    shade = np.linspace(0, 1, w)[None, :] * rng.uniform(0, 0.25)
    paper = 1 - 0.45 * blotches - shade
    out = np.where(page < 0.5, page + 0.1 * paper, paper) + rng.normal(0, 0.05, (h, w))
    return np.clip(out, 0, 1).astype(np.float32)


def _png(path: Path, values: np.ndarray) -> None:
    from PIL import Image

    Image.fromarray((values * 255).round().astype(np.uint8), "L").save(path)


@fixture(
    FAMILY,
    "image-to-image per pixel: stained pages in train/, clean ones in train_cleaned/, test pixels as rows",
    fast=True,
)
def stained_pages(folder: Path, rng: np.random.Generator) -> dict:
    pub = folder / "public"
    for sub in ("train", "train_cleaned", "test"):
        (pub / sub).mkdir()
    for k in range(18):
        page = _page(rng, HEIGHTS[k % 2])
        _png(pub / "train" / f"{k * 3 + 2}.png", _stained(rng, page))
        _png(pub / "train_cleaned" / f"{k * 3 + 2}.png", page)
    ids, answers = [], []
    for k in range(6):
        page = _page(rng, HEIGHTS[k % 2])
        _png(pub / "test" / f"{k * 3 + 1}.png", _stained(rng, page))
        r, c = np.mgrid[1 : page.shape[0] + 1, 1 : WIDTH + 1]
        ids += [f"{k * 3 + 1}_{i}_{j}" for i, j in zip(r.ravel(), c.ravel(), strict=True)]
        answers += list((np.round(page * 255) / 255).ravel().round(6))
    pd.DataFrame({"id": ids, "value": 1}).to_csv(pub / "sampleSubmission.csv", index=False)
    (pub / "description.md").write_text(
        description(
            "Optical character recognition is harder on stained, crumpled pages. Remove the noise from these scanned "
            "documents.",
            "Submissions are evaluated on the root mean squared error between the cleaned pixel intensities and the "
            "actual grayscale pixel intensities.",
            [
                "train - the noisy training images",
                "train_cleaned - the cleaned versions of the training images",
                "test - the noisy test images",
                "sampleSubmission.csv - one row per test pixel: id is image_row_col (1-based), value its intensity "
                "from 0 (black) to 1 (white)",
            ],
        )
    )
    answers = pd.DataFrame({"id": ids, "value": answers})
    return finish(
        folder, answers, "sampleSubmission.csv", "Reg", "rmse", inputs=("image",), lower=True, n_test=len(answers)
    )
