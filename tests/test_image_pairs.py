"""Image-to-image tasks scored per pixel (agentk.competition.image_pairs): which images pair, what a pixel's row
holds, the sample's pixels found in the test images, and a full setup of the stained pages against copying the
stained page."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from agentk.competition import image_pairs
from agentk.competition.task_kinds import unsupported_task
from testing.competitions import build

FEATURES = list(image_pairs.FEATURES)


def test_targets_pair_with_inputs_of_the_same_name_outside_the_test_folders():
    images = ["train/1.png", "train/2.png", "train_cleaned/1.png", "gt/2_clean.png", "test/1.png", "test/3.png"]
    assert image_pairs.pairs(images) == [("train/1.png", "train_cleaned/1.png"), ("train/2.png", "gt/2_clean.png")]
    assert image_pairs.pairs(["a/1.png", "b/1.png"]) == []  # no folder named for the targets' role


def test_a_pixels_row_holds_its_neighbourhood():
    page = np.ones((40, 30), dtype=np.float32)
    page[10, 12] = 0.0  # one dark dot on white
    f = image_pairs.features(page)
    assert f.shape == (40, 30, len(FEATURES))
    at = lambda name, r, c: float(f[r, c, FEATURES.index(name)])  # noqa: E731
    assert at("px_0_0", 10, 12) == 0 and at("px_-1_0", 11, 12) == 0 and at("px_0_1", 10, 11) == 0
    assert at("px_0_0", 10, 13) == 1 and at("min_5", 12, 14) == 0 and at("min_5", 13, 12) == 1
    assert at("median_5", 10, 12) == 1 and at("median_31", 10, 12) == 1  # the paper, not the ink
    assert at("std_5", 10, 12) > 0.15 and at("std_5", 30, 20) == pytest.approx(0, abs=1e-3)
    assert at("mean_15", 10, 12) == pytest.approx(1 - 1 / 225, abs=1e-4)
    assert at("row_share", 39, 0) == 1 and at("col_share", 0, 29) == 1 and at("row_share", 0, 29) == 0


def _folder(tmp_path: Path, rng: np.random.Generator, sample_ids: list[str], value=1) -> Path:
    for sub in ("train", "train_cleaned", "test"):
        (tmp_path / sub).mkdir(parents=True)
    for k in range(6):
        for sub in ("train", "train_cleaned"):
            Image.fromarray(rng.integers(0, 255, (6, 5), dtype=np.uint8), "L").save(tmp_path / sub / f"{k}.png")
    for name in ("a", "b_2"):
        Image.fromarray(rng.integers(0, 255, (6, 5), dtype=np.uint8), "L").save(tmp_path / "test" / f"{name}.png")
    pd.DataFrame({"id": sample_ids, "value": value}).to_csv(tmp_path / "sample.csv", index=False)
    return tmp_path


def test_the_sample_names_test_pixels_and_each_row_is_that_pixel(tmp_path):
    rng = np.random.default_rng(0)
    ids = [f"{img}_{r}_{c}" for img in ("b_2", "a") for r in range(1, 7) for c in range(1, 6)]
    order = rng.permutation(len(ids))
    root = _folder(tmp_path / "ok", rng, [ids[i] for i in order])
    images = [p.relative_to(root).as_posix() for p in root.rglob("*.png")]
    sample = pd.read_csv(root / "sample.csv", dtype=str)
    rec = image_pairs.detect(root, images, sample)
    assert rec is not None and rec["scale"] == 1.0 and set(rec["test"]) == {"a", "b_2"} and len(rec["pairs"]) == 6
    rows = image_pairs.test_rows(root, rec, sample["id"])
    assert list(rows["id"]) == list(sample["id"]) and list(rows.columns) == ["id", *FEATURES]
    for img in ("a", "b_2"):
        pixels = np.asarray(Image.open(root / "test" / f"{img}.png"), dtype=np.float32) / 255
        mine = rows[rows["id"].str.startswith(f"{img}_")]
        rc = mine["id"].str.rsplit("_", n=2, expand=True).iloc[:, 1:].astype(int).to_numpy() - 1
        assert np.allclose(mine["px_0_0"], pixels[rc[:, 0], rc[:, 1]], atol=1e-4)
    train = image_pairs.train_rows(root, rec)
    assert len(train) == 6 * 30 and train["id"].is_unique  # every pixel: fewer than MAX_TRAIN_PIXELS
    assert train["value"].between(0, 1).all() and list(train.columns) == ["id", *FEATURES, "value"]
    assert image_pairs.detect(root, images, sample.assign(value="255"))["scale"] == 255.0
    other = pd.DataFrame({"id": ["c_1_1", "a_1_1"], "value": "1"})  # an image no test folder holds
    assert image_pairs.detect(root, images, other) is None
    with pytest.raises(ValueError, match="the sample names pixels of 'c', which is no test image"):
        image_pairs.test_rows(root, rec, pd.concat([sample["id"], pd.Series(["c_1_1"])]))
    with pytest.raises(ValueError, match="the sample id 'a_x_1' names no pixel"):
        image_pairs.test_rows(root, rec, pd.Series(["a_1_1", "a_x_1"]))
    assert unsupported_task(root) is None
    whole = _folder(tmp_path / "whole", rng, ["a", "b_2"], value="255 255")  # a row per image, not per pixel
    assert unsupported_task(whole).startswith("unsupported task: image-to-image (6 target images in train_cleaned/")


@pytest.mark.slow  # a full setup (40 s); benchmarks/solve.py --fixtures stained-pages runs it, the other tests here its pieces
def test_full_setup_of_stained_pages_cleans_them(tmp_path):
    """The light solve's per-pixel model: the sample's rows as they are, far nearer the clean pages than the stained
    page itself or white paper."""
    from agentk.api import run_setup
    from agentk.workspace import Workspace

    folder = build("stained-pages", tmp_path / "fixtures")
    result = run_setup(folder / "public", tmp_path / "ws", "expert")
    assert result.state.status == "done"
    sample = pd.read_csv(folder / "public" / "sampleSubmission.csv")
    sub = pd.read_csv(Workspace(result.workspace).submission)
    assert list(sub.columns) == ["id", "value"] and list(sub["id"]) == list(sample["id"])
    answers = pd.read_csv(folder / json.loads((folder / "meta.json").read_text())["answers"])
    stained = pd.read_csv(Path(result.workspace) / "raw" / image_pairs.TEST)["px_0_0"]
    rmse = lambda p: float(np.sqrt(np.mean((answers["value"].to_numpy() - p) ** 2)))  # noqa: E731
    assert rmse(sub["value"].to_numpy()) < 0.3 * min(rmse(stained.to_numpy()), rmse(1.0))
