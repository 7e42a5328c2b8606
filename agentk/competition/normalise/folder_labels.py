"""The train files' classes read off their class sub-folders or their names (`folder_labels`), written as a labels
table keyed by the train table's ids (`labels_of_folders`)."""

import shutil
from pathlib import Path, PurePosixPath

import pandas as pd

from agentk.competition import written
from agentk.competition.file_inputs import labels_beside_ids, listing_source, modality_files
from agentk.competition.readers import read_table
from agentk.competition.tables import find, sample_columns_of

FOLDER_LABELS = "train_folder_labels.csv"  # written by normalise: the labels that class sub-folders give


def folder_labels(root: Path) -> tuple[pd.DataFrame, str, dict[str, str]] | None:
    """The train files' labels as a table keyed like the train table, when the train table lacks the column to
    predict (or, where the sample has a column per class, all of them) and the train files sit in class sub-folders
    (train/<label>/<id>.png beside train.csv of other columns) or carry the label beside the train id in their
    names (cat.<id>.png, <id>_cat.png); (table, key column, {id: its file} where the names carry the labels) or
    None. The labels column is named as the sample's one predicted column, else "label" (the analysis matches its
    values to the sample's columns)."""
    paths, layout = find(root).paths, sample_columns_of(root)
    if "train" not in paths or "labels" in paths or layout is None or not layout.predicted:
        return None
    files = modality_files(root)
    if not files or set(layout.predicted) & set(read_table(paths["train"], nrows=5).columns):  # whole table if needed
        return None
    train = read_table(paths["train"], dtype=str)
    target = layout.predicted[0] if len(layout.predicted) == 1 else "label"
    while target in train.columns:
        target += "_"
    keys = [k for k in train.columns if train[k].notna().all() and train[k].astype(str).is_unique]
    for modality, found in files.items():
        src = listing_source(modality, found)
        label = {}
        for f in found if src is not None and src.label == "folder" else ():
            if f.startswith(src.folder + "/"):
                name = f.rsplit("/", 1)[1]
                label[name] = label[name.rsplit(".", 1)[0]] = f.rsplit("/", 2)[1]
        for key in keys:
            values = train[key].astype(str)
            if label and values.isin(label).all():
                return pd.DataFrame({key: values, target: values.map(label)}), key, {}
            named = labels_beside_ids(found, set(values))  # cat.1234.png: the label beside a train id
            classes = {cls for cls, _ in named.values()}
            if values.isin(named).all() and 2 <= len(classes) <= len(values) / 5:
                frame = pd.DataFrame({key: values, target: values.map({v: cls for v, (cls, _) in named.items()})})
                return frame, key, {v: named[v][1] for v in values}
    return None


def _linked_by_id(root: Path, files: dict[str, str]) -> str:
    """<folder>_by_id/<id><ext> at the top of root, a link to each file (workspace-relative, named by its class
    and id); the folder's name."""
    first = PurePosixPath(next(iter(files.values())))
    dest = root / f"{first.parent.name}_by_id"
    partial = root / f".{dest.name}.partial"
    if not dest.exists():
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir()
        for i, f in files.items():
            source = (root.parent / f).resolve()
            (partial / f"{i}{source.suffix}").symlink_to(source)
        partial.replace(dest)
    return dest.name


def labels_of_folders(root: Path) -> list[str]:
    """The train files' classes, read off their class sub-folders or their names, written as a labels table keyed by
    the train table's id column (FOLDER_LABELS); pictures named by class and id also linked by their id alone."""
    labels = folder_labels(root)
    if labels is None:
        return []
    frame, key, files = labels
    dest, done = root / FOLDER_LABELS, []
    if files:  # the pictures also by their id alone, as the test's are named: the maps find both alike
        linked = _linked_by_id(root, files)
        done.append(f"{linked}/: the train files, named by their class and id, linked by their id alone")
    if not dest.exists():
        written.write_csv(frame, dest)
        how = "the names of the train files" if files else "the class sub-folders of the train files"
        done.append(f"{dest.name}: {how}, keyed by the train table's {key!r}")
    return done
