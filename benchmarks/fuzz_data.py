"""Seeded data fuzzing: does any input crash `agentk setup`?

    uv run python benchmarks/fuzz_data.py [--cases 1000] [--seed 0] [--jobs 2] [--timeout 180] [--out DIR]
                                          [--mutation NAME] [--only-seed N ...] [--keep] [--fresh] [--rerun-failures]
    uv run python benchmarks/fuzz_data.py --list
    uv run python benchmarks/fuzz_data.py --report [--out DIR]

Each case (testing/data_fuzz.py) copies a bundled example to a temporary folder, applies one seeded
mutation to its files (one case in five a second one): hexadecimal ids and cells, numbers out of a float's
range, the spellings of inf and nan, 10,000-character cells, control characters and NUL bytes, mixed encodings,
ragged rows, duplicated headers, header-only tables, thousands of empty columns, JSON nested 10,000 deep,
truncated archives and images, zip slip, symlink loops, a FIFO. It then runs `agentk setup <folder>
--workspace <ws>` in a child process with no standard input, and fails the case when the exit code is not 0, 1
or 2 (a signal), the run outlives --timeout (a hang), "Traceback" is printed, a non-zero exit does not end with
one `agentk: ...` line, the folder's files, names or links changed, or an archive member escaped the workspace.

Case k of a run is seed --seed + k; its mutation is MUTATIONS[seed % their number] unless --mutation names one,
so `--only-seed N` (with the same --mutation, if any) rebuilds a case exactly. Results go to
<out>/fuzz_data.json, one record per case, written as each case ends: a second run with the same --out skips the
cases already there (--fresh starts over). The table goes to <out>/fuzz_data.md.

Exit 0 when no case failed, 1 when one did, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from testing.data_fuzz import FAILURES, MUTATIONS, Result, make_case, run_case  # noqa: E402

COLUMNS = ("exit 0", "exit 1", "exit 2", *FAILURES)


def key(seed: int, mutation: str | None) -> str:
    """A case's key in the results: its seed, and the mutation when one was forced."""
    return f"{seed}" if mutation is None else f"{seed}:{mutation}"


def reproduce(record: dict) -> str:
    forced = f" --mutation {record['forced']}" if record.get("forced") else ""
    return f"uv run python benchmarks/fuzz_data.py --only-seed {record['seed']}{forced} --keep"


