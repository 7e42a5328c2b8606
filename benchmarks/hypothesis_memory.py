"""Experience that carries over (issue 47, part 5): stage attempts per setup over a sequence of layouts whose first
hypothesis is wrong, with one long-term memory shared along the sequence against a new, empty one for each.

    uv run python benchmarks/hypothesis_memory.py [--layouts 8] [--start 0] [--timeout 600] [--out DIR]

The layouts are the first --layouts regression seeds from --start of testing/layout_fuzz.py that draw
`decoy:described` and `sample:renamed` but neither `columns:odd` nor `labels-file`: the sample names the target otherwise than train, and
train holds a column named as a target, mostly empty, that the description names too, beside a target named neither
way. The expert's first hypothesis for the target column is then that decoy, and its unit test drops it. They run one after another in the same order both ways, so
that with memory a layout can learn from the ones before it. The table: per layout, attempts and whether a
hypothesis was dropped, without and with memory; then the means over the first and second halves of the
sequence (the learning curve). Exit 0 when both runs finished, 2 on bad arguments."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.layout_fuzz import run_layout  # noqa: E402
from testing.layout_fuzz import draw  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--layouts", type=int, default=8)
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--timeout", type=float, default=600)
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out" / "hypothesis_memory")
    args = p.parse_args(argv)
    if args.layouts < 2:
        p.error("--layouts must be at least 2")
    seeds, seed = [], args.start
    while len(seeds) < args.layouts:
        kind, transforms = draw(seed)
        wrong_first = {"decoy:described", "sample:renamed"} <= set(transforms)
        wrong_first = wrong_first and not {"columns:odd", "labels-file"} & set(transforms)
        seeds += [seed] if wrong_first and kind == "regression" else []
        seed += 1
    shared = args.out / "shared-memory"
    shutil.rmtree(shared, ignore_errors=True)
    runs = {}
    for name, memory in (("without", None), ("with", shared)):
        runs[name] = []
        for s in seeds:
            r = run_layout(s, args.out / name, args.timeout, "expert", memory)
            runs[name].append(r)
            print(f"{name} memory: seed {s} {'pass' if r['passed'] else 'FAIL'}, {r['attempts']} attempts", flush=True)
    lines = ["| layout | attempts without memory | dropped | attempts with memory | dropped |", "|---|---|---|---|---|"]
    for a, b in zip(runs["without"], runs["with"]):
        lines.append(
            f"| {a['seed']} | {a['attempts']} | {', '.join(a['revised']) or '-'} | {b['attempts']} | "
            f"{', '.join(b['revised']) or '-'} |"
        )
    half = len(seeds) // 2
    for label, part in (("first half", slice(0, half)), ("second half", slice(half, None))):
        mean = {k: sum(r["attempts"] for r in v[part]) / len(v[part]) for k, v in runs.items()}
        passed = {k: sum(r["passed"] for r in v[part]) for k, v in runs.items()}
        lines.append(
            f"| mean, {label} | {mean['without']:.2f} ({passed['without']} passed) | | "
            f"{mean['with']:.2f} ({passed['with']} passed) | |"
        )
    text = "\n".join(lines)
    (args.out / "hypothesis_memory.md").write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
