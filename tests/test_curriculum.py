"""The curriculum: eq. 6–7 on hand-computed matrices, the pool file, and the runner on the real CLI."""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from agentk.core.errors import BadInput
from curriculum import selection
from curriculum.pool import Task, describe, ease, read_pool
from curriculum.runner import Curriculum

ROOT = Path(__file__).resolve().parents[1]
E1, E2, E3 = np.eye(3)
S = 1 / math.sqrt(2)


# ---- eq. 6: top-r average ---------------------------------------------------------------------------
def test_top_r_takes_the_mean_of_the_r_largest_per_row():
    sims = np.array([[0.1, 0.9, 0.5], [0.3, -0.2, 0.0]])
    assert np.allclose(selection.top_r(sims, 2), [(0.9 + 0.5) / 2, (0.3 + 0.0) / 2])
    assert np.allclose(selection.top_r(sims, 1), [0.9, 0.3])


def test_top_r_with_fewer_than_r_entries_averages_them_all_and_an_empty_memory_gives_zero():
    assert np.allclose(selection.top_r(np.array([[0.2, 0.6]]), 5), [0.4])
    assert np.allclose(selection.top_r(np.zeros((3, 0)), 2), [0, 0, 0])
    with pytest.raises(ValueError):
        selection.top_r(np.ones((1, 1)), 0)


def test_similarity_is_cosine_and_a_zero_vector_is_similar_to_nothing():
    sims = selection.similarity(np.array([[2.0, 0, 0], [0, 0, 0]]), np.array([[1.0, 1.0, 0], [0, 3.0, 0]]))
    assert np.allclose(sims, [[S, 0], [0, 0]])
    assert selection.similarity(np.ones((2, 3)), np.zeros((0, 3))).shape == (2, 0)


# ---- eq. 7 on unit vectors ------------------------------------------------------------------------
# tasks: description d, tree t            memory: RAG+ = {(desc e1, tree e1), (desc e2, tree e2)}
#   task 0: d = e1,            t = e1              RAG- = {(desc e3, tree e3)}
#   task 1: d = e2,            t = e3      last tried in round 2, now round 3 → λ = 1
#   task 2: d = (e1+e3)/√2,    t = e2
TASK_DESC = np.array([E1, E2, (E1 + E3) * S])
TASK_TREE = np.array([E1, E3, E2])
POS_DESC, POS_TREE = np.array([E1, E2]), np.array([E1, E2])
NEG_DESC, NEG_TREE = np.array([E3]), np.array([E3])
LAST = [None, 2, None]


def test_scores_r1_by_hand():
    # α = 0.5, β = 1, r = 1 (the single nearest experience):
    # task 0: sim+ = max(1, 0) = 1, diff+ = max(1, 0) = 1, sim- = 0, diff- = 0, λ = ∞ → 1 + 0.5·1 = 1.5
    # task 1: sim+ = 1, diff+ = max(0, 0) = 0, sim- = 0, diff- = cos(e3, e3) = 1, λ = 1 → 1 − 0.5 − e^-1
    # task 2: sim+ = max(1/√2, 0), diff+ = max(0, 1) = 1, sim- = 1/√2, diff- = 0 → 1/√2 + 0.5 − 1/√2 = 0.5
    got = selection.scores(TASK_DESC, TASK_TREE, POS_DESC, POS_TREE, NEG_DESC, NEG_TREE, LAST, 3, 0.5, 1.0, 1)
    assert np.allclose(got, [1.5, 0.5 - math.exp(-1), 0.5])
    assert selection.pick(got) == 0


