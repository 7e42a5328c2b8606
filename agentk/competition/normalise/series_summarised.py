"""Write the per-sample files' summary table (agentk.competition.series) if there are such files."""

from pathlib import Path

import pandas as pd

from agentk.competition import written
from agentk.competition.readers import read_table
from agentk.competition.series import SUMMARY, per_sample_folders, summarise_files
from agentk.competition.tables import find


def summarised_series(root: Path) -> list[str]:
    """The conversion on the folder `root`; what was written, one line each."""
    paths = find(root).paths
    dest = root / SUMMARY
    if "train" not in paths or dest.exists() or not per_sample_folders(root):  # the tables only when files may match
        return []
    if (
        written.WINDOWS["test"] in written.stand_ins(root).values()
    ):  # the files are a signal's segments, summarised already
        return []
    frames = [read_table(paths[r], dtype=str) for r in ("train", "test", "sample") if r in paths]
    predicted = set(frames[-1].columns[1:]) if "sample" in paths else set()
    # a file per value of a target holds a class's rows (train/<class>.csv), not one sample's series
    keys = {c: pd.concat([f[c] for f in frames if c in f.columns]) for c in frames[0].columns if c not in predicted}
    found = summarise_files(root, keys)
    if found is None:
        return []
    table, key = found
    written.write_csv(table, dest)
    return [
        f"{dest.name}: {len(table)} per-sample files summarised into {table.shape[1] - 1} features, keyed by {key!r}"
    ]
