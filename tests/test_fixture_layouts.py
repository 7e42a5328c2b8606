"""Where a Kaggle competition puts its data (issue 14): the expert's discovery on the generated layout fixtures
(testing/competitions/layouts.py). Unit level: fetch a fixture into a workspace and assert what the
table discovery and the analysis find; the maps' generated code is run on the joined and numeric-text layouts.
One full setup (the Titanic layout). The fixtures' full setups are in benchmarks/arena.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from conftest import agentk
from PIL import Image
from sklearn.metrics import roc_auc_score

from agentk.competition.readers import read_table
from agentk.competition.series import aggregate_per_key, per_sample_folders, pixel_columns, summary
from agentk.competition.tables import SampleColumns, find, sample_columns
from agentk.core.errors import BadInput
from agentk.modalities import IMAGE, TABULAR
from agentk.policies.analysis import analyse
from agentk.policies.target_shapes import scored_rows
from agentk.workspace import input_map_stage, map_file
from stages import img_input_map, tab_input_map
from stages import metric as metric_stage
from stages.fetch import check_source, fetch_local
from testing.competitions import build
from tools.task_data import group_column


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory):
    root = tmp_path_factory.mktemp("fixtures")
    return lambda name: build(name, root) if not (root / name).exists() else root / name


@pytest.fixture
def fetched(fixtures, tmp_path):
    """(workspace, meta.json of the fixture) with the fixture's public folder fetched into it."""

    def fetch(name):
        folder = fixtures(name)
        ws = tmp_path / name
        ws.mkdir()
        fetch_local(folder / "public", ws)
        return ws, json.loads((folder / "meta.json").read_text())

    return fetch


@pytest.mark.parametrize(
    "name, sample",
    [
        ("gender-submission", "gender_submission.csv"),
        ("camel-sample", "sampleSubmission.csv"),
        ("prefixed-zipped", "en_sample_submission_2.csv"),
        ("sevenzip-only", "sample_submission.csv"),
        ("parquet-tables", "sample_submission.csv"),  # the CSV copy of sample_submission.parquet
        ("tsv-gz-sample", "sample_submission.csv"),
    ],
)
def test_the_sample_submission_is_found_whatever_its_name_and_packing(fetched, name, sample):
    ws, _ = fetched(name)
    a = analyse(ws)
    assert a.sample == f"raw/{sample}"
    assert (a.n_train, a.n_test) == (240, 60)
    assert a.test_id == a.id_col and len(a.targets) == 1
    recorded = json.loads((ws / "task" / "meta.json").read_text())["tables"]
    assert recorded["sample"] == sample


def test_of_two_samples_the_one_whose_ids_are_the_tests_wins_and_why_is_recorded(fetched):
    ws, _ = fetched("stale-sample")
    meta = json.loads((ws / "task" / "meta.json").read_text())
    assert meta["tables"]["sample"] == "sample_submission_v2.csv"
    assert "100% of its ids are ids of test.csv" in meta["tables_why"]["sample"]
    assert "sample_submission.csv 0%" in meta["tables_why"]["sample"]


@pytest.mark.parametrize(
    "name, train, test",
    [
        ("training-set", "training_set.csv", "test_set.csv"),
        ("versioned-v2", "train_v2.csv", "test_v2.csv"),
        ("parts-folder", "train.csv", "test.csv"),  # joined from train/part-*.csv
        ("numbered-parts", "train.csv", "test.csv"),  # joined from train_1.csv + train_2.csv
        ("nested-archive", "data/train.csv", "data/test.csv"),  # data.zip holding train.csv.zip
        ("utf16-tsv", "train.tsv", "test.tsv"),
        ("latin1-multiline", "train.csv", "test.csv"),
        ("jsonl-feather", "train.jsonl", "test.feather"),
        ("json-records", "train.json", "test.json"),
    ],
)
def test_train_and_test_are_found_under_other_names_packings_and_formats(fetched, name, train, test):
    ws, _ = fetched(name)
    paths = {role: p.relative_to(ws / "raw").as_posix() for role, p in find(ws / "raw").paths.items()}
    assert (paths["train"], paths["test"]) == (train, test)
    a = analyse(ws)
    assert (a.n_train, a.n_test) == (240, 60)
    assert {"x1", "x2"} <= set(a.features)


def test_the_parts_of_a_split_become_one_table_and_the_parts_stay_untouched(fetched, fixtures):
    ws, _ = fetched("parts-folder")
    joined = pd.read_csv(ws / "raw" / "train.csv")
    parts = sorted((fixtures("parts-folder") / "public" / "train").glob("part-*.csv"))
    assert len(parts) == 3 and joined.equals(pd.concat(map(pd.read_csv, parts), ignore_index=True))


def run_map(ws, split, a, modality=TABULAR.name):
    """Run a modality's input map's expert code as the setup would, and read the map it writes."""
    stage = {TABULAR.name: tab_input_map, IMAGE.name: img_input_map}[modality]
    (ws / "map.py").write_text(stage.expert(a, SimpleNamespace(ws=ws), split).code)
    subprocess.run([sys.executable, "map.py"], cwd=ws, check=True, capture_output=True)
    return pd.read_csv(ws / map_file(input_map_stage(split, modality)), dtype={"id": str})


