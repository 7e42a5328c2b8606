"""Several files per sample, linked to a table's column by the names around its values (agentk.competition.
file_inputs.affix_links): an image map cell holds a sample's paths joined by PATHS_SEP and is read as one mosaic
(tools.image_files); a text map reads each view into a column of its own."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from agentk.competition.file_inputs import FileSource, affix_links, matched_views
from agentk.modalities import IMAGE, PATHS_SEP, TEXT
from agentk.policies.analysis import analyse
from agentk.workspace import input_map_stage, map_file
from stages import img_input_map, txt_input_map
from stages.fetch import fetch_local
from tools.modality_img import ImageTransform
from unit_tests_lib.media import check_image_map

N_TRAIN, N_TEST = 14, 6


def _picture(path, level: int) -> None:
    Image.fromarray(np.full((8, 8), level, dtype=np.uint8), "L").save(path)


@pytest.fixture
def views_ws(tmp_path):
    """A competition whose samples each have a left and a right picture and a title and a body text, named around
    the sample's id (pic_<id>_left.png, <id>.title.txt); the train samples have a mask picture too, which the test's
    do not."""
    public = tmp_path / "public"
    (public / "pictures").mkdir(parents=True)
    (public / "notes").mkdir()
    ids = [f"s{k:03d}" for k in range(N_TRAIN + N_TEST)]
    for k, i in enumerate(ids):
        _picture(public / "pictures" / f"pic_{i}_left.png", 10 + k)
        _picture(public / "pictures" / f"pic_{i}_right.png", 200 - k)
        if k < N_TRAIN:
            _picture(public / "pictures" / f"pic_{i}_mask.png", 255)
        (public / "notes" / f"{i}.title.txt").write_text(f"title of {i}")
        (public / "notes" / f"{i}.body.txt").write_text(f"body of {i}, longer")
    pd.DataFrame({"ref": ids[:N_TRAIN], "y": [k % 2 for k in range(N_TRAIN)]}).to_csv(public / "train.csv", index=False)
    pd.DataFrame({"ref": ids[N_TRAIN:]}).to_csv(public / "test.csv", index=False)
    pd.DataFrame({"ref": ids[N_TRAIN:], "y": 0}).to_csv(public / "sample_submission.csv", index=False)
    (public / "description.md").write_text("# Views\n\nPredict `y` for each ref.\n\nScored on accuracy.\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    fetch_local(public, ws)
    return ws


def test_the_names_around_a_columns_values_link_it_to_its_files():
    files = {f"raw/p/img_{v}.png" for v in ("a1", "a2", "a3")} | {"raw/p/img_a1.png.bak", "raw/p/other.png"}
    assert affix_links(pd.Series(["a1", "a2", "a3"]), files, "train") == [("raw/p", "img_", ".png")]
    views = files | {f"raw/p/img_{v}_b.png" for v in ("a1", "a2", "a3")}
    assert affix_links(pd.Series(["a1", "a2", "a3"]), views, "train") == [
        ("raw/p", "img_", ".png"),
        ("raw/p", "img_", "_b.png"),
    ]
    assert affix_links(pd.Series(["a1", "a2", "a4"]), files, "train") == []  # a value without its file
    assert affix_links(pd.Series(["a1", "a1", "a2"]), files, "train") == []  # values that name no sample
    assert affix_links(pd.Series(["a1", None, "a2"]), files, "train") == []


def test_train_only_views_are_dropped_and_one_common_view_is_a_plain_link():
    train = FileSource(IMAGE.name, "raw/p", column="id", views=(("", "_a.png"), ("", "_b.png"), ("", "_mask.png")))
    test = FileSource(IMAGE.name, "raw/q", column="id", views=(("", "_a.png"), ("", "_b.png")))
    got = matched_views(train, test)
    assert [s.views for s in got] == [(("", "_a.png"), ("", "_b.png"))] * 2 and got[1].folder == "raw/q"
    one = matched_views(train, FileSource(IMAGE.name, "raw/q", column="id", ext="_b.png"))
    assert [(s.views, s.prefix, s.ext) for s in one] == [((), "", "_b.png")] * 2
    apart = FileSource(IMAGE.name, "raw/q", column="id", ext=".jpg")  # nothing in common: left as found
    assert matched_views(train, apart) == (train, apart)


def _run(ws, stage, modality: str, split: str, a) -> pd.DataFrame:
    (ws / "map.py").write_text(stage.expert(a, SimpleNamespace(ws=ws), split).code)
    subprocess.run([sys.executable, "map.py"], cwd=ws, check=True, capture_output=True)
    return pd.read_csv(ws / map_file(input_map_stage(split, modality)), dtype={"id": str})


def test_a_samples_pictures_are_one_mosaic_and_its_texts_columns_of_their_own(views_ws):
    ws = views_ws
    a = analyse(ws)
    for split in ("train", "test"):  # the train-only mask is no input
        src = a.file_source(split, IMAGE.name)
        assert (src.folder, src.column, src.views) == (
            "raw/pictures",
            "ref",
            (("pic_", "_left.png"), ("pic_", "_right.png")),
        )
        assert a.file_source(split, TEXT.name).views == (("", ".body.txt"), ("", ".title.txt"))
    images = _run(ws, img_input_map, IMAGE.name, "train", a)
    assert images["path"].iloc[0] == PATHS_SEP.join(f"raw/pictures/pic_s000_{v}.png" for v in ("left", "right"))
    check_image_map(ws, map_file(input_map_stage("train", IMAGE.name)))
    read = ImageTransform(ws, size=16, map_name="train_img_input_map.csv")
    pixels = read.pixels(images["path"].iloc[3])[..., 0]  # two views side by side: left 13, right 197
    assert (pixels[:, :7] == 13).all() and (pixels[:, 9:] == 197).all()
    texts = _run(ws, txt_input_map, TEXT.name, "test", a)
    assert list(texts.columns) == ["id", "text_0", "text_1"]
    assert texts.iloc[0].tolist() == ["s014", "body of s014, longer", "title of s014"]

    broken = images.assign(path=images["path"].str.replace("_right.png", "_gone.png"))  # one view's file missing
    broken.to_csv(ws / map_file(input_map_stage("train", IMAGE.name)), index=False)
    with pytest.raises(AssertionError, match="image paths do not exist"):
        check_image_map(ws, map_file(input_map_stage("train", IMAGE.name)))