def table(records: list[dict]) -> str:
    """Cases by mutation x outcome, median and max seconds, then every failing case."""
    rows: dict[str, list[dict]] = defaultdict(list)
    for r in records:
        rows[r["mutations"][0] if len(r["mutations"]) == 1 else "(two mutations)"].append(r)
    order = [m for m in MUTATIONS if m in rows] + [m for m in sorted(rows) if m not in MUTATIONS]
    head = ["mutation", "cases", *COLUMNS, "median s", "max s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]

    def row(name: str, rs: list[dict]) -> str:
        counts = [sum(r["rc"] == c for r in rs) for c in (0, 1, 2)]
        counts += [sum(f in r["failures"] for r in rs) for f in FAILURES]
        secs = [r["seconds"] for r in rs]
        cells = [name, len(rs), *counts, f"{statistics.median(secs):.1f}", f"{max(secs):.1f}"]
        return "| " + " | ".join(str(c) if c != 0 else "." for c in cells) + " |"

    lines += [row(name, rows[name]) for name in order]
    lines.append(row("**all**", records))
    failing = [r for r in records if r["failures"]]
    lines += ["", f"{len(failing)} failing case(s) of {len(records)}" + (":" if failing else ".")]
    for r in sorted(failing, key=lambda r: r["seed"]):
        lines.append(
            f"- seed {r['seed']} {'+'.join(r['mutations'])} on {r['example']}: {', '.join(r['failures'])}"
            f" (rc {r['rc']}, {r['seconds']:.1f} s) — {'; '.join(r['notes'])}"
        )
        if r["last_line"]:
            lines.append(f"  last line: {r['last_line'][:300]!r}")
        for d in r["detail"][:5]:
            lines.append(f"  {d[:300]}")
        lines.append(f"  reproduce: `{reproduce(r)}`")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=1000, help="how many cases (seeds --seed, --seed + 1, ...)")
    ap.add_argument("--seed", type=int, default=0, help="the first case's seed")
    ap.add_argument("--jobs", type=int, default=2, help="cases at a time")
    ap.add_argument("--timeout", type=float, default=180, help="seconds a case may run before it is a hang")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out")
    ap.add_argument("--mutation", help="run this mutation only (see --list)")
    ap.add_argument("--only-seed", type=int, nargs="+", help="run these seeds only (and print their stderr)")
    ap.add_argument(
        "--rerun-failures", action="store_true", help="run the recorded failing cases again, replacing their records"
    )
    ap.add_argument("--keep", action="store_true", help="keep each case's folder and workspace (paths printed)")
    ap.add_argument("--fresh", action="store_true", help="ignore the results already in --out")
    ap.add_argument("--list", action="store_true", help="list the mutations and the examples they apply to")
    ap.add_argument("--report", action="store_true", help="print the table of the results in --out, run nothing")
    args = ap.parse_args(argv)
    if args.list:
        for m in MUTATIONS.values():
            print(f"{m.name:20} {m.doc}\n{'':20} on {', '.join(m.examples)}")
        return 0
    if args.mutation and args.mutation not in MUTATIONS:
        print(f"fuzz_data: no mutation {args.mutation!r} (--list shows them)", file=sys.stderr)
        return 2
    seeds = args.only_seed or list(range(args.seed, args.seed + args.cases))
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "fuzz_data.json"
    if args.report:  # whatever an earlier (perhaps interrupted) run recorded
        records = json.loads(path.read_text()) if path.exists() else []
        print(f"{len(records)} cases in {path}\n\n{table(records)}")
        return 1 if any(r["failures"] for r in records) else 0
    done: dict[str, dict] = {}
    if path.exists() and not args.fresh and not args.only_seed:
        done = {r["key"]: r for r in json.loads(path.read_text())}
    todo = [s for s in seeds if key(s, args.mutation) not in done]
    if args.rerun_failures:  # after a fix: the cases that failed, run again under the current code
        todo = [r["seed"] for r in done.values() if r["failures"] and r["forced"] == args.mutation]
    workdir = Path(tempfile.mkdtemp(prefix="fuzz-data-"))
    print(
        f"{len(seeds)} cases ({len(seeds) - len(todo)} already in {path}), {args.jobs} at a time, "
        f"{args.timeout:.0f} s each at most; cases in {workdir}",
        flush=True,
    )
    lock, start = threading.Lock(), time.monotonic()

    def one(seed: int) -> Result:
        return run_case(make_case(seed, args.mutation), timeout=args.timeout, workdir=workdir, keep=args.keep)

    with ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(one, s): s for s in todo}
        for n, fut in enumerate(as_completed(futures), 1):
            seed = futures[fut]
            try:
                result = fut.result()
            except Exception as exc:  # noqa: BLE001 - the harness's own error, reported and not recorded
                print(f"[{n}/{len(todo)}] seed {seed}: the harness failed: {exc!r}", flush=True)
                continue
            record = {"key": key(seed, args.mutation), "forced": args.mutation, **result.to_json()}
            with lock:
                done[record["key"]] = record
                if not args.only_seed:
                    tmp = path.with_suffix(".tmp")
                    tmp.write_text(json.dumps(sorted(done.values(), key=lambda r: r["seed"]), indent=1))
                    tmp.replace(path)
            bad = f"  FAILED: {', '.join(result.failures)}" if result.failures else ""
            print(
                f"[{n}/{len(todo)}] seed {seed} {'+'.join(result.mutations)}"
                f" on {result.example}: {result.outcome} in {result.seconds:.1f} s{bad}",
                flush=True,
            )
            if args.only_seed:
                print(f"  {'; '.join(result.notes)}\n  --- stderr (tail) ---\n{result.stderr_tail}")
                for d in result.detail:
                    print(f"  {d}")
    records = [done[key(s, args.mutation)] for s in seeds if key(s, args.mutation) in done]
    text = table(records)
    wall = time.monotonic() - start
    print(f"\n{len(records)} cases; this run {len(todo)} in {wall:.0f} s wall ({args.jobs} jobs)\n")
    print(text)
    if not args.only_seed:
        (args.out / "fuzz_data.md").write_text(text + "\n")
        print(f"\nwritten: {args.out / 'fuzz_data.md'}, {path}")
    if args.keep:
        print(f"cases kept in {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    return 1 if any(r["failures"] for r in records) else 0


if __name__ == "__main__":
    sys.exit(main())
