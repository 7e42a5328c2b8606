"""A sample submission that is not a plain CSV (TSV, parquet, gzip) gets a CSV copy: the format a submission has."""

from __future__ import annotations

from pathlib import Path

from agentk.competition import written
from agentk.competition.readers import read_table
from agentk.competition.tables import find, stem


def sample_as_csv(root: Path) -> list[str]:
    """Write <stem>.csv beside a sample submission in another format; what was written, one line."""
    sample = find(root).paths.get("sample")
    if sample is None or sample.name.lower().endswith(".csv"):
        return []
    dest = root / f"{stem(sample)}.csv"
    if dest.exists():
        return []
    written.write_csv(read_table(sample, dtype=str), dest)
    return [f"{dest.name}: a CSV copy of the sample submission {sample.name}"]
