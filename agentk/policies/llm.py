"""One small client over the OpenAI-compatible chat API: config, retries, an on-disk cache, token accounting."""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
import tomllib
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from pathlib import Path

import openai

from agentk.core.errors import BadInput
from agentk.core.fileio import append_jsonl, write_json

DEFAULT_CONFIG = Path.home() / ".config" / "agentk" / "config.toml"
NOT_CONFIGURED = (
    "no LLM endpoint configured: set AGENTK_LLM_BASE_URL and AGENTK_LLM_MODEL (and AGENTK_LLM_API_KEY "
    "if the server needs one), or OPENAI_* likewise, or [llm] in ~/.config/agentk/config.toml"
)


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def _cache_path(value: object) -> Path | None:
    text = str(value).strip()
    return None if text.lower() in ("", "off", "none", "false", "0") else Path(text).expanduser()


@dataclass
class LLMConfig:
    base_url: str | None = None
    model: str | None = None
    api_key: str | None = None
    timeout: float = 120.0
    max_retries: int = 4
    cache_dir: Path | None = Path.home() / ".cache" / "agentk" / "llm"
    temperature: float = 0.0
    backoff: float = 0.5  # first retry's wait in seconds; doubles each retry (tests set it tiny)

    @classmethod
    def load(cls, path: Path | None = None) -> LLMConfig:
        """Per key: AGENTK_LLM_* env, then OPENAI_* env, then the [llm] table of the config file."""
        explicit = path or os.environ.get("AGENTK_CONFIG")
        file = Path(explicit).expanduser() if explicit else DEFAULT_CONFIG
        table: dict = {}
        if file.exists():
            try:
                table = tomllib.loads(file.read_text()).get("llm", {})
            except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as e:
                raise BadInput(f"config file {file} is malformed: {_one_line(e)}") from None
            if not isinstance(table, dict):
                raise BadInput(f"config file {file}: [llm] must be a table")
        elif explicit:
            raise BadInput(f"config file {file} does not exist")
        known = {f.name: f for f in fields(cls)}
        if unknown := sorted(set(table) - set(known)):
            raise BadInput(f"config file {file}: unknown [llm] keys {', '.join(unknown)}")
        config = cls()
        try:
            for key, value in table.items():
                if key == "cache_dir":
                    value = _cache_path(value)
                elif key in ("timeout", "temperature", "backoff"):
                    value = float(value)
                elif key == "max_retries":
                    value = int(value)
                elif value is not None:
                    value = str(value)
                setattr(config, key, value)
        except (TypeError, ValueError) as e:
            raise BadInput(f"config file {file}: bad [llm] value ({_one_line(e)})") from None
        for key in ("base_url", "model", "api_key"):
            env = os.environ.get(f"AGENTK_LLM_{key.upper()}") or os.environ.get(f"OPENAI_{key.upper()}")
            if env:
                setattr(config, key, env)
        if (cache := os.environ.get("AGENTK_LLM_CACHE")) is not None:
            config.cache_dir = _cache_path(cache)
        return config

    @property
    def configured(self) -> bool:
        return bool(self.model and (self.base_url or self.api_key))


@dataclass
class Reply:
    text: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    cached: bool

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class LLMError(BadInput):
    """The LLM endpoint cannot be used (unreachable, unknown model, bad key): exit 2 with one line."""


class Unreachable(LLMError):
    """No answer from the endpoint at all (the hybrid policy goes on with the expert)."""