def test_scores_r2_by_hand():
    # α = 0.5, β = 1, r = 2: RAG+ has two entries (mean of both), RAG- one (fewer than r: mean of that one)
    # task 0: sim+ = (1+0)/2, diff+ = (1+0)/2, sim- = 0, diff- = 0           → 0.5 + 0.25 = 0.75
    # task 1: sim+ = (0+1)/2, diff+ = (0+0)/2, sim- = 0, diff- = 1, λ = 1    → 0.5 − 0.5 − e^-1
    # task 2: sim+ = (1/√2+0)/2, diff+ = (0+1)/2, sim- = 1/√2, diff- = 0      → S/2 + 0.25 − S
    got = selection.scores(TASK_DESC, TASK_TREE, POS_DESC, POS_TREE, NEG_DESC, NEG_TREE, LAST, 3, 0.5, 1.0, 2)
    assert np.allclose(got, [0.75, -math.exp(-1), S / 2 + 0.25 - S])
    # β large enough and task 0 just tried (λ = 1): 0.75 − 3·e^-1 ≈ −0.35 falls below task 2's ≈ −0.10
    got = selection.scores(TASK_DESC, TASK_TREE, POS_DESC, POS_TREE, NEG_DESC, NEG_TREE, [2, 2, None], 3, 0.5, 3.0, 2)
    assert np.isclose(got[0], 0.75 - 3 * math.exp(-1))
    assert selection.pick(got) == 2


def test_recency_penalty_fades_with_rounds_since_the_last_try():
    # λ = 5−4 = 1 → β·e^-1; λ = 5−2 = 3 → β·e^-3; never tried → 0
    assert np.allclose(selection.recency_penalty([None, 4, 2], 5, 2.0), [0, 2 * math.exp(-1), 2 * math.exp(-3)])


def test_empty_memory_ties_go_to_the_easiest_unless_it_was_just_tried():
    empty = np.zeros((0, 3))
    args = (TASK_DESC, TASK_TREE, empty, empty, empty, empty)
    fresh = selection.scores(*args, [None, None, None], 0, 1.0, 1.0, 3)
    assert np.allclose(fresh, 0)
    assert selection.pick(fresh, ease=[2, 0, 1]) == 1  # task 1 ranks easiest
    tried = selection.scores(*args, [None, 0, None], 1, 1.0, 1.0, 3)
    assert np.isclose(tried[1], -math.exp(-1))
    assert selection.pick(tried, ease=[2, 0, 1]) == 2  # next easiest among the untried


# ---- the pool ---------------------------------------------------------------------------------------
def _competition(root: Path, name: str, rows: int = 5, images: int = 0) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "description.md").write_text(f"# {name}\nPredict the label.\n")
    (folder / "train.csv").write_text("id,x,label\n" + "".join(f"{i},{i * 0.5},{i % 2}\n" for i in range(rows)))
    (folder / "test.csv").write_text("id,x\n1,0.5\n")
    (folder / "sample_submission.csv").write_text("id,label\n1,0\n")
    for i in range(images):
        (folder / f"img{i}.png").write_bytes(b"\x89PNG" + bytes(10))
    return folder


def test_pool_file_comments_blanks_relative_folders_and_urls(tmp_path):
    _competition(tmp_path / "comps", "alpha")
    _competition(tmp_path, "beta")
    pool = tmp_path / "lists" / "pool.txt"
    pool.parent.mkdir()
    pool.write_text(
        "# my pool\n\n../comps/alpha   # the small one\n"
        f"{tmp_path / 'beta'}\nhttps://www.kaggle.com/competitions/titanic#overview\n"
        "www.kaggle.com/c/spaceship-titanic  # a comment after a URL\n"
    )
    tasks = read_pool(pool)
    assert [t.name for t in tasks] == ["alpha", "beta", "titanic", "spaceship-titanic"]
    _competition(tmp_path / "gamma", "public")  # <competition>/public beside its private answers
    (tmp_path / "gamma" / "private").mkdir()
    pool.write_text(f"{tmp_path / 'gamma' / 'public'}\n../comps/alpha\n")
    assert [t.name for t in read_pool(pool)] == ["gamma", "alpha"]
    assert tasks[0].source == str((tmp_path / "comps" / "alpha").resolve()) and not tasks[0].is_url
    assert tasks[2].is_url and tasks[2].source.endswith("#overview")


