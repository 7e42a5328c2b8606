"""Image-to-image tasks scored per pixel (a scanned page cleaned of its stains, a photo denoised): train input images
paired by name with target images in a folder named for its role (`train_cleaned/`, `targets/`, `gt/`), test input
images, and a sample submission of one row per test pixel, `<image>_<row>_<col>` (1-based) and its value.

Fetch makes it a table of pixels, as a per-pixel model of the page sees it: each pixel a row of what surrounds it in
its input image (its value and its 3x3 neighbours, the median of the 5x5, 15x15 and 31x31 squares around it, which
estimate the background (the larger two of the image shrunk by block medians, for speed), the darkest and
lightest of the 5x5 square, the 15x15 mean and the 5x5 spread, its place
in the image), the target its target image's value, on the sample's scale (0..1 unless the sample's values go
above 1). `train_pixels.csv` holds at most `MAX_TRAIN_PIXELS` pixels drawn evenly from the pairs, `test_pixels.csv`
one row per sample row, keyed by the sample's own ids, so that a submission is the sample's rows as they are.
Nothing is recognised by a name but the role of the target folder.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from agentk.parsing import to_numeric

TARGET_DIR = re.compile(r"(clean|target|output|gt|ground.?truth|denois|high.?res|restored)", re.I)
PIXEL_ID = re.compile(r"^(?P<image>.+?)[_\-](?P<row>\d+)[_\-](?P<col>\d+)$")
MAX_TRAIN_PIXELS = 300_000  # train rows written: enough for a per-pixel model, a minute of fitting on two cores
MIN_PAIRS = 5
BAR_FROM = 50  # images from which writing their pixels shows a progress bar
HEAD = 2000  # sample rows whose ids must name test pixels before all of them are read
TRAIN, TEST = "train_pixels.csv", "test_pixels.csv"
FEATURES = (
    *(f"px_{dr}_{dc}" for dr in (-1, 0, 1) for dc in (-1, 0, 1)),  # px_0_0: the pixel itself
    "median_5",
    "median_15",
    "median_31",
    "min_5",
    "max_5",
    "mean_15",
    "std_5",
    "row_share",
    "col_share",
)


def strip_role(stem: str) -> str:
    """A target image's name less a word naming its role (`12_clean` -> `12`)."""
    return re.sub(r"[_\-.]?(mask|target|clean(ed)?|gt|label)s?$", "", stem.lower())


def pairs(images: list[str]) -> list[tuple[str, str]]:
    """(input, target) image paths: a target in a folder named for its role, an input elsewhere of the same name (less
    a role word) and not in a test folder."""
    targets = [n for n in images if TARGET_DIR.search(Path(n).parent.name)]
    inputs = {
        Path(n).stem.lower(): n
        for n in images
        if n not in targets and not any(_is_test(part) for part in Path(n).parts[:-1])
    }
    return [(inputs[strip_role(Path(t).stem)], t) for t in targets if strip_role(Path(t).stem) in inputs]


def _is_test(name: str) -> bool:
    return bool(re.search(r"test", name, re.I))


def detect(root: Path, images: list[str], sample: pd.DataFrame) -> dict | None:
    """{"pairs", "test" (image stem -> path), "id", "value", "scale"} where the folder's images pair inputs with
    targets and the sample's ids name test pixels; else None. `images`: image paths relative to root."""
    found = pairs(images)
    if len(found) < MIN_PAIRS or sample.shape[1] != 2:
        return None
    paired = {p for pair in found for p in pair}
    test = {Path(n).stem: n for n in images if n not in paired and any(_is_test(p) for p in Path(n).parts[:-1])}
    id_col, value = str(sample.columns[0]), str(sample.columns[1])
    parts = sample[id_col].head(HEAD).astype(str).str.extract(PIXEL_ID)
    if parts["image"].isna().any() or not parts["image"].isin(test).all():
        return None
    values = to_numeric(sample[value].head(HEAD), errors="coerce")
    scale = 255.0 if values.max() > 1 else 1.0
    return {"pairs": found, "test": test, "id": id_col, "value": value, "scale": scale}


def grey(path: Path) -> np.ndarray:
    """An image as grey levels in 0..1."""
    from PIL import Image

    with Image.open(path) as img:
        return np.asarray(img.convert("L"), dtype=np.float32) / 255.0


