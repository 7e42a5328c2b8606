"""A scripted OpenAI-compatible HTTP server on 127.0.0.1, so tests and benchmarks exercise the real client
over real HTTP (never a mock object inside the process)."""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def _text(content) -> str:
    if isinstance(content, list):  # content parts: keep the text ones
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _last_user_text(messages: list[dict]) -> str:
    return next((_text(m.get("content")) for m in reversed(messages or []) if m.get("role") == "user"), "")


def _words(text: str) -> int:  # a stand-in for a tokenizer: whitespace-split words
    return len(str(text).split())


class ScriptedLLM:
    def __init__(
        self,
        rules=(),
        handler: Callable[[list[dict]], str] | None = None,
        model: str = "scripted-model",
        failures=(),
        delay: float = 0.0,
    ):
        # lists are copied: each rule consumes its own answers in order, the last one repeating
        self.rules = [(re.compile(p, re.S | re.I), list(a) if isinstance(a, (list, tuple)) else a) for p, a in rules]
        self.handler, self.model, self.delay = handler, model, delay
        self.failures = list(failures)
        self.requests: list[dict] = []
        self.url = ""
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    def answer(self, messages: list[dict]) -> str | None:
        prompt = _last_user_text(messages)
        for pattern, answer in self.rules:
            if pattern.search(prompt):
                if callable(answer):
                    return str(answer(messages))
                if isinstance(answer, list):
                    with self._lock:
                        return answer.pop(0) if len(answer) > 1 else (answer[0] if answer else "")
                return answer
        return self.handler(messages) if self.handler else None

    def start(self) -> ScriptedLLM:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._server.daemon_threads = True
        self._server.block_on_close = False  # a delayed answer must not hold stop() up
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True, name="scripted-llm").start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> ScriptedLLM:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _make_handler(llm: ScriptedLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # keep test output clean
            pass

        def _send(self, status: int, body: dict, headers: dict | None = None) -> None:
            data = json.dumps(body).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                pass  # the client gave up (timeout tests): nothing to answer

        def _error(
            self,
            status: int,
            message: str,
            kind: str = "server_error",
            code: str | None = None,
            headers: dict | None = None,
        ) -> None:
            self._send(status, {"error": {"message": message, "type": kind, "code": code}}, headers)

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._send(
                    200,
                    {
                        "object": "list",
                        "data": [{"id": llm.model, "object": "model", "created": 0, "owned_by": "scripted"}],
                    },
                )
            else:
                self._error(404, f"no route {self.path}", "invalid_request_error")

        def do_POST(self) -> None:
            if not self.path.rstrip("/").endswith("/chat/completions"):
                return self._error(404, f"no route {self.path}", "invalid_request_error")
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            except ValueError:
                return self._error(400, "request body is not JSON", "invalid_request_error")
            with llm._lock:
                llm.requests.append(body)
                failure = llm.failures.pop(0) if llm.failures else None
            if llm.delay:
                time.sleep(llm.delay)
            if failure is not None:
                headers = {"Retry-After": "0"} if failure == 429 else None
                return self._error(failure, f"scripted failure {failure}", headers=headers)
            if body.get("model") != llm.model:
                return self._error(
                    404, f"The model `{body.get('model')}` does not exist", "invalid_request_error", "model_not_found"
                )
            messages = body.get("messages") or []
            try:
                text = llm.answer(messages)
            except Exception as e:  # a broken scripted callable is the test's bug: say so over HTTP
                return self._error(500, f"scripted answer raised {type(e).__name__}: {e}")
            if text is None:
                return self._error(500, f"no scripted answer for: {_last_user_text(messages)[:200]}")
            prompt = sum(_words(_text(m.get("content"))) for m in messages)
            completion = _words(text)
            self._send(
                200,
                {
                    "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": llm.model,
                    "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                    ],
                    "usage": {
                        "prompt_tokens": prompt,
                        "completion_tokens": completion,
                        "total_tokens": prompt + completion,
                    },
                },
            )

    return Handler
