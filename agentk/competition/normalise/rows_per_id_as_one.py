"""Many train and test rows per submitted id, no table of one row per id (the items of each shopping trip, the
sample one row per trip): a test column holds the sample's ids, each many times, and train has that column,
also repeating. Each split becomes one row per id, `<split>_per_<key>.csv`, its rows aggregated
(agentk.competition.series.aggregate_per_key: counts, sums, means, the most frequent category, the number of
distinct values) and train's targets taken per id. Read off the values, not the names."""

from pathlib import Path

import pandas as pd

from agentk.competition import written
from agentk.competition.readers import read_table
from agentk.competition.series import aggregate_per_key
from agentk.competition.tables import candidates, find
from agentk.core.errors import BadInput


def rows_per_id_as_one(root: Path) -> list[str]:
    """The conversion on the folder `root`; what was written, one line each."""
    root = Path(root)
    paths = find(root).paths
    if not {"train", "test", "sample"} <= set(paths) or any(p.is_dir() for p in paths.values()):
        return []
    if any(s.startswith("test_per_") for s in written.stand_ins(root).values()):
        return []  # done (here or by series_as_rows): the test's table is written last
    try:
        ids = set(read_table(paths["sample"], dtype=str).iloc[:, 0].astype(str).str.strip())
        test = read_table(paths["test"], dtype=str)
    except BadInput:
        return []
    key = next((c for c in test.columns if _holds_ids(test[c], ids) == "many"), None)
    if key is None or any(_holds_ids(test[c], ids) == "once" for c in test.columns):
        return []
    if written.start_over(root, f"_per_{key}"):
        paths = find(root).paths
    try:
        train = read_table(paths["train"], dtype=str)
        others = [
            p
            for p in candidates(root)
            if p not in paths.values() and p.relative_to(root).as_posix() not in written.stand_ins(root) and p.is_file()
        ]
        probes = [read_table(p, dtype=str, nrows=written.ENTITY_PROBE_ROWS) for p in others]
    except BadInput:
        return []
    if key not in train.columns or train[key].is_unique:
        return []
    if any(_holds_ids(f[c], ids) == "once" for f in probes for c in f.columns):
        return []  # a table of one row per id stands beside: the rows are its readings, joined by the data graph
    frames = dict(zip(("train", "test"), aggregate_per_key(train, test, key)))
    done = []
    for role in ("train", "test"):  # test last: its table marks the work done
        dest = root / f"{role}_per_{key}.csv"
        written.stand_in(root, [paths[role]], frames[role], dest)
        done.append(
            f"{dest.name}: {paths[role].name}'s {len(train if role == 'train' else test)} rows as one row per "
            f"{key!r} ({len(frames[role])}), aggregated ({frames[role].shape[1] - 1} columns)"
        )
    return done


def _holds_ids(column: pd.Series, ids: set[str]) -> str | None:
    """Whether a column's values are the sample's ids: "once" each, "many" times (repeated), else None."""
    values = column.dropna().astype(str).str.strip()
    if not len(values) or not ids or values.isin(ids).mean() < 0.9 or len(ids & set(values)) < 0.9 * len(ids):
        return None
    return "once" if values.is_unique else "many"
