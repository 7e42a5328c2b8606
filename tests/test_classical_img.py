"""The classical image candidate on tiny finished workspaces: a row of features per image, and models that learn
what the pixels say (texture, brightness) well above a constant, with no network and no weights."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from tests.test_fusion import constant_score, workspace
from tools import classical_img
from tools.classical import fit_candidate


def _images(ws, n: int, draw) -> pd.DataFrame:
    """n PNGs of assorted sizes drawn by draw(i, rng) -> uint8 (h, w, 3); the img map's one path column."""
    (ws / "raw").mkdir(parents=True)
    rng = np.random.default_rng(0)
    for i in range(n):
        Image.fromarray(draw(i, rng)).save(ws / "raw" / f"{i}.png")
    return pd.DataFrame({"path": [f"raw/{i}.png" for i in range(n)]})


@pytest.fixture(scope="module")
def stripes_task(tmp_path_factory):
    return stripes(
        tmp_path_factory.mktemp("stripes"), [("horizontal", "vertical", "speckle")[i % 3] for i in range(120)]
    )


def stripes(ws, labels: list[str]):
    """Three classes told apart by texture alone: horizontal stripes, vertical stripes, speckle; each image in a
    random colour at a random size, so neither colour nor size gives the class. 90 train images, 30 test."""

    def draw(i, rng):
        h, w = rng.integers(20, 48, 2)
        period = rng.integers(3, 7)
        yy, xx = np.mgrid[:h, :w]
        pattern = {
            "horizontal": (yy // period) % 2,
            "vertical": (xx // period) % 2,
            "speckle": rng.integers(0, 2, (h, w)),
        }[labels[i]]
        colour = rng.integers(60, 255, 3)
        pixels = pattern[..., None] * colour + rng.normal(0, 20, (h, w, 3))
        return np.clip(pixels, 0, 255).astype(np.uint8)

    img = _images(ws, 120, draw)
    outputs = [{"name": "label", "kind": "multiclass", "classes": ["horizontal", "vertical", "speckle"]}]
    return workspace(ws, outputs, ["accuracy"], pd.DataFrame({"label": labels[:90]}), 30, img=img)


@pytest.fixture(scope="module")
def stripes_features(stripes_task):
    return classical_img.features(stripes_task, log=lambda line: None)


def test_features_have_a_row_per_image_and_the_same_columns_for_train_and_test(stripes_task, stripes_features):
    feats = stripes_features
    assert feats.train.shape[0] == len(stripes_task.train.ids) == 90
    assert feats.test.shape[0] == 30 and feats.test.shape[1] == feats.train.shape[1] > 500
    assert np.isfinite(feats.train).all() and np.isfinite(feats.test).all()
    assert classical_img.applies(stripes_task) is None


def test_learns_texture_classes_without_a_network(stripes_task, stripes_features, monkeypatch):
    assert "gradient boosting" in classical_img.models(stripes_task)
    monkeypatch.setattr(classical_img, "MAX_BOOSTED_CLASSES", 2)  # three classes are many now (and the test quick)
    feats = replace(stripes_features, models=classical_img.models(stripes_task))
    res = fit_candidate(stripes_task, feats, log=lambda line: None)
    assert res.val_score >= 0.9 > constant_score(stripes_task) + 0.5  # a constant gets a third
    assert res.test_pred.shape == (30, 3) and np.allclose(res.test_pred.sum(axis=1), 1)
    # the test rows twice: by the refit on every row, and (for the blender) by the model that was validated
    assert res.validated_test_pred.shape == (30, 3) and not np.allclose(res.validated_test_pred, res.test_pred)
    assert set(res.details["cv"]) == {"linear (C=0.01)", "linear (C=0.1)", "extra trees", "svm (RBF, C=10)"}
    monkeypatch.setattr(classical_img, "MAX_SVM_ROWS", 89)  # more images than a kernel machine is given
    assert not any(name.startswith("svm") for name in classical_img.models(stripes_task))


def test_no_support_vector_machine_when_a_class_is_too_rare_to_calibrate_its_probabilities(tmp_path):
    def labels(speckled: int) -> list[str]:  # speckle on the last `speckled` train rows, stripes on the others
        return [("horizontal", "vertical")[i % 2] if 90 - speckled > i or i >= 90 else "speckle" for i in range(120)]

    rare = stripes(tmp_path / "rare", labels(8))
    assert not any(name.startswith("svm") for name in classical_img.models(rare))
    fine = stripes(tmp_path / "fine", labels(9))  # about 4 speckled images in an inner fold's fit rows
    svm = {name: m for name, m in classical_img.models(fine).items() if name.startswith("svm")}
    assert svm
    feats = replace(classical_img.features(fine, log=lambda line: None), models=svm)
    res = fit_candidate(fine, feats, log=lambda line: None)
    assert res.val_pred.shape == (len(fine.split[1]), 3)  # the svm fits on the inner folds
    assert res.details["chosen"] in svm


def test_the_support_vector_machine_gives_probabilities_of_every_class(stripes_task, stripes_features):
    svm = classical_img.models(stripes_task)["svm (RBF, C=10)"]
    res = fit_candidate(stripes_task, replace(stripes_features, models={"svm": svm}), log=lambda line: None)
    assert res.val_score >= 0.9 and res.details["chosen"] == "svm"
    assert np.allclose(res.test_pred.sum(axis=1), 1) and (res.test_pred > 0).all()  # calibrated, not votes


def test_regresses_brightness_with_gradient_boosting_among_the_models(tmp_path):
    rng = np.random.default_rng(1)
    level = rng.uniform(20, 235, 80)

    def draw(i, rng):
        return np.clip(level[i] + rng.normal(0, 15, (24, 24, 3)), 0, 255).astype(np.uint8)

    img = _images(tmp_path, 80, draw)
    task = workspace(
        tmp_path, [{"name": "y", "kind": "regression"}], ["r2"], pd.DataFrame({"y": level[:64]}), 16, img=img
    )
    res = fit_candidate(task, classical_img.features(task, log=lambda line: None), log=lambda line: None)
    assert res.val_score > 0.9  # r2: a constant scores about 0
    assert res.test_pred.shape == (16, 1) and "gradient boosting" in res.details["cv"]
    assert not any(name.startswith("svm") for name in res.details["cv"])  # classes only
    assert np.corrcoef(res.test_pred[:, 0], level[64:])[0, 1] > 0.95


def test_images_alike_flipped_and_turned_are_learnt_from_and_predicted_over_every_view(tmp_path):
    """scikit-learn's digits, each flipped and turned at random (as microscopy or aerial views are): the candidate
    learns from each image as it is, mirrored, upside down and transposed, and averages its predictions over the
    four, which validates well above the same models on the images as they are. The digits as written get no view."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    rng = np.random.default_rng(0)
    pixels = (digits.images[:400] * 255 / 16).astype(np.uint8)

    def turned(i, rng):
        a = pixels[i]
        a = a[:, ::-1] if coins[0][i] else a
        a = a[::-1] if coins[1][i] else a
        return np.repeat((a.T if coins[2][i] else a)[..., None], 3, axis=2).copy()

    coins = rng.random((3, 400)) < 0.5
    labels = pd.DataFrame({"digit": digits.target[:320]})
    outputs = [{"name": "digit", "kind": "multiclass", "classes": [str(d) for d in range(10)]}]
    task = workspace(
        tmp_path / "turned", outputs, ["accuracy"], labels, 80, img=_images(tmp_path / "turned", 400, turned)
    )
    feats = classical_img.features(task, log=lambda line: None)
    assert len(feats.views) == 3 and feats.details["views"] == 4 and "3 ways flipped or turned" in feats.what
    linear = {"linear": classical_img.models(task)["linear (C=0.1)"]}
    seen = fit_candidate(task, replace(feats, models=linear), log=lambda line: None)
    plain = fit_candidate(task, replace(feats, models=linear, views=[]), log=lambda line: None)
    assert seen.val_score > plain.val_score + 0.03, (seen.val_score, plain.val_score)
    assert "averaged over 4 views of each row" in seen.plan and seen.test_pred.shape == (80, 10)
    coins[:] = False  # the digits as written: mirrored, upside down or transposed they are other shapes
    written = workspace(
        tmp_path / "written", outputs, ["accuracy"], labels[:160], 40, img=_images(tmp_path / "written", 200, turned)
    )
    assert classical_img.features(written, log=lambda line: None).views == []


def test_row_profiles_stay_put_when_the_content_moves_along_its_rows():
    """A spectrogram picture's sound at another time is the same rows moved sideways: the rows' mean, spread and
    peak, among describe()'s last features, do not change; the columns' do."""
    rng = np.random.default_rng(0)
    grey = rng.integers(0, 40, (1, classical_img.SIZE, classical_img.SIZE)).astype(np.uint8)
    grey[0, 20:24, 5:15] = 250  # an event in four rows, early
    moved = np.roll(grey, 40, axis=2)  # the same event later
    a, b = (classical_img.describe(np.repeat(g[..., None], 3, axis=-1)) for g in (grey, moved))
    rows = slice(-6 * classical_img.SIZE, -3 * classical_img.SIZE)
    cols = slice(-3 * classical_img.SIZE, None)
    np.testing.assert_allclose(a[:, rows], b[:, rows], atol=1e-6)
    assert not np.allclose(a[:, cols], b[:, cols])
    peaks = a[0, rows][2 * classical_img.SIZE :]  # the rows' peaks: the event's rows stand out
    assert peaks[20] > peaks[30] + 0.5 and a[0, rows][20] > a[0, rows][30] + 0.1  # and in their means


def test_past_its_most_fit_rows_the_candidate_learns_from_a_sample_and_still_predicts_every_row(
    stripes_task, monkeypatch
):
    """Issue 49: at 50,000 images the features alone took 308 s of the quick solve. Past MAX_FIT_ROWS fit rows the
    features are computed for a seeded sample of them (and every validation and test row), the models learn from
    the sample alone, and the plan says so."""
    monkeypatch.setattr(classical_img, "MAX_FIT_ROWS", 30)
    monkeypatch.setattr(classical_img, "MAX_BOOSTED_CLASSES", 2)  # the test quick
    described = []
    real = classical_img.describe
    monkeypatch.setattr(classical_img, "describe", lambda batch: described.append(len(batch)) or real(batch))
    feats = classical_img.features(stripes_task, log=lambda line: None)
    fit, val = stripes_task.split
    assert len(feats.fit_sample) == 30 and set(feats.fit_sample) <= set(fit)
    assert sum(described) == (30 + len(val) + 30) * (1 + len(feats.views))  # the sample, validation and test rows
    left = np.setdiff1d(fit, feats.fit_sample)
    thumbnails = slice(0, classical_img.GREY**2)  # the grey thumbnail's pixels: zeros only where not computed
    assert not feats.train[left, thumbnails].any() and feats.train[feats.fit_sample, thumbnails].any(axis=1).all()
    res = fit_candidate(stripes_task, feats, log=lambda line: None)
    assert f"sample of 30 of the {len(fit)} fit images" in res.plan and "on the 30 fit rows" in res.plan
    assert f"refitted on all {30 + len(val)} rows" in res.plan
    assert res.val_score > 0.8 and res.test_pred.shape == (30, 3) and np.isfinite(res.test_pred).all()


def test_grey_files_of_a_sample_are_read_as_channels_and_their_overlap_is_learnt(tmp_path, monkeypatch):
    """Two grey files per sample (a stain each), one bright blob in each at a random place: the class says whether
    the second stain's blob sits on the first's. Each file alone looks the same in both classes, and the mosaic
    the other features see puts them side by side; the channels' overlap tells."""
    rng = np.random.default_rng(0)
    n, labels = 160, ["together", "apart"] * 80
    (tmp_path / "raw").mkdir()
    cells = []
    for i in range(n):
        first = rng.integers(8, 40, 2)  # (row, column); apart: the same row, another column (the mosaic's row
        # profiles align the files' rows: they would tell)
        second = (
            first + [0, rng.integers(-1, 2)] if labels[i] == "together" else first + [0, 24 if first[1] < 24 else -24]
        )
        yy, xx = np.mgrid[:48, :48]
        for name, (cy, cx) in (("dapi", first), ("gfp", second)):
            blob = 200 * np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 30) + rng.normal(20, 5, (48, 48))
            Image.fromarray(np.clip(blob, 0, 255).astype(np.uint8), "L").save(tmp_path / "raw" / f"{i}_{name}.png")
        cells.append(f"raw/{i}_dapi.png|raw/{i}_gfp.png")
    outputs = [{"name": "label", "kind": "binary", "classes": ["apart", "together"]}]
    task = workspace(
        tmp_path, outputs, ["roc_auc"], pd.DataFrame({"label": labels[:120]}), 40, img=pd.DataFrame({"path": cells})
    )
    feats = classical_img.features(task, log=lambda line: None)
    assert "2 grey files as channels" in feats.what
    channels = classical_img.channel_parts(cells, tmp_path, None)
    assert channels.shape == (n, 2, classical_img.CHANNEL_SIDE, classical_img.CHANNEL_SIDE)
    overlap = classical_img.channel_features(channels, None, n)[:, -3:]  # correlation, inside both ways
    together = np.array(labels) == "together"
    # each stain alone looks alike in both classes; how they overlap tells the classes apart on every sample
    assert overlap[together, 0].min() > 0.5 > overlap[~together, 0].max()
    assert overlap[together, 1:].min() > 1.5 > 1.2 > overlap[~together, 1:].max()
    np.testing.assert_allclose(feats.train[:, -3:], overlap[:120], rtol=1e-5)
    linear = {k: v for k, v in feats.models.items() if k.startswith("linear")}
    assert fit_candidate(task, replace(feats, models=linear), log=lambda line: None).val_score >= 0.95
    # the models on the channels' summary read it alone: the other features drowned in noise leave them unmoved
    summary = {k: v for k, v in feats.models.items() if k.endswith("on the channels' summary")}
    columns = summary[next(iter(summary))]("binary")[0].kw_args["columns"]
    assert len(summary) == len(classical_img.SUMMARY_C) and columns[-1] == feats.train.shape[1] - 1
    others = np.setdiff1d(np.arange(feats.train.shape[1]), columns)
    noisy = replace(feats, models=summary)
    for part in (noisy.train, noisy.test):
        part[:, others] = rng.normal(0, 1e3, (len(part), len(others)))
    assert fit_candidate(task, noisy, log=lambda line: None).val_score >= 0.95


def test_a_stains_bright_spots_are_counted_and_its_level_outside_the_other_stains_compartment_read():
    """Stain 0 a bright disk (a nucleus); stain 1 m small dots (vesicles) and, in half the samples, a haze outside
    the disk. The summary counts the dots at 2 spreads above the mean and reads the haze where stain 0 is dark."""
    rng = np.random.default_rng(0)
    side, k = classical_img.CHANNEL_SIDE, 2
    yy, xx = np.mgrid[:side, :side]
    disk = (yy - 32) ** 2 + (xx - 32) ** 2 < 20**2
    dots, hazy = np.arange(12) % 6 + 1, np.arange(12) % 2 == 1
    channels = np.zeros((12, k, side, side), dtype=np.uint8)
    for i, (m, haze) in enumerate(zip(dots, hazy, strict=True)):
        channels[i, 0] = np.clip(10 + 150 * disk + rng.normal(0, 2, (side, side)), 0, 255)
        stain = 10 + 30 * (haze & ~disk) + rng.normal(0, 1, (side, side))
        for cy, cx in [(20, 20), (20, 44), (44, 20), (44, 44), (32, 8), (32, 56)][:m]:  # dots 12 px apart or more
            stain += 200 * np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 2)
        channels[i, 1] = np.clip(stain, 0, 255)
    summary = classical_img.channel_features(channels, None, 12)
    stats = 7 * k  # mean, spread, 4 percentiles and the peak per channel, then the spots per channel at each level
    spots = summary[:, stats + k * classical_img.SPOT_SPREADS.index(2) + 1]
    np.testing.assert_array_equal(spots, dots)
    outside = summary[:, stats + k * len(classical_img.SPOT_SPREADS) + 1]  # stain 1 where stain 0 is not bright
    assert outside[hazy].min() > 30 / 255 > 20 / 255 > outside[~hazy].max()  # 40 and 10 of 255


