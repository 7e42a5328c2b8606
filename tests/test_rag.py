"""Long-term memory (rag/): chromadb on disk with the packaged MiniLM, fixes captured by the engine and
retrieved into a retry's prompt for another competition, RAG+/RAG- experiences, and `agentk memory`."""

from __future__ import annotations

import os
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import EXAMPLES, ROOT
from typer.testing import CliRunner

from agentk.core.engine import Budget, Engine
from agentk.policies.llm import LLMClient, LLMConfig
from agentk.policies.llm_policy import LLMPolicy
from agentk.setup_pipeline import setup_pipeline
from rag.cli import memory_app
from rag.memory import SIMILAR_ERROR, Memory, fix_recorder
from testing.scripted_llm import ScriptedLLM
from testing.simulated_llm import ExpertAnswers, fenced, header

# `agentk memory ...` as agentk/cli.py mounts it (app.add_typer(memory_app, name="memory")), exit codes included
MEMORY_CLI = """import sys
from agentk.cli import app, main
from rag.cli import memory_app
if not any(g.name == "memory" for g in app.registered_groups):
    app.add_typer(memory_app, name="memory")
sys.argv = ["agentk", "memory", *sys.argv[1:]]
main()
"""


def test_fixes_round_trip_dedupe_and_stage_filter(tmp_path):
    m = Memory(tmp_path / "mem")
    first = m.add_fix(
        "metric",
        "iris",
        "HIGHER_IS_BETTER = False",
        "AssertionError: accuracy must be maximised",
        "HIGHER_IS_BETTER = True",
    )
    again = m.add_fix(
        "metric", "wine", "other failing code", "AssertionError: accuracy must be maximised", "HIGHER_IS_BETTER = True"
    )
    m.add_fix("metric", "iris", "x", "KeyError: 'Species' not in columns", "y")
    m.add_fix("train_tab_target_map", "iris", "a", "AssertionError: accuracy must be maximised", "b")
    assert first == again and len(m.list("fixes")) == 3  # same stage, error and fix: stored once

    query = "AssertionError: the metric accuracy must be maximised"
    best = m.similar_fixes("metric", query, k=2, max_distance=None)
    assert [f["fixed_code"] for f in best] == ["HIGHER_IS_BETTER = True", "y"]  # nearest error first
    assert best[0]["distance"] < best[1]["distance"] and best[0]["stage"] == "metric"
    # by default an unrelated error's fix is beyond the cut-off: it would mislead the prompt
    assert best[0]["distance"] <= SIMILAR_ERROR < best[1]["distance"]
    assert [f["fixed_code"] for f in m.similar_fixes("metric", query, k=2)] == ["HIGHER_IS_BETTER = True"]
    assert m.similar_fixes("plan", "anything") == []
    assert [
        f["fixed_code"]
        for f in m.similar_fixes("metric", "accuracy", k=5, exclude_competition="wine", max_distance=None)
    ] == ["y"]


