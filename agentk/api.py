"""agentk's API: set a competition up, solve it, submit it, report on it. The CLI (agentk/cli.py), the curriculum and the
benchmarks all call these functions.

Progress goes to an `on_event(kind, info)` callback: the engine's events ("stage", "result", "meta", "done";
`describe_event` words them in one line) and each call's last word ("setup_end", "submit_end"), sent even when
the call fails so that a caller can show what was done. Every event also goes to <ws>/logs/setup.log. Failures raise BadInput (bad input or an unsupported
task: nothing was written; exit code 2) or AgentFailed (the agent tried and failed; exit code 1).
"""

from __future__ import annotations

import shutil
import signal
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TextIO

from rich.markup import escape
from rich.text import Text

from agentk.core import crash
from agentk.core.engine import Budget, Engine
from agentk.core.errors import AgentFailed, BadInput
from agentk.core.fileio import read_json, write_json
from agentk.core.lock import FolderLock, check_free, hold
from agentk.core.sandbox import died_of, require_sandbox, run_python_live
from agentk.core.state import EpisodeState, load_state
from agentk.policies.llm import LLMClient, LLMConfig, Unreachable
from agentk.ray_backend import import_ray
from agentk.solve.budgets import PRESETS
from agentk.solve.memory import DEFAULT_SHARE, default_limit_gb, machine_gb
from agentk.submit import submit_workspace
from agentk.workspace import Workspace
from tools.kaggle import KaggleTool, parse_competition_url

POLICIES = ("expert", "llm", "hybrid")
WORKSPACES = Path("workspaces")  # where a workspace goes by default, relative to the current folder
SOURCE = "source"  # the state file's record of what was set up, so a resume needs nothing else
TRY_UNSUPPORTED = "try_unsupported"  # ... and whether the user asked an LLM policy to try a task agentk cannot do
TRY_NEEDS_LLM = (
    "--try-unsupported lets an LLM try a task agentk cannot do: use --policy llm or hybrid with an endpoint "
    "(AGENTK_LLM_BASE_URL, AGENTK_LLM_MODEL); the built-in expert never attempts one"
)

Progress = Callable[[str, dict], None]


def _quiet(kind: str, info: dict) -> None:
    pass


@dataclass
class SetupResult:
    workspace: Path
    state: EpisodeState


@dataclass
class SolveResult:
    workspace: Path
    summary: dict  # the solve summary (Workspace.SOLVE_SUMMARY): metric, solutions, best


@dataclass
class SubmitResult:
    workspace: Path
    record: dict  # this submission's entry in Workspace.SUBMISSIONS
    pick: dict | None  # the final pick: the submission with the best public score so far


def one_line(exc: BaseException | str) -> str:
    """How agentk reports a failure: one line, never wrapped."""
    return f"agentk: {' '.join(str(exc).split())}"


def describe_event(kind: str, info: dict) -> str | None:
    """An engine event as one line of rich markup (a rich Console writing to a file prints it plain)."""
    if kind == "warning":
        return f"[yellow]agentk: warning:[/yellow] {escape(' '.join(info['message'].split()))}"
    if kind == "stage":
        tag = {"first": "", "retry": " (retry)", "credit_assignment": " (credit assignment)"}[info["mode"]]
        return f"[dim]…[/dim] {info['stage']}{tag} attempt {info['attempt']}"
    if kind in ("result", "meta"):
        mark = "[green]✓[/green]" if info["passed"] else "[red]✗[/red]"
        what = info["stage"] if kind == "result" else f"meta-test {info['meta']}"
        if info["passed"]:
            return f"{mark} {what}"
        backtrack = " → backtrack" if kind == "meta" else ""
        return f"{mark} {what} [red]{(info['error'] or '').strip().splitlines()[-1][:160]}{backtrack}[/red]"
    return None


