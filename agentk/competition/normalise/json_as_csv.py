"""JSON tables in an orientation pandas' read_json misreads (rows keyed by an id, split, a table nested under a
key, a key-to-value mapping) get a CSV standing in, which every program reads alike."""

from pathlib import Path

from agentk.competition import written
from agentk.competition.files import role_of
from agentk.competition.json_tables import AS_PANDAS_READS, read_json_table
from agentk.competition.tables import candidates, file_role, stem

AS_CSV = "_as_csv"  # <folder>_as_csv/: CSVs standing in for the JSON tables of a split's folder


def json_as_csv(root: Path) -> list[str]:
    """The conversion on the folder `root`; what was written, one line each."""
    done = []
    for path in candidates(root):
        dest = root / f"{stem(path)}.csv"
        if role_of(path) is None and file_role(path, root) in ("train", "test"):  # train/<class>.json: its folder
            dest = root / f"{path.parent.name}{AS_CSV}" / dest.name  # says its role, a folder of CSVs says it alike
        if not path.name.lower().endswith(".json") or dest.exists():
            continue
        try:
            frame, how = read_json_table(path)
        except (ValueError, OSError):
            continue  # not a table: reading it says so where it matters
        nested = frame.map(lambda v: isinstance(v, list | dict)).to_numpy().any()
        # lists in cells (bands, positions) and JSON lines (sequences' records) are read by their own conversions
        if how not in AS_PANDAS_READS and how != "lines" and not nested:
            written.stand_in(root, [path], frame, dest)
            done.append(f"{dest.relative_to(root).as_posix()}: {path.name}, a JSON table oriented as {how}, as a CSV")
    return done
