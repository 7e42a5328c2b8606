"""Image, text and mixed competitions in the layouts Kaggle uses: for each, the expert's map stages run in the
sandbox with their unit tests, then the map-dataset meta-tests and the light solve run on the result."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from agentk.core.engine import Context
from agentk.core.memory import WorkingMemory
from agentk.policies.analysis import analyse
from agentk.sandbox import run_python
from agentk.setup_pipeline import map_stages, remaining_stages
from stages.fetch import fetch_local
from tools.light_solve import light_solve
from tools.submission import compare_with_sample
from unit_tests_lib.media import check_image_map, check_text_map
from unit_tests_lib.meta import check_test_maps, check_train_map_dataset

EXTS = ["jpg", "jpeg", "png", "tif", "tiff", "bmp", "gif", "webp"]
MODES = ["RGB", "L", "RGBA", "P"]
WORDS = "the a of report review article source note page edit talk history section".split()


def description(metric: str) -> str:
    return f"# A competition\n\nPredict the target.\n\n## Evaluation\n\nSubmissions are evaluated on {metric}.\n\n## Data\n\nFiles.\n"


def image(path: Path, label: int, i: int = 0, ext: str | None = None) -> Path:
    """A small image whose colour gives the label; extension, mode and size vary with i."""
    ext = ext or EXTS[i % len(EXTS)]
    path = path.with_name(f"{path.name}.{ext}")
    path.parent.mkdir(parents=True, exist_ok=True)
    size = (12 + 4 * (i % 3), 10 + 2 * (i % 4))
    rgb = (200, 30, 30) if label else (30, 30, 200)
    im = Image.new("RGB", size, rgb)
    mode = MODES[i % len(MODES)] if ext not in ("jpg", "jpeg") else "RGB"
    if mode == "P":
        im = im.quantize(8)
    elif mode != "RGB":
        im = im.convert(mode)
    im.save(path)
    return path


def text(label: int, rng: np.random.Generator) -> str:
    words = list(rng.choice(WORDS, 12)) + (["garbage", "stupid"] if label else ["thanks", "helpful"])
    rng.shuffle(words)
    return " ".join(words).capitalize() + "."


def write(folder: Path, files: dict[str, pd.DataFrame | str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        path = folder / name
        if isinstance(content, str):
            path.write_text(content)
        elif name.endswith(".tsv"):
            content.to_csv(path, sep="\t", index=False)
        elif name.endswith(".jsonl"):
            content.to_json(path, orient="records", lines=True)
        elif name.endswith(".json"):
            content.to_json(path, orient="records")
        else:
            content.to_csv(path, index=False)
    return folder


def labels(n: int) -> np.ndarray:
    return np.arange(n) % 2


def run_setup(src: Path, ws: Path, solve: bool = True) -> dict:
    """Fetch, then every stage after plan as the expert writes it: the generated files run in one sandboxed
    subprocess, in stage order, then each stage's unit tests and the meta-tests check the workspace.
    Returns the analysis and the light-solve result."""
    fetch_local(src, ws)
    a = analyse(ws)
    by_name = {s.name: s for _, s in map_stages()}
    stages = [by_name[name] for name in remaining_stages(a.inputs)]
    files = []
    for stage in stages:
        ctx = Context(ws, "first", 1, WorkingMemory(), None, None)
        (ws / f"code_{stage.name}.py").write_text(stage.expert(a, ctx).code)
        files.append(f"code_{stage.name}.py")
    res = run_python(
        ["-c", "import runpy, sys\nfor f in sys.argv[1:]: runpy.run_path(f, run_name='__main__')", *files], cwd=ws
    )
    assert res.ok, res.error()
    with contextlib.chdir(ws):  # as in the sandbox: generated modules read workspace-relative paths
        for stage in stages:
            for check in stage.checks:
                check.fn(ws, **check.kwargs)
        check_train_map_dataset(ws)
        check_test_maps(ws)
        result = light_solve(ws) if solve else None
    if solve:
        compare_with_sample(ws, result["submission"], "light solve")
        assert np.isfinite(result["score"])
    return {"analysis": a, "solve": result}


def read(ws: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(ws / name, dtype={"id": str})


# --------------------------------------------------------------------------- image layouts


def test_class_subfolders_every_extension_mode_and_size(tmp_path):
    src = tmp_path / "comp"
    for i in range(48):
        image(src / "train" / ("red" if i % 2 else "blue") / f"im{i:03d}", i % 2, i)
    test_ids = [f"t{i}" for i in range(16)]
    for i, tid in enumerate(test_ids):
        image(src / "test" / tid, i % 2, i, ext="png")
    write(
        src,
        {
            "sample_submission.csv": pd.DataFrame({"id": test_ids, "label": "red"}),
            "description.md": description("accuracy"),
        },
    )
    out = run_setup(src, tmp_path / "ws")
    assert out["analysis"].inputs == ["img"]
    train = read(tmp_path / "ws", "train_img_input_map.csv")
    targets = read(tmp_path / "ws", "train_tab_target_map.csv")
    assert len(train) == 48 and {Path(p).suffix[1:] for p in train["path"]} == set(EXTS)
    assert (targets["label"] == [Path(i).parts[0] for i in targets["id"]]).all()  # label = class folder
    test = read(tmp_path / "ws", "test_img_input_map.csv")
    assert list(test["path"]) == [f"raw/test/{t}.png" for t in test_ids]  # ids without extension, found with it
    assert out["solve"]["score"] >= 0.8  # the colour is the class


def test_label_in_file_name_and_positive_class_from_description(tmp_path):
    src = tmp_path / "comp"
    for i in range(40):
        image(src / "train" / f"{'dog' if i % 2 else 'cat'}.{i}", i % 2, ext="jpg")
    for i in range(1, 13):
        image(src / "test" / str(i), i % 2, ext="jpg")
    write(
        src,
        {
            "sample_submission.csv": pd.DataFrame({"id": range(1, 13), "label": 0.5}),
            "description.md": description("log loss")
            + "\nPredict a probability that the image is a dog (1 = dog, 0 = cat).\n",
        },
    )
    out = run_setup(src, tmp_path / "ws")
    a = out["analysis"]
    assert a.targets[0].classes == ["cat", "dog"] and a.targets[0].positive == "dog"
    targets = read(tmp_path / "ws", "train_tab_target_map.csv")
    assert set(targets["label"]) == {"cat", "dog"} and targets["id"].iloc[0].endswith(".jpg")
    assert out["solve"]["submission"]["label"].between(0, 1).all()


def test_csv_ids_with_extension_beside_zipped_image_folders(tmp_path):
    src = tmp_path / "comp"
    src.mkdir()
    staging = tmp_path / "staging"
    names = {split: [f"{split}{i:04x}abc.jpg" for i in range(n)] for split, n in (("train", 40), ("test", 12))}
    for split, files in names.items():
        with zipfile.ZipFile(src / f"{split}.zip", "w") as z:  # images at the archive's top level
            for i, name in enumerate(files):
                z.write(image(staging / split / Path(name).stem, i % 2, ext="jpg"), name)
    write(
        src,
        {
            "train.csv": pd.DataFrame({"id": names["train"], "has_cactus": labels(40)}),
            "sample_submission.csv": pd.DataFrame({"id": names["test"], "has_cactus": 0.5}),
            "description.md": description("area under the ROC curve"),
        },
    )
    ws = tmp_path / "ws"
    out = run_setup(src, ws)
    assert (ws / "raw" / "train").is_dir() and not (ws / "raw" / "train").is_symlink()  # unpacked in the workspace
    assert not (src / "train").exists() and (src / "train.zip").exists()  # the user's folder is untouched
    assert list(read(ws, "train_img_input_map.csv")["path"][:2]) == [f"raw/train/{n}" for n in names["train"][:2]]
    assert out["analysis"].metric == "roc_auc"


def test_zip_beside_its_own_folder_is_not_unpacked_twice(tmp_path):
    src = tmp_path / "comp"
    for i in range(20):
        image(src / "train" / f"{'dog' if i % 2 else 'cat'}.{i}", i % 2, ext="jpg")
        image(src / "test" / str(i + 1), i % 2, ext="jpg")
    with zipfile.ZipFile(src / "train.zip", "w") as z:
        for p in sorted((src / "train").iterdir()):
            z.write(p, f"train/{p.name}")
    write(
        src,
        {
            "sample_submission.csv": pd.DataFrame({"id": range(1, 21), "label": 0.5}),
            "description.md": description("log loss"),
        },
    )
    fetch_local(src, tmp_path / "ws")
    assert (tmp_path / "ws" / "raw" / "train").is_symlink()
    assert not any(p.name.startswith(".partial") for p in (tmp_path / "ws" / "raw").iterdir())


def test_csv_ids_without_extension_in_named_folders(tmp_path):
    src = tmp_path / "comp"
    ids = {s: [f"{s[:2]}_{i:03d}" for i in range(n)] for s, n in (("train", 40), ("test", 10))}
    for split, names in ids.items():
        for i, name in enumerate(names):
            image(src / f"{split}_images" / name, i % 2, ext="png")
    write(
        src,
        {
            "train.csv": pd.DataFrame({"image_id": ids["train"], "label": np.where(labels(40), "sick", "healthy")}),
            "sample_submission.csv": pd.DataFrame({"image_id": ids["test"], "label": "healthy"}),
            "description.md": description("accuracy"),
        },
    )
    ws = tmp_path / "ws"
    run_setup(src, ws)
    assert read(ws, "test_img_input_map.csv")["path"][0] == f"raw/test_images/{ids['test'][0]}.png"


def test_csv_of_nested_relative_paths(tmp_path):
    src = tmp_path / "comp"
    rows = {}
    for split, n in (("train", 40), ("test", 10)):
        paths = [f"images/{split}/{i % 4}/s{i}.bmp" for i in range(n)]
        for i, p in enumerate(paths):
            image(src / p[:-4], i % 2, ext="bmp")
        rows[split] = pd.DataFrame({"id": [f"{split}{i}" for i in range(n)], "file_path": paths})
    rows["train"]["target"] = labels(40)
    write(
        src,
        {
            "train.csv": rows["train"],
            "test.csv": rows["test"],
            "sample_submission.csv": pd.DataFrame({"id": rows["test"]["id"], "target": 0}),
            "description.md": description("accuracy"),
        },
    )
    ws = tmp_path / "ws"
    out = run_setup(src, ws)
    assert out["analysis"].inputs == ["img"] and out["analysis"].features == []  # the path column is no feature
    assert read(ws, "train_img_input_map.csv")["path"][5] == "raw/images/train/1/s5.bmp"


def test_ids_shared_by_tabular_csv_and_image_folder(tmp_path):
    rng = np.random.default_rng(0)
    src = tmp_path / "comp"
    species = np.array(["Acer", "Quercus", "Salix"])
    y = np.arange(60) % 3
    for i in range(75):
        image(src / "images" / str(i + 1), int(y[i % 60] == 1), ext="jpg")
    feats = pd.DataFrame({"id": np.arange(1, 76), "margin1": rng.normal(size=75), "shape1": rng.normal(size=75)})
    feats.loc[:59, "margin1"] += y * 2
    train = feats.iloc[:60].assign(species=species[y])
    write(
        src,
        {
            "train.csv": train[["id", "species", "margin1", "shape1"]],
            "test.csv": feats.iloc[60:],
            "sample_submission.csv": pd.DataFrame({"id": feats["id"].iloc[60:], **{s: 1 / 3 for s in species}}),
            "description.md": description("multi-class logarithmic loss"),
        },
    )
    ws = tmp_path / "ws"
    out = run_setup(src, ws)
    a = out["analysis"]
    assert a.inputs == ["tab", "img"] and a.targets[0].submit == "proba_columns"
    assert list(read(ws, "train_tab_input_map.csv").columns) == ["id", "margin1", "shape1"]
    assert read(ws, "train_img_input_map.csv")["path"][0] == "raw/images/1.jpg"
    probs = out["solve"]["submission"][list(species)]
    assert np.allclose(probs.sum(axis=1), 1, atol=1e-4)


def test_labels_csv_with_one_probability_column_per_breed(tmp_path):
    src = tmp_path / "comp"
    breeds = ["beagle", "collie", "pug"]
    train_ids, test_ids = [f"{i:08x}" for i in range(45)], [f"f{i:07x}" for i in range(9)]
    for i, name in enumerate(train_ids):
        image(src / "train" / name, int(i % 3 == 0), ext="jpg")
    for i, name in enumerate(test_ids):
        image(src / "test" / name, int(i % 3 == 0), ext="jpg")
    write(
        src,
        {
            "labels.csv": pd.DataFrame({"id": train_ids, "breed": [breeds[i % 3] for i in range(45)]}),
            "sample_submission.csv": pd.DataFrame({"id": test_ids, **{b: 1 / 3 for b in breeds}}),
            "description.md": description("multi class log loss"),
        },
    )
    out = run_setup(src, tmp_path / "ws")
    t = out["analysis"].targets[0]
    assert out["analysis"].train.endswith("labels.csv") and t.submit == "proba_columns" and t.classes == breeds


def test_image_multi_target_classification(tmp_path):
    src = tmp_path / "comp"
    names = {s: [f"{s}_{i}" for i in range(n)] for s, n in (("train", 40), ("test", 10))}
    for split, files in names.items():
        for i, name in enumerate(files):
            image(src / f"{split}-jpg" / name, i % 2, ext="jpg")
    y = pd.DataFrame(
        {
            "image_name": names["train"],
            "haze": labels(40),
            "water": 1 - labels(40),
            "road": (np.arange(40) % 3 == 0) * 1,
        }
    )
    write(
        src,
        {
            "train_classes.csv": y,
            "sample_submission.csv": pd.DataFrame(
                {"image_name": names["test"], "haze": 0.5, "water": 0.5, "road": 0.5}
            ),
            "description.md": description("mean column-wise ROC AUC"),
        },
    )
    out = run_setup(src, tmp_path / "ws")
    assert out["analysis"].task_type == "MultiTgtCls" and out["analysis"].inputs == ["img"]
    assert out["solve"]["submission"].shape == (10, 4)


# --------------------------------------------------------------------------- text layouts


def _text_frames(n_train=60, n_test=20, extra=False):
    rng = np.random.default_rng(1)
    y = labels(n_train + n_test)
    df = pd.DataFrame({"id": [f"c{i:05d}" for i in range(len(y))], "comment_text": [text(v, rng) for v in y]})
    if extra:
        df["n_votes"] = rng.integers(0, 50, len(y))
    return df.iloc[:n_train].assign(toxic=y[:n_train]), df.iloc[n_train:].reset_index(drop=True)


@pytest.mark.parametrize("fmt", ["csv", "tsv", "json", "jsonl"])
def test_long_text_column_in_each_table_format(tmp_path, fmt):
    train, test = _text_frames()
    src = write(
        tmp_path / "comp",
        {
            f"train.{fmt}": train,
            f"test.{fmt}": test,
            "sample_submission.csv": pd.DataFrame({"id": test["id"], "toxic": 0.5}),
            "description.md": description("area under the ROC curve"),
        },
    )
    ws = tmp_path / "ws"
    out = run_setup(src, ws, solve=fmt == "csv")
    assert out["analysis"].inputs == ["txt"] and out["analysis"].text_columns == ["comment_text"]
    assert read(ws, "train_txt_input_map.csv")["comment_text"][0] == train["comment_text"][0]
    if out["solve"]:
        assert out["solve"]["score"] >= 0.9  # the keyword is the class


def test_mixed_text_and_tabular_each_in_its_own_map(tmp_path):
    train, test = _text_frames(extra=True)
    src = write(
        tmp_path / "comp",
        {
            "train.json": train,
            "test.json": test,
            "sample_submission.csv": pd.DataFrame({"id": test["id"], "toxic": 0.5}),
            "description.md": description("area under the ROC curve"),
        },
    )
    ws = tmp_path / "ws"
    out = run_setup(src, ws)
    assert out["analysis"].inputs == ["tab", "txt"]
    assert list(read(ws, "train_tab_input_map.csv").columns) == ["id", "n_votes"]
    assert list(read(ws, "test_txt_input_map.csv").columns) == ["id", "comment_text"]


def test_one_text_file_per_sample_named_by_csv_any_encoding(tmp_path):
    train, test = _text_frames()
    src = tmp_path / "comp"
    for split, frame in (("train", train), ("test", test)):
        (src / split).mkdir(parents=True)
        for i, (doc_id, body) in enumerate(zip(frame["id"], frame["comment_text"])):
            encoding = "latin-1" if i == 0 else "utf-8"  # an old corpus: not every file is UTF-8
            (src / split / f"{doc_id}.txt").write_bytes((body + (" café" if i == 0 else "")).encode(encoding))
    write(
        src,
        {
            "train.csv": train[["id", "toxic"]],
            "sample_submission.csv": pd.DataFrame({"id": test["id"], "toxic": 0.5}),
            "description.md": description("accuracy"),
        },
    )
    ws = tmp_path / "ws"
    out = run_setup(src, ws)
    assert out["analysis"].inputs == ["txt"]
    texts = read(ws, "train_txt_input_map.csv")
    assert texts["text"][0].endswith("café") and texts["text"][1] == train["comment_text"][1]


def test_text_files_in_class_folders(tmp_path):
    train, test = _text_frames()
    src = tmp_path / "comp"
    for doc_id, body, y in zip(train["id"], train["comment_text"], train["toxic"]):
        (src / "train" / ("neg" if y else "pos")).mkdir(parents=True, exist_ok=True)
        (src / "train" / ("neg" if y else "pos") / f"{doc_id}.txt").write_text(body)
    (src / "test").mkdir()
    for doc_id, body in zip(test["id"], test["comment_text"]):
        (src / "test" / f"{doc_id}.txt").write_text(body)
    write(
        src,
        {
            "sample_submission.csv": pd.DataFrame({"id": test["id"], "sentiment": "pos"}),
            "description.md": description("accuracy"),
        },
    )
    ws = tmp_path / "ws"
    out = run_setup(src, ws)
    assert out["analysis"].targets[0].classes == ["neg", "pos"]
    assert set(read(ws, "train_tab_target_map.csv")["sentiment"]) == {"neg", "pos"}


def test_modalities_json_lists_what_the_maps_hold(tmp_path):
    train, test = _text_frames(extra=True)
    src = write(
        tmp_path / "comp",
        {
            "train.csv": train,
            "test.csv": test,
            "sample_submission.csv": pd.DataFrame({"id": test["id"], "toxic": 0.5}),
            "description.md": description("area under the ROC curve"),
        },
    )
    fetch_local(src, tmp_path / "ws")
    from stages.modalities import expert

    spec = json.loads(expert(analyse(tmp_path / "ws"), None).text)
    assert spec == {"inputs": ["tab", "txt"], "targets": ["tab"], "task_type": "BinCls"}


# --------------------------------------------------------------------------- failure messages of the unit tests


@pytest.fixture(scope="module")
def mixed_ws(tmp_path_factory) -> Path:
    """A good tab + img + txt workspace (ids shared by train.csv, images/<id>.png and a text column)."""
    root = tmp_path_factory.mktemp("mixed")
    train, test = _text_frames(extra=True)
    for frame in (train, test):
        for i, doc_id in enumerate(frame["id"]):
            image(root / "comp" / "images" / doc_id, i % 2, ext="png")
    src = write(
        root / "comp",
        {
            "train.csv": train,
            "test.csv": test,
            "sample_submission.csv": pd.DataFrame({"id": test["id"], "toxic": 0.5}),
            "description.md": description("area under the ROC curve"),
        },
    )
    out = run_setup(src, root / "ws", solve=False)
    assert out["analysis"].inputs == ["tab", "img", "txt"]
    return root / "ws"


@pytest.fixture
def broken(mixed_ws, tmp_path, monkeypatch):
    copy = tmp_path / "ws"
    shutil.copytree(mixed_ws, copy, symlinks=True)
    monkeypatch.chdir(copy)
    return copy


def edit(ws: Path, name: str, fn) -> None:
    fn(read(ws, name)).to_csv(ws / name, index=False)


def corrupt_images(ws: Path, d: pd.DataFrame) -> pd.DataFrame:
    (ws / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\n truncated")
    return d.assign(path="bad.png")


IMG, TXT = "train_img_input_map.csv", "train_txt_input_map.csv"
MESSAGE_CASES = [
    (
        "missing image file",
        IMG,
        lambda ws, d: d.assign(path=d.path.where(d.index != 3, "raw/images/nope.png")),
        "do not exist",
    ),
    ("path without extension", IMG, lambda ws, d: d.assign(path=d.path.str[:-4]), "add the file extension"),
    ("two path columns", IMG, lambda ws, d: d.assign(other=d.path), "one path column"),
    ("no path", IMG, lambda ws, d: d.assign(path=d.path.where(d.index != 0)), "have no image path"),
    ("corrupt images", IMG, corrupt_images, "sampled paths do not open as images"),
    ("numeric text column", TXT, lambda ws, d: d.assign(comment_text=range(len(d))), "numbers go into the tab map"),
    ("mis-decoded text", TXT, lambda ws, d: d.assign(comment_text=d.comment_text + " caf\ufffd"), "real encoding"),
    ("bytes repr", TXT, lambda ws, d: d.assign(comment_text="b'" + d.comment_text + "'"), "decode the bytes"),
    ("file names, not text", TXT, lambda ws, d: d.assign(comment_text=d.id + ".txt"), "read the files' content"),
    ("empty texts", TXT, lambda ws, d: d.assign(comment_text=d.comment_text.where(d.index > 10)), "have no text"),
]


@pytest.mark.parametrize("case", MESSAGE_CASES, ids=[c[0] for c in MESSAGE_CASES])
def test_broken_media_map_fails_with_actionable_message(broken, case):
    _, name, fn, message = case
    edit(broken, name, lambda d: fn(broken, d))
    check = check_image_map if name == IMG else check_text_map
    with pytest.raises(AssertionError, match=re.escape(message)):
        check(broken, name)


def test_good_media_maps_pass(mixed_ws):
    check_image_map(mixed_ws, IMG)
    check_text_map(mixed_ws, TXT)


def test_map_dataset_names_the_maps_whose_ids_disagree(broken):
    edit(broken, IMG, lambda d: d.assign(id=d.id.where(d.index != 0, "stranger")))
    with pytest.raises(
        AssertionError, match=r"ids of train_(img|tab|txt)_input_map.csv and train_(img|tab|txt)_input_map.csv disagree"
    ):
        check_train_map_dataset(broken)


def test_map_dataset_batch_shapes_of_a_mixed_workspace(mixed_ws, monkeypatch):
    monkeypatch.chdir(mixed_ws)
    from agentk.workspace import TARGET_TRANSFORM, Workspace
    from tools.map_dataset import MapDataset

    ds = MapDataset(mixed_ws, "train", Workspace(mixed_ws).load(TARGET_TRANSFORM).transform)
    batch = next(ds.batches(16))
    assert ds.modalities == ["img", "tab", "txt"]
    assert tuple(batch["img"].shape) == (16, 3, 64, 64) and batch["tab"].shape == (16, 1)
    assert tuple(batch["txt"]["input_ids"].shape) == (16, 128) and batch["target"].shape == (16, 1)


def test_a_few_corrupt_images_among_many_are_the_datas_not_the_maps(tmp_path):
    """One zero-byte file among twelve images (data fuzz seed 14): the map passes its unit test and the models read
    the file as a black image, with one warning naming it; a map of mostly unreadable files still fails."""
    from tools.modality_img import ImageTransform

    (tmp_path / "raw").mkdir()
    paths = []
    for i in range(12):
        Image.new("RGB", (8, 8), (200, 10 * i, 0)).save(tmp_path / "raw" / f"{i}.png")
        paths.append(f"raw/{i}.png")
    (tmp_path / "raw" / "5.png").write_bytes(b"")
    pd.DataFrame({"id": range(12), "path": paths}).to_csv(tmp_path / "train_img_input_map.csv", index=False)
    check_image_map(tmp_path, "train_img_input_map.csv", n_open=12)
    tf = ImageTransform(tmp_path, 8, "train_img_input_map.csv")
    with pytest.warns(UserWarning, match=r"raw/5\.png in train_img_input_map\.csv: cannot identify image"):
        assert tf.pixels("raw/5.png").max() == 0
    assert tf.pixels("raw/4.png")[..., 0].min() == 200
    for i in range(7):
        (tmp_path / "raw" / f"{i}.png").write_bytes(b"")
    with pytest.raises(AssertionError, match="7 of 12 sampled paths do not open as images"):
        check_image_map(tmp_path, "train_img_input_map.csv", n_open=12)
