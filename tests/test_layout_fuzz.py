"""The layout fuzzer (testing/layout_fuzz.py): its layouts are what they say, and a real setup of a few
seeds recovers their truth (benchmarks/layout_fuzz.py runs hundreds). The judge itself is checked to fail a
workspace that got the truth wrong."""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from conftest import agentk

from agentk.competition.dataview import spelling
from agentk.policies.analysis import analyse
from stages.fetch import fetch_local
from testing.layout_fuzz import SIGNAL_LENGTH, TRANSFORMS, _label_set, build, draw, judge, same_picture, same_views


def test_the_draws_cover_every_transformation_and_are_seeded():
    seen = Counter(t for seed in range(300) for t in draw(seed)[1])
    assert set(seen) == set(TRANSFORMS)
    assert draw(17) == draw(17)


def test_a_layout_is_written_as_drawn_and_its_truth_matches_its_files(tmp_path):
    for seed in (0, 3, 9):
        truth = build(seed, tmp_path / str(seed))
        again = build(seed, tmp_path / f"{seed}-again")
        assert truth == again  # seeded: the same layout twice
        public = tmp_path / str(seed) / "public"
        folders = [f for f in truth.files.values() if f.endswith("/")]  # a partitioned table: its parts inside
        written = {p.relative_to(public).as_posix() for p in public.rglob("*") if p.is_file()}
        written = {next((f for f in folders if w.startswith(f)), w) for w in written}
        assert written - {"description.md"} == set(truth.files.values())
        answers = pd.read_csv(tmp_path / str(seed) / "private" / "answers.csv", dtype=str)
        assert answers.iloc[:, 0].tolist() == truth.test_ids
        assert set(truth.target) == set(truth.train_ids) and not set(truth.train_ids) & set(truth.test_ids)
        description = (public / "description.md").read_text()
        assert all(f in description for f in truth.files.values())


def test_per_sample_files_hold_readings_whose_mean_is_the_input(tmp_path):
    """side:per-sample-files (seed 606): x2 leaves the tables; each sample's file, named by its id, holds a few
    readings whose mean is its x2."""
    truth = build(606, tmp_path)
    assert "side:per-sample-files" in truth.transforms
    folder = tmp_path / "public" / truth.files["readings"]
    means = {p.stem: pd.read_csv(p).iloc[:, 0].mean() for p in folder.glob("*.csv")}
    assert set(means) == set(truth.train_ids) | set(truth.test_ids)
    assert all(abs(means[i] - v) < 1e-9 for i, v in truth.features["x2"].items())
    train = pd.read_csv(tmp_path / "public" / truth.files["train"])
    assert not any(
        train[c].astype(str).tolist() == [str(truth.features["x2"][i]) for i in truth.train_ids] for c in train.columns
    )  # x2 is in no table


def test_media_layouts_hold_a_picture_per_sample_and_a_free_text_column(tmp_path):
    """media:images (seed 393, split folders): x2 leaves the tables for one picture per sample, named by its id, whose
    mean grey level the truth records, the test pictures in a folder of their own; the judge opens the pictures a
    map column points to and fails a column that points to other samples'. media:text (seed 3): a column of notes,
    one per row, the colour among their words."""
    truth = build(393, tmp_path / "7")
    assert {"media:images", "media:split-folders"} <= set(truth.transforms) and "x2" not in truth.features
    public = tmp_path / "7" / "public"
    train_pictures = {p.stem: p for p in (public / truth.files["images"]).glob("*.png")}
    assert set(train_pictures) == set(truth.train_ids)
    assert {p.stem for p in (public / truth.files["test_images"]).glob("*.png")} == set(truth.test_ids)
    levels = pd.Series([truth.features["image"][i] for i in truth.train_ids])
    paths = pd.Series([str(train_pictures[i]) for i in truth.train_ids])
    assert same_picture(paths, levels, tmp_path)
    assert not same_picture(paths[::-1].reset_index(drop=True), levels, tmp_path)
    clips = build(36, tmp_path / "36")  # media:audio: x2 as the pitch of one clip per sample
    assert "media:audio" in clips.transforms and "x2" not in clips.features
    assert {p.stem for p in (tmp_path / "36" / "public" / clips.files["clips"]).glob("*.wav")} == set(
        clips.train_ids
    ) | set(clips.test_ids)
    notes = build(5, tmp_path / "5")  # media:text-files: the notes in a text file per sample, in no table
    assert "media:text-files" in notes.transforms
    folder = tmp_path / "5" / "public" / notes.files["notes"]
    assert {p.stem for p in folder.glob("*.txt")} == set(notes.train_ids) | set(notes.test_ids)
    assert all((folder / f"{i}.txt").read_text() == text for i, text in notes.features["note"].items())
    texts = build(3, tmp_path / "3")
    assert "media:text" in texts.transforms
    notes = list(texts.features["note"].values())
    assert len(set(notes)) == len(notes) and all(
        any(c in n.split() for c in ("red", "green", "blue", "amber")) for n in notes
    )


