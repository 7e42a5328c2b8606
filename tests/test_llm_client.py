"""The LLM client against a real scripted OpenAI-compatible server on 127.0.0.1 (no in-process mocks)."""

from __future__ import annotations

import socket

import pytest

from agentk.core.errors import BadInput
from agentk.core.fileio import read_jsonl
from agentk.policies.llm import LLMClient, LLMConfig, LLMError
from testing.scripted_llm import ScriptedLLM

ENV = [
    "AGENTK_LLM_BASE_URL",
    "AGENTK_LLM_MODEL",
    "AGENTK_LLM_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_MODEL",
    "OPENAI_API_KEY",
    "AGENTK_LLM_CACHE",
    "AGENTK_CONFIG",
]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    """No test sees the developer's endpoint, config file or home cache."""
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENTK_CONFIG", str(tmp_path / "absent.toml"))
    monkeypatch.setattr("agentk.policies.llm.DEFAULT_CONFIG", tmp_path / "no-config.toml")
    (tmp_path / "absent.toml").write_text("")


def config(url: str, tmp_path, **kw) -> LLMConfig:
    kw = {"model": "scripted-model", "cache_dir": None, "max_retries": 2, "backoff": 0.01, "timeout": 10.0, **kw}
    return LLMConfig(base_url=url, **kw)


def user(text: str) -> list[dict]:
    return [{"role": "system", "content": "You are terse."}, {"role": "user", "content": text}]


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_answers_by_pattern_and_lists_in_order(tmp_path):
    rules = [(r"metric", "rmse"), (r"plan", ["first plan", "second plan"]), (r"echo (\w+)", lambda m: "echoed")]
    with ScriptedLLM(rules, handler=lambda messages: "fallback") as llm:
        client = LLMClient(config(llm.url, tmp_path))
        client.check()
        assert client.chat(user("Which METRIC?")).text == "rmse"
        assert [client.chat(user(f"plan {i}")).text for i in range(3)] == ["first plan", "second plan", "second plan"]
        assert client.chat(user("echo hi")).text == "echoed"
        reply = client.chat(user("anything else"))
        assert reply.text == "fallback" and not reply.cached
        assert reply.prompt_tokens == 5 and reply.completion_tokens == 1 and reply.tokens == 6
        assert client.calls == 6 and client.tokens > 0 and client.seconds > 0
        assert llm.requests[0]["messages"][-1]["content"] == "Which METRIC?"


def test_no_scripted_answer_is_a_one_line_error(tmp_path):
    with ScriptedLLM([(r"^known", "yes")]) as llm:
        with pytest.raises(LLMError, match="no scripted answer for: unknown prompt") as e:
            LLMClient(config(llm.url, tmp_path, max_retries=0)).chat(user("unknown prompt\nsecond line"))
        assert "\n" not in str(e.value)


def test_retries_transient_failures_then_succeeds(tmp_path):
    with ScriptedLLM([(r".", "ok")], failures=(429, 500, 503)) as llm:
        client = LLMClient(config(llm.url, tmp_path, max_retries=3))
        reply = client.chat(user("hello"))
        assert reply.text == "ok" and len(llm.requests) == 4 and client.calls == 1


def test_failures_beyond_max_retries_raise(tmp_path):
    with ScriptedLLM([(r".", "ok")], failures=(500, 502, 503)) as llm:
        with pytest.raises(LLMError, match="500|502|503") as e:
            LLMClient(config(llm.url, tmp_path, max_retries=1)).chat(user("hello"))
        assert "\n" not in str(e.value) and len(llm.requests) == 2


def test_client_errors_are_not_retried(tmp_path):
    with ScriptedLLM([(r".", "ok")], failures=(400,)) as llm:
        with pytest.raises(LLMError, match="scripted failure 400"):
            LLMClient(config(llm.url, tmp_path, max_retries=3)).chat(user("hello"))
        assert len(llm.requests) == 1


def test_unreachable_endpoint(tmp_path):
    url = closed_port_url()
    client = LLMClient(config(url, tmp_path, max_retries=1))
    for call in (client.check, lambda: client.chat(user("hello"))):
        with pytest.raises(LLMError) as e:
            call()
        message = str(e.value)
        assert url in message and "unreachable" in message and "\n" not in message
        assert e.value.exit_code == 2 and isinstance(e.value, BadInput)


def test_unknown_model(tmp_path):
    with ScriptedLLM([(r".", "ok")], model="served-model") as llm:
        client = LLMClient(config(llm.url, tmp_path, model="missing-model"))
        with pytest.raises(LLMError) as e:
            client.check()
        assert "missing-model" in str(e.value) and "served-model" in str(e.value) and llm.url in str(e.value)
        with pytest.raises(LLMError, match="missing-model") as e:
            client.chat(user("hello"))
        assert "\n" not in str(e.value) and len(llm.requests) == 1  # a 404 is not retried


