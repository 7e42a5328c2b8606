"""MapDataset over tab, img and txt maps (shapes, image formats, error messages, loader) and the light
late-fusion network that the final light solve uses for image and text tasks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from tools.map_dataset import MapDataset
from tools.modality_img import ImageTransform
from tools.text_encoder import TextTransform, vocab_size

ROOT = Path(__file__).resolve().parents[1]
RED, BLUE = (220, 30, 30), (30, 30, 220)


def write_maps(
    ws: Path,
    split: str,
    ids: list[str],
    tab: dict | None = None,
    img: list[str] | None = None,
    txt: dict | None = None,
    targets: dict | None = None,
) -> Path:
    ws.mkdir(parents=True, exist_ok=True)
    for modality, columns in (("tab", tab), ("img", img and {"path": img}), ("txt", txt)):
        if columns:
            pd.DataFrame({"id": ids, **columns}).to_csv(ws / f"{split}_{modality}_input_map.csv", index=False)
    if targets:
        pd.DataFrame({"id": ids, **targets}).to_csv(ws / "train_tab_target_map.csv", index=False)
    return ws


def save_image(ws: Path, name: str, colour=(128, 128, 128), size=(12, 10), rng=None) -> str:
    """A noisy image of one colour, written under raw/; returns its workspace-relative path."""
    rng = rng or np.random.default_rng(0)
    pixels = np.clip(np.array(colour) + rng.normal(0, 20, (size[1], size[0], 3)), 0, 255).astype(np.uint8)
    (ws / "raw").mkdir(parents=True, exist_ok=True)
    Image.fromarray(pixels).save(ws / "raw" / name)
    return f"raw/{name}"


def gradient(mode: str, size: tuple[int, int]) -> Image.Image:
    w, h = size
    ramp = np.tile(np.linspace(0, 1, w), (h, 1))
    if mode == "I;16":  # a 12-bit sensor's range: far below 65535, far above 255
        return Image.fromarray((ramp * 4000).astype(np.uint16))
    rgb = Image.fromarray((np.stack([ramp, ramp[::-1], np.full_like(ramp, 0.5)], -1) * 255).astype(np.uint8))
    return rgb.convert("P", palette=Image.Palette.ADAPTIVE) if mode == "P" else rgb.convert(mode)


def test_tab_only_batches_are_raw_rows_and_do_not_load_torch(tmp_path):
    ids = [str(i) for i in range(5)]
    ws = write_maps(
        tmp_path,
        "train",
        ids,
        tab={"x": [1.5, 2, np.nan, 4, 5], "c": list("abcab")},
        targets={"y": [0, 1, 0, 1, 1], "z": [1.0, 2, 3, 4, 5]},
    )
    batch = next(MapDataset(ws).batches(4))
    assert batch["id"] == ids[:4]
    assert batch["tab"].shape == (4, 2) and batch["tab"].dtype == object and batch["tab"][1, 1] == "b"
    assert batch["target"].shape == (4, 2) and batch["target"].dtype == float
    code = (
        "import sys; from tools.map_dataset import MapDataset; next(MapDataset(sys.argv[1]).batches(4)); "
        "print(sorted(m for m in ('torch', 'torchvision', 'tokenizers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(ws)], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_sample_reads_its_row_as_python_values_and_no_map_is_made_of_objects(tmp_path):
    """The solver reads the frames; a whole map as Python objects took more than 10 GB (14 M rows x 19 columns), so
    a sample's row is gathered from the columns, kept in their own types, when it is read."""
    ws = write_maps(
        tmp_path, "train", ["a", "b"], tab={"x": [1.0, 2.0], "n": [3, 4], "s": ["p", "q"]}, targets={"y": [0, 1]}
    )
    dataset = MapDataset(ws)
    row = dataset[1]["tab"]
    assert row.dtype == object and row.tolist() == [2.0, 4, "q"]
    assert [type(v) for v in row] == [float, int, str]  # Python values, as the tab encoders take them
    kinds = [c.dtype.kind for c in dataset._columns["tab"]]
    assert kinds[:2] == ["f", "i"]  # numbers stay numeric arrays: no object copy of the map