def test_a_labels_table_is_joined_to_the_train_table_by_its_key(fetched):
    ws, _ = fetched("labels-file")
    a = analyse(ws)
    assert a.train == "raw/train_features.csv" and a.test == "raw/test_features.csv"
    assert [t.column for t in a.targets] == ["target"] and a.features == ["x1", "x2", "colour"]
    assert [(j.table, j.keys, j.splits) for j in a.joins] == [("raw/train_labels.csv", ["sample_id"], ["train"])]


def test_a_one_to_many_table_is_summarised_per_key_and_joined(fetched):
    ws, _ = fetched("one-to-many")
    a = analyse(ws)
    summaries = [f"transactions_amount_{how}" for how in ("mean", "min", "max", "std", "moves")]
    assert a.features == ["age", "transactions_count", *summaries]
    tx = pd.read_csv(ws / "raw" / "transactions.csv")
    test = run_map(ws, "test", a)
    first = test["id"].iloc[0]
    assert test["transactions_count"].iloc[0] == (tx["customer_id"] == first).sum()
    assert test["transactions_amount_mean"].iloc[0] == pytest.approx(
        tx.loc[tx["customer_id"] == first, "amount"].mean()
    )
    assert test["transactions_amount_max"].iloc[0] == tx.loc[tx["customer_id"] == first, "amount"].max()
    mine = tx.loc[tx["customer_id"] == first, "amount"]  # in the file's order
    assert test["transactions_amount_moves"].iloc[0] == pytest.approx(np.sqrt((mine.diff() ** 2).sum()))


def test_series_rows_per_sample_in_each_split_become_one_row_per_sample(fetched):
    """X_train.csv / X_test.csv of many rows per series_id, y_train.csv of the labels: each split one row per key,
    the series summarised; the user's tables stay as they were."""
    ws, _ = fetched("sensor-rows-per-series")
    a = analyse(ws)
    assert (a.train, a.test, a.n_train, a.n_test) == (
        "raw/train_per_series_id.csv",
        "raw/test_per_series_id.csv",
        300,
        100,
    )
    assert [t.column for t in a.targets] == ["surface"] and a.metric == "accuracy"
    train = pd.read_csv(ws / "raw" / "train_per_series_id.csv")
    x = pd.read_csv(ws / "raw" / "X_train.csv")
    assert (train["rows"] == 32).all() and "row_id" not in train.columns  # an id per reading says nothing per series
    first = x[x["series_id"] == train["series_id"][0]]
    assert np.isclose(train["acc_y_std"][0], first["acc_y"].std())
    # the summaries carry the label: a surface's sensor shakes more
    assert train.groupby("surface")["acc_y_std"].mean().sort_values().index.tolist() == [
        "carpet",
        "concrete",
        "wood",
        "tiles",
    ]


def test_many_rows_per_submitted_id_become_one_row_per_id(fetched):
    """train.csv and test.csv of one row per item bought, many per trip, the trip's kind on each train row; the
    sample one row per trip, no table of one row per trip: each split aggregated to one row per trip (the items'
    count, sums and means, the most frequent shelf, its distinct shelves, each shelf's count), the kind per trip."""
    ws, _ = fetched("items-per-trip")
    a = analyse(ws)
    assert (a.train, a.test, a.test_id, a.n_train, a.n_test) == (
        "raw/train_per_Trip.csv",
        "raw/test_per_Trip.csv",
        "Trip",
        240,
        80,
    )
    assert [t.column for t in a.targets] == ["TripKind"]
    items = pd.read_csv(ws / "raw" / "train.csv")
    train = pd.read_csv(ws / "raw" / "train_per_Trip.csv").set_index("Trip")
    first = items[items["Trip"] == train.index[0]]
    assert train["rows"].iloc[0] == len(first) and train["Count_sum"].iloc[0] == first["Count"].sum()
    assert train["Day"].iloc[0] == first["Day"].iloc[0] and train["TripKind"].iloc[0] == first["TripKind"].iloc[0]
    assert train["Shelf_distinct"].iloc[0] == first["Shelf"].nunique()
    assert train["Shelf=DAIRY_count"].iloc[0] == (first["Shelf"] == "DAIRY").sum()
    # the counts carry the label: a grocery trip's items are mostly on grocery shelves
    assert train.groupby("TripKind")["Shelf=DAIRY_count"].mean().idxmax() == "grocery"
    test = pd.read_csv(ws / "raw" / "test_per_Trip.csv")
    sample = pd.read_csv(ws / "raw" / "sample_submission.csv")
    assert sorted(test["Trip"]) == sorted(sample["Trip"]) and "TripKind" not in test.columns


