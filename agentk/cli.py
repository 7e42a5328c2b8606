"""agentk's command line. Exit codes: 0 success, 1 the agent tried and failed, 2 bad input (one line on stderr),
130 interrupted. Consoles stay short: a spinner or progress bars and a summary; every detail goes to <ws>/logs/
(--verbose shows it as it comes), and `agentk report` draws what happened."""

from __future__ import annotations

import os
import sys
import webbrowser
from importlib.metadata import version
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from agentk import api
from agentk.core import crash
from agentk.core.errors import AgentFailed, BadInput
from agentk.core.fileio import read_json
from agentk.core.state import EpisodeState
from agentk.solve.memory import DEFAULT_SHARE
from agentk.workspace import Workspace
from curriculum.cli import curriculum_command
from rag.cli import memory_app

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="agentk: set up and solve Kaggle competitions with a staged, unit-tested agent (Agent K v1.0).",
)
console = Console(stderr=True)


def _mount_memory() -> None:

    app.add_typer(memory_app, name="memory", help="The long-term memory: stored code fixes and task experiences.")


_mount_memory()


def _version(value: bool) -> None:
    if value:
        print(f"agentk {version('agentk')}")
        raise typer.Exit()


@app.callback()
def _group(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """agentk: set up and solve Kaggle competitions with a staged, unit-tested agent (Agent K v1.0).
    Exit codes: 0 done, 1 the agent tried and failed, 2 bad input (one line on stderr), 130 interrupted."""


class _SetupConsole:
    """The setup's console: a spinner naming the stage under way (on a terminal) and a line for each failure or
    warning; with verbose, every event and the table of stages. Every event goes to <ws>/logs/setup.log anyway."""

    def __init__(self, verbose: bool):
        self.verbose, self.passed, self.bar, self.task = verbose, 0, None, None

    def __call__(self, kind: str, info: dict) -> None:
        line = api.describe_event(kind, info)
        if kind == "stage" and not self.verbose and console.is_terminal:
            if self.bar is None:  # started on the first stage: bad input before it leaves nothing running
                self.bar = Progress(
                    SpinnerColumn(),
                    TextColumn("{task.description}"),
                    TimeElapsedColumn(),
                    console=console,
                    transient=True,
                )
                self.task = self.bar.add_task("setup", total=None)
                self.bar.start()
            self.bar.update(self.task, description=f"setup: {line} ({self.passed} stages passed)")
        if kind == "result" and info["passed"]:
            self.passed += 1
        failed = kind in ("result", "meta") and not info["passed"]
        if line and (self.verbose or failed or kind == "warning"):
            console.print(line, highlight=False, soft_wrap=True)  # one event, one line, whatever the terminal width
        if kind == "setup_end":
            if self.bar is not None:
                self.bar.stop()
            state = info["state"]
            if self.verbose and state and state.stages and state.status != "bad_input":
                _summary(Workspace(info["workspace"]), state)


def _summary(ws: Workspace, state: EpisodeState) -> None:
    table = Table(title=f"setup of {ws.root}", show_lines=False)
    for col in ("stage / meta-test", "status", "attempts", "tests"):
        table.add_column(col)
    for name, st in state.stages.items():
        tests = ", ".join(f"{k}: {v}" for k, v in st.tests.items())
        table.add_row(name, st.status, str(st.attempts), escape(tests))
    for name, mt in state.meta_tests.items():
        table.add_row(escape(f"[meta] {name}"), mt.status, str(mt.runs), "")
    console.print(table)


@app.command()
def setup(
    source: str | None = typer.Argument(
        None,
        help="A Kaggle competition URL (https://www.kaggle.com/competitions/<slug>) "
        "or a local competition folder in Kaggle layout. Optional with --resume.",
    ),
    workspace: Path | None = typer.Option(
        None, "--workspace", "-w", help="Where the setup goes \\[default: workspaces/<name>]."
    ),
    resume: bool = typer.Option(False, "--resume", help="Continue a setup that was interrupted."),
    force: bool = typer.Option(False, "--force", help="Start over in a workspace that already holds a setup."),
    policy: str | None = typer.Option(
        None,
        "--policy",
        help="Who writes the code: expert (built in, offline), "
        "llm, or hybrid (expert first, LLM on failures) \\[default: hybrid when an LLM "
        "endpoint is configured (AGENTK_LLM_BASE_URL, AGENTK_LLM_MODEL), else expert].",
    ),
    stage_attempts: int = typer.Option(4, help="Tries per stage before the setup fails."),
    backtracks: int = typer.Option(3, help="Meta-test failures tolerated before the setup fails."),
    unsafe_sandbox: bool = typer.Option(
        False,
        "--unsafe-sandbox",
        help="Run LLM-written code even where bubblewrap cannot sandbox it (it then runs with your files, "
        "network and home directory in reach).",
    ),
    try_unsupported: bool = typer.Option(
        False,
        "--try-unsupported",
        help="Let the LLM (--policy llm or hybrid) try a task agentk refuses as unsupported (segmentation, "
        "detection, text generation...); the built-in expert never does.",
    ),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Show every step and the table of stages."),
) -> None:
    """Set a competition up: fetch, summarise, detect modalities, plan, then build and unit-test the
    input/target maps, target transform, submission formatters and metric; finish with a light solve.
    Exit codes: 0 done; 1 the agent ran out of tries (setup.json says which stage and why; --resume continues);
    2 bad input or an unsupported task (one line, nothing written)."""
    result = api.run_setup(
        source,
        workspace,
        policy,
        resume=resume,
        force=force,
        stage_attempts=stage_attempts,
        backtracks=backtracks,
        unsafe_sandbox=unsafe_sandbox,
        try_unsupported=try_unsupported,
        on_event=_SetupConsole(verbose),
    )
    ws = Workspace(result.workspace)
    console.print(
        api.setup_summary(result.state).replace("setup done", "[green]setup done[/green]", 1),
        highlight=False,
        soft_wrap=True,
    )
    light = read_json(ws.light.score)
    if light:
        console.print(
            f"light solution: validation score {light['score']:.5g} "
            f"({'higher' if light['higher_is_better'] else 'lower'} is better) in {ws.submission}",
            highlight=False,
            soft_wrap=True,
        )
    console.print(f"workspace {ws.root}; log {ws.setup_log}", highlight=False, soft_wrap=True)


@app.command()
def solve(
    workspace: Path | None = typer.Option(
        None, "--workspace", "-w", help="A finished setup \\[default: the newest under workspaces/]."
    ),
    budget: str = typer.Option(
        "quick",
        "--budget",
        "-b",
        help="quick (CPU, at most 15 minutes), standard (at most 8 hours, a GPU helps) "
        "or paper (Table 5: up to 30 epochs per trial, batch 32, 20 HEBO trials, blend after 3); networks are "
        "planned in epochs and trials from the data and the machine, not in seconds.",
    ),
    ray: str | None = typer.Option(
        None,
        "--ray",
        envvar="AGENTK_RAY_ADDRESS",
        help="Run HEBO trials as Ray tasks: local, auto or ray://host:port (the nodes share "
        "the workspace's filesystem; needs `uv sync --extra ray`) \\[default: one process].",
    ),
    parallel_trials: int | None = typer.Option(
        None,
        "--parallel-trials",
        min=1,
        help="With --ray: a network's HEBO trials run K at a time \\[default: the cluster's GPUs, else 2].",
    ),
    weights: Path | None = typer.Option(
        None,
        "--weights",
        metavar="DIR",
        help="A folder of pretrained image backbone weights, for machines without Internet: <timm name>.safetensors "
        "(or .pth/.pt/.bin, e.g. resnet18.safetensors), <hub id>/model.safetensors (e.g. "
        "timm/resnet18.a1_in1k/model.safetensors), torch hub's file name, or a copied Hugging Face cache. "
        "Without weights there or in the local caches, images train a tiny CNN from scratch "
        "\\[default: the caches only].",
    ),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Show the whole log (epochs, trials, AutoGluon)."),
    memory_limit: float | None = typer.Option(
        None,
        "--memory-limit",
        metavar="GB",
        help="The most memory the solve's processes may use together; the solver states its estimate against it "
        f"and keeps decoded images on disk past it \\[default: {DEFAULT_SHARE:.0%} of this machine's memory].",
    ),
    time_limit: float | None = typer.Option(
        None,
        "--time-limit",
        metavar="MINUTES",
        help="The wall time the solve ends within, however busy the machine: each solution runs under what is left "
        "of it, and the best finished so far is always <ws>/submission.csv \\[default: the budget's: quick 15, "
        "standard 480].",
    ),
) -> None:
    """Build solutions on a finished setup: AutoGluon for tabular inputs, late-fusion networks (image, text and
    tabular embedders) tuned by HEBO, an MLP blend; the best by validation score (on a table of at most 2,000 rows, by
    5-fold cross-validation) becomes <ws>/submission.csv.
    Finished solutions are kept in <ws>/solutions/<id>/, so running it again resumes. Writes <ws>/report.html.
    Exit codes: 0 done; 1 the solve failed (the reason, and <ws>/logs/solve.log for details); 2 bad input
    (no finished setup, unknown budget, no --weights folder, the workspace in use)."""
    result = api.run_solve(
        workspace,
        budget,
        ray=ray,
        parallel_trials=parallel_trials,
        weights=weights,
        verbose=verbose,
        memory_limit=memory_limit,
        time_limit=time_limit * 60 if time_limit is not None else None,
    )
    summary = result.summary
    ws = Workspace(result.workspace)
    table = Table(
        title=f"solutions of {ws.root.name} (validation {summary['metric']}, "
        f"{'higher' if summary['higher_is_better'] else 'lower'} is better)"
    )
    cv = summary.get("selected_by") == "cross-validation"  # a small table: compared by their out-of-fold scores
    for col in ("solution", "kind", "validation", *(("cross-validated",) if cv else ()), "seconds"):
        table.add_column(col)
    for s in summary["solutions"]:
        table.add_row(
            s["id"] + (" ★" if s["id"] == summary["best"] else ""),
            s["kind"],
            f"{s['val_score']:.5g}",
            *((f"{s['cv_score']:.5g}" if s.get("cv_score") is not None else "–",) if cv else ()),
            f"{s['seconds']:.0f}",
        )
    console.print(table)
    console.print(f"[green]solve done[/green]: {ws.submission} from {summary['best']}", highlight=False, soft_wrap=True)
    console.print(f"report {api.run_report(ws.root)}; log {ws.solve_log}", highlight=False, soft_wrap=True)


@app.command()
def curriculum(
    pool: Path = typer.Argument(..., help="A file with one competition folder or Kaggle URL per line (# comments)."),
    rounds: int = typer.Option(10, "--rounds", "-n", help="Rounds in all (a resumed run counts those already done)."),
    submit: bool = typer.Option(False, "--submit", help="Submit each solved task to Kaggle."),
    out: Path = typer.Option(
        Path("curriculum-run"), "--out", "-o", help="Workspaces, logs and curriculum.json (resumable)."
    ),
    alpha: float = typer.Option(1.0, help="Weight of the difficulty terms (eq. 7)."),
    beta: float = typer.Option(1.0, help="Weight of the recency penalty beta*exp(-lambda) (eq. 7)."),
    r: int = typer.Option(3, "-r", help="Top-r average of similarities (eq. 6)."),
    memory: Path | None = typer.Option(
        None, help="The long-term memory \\[default: $AGENTK_MEMORY or ~/.agentk/memory]."
    ),
    budget: str = typer.Option("quick", help="The solve budget of each round."),
    policy: str | None = typer.Option(
        None, "--policy", help="The setups' policy: expert, llm or hybrid \\[default: as `agentk setup`]."
    ),
    setup_only: bool = typer.Option(
        False, "--setup-only", help="Rounds are setups only: a task counts as done once set up."
    ),
    selection: str = typer.Option(
        "eq7", help="eq7 (the paper's rule); for ablations: recency (the beta penalty alone) or random."
    ),
    seed: int = typer.Option(0, help="Seed of the random tie-breaks and picks of the ablations."),
    ray: str | None = typer.Option(
        None,
        "--ray",
        help="Run each round's steps as Ray tasks: 'local', 'auto' or "
        "ray://host:port (workspaces on a filesystem the nodes share) \\[default: one process].",
    ),
    unsafe_sandbox: bool = typer.Option(
        False, "--unsafe-sandbox", help="Let the setups run LLM-written code where bubblewrap cannot sandbox it."
    ),
) -> None:
    """Run the curriculum (paper 3.3) over a pool: each round picks the task maximising eq. 7, then
    setup -> solve -> (submit) -> memory update (RAG+ on success, which clears the task's RAG-). Each step's output
    goes to <out>/logs/; writes <out>/report.html at the end. Exit codes: 0 the rounds ran (a failed task is an
    outcome, in the table and the report); 2 bad input (pool file, options, the out folder in use)."""
    options = dict(locals())  # the parsed options, first thing: Curriculum's keywords, checked by curriculum_command

    curriculum_command(options.pop("pool"), options.pop("out"), options.pop("memory"), **options)


@app.command()
def submit(
    workspace: Path | None = typer.Option(
        None, "--workspace", "-w", help="The workspace \\[default: the newest under workspaces/]."
    ),
    message: str = typer.Option("agentk", "--message", "-m", help="The submission's description on Kaggle."),
    solution: str | None = typer.Option(
        None, "--solution", help="Submit solutions/<id>/submission.csv instead of the best."
    ),
    timeout: float = typer.Option(900, help="Seconds to wait for the score."),
    light: bool = typer.Option(
        False, "--light", help="Submit the setup's light solution (solutions/light/), with or without a solve."
    ),
) -> None:
    """Submit the workspace's submission to its Kaggle competition, wait for the score and record it;
    the final pick is the submission with the best public score (paper A.4). The workspace's submission goes only
    after a finished solve (--light sends the setup's light solution instead). Exit codes: 0 scored; 1 Kaggle did
    not score it; 2 bad input (a local workspace, an unfinished solve, a file unlike the sample, no credentials)."""
    api.run_submit(workspace, message, solution, timeout, on_event=_submissions, light=light)


@app.command()
def report(
    workspace: Path | None = typer.Option(
        None, "--workspace", "-w", help="The workspace \\[default: the newest under workspaces/]."
    ),
    curriculum: Path | None = typer.Option(
        None, "--curriculum", "-c", help="A curriculum's out folder (holding curriculum.json) instead of a workspace."
    ),
    open_it: bool = typer.Option(False, "--open", help="Open the report in the browser."),
) -> None:
    """Write report.html into the workspace (or the curriculum's folder): the task, the setup's trajectory, the
    solutions with their learning curves and HEBO trials, the blend, the submission checked against the sample;
    for a curriculum its rounds, pass@k, successes over time and scores per task. One file, plots inside, no
    network. Exit codes: 0 written; 2 bad input (no such workspace or curriculum)."""
    if curriculum is not None:
        if workspace is not None:
            raise BadInput("give --workspace or --curriculum, not both")
        from curriculum.report import write_curriculum_report

        path = write_curriculum_report(curriculum.resolve())
    else:
        path = api.run_report(workspace)
    print(path)
    if open_it:
        webbrowser.open(path.as_uri())


def _submissions(kind: str, info: dict) -> None:
    ws, pick = Workspace(info["workspace"]), info["pick"]
    table = Table(title=f"submissions of {ws.root.name}")
    for col in ("when", "file", "status", "public", "private", "final pick"):
        table.add_column(col)
    for r in read_json(ws.submissions, []):
        table.add_row(
            r["time"][:19],
            r["file"],
            r["status"],
            str(r.get("public_score")),
            str(r.get("private_score")),
            "✓" if pick and r["ref"] == pick["ref"] else "",
        )
    console.print(table)


def main() -> None:
    # the packaged MiniLM's "Loading weights" bar (long-term memory, curriculum): a local load, not news
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    args = sys.argv[1:]
    crash.watch(args)  # the commands that read the user's data run in a watched child (agentk/core/crash.py)
    command = next((a for a in args if not a.startswith("-")), None)
    try:
        rc = app(standalone_mode=False)  # typer returns Ctrl-C as 130, and the code of an Exit raised
    except (BadInput, AgentFailed) as exc:
        print(api.one_line(exc), file=sys.stderr)
        sys.exit(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        rc = 130
    except Exception as exc:  # usage errors of the (vendored) click: one line, as any other bad input
        if isinstance(getattr(exc, "exit_code", None), int) and hasattr(exc, "format_message"):
            where = f"agentk {command}" if command in app_commands() else "agentk"
            print(api.one_line(f"{exc.format_message()} (see `{where} --help`)"), file=sys.stderr)
            sys.exit(exc.exit_code)
        raise
    if rc == 130:
        print(f"agentk: {command or 'agentk'} interrupted{_GOING_ON.get(command, '')}", file=sys.stderr)
    if isinstance(rc, int) and rc:
        sys.exit(rc)


_GOING_ON = {
    "setup": ": `agentk setup --resume --workspace <ws>` goes on from the last finished step",
    "solve": ": finished solutions are kept; run `agentk solve` again to resume",
    "curriculum": ": run the same command again to resume",
}


def app_commands() -> set[str]:
    return {c.name or c.callback.__name__ for c in app.registered_commands} | {g.name for g in app.registered_groups}


if __name__ == "__main__":
    main()