# ---- setup -------------------------------------------------------------------------------------------
def run_setup(
    source: str | Path | None,
    workspace: Path | None = None,
    policy: str | None = None,
    *,
    resume: bool = False,
    force: bool = False,
    stage_attempts: int = 4,
    backtracks: int = 3,
    memory=None,
    unsafe_sandbox: bool = False,
    try_unsupported: bool = False,
    on_event: Progress | None = None,
) -> SetupResult:
    """Set a competition up (a Kaggle competition URL or a local folder in Kaggle layout) in `workspace`
    (default: workspaces/<name>): fetch, summarise, detect modalities, plan, build and unit-test the maps,
    target transform, submission formatters and metric, and finish with a light solve whose submission becomes
    the workspace's. policy: expert, llm or hybrid (default: hybrid when an LLM endpoint is configured, else
    expert). memory: a rag.memory.Memory for stored fixes (default: $AGENTK_MEMORY or ~/.agentk/memory).
    The LLM and hybrid policies need the bubblewrap sandbox for the code they write, unless unsafe_sandbox.
    Bad input raises BadInput before anything is written, and so does a task agentk cannot do, unless
    try_unsupported with an LLM policy: the LLM then tries it (the expert never does)."""
    from agentk.competition.dataview import competition_name
    from agentk.setup_pipeline import setup_pipeline
    from rag.memory import fix_recorder, remember_hypotheses
    from stages.fetch import check_source

    on_event = on_event or _quiet
    from agentk.parsing import guard_pandas

    guard_pandas()  # what reads the competition here (and AutoGluon, generated code) cannot segfault on a hex id
    crash.note("reading the competition folder")
    config = LLMConfig.load()
    policy = policy or ("hybrid" if config.configured else "expert")
    if policy not in POLICIES:
        raise BadInput(f"unknown policy {policy!r}: use expert, llm or hybrid")
    if try_unsupported and policy == "expert":
        raise BadInput(TRY_NEEDS_LLM)
    source = None if source is None else str(source)
    if source is None and not resume:
        raise BadInput("give a competition folder, or --resume with --workspace")
    if workspace is None:
        if source is None:
            raise BadInput("--resume needs --workspace")
        workspace = WORKSPACES / (parse_competition_url(source) or competition_name(Path(source)))
    ws = Workspace(Path(workspace).resolve())
    check_free(ws.lock)  # another run holds it: say so now, not after reading the competition
    if resume:
        state = load_state(ws.setup_state)
        source = source or (state.info.get(SOURCE) if state else None)
        try_unsupported = try_unsupported or bool(state and state.info.get(TRY_UNSUPPORTED))
        if not source:
            raise BadInput(f"nothing to resume in {ws.root}: run `agentk setup <competition>` first")
    slug = parse_competition_url(source)
    if slug:  # credentials, unknown competition, rules not accepted, network: stop before anything is written
        tool = KaggleTool()
        tool.metadata(slug)
        tool.files(slug)
        unsupported = None
    else:
        unsupported = check_source(source, try_unsupported)
    policy = _usable_policy(policy, config, on_event)  # after the source: bad input stays one line
    if unsupported:  # the user asked an LLM policy to try it
        if policy == "expert":  # the endpoint was down: hybrid fell back to the expert
            raise BadInput(f"{unsupported}; {TRY_NEEDS_LLM}")
        on_event("warning", {"message": f"{unsupported}; the {policy} policy tries it (--try-unsupported)"})
    if policy != "expert":  # code nobody has read runs only in the sandbox, unless the user says otherwise
        require_sandbox(unsafe_sandbox)
    with _prepare_workspace(ws, resume, force):  # held until the setup ends, however it ends
        if policy != "expert" and memory is None:  # LLM policies learn from fixes stored in long-term memory (rag/)
            from rag.memory import Memory

            memory = Memory()
        ws.logs.mkdir(exist_ok=True)
        crash.note(log=ws.setup_log, resume=f"agentk setup --resume --workspace {ws.root}")
        with open(ws.setup_log, "a") as log:
            engine = Engine(
                ws.root,
                setup_pipeline(source if slug else Path(source), try_unsupported),
                _policy(policy, config, ws, memory),
                Budget(stage_attempts=stage_attempts, backtracks=backtracks),
                on_event=_logged(on_event, log),
                on_fix=fix_recorder(memory, ws.root) if policy != "expert" else None,
                info={
                    SOURCE: source if slug else str(Path(source).resolve()),
                    **({TRY_UNSUPPORTED: True} if try_unsupported else {}),
                },
            )
            try:
                state = engine.run(resume=resume)
                if state.status == "done":  # what the expert's search found, for next time
                    remember_hypotheses(memory, ws.root, state.hypotheses)
            finally:
                final = load_state(ws.setup_state)
                if final is not None:
                    log.write(setup_summary(final) + "\n")
                on_event("setup_end", {"workspace": ws.root, "state": final})
        if ws.light.submission.exists():
            shutil.copyfile(ws.light.submission, ws.submission)
    return SetupResult(ws.root, state)