def test_img_only_batches_are_normalised_tensors(tmp_path):
    ids = [f"im{i}" for i in range(6)]
    paths = [save_image(tmp_path, f"{i}.png", size=(8 + 3 * k, 20 - k)) for k, i in enumerate(ids)]  # mixed sizes
    ws = write_maps(tmp_path, "train", ids, img=paths, targets={"y": range(6)})
    batch = next(MapDataset(ws, image_size=24).batches(4))
    img = batch["img"]
    assert tuple(img.shape) == (4, 3, 24, 24) and str(img.dtype) == "torch.float32"
    assert img.min() < 0  # ImageNet-normalised, not plain 0..1
    assert batch["target"].shape == (4, 1)
    write_maps(tmp_path, "test", ids, img=[str(tmp_path / p) for p in paths])  # absolute paths work too
    assert tuple(next(MapDataset(ws, "test").batches(6))["img"].shape) == (6, 3, 64, 64)


def test_txt_only_batches_are_padded_token_ids(tmp_path):
    ids = ["a", "b", "c"]
    long_text = " ".join(["word"] * 200)
    ws = write_maps(
        tmp_path,
        "train",
        ids,
        txt={"title": ["Good film", np.nan, long_text], "body": ["", "fine", "x"]},
        targets={"y": [1, 0, 1]},
    )
    batch = next(MapDataset(ws, max_length=16).batches(3))
    ids_, mask = batch["txt"]["input_ids"], batch["txt"]["attention_mask"]
    assert tuple(ids_.shape) == tuple(mask.shape) == (3, 16) and str(ids_.dtype) == str(mask.dtype) == "torch.int64"
    assert mask[0].sum() < 16 and (ids_[0][mask[0] == 0] == 0).all()  # short text: padded with zeros
    assert mask[2].sum() == 16  # long text: truncated to exactly max_length
    tf = TextTransform(max_length=16)
    assert tf(np.array(["fine"], dtype=object))["input_ids"].tolist() == ids_[1].tolist()  # NaN and "" skipped
    assert int(ids_.max()) < vocab_size()


def test_tab_img_txt_batch(tmp_path):
    ids = [f"r{i}" for i in range(5)]
    ws = write_maps(
        tmp_path,
        "train",
        ids,
        tab={"x": range(5), "k": list("ppqqp")},
        img=[save_image(tmp_path, f"{i}.jpg") for i in ids],
        txt={"t": ["one", "two", "three", "four", "5"]},
        targets={"a": [0, 1, 0, 1, 0], "b": [2, 1, 0, 2, 1], "c": [0.1, 0.2, 0.3, 0.4, 0.5]},
    )
    ds = MapDataset(ws)
    assert ds.modalities == ["img", "tab", "txt"]
    batch = next(ds.batches(5))
    assert batch["tab"].shape == (5, 2) and tuple(batch["img"].shape) == (5, 3, 64, 64)
    assert tuple(batch["txt"]["input_ids"].shape) == (5, 128) and batch["target"].shape == (5, 3)
    raw = MapDataset(ws, transforms={"txt": TextTransform(max_length=8)})  # explicit: img stays the raw path
    item = raw[0]
    assert item["img"].tolist() == ["raw/r0.jpg"] and tuple(item["txt"]["input_ids"].shape) == (8,)


CASES = [
    ("jpg", "RGB"),
    ("jpeg", "L"),
    ("png", "RGBA"),
    ("png", "P"),
    ("png", "I;16"),
    ("tif", "I;16"),
    ("tiff", "RGB"),
    ("tif", "L"),
    ("bmp", "P"),
    ("bmp", "RGB"),
    ("gif", "P"),
    ("webp", "RGBA"),
    ("webp", "RGB"),
]


def test_every_format_and_mode_loads_to_the_same_shape(tmp_path):
    paths = []
    for i, (ext, mode) in enumerate(CASES):
        img = gradient(mode, (20 + 7 * i, 30 - i))
        img.save(tmp_path / f"{i}.{ext}")
        assert Image.open(tmp_path / f"{i}.{ext}").mode.startswith(mode[0])  # the file really has that mode
        paths.append(f"{i}.{ext}")
    tf = ImageTransform(tmp_path, size=16)
    for case, path in zip(CASES, paths):
        x = tf(np.array([path], dtype=object))
        assert tuple(x.shape) == (3, 16, 16), case
        profile = x[0].mean(0).numpy()  # left to right, the gradient survives: not clipped to white, not constant
        assert abs(np.corrcoef(profile, np.arange(16))[0, 1]) > 0.95, case
    frames = [Image.new("RGB", (10, 10), RED), Image.new("RGB", (10, 10), BLUE)]
    frames[0].save(tmp_path / "anim.gif", save_all=True, append_images=frames[1:])
    first = tf(np.array(["anim.gif"], dtype=object))
    assert first[0].mean() > first[2].mean()  # the first (red) frame


