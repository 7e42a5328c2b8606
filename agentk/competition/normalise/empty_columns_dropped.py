"""A train, test or labels table of thousands of columns, most of them empty in every row (a trailing run of
separators), gets a CSV without them standing in: they carry nothing, and each reading of such a table took
seconds, in every stage and check."""

from pathlib import Path

from agentk.competition import written
from agentk.competition.readers import read_table
from agentk.competition.tables import find, stem

MANY_COLUMNS = 1000  # columns from which a table's empty columns are dropped


def empty_columns_dropped(root: Path) -> list[str]:
    """The conversion on the folder `root`; what was written, one line each."""
    done = []
    for role, path in find(root).paths.items():
        if role == "sample" or (dest := root / f"{stem(path)}_columns.csv").exists():
            continue
        if read_table(path, nrows=1).shape[1] < MANY_COLUMNS:
            continue
        table = read_table(path)
        empty = [c for c in table.columns if table[c].isna().all()]
        if 2 * len(empty) >= table.shape[1]:
            written.stand_in(root, [path], table.drop(columns=empty), dest)
            done.append(f"{dest.name}: {path.name} without its {len(empty)} empty columns")
    return done