def test_a_category_is_counted_per_key_in_each_value_of_enough_rows_beyond_the_twentieth():
    """A trip's items on 40 shelves, the trip's kind told by the rarest of the regular shelves: each shelf of
    COUNTED_ROWS rows or more is counted per trip, the shelves seen on fewer rows are not."""
    rng = np.random.default_rng(0)
    shelves = [f"s{i:02d}" for i in range(40)]
    weights = np.linspace(2.0, 1.0, 40)
    rows = []
    for trip in range(300):
        kind = trip % 2
        picks = rng.choice(40, 6, p=weights / weights.sum())
        picks[0] = 39 if kind else picks[0]  # the rarest regular shelf marks a kind
        rows += [{"Trip": str(trip), "Shelf": shelves[k], "Kind": str(kind)} for k in picks]
    rows += [{"Trip": "0", "Shelf": f"rare{i}", "Kind": "0"} for i in range(3)]  # seen on one row each
    items = pd.DataFrame(rows)
    train, test = aggregate_per_key(
        items[items["Trip"].astype(int) < 240], items[items["Trip"].astype(int) >= 240].drop(columns="Kind"), "Trip"
    )
    counted = sorted(c for c in train.columns if c.endswith("_count"))
    assert counted == sorted(f"Shelf={s}_count" for s in shelves) and list(test.columns) == [
        c for c in train.columns if c != "Kind"
    ]
    assert train.groupby("Kind")["Shelf=s39_count"].mean().idxmax() == "1"
    assert train["Shelf=s39_count"].sum() == (items[items["Trip"].astype(int) < 240]["Shelf"] == "s39").sum()


def test_numbers_with_thousands_separators_and_na_tokens_are_read_as_numbers(fetched):
    ws, _ = fetched("missing-and-thousands")
    a = analyse(ws)
    assert sorted(a.numeric_text) == ["income", "x2"]
    raw = pd.read_csv(ws / "raw" / "train.csv", dtype=str, keep_default_na=False)
    train = run_map(ws, "train", a)
    assert pd.api.types.is_numeric_dtype(train["income"]) and pd.api.types.is_numeric_dtype(train["x2"])
    assert train["income"].iloc[0] == float(raw["income"].iloc[0].replace(",", ""))
    assert train["x2"].isna().sum() == raw["x2"].str.lower().isin(["na", ""]).sum() > 0


def test_semicolon_csvs_with_decimal_commas_become_plain_copies_and_the_users_files_stay(fetched, fixtures):
    ws, _ = fetched("semicolon-decimal-comma")
    source = fixtures("semicolon-decimal-comma") / "public" / "train.csv"
    original = source.read_text()
    assert original.splitlines()[0] == "id;x1;x2;colour;target"
    assert re.search(r";-?\d+,\d+;", original.splitlines()[1])  # a number with a decimal comma: "0,1257"
    copy = ws / "raw" / "train.csv"
    assert not copy.is_symlink() and copy.read_text().splitlines()[0] == "id,x1,x2,colour,target"
    ours, theirs = pd.read_csv(copy), pd.read_csv(source, sep=";", decimal=",")
    pd.testing.assert_frame_equal(ours, theirs)  # every number as the spreadsheet meant it
    assert source.read_text() == original
    a = analyse(ws)
    assert a.features == ["x1", "x2", "colour"] and [t.column for t in a.targets] == ["target"]
    assert pd.api.types.is_float_dtype(run_map(ws, "train", a)["x1"])


def test_json_fields_holding_lists_and_records_are_read_as_text(fetched):
    ws, _ = fetched("json-nested-fields")
    raw = json.loads((ws / "raw" / "train.json").read_text())
    table = read_table(ws / "raw" / "train.json", dtype=str)  # raised "truth value of an empty array" before
    assert table["forums"].tolist() == [" ".join(r["forums"]) for r in raw]
    assert json.loads(table["flair"].iloc[0]) == raw[0]["flair"]
    a = analyse(ws)
    assert {"forums", "flair", "account_age_days"} <= set(a.features) | set(a.text_columns)
    assert "upvotes_at_retrieval" not in a.features  # known only after the outcome: not in test.json
    train = run_map(ws, "train", a)
    assert len(train) == len(raw) and train["forums"].notna().sum() == sum(bool(r["forums"]) for r in raw)


def test_image_layouts(fetched):
    ws, _ = fetched("class-folders-spaces")
    a = analyse(ws)
    src = a.file_source("train", IMAGE.name)
    assert (src.folder, src.label) == ("raw/train", "folder")
    assert sorted(a.targets[0].classes) == ["golden retriever", "house cat", "red fox"]
    ws, _ = fetched("png-modes")
    a = analyse(ws)
    assert a.train == "raw/trainLabels.csv"
    assert (a.file_source("train", IMAGE.name).folder, a.file_source("train", IMAGE.name).ext) == ("raw/train", ".png")
    labels = pd.read_csv(ws / "raw" / "trainLabels.csv", dtype=str)
    train = run_map(ws, "train", a, IMAGE.name)  # the ids' leading zeros kept: 00042 names 00042.png
    assert list(train["path"]) == [f"raw/train/{i}.png" for i in labels["id"]] and labels["id"][0] == "00000"
    ws, _ = fetched("image-grades-qwk")  # grades of images in <split>_images/, scored by kappa: a value cut into grades
    a = analyse(ws)
    assert [(a.file_source(s, IMAGE.name).folder, a.file_source(s, IMAGE.name).column) for s in ("train", "test")] == [
        ("raw/train_images", "id_code"),
        ("raw/test_images", "id_code"),
    ]
    assert a.metric == "qwk" and [(t.kind, t.submit, t.classes) for t in a.targets] == [
        ("regression", "label", [0, 1, 2, 3, 4])
    ]


