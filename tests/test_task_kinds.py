"""Kinds of task agentk does not do (agentk/competition/task_kinds.py), read off values and structure before any
stage: small layouts of each kind are refused naming it, and their look-alikes that agentk does (label sets beside
a table of labels, spans given as text, ranked classes, run-length masks, test tables beside class folders) are
not refused, or refused as before."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from agentk.competition.task_kinds import unsupported_task
from stages.fetch import check_source


def write(folder: Path, **tables: pd.DataFrame) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, frame in tables.items():
        frame.to_csv(folder / f"{name}.csv", index=False)
    return folder


def refused_as(folder: Path, kind: str) -> str:
    reason = unsupported_task(folder)
    assert reason is not None and reason.startswith(f"unsupported task: {kind} ("), reason
    assert reason.endswith(")") and "\n" not in reason
    assert check_source(folder, try_unsupported=True) == reason  # the check setup runs says so first
    return reason


def baskets(tmp_path: Path, placeholder: str) -> Path:
    """Orders of users; the train orders' products one row each; a catalogue of products; the sample's products
    per test order (the placeholder's ids from the full catalogue, of which the folder holds a part)."""
    rng = np.random.default_rng(0)
    products = rng.choice(np.arange(1, 50_000), size=300, replace=False)
    orders = pd.DataFrame({"order_id": np.arange(5000, 5150), "user_id": rng.integers(1, 40, 150)})
    lines = pd.DataFrame(
        [(o, p, k) for o in range(5000, 5120) for k, p in enumerate(rng.choice(products, 4, replace=False))],
        columns=["order_id", "product_id", "add_to_cart_order"],
    )
    catalogue = pd.DataFrame({"product_id": products, "product_name": [f"item {p}" for p in products]})
    sample = pd.DataFrame({"order_id": np.arange(5120, 5150), "products": placeholder})
    return write(
        tmp_path / "baskets", orders=orders, order_products=lines, products=catalogue, sample_submission=sample
    )


@pytest.mark.parametrize("placeholder", ["in-catalogue", "39276 29259"])
def test_sets_of_catalogue_items_drawn_from_interactions_are_recommendation(tmp_path, placeholder):
    folder = baskets(tmp_path, placeholder)
    if placeholder == "in-catalogue":  # the sample's ids are the catalogue's own
        sample = pd.read_csv(folder / "sample_submission.csv")
        first = pd.read_csv(folder / "products.csv")["product_id"].head(3).astype(str)
        sample.assign(products=" ".join(first)).to_csv(folder / "sample_submission.csv", index=False)
    reason = refused_as(folder, "recommendation")
    assert "products.csv's 'product_id'" in reason and "several per 'order_id'" in reason


def test_label_sets_beside_a_table_of_their_labels_are_not_recommendation(tmp_path):
    """The train table holds the sets (imet-like attribute ids, with a table naming each label): label sets to learn."""
    rng = np.random.default_rng(1)
    labels = pd.DataFrame({"attribute_id": np.arange(60), "attribute_name": [f"tag::{k}" for k in range(60)]})
    sets = [" ".join(map(str, sorted(rng.choice(60, rng.integers(1, 5), replace=False)))) for _ in range(300)]
    train = pd.DataFrame({"id": [f"a{k:04d}" for k in range(300)], "attribute_ids": sets})
    sample = pd.DataFrame({"id": [f"b{k:04d}" for k in range(50)], "attribute_ids": "0 1 2"})
    assert unsupported_task(write(tmp_path / "c", labels=labels, train=train, sample_submission=sample)) is None


def notes(tmp_path: Path, form: str) -> Path:
    """Patient notes; where each feature is said in them, as character ranges (nbme-like), or as the phrase."""
    rng = np.random.default_rng(2)
    fill = "patient reports denies since yesterday mild severe with and no history of".split()
    phrases = ["chest pain", "fever", "short of breath", "nausea"]
    texts = {}
    for k in range(30):
        words = list(rng.choice(fill, 14))
        for ph in phrases[: 2 + k % 3]:
            words.insert(int(rng.integers(len(words))), ph)
        texts[100 + k] = " ".join(words) + f". Seen on day {k}."
    rows = []
    for num, text in texts.items():
        for f, ph in enumerate(phrases):
            at = [(m, m + len(ph)) for m in [text.find(ph)] if m >= 0]
            cell = {"list": str([f"{a} {b}" for a, b in at]), "joined": ";".join(f"{a} {b}" for a, b in at)}
            rows.append((f"{num}_{f}", num, f, cell.get(form, ph if at else "")))
    train = pd.DataFrame(rows[:90], columns=["id", "pn_num", "feature_num", "location"])
    test = train.iloc[:0].drop(columns="location")
    test = pd.DataFrame(rows[90:], columns=["id", "pn_num", "feature_num", "location"]).drop(columns="location")
    sample = pd.DataFrame({"id": test["id"], "location": ""})
    notes_table = pd.DataFrame({"pn_num": list(texts), "pn_history": list(texts.values())})
    return write(tmp_path / form, patient_notes=notes_table, train=train, test=test, sample_submission=sample)


@pytest.mark.parametrize("form", ["list", "joined"])
def test_character_offsets_into_notes_are_span_extraction(tmp_path, form):
    """Offsets "['25 44']" or "25 44;50 60" (which read as run-length masks to the segmentation check, made after
    this one) into a text of another table."""
    reason = refused_as(notes(tmp_path, form), "span extraction")
    assert "'location' holds character offsets" in reason and "'pn_history' of patient_notes.csv" in reason


def test_spans_given_as_text_are_not_refused_as_offsets(tmp_path):
    """The phrase itself (tweet-like selected text, shorter than a note): agentk copies spans of the input."""
    reason = unsupported_task(notes(tmp_path, "text"))
    assert reason is None or "offsets" not in reason


def test_run_length_masks_stay_segmentation(tmp_path):
    rng = np.random.default_rng(3)
    masks = [
        " ".join(f"{s} {int(rng.integers(1, 40))}" for s in sorted(rng.choice(5000, 3, replace=False)))
        for _ in range(40)
    ]
    train = pd.DataFrame({"ImageId": [f"{k}.png" for k in range(40)], "EncodedPixels": masks})
    sample = pd.DataFrame({"ImageId": [f"t{k}.png" for k in range(10)], "EncodedPixels": "1 1"})
    assert unsupported_task(write(tmp_path / "m", train=train, sample_submission=sample)).startswith(
        "unsupported task: segmentation ("
    )


def families(tmp_path: Path) -> Path:
    """Families' preferred days and sizes; the sample assigns each family a day (santa-workshop-like)."""
    rng = np.random.default_rng(4)
    family = pd.DataFrame(
        {"family_id": np.arange(300), **{f"choice_{j}": rng.integers(1, 101, 300) for j in range(10)},
         "n_people": rng.integers(2, 9, 300)}
    )  # fmt: skip
    sample = pd.DataFrame({"family_id": np.arange(300), "assigned_day": rng.integers(1, 101, 300)})
    sample["assigned_day"] = family["choice_0"]
    return write(tmp_path / "santa", family_data=family, sample_submission=sample)


def test_entities_assigned_among_their_options_without_a_target_are_optimisation(tmp_path):
    reason = refused_as(families(tmp_path), "optimisation")
    assert "300 rows of family_data.csv" in reason and "choice_0" in reason


def test_a_test_table_beside_train_rows_is_not_optimisation(tmp_path):
    """The same table with training rows beside it (other families, their day given): a prediction."""
    folder = families(tmp_path)
    family = pd.read_csv(folder / "family_data.csv")
    train = family.assign(family_id=family["family_id"] + 1000, assigned_day=family["choice_1"])
    write(folder, train=train)
    assert unsupported_task(folder) is None


def test_test_ids_beside_class_folders_are_not_optimisation(tmp_path):
    """Only the test's ids in tables, two columns holding the sample's placeholder: the labels are folders."""
    test = pd.DataFrame({"id": [f"t{k}" for k in range(30)], "width": 0, "height": 0})
    folder = write(tmp_path / "imgs", test=test, sample_submission=pd.DataFrame({"id": test["id"], "label": 0}))
    for c in ("cat", "dog"):
        (folder / "train" / c).mkdir(parents=True)
        for k in range(6):
            (folder / "train" / c / f"{c}{k}.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    assert unsupported_task(folder) is None


@pytest.mark.parametrize("program", ["agent.py", "starter.ipynb"])
def test_a_program_as_the_only_file_is_simulation(tmp_path, program):
    folder = tmp_path / "sim"
    folder.mkdir()
    (folder / "description.md").write_text("# Play\n\nAgents play each other; each is rated by its skill.\n")
    if program.endswith(".py"):
        (folder / program).write_text("def agent(observation, configuration):\n    return 0\n")
    else:
        cell = {
            "cell_type": "code",
            "metadata": {},
            "source": ["%%writefile main.py\n", "def act(obs):\n", " return 1\n"],
        }
        (folder / program).write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4}))
    reason = refused_as(folder, "simulation")
    assert program in reason