def _logged(on_event: Progress, log: TextIO) -> Progress:
    """on_event, each event's line also written to the setup's log."""

    def both(kind: str, info: dict) -> None:
        if kind == "stage":
            crash.note(f"stage {info['stage']}")
        line = describe_event(kind, info)
        if line:
            log.write(Text.from_markup(line).plain + "\n")
            log.flush()
        on_event(kind, info)

    return both


def setup_summary(state: EpisodeState) -> str:
    """What a setup did, in one line: stages passed, retries, backtracks, time, LLM use."""
    retries = sum(max(st.attempts - 1, 0) for st in state.stages.values())
    passed = sum(st.status == "passed" for st in state.stages.values())
    meta = sum(mt.status == "passed" for mt in state.meta_tests.values())
    llm = f", {state.llm_calls} LLM calls, {state.tokens} tokens" if state.llm_calls else ""
    return (
        f"setup {state.status} in {state.seconds:.1f}s: {passed}/{len(state.stages)} stages and {meta}/"
        f"{len(state.meta_tests)} meta-tests passed, {retries} retries, {state.backtracks} backtracks{llm}"
    )


def _prepare_workspace(ws: Workspace, resume: bool, force: bool) -> FolderLock:
    """Takes the workspace's lock (held by another run: BadInput naming it), then checks and, for a new setup,
    empties the workspace under it, so that --force never deletes what another run is writing."""
    if not ws.lock.exists() and load_state(ws.setup_state) is None:  # nothing of agentk's: refuse, write nothing
        if resume:
            raise BadInput(f"nothing to resume in {ws.root}: run `agentk setup <competition>` first")
        if ws.root.exists() and any(ws.root.iterdir()):
            raise BadInput(f"{ws.root} is not empty and is not an agentk workspace: choose another --workspace")
    ws.root.mkdir(parents=True, exist_ok=True)
    lock = hold(ws.lock)
    try:
        state = load_state(ws.setup_state)
        if resume:
            if state is None:
                raise BadInput(f"nothing to resume in {ws.root}: run `agentk setup <competition>` first")
        elif state is not None and not force:
            raise BadInput(
                f"{ws.root} already holds a setup ({state.status}): use --resume to continue or --force to start over"
            )
        else:  # --force, or what a run killed before its first state left: start over
            lock.empty_folder()
    except BaseException:
        lock.release()
        raise
    return lock


def _usable_policy(policy: str, config, on_event: Progress) -> str:
    """The policy to run, its endpoint checked before anything is written (down, bad key, unknown model:
    BadInput). An unreachable endpoint leaves hybrid, which starts with the expert anyway, to the expert
    alone, after a warning."""

    if policy == "expert":
        return policy
    try:
        LLMClient(config).check()
    except Unreachable as exc:
        if policy != "hybrid":
            raise
        on_event("warning", {"message": f"{exc}; going on with the expert policy alone"})
        return "expert"
    return policy


def _policy(name: str, config, ws: Workspace, memory):
    from agentk.policies.expert import ExpertPolicy
    from agentk.policies.llm_policy import HybridPolicy, LLMPolicy

    if name == "expert":
        return ExpertPolicy(tips=True, memory=memory)  # stored fixes that apply to its code, on retries
    client = LLMClient(config, log_path=ws.llm_log)  # every prompt, answer and token count
    return LLMPolicy(client, memory) if name == "llm" else HybridPolicy(client, memory)