def test_a_folder_of_slices_per_sample_becomes_one_picture_of_three_of_them(fetched):
    """train/<Patient>/<n>.dcm: one RGB PNG per patient in train_series/ and test_series/, which the image map
    finds by the key column; a patient with the finding (a dense spot in the middle slices) shows it."""
    ws, _ = fetched("slices-per-patient")
    a = analyse(ws)
    assert [(a.file_source(s, IMAGE.name).folder, a.file_source(s, IMAGE.name).column) for s in ("train", "test")] == [
        ("raw/train_series", "Patient"),
        ("raw/test_series", "Patient"),
    ]
    train = pd.read_csv(ws / "raw" / "train.csv")
    spots = []
    for patient in train["Patient"]:
        with Image.open(ws / "raw" / "train_series" / f"{patient}.png") as img:
            pixels = np.asarray(img, dtype=float)
        assert pixels.shape == (24, 24, 3)
        spots.append(pixels.max() - np.median(pixels))
    assert roc_auc_score(train["finding"], spots) > 0.9
    why = json.loads((ws / "task" / "meta.json").read_text())["tables_why"]["normalised"]
    assert any(line.startswith("train_series/: 160 series of train/ (8 to 8 images") for line in why)


def test_slices_are_taken_in_number_order_and_class_folders_are_no_series(tmp_path):
    from tools.image_series import composite, series_folders

    raw = tmp_path / "raw"
    keys = [f"P{i:02d}" for i in range(12)]
    for k in keys:
        (raw / "train" / k).mkdir(parents=True)
        for n in range(1, 11):  # grey 20 n: as text, 10.png would come second
            Image.fromarray(np.full((8, 8), 20 * n, np.uint8)).save(raw / "train" / k / f"{n}.png")
    pd.DataFrame({"Patient": keys, "y": [0, 1] * 6}).to_csv(raw / "train.csv", index=False)
    pd.DataFrame({"Patient": keys, "y": 0}).to_csv(raw / "sample_submission.csv", index=False)
    found = series_folders(raw)
    assert list(found) == [raw / "train"] and sorted(found[raw / "train"]) == keys
    picture = composite(found[raw / "train"]["P00"])  # slices 3, 5 and 8 of 10: greys 60, 100, 160
    assert picture[0, 0].tolist() == [0, 102, 255]
    # folders named by a label that many rows share are classes, not one sample's series
    images = [f"x{i}" for i in range(12)]
    pd.DataFrame({"image": images, "Patient": keys[:6] * 2}).to_csv(raw / "train.csv", index=False)
    pd.DataFrame({"image": images, "Patient": keys[0]}).to_csv(raw / "sample_submission.csv", index=False)
    assert series_folders(raw) == {}


def test_dicom_scans_are_image_files_read_as_the_scanner_shows_them(fetched, tmp_path):
    """CT in Hounsfield units through its display window, an inverted (MONOCHROME1) X-ray, RLE and JPEG 2000: the
    map points at the .dcm files, they pass the map's unit test, and each decodes with its dense spot bright."""
    from tools.modality_img import ImageTransform
    from unit_tests_lib.media import check_image_map

    ws, meta = fetched("dicom-scans")
    a = analyse(ws)
    src = a.file_source("train", IMAGE.name)
    assert (src.folder, src.ext, src.column) == ("raw/train", ".dcm", "image_name")
    assert sorted(a.inputs) == sorted([TABULAR.name, IMAGE.name]) == sorted(["tab", "img"])
    train = run_map(ws, "train", a, IMAGE.name)
    labels = pd.read_csv(ws / "raw" / "train.csv")
    assert list(train["path"]) == [f"raw/train/{n}.dcm" for n in labels["image_name"]]
    check_image_map(ws, map_file(input_map_stage("train", IMAGE.name)), n_open=8)
    tf = ImageTransform(ws, 32)
    for encoding in range(4):  # scans are stored in the four encodings in turn: one with a finding, one without
        for finding in (0, 1):
            i = next(i for i in range(encoding, 160, 4) if labels["target"][i] == finding)
            grey = tf.pixels(train["path"][i])[..., 0].astype(float)
            rise = (grey.max() - np.median(grey)) / (np.median(grey) - grey.min())  # a dark spot would not rise
            assert rise > 2 if finding else rise < 1.5, (i, rise)
    bad = ws / "raw" / "train" / "broken.dcm"
    bad.write_bytes(b"not a scan")
    # a corrupt scan among good ones is the data's: read as a black image, with a warning naming it
    with pytest.warns(UserWarning, match=r"raw/train/broken.dcm in the .*: cannot read image \(not a DICOM file"):
        assert tf.pixels("raw/train/broken.dcm").max() == 0


