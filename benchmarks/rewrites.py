"""Setup + solve on competitions whose text target rewrites an input (the "rewrites" fixtures of
testing/competitions/rewrites.py: tokens of sentences one per row read aloud, a year after "in" and a cardinal
elsewhere; hand-typed words and the words meant), graded on hidden answers beside what a user would run instead:
copying the input (the sample submission of text normalisation does) and the memorising lookup (each value's most
frequent train rewrite, the value itself where train lacks it).

    uv run python benchmarks/rewrites.py [--only NAME ...] [--fresh] [--out DIR] [--budget quick]

The table is benchmarks/solve.py's with a column per baseline's test score; it goes to <out>/rewrites.md. A
finished setup in <out>/<name> is reused.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import solve  # noqa: E402

FIXTURES = ("rewrite-tokens", "corrected-spellings")


def baselines(c: solve.Competition, ws: Path) -> dict[str, Path]:
    """The copy and lookup submissions, from the competition's own files (which column is rewritten: the setup's
    record), written beside agentk's."""
    rec = json.loads((ws / "raw" / "rewrites.json").read_text())
    read = lambda p: pd.read_csv(p, dtype=str, keep_default_na=False)  # noqa: E731
    tables = sorted(c.source.glob("*.csv"))
    train = read(next(p for p in tables if "train" in p.name))
    test = read(next(p for p in tables if "test" in p.name))
    sample = read(next(p for p in tables if "sample" in p.name))
    key, target, source = sample.columns[0], rec["target"], rec["source"]
    written = test.set_index(key)[source].reindex(sample[key]) if key in test else test[source]
    mode = train.groupby(source)[target].agg(lambda s: s.value_counts().index[0])
    out = {}
    for name, values in (("copy", written), ("lookup", written.map(mode).fillna(written))):
        out[name] = ws / f"{name}_submission.csv"
        pd.DataFrame({key: sample[key], target: values.to_numpy()}).to_csv(out[name], index=False)
    return out


def main(argv: list[str] | None = None) -> int:
    return solve.beside_baselines(__doc__, "rewrites", FIXTURES, baselines, ("copy", "lookup"), argv)


if __name__ == "__main__":
    raise SystemExit(main())
