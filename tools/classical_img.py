"""The classical image candidate (tools/classical.py): hand-made features of every image, no network and no
downloaded weights — small grey and colour thumbnails, colour histograms (RGB per channel, joint HSV), colour
statistics, texture (HOG, local binary patterns, edge strength) and the file's own width and height — into gradient
boosting and linear models. Each image is decoded once, through the decode cache the networks share
(tools/modality_img.py)."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
from sklearn.ensemble import (
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
)
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from agentk.modalities import IMAGE, PATHS_SEP
from tools.classical import Features, on_columns, svm_classifier, svm_fits
from tools.image_files import cell_size
from tools.resampling import at_most
from tools.task_data import TaskData

SIZE = 64  # side the images are decoded at; every feature is computed from it
GREY, COLOUR = 16, 8  # sides of the grey and colour thumbnails
HIST_BINS, HSV_BINS = 16, (8, 4, 4)  # per RGB channel; hue x saturation x value
HOG_SIDE, HOG_CELL = 32, 8  # HOG on the grey image at 32 px in 8-px cells: 3 x 3 blocks of 2 x 2 cells, 324 values
LBP = ((8, 1), (16, 2))  # (points, radius) of the uniform local binary patterns
MAX_BOOSTED_CLASSES = 4
# a kernel machine costs the square of the rows and more: 5.5 s a fit on 3,200 images of 1,012 features (2 cores,
# its probabilities' 3 folds included), some 30 s for the candidate's cross-validation, fit and refit
MAX_SVM_ROWS, SVM_C, SVM_FOLDS = 5000, 10.0, 3
CHUNK = 256  # images per batch of feature extraction (bounds the float copies' memory)
# train rows times views at most: the views the images' symmetries allow (tools.modality_img.symmetries: mirrored,
# upside down, transposed), as many as keep every model's fit rows within what the SVM takes. On 1,000 MNIST digits
# each flipped and turned at random, 4 views: SVM 0.765 -> 0.866 accuracy, linear 0.718 -> 0.788; on 1,000
# Fashion-MNIST images mirrored: 0.847 -> 0.849, 0.837 -> 0.851
VIEW_ROWS = MAX_SVM_ROWS
# the fit rows whose features are computed at most, a seeded sample past it (the validation and test rows always):
# the features cost about 6 ms an image on 2 cores, and at 50,000 images (32,000 to fit) the candidate took 562 s of
# an 854-s quick solve, 308 s of them features and 220 s its models' 3-fold CV (benchmarks/scale.py, issue 49)
MAX_FIT_ROWS = 10_000
# a sample of 2 to this many grey files is read as the channels of one image (channel_parts), each at CHANNEL_SIDE px
# and pooled to a CHANNEL_THUMB px thumbnail
MAX_CHANNELS, CHANNEL_SIDE, CHANNEL_THUMB = 6, 64, 8
SPOT_SPREADS = (1, 2, 3)  # a channel's bright spots: its local maxima above its mean plus this many spreads
# the channels' summary (channel_features: a few dozen numbers) also feeds linear models of its own, at these inverse
# penalties: beside the 1,700 other features and the thumbnails a few hundred samples cannot weigh it. On the
# human-protein stand-in (4 stains, 280 samples, 28 labels, logistic regressions, 5-fold macro F1 out of fold): all
# channel features 0.141, without their thumbnails 0.215, with the spots 0.232, with the means outside 0.229
SUMMARY_C = (0.1, 1.0)


def applies(task: TaskData) -> str | None:
    return None if IMAGE.name in task.modalities else f"no {IMAGE.name} input"


def features(task: TaskData, log=print) -> Features:
    from tools.modality_img import decoded, symmetries

    began = time.monotonic()
    paths = pd.concat([task.train.inputs[IMAGE.name], task.test.inputs[IMAGE.name]]).iloc[:, 0].tolist()
    images, note = decoded(paths, task.ws, SIZE, f"the {IMAGE.name} input maps")
    log(f"  {note}")
    n = len(task.train.ids)
    fit, _ = task.split
    sample = at_most(fit, MAX_FIT_ROWS, np.random.default_rng(0)) if len(fit) > MAX_FIT_ROWS else None
    rows = np.setdiff1d(np.arange(len(paths)), np.setdiff1d(fit, sample)) if sample is not None else None
    augment, why = symmetries(images, task.split[0])
    # each view adds a copy of every train row to each model's fit (an SVM's cost grows with their square)
    views = [lambda x: x, *augment.views()[: max(0, VIEW_ROWS // n - 1)]]
    sizes = file_sizes(paths, task)
    channels, summary = channel_parts(paths, task.ws, rows), None
    if channels is not None:
        log(f"  each sample's {channels.shape[1]} grey files read as the channels of one image")
        summary = channel_features(channels, rows, len(paths))
        sizes = np.hstack([sizes, channel_thumbnails(channels, rows, len(paths)), summary])
    matrices = [np.hstack([_described(images, view, rows), sizes]).astype(np.float32) for view in views]
    X = matrices[0]
    # the channels' summary is the last block of columns
    on_summary = None if summary is None else np.arange(X.shape[1] - summary.shape[1], X.shape[1])
    log(
        f"  {X.shape[1]} image features of {len(paths) if rows is None else len(rows)} images, {len(views)} views, "
        f"in {time.monotonic() - began:.1f}s"
    )
    seen = f", each also {len(views) - 1} ways flipped or turned ({why})" if len(views) > 1 else ""
    if channels is not None:
        seen += (
            f"; each sample's {channels.shape[1]} grey files as channels: their statistics, bright spots, "
            "thumbnails and how they overlap"
        )
    if sample is not None:
        seen += f"; learnt from a sample of {len(sample)} of the {len(fit)} fit images (MAX_FIT_ROWS)"
    return Features(
        X[:n],
        X[n:],
        f"{X.shape[1]} features of each image (grey {GREY}px and colour {COLOUR}px thumbnails, RGB and HSV "
        f"histograms, colour statistics, HOG, local binary patterns, edge strength, row and column profiles, the "
        f"file's width and height){seen}",
        models(task, len(views), on_summary),
        {"image_features": int(X.shape[1]), "decoded_at": SIZE, "views": len(views)},
        [(m[:n], m[n:]) for m in matrices[1:]],
        sample,
    )


def channel_parts(paths: list, ws, rows: np.ndarray | None) -> np.ndarray | None:
    """Where every sample is the same number (2 to MAX_CHANNELS) of grey files (a microscope's stains, a
    satellite's bands: one file per channel, named alike), (samples, channels, CHANNEL_SIDE, CHANNEL_SIDE) uint8,
    the k-th file of each sample its k-th channel (of `rows` only, the others zeros); else None. The mosaic the other
    features see puts the files side by side, so nothing there says how the channels overlap."""
    from tools.modality_img import decoded

    parts = [str(cell).split(PATHS_SEP) for cell in paths]
    k = len(parts[0])
    if not 2 <= k <= MAX_CHANNELS or any(len(p) != k for p in parts):
        return None
    rows = np.arange(len(paths)) if rows is None else rows
    out = np.zeros((len(paths), k, CHANNEL_SIDE, CHANNEL_SIDE), dtype=np.uint8)
    for j in range(k):
        files = [parts[i][j] for i in rows]
        images, _ = decoded(files, ws, CHANNEL_SIDE, "the image files of one channel")
        pixels = np.asarray(images[np.arange(len(files))])
        if not (pixels[..., 0] == pixels[..., 1]).all() or not (pixels[..., 1] == pixels[..., 2]).all():
            return None  # colour pictures: views of a sample, not its channels
        out[rows, j] = pixels[..., 0]
    return out


def channel_features(channels: np.ndarray, rows: np.ndarray | None, n: int) -> np.ndarray:
    """A few dozen numbers per sample that say where each stain sits and what it looks like: per channel its
    brightness statistics (mean, spread, percentiles, peak), its bright spots (local maxima above its mean plus 1, 2
    and 3 spreads: vesicles, speckles, dots) and its mean where no other channel is bright (above its own 75th
    percentile: outside the nucleus, the cytoplasm the other stains mark); per pair of channels their pixels'
    correlation and, both ways, one's mean where the other is bright against its mean overall."""
    rows = np.arange(n) if rows is None else rows
    x = channels[rows].astype(np.float32) / 255
    b, k = x.shape[:2]
    flat = x.reshape(b, k, -1)
    mean, spread = flat.mean(2), flat.std(2)
    out = [mean, spread, *np.percentile(flat, [10, 50, 90, 99], axis=2), flat.max(2)]
    peak = np.ones(x.shape, dtype=bool)
    for axis, shift in ((2, 1), (2, -1), (3, 1), (3, -1)):
        peak &= x >= np.roll(x, shift, axis)
    out += [(peak & (x > (mean + s * spread)[..., None, None])).sum((2, 3)) for s in SPOT_SPREADS]
    bright = flat > np.percentile(flat, 75, axis=2, keepdims=True)
    for i in range(k):
        none = ~np.delete(bright, i, axis=1).any(1)
        out.append(((flat[:, i] * none).sum(1) / np.maximum(none.sum(1), 1))[:, None])
    centred = flat - mean[..., None]
    norm = np.sqrt((centred**2).sum(2)) + 1e-6
    for i in range(k):
        for j in range(k):
            if i < j:
                out.append(((centred[:, i] * centred[:, j]).sum(1) / (norm[:, i] * norm[:, j]))[:, None])
            if i != j:
                inside = (flat[:, i] * bright[:, j]).sum(1) / np.maximum(bright[:, j].sum(1), 1)
                out.append((inside / (mean[:, i] + 1e-6))[:, None])
    return _placed(np.concatenate(out, axis=1), rows, n)


def channel_thumbnails(channels: np.ndarray, rows: np.ndarray | None, n: int) -> np.ndarray:
    """Each channel's CHANNEL_THUMB px thumbnail, side by side."""
    rows = np.arange(n) if rows is None else rows
    x = channels[rows].astype(np.float32) / 255
    return _placed(_pooled(x.transpose(0, 2, 3, 1), CHANNEL_THUMB).reshape(len(rows), -1), rows, n)


def _placed(done: np.ndarray, rows: np.ndarray, n: int) -> np.ndarray:
    """(n, k) float32 with `done`'s rows at `rows`, zeros elsewhere."""
    full = np.zeros((n, done.shape[1]), dtype=np.float32)
    full[rows] = done
    return full


def _described(images, view, rows: np.ndarray | None = None) -> np.ndarray:
    """describe() of every image (or of `rows` of them, the others zeros) seen through `view` (a flip or turn of a
    decoded batch, tools.modality_img)."""
    rows = np.arange(len(images)) if rows is None else rows
    chunks = [rows[i : i + CHUNK] for i in range(0, len(rows), CHUNK)]
    with ThreadPoolExecutor() as pool:  # numpy and scikit-image release the GIL in their loops
        done = np.vstack(list(pool.map(lambda part: describe(np.ascontiguousarray(view(images[part]))), chunks)))
    if len(rows) == len(images):
        return done
    out = np.zeros((len(images), done.shape[1]), dtype=done.dtype)
    out[rows] = done
    return out


def models(task: TaskData, views: int = 1, summary: np.ndarray | None = None) -> dict:
    """Linear models on the standardised features and extra trees always; gradient boosting too unless an output
    has more than MAX_BOOSTED_CLASSES classes: it grows a tree per class per round over some 1000 features, so 10
    classes of 1437 images took 150 CPU seconds (extra trees: 2), 99 classes many minutes. For classes alone, on at
    most MAX_SVM_ROWS images, an RBF support vector machine too, the classic companion of such features (on 4,000
    Fashion-MNIST images it validated at 0.894 accuracy, the linear models at 0.872)."""
    widest = max((w for o, w in zip(task.outputs, task.widths, strict=True) if o["kind"] != "regression"), default=1)
    chosen = {f"linear (C={c:g})": _linear(c) for c in (0.01, 0.1)} | {"extra trees": _trees}
    classes = all(o["kind"] != "regression" for o in task.outputs)
    if classes and len(task.train.ids) * views <= MAX_SVM_ROWS and svm_fits(task, SVM_FOLDS):
        chosen[f"svm (RBF, C={SVM_C:g})"] = _svm
    chosen |= {"gradient boosting": _boosting} if widest <= MAX_BOOSTED_CLASSES else {}
    if summary is None:
        return chosen
    return chosen | {
        f"linear (C={c:g}) on the channels' summary": lambda kind, c=c: on_columns(
            _linear(c)(kind), summary, dense=True
        )
        for c in SUMMARY_C
    }


def describe(batch: np.ndarray) -> np.ndarray:
    """Decoded images (B, SIZE, SIZE, 3) uint8 -> (B, k) float features, the same k for every batch."""
    from skimage.color import rgb2hsv
    from skimage.feature import hog, local_binary_pattern
    from skimage.filters import sobel

    b = len(batch)
    rgb = batch.astype(np.float32) / 255
    grey = rgb @ np.float32([0.299, 0.587, 0.114])
    hsv = rgb2hsv(rgb)
    out = [_pooled(grey, GREY).reshape(b, -1), _pooled(rgb, COLOUR).reshape(b, -1)]
    out.append(np.concatenate([_histogram(batch[..., c], 256, HIST_BINS) for c in range(3)], axis=1))
    cells = [np.minimum((hsv[..., k] * n).astype(int), n - 1) for k, n in enumerate(HSV_BINS)]
    joint = (cells[0] * HSV_BINS[1] + cells[1]) * HSV_BINS[2] + cells[2]
    out.append(_histogram(joint, int(np.prod(HSV_BINS)), int(np.prod(HSV_BINS))))
    channels = np.concatenate([rgb, hsv], axis=-1).reshape(b, -1, 6)
    out += [channels.mean(1), channels.std(1), *np.percentile(channels, [10, 50, 90], axis=1)]
    small = _pooled(grey, HOG_SIDE)
    grey_bytes = (grey * 255).round().astype(np.uint8)  # LBP compares neighbours: exact levels, not float noise
    out.append(
        np.stack([hog(g, orientations=9, pixels_per_cell=(HOG_CELL, HOG_CELL), cells_per_block=(2, 2)) for g in small])
    )
    for points, radius in LBP:
        codes = np.stack([local_binary_pattern(g, points, radius, "uniform") for g in grey_bytes]).astype(int)
        out.append(_histogram(codes, points + 2, points + 2))
    edges = np.stack([sobel(g) for g in grey]).reshape(b, -1)
    out.append(np.stack([edges.mean(1), edges.std(1), (edges > 0.1).mean(1)], axis=1))
    # projection profiles: each row's and each column's mean, spread and peak, features that stay put when the
    # content moves along its row or column (a sound's band over time in a spectrogram picture, text lines)
    out += [stat(grey, axis=axis) for axis in (2, 1) for stat in (np.mean, np.std, np.max)]
    return np.concatenate(out, axis=1)


def file_sizes(paths: list, task: TaskData) -> np.ndarray:
    """(rows, 3): each image's width, height and log aspect ratio, read from its header (decoding squares the
    images, and a shape or a camera often tells classes apart)."""

    def one(cell) -> tuple[float, float, float]:
        try:
            w, h = cell_size(task.ws, cell)
        except (OSError, ValueError):  # decoding read every file already: a header that fails here says nothing
            return np.nan, np.nan, np.nan
        return w, h, np.log(w / h)

    with ThreadPoolExecutor() as pool:
        rows = list(pool.map(one, paths))
    sizes = np.asarray(rows, dtype=float).reshape(-1, 3)
    return np.nan_to_num(sizes, nan=np.nanmedian(sizes, axis=0) if np.isfinite(sizes).any() else 0.0)


def _pooled(a: np.ndarray, side: int) -> np.ndarray:
    """(B, S, S[, C]) -> (B, side, side[, C]) by block means (SIZE is a multiple of every side used)."""
    f = a.shape[1] // side
    return a.reshape(a.shape[0], side, f, side, f, *a.shape[3:]).mean((2, 4))


def _histogram(values: np.ndarray, levels: int, bins: int) -> np.ndarray:
    """Per image, the share of its pixels in each of `bins` equal bins of the integer values 0..levels-1."""
    b = len(values)
    codes = values.reshape(b, -1).astype(np.int64) * bins // levels + np.arange(b)[:, None] * bins
    return np.bincount(codes.ravel(), minlength=b * bins).reshape(b, bins) / codes.shape[1]


def _boosting(kind: str):
    # lean trees over a share of the features: a few hundred features make the split search the cost
    lean = {"max_iter": 100, "max_leaf_nodes": 15, "max_bins": 63, "max_features": 0.3, "random_state": 0}
    return HistGradientBoostingRegressor(**lean) if kind == "regression" else HistGradientBoostingClassifier(**lean)


def _trees(kind: str):
    model = ExtraTreesRegressor if kind == "regression" else ExtraTreesClassifier
    return model(n_estimators=300, max_features="sqrt", n_jobs=-1, random_state=0)


def _svm(kind: str):
    return make_pipeline(StandardScaler(), svm_classifier(SVM_C, SVM_FOLDS))


def _linear(c: float):
    def make(kind: str):
        if kind == "regression":
            return make_pipeline(StandardScaler(), Ridge(alpha=1.0 / c))
        return make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=2000))

    return make