def test_colour_files_or_uneven_counts_are_no_channels(tmp_path):
    (tmp_path / "raw").mkdir()
    rng = np.random.default_rng(0)
    for i in range(3):
        Image.fromarray(rng.integers(0, 255, (16, 16, 3), dtype=np.uint8)).save(tmp_path / "raw" / f"{i}.png")
        Image.fromarray(rng.integers(0, 255, (16, 16), dtype=np.uint8), "L").save(tmp_path / "raw" / f"{i}_g.png")
    colour = [f"raw/{i}.png|raw/{i}_g.png" for i in range(3)]
    assert classical_img.channel_parts(colour, tmp_path, None) is None
    uneven = ["raw/0_g.png|raw/1_g.png", "raw/2_g.png", "raw/1_g.png|raw/0_g.png"]
    assert classical_img.channel_parts(uneven, tmp_path, None) is None
    grey = [f"raw/{i}_g.png|raw/{(i + 1) % 3}_g.png" for i in range(3)]
    channels = classical_img.channel_parts(grey, tmp_path, None)
    assert channels.shape == (3, 2, classical_img.CHANNEL_SIDE, classical_img.CHANNEL_SIDE)
    # the second channel of sample 0 is the file of sample 1's first
    np.testing.assert_array_equal(channels[0, 1], channels[1, 0])