def test_pixel_columns_of_a_table_become_images_named_by_position(fetched):
    ws, meta = fetched("pixel-csv")
    a = analyse(ws)
    assert (a.inputs, meta["modalities"]["inputs"]) == ([IMAGE.name], ["image"])
    assert (a.train, a.test, a.test_id, a.features) == (
        "raw/train_without_pixels.csv",
        "raw/test_without_pixels.csv",
        "ImageId",
        [],
    )
    assert a.file_source("test", IMAGE.name).folder == "raw/test_images"
    pixels = pd.read_csv(ws / "raw" / "train.csv").drop(columns="label").to_numpy()
    with Image.open(ws / "raw" / "train_images" / "3.png") as img:  # ImageId 3: the third row, 16 x 16 grey
        assert (np.asarray(img).ravel() == pixels[2]).all()


def test_an_array_per_sample_is_summarised_slice_by_slice_and_fanned_out_folders_count_as_one(tmp_path):
    """A per-sample array of a few slices (a cadence of spectrograms: 6 x 16 x 32) is summarised per slice too, so a
    faint line in one slice shows (its largest column mean), which the whole array's statistics drown; files spread
    over sub-folders of a few each (test/<c>/<id>.npy) are one folder of per-sample files."""
    rng = np.random.default_rng(0)
    for k in range(12):
        grid = rng.normal(size=(6, 16, 32))
        grid[2, :, 7] += 1.5 * (k % 2)  # a faint vertical line in slice 2 of every other sample
        folder = tmp_path / "test" / "abc"[k % 3]
        folder.mkdir(parents=True, exist_ok=True)
        np.save(folder / f"s{k}.npy", grid)
        split = tmp_path / "train" / ("a" if k < 10 else "b")  # ten in one sub-folder, two in another
        split.mkdir(parents=True, exist_ok=True)
        np.save(split / f"t{k}.npy", grid)
    found = {d.relative_to(tmp_path).as_posix(): len(f) for d, f in per_sample_folders(tmp_path).items()}
    assert found == {"test": 12, "train/a": 10, "train": 2}
    rows = [summary(tmp_path / "test" / "abc"[k % 3] / f"s{k}.npy") for k in range(12)]
    line = [r["slice2_line0_max"] for r in rows]
    assert min(line[1::2]) > max(line[::2])  # the samples with the line, apart from those without
    assert {f"slice{k}_std" for k in range(6)} <= set(rows[0]) and "slice6_std" not in rows[0]


def test_pixel_columns_are_told_from_other_numbered_columns():
    rng = np.random.default_rng(0)
    grey = pd.DataFrame(rng.integers(0, 256, (4, 256)), columns=[f"pixel{i}" for i in range(256)])
    assert pixel_columns(grey.assign(label=1)) == (list(grey.columns), 16, 16, 1)
    rgb = pd.DataFrame(rng.random((4, 768)), columns=[f"px_{i}" for i in range(1, 769)])  # fractions, 3 planes
    assert pixel_columns(rgb)[1:] == (16, 16, 3)
    assert pixel_columns(grey.iloc[:, :250]) is None  # 10 x 25 at best: a side under 16
    from scipy.ndimage import gaussian_filter

    smooth = [gaussian_filter(rng.random((24, 36)), 2) for _ in range(5)]  # 24 x 36 pictures, row by row
    pixels = np.stack([255 * (p - p.min()) / (p.max() - p.min()) for p in smooth]).round().reshape(5, -1)
    wide = pd.DataFrame(pixels.astype(int), columns=[str(i) for i in range(24 * 36)])
    assert pixel_columns(wide.assign(image_id="a"))[1:] == (24, 36, 1)  # not 36 x 24, nor 18 x 48
    assert pixel_columns(grey.iloc[:, :64]) is None  # 8 x 8: few enough to be tabular features
    assert pixel_columns(grey * 10) is None  # values beyond 0..255 are not pixels
    assert pixel_columns(grey.drop(columns="pixel7")) is None  # the running number has a gap
    features = pd.DataFrame(rng.normal(size=(4, 16)), columns=[f"f{i}" for i in range(16)])
    assert pixel_columns(features) is None
    groups = [pd.DataFrame(rng.random((4, 64)) / 10, columns=[f"{g}{i}" for i in range(1, 65)]) for g in "abc"]
    assert pixel_columns(pd.concat(groups, axis=1)) is None  # three feature groups of 64 fractions each


def test_a_folder_without_a_sample_submission_names_the_tables_it_found(fixtures, tmp_path):
    public = fixtures("camel-sample") / "public"
    folder = tmp_path / "comp"
    folder.mkdir()
    for name in ("train.csv", "test.csv", "description.md"):
        (folder / name).write_bytes((public / name).read_bytes())
    (folder / "predictions_format.csv").write_bytes((public / "sampleSubmission.csv").read_bytes())
    with pytest.raises(BadInput, match=r"no sample submission .*found the tables .*predictions_format.csv"):
        check_source(folder)


