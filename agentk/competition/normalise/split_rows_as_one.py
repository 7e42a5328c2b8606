"""Many rows per sample, cut by split: two tables of the same columns, one holding the sample submission's ids
many times each (the test samples' readings) and one holding none of them (the train samples'), beside a table
holding each sample id once (the test samples' own table: training_set.csv and test_set.csv of readings beside
training_set_metadata.csv and test_set_metadata.csv). The two become one table, <common name>_rows.csv, which
the data graph then links to both splits' samples and summarises per sample; without it each half links to
one split only and neither is joined, and the split's names may place the readings as the train and test
tables. Read off the values (a sample of each table's rows), not the names."""

import re
from pathlib import Path

import pandas as pd

from agentk.competition import written
from agentk.competition.files import role_of
from agentk.competition.readers import read_chunks, read_table
from agentk.competition.tables import candidates, file_role, stem
from agentk.core.errors import BadInput

PROBE_CELLS = 4_000_000  # ... and cells: a table of 122 columns is probed on its first 32,786 rows


def split_rows_as_one(root: Path) -> list[str]:
    """The conversion on the folder `root`; what was written, one line each."""
    replaced = {root / original for original in written.stand_ins(root)}
    found = [p for p in candidates(root) if p not in replaced]
    samples = [p for p in found if file_role(p, root) == "sample"]
    tables = [p for p in found if p not in samples and p.is_file()]
    if len(samples) != 1 or len(tables) < 4:  # both splits' readings and samples' tables
        return []
    try:
        ids = set(read_table(samples[0], dtype=str, nrows=written.ENTITY_PROBE_ROWS).iloc[:, 0].astype(str).str.strip())
    except BadInput:
        return []
    if not ids:
        return []

    def hold(f: pd.DataFrame) -> tuple[bool, bool, bool]:
        """(holds each sample id once, holds sample ids many times, holds none of them)"""
        once = many = some = False
        for c in f.columns:
            values = f[c].dropna().astype(str).str.strip()
            known = values.isin(ids)
            share = known.mean() if len(values) else 0.0
            once |= values.is_unique and len(ids & set(values)) >= 0.9 * len(ids)
            many |= share >= 0.9 and not values.is_unique
            some |= bool(known.any())
        return once, many, not some

    held, columns = {}, {}
    for p in tables:  # one at a time, a wide table on fewer rows: a probe holds PROBE_CELLS texts at most
        try:
            width = read_table(p, dtype=str, nrows=5).shape[1]
            f = read_table(p, dtype=str, nrows=max(1_000, min(written.ENTITY_PROBE_ROWS, PROBE_CELLS // max(1, width))))
        except BadInput:
            return []
        held[p], columns[p] = hold(f), list(f.columns)
    if not any(once for once, _, _ in held.values()):
        return []
    for test_rows in (p for p, (_, many, _) in held.items() if many):
        twins = [p for p in tables if p != test_rows and columns[p] == columns[test_rows] and held[p][2]]
        if len(twins) != 1:
            continue
        train_rows = twins[0]
        dest = root / _rows_name(train_rows, test_rows)
        if dest.exists():
            return []
        written.record_stand_in(root, [train_rows, test_rows], dest.name)
        tmp, header = dest.with_name(f".{dest.name}.partial"), True
        for part in (train_rows, test_rows):
            for chunk in read_chunks(part, written.ENTITY_PROBE_ROWS):
                chunk.to_csv(tmp, mode="w" if header else "a", header=header, index=False)
                header = False
        tmp.replace(dest)
        return [
            f"{dest.name}: {train_rows.name} and {test_rows.name} (many rows per sample, of the train and of the "
            "test samples) as one table"
        ]
    return []


ROWS_SUFFIX = "_rows.csv"


def _rows_name(a: Path, b: Path) -> str:
    """<what the two names share, less split words>_rows.csv, a name that places the table in no split."""
    words = [re.split(r"[^0-9a-z]+", stem(p).lower()) for p in (a, b)]
    common = [w for w in words[0] if w in words[1] and w and role_of(Path(w)) is None]
    name = "_".join(common) + ROWS_SUFFIX if common else "split" + ROWS_SUFFIX
    return name if role_of(Path(name)) is None else "split" + ROWS_SUFFIX
