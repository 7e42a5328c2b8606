"""The seeded data fuzz (testing/data_fuzz.py) in the default suite: a small fixed sample of its cases, each
a real `agentk setup` subprocess on a mutated copy of a bundled example, must exit 0, 1 or 2 within its time cap,
print no traceback, end a failure with one `agentk:` line and leave the user's folder as it was. The sample is
chosen to cost about two minutes; benchmarks/fuzz_data.py runs a thousand. The harness's own rules are checked
first, without a setup."""

from __future__ import annotations

import os

import pytest

from testing.data_fuzz import EXAMPLES, MUTATIONS, build_case, changes, judge, make_case, run_case, snapshot

# (seed, mutation, or None for the seed's own one or two): a case of each kind of damage, most of them stopped early
# as bad input (a few seconds each) and two set up to the end (about 20 s each on an idle machine)
SAMPLE: list[tuple[int, str | None]] = [
    (8, "ragged_rows"),  # an unterminated quote in wine's test.csv
    (10, "header_only"),  # wine's sample submission: its header, no newline
    (13, "truncated_archive"),  # diabetes' test.csv.zip cut in half
    (29, "deep_json"),  # docstring-library's train.json: objects 10,000 deep
    (245, "odd_encoding"),  # iris' test.csv: random bytes
    (24, None),  # odd_encoding + special_files: random bytes, a FIFO named like a table
    (25, None),  # huge_exponents + ragged_rows
    (200, None),  # truncated_archive + symlink_loops: a cut train.csv.gz, a -> ., loop1 <-> loop2, a link to it
    (1749, None),  # hex_ids (all digits but one e: 028e454608203890, the pandas segfault's) + symlink_loops: set up
    (2991, None),  # hex_ids + special_files: a FIFO named extra_features.csv beside iris' tables: set up
]


def test_every_mutation_builds_the_same_folder_from_its_seed(tmp_path):
    for name, m in MUTATIONS.items():
        seed = next(s for s in range(1000) if make_case(s, name).example != "digits-images" or len(m.examples) == 1)
        case = make_case(seed, name)
        assert case.mutations == (name,)
        notes = build_case(case, tmp_path / f"{name}-a")
        build_case(case, tmp_path / f"{name}-b")
        assert len(notes) == 1 and notes[0].startswith(name)
        a = snapshot(tmp_path / f"{name}-a")
        assert a == snapshot(tmp_path / f"{name}-b"), name
        assert a != snapshot(EXAMPLES / case.example), name


def test_seeds_cover_every_mutation_and_some_pairs():
    cases = [make_case(s) for s in range(200)]
    assert {c.mutations[0] for c in cases} | {m for c in cases for m in c.mutations} == set(MUTATIONS)
    pairs = [c for c in cases if len(c.mutations) == 2]
    assert 20 <= len(pairs) <= 60
    for c in pairs:  # at most one mutation that leaves a table unreadable, after the ones that read tables
        kinds = [MUTATIONS[m].kind for m in c.mutations]
        assert kinds.count("raw") <= 1 and kinds == sorted(kinds, key=("cells", "raw", "tree").index)


def test_the_snapshot_sees_links_and_pipes_without_following_or_opening_them(tmp_path):
    folder = tmp_path / "f"
    folder.mkdir()
    (folder / "train.csv").write_text("id,y\n1,2\n")
    (folder / "a").symlink_to(".")
    (folder / "loop1").symlink_to("loop2")
    (folder / "loop2").symlink_to("loop1")
    (folder / "gone").symlink_to("nowhere")
    os.mkfifo(folder / "pipe.csv")
    before = snapshot(folder)
    assert before["a"] == "link -> ." and before["loop1"] == "link -> loop2" and before["gone"] == "link -> nowhere"
    assert before["pipe.csv"].startswith("node ") and sorted(before) == [
        "a",
        "gone",
        "loop1",
        "loop2",
        "pipe.csv",
        "train.csv",
    ]
    (folder / "train.csv").write_text("id,y\n1,3\n")
    os.unlink(folder / "a")
    (folder / "a").symlink_to("..")
    (folder / "new").mkdir()
    said = changes(before, snapshot(folder))
    assert len(said) == 3 and "added 'new'" in said
    assert any(s.startswith("changed 'train.csv'") for s in said) and "changed 'a': link -> . -> link -> .." in said


@pytest.mark.parametrize(
    ("rc", "err", "failures"),
    [
        (0, "setup done\n", []),
        (2, "agentk: train.csv is empty: give it rows\n", []),
        (2, "agentk: warning: odd\nagentk: train.csv is empty\n", []),
        (-11, "", ["signal", "not-one-line"]),
        (139, "", ["signal", "not-one-line"]),
        (None, "", ["hang"]),
        (1, "Traceback (most recent call last):\nValueError: x\n", ["traceback", "not-one-line"]),
        (2, "agentk: one\nagentk: two\n", ["not-one-line"]),
        (2, "agentk: bad\nmore text\n", ["not-one-line"]),
        (3, "agentk: what\n", ["other exit"]),
    ],
)
def test_the_judge(rc, err, failures):
    assert judge(rc, "", err) == failures


# full setups of hex ids (30 s each) run with the slow tests: tests/test_crash.py sets hex ids up and checks their
# text by default, 200 reads symlink loops and 24 a FIFO named like a table
SLOW = {1749, 2991}