# ---- solve and submit --------------------------------------------------------------------------------
def newest_workspace() -> Path:
    found = sorted(WORKSPACES.glob(f"*/{Workspace.SETUP_STATE}"), key=lambda p: p.stat().st_mtime)
    if not found:
        raise BadInput("no workspace under workspaces/: run `agentk setup <competition>` first or pass --workspace")
    return found[-1].parent


def run_solve(
    workspace: Path | None = None,
    budget: str = "quick",
    *,
    ray: str | None = None,
    parallel_trials: int | None = None,
    weights: Path | None = None,
    output: TextIO | None = None,
    verbose: bool = False,
    memory_limit: float | None = None,
    time_limit: float | None = None,
) -> SolveResult:
    """Build solutions on a finished setup (default: the newest under workspaces/) and make the best by
    validation score the workspace's submission. The solver runs in a child process without credentials;
    every detail goes to <ws>/logs/solve.log, its progress bars and one line per solution to `output` (default:
    the terminal; verbose: the whole log as it comes). Finished solutions are kept, so a rerun resumes.
    ray: run HEBO trials as Ray tasks (local, auto or ray://host:port); weights: a folder of pretrained image
    backbone weights (tools/modality_img.py says which file names it reads); memory_limit: GB the solve's
    process tree may use (default: agentk/solve/memory.py's share of the machine); time_limit: the wall seconds the
    solve ends within (default: the budget's bound)."""
    from agentk.parsing import guard_pandas

    guard_pandas()
    if budget not in PRESETS:
        raise BadInput(f"unknown budget {budget!r}: use {', '.join(PRESETS)}")
    if memory_limit is not None and not 0.5 <= memory_limit <= machine_gb():
        raise BadInput(
            f"--memory-limit {memory_limit:g} GB is outside what this machine gives: use 0.5 to {machine_gb():.1f} "
            f"GB (default {DEFAULT_SHARE:.0%} of it, {default_limit_gb():.1f})"
        )
    if time_limit is not None and time_limit < 60:
        raise BadInput(f"--time-limit {time_limit / 60:g} min is too short: give at least 1 minute")
    limit = memory_limit or default_limit_gb()
    if weights is not None and not Path(weights).is_dir():
        raise BadInput(f"--weights {weights} is not a folder: give the folder that holds the backbone weights files")
    ws = Workspace(Path(workspace or newest_workspace()).resolve())
    if load_state(ws.setup_state) is None:
        raise BadInput(f"{ws.root} holds no setup: run `agentk setup <competition> --workspace {ws.root}` first")
    with hold(ws.lock):  # held for the solver child's lifetime: one run per workspace
        state = load_state(ws.setup_state)
        if state.status != "done":
            raise BadInput(
                f"the setup in {ws.root} is not finished ({state.status}): run "
                f"`agentk setup --resume --workspace {ws.root}`"
            )
        if ray:
            import_ray()  # no ray installed: stop before any work
        args = (
            ["-m", "agentk.solve.solver", str(ws.root), "--budget", budget]
            + (["--ray", ray] if ray else [])
            + (["--parallel-trials", str(parallel_trials)] if parallel_trials else [])
            + (["--weights", str(Path(weights).resolve())] if weights is not None else [])
            + (["--verbose"] if verbose else [])
            + ["--memory-limit", f"{limit:.2f}"]
            + (["--bound", f"{time_limit:g}"] if time_limit else [])
        )
        crash.note("solve", log=ws.solve_log)
        bounded = PRESETS[budget] if time_limit is None else replace(PRESETS[budget], bound=time_limit)
        cap = bounded.wall_cap
        try:  # the memory limit of the whole tree; a wall cap a little past the budget's bound, which the solver keeps
            run = run_python_live(args, cwd=ws.root, output=output, network=bool(ray), timeout=cap, memory_gb=limit)
        except KeyboardInterrupt:
            _solve_ended(ws, "interrupted")
            raise
    rc = run.returncode
    summary = read_json(ws.solve_summary) or {}
    if run.peak_gb is not None and summary.get("status") == "done":  # what the tree used at most, for benchmarks
        summary = {**summary, "peak_memory_gb": round(run.peak_gb, 2), "memory_limit_gb": round(limit, 2)}
        write_json(ws.solve_summary, summary)
    again = f"finished solutions are kept; `agentk solve --workspace {ws.root}` resumes"
    if summary.get("status") != "done":
        if summary.get("submission"):
            again = f"{ws.submission} holds {summary['submission']}, the best solution finished; {again}"
        elif ws.submission.exists():  # the setup's stays until a solution beats the constant (Solver.publish)
            again = f"{ws.submission} holds the setup's submission, as no solution beat the constant yet; {again}"
    if run.out_of_memory and summary.get("status") != "done":
        _solve_ended(ws, f"went over its memory limit of {limit:.1f} GB")
        raise AgentFailed(
            f"solve went over its memory limit of {limit:.1f} GB and the kernel stopped it (details in "
            f"{ws.solve_log}); give it more with --memory-limit (this machine has {machine_gb():.1f} GB) or a "
            f"smaller budget; {again}"
        )
    if rc is None:
        _solve_ended(ws, f"stopped at the wall cap of {cap:.0f} s")
        raise AgentFailed(
            f"solve stopped at its wall cap of {cap:.0f} s (budget {budget}; details in {ws.solve_log}); {again}"
        )
    sig = died_of(rc)
    if sig is not None and summary.get("status") != "done":
        step = summary.get("step")
        _solve_ended(ws, f"died of signal {sig.value} ({sig.name})")
        raise AgentFailed(
            f"solve died of signal {sig.value} ({sig.name}){f' in {step}' if step else ''}; its traceback is in "
            f"{ws.solve_log}; {again}"
            + ("; the kernel killed it, most likely for memory" if sig == signal.SIGKILL else "")
        )
    if rc != 0 or summary.get("status") != "done":
        raise AgentFailed(
            f"solve failed: {summary.get('error') or f'exit code {rc}'} (details in {ws.solve_log}); {again}"
        )
    return SolveResult(ws.root, summary)