def test_images_are_normalised_with_the_imagenet_statistics_without_importing_torchvision(tmp_path):
    """Every sandboxed check and solve that reads an image builds this transform: importing torchvision there cost
    3-4 s per process (its ops import torch._dynamo), so the transform is plain torch."""
    (tmp_path / "raw").mkdir()
    Image.new("RGB", (8, 8), RED).save(tmp_path / "raw" / "red.png")
    ws = write_maps(tmp_path, "train", ["1"], img=["raw/red.png"], targets={"y": [1]})
    code = (
        "import json, sys; from tools.map_dataset import MapDataset; x = next(MapDataset(sys.argv[1]).batches(1))['img']; "
        "print(json.dumps([list(x.shape), x[0, :, 3, 3].tolist(), 'torchvision' in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(ws)], cwd=ROOT, capture_output=True, text=True, check=True)
    shape, pixel, imported = json.loads(out.stdout)
    assert not imported
    assert shape[:2] == [1, 3]
    want = [(c / 255 - m) / s for c, m, s in zip(RED, (0.485, 0.456, 0.406), (0.229, 0.224, 0.225))]
    assert np.allclose(pixel, want, atol=1e-5), (pixel, want)


def test_error_messages_name_the_file_and_map(tmp_path):
    ids = ["1", "2"]
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "bad.png").write_bytes(b"this is not a png")
    write_maps(tmp_path, "train", ids, img=["raw/missing.jpg", "raw/bad.png"], targets={"y": [0, 1]})
    ds = MapDataset(tmp_path)
    with pytest.raises(ValueError, match=r"raw/missing\.jpg in train_img_input_map\.csv: file not found; fix the path"):
        ds[0]
    with pytest.warns(UserWarning, match=r"raw/bad\.png in train_img_input_map\.csv: cannot identify image"):
        ds[1]  # a file there that does not decode: a black image, said once
    pd.DataFrame({"id": ids, "a": ["x.png", "y.png"], "b": ["x.png", "y.png"]}).to_csv(
        tmp_path / "train_img_input_map.csv", index=False
    )
    with pytest.raises(ValueError, match=r"train_img_input_map\.csv has 2 columns after id .* exactly one"):
        MapDataset(tmp_path)
    (tmp_path / "train_img_input_map.csv").unlink()
    pd.DataFrame({"id": ids}).to_csv(tmp_path / "train_txt_input_map.csv", index=False)
    with pytest.raises(ValueError, match=r"train_txt_input_map\.csv has no column after id"):
        MapDataset(tmp_path)
    write_maps(tmp_path, "train", ["1", "3"], txt={"t": ["a", "b"]})
    write_maps(tmp_path, "train", ids, tab={"x": [1, 2]})
    with pytest.raises(
        ValueError,
        match=r"ids of train_txt_input_map\.csv and train_tab_input_map\.csv disagree: "
        r"1 only in train_txt_input_map\.csv \(e\.g\. \['3'\]\)",
    ):
        MapDataset(tmp_path)


def test_loader_matches_batches_and_its_shuffle_is_seeded(tmp_path):
    ids = [f"{i:02d}" for i in range(10)]
    ws = write_maps(
        tmp_path,
        "train",
        ids,
        tab={"x": range(10)},
        img=[save_image(tmp_path, f"{i}.png") for i in ids],
        txt={"t": [f"text number {i}" for i in ids]},
        targets={"y": range(10)},
    )
    ds = MapDataset(ws, image_size=16, max_length=12)
    a, b = next(iter(ds.loader(batch_size=4))), next(ds.batches(4))
    assert a["id"] == b["id"] and (a["tab"] == b["tab"]).all() and (a["target"] == b["target"]).all()
    assert (a["img"] == b["img"]).all() and (a["txt"]["input_ids"] == b["txt"]["input_ids"]).all()
    order = [[i for batch in ds.loader(4, shuffle=True, seed=s) for i in batch["id"]] for s in (1, 1, 2)]
    assert order[0] == order[1] != order[2] and sorted(order[0]) == ids


# --- the light late-fusion network


def accuracy(pred: np.ndarray, y: np.ndarray) -> float:
    return float(((pred[:, 0] > 0.5) == y).mean())