def test_a_folder_of_prose_and_no_program_is_not_simulation(tmp_path):
    folder = tmp_path / "empty"
    folder.mkdir()
    (folder / "notes.py").write_text("this is not python (just prose\n")
    assert unsupported_task(folder) is None


def landmarks(tmp_path: Path, in_folders: bool) -> Path:
    """Queries and an index of items like them (a url and a colour each, or a picture each); the sample ranks index
    ids per query (landmark-retrieval-like)."""
    rng = np.random.default_rng(5)
    ids = [f"{v:016x}" for v in rng.integers(0, 2**60, 150)]
    index, queries, train = ids[:80], ids[80:110], ids[110:]
    sample = pd.DataFrame({"id": queries, "images": " ".join(index[:4])})
    folder = tmp_path / ("folders" if in_folders else "tables")
    items = lambda g: pd.DataFrame({"id": g, "url": [f"http://x/{i}.jpg" for i in g]})  # noqa: E731
    if in_folders:
        for name, group in (("index", index), ("test", queries)):
            for i in group:  # nested as a/b/c/<id>.jpg
                path = folder / name / i[0] / i[1] / f"{i}.jpg"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(b"\xff\xd8\xff")
        return write(folder, train=items(train).assign(landmark_id=1), sample_submission=sample)
    return write(
        folder,
        index=items(index),
        test=items(queries),
        train=items(train).assign(landmark_id=1),
        sample_submission=sample,
    )


@pytest.mark.parametrize("in_folders", [False, True])
def test_ranked_ids_of_a_gallery_like_the_queries_are_retrieval(tmp_path, in_folders):
    reason = refused_as(landmarks(tmp_path, in_folders), "retrieval")
    assert ("index/" if in_folders else "index.csv's 'id'") in reason


def test_ranked_classes_are_not_retrieval(tmp_path):
    """A sample ranking train's classes (whale-like top 5): classes learnt from train's column."""
    rng = np.random.default_rng(6)
    train = pd.DataFrame(
        {"Image": [f"{k}.jpg" for k in range(200)], "Id": [f"w_{v:03d}" for v in rng.integers(0, 40, 200)]}
    )
    sample = pd.DataFrame({"Image": [f"t{k}.jpg" for k in range(20)], "Id": "w_001 w_002 w_003 w_004 w_005"})
    assert unsupported_task(write(tmp_path / "w", train=train, sample_submission=sample)) is None