def _solve_ended(ws: Workspace, why: str) -> None:
    """solve.json no longer says running once the solver child is gone without saying why itself."""
    summary = read_json(ws.solve_summary) or {}
    if summary.get("status") in (None, "running"):
        write_json(ws.solve_summary, {**summary, "status": "failed", "error": why})


def run_submit(
    workspace: Path | None = None,
    message: str = "agentk",
    solution: str | None = None,
    timeout: float = 900,
    on_event: Progress | None = None,
    light: bool = False,
) -> SubmitResult:
    """Submit the workspace's submission (or solutions/<solution>/'s; light: the setup's light solution) to its
    Kaggle competition, wait for the score and record it. The workspace's submission is sent only once a solve
    finished (BadInput otherwise); AgentFailed when Kaggle did not score it."""
    from agentk.parsing import guard_pandas

    guard_pandas()
    if light and solution:
        raise BadInput("--light submits the setup's light solution: drop --solution, or --light")
    ws = Path(workspace or newest_workspace()).resolve()
    paths = Workspace(ws)
    # not while a setup or solve rewrites the submission; no workspace: submit_workspace says so, no lock written
    with hold(paths.lock) if paths.setup_state.exists() else nullcontext():
        record, pick = submit_workspace(ws, message, Workspace.LIGHT if light else solution, timeout)
    (on_event or _quiet)("submit_end", {"workspace": ws, "record": record, "pick": pick})
    if record["status"] != "complete":
        raise AgentFailed(f"Kaggle did not score the submission: {record.get('error') or record['status']}")
    return SubmitResult(ws, record, pick)


def run_report(workspace: Path | None = None) -> Path:
    """Write a workspace's report.html (default: the newest under workspaces/), self-contained, and return its path.
    A curriculum's report is curriculum.report's."""
    from agentk.parsing import guard_pandas
    from agentk.report import write_report

    guard_pandas()
    return write_report(Path(workspace or newest_workspace()).resolve())