def features(image: np.ndarray) -> np.ndarray:
    """(height, width, len(FEATURES)): each pixel's FEATURES."""
    from scipy import ndimage

    h, w = image.shape
    padded = np.pad(image, 1, mode="edge")
    out = [padded[1 + dr : 1 + dr + h, 1 + dc : 1 + dc + w] for dr in (-1, 0, 1) for dc in (-1, 0, 1)]
    out += [_median(image, s) for s in (5, 15, 31)]
    out += [ndimage.minimum_filter(image, 5, mode="nearest"), ndimage.maximum_filter(image, 5, mode="nearest")]
    out.append(ndimage.uniform_filter(image, 15, mode="nearest"))
    mean5 = ndimage.uniform_filter(image, 5, mode="nearest")
    out.append(np.sqrt(np.clip(ndimage.uniform_filter(image**2, 5, mode="nearest") - mean5**2, 0, None)))
    rows, cols = np.mgrid[0:h, 0:w]
    out += [rows / max(h - 1, 1), cols / max(w - 1, 1)]
    return np.stack(out, axis=-1).astype(np.float32)


def _median(image: np.ndarray, size: int) -> np.ndarray:
    """The median of the size x size square around each pixel; for a large square, that of the image shrunk by block
    medians and enlarged again (a background estimate: the exact one takes seconds a page)."""
    from scipy import ndimage

    factor = max(1, size // 6)
    if factor == 1:
        return ndimage.median_filter(image, size=size, mode="nearest")
    h, w = image.shape
    tall, wide = -(-h // factor) * factor, -(-w // factor) * factor
    padded = np.pad(image, ((0, tall - h), (0, wide - w)), mode="edge")
    blocks = padded.reshape(tall // factor, factor, wide // factor, factor).swapaxes(1, 2)
    small = np.median(blocks.reshape(tall // factor, wide // factor, -1), axis=-1)
    median = ndimage.median_filter(small, size=-(-size // factor) | 1, mode="nearest")
    return ndimage.zoom(median, factor, order=1, mode="nearest")[:h, :w]


def train_rows(root: Path, rec: dict, seed: int = 0) -> pd.DataFrame:
    """Pixels drawn evenly from the pairs (every pixel when they hold fewer than MAX_TRAIN_PIXELS): an id
    `<image>_<row>_<col>`, the FEATURES, the target value on the sample's scale."""
    from tqdm import tqdm

    rng = np.random.default_rng(seed)
    quota = MAX_TRAIN_PIXELS // len(rec["pairs"])
    frames = []
    for source, target in tqdm(rec["pairs"], desc="train pixels", unit="image", disable=len(rec["pairs"]) < BAR_FROM):
        x, y = grey(root / source), grey(root / target)
        if x.shape != y.shape:
            continue  # a pair that does not line up pixel for pixel teaches nothing per pixel
        feats = features(x).reshape(-1, len(FEATURES))
        picked = np.sort(rng.choice(len(feats), min(quota, len(feats)), replace=False))
        r, c = np.divmod(picked, x.shape[1])
        frame = pd.DataFrame(feats[picked].round(4), columns=list(FEATURES))
        frame.insert(0, rec["id"], [f"{Path(source).stem}_{i + 1}_{j + 1}" for i, j in zip(r, c, strict=True)])
        frame[rec["value"]] = (y.reshape(-1)[picked] * rec["scale"]).round(4)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def test_rows(root: Path, rec: dict, ids: pd.Series) -> pd.DataFrame:
    """One row per sample id: the id as the sample writes it, then the FEATURES of the pixel it names (a pixel
    outside its image: the nearest one inside)."""
    ids = ids.reset_index(drop=True)
    parts = ids.astype(str).str.extract(PIXEL_ID)
    if parts["image"].isna().any():
        bad = ids[parts["image"].isna()].iloc[0]
        raise ValueError(f"the sample id {bad!r} names no pixel (<image>_<row>_<col>)")
    from tqdm import tqdm

    out = np.zeros((len(ids), len(FEATURES)), dtype=np.float32)
    groups = parts.groupby("image").groups
    if unknown := sorted(set(groups) - set(rec["test"])):
        raise ValueError(f"the sample names pixels of {unknown[0]!r}, which is no test image")
    for stem, rows in tqdm(groups.items(), desc="test pixels", unit="image", disable=len(groups) < BAR_FROM):
        feats = features(grey(root / rec["test"][stem]))
        r = np.clip(parts.loc[rows, "row"].astype(int).to_numpy() - 1, 0, feats.shape[0] - 1)
        c = np.clip(parts.loc[rows, "col"].astype(int).to_numpy() - 1, 0, feats.shape[1] - 1)
        out[rows] = feats[r, c]
    frame = pd.DataFrame(out.round(4), columns=list(FEATURES))
    frame.insert(0, rec["id"], ids.to_numpy())
    return frame