def test_tables_in_other_encodings_and_zips_in_an_archive(tmp_path):
    """format:encoding (seed 65): CSVs in a legacy encoding, the colours spelt with letters UTF-8 writes otherwise.
    archive:nested (seed 13): every table in a zip of its own, the zips in one archive, nothing else left loose."""
    truth = build(65, tmp_path / "22")
    train = (tmp_path / "22" / "public" / truth.files["train"]).read_bytes()
    try:  # no plain UTF-8: another encoding, or UTF-8 after a byte-order mark
        assert train.decode("utf-8").startswith("\ufeff")
    except UnicodeDecodeError:
        pass
    assert set(truth.features["colour"].values()) == {"rojo-ñ", "grün", "blå", "ámbar"}
    nested = build(13, tmp_path / "13")
    public = tmp_path / "13" / "public"
    assert {p.name for p in public.iterdir()} == {"description.md", nested.files["archive"]}
    with zipfile.ZipFile(public / nested.files["archive"]) as z:
        inner = sorted(z.namelist())
        assert all(name.endswith(".zip") for name in inner)
        with zipfile.ZipFile(io.BytesIO(z.read(inner[0]))) as one:
            assert one.namelist() == [inner[0].removesuffix(".zip")]
    assert f"{nested.files['sample']}.zip" in inner


def test_a_ranked_sample_lists_every_class_and_the_answers_one(tmp_path):
    """sample:ranked (seed 19): the sample's one column ranks the three classes, MAP@3 scores it, the answers hold
    each row's class."""
    truth = build(19, tmp_path / "19")
    public, private = tmp_path / "19" / "public", tmp_path / "19" / "private"
    sample = pd.read_csv(public / truth.files["sample"])
    assert sample.iloc[:, 1].str.split().map(sorted).map(tuple).unique().tolist() == [tuple(sorted(truth.classes))]
    answers = pd.read_csv(private / "answers.csv")
    assert set(answers.iloc[:, 1]) <= set(truth.classes) and "MAP@3" in (public / "description.md").read_text()


def test_a_long_signal_holds_the_train_windows_in_order_and_each_test_segment_is_a_file(tmp_path):
    """signal:long (seed 18): train is one table of windows of SIGNAL_LENGTH rows one after another, the target on
    every row, each window's readings centred on its x1 and x2; each test sample is a segment file named by its id."""
    truth = build(18, tmp_path / "18")
    public = tmp_path / "18" / "public"
    signal = pd.read_parquet(public / truth.files["train"])
    windows = [signal.iloc[k * SIGNAL_LENGTH : (k + 1) * SIGNAL_LENGTH] for k in range(len(truth.train_ids))]
    assert len(signal) == len(truth.train_ids) * SIGNAL_LENGTH
    for w, window in zip(truth.train_ids, windows):
        assert window.iloc[:, 2].nunique() == 1 and window.iloc[-1, 2] == truth.target[w]
        assert window.iloc[:, 0].mean() == pytest.approx(truth.features["x1"][w], abs=1e-9)
    segments = sorted((public / truth.files["test"]).glob("*.csv"))
    assert [p.stem for p in segments] == sorted(truth.test_ids)
    assert all(len(pd.read_csv(p)) == SIGNAL_LENGTH for p in segments[:5])


