"""Meta-unit tests (paper A.1.3): they check several stages together and send the episode back to the
first stage they cover when they fail."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from agentk.competition.tables import sample_columns_of
from agentk.core.fileio import write_json
from agentk.core.isolated import call_isolated
from agentk.workspace import TARGET_TRANSFORM, Workspace
from tools.light_solve import light_solve
from tools.map_dataset import MapDataset
from tools.submission import SubmissionMismatch, type_family
from unit_tests_lib.common import fail, failing_on, load, read_map, sample_submission


def check_train_map_dataset(ws: Path) -> None:
    """The map dataset builds from all train maps plus the target transform and loads a batch."""
    heads = []

    def transform(targets: pd.DataFrame) -> np.ndarray:  # the generated transform, called in a child
        child = call_isolated(_transformed, ws, y=targets)
        heads.append(child["heads"])
        return child["t"]

    with failing_on(ValueError):
        ds = MapDataset(ws, "train", transform)
    batch = next(ds.batches(32))
    n = min(32, len(ds))
    if batch["target"].shape != (n, heads[0]):
        fail(f"a batch's targets have shape {batch['target'].shape}, expected ({n}, {heads[0]})")
    for m in ds.modalities:
        if _rows(batch[m]) != n:
            fail(f"a batch has {_rows(batch[m])} {m} inputs for {n} samples")


def _transformed(ws: Path, out: dict, y: pd.DataFrame) -> None:
    """In a child (call_isolated): the transform's number of heads (len(OUTPUTS)) and transform(y)."""
    transform = load(ws, TARGET_TRANSFORM)
    out["heads"] = len(transform.OUTPUTS)
    out["t"] = np.asarray(transform.transform(y), dtype=float)


def _rows(x) -> int:
    return len(next(iter(x.values()))) if isinstance(x, dict) else len(x)


def check_test_maps(ws: Path) -> None:
    """Test maps have the train maps' columns and types; their ids are the sample submission's."""
    paths = Workspace(ws)
    for modality, train_path in paths.input_maps("train").items():
        name = paths.input_map("test", modality).name
        train, test = read_map(ws, train_path.name), read_map(ws, name)
        if list(train.columns) != list(test.columns):
            extra, missing = set(test.columns) - set(train.columns), set(train.columns) - set(test.columns)
            fail(
                f"{name} columns differ from {train_path.name}: missing {sorted(missing)[:5]}, extra {sorted(extra)[:5]}; "
                "build both maps the same way"
            )
        for c in train.columns[1:]:
            a, b = type_family(train[c]), type_family(test[c])
            if a != b and "empty" not in (a, b):
                fail(f"column {c!r} is {a} in {train_path.name} but {b} in {name}: convert both the same way")
        sample, layout = sample_submission(ws), sample_columns_of(paths.raw)
        # a sample without an id column lists the test rows in order: their ids are the row numbers
        want = set(sample[layout.id].astype(str)) if layout.id else {str(i) for i in range(len(sample))}
        ids = set(test["id"])
        if ids != want:
            fail(
                f"{name} ids differ from the sample submission's: {len(want - ids)} missing "
                f"(e.g. {sorted(want - ids)[:2]}), {len(ids - want)} unknown (e.g. {sorted(ids - want)[:2]})"
            )
    with failing_on(ValueError):
        next(MapDataset(ws, "test").batches(32))


def check_light_solve(ws: Path) -> None:
    """Final test: a light solve on a subsample gives a finite validation metric and a valid submission, no worse
    than the constant's: where the light model does not beat the constant the constant is written, and where the
    constant beats it on most bootstrap resamples of the held-out rows the test fails (the maps, target or
    transform may be wrong)."""
    result = call_isolated(_light_solve, ws)["result"]
    if not np.isfinite(result["score"]):
        fail(f"the light solve's validation metric is {result['score']}: the metric, transform or maps are broken")
    out = Workspace(ws).light
    out.folder.mkdir(parents=True, exist_ok=True)
    result.pop("submission").to_csv(out.submission, index=False)
    write_json(out.score, result)
    if result["worse_than_constant"]:
        constant = result["constant"]
        fail(
            f"the light solve's {result['light_model']} validates at {result['score']:.5g}, worse than the constant "
            f"({constant['statistic']}) at {constant['score']:.5g} on {result['n_val']} held-out train rows: check "
            "that the input maps carry the features and the target map the target of each row (the constant's "
            "submission is written meanwhile)"
        )


def _light_solve(ws: Path, out: dict) -> None:
    """In a child (call_isolated): the light solve, which calls the transform, the metric and the formatters."""
    import sklearn.ensemble  # noqa: F401 - load OpenMP first: threadpoolctl limits only loaded libraries
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1), failing_on(SubmissionMismatch):  # a light check: setups side by side share cores
        out["result"] = light_solve(ws)
