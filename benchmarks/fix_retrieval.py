"""How far apart are the errors of the same fault in different competitions, and those of different faults?
This sets rag.memory.SIMILAR_ERROR, the cut-off above which a stored fix is not shown as an example.

    uv run python benchmarks/fix_retrieval.py [--only NAME ...] [--arena ../shared/arena-dev]

Each competition is set up by the expert; then every fault operator of benchmarks/fault_injection.py that
applies to a stage corrupts that stage's code, and the real unit tests (or the meta-tests, for faults that
only they catch) give the error a retry would see. Errors are embedded as the memory stores them
("stage: …\\nerror: …", the packaged MiniLM) and compared across competitions within a stage (retrieval is
filtered by stage): a cut-off should keep every same-fault pair (recall) and few other-fault pairs.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from fault_injection import applicable, markdown_table  # noqa: E402

DEFAULT = ["iris-species", "wine", "digits-images", "spaceship-titanic"]


def fault_errors(comp: str, source: Path, work: Path) -> list[dict]:
    from agentk.core.checks import run_checks
    from agentk.core.engine import Context, Engine
    from agentk.core.memory import WorkingMemory
    from agentk.policies.expert import ExpertPolicy
    from agentk.setup_pipeline import setup_pipeline

    base = work / comp
    Engine(base, setup_pipeline(source), ExpertPolicy()).run()
    stages, metas = setup_pipeline(source)(base)
    expert, rows = ExpertPolicy(), []
    for stage in (s for s in stages if s.kind == "code"):
        correct = expert.act(stage, Context(base, "first", 0, WorkingMemory(), None, None)).code
        for op, code in applicable(correct, stage.name, base).items():
            ws = work / f"{comp}-fault"
            shutil.rmtree(ws, ignore_errors=True)
            shutil.copytree(base, ws, symlinks=True)
            (ws / stage.code_file).write_text(code)
            rep = run_checks(stage.checks, ws, timeout=stage.timeout, code=stage.code_file, output=stage.output)
            error = None if rep.passed else f"{rep.failed}: {rep.error}"
            for meta in (m for m in metas if error is None and stage.name in m.covers):
                rep = run_checks(meta.checks, ws)
                error = None if rep.passed else f"{rep.failed}: {rep.error}"
            if error:
                rows.append({"comp": comp, "stage": stage.name, "op": op, "error": error})
    print(f"{comp}: {sum(r['comp'] == comp for r in rows)} fault errors", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    from rag.memory import SIMILAR_ERROR, embed

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arena", type=Path, default=ROOT.parent / "shared" / "arena-dev")
    ap.add_argument("--only", nargs="*", default=DEFAULT)
    args = ap.parse_args(argv)
    sources = {n: (ROOT / "examples" / n) if (ROOT / "examples" / n).is_dir() else args.arena / n for n in args.only}
    missing = [n for n, p in sources.items() if not p.is_dir()]
    if missing:
        print(f"fix_retrieval: no competition folder for {', '.join(missing)}", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="agentk-fixret-"))
    rows = [r for comp, src in sources.items() for r in fault_errors(comp, src, work)]
    shutil.rmtree(work, ignore_errors=True)
    emb = embed([f"stage: {r['stage']}\nerror: {r['error']}" for r in rows])
    dist = 1 - emb @ emb.T
    same, other = [], []
    for i in range(len(rows)):
        for j in range(i + 1, len(rows)):
            a, b = rows[i], rows[j]
            if a["comp"] != b["comp"] and a["stage"] == b["stage"]:
                (same if a["op"] == b["op"] else other).append(dist[i, j])
    same, other = np.array(same), np.array(other)
    q = [0, 0.25, 0.5, 0.75, 0.9, 1]
    print(f"\n{len(rows)} errors from {len(sources)} competitions; pairs across competitions within a stage\n")
    print(
        markdown_table(
            ["pairs", "n"] + [f"q{int(x * 100)}" for x in q],
            [
                [name, str(len(x))] + [f"{v:.3f}" for v in np.quantile(x, q)]
                for name, x in (("same fault", same), ("other fault", other))
                if len(x)
            ],
        )
    )
    print()
    print(
        markdown_table(
            ["cut-off", "same-fault pairs kept", "other-fault pairs kept"],
            [
                [
                    f"{t:.2f}{' (SIMILAR_ERROR)' if abs(t - SIMILAR_ERROR) < 1e-9 else ''}",
                    f"{np.mean(same <= t):.2f}",
                    f"{np.mean(other <= t):.2f}",
                ]
                for t in sorted({0.05, 0.1, SIMILAR_ERROR, 0.2, 0.3, 0.35, 0.4})
            ],
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
