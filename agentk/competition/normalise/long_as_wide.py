"""A long sample submission (agentk.competition.long_format) written wide, with the long train or test table
beside it, or a test table of the sample's keys where nothing else names the test samples; the record of the
pivot last, as it marks the work done."""

import json
from pathlib import Path

import pandas as pd

from agentk.competition import written
from agentk.competition.long_format import RECORD, WIDE, detect, to_wide
from agentk.competition.readers import read_table
from agentk.competition.tables import find, stem, test_keys


def long_as_wide(root: Path) -> list[str]:
    """The conversion on the folder `root`; what was written, one line each."""
    root = Path(root)
    if (root / RECORD).exists():
        return []
    written.start_over(root, WIDE)
    paths = find(root).paths
    if "sample" not in paths or "train" not in paths:
        return []
    sample = read_table(paths["sample"], dtype=str)
    train = read_table(paths["train"], dtype=str)
    test = read_table(paths["test"], dtype=str) if "test" in paths else None
    rec = detect(sample, train, test)
    if rec is None:
        return []
    rec["sample"] = paths["sample"].relative_to(root).as_posix()
    long = {"sample": sample, "train": train if rec["train"] == "long" else None}
    long["test"] = test if test is not None and rec["id"] in test.columns else None
    done = []
    for role, frame in long.items():
        if frame is not None:
            dest = root / f"{stem(paths[role])}{WIDE}.csv"
            wide = to_wide(frame, rec, grid=role != "train")
            written.stand_in(root, [paths[role]], wide, dest)
            done.append(f"{dest.name}: the long {paths[role].name} as one row per {rec['key']!r} ({len(wide)} rows)")
    keys = to_wide(sample, rec, keep=False)[rec["key"]]
    if test is None and not keys.isin(test_keys(root, None)).any():
        written.write_csv(pd.DataFrame({rec["key"]: keys}), root / "test.csv")
        done.append(f"test.csv: the {len(keys)} test keys of {paths['sample'].name}, which no other file names")
    (root / RECORD).write_text(json.dumps(rec, indent=1))
    done.append(
        f"{RECORD}: {paths['sample'].name} has one row per {rec['key']!r} and target ({len(rec['targets'])} targets "
        f"after {rec['sep']!r}: {', '.join(rec['targets'][:4])}{', ...' if len(rec['targets']) > 4 else ''}); "
        "submissions are written back in its rows"
    )
    return done
