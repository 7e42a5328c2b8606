"""Splits given as series: a table of many rows per sample key in each split (X_train.csv and X_test.csv, rows
per series_id) beside a table of one row per train sample holding the targets (y_train.csv). Each split becomes
one row per key, `<split>_per_<key>.csv`: its one-row-per-key tables (the test's: the sample's keys, when it has
none) joined with its series summarised per key (agentk.competition.series.per_key), standing in for them."""

from pathlib import Path

from agentk.competition import written
from agentk.competition.readers import read_table
from agentk.competition.series import per_key
from agentk.competition.tables import candidates, file_role, find
from agentk.core.errors import BadInput


def series_as_rows(root: Path) -> list[str]:
    """The conversion on the folder `root`; what was written, one line each."""
    root = Path(root)
    paths = find(root).paths
    if "sample" not in paths:
        return []
    key = str(read_table(paths["sample"], nrows=5).columns[0])
    if (
        f"test_per_{key}.csv" in written.stand_ins(root).values()
    ):  # (written.stand_ins holds only stand-ins that were written)
        return []  # done: the test's table is written last
    if written.start_over(root, f"_per_{key}"):
        paths = find(root).paths
    if "test" not in paths:
        return []
    replaced = written.stand_ins(root)
    series: dict[str, list[Path]] = {"train": [], "test": []}
    rows: dict[str, list[Path]] = {"train": [], "test": []}
    for p in candidates(root):
        role = file_role(p, root)
        if role not in series or p.relative_to(root).as_posix() in replaced:
            continue
        try:
            head = read_table(p, nrows=written.SERIES_HEAD)
        except BadInput:  # a table that does not read is the input checks' to report
            continue
        if key in head.columns:
            (series if head[key].duplicated().any() else rows)[role].append(p)
    if len(series["train"]) != 1 or len(series["test"]) != 1 or not rows["train"]:
        return []
    frames = {role: [read_table(p) for p in rows[role]] for role in ("train", "test")}
    frames["test"] = frames["test"] or [read_table(paths["sample"])[[key]]]
    if any(not f[key].is_unique for found in frames.values() for f in found):  # checked before anything is written
        return []
    done = []
    for role in ("train", "test"):  # test last: its table marks the work done
        table = frames[role][0]
        for other in frames[role][1:]:
            table = table.merge(
                other[[key, *(c for c in other.columns if c not in table.columns)]], on=key, how="outer"
            )
        summary = per_key(read_table(series[role][0]), key)
        table = table.merge(summary.astype({key: table[key].dtype}), on=key, how="left")
        dest = root / f"{role}_per_{key}.csv"
        written.stand_in(root, series[role] + rows[role], table, dest)
        names = ", ".join(p.name for p in series[role] + rows[role])
        done.append(
            f"{dest.name}: {names} as one row per {key!r}, the series summarised ({summary.shape[1] - 1} features)"
        )
    return done
