"""The files normalise writes at the top of raw/ and what each stands in for: `stand_ins.json` maps each
replaced table to the table (or image folder/) standing in for it, recorded before the new table is written so
that table discovery looks again; a conversion killed part-way starts over under the same names
(`unfinished_started_over`, before any conversion reads the roles); every CSV is written whole or not at all
(`write_csv`). Also the probe sizes the conversions share."""

import json
from pathlib import Path

import pandas as pd

from agentk.competition import rewrites, wide_series
from agentk.competition.long_format import RECORD, WIDE

POSITIONS = "_positions"  # <records>_positions.csv: one row per position, written by normalise
WINDOWS = {"train": "train_windows.csv", "test": "test_windows.csv"}  # a long signal's windows and segments
STAND_INS = "stand_ins.json"  # written by normalise: {a table's path: the table (or image folder/) standing in}
SERIES_HEAD = 2000  # rows read to tell a table of many rows per key from one of one row per key


ENTITY_PROBE_ROWS = 200_000  # rows of each table read to tell a table of one row per sample from one of many


def stand_ins(root: Path) -> dict[str, str]:
    """The tables normalise replaced: {path in the folder: the table standing in for it}. A stand-in not written
    (its conversion was killed after recording it) replaces nothing: the original stands, to be converted again."""
    path = Path(root) / STAND_INS
    record = json.loads(path.read_text()) if path.is_file() else {}
    return {original: standing for original, standing in record.items() if (Path(root) / standing).exists()}


def start_over(root: Path, suffix: str) -> bool:
    """A conversion whose last write (its record, or train's table) is missing stopped part-way: the stand-ins it
    wrote (named <stem><suffix>.csv) are removed and their originals stand again, so that it starts over under the
    same names rather than taking its own half-written tables for the originals. Whether there were any."""
    record = stand_ins(root)
    undone = {original for original, standing in record.items() if standing.endswith(f"{suffix}.csv")}
    for original in undone:
        (Path(root) / record[original]).unlink(missing_ok=True)
    if undone:
        (Path(root) / STAND_INS).write_text(json.dumps({k: v for k, v in record.items() if k not in undone}, indent=1))
    return bool(undone)


def unfinished_started_over(root: Path) -> None:
    """Before any conversion reads the folder's roles: each conversion killed part-way starts over, so that none
    reads another's half-written stand-ins (a wide sample beside the long test table it was not yet written for
    makes a pixel table look like the test table). Each conversion's own last write tells it was done."""
    written = set(stand_ins(root).values())
    if not (root / RECORD).exists():
        start_over(root, WIDE)
    if not (root / rewrites.RECORD).exists():
        start_over(root, rewrites.RANKED)
    for suffix in (POSITIONS, wide_series.SERIES):
        if len({s for s in written if s.endswith(f"{suffix}.csv")}) == 1:  # test's written, train's (last) not
            start_over(root, suffix)
    series = {
        tuple(s.removesuffix(".csv").split("_per_", 1)) for s in written if s.startswith(("train_per_", "test_per_"))
    }
    for key in {key for role, key in series} - {key for role, key in series if role == "test"}:
        start_over(root, f"_per_{key}")


def stand_in(root: Path, originals: list[Path], frame: pd.DataFrame, dest: Path) -> None:
    """Write `frame` to `dest`, standing in for the `originals` from now on (recorded first: the new table is what
    tells table discovery to look again)."""
    record_stand_in(root, originals, dest.relative_to(root).as_posix())
    dest.parent.mkdir(exist_ok=True)  # a folder of its own where the originals' folder gives their role
    write_csv(frame, dest)


def record_stand_in(root: Path, originals: list[Path], standing: str) -> None:
    """stand_ins.json: each of the originals from now on stands aside for `standing` (a table, or a folder/)."""
    record = {**stand_ins(root), **{p.relative_to(root).as_posix(): standing for p in originals}}
    (Path(root) / STAND_INS).write_text(json.dumps(record, indent=1))


def write_csv(df: pd.DataFrame, dest: Path) -> None:
    tmp = dest.with_name(f".{dest.name}.partial")
    df.to_csv(tmp, index=False)
    tmp.replace(dest)
