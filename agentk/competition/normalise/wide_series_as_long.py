"""A train table of one row per entity and one column per day, whose test names (entity, day) pairs as composite
values (agentk.competition.wide_series), written one row per entity and day, the test one row per pair."""

from __future__ import annotations

from pathlib import Path

from agentk.competition import wide_series, written
from agentk.competition.readers import read_table
from agentk.competition.tables import stem, to_convert


def wide_series_as_long(root: Path) -> list[str]:
    """The wide train table melted and the test's composite values split; what was written, one line each."""
    root = Path(root)
    paths = to_convert(root, wide_series.SERIES)
    if paths is None:
        return []
    header = read_table(paths["train"], dtype=str, nrows=5)
    if not wide_series.date_columns(header):
        return []
    train, test, sample = (read_table(paths[r], dtype=str) for r in ("train", "test", "sample"))
    rec = wide_series.detect(train, test, sample)
    if rec is None:
        return []
    done = []
    rows = {"test": wide_series.test_rows(test, train, rec), "train": wide_series.train_rows(train, rec)}
    for role, frame in rows.items():  # train last: its table marks the work done
        dest = root / f"{stem(paths[role])}{wide_series.SERIES}.csv"
        written.stand_in(root, [paths[role]], frame, dest)
        done.append(
            f"{dest.name}: {paths[role].name} as one row per {rec['key']!r} and day ({len(frame)} rows; "
            + (
                f"{len(rec['dates'])} day columns melted into {wide_series.DATE!r} and {rec['target']!r})"
                if role == "train"
                else f"{rec['composite']!r} split on {rec['sep']!r} into {rec['key']!r} and {wide_series.DATE!r})"
            )
        )
    return done
