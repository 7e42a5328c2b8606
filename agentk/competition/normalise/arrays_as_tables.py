"""Whole-split arrays (X_train.npy, y_train.npy, X_test.npy) written as train.csv and test.csv, when the folder has no
train table (agentk.competition.series reads them)."""

from pathlib import Path

from agentk.competition import written
from agentk.competition.readers import read_table
from agentk.competition.series import arrays_to_tables
from agentk.competition.tables import find


def arrays_as_tables(root: Path) -> list[str]:
    """The conversion on the folder `root`; what was written, one line each."""
    paths, done = find(root).paths, []
    if "sample" not in paths or "train" in paths:
        return done
    arrays = arrays_to_tables(root, read_table(paths["sample"], dtype=str))
    for role, table in sorted(arrays.items(), key=lambda item: item[0] == "train"):  # train last: it marks the end
        dest = root / f"{role}.csv"
        if not dest.exists():
            written.write_csv(table, dest)
            done.append(f"{dest.name}: the {role} arrays as a table ({table.shape[1]} columns)")
    return done
