"""What the checks read from the workspace, through agentk.workspace; errors become the check's failure, a
message that names the file and what to do."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import pandas as pd

from agentk import workspace
from agentk.competition.dataview import find_tables
from agentk.competition.readers import read_table
from agentk.competition.tables import sample_columns_of
from agentk.workspace import Workspace


def fail(message: str) -> None:
    raise AssertionError(message)


@contextmanager
def failing_on(*errors: type[Exception]):
    """The product's errors (the message already says what is wrong) fail the check."""
    try:
        yield
    except errors as exc:
        fail(str(exc))


def sample_submission(ws: Path) -> pd.DataFrame:
    tables = find_tables(Workspace(ws).raw)
    if "sample" not in tables:
        fail(f"no sample submission under {Workspace.RAW}/: the fetch stage must link the competition files")
    return read_table(tables["sample"], dtype=str)


def prediction_columns(ws: Path) -> list[str]:
    """The sample submission's columns that are predicted: not its id, not the columns repeating test inputs."""
    layout = sample_columns_of(Workspace(ws).raw)
    if layout is None:
        fail(f"no sample submission under {Workspace.RAW}/: the fetch stage must link the competition files")
    return layout.predicted


def raw_table(ws: Path, role: str) -> pd.DataFrame:
    return read_table(find_tables(Workspace(ws).raw)[role])


def read_map(ws: Path, name: str) -> pd.DataFrame:
    """The map file `name` of the workspace."""
    path = Path(ws) / name
    if not path.exists():
        fail(f"{name} does not exist: the stage's code must write it into the workspace")
    try:
        return workspace.read_map(path)
    except ValueError as exc:  # not a map: no id column first, or not a CSV file at all
        fail(str(exc) if name in str(exc) else f"{name}: {exc}")


def load(ws: Path, stage: str):
    """A stage's generated module, imported fresh (what its import raises is the generated code's error). Only in a
    child of a check (agentk.core.isolated.call_isolated): never where the checks themselves run."""
    path = Workspace(ws).code(stage)
    if not path.exists():
        fail(f"{path.name} does not exist")
    return Workspace(ws).load(stage)


def train_targets(ws: Path) -> pd.DataFrame:
    """The train target map without its id column."""
    return read_map(ws, Workspace(ws).target_map.name).drop(columns="id")


def test_ids(ws: Path) -> pd.Series:
    """The test samples' ids, from the first test input map."""
    maps = Workspace(ws).input_maps("test")
    if not maps:
        fail(f"no {Workspace(ws).input_map('test', '*').name} in the workspace: build the test input maps first")
    path = next(iter(maps.values()))
    ids = pd.read_csv(path, usecols=[0], dtype=str).iloc[:, 0]  # the ids alone: a test map may be gigabytes
    if ids.name != "id":
        fail(f"{path.name}: the first column must be 'id', found {ids.name!r}")
    return ids