@pytest.mark.parametrize(
    ("seed", "mutation"),
    [pytest.param(s, m, marks=pytest.mark.slow) if s in SLOW else (s, m) for s, m in SAMPLE],
    ids=[make_case(s, m).label + f"-{s}" for s, m in SAMPLE],
)
def test_a_mutated_example_does_not_crash_setup(seed, mutation, tmp_path):
    result = run_case(make_case(seed, mutation), timeout=240, workdir=tmp_path)
    forced = f" --mutation {mutation}" if mutation else ""
    assert not result.failures, (
        f"{result.failures} ({result.outcome} in {result.seconds} s): {result.notes}\n"
        f"{result.detail}\n--- stderr ---\n{result.stderr_tail}\n"
        f"reproduce: uv run python benchmarks/fuzz_data.py --only-seed {seed}{forced} --keep"
    )


# ---- what the fuzz found, each fixed where it was -------------------------------------------------------------
def test_json_nested_too_deep_is_no_records(tmp_path):
    """seed 12 (deep_json): a metadata.json of lists 10,000 deep beside the tables raised RecursionError out of
    the unsupported-task check's JSON peek; a file nested too deep is not records."""
    from agentk.competition.support import _json_records

    for text in ("[" * 10_000 + "1" + "]" * 10_000, '{"a":' * 10_000 + "1" + "}" * 10_000):
        (tmp_path / "metadata.json").write_text(text)
        assert _json_records(tmp_path / "metadata.json") == []


def test_symlink_loops_in_the_folder_are_listed_not_followed(tmp_path):
    """seed 15 (symlink_loops): `a -> .` made the file tree recurse until stat failed with "Too many levels of
    symbolic links" (a traceback); a dangling link or a loop of two links has no size to show."""
    from agentk.competition.dataview import file_tree
    from agentk.competition.files import walk

    (tmp_path / "train.csv").write_text("id,y\n1,2\n")
    (tmp_path / "a").symlink_to(".")
    (tmp_path / "loop1").symlink_to("loop2")
    (tmp_path / "loop2").symlink_to("loop1")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "up").symlink_to("..")
    tree = file_tree(tmp_path)
    assert "a/ (a link to a folder above)" in tree and "loop1 (unreadable)" in tree and "train.csv (" in tree
    assert "up/ (a link to a folder above)" in tree
    assert sorted(p.relative_to(tmp_path).as_posix() for p in walk(tmp_path)) == ["loop1", "loop2", "train.csv"]


def test_a_column_named_by_ten_thousand_digits_is_no_pixel(tmp_path):
    """seed 4 (long_cells): a test.csv header of 10,000 digits stopped fetch with int()'s "Exceeds the limit (4300
    digits) for integer string conversion" (the pixel-column check read the name as a running number)."""
    import pandas as pd

    from agentk.competition.series import pixel_columns

    table = pd.DataFrame({"id": [1, 2], "1" * 10_000: [3, 4], "x": [0.5, 0.25]})
    assert pixel_columns(table) is None
    pixels = pd.DataFrame({f"pixel{k}": [k % 256, 0] for k in range(256)})
    assert pixel_columns(pixels) == ([f"pixel{k}" for k in range(256)], 16, 16, 1)


def test_infinite_numbers_are_missing_in_the_light_models_inputs():
    """seed 37 (nonfinite): a JSON table whose name_length held Infinity and -Infinity reached the light solve's
    network as inf, its predictions were NaN, and the final light solve failed on every backtrack."""
    import numpy as np
    import pandas as pd

    from tools.tabular import encode, standardised

    frame = pd.DataFrame({"n": [1.0, np.inf, -np.inf, np.nan, 3.0], "c": ["a", "b", "a", "b", "a"]})
    (matrix,), columns = encode([frame])
    assert columns == ["n", "c"] and np.isnan(matrix[1:4, 0]).all() and matrix[4, 0] == 3.0
    values, missing = standardised(np.array([1.0, np.inf, -np.inf, 3.0]), np.arange(4))
    assert np.isfinite(values).all() and missing.tolist() == [0, 1, 1, 0]


def test_the_light_solve_skips_columns_without_a_value(tmp_path):
    """seed 50 (nonfinite + special_files): wine's alcohol, proline and od280 all inf, Infinity or NaN; scikit-learn's
    gradient boosting fails on a column of missing values alone ("window shape cannot be larger than input array
    shape"), so the final light solve failed on every backtrack."""
    import numpy as np

    from tools.light_solve import _fit_predict

    x = np.column_stack([np.full(40, np.nan), np.arange(40.0) % 7])
    y = (np.arange(40) % 2).astype(float)
    val, test = _fit_predict("binary", 2, x, y, [x[:5], x[5:8]])
    assert val.shape == (5, 1) and test.shape == (3, 1) and np.isfinite(val).all()
    (only,) = _fit_predict("regression", 0, x[:, :1], y, [x[:4, :1]])
    assert only.shape == (4, 1) and np.isfinite(only).all()


def test_an_image_claiming_ten_billion_pixels_names_its_file(tmp_path):
    """seed 65 (truncated_images): a PNG whose header claims 100,000 x 100,000 pixels escaped the image reader as
    Pillow's DecompressionBombError, naming no file or map; it is read as a black image now, with a warning naming
    the file and the map (a few such files among many are the data's: tests/test_media_layouts.py)."""
    from testing.data_fuzz import _png
    from tools.modality_img import ImageTransform

    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "bomb.png").write_bytes(_png(100_000, 100_000))
    with pytest.warns(UserWarning, match=r"raw/bomb\.png in train_img_input_map\.csv: image too large"):
        image = ImageTransform(tmp_path, 32, "train_img_input_map.csv").open("raw/bomb.png")
    assert image.size == (32, 32) and image.getextrema() == ((0, 0), (0, 0), (0, 0))