def test_light_net_learns_an_image_colour(tmp_path):
    from tools.light_net import fit_predict

    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 120)
    ids = [str(i) for i in range(120)]
    paths = [
        save_image(tmp_path, f"{i}.png", RED if c else BLUE, size=(10 + i % 7, 12), rng=rng) for i, c in enumerate(y)
    ]
    ds = MapDataset(write_maps(tmp_path, "train", ids, img=paths, targets={"y": y}))
    (pred,) = fit_predict(ds, np.arange(90), [(ds, np.arange(90, 120))], [{"kind": "binary"}], seed=0)
    assert pred.shape == (30, 1) and accuracy(pred, y[90:]) >= 0.9


def test_light_net_learns_a_keyword(tmp_path):
    from tools.light_net import fit_predict

    rng = np.random.default_rng(2)
    filler = "the a movie plot actor scene story music ending camera long short".split()
    y = rng.integers(0, 3, 240)
    keyword = np.array(["wonderful", "boring", "scary"])[y]
    texts = [" ".join(rng.choice(filler, 6).tolist() + [k] + rng.choice(filler, 3).tolist()) for k in keyword]
    ids = [str(i) for i in range(240)]
    ds = MapDataset(write_maps(tmp_path, "train", ids, txt={"review": texts}, targets={"y": y}))
    (pred,) = fit_predict(ds, np.arange(180), [(ds, np.arange(180, 240))], [{"kind": "multiclass", "n_classes": 3}])
    assert pred.shape == (60, 3) and (pred.argmax(1) == y[180:]).mean() >= 0.9


def test_light_net_regression_is_in_the_targets_scale(tmp_path):
    from tools.light_net import fit_predict

    rng = np.random.default_rng(3)
    x = rng.normal(size=300)
    y = 1000 + 50 * x + rng.normal(0, 5, 300)
    ids = [str(i) for i in range(300)]
    ds = MapDataset(write_maps(tmp_path, "train", ids, tab={"x": x, "noise": rng.normal(size=300)}, targets={"y": y}))
    (pred,) = fit_predict(ds, np.arange(240), [(ds, np.arange(240, 300))], [{"kind": "regression"}])
    r2 = 1 - ((pred[:, 0] - y[240:]) ** 2).sum() / ((y[240:] - y[240:].mean()) ** 2).sum()
    assert pred.shape == (60, 1) and r2 >= 0.8


def test_light_net_multimodal_outputs(tmp_path):
    from tools.light_net import fit_predict

    rng = np.random.default_rng(4)
    ids = [f"t{i}" for i in range(40)]
    write_maps(
        tmp_path,
        "train",
        ids,
        tab={"x": rng.normal(size=40), "k": rng.choice(list("ab"), 40)},
        img=[save_image(tmp_path, f"{i}.png", rng=rng) for i in ids],
        txt={"t": [f"note {i}" for i in range(40)]},
        targets={"single": np.ones(40), "cls": rng.integers(0, 4, 40), "val": rng.normal(size=40)},
    )
    test_ids = [f"s{i}" for i in range(7)]
    write_maps(
        tmp_path,
        "test",
        test_ids,
        tab={"x": rng.normal(size=7), "k": rng.choice(list("abc"), 7)},
        img=[save_image(tmp_path, f"{i}.jpg", rng=rng) for i in test_ids],
        txt={"t": ["note"] * 7},
    )
    train, test = MapDataset(tmp_path), MapDataset(tmp_path, "test")
    outputs = [{"kind": "binary"}, {"kind": "multiclass", "n_classes": 4}, {"kind": "regression"}]

    def run():
        return fit_predict(
            train, np.arange(30), [(train, np.arange(30, 40)), (test, None)], outputs, max_epochs=5, seed=7
        )

    val, tst = run()
    assert val.shape == (10, 6) and tst.shape == (7, 6)
    for p in (val, tst):
        assert ((p[:, :5] >= 0) & (p[:, :5] <= 1)).all() and np.allclose(p[:, 1:5].sum(1), 1)
        assert (p[:, 0] > 0.5).all()  # only class 1 was seen: it is predicted
    again = run()
    assert np.array_equal(val, again[0]) and np.array_equal(tst, again[1])  # deterministic for a seed
    with pytest.raises(ValueError, match="multiclass with 3 classes"):
        fit_predict(
            train, np.arange(30), [(test, None)], [outputs[0], {"kind": "multiclass", "n_classes": 3}, outputs[2]]
        )
