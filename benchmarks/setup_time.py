"""Setup time, two versions side by side: `agentk setup` on the arena's competitions and the bundled examples.

    uv run python benchmarks/setup_time.py --before DIR [--after DIR] [--arena ../shared/arena-dev]
                                           [--only NAME ...] [--out benchmarks/out/setup_time]

DIR is a checkout of agentk (`git worktree add /tmp/before <commit>`); --after defaults to this one. Each
competition is set up by each version in turn (before, after, before, ... so that a busy machine slows both
alike), in a child process (`agentk setup <folder> --workspace <ws> --policy expert`, the console script's
entry run in the checkout with this interpreter), one at a time, each with an empty long-term memory. The table
gives each competition's wall seconds, CPU seconds (of its process tree: less sensitive to a busy machine) and
outcome under both, whether the two setups wrote the same maps and submission (for a change meant to keep
behaviour: the files that differ are named), and the medians over the competitions both set up; it goes to
<out>/setup_time.md and the console. Exit 0 when the run finished, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def competitions(arena: Path | None) -> dict[str, Path]:
    """name -> the folder a user points setup at: the examples', and each arena competition's public/."""
    found = {p.name: p for p in sorted((ROOT / "examples").iterdir()) if (p / "description.md").exists()}
    if arena is not None:
        found |= {f"arena/{p.name}": p / "public" for p in sorted(arena.iterdir()) if (p / "public").is_dir()}
    return found


def run_setup(checkout: Path, folder: Path, ws: Path, timeout: float) -> dict:
    """One setup, with a new, empty long-term memory (as on a new user's machine: neither version learns from the
    other's runs)."""
    memory = ws.with_name(f"{ws.name}_memory")
    for path in (ws, memory):
        shutil.rmtree(path, ignore_errors=True)
    start, group = time.monotonic(), _cpu_group(ws.name)
    entry = "import sys; from agentk.cli import main; sys.exit(main())"  # the console script's, in every version
    cmd = [sys.executable, "-c", entry, "setup", str(folder), "--workspace", str(ws), "--policy", "expert"]
    env = {**os.environ, "AGENTK_MEMORY": str(memory)}
    try:
        done = subprocess.run(
            cmd, cwd=checkout, capture_output=True, stdin=subprocess.DEVNULL, timeout=timeout, env=env,
            preexec_fn=(lambda: (group / "tasks").write_text(str(os.getpid()))) if group else None,
        )  # fmt: skip
        rc = done.returncode
    except subprocess.TimeoutExpired:
        rc = None
    seconds, cpu = time.monotonic() - start, None
    if group is not None:
        cpu = round(int((group / "cpuacct.usage").read_text()) / 1e9, 1)
        group.rmdir()
    state = json.loads((ws / "setup.json").read_text()) if (ws / "setup.json").exists() else {}
    return {"rc": rc, "seconds": round(seconds, 1), "cpu": cpu, "status": state.get("status", "none")}


def outputs_differ(before: Path, after: Path) -> list[str]:
    """The maps and the submission (the setup's outputs a solve reads) that are not byte for byte the same in two
    workspaces, or that only one of them wrote."""
    names = {p.name for ws in (before, after) for p in ws.glob("*.csv") if p.name.endswith("_map.csv")}
    names.add("submission.csv")
    return sorted(
        n
        for n in names
        if not (
            (before / n).is_file() and (after / n).is_file() and (before / n).read_bytes() == (after / n).read_bytes()
        )
    )


CPUACCT = Path("/sys/fs/cgroup/cpuacct")  # cgroup v1's CPU accounting


def _cpu_group(name: str) -> Path | None:
    """A new CPU-accounting cgroup for one setup's whole process tree (the sandboxed stages' processes included,
    which rusage misses: bubblewrap's namespaces), or None where none can be made (the CPU column is then empty).
    CPU seconds are what a setup costs, much less sensitive than its wall time to what else the machine runs."""
    group = CPUACCT / f"agentk-setup-time-{os.getpid()}-{name}"
    try:
        group.mkdir()
    except OSError:
        return None
    return group


def table(rows: dict[str, dict[str, dict]]) -> str:
    lines = [
        "| competition | before s | after s | before CPU s | after CPU s | before | after | maps and submission |",
        "|---|---|---|---|---|---|---|---|",
    ]
    both = []
    for name, r in rows.items():
        b, a = r["before"], r["after"]
        same = "same" if not r.get("differ") else "differ: " + ", ".join(r["differ"])
        lines.append(
            f"| {name} | {b['seconds']} | {a['seconds']} | {b['cpu']} | {a['cpu']} | {b['status']} | {a['status']} "
            f"| {same} |"
        )
        if b["status"] == a["status"] == "done":
            both.append((b["seconds"], a["seconds"], b["cpu"], a["cpu"]))
    if both:
        med = [f"**{statistics.median(x):.1f}**" if None not in x else "-" for x in zip(*both)]
        lines.append(f"| **median of {len(both)} set up by both** | {' | '.join(med)} | | | |")
        # each competition's own change: the medians above may be different competitions' times
        wall = f"{statistics.median(r[1] - r[0] for r in both):+.1f}"
        cpu = f"{statistics.median(r[3] - r[2] for r in both):+.1f}" if None not in sum(both, ()) else "-"
        lines.append(f"| median change per competition (after - before) | | {wall} | | {cpu} | | | |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--before", type=Path, required=True, help="a checkout of the earlier version")
    p.add_argument("--after", type=Path, default=ROOT, help="a checkout of the later version (default: this one)")
    p.add_argument("--arena", type=Path, default=ROOT.parent / "shared" / "arena-dev")
    p.add_argument("--only", nargs="+", metavar="NAME", help="only these competitions (names as in the table)")
    p.add_argument("--timeout", type=float, default=900)
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out" / "setup_time")
    args = p.parse_args(argv)
    for checkout in (args.before, args.after):
        if not (checkout / "agentk" / "cli.py").exists():
            p.error(f"{checkout} is not a checkout of agentk (no agentk/cli.py)")
    found = competitions(args.arena if args.arena.is_dir() else None)
    if args.only:
        found = {n: f for n, f in found.items() if n in args.only}
    rows: dict[str, dict[str, dict]] = {}
    for name, folder in found.items():
        rows[name], spaces = {}, {}
        for label, checkout in (("before", args.before), ("after", args.after)):
            spaces[label] = ws = args.out / "workspaces" / label / name.replace("/", "_")
            rows[name][label] = run_setup(checkout.resolve(), folder.resolve(), ws, args.timeout)
            print(f"{name} {label}: {rows[name][label]}", flush=True)
        rows[name]["differ"] = outputs_differ(spaces["before"], spaces["after"])
    text = table(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "setup_time.md").write_text(text + "\n")
    (args.out / "setup_time.json").write_text(json.dumps(rows, indent=1))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