def test_sample_columns_that_repeat_test_inputs_are_copied_not_predicted(fetched):
    ws, _ = fetched("echo-with-id")
    a = analyse(ws)
    assert (a.id_col, a.submission_columns, a.echo) == ("id", ["target"], ["region"])
    ws, _ = fetched("echo-idless")  # Insult,Date,Comment: no id column, the free-text Comment is an input
    a = analyse(ws)
    assert (a.id_col, a.submission_columns, a.echo) == (None, ["Insult"], ["Date", "Comment"])
    assert a.text_columns == ["Comment"]


def test_sample_columns_read_off_the_tables():
    train = pd.DataFrame({"Insult": [0, 1], "Date": ["d1", "d2"], "Comment": ["a", "b"]})
    test = pd.DataFrame({"Date": ["d3"], "Comment": ["c"]})
    sample = pd.DataFrame({"Insult": [0], "Date": ["d3"], "Comment": ["c"]})
    assert sample_columns(sample, train, test) == SampleColumns(None, ["Insult"], ["Date", "Comment"])
    plain = pd.DataFrame({"id": [3], "y": [0]})
    assert sample_columns(plain, train.assign(id=[1, 2], y=0), test.assign(id=[3])) == SampleColumns("id", ["y"], [])
    placeholder = test.assign(id=[3], y=[None])  # a test table with an empty target column: still predicted
    assert sample_columns(plain, train.assign(id=[1, 2], y=0), placeholder).predicted == ["y"]


def test_class_folders_beside_a_table_of_other_columns_give_the_labels(fetched):
    ws, _ = fetched("split-label-folders-csv")
    a = analyse(ws)
    assert [t.column for t in a.targets] == ["diagnosis"] and a.targets[0].classes == ["benign", "malignant"]
    assert a.features == ["age"]
    src = a.file_source("train", IMAGE.name)
    assert (src.folder, src.column, src.by_name) == ("raw/train", "image_name", True)
    labels = pd.read_csv(ws / "raw" / "train_folder_labels.csv").set_index("image_name")["diagnosis"]
    some = next((ws / "raw" / "train" / "malignant").iterdir())
    assert labels[some.stem] == "malignant"


def test_of_tables_named_like_labels_beside_class_folders_the_train_table_is_the_one_with_the_test_inputs(tmp_path):
    # observations_labelled.csv holds the train rows' inputs, the labels lie in class sub-folders; the labels table
    # written from those folders sits higher and sorts first, and must not be taken for the train table
    rng = np.random.default_rng(0)
    ids = [f"s{i:03d}" for i in range(40)]
    for i in ids[:30]:
        folder = tmp_path / "train_images" / ("cat" if int(i[1:]) % 2 else "dog")
        folder.mkdir(parents=True, exist_ok=True)
        Image.fromarray(rng.integers(0, 255, (4, 4), dtype=np.uint8)).save(folder / f"{i}.png")
    data = tmp_path / "data"
    data.mkdir()
    rows = pd.DataFrame({"key": ids, "colour": rng.choice(["red", "blue"], 40), "count": rng.integers(0, 9, 40)})
    rows[:30].to_csv(data / "observations_labelled.csv", index=False)
    rows[30:].to_csv(data / "observations_unlabelled.csv", index=False)
    pd.DataFrame({"key": ids[30:], "kind": "cat"}).to_csv(tmp_path / "sample_submission.csv", index=False)
    pd.DataFrame({"key": ids[:30], "kind": "cat"}).to_csv(tmp_path / "train_labels.csv", index=False)
    tables = find(tmp_path)
    assert tables.paths["train"] == data / "observations_labelled.csv"
    assert tables.paths["test"] == data / "observations_unlabelled.csv"
    assert tables.paths["labels"] == tmp_path / "train_labels.csv"


@pytest.mark.parametrize(
    "name, features",
    [
        ("series-per-sample", {"rows", "acc_mean", "acc_std", "gyro_last"}),  # one series CSV per sample
        ("npy-per-sample", {"array_mean", "array_q90"}),  # one .npy array per sample
        ("npy-arrays", {"f0", "f7"}),  # X_train.npy, y_train.npy, X_test.npy
        ("json-bands", {"inc_angle"}),  # the bands become images
    ],
)
def test_per_sample_files_and_arrays_become_features(fetched, name, features):
    ws, meta = fetched(name)
    a = analyse(ws)
    assert features <= set(a.features)
    assert a.n_test == len(pd.read_csv(fixtures_answers(ws, meta)))
    if name == "json-bands":
        src = a.file_source("train", IMAGE.name)
        assert (src.folder, src.column, src.ext) == ("raw/train_images", "id", ".png")


def fixtures_answers(ws, meta):
    return Path(json.loads((ws / "task" / "meta.json").read_text())["source"]).parent / meta["answers"]


def test_rows_in_groups_the_test_set_does_not_share_are_split_by_group(fixtures):
    public = fixtures("grouped-rows") / "public"
    train, test = pd.read_csv(public / "train.csv"), pd.read_csv(public / "test.csv")
    assert group_column(train, test) == "episode_id"
    assert group_column(train, train) is None  # shared groups: rows are independent samples
    assert group_column(train.drop(columns=["episode_id", "row_id"]), test) is None