def test_views_are_several_pictures_per_sample_whose_mean_level_is_the_input(tmp_path):
    """media:views (seed 7): each sample has 4 pictures, <id>-<view>.png, each off the input's level by up to 50 and
    their mean exactly on it. The judge reads a cell of a sample's paths joined as agentk's image maps join them, as
    one mosaic, and passes it; any one view alone, or the views of other samples, fail."""
    truth = build(7, tmp_path / "7")
    assert "media:views" in truth.transforms and "views" in truth.features and "x2" not in truth.features
    folder = tmp_path / "7" / "public" / truth.files["images"]
    views = sorted({p.name[len(truth.train_ids[0]) :] for p in folder.glob(f"{truth.train_ids[0]}*.png")})
    assert len(views) == 4 and all(v.startswith("-") for v in views)
    levels = pd.Series([truth.features["views"][i] for i in truth.train_ids])
    cells = pd.Series(["|".join(str(folder / f"{i}{v}") for v in views) for i in truth.train_ids])
    assert same_views(cells, levels, tmp_path)
    assert not same_views(pd.Series([str(folder / f"{i}{views[0]}") for i in truth.train_ids]), levels, tmp_path)
    assert not same_views(cells[::-1].reset_index(drop=True), levels, tmp_path)
    assert not same_views(pd.Series(levels.astype(str)), levels, tmp_path)  # numbers are no pictures


def test_class_folders_hold_the_only_labels_and_setup_reads_them(tmp_path):
    """target:folders: the train pictures sit in one folder per class, named by it, and no table has the target.
    Seed 133 submits a probability per class (and one for a class no train row has): the folders' labels become a
    label column whose classes the sample's columns name. Seed 43 names no table train or test, beside the picture
    folders for train and test: the test table is the one holding the sample's ids, its inputs kept."""
    truth = build(133, tmp_path / "133")
    public = tmp_path / "133" / "public"
    assert "target:folders" in truth.transforms and "labels" not in truth.files
    by_folder = {p.stem: p.parent.name for p in (public / truth.files["images"]).glob("*/*.png")}
    assert by_folder == {i: str(truth.target[i]) for i in truth.train_ids}
    train = pd.read_csv(public / truth.files["train"], dtype=str)
    train = train.set_index(train.columns[0])
    assert not any(train[c].tolist() == [str(truth.target[i]) for i in train.index] for c in train.columns)
    a = analysed(tmp_path, public, "ws133")
    (target,) = a.targets
    assert (target.column, target.submit) == ("label", "proba_columns")
    assert target.named == {c: f"outcome_{c}" for c in ("low", "mid", "high")}

    other = build(43, tmp_path / "43")
    assert "names:other" in other.transforms and "test_images" in other.files
    a = analysed(tmp_path, tmp_path / "43" / "public", "ws43")
    assert a.test == f"raw/{other.files['test']}" and {"colour", "count"} <= set(a.features)


def test_class_tables_hold_the_only_labels_and_setup_reads_them(tmp_path):
    """target:class-tables: the train rows sit in one table per class, named by it, and no table has the target.
    Seed 2043 (train_low.jsonl beside train_mid and train_high) submits a probability per class: the tables' classes
    become a label column, `outcome`, whose classes the sample's columns name. Seed 2016 keeps them in a folder of
    their own (train/0.json, train/1.json), beside an older test set, and the sample names the target otherwise:
    the label column takes the sample's name, the classes as numbers."""
    truth = build(2043, tmp_path / "2043")
    public = tmp_path / "2043" / "public"
    classes = {r.split(":", 1)[1]: f for r, f in truth.files.items() if r.startswith("class:")}
    assert set(classes) == {"low", "mid", "high"} and "train" not in truth.files
    for cls, f in classes.items():
        ids = pd.read_json(public / f, lines=True, dtype=False).iloc[:, 0].astype(str)
        assert {truth.target[i] for i in ids} == {cls}
    a = analysed(tmp_path, public, "ws2043")
    (target,) = a.targets
    assert (target.column, target.submit) == ("outcome", "proba_columns")
    assert target.named == {c: f"outcome_{c}" for c in ("low", "mid", "high")}

    other = build(2016, tmp_path / "2016")
    assert {"decoy:old-test", "sample:renamed"} <= set(other.transforms) and other.files["class:0"].startswith("train/")
    a = analysed(tmp_path, tmp_path / "2016" / "public", "ws2016")
    submitted = pd.read_csv(tmp_path / "2016" / "public" / other.files["sample"], nrows=1).columns[1]
    assert [t.column for t in a.targets] == [submitted] and a.test.endswith("test.json")


