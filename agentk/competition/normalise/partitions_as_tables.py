"""A partitioned dataset (agentk.competition.partitions: key=value folders, or parts in a folder named as a
table) gets one CSV standing in for it, the keys of its folder names as columns: <name>.csv beside it, or
<name>_partitioned.csv when that is taken. The maps then read one plain table."""

from pathlib import Path

from agentk.competition import partitions, written
from agentk.competition.files import walk


def partitions_as_tables(root: Path) -> list[str]:
    """The conversion on the folder `root`; what was written, one line each."""
    done = []
    recorded = set(written.stand_ins(root))
    for folder in partitions.datasets(root):
        if folder.relative_to(root).as_posix() in recorded:
            continue
        name = partitions.stem(folder)
        dest = root / f"{name}.csv"
        dest = dest if not dest.exists() else root / f"{name}_partitioned.csv"
        frame = partitions.read_dataset(folder)
        written.stand_in(root, [folder], frame, dest)
        keys = [c for c in frame.columns if any(part.startswith(f"{c}=") for part in _folder_names(folder))]
        done.append(
            f"{dest.name}: the parts of {folder.name}/"
            + (f", partitioned by {keys}," if keys else "")
            + " as one table"
        )
    return done


def _folder_names(folder: Path) -> set[str]:
    return {part for p in walk(folder, 16) for part in p.relative_to(folder).parts[:-1]}
