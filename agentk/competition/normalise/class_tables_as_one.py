"""Train rows in one table per class, named by it (agentk.competition.class_tables: train_low.csv beside
train_high.csv, or train/low.csv): one train table with the class as its target column stands in for them,
<their shared name>.csv (or <name>_by_class.csv where that is taken)."""

from pathlib import Path

from agentk.competition import class_tables, written
from agentk.competition.readers import read_table
from agentk.competition.tables import candidates, file_role, find, stem
from agentk.core.errors import BadInput


def class_tables_as_one(root: Path) -> list[str]:
    """The conversion on the folder `root`; what was written, one line each."""
    replaced = {root / original for original in written.stand_ins(root)}
    found = [p for p in candidates(root) if p not in replaced]
    samples = [p for p in found if file_role(p, root) == "sample"]
    others = [p for p in found if p not in samples]
    if len(samples) > 1 and find(root).paths.get("sample") in samples:  # two stages' samples: the scored one
        samples = [find(root).paths["sample"]]
    if len(samples) != 1 or len(others) < 3:  # two classes' tables and the test table at least
        return []
    try:
        sample = read_table(samples[0], dtype=str)
        heads = {p: read_table(p, dtype=str, nrows=5) for p in others}
        predicted = list(sample.columns[1:])
        came = {root / standing: root / original for original, standing in written.stand_ins(root).items()}
        stems = {p: (came.get(p, p).parent, stem(came.get(p, p))) for p in others}  # a JSON's CSV: the JSON's place
        found_group = class_tables.find_group(heads, lambda p: read_table(p, dtype=str), stems, root, sample, predicted)
    except BadInput:
        return []
    if found_group is None:
        return []
    group, frames = found_group
    target = class_tables.target_name(predicted, list(heads[next(iter(group.tables))].columns))
    dest = root / f"{group.name}.csv"
    dest = dest if group.name and not dest.exists() else root / f"{group.name or 'train'}_by_class.csv"
    written.stand_in(root, list(group.tables), class_tables.as_one(group, frames, target), dest)
    listed = ", ".join(f"{p.relative_to(root).as_posix()} ({cls})" for p, cls in group.tables.items())
    return [f"{dest.name}: the train rows of one table per class as one table, the class in {target!r}: {listed}"]