def test_not_configured_says_what_to_set(tmp_path):
    client = LLMClient(LLMConfig(cache_dir=None))
    assert not client.config.configured
    for call in (client.check, lambda: client.chat(user("hello"))):
        with pytest.raises(LLMError, match="AGENTK_LLM_BASE_URL.*AGENTK_LLM_MODEL"):
            call()


def test_timeout(tmp_path):
    with ScriptedLLM([(r".", "late")], delay=2) as llm:
        client = LLMClient(config(llm.url, tmp_path, timeout=0.5, max_retries=1))
        with pytest.raises(LLMError, match="unreachable") as e:
            client.chat(user("hello"))
        assert llm.url in str(e.value) and len(llm.requests) == 2


def test_cache_and_log(tmp_path):
    log = tmp_path / "log" / "llm.jsonl"
    with ScriptedLLM([(r".", "cached answer")]) as llm:
        client = LLMClient(config(llm.url, tmp_path, cache_dir=tmp_path / "cache"), log_path=log)
        first = client.chat(user("same question"), purpose="plan")
        second = client.chat(user("same question"), purpose="plan")
        assert len(llm.requests) == 1 and not first.cached and second.cached
        assert second.text == first.text == "cached answer" and second.tokens == first.tokens
        assert client.calls == 1 and client.tokens == first.tokens
        assert len(list((tmp_path / "cache").rglob("*.json"))) == 1
        third = client.chat(user("another question"))
        assert not third.cached and len(llm.requests) == 2 and client.calls == 2
        # a fresh client (a resumed run) reads the same cache
        assert LLMClient(client.config).chat(user("same question")).cached and len(llm.requests) == 2
    rows = read_jsonl(log)
    assert [r["cached"] for r in rows] == [False, True, False]
    assert rows[0]["purpose"] == "plan" and rows[0]["model"] == "scripted-model"
    assert rows[0]["messages"] == user("same question") and rows[0]["answer"] == "cached answer"
    assert rows[0]["tokens"]["total"] == first.tokens and rows[0]["seconds"] >= 0 and rows[0]["time"]


def test_config_precedence(tmp_path, monkeypatch):
    file = tmp_path / "config.toml"
    file.write_text(
        '[llm]\nbase_url = "http://file/v1"\nmodel = "file-model"\napi_key = "file-key"\n'
        'timeout = 7\nmax_retries = 1\ncache_dir = "%s"\ntemperature = 0.3\n' % (tmp_path / "fc")
    )
    c = LLMConfig.load(file)
    assert (c.base_url, c.model, c.api_key, c.timeout, c.max_retries, c.temperature) == (
        "http://file/v1",
        "file-model",
        "file-key",
        7.0,
        1,
        0.3,
    )
    assert c.cache_dir == tmp_path / "fc" and c.configured
    monkeypatch.setenv("AGENTK_CONFIG", str(file))
    assert LLMConfig.load().model == "file-model"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://openai/v1")
    monkeypatch.setenv("OPENAI_MODEL", "openai-model")
    monkeypatch.setenv("OPENAI_API_KEY", "openai-key")
    c = LLMConfig.load()
    assert (c.base_url, c.model, c.api_key) == ("http://openai/v1", "openai-model", "openai-key")
    monkeypatch.setenv("AGENTK_LLM_BASE_URL", "http://agentk/v1")
    monkeypatch.setenv("AGENTK_LLM_MODEL", "agentk-model")
    c = LLMConfig.load()
    assert (c.base_url, c.model, c.api_key) == ("http://agentk/v1", "agentk-model", "openai-key")
    monkeypatch.setenv("AGENTK_LLM_CACHE", "off")
    assert LLMConfig.load().cache_dir is None
    monkeypatch.setenv("AGENTK_LLM_CACHE", str(tmp_path / "envcache"))
    assert LLMConfig.load().cache_dir == tmp_path / "envcache"


def test_config_defaults_and_errors(tmp_path):
    c = LLMConfig.load()  # the autouse fixture points at an empty config file
    assert c.model is None and not c.configured and c.max_retries == 4 and c.timeout == 120.0
    assert not LLMConfig(model="m").configured and LLMConfig(model="m", api_key="k").configured
    bad = tmp_path / "bad.toml"
    bad.write_text("[llm\nmodel = ")
    with pytest.raises(BadInput, match="malformed") as e:
        LLMConfig.load(bad)
    assert "\n" not in str(e.value)
    bad.write_text('[llm]\ntimeout = "soon"\n')
    with pytest.raises(BadInput):
        LLMConfig.load(bad)
    with pytest.raises(BadInput, match="does not exist"):
        LLMConfig.load(tmp_path / "missing.toml")