def test_memory_persists_across_instances_and_processes(tmp_path):
    path = tmp_path / "mem"
    script = (
        f"from rag.memory import Memory; m = Memory({str(path)!r}); "
        "m.add_fix('metric', 'iris', 'bad', 'ValueError: boom', 'good'); "
        "m.add_experience(True, 'iris', 'Classify iris flowers', 'train.csv 150 rows', 'solved', {'accuracy': 0.97})"
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    m = Memory(path)
    assert m.similar_fixes("metric", "ValueError: boom")[0]["fixed_code"] == "good"
    m.add_fix("metric", "wine", "bad2", "TypeError: nope", "good2")
    again = Memory(path)
    assert {f["fixed_code"] for f in again.list("fixes")} == {"good", "good2"}
    assert again.experiences(True)[0]["scores"] == {"accuracy": 0.97}


def test_experiences_embeddings_and_remove_negatives(tmp_path):
    m = Memory(tmp_path / "mem")
    m.add_experience(False, "wine", "Predict the wine cultivar from chemistry", "train.csv", "failed", {})
    m.add_experience(False, "wine", "Predict the wine cultivar from chemistry", "train.csv", "failed", {})
    m.add_experience(False, "digits", "Recognise handwritten digits", "images/", "failed", {})
    m.add_experience(True, "iris", "Classify iris flowers", "train.csv", "solved", {"accuracy": 0.97})
    assert m.remove_negatives("wine") == 2
    neg = m.experiences(False)
    assert [e["task"] for e in neg] == ["digits"]
    pos = m.experiences(True)
    assert pos[0]["scores"] == {"accuracy": 0.97} and pos[0]["tree"] == "train.csv"
    emb = pos[0]["embedding"]
    assert emb.shape == (384,) and np.isclose(np.linalg.norm(emb), 1.0, atol=1e-4)
    direct = m.embed(["Classify iris flowers", "Recognise handwritten digits"])
    assert direct.shape == (2, 384) and np.allclose(np.linalg.norm(direct, axis=1), 1.0, atol=1e-4)
    assert np.allclose(direct[0], emb, atol=1e-4)  # the stored embedding is the description's
    assert direct[0] @ direct[1] < 0.9


def _setup_until_target_map(source, ws, server, memory):
    """The real setup pipeline of `source` up to its first target map, driven by the LLM policy."""
    full = setup_pipeline(source)

    def pipeline(w):
        stages, _ = full(w)
        names = [s.name for s in stages]
        return stages[: names.index("train_tab_target_map") + 1] if "train_tab_target_map" in names else stages, []

    config = LLMConfig(base_url=server.url, model="scripted-model", api_key="test-key", cache_dir=None)
    engine = Engine(
        ws, pipeline, LLMPolicy(LLMClient(config), memory), Budget(stage_attempts=3), on_fix=fix_recorder(memory, ws)
    )
    return engine.run()


def test_fix_from_one_competition_is_retrieved_for_another(tmp_path):
    memory = Memory(tmp_path / "mem")
    prompts: dict[str, list[str]] = {}

    def run(name):
        ws = tmp_path / name
        oracle = ExpertAnswers(EXAMPLES / name, ws)
        served = []

        def handler(messages):
            intrinsic, stage = header(messages)
            if (intrinsic, stage) == ("code", "train_tab_target_map"):
                prompts.setdefault(name, []).append(messages[-1]["content"])
                if not served:  # the first program drops the id column: its unit test fails
                    served.append(1)
                    good = oracle.code(stage)
                    return fenced(good.replace("    return out\n", "    return out.drop(columns=['id'])\n"))
            return oracle(messages)

        with ScriptedLLM(handler=handler) as server:
            state = _setup_until_target_map(EXAMPLES / name, ws, server, memory)
        assert state.status == "done" and state.stages["train_tab_target_map"].attempts == 2
        return ws, oracle

    ws_a, oracle_a = run("iris-species")
    fixes = memory.list("fixes")
    assert len(fixes) == 1 and fixes[0]["competition"] == "iris-species" and fixes[0]["stage"] == "train_tab_target_map"
    assert fixes[0]["fixed_code"] == oracle_a.code("train_tab_target_map")
    assert "out.drop(columns=['id'])" in fixes[0]["failing_code"] and fixes[0]["error"]
    first_retry = prompts["iris-species"][1]
    assert "An example of a similar error being fixed" not in first_retry  # the memory was empty then

    run("wine")
    retry = prompts["wine"][1]
    assert "An example of a similar error being fixed" in retry
    example = retry[retry.index("An example of a similar error being fixed") :]
    assert "df[['Species']]" in example  # iris's fixed code, shown to wine's retry
    assert fixes[0]["error"].strip().splitlines()[-1][:80] in example
    assert "An example of a similar error being fixed" not in prompts["wine"][0]  # only on a retry
    assert len(memory.list("fixes")) == 2  # wine's own fix is stored too


def test_memory_cli_list_search_and_clear(tmp_path, monkeypatch):
    path = tmp_path / "mem"
    m = Memory(path)
    m.add_fix("metric", "iris", "bad", "ValueError: could not convert string to float: 'setosa'", "good")
    m.add_fix("train_tab_input_map", "wine", "bad", "KeyError: 'Alcohol'", "good")
    m.add_experience(True, "iris", "Classify iris flowers", "train.csv", "solved", {"accuracy": 0.97})
    monkeypatch.setenv("AGENTK_MEMORY", str(path))
    runner = CliRunner()

    listed = runner.invoke(memory_app, ["list"])
    assert listed.exit_code == 0, listed.output
    assert "fixes: 2 entries" in listed.output and "iris" in listed.output and "wine" in listed.output
    found = runner.invoke(memory_app, ["search", "could not convert string to float", "-k", "1"])
    assert found.exit_code == 0 and "fixes: 1 entries" in found.output and "metric" in found.output
    assert "wine" not in found.output
    pos = runner.invoke(memory_app, ["list", "--kind", "pos"])
    assert "pos: 1 entries" in pos.output and "accuracy" in pos.output

    # the real command line, as agentk/cli.py mounts it: no stdin and no --yes is a one-line exit 2
    refused = subprocess.run(
        [sys.executable, "-c", MEMORY_CLI, "clear"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        env={**os.environ, "AGENTK_MEMORY": str(path)},
    )
    assert refused.returncode == 2 and "--yes" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    assert len(Memory(path).list("fixes")) == 2  # nothing went
    cleared = runner.invoke(memory_app, ["clear", "--kind", "fixes", "--yes"])
    assert cleared.exit_code == 0 and "cleared 2 entries" in cleared.output
    after = Memory(path)
    assert after.list("fixes") == [] and len(after.list("pos")) == 1


def test_memory_cli_reads_the_memory_given_by_memory_option(tmp_path, monkeypatch):
    Memory(tmp_path / "curriculum-memory").add_fix("metric", "wine", "bad", "KeyError: 'quality'", "good")
    monkeypatch.setenv("AGENTK_MEMORY", str(tmp_path / "default"))
    runner = CliRunner()

    listed = runner.invoke(memory_app, ["list", "--memory", str(tmp_path / "curriculum-memory")])
    assert listed.exit_code == 0 and "fixes: 1 entries" in listed.output and "wine" in listed.output
    found = runner.invoke(memory_app, ["search", "KeyError", "--memory", str(tmp_path / "curriculum-memory")])
    assert found.exit_code == 0 and "fixes: 1 entries" in found.output
    assert not (tmp_path / "default").exists()  # $AGENTK_MEMORY was not opened

    # a mistyped folder is a one-line exit 2, not a new empty memory
    proc = subprocess.run(
        [sys.executable, "-c", MEMORY_CLI, "list", "--memory", str(tmp_path / "typo")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert proc.returncode == 2 and "no memory at" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "typo").exists()


# ---- stored fixes as tips for the expert policy ------------------------------------------------------
FAILING = "import pandas as pd\n\ndef build(df):\n    out = df[['id', 'y']]\n    out = out.dropna()\n    return out\n"
FIXED = "import pandas as pd\n\ndef build(df):\n    out = df[['id', 'y']]\n    out['y'] = out['y'].fillna(0)\n    return out\n"


def test_apply_fix_edits_other_code_where_the_changed_lines_are_found_once():
    from rag.tips import apply_fix

    other = "import numpy as np\nimport pandas as pd\n\ndef build(df):\n    out = df[['id', 'y']]\n    out = out.dropna()\n    return out\n"
    assert apply_fix(FAILING, FIXED, other) == other.replace("out = out.dropna()", "out['y'] = out['y'].fillna(0)")
    assert apply_fix(FAILING, FIXED, other.replace("dropna()", "dropna(how='all')")) is None  # block not there
    twice = other + "\ndef again(df):\n    out = df[['id', 'y']]\n    out = out.dropna()\n    return out\n"
    assert apply_fix(FAILING, FIXED, twice) is None  # ambiguous: found twice
    assert apply_fix(FAILING, FAILING, other) is None  # an edit that changes nothing is no tip


def test_expert_retry_uses_a_stored_fix_that_applies_and_ignores_one_that_does_not(tmp_path, monkeypatch):
    from agentk.core.engine import Action, Context, Stage
    from agentk.core.memory import WorkingMemory
    from agentk.policies.expert import ExpertPolicy
    from agentk.policies.hypotheses import Decisions

    monkeypatch.setenv("AGENTK_MEMORY", str(tmp_path / "mem"))
    error = "check_no_missing: train_tab_target_map.csv has 3 rows fewer than train.csv (rows were dropped)"
    stage = Stage("train_tab_target_map", "the target map", expert=lambda analysis, ctx: Action(code=FAILING))
    no_decisions = SimpleNamespace(decisions=Decisions())  # this stage's expert needs no analysis of the data

    def expert_policy() -> ExpertPolicy:
        policy = ExpertPolicy(tips=True)
        policy.analysis = lambda ws, chosen=None: no_decisions
        return policy

    policy = expert_policy()
    ctx = Context(tmp_path, "retry", 1, WorkingMemory(), FAILING, error)
    # an empty memory and no hypothesis to revise: the expert gives up rather than write its code again
    assert "no hypothesis left" in policy.act(stage, ctx).give_up

    memory = Memory(tmp_path / "mem")
    memory.add_fix("train_tab_target_map", "other-competition", "x = 1\n", error, "x = 2\n")  # does not apply
    memory.add_fix("metric", "other-competition", FAILING, error, FIXED)  # another stage
    assert expert_policy().act(stage, ctx).give_up

    memory.add_fix("train_tab_target_map", "other-competition", FAILING, error.replace("3 rows", "7 rows"), FIXED)
    policy = expert_policy()
    action = policy.act(stage, ctx)
    assert action.code == FIXED and "stored fix of a similar error (from other-competition" in action.thought
    first = Context(tmp_path, "first", 0, WorkingMemory(), None, None)
    assert policy.act(stage, first).code == FAILING  # tips only on retries
    unrelated = Context(tmp_path, "retry", 1, WorkingMemory(), FAILING, "SyntaxError: invalid syntax in line 3")
    assert policy.act(stage, unrelated).give_up  # the stored error is too far from this one


# one writer-and-reader process of the concurrency test: each iteration stores a fix of its own (a new error
# text, so a new embedding) and reads the store back through both query paths, as a setup and `agentk memory
# search` would at the same time; every read must also find the writes this process made before it.
WORKER = """import sys
from rag.memory import Memory
path, who, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
m = Memory(path)
for i in range(n):
    m.add_fix("metric", who, "bad", f"KeyError: column {who}-{i} not found", f"fixed {who} {i}")
    near = m.similar_fixes("metric", f"KeyError: column {who}-{i} not found", k=3, max_distance=None)
    assert f"fixed {who} {i}" in [f["fixed_code"] for f in near], (i, near)
    assert m.search("fixes", f"column {who}-{i}", k=2)
    assert len(m.list("fixes")) >= i + 1
"""


@pytest.mark.slow  # three processes of chromadb (65 s on 2 cores); benchmarks/learning_curve.py --jobs 2 shares a store the same way
def test_memory_shared_by_processes_writing_and_reading_at_once(tmp_path):
    """Several processes (setups of a curriculum, a benchmark's --jobs, `agentk memory`) use one store: each one's
    reads see the others' writes without chromadb's "Error finding id", and no write is lost."""
    path, n, writers = tmp_path / "mem", 12, ["p0", "p1", "p2"]
    Memory(path).add_fix("metric", "seed", "bad", "ValueError: seed", "fixed seed")  # the store exists up front
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(path), who, str(n)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for who in writers
    ]
    results = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
    for rc, err in results:
        assert rc == 0, err[-3000:]
    stored = {f["fixed_code"] for f in Memory(path).list("fixes")}
    assert stored == {"fixed seed"} | {f"fixed {who} {i}" for who in writers for i in range(n)}
