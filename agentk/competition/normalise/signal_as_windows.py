"""A train table that is one long signal, and test samples that are segments of such a signal, one file per
sample id (agentk.competition.series.windows): the train signal cut into windows of the segments' median
length, each a row of train_windows.csv (its summary, and the targets, the train columns no segment has, at its
last row), and each segment a row of test_windows.csv, summarised alike; both stand in for the originals. What
was written, one line."""

from pathlib import Path

import numpy as np
import pandas as pd

from agentk.competition import written
from agentk.competition.readers import read_table
from agentk.competition.series import frame_summary, segments, windows
from agentk.competition.tables import find


def signal_as_windows(root: Path) -> list[str]:
    """The conversion on the folder `root`; what was written, one line each."""
    paths = find(root).paths
    if "sample" not in paths or "train" not in paths or written.WINDOWS["test"] in written.stand_ins(root).values():
        return []
    sample = read_table(paths["sample"], dtype=str)
    key = str(sample.columns[0])
    head = read_table(paths["train"], nrows=written.SERIES_HEAD)
    if key in head.columns or (found := segments(root, set(sample[key].astype(str)))) is None:
        return []
    some = [read_table(p) for p in list(found.values())[:: max(1, len(found) // 20)][:20]]
    inputs = [c for c in some[0].columns if c in head.columns and pd.api.types.is_numeric_dtype(some[0][c])]
    targets = [c for c in head.columns if c not in some[0].columns and pd.api.types.is_numeric_dtype(head[c])]
    length = int(np.median([len(f) for f in some]))
    if not inputs or not targets or length < 2:
        return []
    signal = read_table(paths["train"])
    if len(signal) < 2 * length:
        return []
    train = windows(signal, inputs, targets, length, key)
    test = pd.DataFrame([{key: i, **frame_summary(read_table(p)[inputs])} for i, p in found.items()])
    written.stand_in(root, [paths["train"]], train, root / written.WINDOWS["train"])
    written.stand_in(root, list(found.values()), test, root / written.WINDOWS["test"])  # last: it marks the work done
    return [
        f"{written.WINDOWS['train']}: {paths['train'].name}, one long signal, cut into {len(train)} windows of {length} rows "
        f"(the test segments' length), each summarised ({test.shape[1] - 1} features) with {targets} at its last row; "
        f"{written.WINDOWS['test']}: the {len(test)} test segments summarised alike"
    ]