@pytest.mark.parametrize(
    "text, message",
    [
        ("alpha\nnope\n", "pool.txt line 2: folder"),
        ("https://example.com/some/page\n", "line 1: https://example.com/some/page is not a Kaggle competition URL"),
        ("alpha\n./alpha\n", "line 2: alpha is already in the pool"),
        ("# only comments\n\n", "lists no competitions"),
    ],
)
def test_bad_pool_lines_are_bad_input(tmp_path, text, message):
    _competition(tmp_path, "alpha")
    (tmp_path / "pool.txt").write_text(text)
    with pytest.raises(BadInput, match=message.replace("(", r"\(")):
        read_pool(tmp_path / "pool.txt")


def test_bad_pool_exits_2_with_one_line(tmp_path):
    (tmp_path / "pool.txt").write_text("missing-folder\n")
    out = subprocess.run(
        [sys.executable, "-m", "agentk", "curriculum", str(tmp_path / "pool.txt"), "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert out.returncode == 2
    assert (
        out.stderr.strip().startswith("agentk: pool.txt line 1: folder") and len(out.stderr.strip().splitlines()) == 1
    )
    assert not (tmp_path / "o").exists()


def test_easiest_tree_is_tabular_then_fewest_files_then_smallest(tmp_path):
    small = Task("small", str(_competition(tmp_path, "small", rows=5)), False)
    big = Task("big", str(_competition(tmp_path, "big", rows=500)), False)
    media = Task("media", str(_competition(tmp_path, "media", rows=1, images=1)), False)
    url = Task("titanic", "https://www.kaggle.com/competitions/titanic", True)
    ordered = sorted([url, media, big, small], key=lambda t: ease(t, tmp_path / "ws" / t.name))
    assert [t.name for t in ordered] == ["small", "big", "media", "titanic"]
    description, tree = describe(small, tmp_path / "ws" / "small")
    assert "Predict the label" in description and "train.csv" in tree
    assert describe(url, tmp_path / "ws" / "titanic") == ("titanic", "")


def test_first_pick_with_no_memory_is_the_easiest_tree_and_the_hook_can_override(tmp_path):
    _competition(tmp_path, "media", rows=1, images=2)
    _competition(tmp_path, "big", rows=500)
    _competition(tmp_path, "small", rows=5)
    (tmp_path / "pool.txt").write_text("media\nbig\nsmall\n")
    cur = Curriculum(tmp_path / "pool.txt", tmp_path / "out", rounds=1)
    rec = cur._pick(cur.tasks, 0)
    assert rec["task"] == "small" and rec["why"] == "easiest tree (empty memory)"
    assert cur.state["last_tried"] == {"small": 0}
    hooked = Curriculum(tmp_path / "pool.txt", tmp_path / "out2", rounds=1, first_pick=lambda trees: trees[0][0])
    assert hooked._pick(hooked.tasks, 0)["task"] == "media"


def test_with_an_llm_configured_the_llm_names_the_first_task(tmp_path, monkeypatch):
    from curriculum.cli import _llm_first_pick
    from testing.scripted_llm import ScriptedLLM

    for name, rows in (("media", 1), ("big", 500), ("small", 5)):
        _competition(tmp_path, name, rows=rows, images=2 if name == "media" else 0)
    (tmp_path / "pool.txt").write_text("media\nbig\nsmall\n")
    answers = iter(["The big table is the most regular.\nTASK: big", "I cannot decide.", "Start with `small`."])
    prompts = []

    def handler(messages):
        prompts.append(messages[-1]["content"])
        return next(answers)

    with ScriptedLLM(handler=handler) as server:
        for k, v in {
            "AGENTK_LLM_BASE_URL": server.url,
            "AGENTK_LLM_MODEL": "scripted-model",
            "AGENTK_LLM_API_KEY": "x",
            "AGENTK_LLM_CACHE": "off",
        }.items():
            monkeypatch.setenv(k, v)
        assert _llm_first_pick("expert", tmp_path / "o") is None  # the expert policy asks no LLM
        picks = []
        for k in range(3):
            cur = Curriculum(
                tmp_path / "pool.txt",
                tmp_path / f"out{k}",
                rounds=1,
                first_pick=_llm_first_pick("llm", tmp_path / f"out{k}"),
            )
            rec = cur._pick(cur.tasks, 0)
            picks.append((rec["task"], rec["why"]))
    assert picks == [
        ("big", "first pick (LLM)"),
        ("small", "easiest tree (empty memory)"),
        ("small", "first pick (LLM)"),
    ]
    assert prompts[0].startswith("[agentk:first_task] stage=curriculum") and "Task media:" in prompts[0]
    assert "train.csv" in prompts[0] and (tmp_path / "out0" / "llm_log.jsonl").exists()

    def broken(trees):
        raise ConnectionError("endpoint down")

    cur = Curriculum(tmp_path / "pool.txt", tmp_path / "out9", rounds=1, first_pick=broken)
    assert cur._pick(cur.tasks, 0)["task"] == "small"  # no answer: the easiest tree


def test_ablation_selections_random_and_recency_alone(tmp_path):
    for name in "abcd":
        _competition(tmp_path, name, rows=5 + ord(name))
    (tmp_path / "pool.txt").write_text("a\nb\nc\nd\n")

    def picks(selection, seed, rounds=6, tried=None):
        cur = Curriculum(
            tmp_path / "pool.txt", tmp_path / f"out-{selection}-{seed}", rounds=rounds, selection=selection, seed=seed
        )
        cur.state["last_tried"] = dict(tried or {})
        return [cur._pick(cur.tasks, n)["task"] for n in range(rounds)]

    # random: the same seed gives the same order (a resumed run too: the draw is per round); a task may repeat
    assert picks("random", 0) == picks("random", 0) and picks("random", 0) != picks("random", 1)
    assert len(set(picks("random", 0, rounds=12))) < 12
    # the β penalty alone: never-tried tasks first, in a seeded random order; the one just tried never comes next
    for seed in range(3):
        order = picks("recency", seed)
        assert sorted(order[:4]) == list("abcd") and all(x != y for x, y in zip(order, order[1:]))
    assert len({tuple(picks("recency", seed)[:4]) for seed in range(5)}) > 1  # not the easiest-tree order
    with pytest.raises(ValueError, match="selection"):
        Curriculum(tmp_path / "pool.txt", tmp_path / "o", rounds=1, selection="greedy")


# ---- the runner on the real CLI -------------------------------------------------------------------
def _memory_subprocess(path: Path) -> dict:
    """RAG± as a fresh process sees them (chromadb caches per process)."""
    code = (
        "import json,sys; from rag.memory import Memory; m = Memory(sys.argv[1]); "
        "print(json.dumps({k: [(e['task'], e['outcome'], e['scores']) for e in m.experiences(k == 'pos')] "
        "for k in ('pos', 'neg')}))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_failed_task_stays_in_the_pool_goes_to_rag_minus_and_is_penalised(tmp_path):
    from rag.memory import Memory

    broken = tmp_path / "broken"  # no tables: setup stops with exit 2 in seconds
    broken.mkdir()
    (broken / "description.md").write_text("# Broken\nPredict y from x.\n")
    (tmp_path / "pool.txt").write_text("broken\n")
    memory = Memory(tmp_path / "memory")
    state = Curriculum(tmp_path / "pool.txt", tmp_path / "out", rounds=2, memory=memory).run()
    rounds = [(r["task"], r["step"], r["setup_passed"], r["setup_rc"]) for r in state["rounds"]]
    assert rounds == [("broken", "done", False, 2)] * 2
    assert state["solved"] == [] and state["last_tried"] == {"broken": 1}
    assert "sample submission" in state["rounds"][0]["outcome"]
    # round 2: the same description and tree as the RAG- entry (sim- = diff- = 1), tried one round ago
    assert np.isclose(state["rounds"][1]["scores"]["broken"], -1 - 1 - math.exp(-1), atol=1e-4)
    assert [e["task"] for e in memory.experiences(False)] == ["broken", "broken"] and memory.experiences(True) == []
    # a finished run resumed with the same round count does nothing; a larger one adds rounds
    again = Curriculum(tmp_path / "pool.txt", tmp_path / "out", rounds=2, memory=memory).run()
    assert len(again["rounds"]) == 2 and len(memory.experiences(False)) == 2
    more = Curriculum(tmp_path / "pool.txt", tmp_path / "out", rounds=3, memory=memory).run()
    assert [r["round"] for r in more["rounds"]] == [0, 1, 2] and len(memory.experiences(False)) == 3


def _run_and_kill(cmd: list[str], out: Path, ready) -> None:
    """Start the curriculum CLI and SIGKILL it (and its agentk child) once `ready(state)` holds."""
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                state = json.loads((out / "curriculum.json").read_text())
            except (FileNotFoundError, json.JSONDecodeError):
                state = None
            if state and ready(state):
                return
            time.sleep(0.05)
        pytest.fail("the round never reached the point to kill it at")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@pytest.mark.slow  # a killed and resumed setup (40 s); tests/test_setup_examples.py's resume after a kill stays in the default run
def test_killed_during_setup_resumes_the_same_round(tmp_path):
    # setup fails with exit 2 (a one-column sample submission) once it has read a 10-million-row train.csv: a
    # cheap round that lasts a couple of seconds, so the kill lands mid-setup now that setup runs in-process
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "description.md").write_text("# Broken\nPredict y from x.\n")
    (broken / "train.csv").write_bytes(b"id,x,y\n" + b"1,2,3\n" * 10_000_000)
    (broken / "test.csv").write_text("id,x\n1,2\n")
    (broken / "sample_submission.csv").write_text("id\n1\n")
    (tmp_path / "pool.txt").write_text("broken\n")
    out, mem = tmp_path / "out", tmp_path / "memory"
    cmd = _one_round(tmp_path / "pool.txt", out, mem)
    _run_and_kill(cmd, out, lambda s: s["rounds"] and s["rounds"][0]["runs"].get("setup") == 1)
    killed = json.loads((out / "curriculum.json").read_text())
    assert killed["rounds"][0]["step"] == "setup" and killed["rounds"][0]["setup_rc"] is None, "killed mid-setup"

    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    state = json.loads((out / "curriculum.json").read_text())
    assert len(state["rounds"]) == 1, "no round was added or redone"
    rec = state["rounds"][0]
    assert (rec["task"], rec["step"], rec["setup_rc"], rec["runs"]) == ("broken", "done", 2, {"setup": 2})
    assert state["last_tried"] == {"broken": 0} and state["solved"] == []
    memory = _memory_subprocess(mem)
    assert [(t, s["round"]) for t, _, s in memory["neg"]] == [("broken", 0)] and memory["pos"] == []


def _one_round(pool, out, memory) -> list[str]:
    """The command of a one-round curriculum over `pool`."""
    return [sys.executable, "-m", "agentk", "curriculum", str(pool), "--rounds", "1", "--out", str(out),
            "--memory", str(memory)]  # fmt: skip


@pytest.mark.slow  # a real setup and quick solve of iris, killed and resumed: ~2 minutes on 2 cores
def test_killed_run_resumes_mid_round_without_redoing_it(tmp_path):
    from rag.memory import Memory

    shutil.copytree(ROOT / "examples" / "iris-species", tmp_path / "iris-species")
    (tmp_path / "pool.txt").write_text("iris-species\n")
    mem = tmp_path / "memory"
    Memory(mem).add_experience(False, "iris-species", "an earlier failure", "", "setup failed", {})
    out = tmp_path / "out"
    cmd = _one_round(tmp_path / "pool.txt", out, mem)
    # kill once the setup has written its own state (and a second more): it has something to resume
    _run_and_kill(
        cmd,
        out,
        lambda s: (
            s["rounds"]
            and s["rounds"][0]["step"] == "setup"
            and (out / "iris-species" / "setup.json").exists()
            and (time.sleep(1.0) or True)
        ),
    )
    killed = json.loads((out / "curriculum.json").read_text())
    assert killed["rounds"][0]["step"] == "setup" and killed["rounds"][0]["runs"] == {"setup": 1}

    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stderr[-2000:]
    state = json.loads((out / "curriculum.json").read_text())
    assert len(state["rounds"]) == 1, "no round was added or redone"
    rec = state["rounds"][0]
    assert rec["task"] == "iris-species" and rec["step"] == "done" and rec["setup_passed"]
    assert rec["runs"] == {"setup": 2, "solve": 1}  # the setup resumed, the solve ran once
    assert rec["metric"] == "accuracy" and 0.5 < rec["val_score"] <= 1.0
    assert rec["llm_calls"] == 0 and rec["tokens"] == 0  # the offline expert policy
    assert state["solved"] == ["iris-species"]
    memory = _memory_subprocess(mem)
    assert memory["neg"] == [], "a success wipes the task's earlier failures"
    assert [(t, s["round"]) for t, _, s in memory["pos"]] == [("iris-species", 0)]
    assert "round 1: iris-species" in done.stderr
    assert (out / "report.html").exists() and (out / "iris-species" / "report.html").exists()  # both reports
    assert f"report {out / 'report.html'}" in done.stderr


def test_setup_only_rounds_with_the_llm_policy_store_fixes_in_the_curriculum_memory(tmp_path, monkeypatch):
    """Two competitions set up by the LLM policy (a scripted server answering like the expert, whose first
    target-map program drops the id column): iris's fix lands in the curriculum's memory (not $AGENTK_MEMORY)
    and is shown in wine's retry prompt; no round solves."""
    from rag.memory import Memory
    from testing.scripted_llm import ScriptedLLM
    from testing.simulated_llm import ExpertAnswers, fenced, header

    for name in ("iris-species", "wine"):
        shutil.copytree(ROOT / "examples" / name, tmp_path / name)
    (tmp_path / "pool.txt").write_text("iris-species\nwine\n")
    out = tmp_path / "out"
    current: dict = {}
    prompts: dict[str, list[str]] = {}

    def handler(messages):
        intrinsic, stage = header(messages)
        name, oracle = current["task"], current["oracle"]
        if (intrinsic, stage) == ("code", "train_tab_target_map"):
            prompts.setdefault(name, []).append(messages[-1]["content"])
            if len(prompts[name]) == 1:
                return fenced(oracle.code(stage).replace("    return out\n", "    return out.drop(columns=['id'])\n"))
        return oracle(messages)

    class Watched(Curriculum):
        def _step(self, rec, step):
            current.update(task=rec["task"], oracle=ExpertAnswers(Path(rec["source"]), self.out / rec["task"]))
            return super()._step(rec, step)

    with ScriptedLLM(handler=handler) as server:
        for k, v in {
            "AGENTK_LLM_BASE_URL": server.url,
            "AGENTK_LLM_MODEL": "scripted-model",
            "AGENTK_LLM_API_KEY": "x",
            "AGENTK_LLM_CACHE": "off",
        }.items():
            monkeypatch.setenv(k, v)
        memory = Memory(tmp_path / "memory")
        state = Watched(tmp_path / "pool.txt", out, rounds=2, memory=memory, policy="llm", setup_only=True).run()
    assert [(r["task"], r["setup_passed"], r["runs"], r["outcome"]) for r in state["rounds"]] == [
        ("iris-species", True, {"setup": 1}, "set up"),
        ("wine", True, {"setup": 1}, "set up"),
    ]
    assert state["solved"] == ["iris-species", "wine"] and all(r["llm_calls"] > 10 for r in state["rounds"])
    assert not (out / "wine" / "solutions" / "network-1").exists() and not (out / "wine" / "solve.json").exists()
    assert sorted(f["competition"] for f in memory.list("fixes")) == ["iris-species", "wine"]
    assert "An example of a similar error being fixed" not in prompts["iris-species"][1]
    assert "An example of a similar error being fixed" in prompts["wine"][1] and "df[['Species']]" in prompts["wine"][1]
    assert [e["task"] for e in memory.experiences(True)] == ["iris-species", "wine"]
