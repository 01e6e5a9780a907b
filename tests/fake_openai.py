"""A scriptable OpenAI-compatible server for tests: no real LLM, real HTTP.

Serves ``POST /v1/chat/completions`` and ``POST /v1/completions`` in the OpenAI
response format (with ``usage``) on 127.0.0.1, from a background thread. Each
request takes the next behaviour from a queue, or the default behaviour when the
queue is empty. A behaviour is a :class:`Reply` or a callable ``(body) -> Reply``.

    with FakeOpenAIServer(default=valid_answer()) as server:
        llm = OpenAILike(model="fake", api_base=server.base_url, api_key="x",
                         is_chat_model=True, max_retries=0, timeout=5)
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Union


@dataclass
class Reply:
    """What the server answers: a status, the assistant text, an optional delay, or a dropped connection."""

    content: str = ""
    status: int = 200
    delay: float = 0.0
    drop: bool = False


Behaviour = Union[Reply, Callable[[dict[str, Any]], Reply]]


def prompt_text(body: dict[str, Any]) -> str:
    """All prompt text of a chat or completion request body."""
    if "messages" in body:
        return "\n".join(str(m.get("content") or "") for m in body["messages"])
    return str(body.get("prompt", ""))


def prompt_columns(body: dict[str, Any]) -> list[list[str]]:
    """The ``Columns:`` lines of the prompt, one list of names per table, in order."""
    found = re.findall(r"^Columns: (.*)$", prompt_text(body), flags=re.MULTILINE)
    return [[c.strip() for c in line.split(" | ")] for line in found]


def is_glossary_prompt(body: dict[str, Any]) -> bool:
    """Whether the request asks for a table's glossary (``generation.glossary``), not a question."""
    return "You write a glossary" in prompt_text(body)


def glossary_for(body: dict[str, Any], terms: tuple[str, ...] = ("records",)) -> str:
    """A valid glossary answer: each ``- column (kind)`` line of the prompt gets ``the <column>``."""
    columns = re.findall(r"^- (.+?) \((?:number|date|duration|yes/no|text)\)", prompt_text(body), flags=re.MULTILINE)
    return json.dumps({"row": "one record", "terms": list(terms), "columns": {c: f"the {c}" for c in columns}})


def answer_for(body: dict[str, Any], question: str = "Which stadium hosted the concert Super Bootcamp?") -> str:
    """A valid answer: a glossary for a glossary prompt, else a path answer naming each table's first column."""
    if is_glossary_prompt(body):
        return glossary_for(body)
    tables = prompt_columns(body)
    answer: dict[str, Any] = {"thought": "each table is needed", "question": question}
    for i, columns in enumerate(tables):
        answer[f"relevant_columns_t{i + 1}"] = columns[:1]
    return json.dumps(answer)


def valid_answer(question: str = "Which stadium hosted the concert Super Bootcamp?") -> Behaviour:
    """Behaviour: a valid JSON answer for whatever tables the prompt shows."""
    return lambda body: Reply(answer_for(body, question))


def fenced_answer() -> Behaviour:
    """Behaviour: a valid answer wrapped in a markdown code fence with prose."""
    return lambda body: Reply(f"Sure! Here it is:\n```json\n{answer_for(body)}\n```\nHope this helps.")


def text(content: str) -> Reply:
    """A fixed assistant reply."""
    return Reply(content)


def http_error(status: int = 500) -> Reply:
    return Reply(status=status)


def delayed(seconds: float, then: Behaviour | None = None) -> Behaviour:
    """Behaviour: wait ``seconds`` before answering (valid answer by default)."""
    inner = then or valid_answer()

    def behave(body: dict[str, Any]) -> Reply:
        reply = inner(body) if callable(inner) else inner
        return Reply(reply.content, reply.status, seconds, reply.drop)

    return behave


class FakeOpenAIServer:
    """OpenAI-compatible HTTP server with scripted behaviours.

    Args:
        behaviours: Served in order, one per request.
        default: Served once the queue is empty (a valid answer if not given).
    """

    def __init__(self, behaviours: list[Behaviour] | None = None, default: Behaviour | None = None) -> None:
        self.queue: deque[Behaviour] = deque(behaviours or [])
        self.default: Behaviour = default or valid_answer()
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # -- lifecycle ---------------------------------------------------------
    def start(self) -> FakeOpenAIServer:
        handler = self._handler_class()
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening; clients then get connection errors until :meth:`start` again (same port)."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    def stop_soon(self) -> None:
        """Stop from inside a handler (shutdown must not run on the serving thread)."""
        threading.Thread(target=self.stop, daemon=True).start()

    def restart(self) -> None:
        self.stop()
        self.start()

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self.requests)

    # -- handling ----------------------------------------------------------
    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            behaviour = self.queue.popleft() if self.queue else self.default
        return behaviour(body) if callable(behaviour) else behaviour

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with fake._lock:
                    fake.requests.append(body)
                    fake.paths.append(self.path)
                    fake.in_flight += 1
                    fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                try:
                    reply = fake._next(body)
                    if reply.delay:
                        time.sleep(reply.delay)
                    if reply.drop:
                        self.close_connection = True
                        return
                    self._send(reply, body)
                finally:
                    with fake._lock:
                        fake.in_flight -= 1

            def _send(self, reply: Reply, body: dict[str, Any]) -> None:
                if reply.status != 200:
                    payload: dict[str, Any] = {"error": {"message": "scripted failure", "type": "server_error"}}
                else:
                    payload = _completion_payload(self.path, body, reply.content)
                data = json.dumps(payload).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

        return Handler


def _completion_payload(path: str, body: dict[str, Any], content: str) -> dict[str, Any]:
    prompt_tokens = max(1, len(prompt_text(body)) // 4)
    completion_tokens = max(1, len(content) // 4)
    usage = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    model = body.get("model", "fake")
    if path.endswith("/chat/completions"):
        message = {"role": "assistant", "content": content}
        choice = {"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}
        return {"id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": model,
                "choices": [choice], "usage": usage}  # fmt: skip
    choice = {"index": 0, "text": content, "finish_reason": "stop", "logprobs": None}
    return {"id": "cmpl-fake", "object": "text_completion", "created": 0, "model": model,
            "choices": [choice], "usage": usage}  # fmt: skip
