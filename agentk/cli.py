"""agentk's command line. Exit codes: 0 success, 1 the agent tried and failed, 2 bad input."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from agentk.core.engine import Budget, Engine
from agentk.core.errors import AgentFailed, BadInput
from agentk.core.fileio import read_json

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="agentk: set up and solve Kaggle competitions with a staged, unit-tested agent (Agent K v1.0).")
console = Console(stderr=True)


def _mount_memory() -> None:
    from rag.cli import memory_app
    app.add_typer(memory_app, name="memory", help="The long-term memory: stored code fixes and task experiences.")


_mount_memory()


@app.callback()
def _group() -> None:
    """agentk: set up and solve Kaggle competitions with a staged, unit-tested agent (Agent K v1.0)."""


def _prepare_workspace(ws: Path, resume: bool, force: bool) -> None:
    state = read_json(ws / "setup.json")
    if resume:
        if state is None:
            raise BadInput(f"nothing to resume in {ws}: run `agentk setup <competition>` first")
        return
    if state is not None and not force:
        raise BadInput(f"{ws} already holds a setup ({state.get('status')}): use --resume to continue or --force to start over")
    if ws.exists() and any(ws.iterdir()):
        if state is None:
            raise BadInput(f"{ws} is not empty and is not an agentk workspace: choose another --workspace")
        shutil.rmtree(ws)
    ws.mkdir(parents=True, exist_ok=True)


def _progress(kind: str, info: dict) -> None:
    if kind == "stage":
        tag = {"first": "", "retry": " (retry)", "credit_assignment": " (credit assignment)"}[info["mode"]]
        console.print(f"[dim]…[/dim] {info['stage']}{tag} attempt {info['attempt']}", highlight=False)
    elif kind == "result":
        mark = "[green]✓[/green]" if info["passed"] else "[red]✗[/red]"
        reason = "" if info["passed"] else f" [red]{(info['error'] or '').strip().splitlines()[-1][:160]}[/red]"
        console.print(f"{mark} {info['stage']}{reason}", highlight=False)
    elif kind == "meta":
        mark = "[green]✓[/green]" if info["passed"] else "[red]✗[/red]"
        reason = "" if info["passed"] else f" [red]{(info['error'] or '').strip().splitlines()[-1][:160]} → backtrack[/red]"
        console.print(f"{mark} meta-test {info['meta']}{reason}", highlight=False)


def _summary(ws: Path, state: dict) -> None:
    table = Table(title=f"setup of {ws}", show_lines=False)
    for col in ("stage / meta-test", "status", "attempts", "tests"):
        table.add_column(col)
    for name, st in state["stages"].items():
        tests = ", ".join(f"{k}: {v}" for k, v in st["tests"].items())
        table.add_row(name, st["status"], str(st["attempts"]), escape(tests))
    for name, mt in state["meta_tests"].items():
        table.add_row(escape(f"[meta] {name}"), mt["status"], str(mt["runs"]), "")
    console.print(table)
    light = read_json(ws / "solutions" / "light" / "score.json")
    if light:
        console.print(f"light-solve validation score: {light['score']:.5g} "
                      f"({'higher' if light['higher_is_better'] else 'lower'} is better); "
                      f"submission in {ws / 'submission.csv'}", highlight=False)


@app.command()
def setup(
    source: Optional[str] = typer.Argument(None, help="A Kaggle competition URL (https://www.kaggle.com/competitions/<slug>) "
                                           "or a local competition folder in Kaggle layout. Optional with --resume."),
    workspace: Optional[Path] = typer.Option(None, "--workspace", "-w", help="Where the setup goes \\[default: workspaces/<name>]."),
    resume: bool = typer.Option(False, "--resume", help="Continue a setup that was interrupted."),
    force: bool = typer.Option(False, "--force", help="Start over in a workspace that already holds a setup."),
    policy: Optional[str] = typer.Option(None, "--policy", help="Who writes the code: expert (built in, offline), "
                                         "llm, or hybrid (expert first, LLM on failures) \\[default: hybrid when an LLM "
                                         "endpoint is configured (AGENTK_LLM_BASE_URL, AGENTK_LLM_MODEL), else expert]."),
    stage_attempts: int = typer.Option(4, help="Tries per stage before the setup fails."),
    backtracks: int = typer.Option(3, help="Meta-test failures tolerated before the setup fails."),
) -> None:
    """Set a competition up: fetch, summarise, detect modalities, plan, then build and unit-test the
    input/target maps, target transform, submission formatters and metric; finish with a light solve."""
    from agentk.competition.dataview import competition_name
    from agentk.setup_pipeline import setup_pipeline
    from stages.fetch import check_source
    from tools.kaggle import parse_competition_url

    from agentk.policies.llm import LLMClient, LLMConfig

    config = LLMConfig.load()
    policy = policy or ("hybrid" if config.configured else "expert")
    if policy not in ("expert", "llm", "hybrid"):
        raise BadInput(f"unknown policy {policy!r}: use expert, llm or hybrid")
    if policy != "expert":
        LLMClient(config).check()  # unreachable endpoint or unknown model: exit 2 before anything is written
    if source is None and not resume:
        raise BadInput("give a competition folder, or --resume with --workspace")
    if workspace is None:
        if source is None:
            raise BadInput("--resume needs --workspace")
        workspace = Path("workspaces") / (parse_competition_url(source) or competition_name(Path(source)))
    ws = workspace.resolve()
    if resume:
        state = read_json(ws / "setup.json") or {}
        source = source or state.get("source")
        if not source:
            raise BadInput(f"nothing to resume in {ws}: run `agentk setup <competition>` first")
    slug = parse_competition_url(source)
    if slug:  # credentials, unknown competition, rules not accepted, network: exit 2 before anything is written
        from tools.kaggle import KaggleTool
        tool = KaggleTool()
        tool.metadata(slug)
        tool.files(slug)
    else:
        check_source(Path(source))  # bad input stops here, before anything is written
    _prepare_workspace(ws, resume, force)
    memory = None
    if policy != "expert":  # LLM policies learn from fixes stored in the long-term memory (rag/)
        from rag.memory import Memory, fix_recorder
        memory = Memory()
    engine = Engine(ws, setup_pipeline(source if slug else Path(source)), _policy(policy, config, ws, memory),
                    Budget(stage_attempts=stage_attempts, backtracks=backtracks), on_event=_progress,
                    on_fix=fix_recorder(memory, ws) if memory else None,
                    info={"source": source if slug else str(Path(source).resolve())})
    try:
        state = engine.run(resume=resume)
    finally:
        saved = read_json(ws / "setup.json")
        if saved and saved.get("stages") and saved.get("status") != "bad_input":
            _summary(ws, saved)
    light = ws / "solutions" / "light" / "submission.csv"
    if light.exists():
        shutil.copyfile(light, ws / "submission.csv")
    llm = f", {state['llm_calls']} LLM calls, {state['tokens']} tokens" if state.get("llm_calls") else ""
    console.print(f"[green]setup done[/green] in {state['seconds']:.1f}s{llm}: {ws}", highlight=False)


@app.command()
def solve(
    workspace: Optional[Path] = typer.Option(None, "--workspace", "-w", help="A finished setup \\[default: the newest under workspaces/]."),
    budget: str = typer.Option("quick", "--budget", "-b", help="quick (CPU, a few minutes), standard (hours, a GPU helps) "
                               "or paper (Table 5: max_epochs 30, max_time 10h, batch 32, 20 HEBO trials, blend after 3)."),
    ray: Optional[str] = typer.Option(None, "--ray", envvar="AGENTK_RAY_ADDRESS",
                                      help="Run HEBO trials as Ray tasks: local, auto or ray://host:port (the nodes share "
                                      "the workspace's filesystem; needs `uv sync --extra ray`) \\[default: one process]."),
    parallel_trials: Optional[int] = typer.Option(None, "--parallel-trials", min=1,
                                                  help="With --ray: a network's HEBO trials run K at a time "
                                                  "\\[default: the cluster's GPUs, else 2]."),
) -> None:
    """Build solutions on a finished setup: AutoGluon for tabular inputs, late-fusion networks (image, text and
    tabular embedders) tuned by HEBO, an MLP blend; the best by validation score becomes <ws>/submission.csv.
    Finished solutions are kept in <ws>/solutions/<id>/, so running it again resumes."""
    from agentk.sandbox import run_python_live
    from agentk.solve.solver import PRESETS

    if budget not in PRESETS:
        raise BadInput(f"unknown budget {budget!r}: use {', '.join(PRESETS)}")
    ws = (workspace or _newest_workspace()).resolve()
    state = read_json(ws / "setup.json")
    if state is None:
        raise BadInput(f"{ws} holds no setup: run `agentk setup <competition> --workspace {ws}` first")
    if state.get("status") != "done":
        raise BadInput(f"the setup in {ws} is not finished ({state.get('status')}): run `agentk setup --resume --workspace {ws}`")
    if ray:
        from agentk.ray_backend import import_ray
        import_ray()  # no ray installed: exit 2 before any work
    args = ["-m", "agentk.solve.solver", str(ws), "--budget", budget] + (["--ray", ray] if ray else []) + \
        (["--parallel-trials", str(parallel_trials)] if parallel_trials else [])
    rc = run_python_live(args, cwd=ws)
    summary = read_json(ws / "solve.json") or {}
    if rc != 0 or summary.get("status") != "done":
        raise AgentFailed(f"solve failed: {summary.get('error') or f'exit code {rc}'} (finished solutions are kept; run again to resume)")
    table = Table(title=f"solutions of {ws.name} ({summary['metric']}, {'higher' if summary['higher_is_better'] else 'lower'} is better)")
    for col in ("solution", "kind", "validation", "seconds", "plan"):
        table.add_column(col)
    for s in summary["solutions"]:
        table.add_row(s["id"] + (" ★" if s["id"] == summary["best"] else ""), s["kind"], f"{s['val_score']:.5g}",
                      f"{s['seconds']:.0f}", escape(s["plan"][:90]))
    console.print(table)
    console.print(f"[green]solve done[/green]: {ws / 'submission.csv'} from {summary['best']}", highlight=False)


@app.command()
def curriculum(
    pool: Path = typer.Argument(..., help="A file with one competition folder or Kaggle URL per line (# comments)."),
    rounds: int = typer.Option(10, "--rounds", "-n", help="Rounds in all (a resumed run counts those already done)."),
    submit: bool = typer.Option(False, "--submit", help="Submit each solved task to Kaggle."),
    out: Path = typer.Option(Path("curriculum-run"), "--out", "-o", help="Workspaces, logs and curriculum.json (resumable)."),
    alpha: float = typer.Option(1.0, help="Weight of the difficulty terms (eq. 7)."),
    beta: float = typer.Option(1.0, help="Weight of the recency penalty beta*exp(-lambda) (eq. 7)."),
    r: int = typer.Option(3, "-r", help="Top-r average of similarities (eq. 6)."),
    memory: Optional[Path] = typer.Option(None, help="The long-term memory \\[default: $AGENTK_MEMORY or ~/.agentk/memory]."),
    budget: str = typer.Option("quick", help="The solve budget of each round."),
    policy: Optional[str] = typer.Option(None, "--policy", help="The setups' policy: expert, llm or hybrid \\[default: as `agentk setup`]."),
    setup_only: bool = typer.Option(False, "--setup-only", help="Rounds are setups only: a task counts as done once set up."),
    selection: str = typer.Option("eq7", help="eq7 (the paper's rule); for ablations: recency (the beta penalty "
                                  "alone) or random."),
    seed: int = typer.Option(0, help="Seed of the random tie-breaks and picks of the ablations."),
    ray: Optional[str] = typer.Option(None, "--ray", help="Run each round's steps as Ray tasks: 'local', 'auto' or "
                                      "ray://host:port (workspaces on a filesystem the nodes share) \\[default: one process]."),
) -> None:
    """Run the curriculum (paper 3.3) over a pool: each round picks the task maximising eq. 7, then
    setup -> solve -> (submit) -> memory update (RAG+ on success, which clears the task's RAG-)."""
    from curriculum.cli import curriculum_command

    curriculum_command(pool, rounds, submit, out, alpha, beta, r, memory, budget, policy=policy,
                       setup_only=setup_only, selection=selection, seed=seed, ray=ray)


@app.command()
def submit(
    workspace: Optional[Path] = typer.Option(None, "--workspace", "-w", help="The workspace \\[default: the newest under workspaces/]."),
    message: str = typer.Option("agentk", "--message", "-m", help="The submission's description on Kaggle."),
    solution: Optional[str] = typer.Option(None, "--solution", help="Submit solutions/<id>/submission.csv instead of the best."),
    timeout: float = typer.Option(900, help="Seconds to wait for the score."),
) -> None:
    """Submit the workspace's submission to its Kaggle competition, wait for the score and record it;
    the final pick is the submission with the best public score (paper A.4)."""
    from agentk.submit import submit_workspace

    ws = (workspace or _newest_workspace()).resolve()
    record, pick = submit_workspace(ws, message, solution, timeout)
    table = Table(title=f"submissions of {ws.name}")
    for col in ("when", "file", "status", "public", "private", "final pick"):
        table.add_column(col)
    for r in read_json(ws / "submissions.json", []):
        table.add_row(r["time"][:19], r["file"], r["status"], str(r.get("public_score")), str(r.get("private_score")),
                      "✓" if pick and r["ref"] == pick["ref"] else "")
    console.print(table)
    if record["status"] != "complete":
        raise AgentFailed(f"Kaggle did not score the submission: {record.get('error') or record['status']}")


def _newest_workspace() -> Path:
    found = sorted(Path("workspaces").glob("*/setup.json"), key=lambda p: p.stat().st_mtime)
    if not found:
        raise BadInput("no workspace under workspaces/: run `agentk setup <competition>` first or pass --workspace")
    return found[-1].parent


def _policy(name: str, config, ws: Path, memory=None):
    from agentk.policies.expert import ExpertPolicy
    from agentk.policies.llm import LLMClient
    from agentk.policies.llm_policy import HybridPolicy, LLMPolicy

    if name == "expert":
        return ExpertPolicy(tips=True)  # stored fixes that apply to its code, on retries
    client = LLMClient(config, log_path=ws / "llm_log.jsonl")  # every prompt, answer and token count
    return LLMPolicy(client, memory) if name == "llm" else HybridPolicy(client, memory)


def main() -> None:
    try:
        app(standalone_mode=False)
    except (BadInput, AgentFailed) as exc:
        print(f"agentk: {' '.join(str(exc).split())}", file=sys.stderr)  # one line, never wrapped
        sys.exit(exc.exit_code)
    except typer.Abort:
        sys.exit(130)
    except Exception as exc:  # usage errors of the (vendored) click carry their own exit code
        if hasattr(exc, "show") and isinstance(getattr(exc, "exit_code", None), int):
            exc.show()
            sys.exit(exc.exit_code)
        raise


if __name__ == "__main__":
    main()
