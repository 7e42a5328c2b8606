"""Loading what earlier stages left in the workspace. Errors name the file and what to do."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pandas as pd

from agentk.competition.dataview import find_tables, read_table


def fail(message: str) -> None:
    raise AssertionError(message)


def sample_submission(ws: Path) -> pd.DataFrame:
    tables = find_tables(ws / "raw")
    if "sample" not in tables:
        fail("no sample submission under raw/: the fetch stage must link the competition files")
    return read_table(tables["sample"], dtype=str)


def raw_table(ws: Path, role: str) -> pd.DataFrame:
    return read_table(find_tables(ws / "raw")[role])


def read_map(ws: Path, name: str) -> pd.DataFrame:
    path = ws / name
    if not path.exists():
        fail(f"{name} does not exist: the stage's code must write it into the workspace")
    df = pd.read_csv(path, dtype={"id": str}, keep_default_na=True)
    if len(df.columns) == 0 or df.columns[0] != "id":
        fail(f"{name}: the first column must be 'id', found {list(df.columns[:3])}")
    return df


def load_module(ws: Path, name: str):
    """Import a generated module (code_*.py) fresh from the workspace."""
    path = ws / f"{name}.py"
    if not path.exists():
        fail(f"{path.name} does not exist")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def type_family(s: pd.Series) -> str:
    if s.dtype == bool:
        return "bool"
    if pd.api.types.is_numeric_dtype(s):
        return "numeric"
    if s.isna().all():
        return "empty"
    return "string"


def train_targets(ws: Path) -> pd.DataFrame:
    """The train target map without its id column."""
    return read_map(ws, "train_tab_target_map.csv").drop(columns="id")


def test_ids(ws: Path) -> pd.Series:
    """The test samples' ids, from the first test input map."""
    maps = sorted(Path(ws).glob("test_*_input_map.csv"))
    if not maps:
        fail("no test_*_input_map.csv in the workspace: build the test input maps first")
    return read_map(ws, maps[0].name)["id"]