def test_a_metric_that_masks_rows_scores_only_the_rows_the_evaluation_text_names(fetched):
    ws, meta = fetched("grouped-masked")
    a = analyse(ws)
    assert (a.metric, a.metric_columns, a.scored_value) == (meta["metric"], ["valve_open"], 0.0)
    scope: dict = {}
    exec(metric_stage.expert(a, None).code, scope)  # the generated code_metric.py
    train = pd.read_csv(ws / a.train)
    truth = train[["pressure", "valve_open"]]
    off_unscored = truth[["pressure"]].where(train["valve_open"] == 0, train[["pressure"]] + 100.0)
    assert scope["metric"](truth, off_unscored) == 0.0  # errors on the unscored rows do not count
    assert scope["metric"](truth, truth[["pressure"]] + 1.0) == pytest.approx(1.0)
    said = "The expiratory phase is not scored: rows where valve_open is 1 are not scored."
    assert scored_rows(said, train[["valve_open", "time_step"]]) == ("valve_open", 0.0)


def test_one_hot_classes_scored_column_wise_score_each_class_column(fetched):
    """Classes given as one-hot columns, scored by the mean AUC of the columns (a leaf-disease layout, train and test
    images in one folder): the generated metric scores each class as 0/1 (it raised on the class codes before)."""
    ws, meta = fetched("shared-folder-onehot")
    a = analyse(ws)
    (t,) = a.targets
    assert (a.metric, t.onehot, t.columns) == ("mean_columnwise_auc", True, ["healthy", "mixed", "rust", "scab"])
    assert a.file_source("train", IMAGE.name).folder == a.file_source("test", IMAGE.name).folder == "raw/images"
    scope: dict = {}
    exec(metric_stage.expert(a, None).code, scope)
    train = pd.read_csv(ws / a.train)
    onehot = train[t.columns].to_numpy()
    truth = pd.DataFrame({t.column: np.array(t.columns)[onehot.argmax(axis=1)]})
    guess = pd.DataFrame(np.random.default_rng(0).random(onehot.shape), columns=t.columns)
    expected = np.mean([roc_auc_score(onehot[:, j], guess.iloc[:, j]) for j in range(onehot.shape[1])])
    assert scope["metric"](truth, guess) == pytest.approx(expected)
    assert scope["metric"](truth, pd.DataFrame(onehot, columns=t.columns)) == 1.0


def test_a_layout_in_a_format_agentk_cannot_read_is_refused_naming_it(fixtures):
    with pytest.raises(
        BadInput, match=r"^unsupported task: the train data in .* is train.h5, a format agentk does not"
    ):
        check_source(fixtures("hdf5-only") / "public")


@pytest.mark.slow  # a full setup (30 s); the examples' setups and tests/test_setup_examples.py's awkward layout cover a whole setup by default
def test_the_titanic_layout_sets_up(fixtures, tmp_path):
    folder = fixtures("gender-submission")
    proc = agentk("setup", folder / "public", "--workspace", tmp_path / "ws", "--policy", "expert")
    assert proc.returncode == 0, proc.stderr[-2000:]
    sub = pd.read_csv(tmp_path / "ws" / "submission.csv")
    answers = pd.read_csv(folder / "private" / "answers.csv")
    assert list(sub.columns) == ["person_ref", "outcome"]
    assert (sub.set_index("person_ref")["outcome"] == answers.set_index("person_ref")["outcome"]).mean() > 0.7


def test_class_folders_wrapped_in_one_folder_of_the_train_split_are_a_listing():
    """train/images/<class>/x.png (or train/audio/<word>/, once pictured): the one folder train/ wraps everything
    in is listed by class; two folders side by side under train/ are not one listing."""
    from agentk.competition.file_inputs import listing_source

    files = {f"raw/train/images/{c}/{c}{i}.png" for c in ("cat", "dog") for i in range(6)}
    src = listing_source(IMAGE.name, files)
    assert (src.folder, src.label) == ("raw/train/images", "folder")
    named = {f"raw/train/images/{c}.{i}.png" for c in ("cat", "dog") for i in range(6)}
    assert (listing_source(IMAGE.name, named).folder, listing_source(IMAGE.name, named).label) == (
        "raw/train/images",
        "name",
    )
    two = files | {f"raw/train/masks/{c}/{c}{i}.png" for c in ("cat", "dog") for i in range(6)}
    assert listing_source(IMAGE.name, two) is None


def test_a_label_at_the_end_of_the_name_after_an_id_is_a_listing():
    """20090328_000000_TRAIN7_1.aif: the name's last part before its first dot labels it, where the parts before
    it tell every file apart; a clip's picture (….aif.png) reads as its clip. A running number is no label."""
    from agentk.competition.file_inputs import listing_source, name_label

    files = {f"raw/train2/20090328_{i:06d}_TRAIN{i}_{i % 3 % 2}.aif.png" for i in range(30)}
    src = listing_source(IMAGE.name, files)
    assert (src.folder, src.label) == ("raw/train2", "suffix")
    assert name_label("20090328_000100_TRAIN7_1.aif.png", "suffix") == "1"
    assert name_label("plain.png", "suffix") is None and name_label("cat.7.png") == "cat"
    numbered = {f"raw/train/img_{i:04d}.png" for i in range(30)}  # ids, labelled elsewhere
    assert listing_source(IMAGE.name, numbered) is None
    shared = {f"raw/train/scan_{i % 10}_{i % 3 % 2}.png" for i in range(30)}  # no id before the label
    assert listing_source(IMAGE.name, shared) is None
    assert listing_source(IMAGE.name, {f.replace("_TRAIN", "-TRAIN") for f in files}).label == "suffix"