class LLMClient:
    def __init__(self, config: LLMConfig, log_path: Path | None = None):
        self.config, self.log_path = config, log_path
        self.calls, self.tokens, self.seconds = 0, 0, 0.0
        self._lock = threading.Lock()  # policies may call from several threads
        self._client = (
            openai.OpenAI(
                base_url=config.base_url, api_key=config.api_key or "not-needed", timeout=config.timeout, max_retries=0
            )
            if config.configured
            else None
        )
        self.url = str(self._client.base_url).rstrip("/") if self._client else (config.base_url or "")

    def _unreachable(self, e: Exception) -> Unreachable:
        if isinstance(e, openai.APITimeoutError):
            reason = f"no answer within {self.config.timeout:g} s"
        else:  # the SDK says only "Connection error."; the root cause says why
            while e.__cause__ is not None:
                e = e.__cause__
            reason = _one_line(e) or type(e).__name__
        return Unreachable(
            f"LLM endpoint {self.url} is unreachable ({reason}): start the server or fix AGENTK_LLM_BASE_URL"
        )

    def _call(self, fn, skip: tuple[int, ...] = ()):
        """fn() with retries on transient failures; a final failure becomes a one-line LLMError, a status in
        `skip` gives None."""
        if self._client is None:
            raise LLMError(NOT_CONFIGURED)
        for attempt in range(self.config.max_retries + 1):
            try:
                return fn()
            except openai.APIError as e:
                status = getattr(e, "status_code", None)
                if status in skip:
                    return None
                transient = isinstance(e, openai.APIConnectionError) or status == 429 or (status or 0) >= 500
                if not transient or attempt == self.config.max_retries:
                    raise self._error(e) from None
                wait = min(self.config.backoff * 2**attempt, 8.0)
                try:  # servers that rate-limit often say how long to wait
                    wait = min(float(e.response.headers["retry-after"]), 30.0)
                except (AttributeError, KeyError, TypeError, ValueError):
                    pass
                time.sleep(max(wait, 0.0))

    def _error(self, e: Exception) -> LLMError:
        if isinstance(e, openai.APIConnectionError):
            return self._unreachable(e)
        if not isinstance(e, openai.APIStatusError):  # e.g. a 200 whose body is not a chat completion
            return LLMError(f"LLM endpoint {self.url} gave an unusable answer: {_one_line(e)}")
        body = e.body if isinstance(e.body, dict) else {}
        message = _one_line(body.get("message") or e.message)
        if e.status_code == 401:
            return LLMError(f"LLM endpoint {self.url} rejected the API key ({message}): set AGENTK_LLM_API_KEY")
        if e.status_code == 404:
            return LLMError(f"model {self.config.model} is not served by {self.url} ({message}): set AGENTK_LLM_MODEL")
        return LLMError(f"LLM endpoint {self.url} answered {e.status_code}: {message}")

    def check(self) -> None:
        """Fail fast, before a run, if the endpoint is down, the key is wrong or the model is not served."""
        served = self._call(lambda: [m.id for m in self._client.models.list()], skip=(404, 405))
        if served is None:
            return  # this server has no /models: the first chat call will tell
        if served and self.config.model not in served:
            raise LLMError(
                f"model {self.config.model} is not served by {self.url} "
                f"(it serves: {', '.join(served)}): set AGENTK_LLM_MODEL"
            )

    def chat(self, messages: list[dict], purpose: str = "") -> Reply:
        c = self.config
        key = hashlib.sha256(
            json.dumps([c.model, messages, c.temperature], sort_keys=True, default=str).encode()
        ).hexdigest()
        path = c.cache_dir / key[:2] / f"{key}.json" if c.cache_dir else None
        start = time.monotonic()
        reply = None
        if path is not None and path.exists():
            try:
                hit = json.loads(path.read_text())
                reply = Reply(
                    hit["text"], hit["prompt_tokens"], hit["completion_tokens"], time.monotonic() - start, True
                )
            except (OSError, ValueError, KeyError, TypeError):
                reply = None  # a damaged entry is a miss; it is rewritten below
        if reply is None:
            response = self._call(
                lambda: self._client.chat.completions.create(
                    model=c.model, messages=messages, temperature=c.temperature
                )
            )
            choices = response.choices or []
            text = (choices[0].message.content if choices and choices[0].message else None) or ""
            usage = response.usage
            reply = Reply(
                text,
                (usage.prompt_tokens or 0) if usage else 0,
                (usage.completion_tokens or 0) if usage else 0,
                time.monotonic() - start,
                False,
            )
            if path is not None:
                write_json(
                    path,
                    {
                        "model": c.model,
                        "text": reply.text,
                        "prompt_tokens": reply.prompt_tokens,
                        "completion_tokens": reply.completion_tokens,
                        "seconds": reply.seconds,
                    },
                )
        with self._lock:
            if not reply.cached:
                self.calls, self.tokens, self.seconds = (
                    self.calls + 1,
                    self.tokens + reply.tokens,
                    self.seconds + reply.seconds,
                )
            if self.log_path is not None:
                Path(self.log_path).parent.mkdir(parents=True, exist_ok=True)
                append_jsonl(
                    self.log_path,
                    {
                        "time": datetime.now(UTC).isoformat(timespec="seconds"),
                        "purpose": purpose,
                        "model": c.model,
                        "messages": messages,
                        "answer": reply.text,
                        "tokens": {
                            "prompt": reply.prompt_tokens,
                            "completion": reply.completion_tokens,
                            "total": reply.tokens,
                        },
                        "seconds": round(reply.seconds, 3),
                        "cached": reply.cached,
                    },
                )
        return reply
