"""A column of label sets ("Bark,Walk", "3 17"; some row holding two or more) in the train table, or in the
labels table beside it, whose labels are the sample submission's columns (one probability each, scored per
label), by name or with a prefix or suffix all of them share ("tags_haze"): that table written with one 0/1
column per sample column in its place, standing in for it."""

import re
from pathlib import Path

from agentk.competition import written
from agentk.competition.class_names import class_columns
from agentk.competition.readers import read_table
from agentk.competition.tables import find, stem

LABEL_COLUMNS = "_label_columns"  # <train>_label_columns.csv: label sets as the sample's 0/1 columns
SET_SEPARATORS = (r",", r";", r"\|", r"\s+")  # between the labels of a set, tried in this order


def label_sets_as_columns(root: Path) -> list[str]:
    """The conversion on the folder `root`; what was written, one line each."""

    root = Path(root)
    paths = find(root).paths
    if "sample" not in paths:
        return []
    columns = list(read_table(paths["sample"], nrows=5, dtype=str).columns[1:])
    for role in [r for r in ("train", "labels") if r in paths]:
        if len(columns) < 2 or paths[role].name.endswith(f"{LABEL_COLUMNS}.csv"):
            return []
        table = read_table(paths[role], dtype=str)
        if set(columns) & set(table.columns):
            return []
        for c in table.columns:
            values = table[c].fillna("").astype(str)
            if (values.str.strip() == "").any():  # every row holds a set: an empty cell rules the column out, cheaply
                continue  # (a table of 20,000 empty columns spent minutes splitting their cells)
            for sep in SET_SEPARATORS:
                sets = values.map(lambda v, sep=sep: {t.strip() for t in re.split(sep, v) if t.strip()})
                labels = set().union(*sets)
                sizes = sets.map(len)
                # the sample's columns are the labels, or name them with a shared prefix or suffix; sets: some row
                # holds two labels (one label a row is a class, its columns exclusive probabilities)
                named = {v: v for v in labels} if labels <= set(columns) else class_columns(labels, columns) or {}
                if named and len(labels) >= max(2, len(columns) / 2) and sizes.all() and sizes.max() > 1:
                    wide = table.drop(columns=c)
                    of = {column: label for label, column in named.items()}
                    for column in columns:
                        wide[column] = sets.map(lambda s, label=of.get(column): int(label in s))
                    dest = root / f"{stem(paths[role])}{LABEL_COLUMNS}.csv"
                    written.stand_in(root, [paths[role]], wide, dest)
                    return [
                        f"{dest.name}: {paths[role].name}'s label sets in {c!r} as one 0/1 column per label of "
                        f"{paths['sample'].name} ({len(columns)} labels)"
                    ]
    return []
