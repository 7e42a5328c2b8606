"""A split that comes in parts of the same columns (train_1.csv + train_2.csv, train/part-*.csv, or a folder of
one table per class whose rows carry the class) joined into one CSV at the top of root, named by the folder or
the parts' common stem."""

from pathlib import Path

import pandas as pd

from agentk.competition import written
from agentk.competition.readers import read_table
from agentk.competition.tables import PART, find, stem


def parts_as_one(root: Path) -> list[str]:
    """The conversion on the folder `root`; what was written, one line each."""
    done = []
    for role, parts in find(root).parts.items():
        frames = [read_table(p, dtype=str) for p in parts]  # as text: ids keep their zeros (00005055)
        if any(list(f.columns) != list(frames[0].columns) for f in frames):
            continue  # not parts of one table
        first = parts[0]
        name = first.parent.name if first.parent != root else PART.sub("", stem(first)) or role
        dest = root / f"{name}.csv"
        if dest.exists():
            continue
        written.write_csv(pd.concat(frames, ignore_index=True), dest)
        done.append(f"{dest.name}: {len(parts)} parts of the {role} table joined ({', '.join(p.name for p in parts)})")
    return done