def test_a_listing_frame_reads_the_labels_the_generated_code_reads(tmp_path):
    from agentk.competition.file_inputs import FileSource, listing_frame

    folder = tmp_path / "raw" / "train2"
    folder.mkdir(parents=True)
    for i in range(12):
        (folder / f"2009_{i:03d}_TRAIN{i}_{i % 2}.aif.png").write_bytes(b"")
    frame = listing_frame(tmp_path, FileSource(IMAGE.name, "raw/train2", label="suffix"), "probability")
    assert list(frame["probability"]) == [str(int(name.split("_")[-1][0])) for name in frame["id"]]


def test_pixel_tables_in_parts_beside_the_label_table_become_one_picture_per_key(fetched):
    """train_image_data_<n>.parquet (image_id, then one column per pixel of a 24 x 36 picture) beside train.csv:
    one PNG per image_id in train_image_data_images/, which the image map finds by the key; the tables set aside."""
    ws, _ = fetched("pixel-parts-components")
    stand_ins = json.loads((ws / "raw" / "stand_ins.json").read_text())
    assert {k: v for k, v in stand_ins.items() if k.endswith(".parquet")} == {
        "train_image_data_0.parquet": "train_image_data_images/",
        "train_image_data_1.parquet": "train_image_data_images/",
        "test_image_data_0.parquet": "test_image_data_images/",
    }
    a = analyse(ws)
    assert [(a.file_source(s, IMAGE.name).folder, a.file_source(s, IMAGE.name).column) for s in ("train", "test")] == [
        ("raw/train_image_data_images", "image_id"),
        ("raw/test_image_data_images", "image_id"),
    ]
    assert a.features == [] and not a.joins  # no pixel joined as a feature
    pixels = pd.read_parquet(ws / "raw" / "train_image_data_1.parquet").set_index("image_id")
    key = pixels.index[3]
    with Image.open(ws / "raw" / "train_image_data_images" / f"{key}.png") as img:
        assert img.size == (36, 24) and (np.asarray(img).ravel() == pixels.loc[key].to_numpy()).all()


def test_the_report_says_which_table_each_joined_feature_came_from(fetched):
    """The train map's expert records its joins in joins.json; the report and the solve's features.json read it."""
    from agentk import report
    from agentk.solve.solver import _joins_of
    from agentk.workspace import Workspace

    ws, _ = fetched("one-to-many")
    assert report._joins(Workspace(ws)) == ""  # no map written yet: nothing joined
    run_map(ws, "train", analyse(ws))
    html = report._joins(Workspace(ws))
    assert "Tables joined to train and test" in html and "transactions.csv" in html
    assert "transactions_count" in html and "transactions_amount_max" in html
    assert {c for j in _joins_of(Workspace(ws)) for c in j["columns"]} >= {"transactions_count"}
    ws, _ = fetched("labels-file")
    run_map(ws, "train", analyse(ws))
    assert "train_labels.csv" in report._joins(Workspace(ws))  # the labels table: its target column


def test_a_long_train_signal_is_cut_into_windows_shaped_like_the_test_segments(fetched):
    """train.csv is one recording; each test sample a 400-row segment file. The recording becomes 300 windows of 400
    rows, summarised as the segments are, each labelled by the time to failure at its last row."""
    ws, _ = fetched("signal-cut-into-segments")
    raw = ws / "raw"
    stand_ins = json.loads((raw / "stand_ins.json").read_text())
    assert stand_ins["train.csv"] == "train_windows.csv"
    assert {v for k, v in stand_ins.items() if k.startswith("test/")} == {"test_windows.csv"}
    train, test = pd.read_csv(raw / "train_windows.csv"), pd.read_csv(raw / "test_windows.csv")
    signal = pd.read_csv(raw / "train.csv")
    assert len(train) == len(signal) // 400 == 300
    assert train["time_to_failure"].iloc[2] == signal["time_to_failure"].iloc[3 * 400 - 1]
    assert train["acoustic_data_std"].iloc[2] == pytest.approx(signal["acoustic_data"].iloc[800:1200].std())
    sample = pd.read_csv(raw / "sample_submission.csv")
    assert set(test["seg_id"]) == set(sample["seg_id"]) and list(train.columns[1:-1]) == list(test.columns[1:])
    assert not (raw / "file_summaries.csv").exists()  # the segments are summarised once
    a = analyse(ws)
    assert a.train == "raw/train_windows.csv" and a.test == "raw/test_windows.csv"
    assert [t.column for t in a.targets] == ["time_to_failure"] and "acoustic_data_std" in a.features
