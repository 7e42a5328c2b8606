"""Small helpers the expert uses to write readable generated code."""
from __future__ import annotations

from pathlib import PurePath

from agentk.engine import HOLE


def read_expr(path: str, id_col: str | None = None) -> str:
    """The pandas call that reads a raw table, ids kept as text (leading zeros survive)."""
    name = PurePath(path).name.lower()
    dtype = f", dtype={{{id_col!r}: str}}" if id_col else ""
    if name.endswith((".tsv", ".tsv.gz")):
        return f"pd.read_csv({path!r}, sep='\\t'{dtype})"
    if name.endswith((".csv", ".csv.gz")):
        return f"pd.read_csv({path!r}{dtype})"
    if name.endswith(".jsonl"):
        return f"pd.read_json({path!r}, lines=True)"
    if name.endswith(".json"):
        return f"pd.read_json({path!r})"
    return f"pd.read_parquet({path!r})"


def map_template(output: str, doc: str, preview: str = "table.head().to_string()") -> str:
    """The template of a map stage: build_map() returns the table, running the file writes it."""
    return f'''"""Builds {output}: {doc}"""
import numpy as np
import pandas as pd


def build_map() -> pd.DataFrame:
    {HOLE}


if __name__ == "__main__":
    table = build_map()
    table.to_csv("{output}", index=False)
    print(table.shape)
    print({preview})
'''