def test_label_sets_are_submitted_in_one_column_or_one_0_1_column_per_label(tmp_path):
    """target:label-sets: each row's set of labels in one train column. Seed 2013 submits the set in one column:
    a multi-label target scored by the mean F2 of the sets. Seed 2103 submits one 0/1 column per label, named with
    the target's name before it, and keeps the sets in a labels table, beside a table linking every sample (test's
    too) to a code: the labels table is the one holding train's keys alone, and each label becomes a binary target.
    The judge compares sets, not their spelling, and fails a set that lost a label."""
    truth = build(2013, tmp_path / "2013")
    assert truth.kind == "multilabel" and max(len(str(v).split()) for v in truth.target.values()) >= 2
    a = analysed(tmp_path, tmp_path / "2013" / "public", "ws2013")
    assert [(t.kind, t.submit) for t in a.targets] == [("multilabel", "label_set")] and a.metric == "f2_samples"
    assert _label_set("low vivid") == _label_set("vivid,low") != _label_set("low")

    other = build(2103, tmp_path / "2103")
    assert {"labels-file", "side:chain"} <= set(other.transforms)
    sample = pd.read_csv(tmp_path / "2103" / "public" / other.files["sample"])
    assert list(sample.columns[1:]) == [f"outcome_{c}" for c in other.classes]
    a = analysed(tmp_path, tmp_path / "2103" / "public", "ws2103")
    assert [t.column for t in a.targets] == list(sample.columns[1:]) and {t.kind for t in a.targets} == {"binary"}
    assert a.metric == "mean_columnwise_auc"


def test_labels_in_the_train_pictures_names_beside_their_ids(tmp_path):
    """target:file-names: each train picture is named by its class and its id (seed 4037: <class>.<id>.png, ids
    prefixed ID_), the test's by their id alone, and no table has the target. The labels are read off the names
    beside the train table's ids (not the names' shape), and the pictures are linked by their id alone, so that the
    image maps find train's and test's alike."""
    truth = build(4037, tmp_path / "4037")
    public = tmp_path / "4037" / "public"
    names = sorted(p.stem for p in (public / truth.files["images"]).glob("*.png"))
    assert all(n.split(".", 1)[1] in truth.target for n in names)
    assert {n.split(".", 1)[0] for n in names} == {str(c) for c in truth.classes}
    a = analysed(tmp_path, public, "ws4037")
    (target,) = a.targets
    assert target.kind == truth.kind
    linked = tmp_path / "ws4037" / "raw" / f"{Path(truth.files['images']).name}_by_id"
    assert sorted(p.stem for p in linked.iterdir()) == sorted(truth.train_ids)
    for p in list(linked.iterdir())[:5]:
        assert p.resolve().name == f"{truth.target[p.stem]}.{p.stem}.png"


def test_two_train_tables_per_split_are_joined_each_to_its_own_rows(tmp_path):
    """split:two-train-tables: x2 and colour sit in a second, shorter-named table per split (train_ext.jsonl beside
    train_records.jsonl, test_info.jsonl beside test_records.jsonl), keyed by the id, holding some of the split's
    rows. The train table is the one holding the target and the test's columns, not the shorter name; each smaller
    table is joined to its own split's rows, and the rows it lacks keep their values missing."""
    truth = build(63, tmp_path / "63")
    assert "split:two-train-tables" in truth.transforms
    public = tmp_path / "63" / "public"
    train_side = pd.read_json(public / truth.files["train_side"], lines=True, dtype=False)
    test_side = pd.read_json(public / truth.files["test_side"], lines=True, dtype=False)
    assert set(train_side["id"].astype(str)) < set(truth.train_ids)  # some of the split's rows, not all
    assert set(test_side["id"].astype(str)) < set(truth.test_ids)
    assert len(truth.files["train_side"]) < len(truth.files["train"])  # the names would choose the side table
    held = {i for i, v in truth.features["x2"].items() if v is not None}
    assert held == set(train_side["id"].astype(str))
    a = analysed(tmp_path, public, "ws63")
    assert a.train == f"raw/{truth.files['train']}" and {"x1", "x2", "colour", "count"} <= set(a.features)
    assert sorted((j.table, j.splits[0]) for j in a.joins) == [
        (f"raw/{truth.files['test_side']}", "test"),
        (f"raw/{truth.files['train_side']}", "train"),
    ]
    options = next(d for d in a.decisions.items if d.name == "train_table").options
    assert [o.value for o in options] == [truth.files["train"], truth.files["train_side"]]


