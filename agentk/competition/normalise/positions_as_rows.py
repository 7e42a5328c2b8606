"""Records of sequences whose targets are number lists, one value per position (agentk.competition.positions),
written one row per position: train's positions its lists cover, test's the sample's rows."""

from pathlib import Path

from agentk.competition import positions, written
from agentk.competition.readers import read_table
from agentk.competition.tables import stem, to_convert


def positions_as_rows(root: Path) -> list[str]:
    """The conversion on the folder `root`; what was written, one line each."""
    root = Path(root)
    paths = to_convert(root, written.POSITIONS)
    if paths is None:
        return []
    if not all(paths[r].name.lower().endswith((".json", ".jsonl", ".parquet")) for r in ("train", "test")):
        return []  # only these hold lists in a cell
    sample = read_table(paths["sample"], dtype=str)
    if not sample.iloc[:, 0].astype(str).str.match(positions.POSITION_ID).all():
        return []
    train, test = (read_table(paths[r], nested=True) for r in ("train", "test"))
    rec = positions.detect(train, test, sample)
    if rec is None:
        return []
    done = []
    for role, records in (("test", test), ("train", train)):  # train last: its table marks the work done
        rows = positions.as_rows(records, rec, labelled=role == "train")
        if role == "test":
            rows = rows[rows[rec["key"]].isin(set(sample[rec["key"]]))]
        dest = root / f"{stem(paths[role])}{written.POSITIONS}.csv"
        written.stand_in(root, [paths[role]], rows, dest)
        done.append(
            f"{dest.name}: the {len(records)} records of {paths[role].name} as one row per position ({len(rows)} rows"
            f"; each of {', '.join(rec['sequences'])} by its character there and {positions.WINDOW} each side"
            + (f"; {', '.join(rec['lists'][:4])} by their value there)" if role == "train" else ")")
        )
    return done
