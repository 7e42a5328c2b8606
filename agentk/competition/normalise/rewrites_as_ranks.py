"""A text target that rewrites an input (agentk.competition.rewrites): the train, test and sample tables written
with the target as the rank of its rewrite among the source value's candidates and the neighbouring rows' source
values beside, standing in for them, with each sample row's candidates; the record last, as it marks the work
done."""

import json
from pathlib import Path

import pandas as pd

from agentk.competition import rewrites, written
from agentk.competition.readers import read_table
from agentk.competition.tables import find, sample_columns, stem


def rewrites_as_ranks(root: Path) -> list[str]:
    """The conversion on the folder `root`; what was written, one line each."""
    root = Path(root)
    if (root / rewrites.RECORD).exists():
        return []
    written.start_over(root, rewrites.RANKED)
    paths = find(root).paths
    if not {"sample", "train", "test"} <= set(paths):
        return []
    head = {role: read_table(paths[role], nrows=rewrites.HEAD, dtype=str) for role in ("sample", "train", "test")}
    layout = sample_columns(head["sample"], head["train"], head["test"])
    if rewrites.detect(head["train"], head["test"], layout.predicted) is None:
        return []  # the heads tell: every table is read whole only for a rewrite
    sample = read_table(paths["sample"], dtype=str)
    train, test = read_table(paths["train"], dtype=str), read_table(paths["test"], dtype=str)
    rec = rewrites.detect(train, test, layout.predicted)
    rows = rewrites.source_rows(sample, layout.id, test) if rec else None
    if rows is None:
        return []
    rec["id"] = layout.id
    cands, stats = rewrites.candidates(train, rec), rewrites.value_stats(train, rec)
    ranked_train = train.assign(**{rec["target"]: rewrites.ranks(train[rec["source"]], train[rec["target"]], cands)})
    ids = sample[layout.id] if layout.id is not None else pd.Series(range(len(sample)))
    table = rewrites.candidate_table(ids, test[rec["source"]].iloc[rows].reset_index(drop=True), cands)
    written.write_csv(table, root / rewrites.CANDIDATES)
    done = [
        f"{rewrites.CANDIDATES}: each test row's candidate rewrites of {rec['source']!r} ({table.shape[1] - 1} at most)"
    ]
    context = f"the previous and next rows' {rec['source']!r} and the share of train's rows copying it beside"
    for role, frame, what in (
        ("sample", sample.assign(**{rec["target"]: 0}), f"ranks for {rec['target']!r}"),
        ("test", rewrites.with_context(test, rec["source"], stats), context),
        ("train", rewrites.with_context(ranked_train, rec["source"], stats), f"{rec['target']!r} ranked; {context}"),
    ):  # train last: its table marks the work done
        dest = root / f"{stem(paths[role])}{rewrites.RANKED}.csv"
        written.stand_in(root, [paths[role]], frame, dest)
        done.append(f"{dest.name}: {paths[role].name} with {what}")
    (root / rewrites.RECORD).write_text(json.dumps(rec, indent=1))
    done.append(
        f"{rewrites.RECORD}: {rec['target']!r} rewrites {rec['source']!r} (copies it in "
        f"{(ranked_train[rec['target']] == 0).mean():.1%} of train's rows, rewrites {len(cands)} values); submissions "
        "are written back as text"
    )
    return done