def test_test_columns_spelled_otherwise_are_train_inputs(tmp_path):
    """columns:test-spelling: the test table spells some inputs otherwise (case, separators): each is read under
    train's name, an input of both. Seed 123 respells them in the test's side table of split:two-train-tables too,
    whose columns are joined under train's names."""
    truth = build(41, tmp_path / "41")
    assert {"columns:test-spelling", "names:other"} <= set(truth.transforms)  # the values place train and test
    public = tmp_path / "41" / "public"
    test_cols = set(pd.read_json(public / truth.files["test"], lines=True, nrows=1).columns)
    train_cols = set(pd.read_json(public / truth.files["train"], lines=True, nrows=1).columns)
    respelled = test_cols - train_cols
    assert respelled and all(any(spelling(c) == spelling(t) for t in train_cols) for c in respelled)
    a = analysed(tmp_path, public, "ws41")
    assert set(a.test_renamed) == respelled and all(spelling(k) == spelling(v) for k, v in a.test_renamed.items())
    assert set(a.test_renamed.values()) <= set(a.features) | set(a.text_columns)

    other = build(123, tmp_path / "123")
    assert {"columns:test-spelling", "split:two-train-tables"} <= set(other.transforms)
    a = analysed(tmp_path, tmp_path / "123" / "public", "ws123")
    test_join = next(j for j in a.joins if j.splits == ["test"])
    train_join = next(j for j in a.joins if j.splits == ["train"])
    assert test_join.columns == train_join.columns and len(train_join.columns) == 2
    assert set(train_join.columns) <= set(a.features)
    assert test_join.rename or a.test_renamed  # something is respelled: in the side table, or in the main one


def test_a_larger_decoy_table_named_as_train_is_not_the_train_table(tmp_path):
    """decoy:larger-table: a table named as train, with a shorter name than the real one, more rows, other ids and a
    target-like column the sample does not score: the train table is the one holding the sample's column, and the
    decoy is the train table's second hypothesis."""
    truth = build(33, tmp_path / "33")
    assert "decoy:larger-table" in truth.transforms
    public = tmp_path / "33" / "public"
    assert len(truth.files["decoy_train"]) < len(truth.files["train"])
    a = analysed(tmp_path, public, "ws33")
    train, decoy = (truth.files[r].removesuffix(".zip") for r in ("train", "decoy_train"))  # fetch unzips them
    assert a.train == f"raw/{train}" and a.n_train == len(truth.train_ids)
    (target,) = a.targets
    assert target.column == pd.read_csv(public / truth.files["sample"], nrows=1).columns[1]
    options = next(d for d in a.decisions.items if d.name == "train_table").options
    assert [o.value for o in options] == [train, decoy]
    second = analyse(tmp_path / "ws33", {"train_table": 1})  # the search's next hypothesis reads the decoy
    assert second.train == f"raw/{decoy}" and second.n_train == 2 * len(truth.train_ids)


def analysed(tmp_path, public, name):
    ws = tmp_path / name
    ws.mkdir()
    fetch_local(public, ws)
    return analyse(ws)


@pytest.mark.parametrize("seed", [0, 37])
def test_setup_recovers_the_truth_of_a_layout(tmp_path, seed):
    """Seed 0: no table named train or test (values place them), odd column names, a 1:N table under another key
    name, gzip, a sample that names the target otherwise, a train-only column named like a target, an input carried
    by four pictures per sample (media:views, read as one). Seed 37: hex ids
    (some crash pandas) under another name, a labels table, a probability per class, one class no train row has
    (submitted at about 1/(n+1), not 0)."""
    dest, ws = tmp_path / "layout", tmp_path / "ws"
    truth = build(seed, dest)
    done = agentk("setup", dest / "public", "--workspace", ws, timeout=600)
    assert done.returncode == 0, (truth.transforms, done.stderr[-3000:])
    assert judge(ws, dest) == []

    wrong = tmp_path / "wrong"  # the judge fails a target map that lost a row's label
    shutil.copytree(ws, wrong, symlinks=True)
    target_map = pd.read_csv(wrong / "train_tab_target_map.csv", dtype=str)
    target_map.iloc[0, 1] = "12345.5"  # one row's target, wrong
    target_map.to_csv(wrong / "train_tab_target_map.csv", index=False)
    assert any("target" in p for p in judge(wrong, dest)), json.dumps(truth.transforms)
