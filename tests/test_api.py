"""agentk.api without the CLI: run_setup on a bundled example returns the typed state and writes the workspace;
bad input raises BadInput before anything is written; the solve refuses a workspace it cannot use."""

from __future__ import annotations

import json

import pytest
from conftest import EXAMPLES

from agentk import api
from agentk.core.errors import BadInput
from agentk.core.state import EpisodeState
from agentk.workspace import Workspace


@pytest.fixture(scope="module")
def iris(tmp_path_factory):
    events: list[tuple[str, dict]] = []
    ws = tmp_path_factory.mktemp("api") / "iris"
    result = api.run_setup(EXAMPLES / "iris-species", ws, "expert", on_event=lambda k, i: events.append((k, i)))
    return result, events


def test_run_setup_returns_the_typed_state_and_writes_the_workspace(iris):
    result, events = iris
    ws = Workspace(result.workspace)
    assert isinstance(result.state, EpisodeState) and result.state.status == "done"
    assert result.state.info == {"source": str((EXAMPLES / "iris-species").resolve())}
    assert result.state.stages and all(s.status == "passed" for s in result.state.stages.values())
    saved = json.loads(ws.setup_state.read_text())
    assert saved == result.state.to_json()
    assert ws.submission.read_bytes() == ws.light.submission.read_bytes()  # the light solve's, copied
    kinds = [k for k, _ in events]
    assert {"stage", "result", "meta", "done"} <= set(kinds) and kinds[-1] == "setup_end"
    assert events[-1][1]["state"].to_json() == saved
    lines = [api.describe_event(k, i) for k, i in events]
    assert "[dim]…[/dim] fetch attempt 1" in lines and "[green]✓[/green] fetch" in lines


def test_a_finished_setup_is_resumed_as_it_is_and_not_redone_without_force(iris):
    result, _ = iris
    before = Workspace(result.workspace).setup_state.read_text()
    again = api.run_setup(None, result.workspace, "expert", resume=True)
    assert again.state.to_json() == result.state.to_json()
    with pytest.raises(BadInput, match="already holds a setup \\(done\\): use --resume"):
        api.run_setup(EXAMPLES / "iris-species", result.workspace, "expert")
    assert Workspace(result.workspace).setup_state.read_text() == before


@pytest.mark.parametrize(
    "source, policy, message",
    [("missing-folder", "expert", "missing-folder"), (EXAMPLES / "iris-species", "clever", "unknown policy 'clever'")],
)
def test_bad_input_raises_before_anything_is_written(tmp_path, source, policy, message):
    events = []
    ws = tmp_path / "ws"
    with pytest.raises(BadInput, match=message):
        api.run_setup(
            tmp_path / source if isinstance(source, str) else source, ws, policy, on_event=lambda k, i: events.append(k)
        )
    assert not ws.exists() and events == []
    assert api.one_line(BadInput("two\n  lines")) == "agentk: two lines"


def test_run_solve_refuses_an_unknown_budget_and_an_unfinished_setup(tmp_path):
    with pytest.raises(BadInput, match="unknown budget 'huge'"):
        api.run_solve(tmp_path, "huge")
    with pytest.raises(BadInput, match="holds no setup"):
        api.run_solve(tmp_path, "quick")
    (tmp_path / "setup.json").write_text(json.dumps({"status": "failed", "policy": "expert", "stages": {}}))
    with pytest.raises(BadInput, match=r"not finished \(failed\)"):
        api.run_solve(tmp_path, "quick")
