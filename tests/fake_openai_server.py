"""A fault-injecting OpenAI-compatible HTTP server, for tests ONLY.

This is a fake on purpose: the narrator's retry, timeout, fallback and
secret-handling paths need a server that returns a 429 with ``Retry-After``, a
500, a stall past the client's timeout, a cut-off or empty answer, or a 400
against ``response_format`` exactly when a test asks, and a real server
(llama.cpp, Ollama, vLLM) cannot be made to do any of that on demand. It speaks
just enough of the API for ``openai``'s client: ``POST /v1/chat/completions``
(JSON, or SSE ``data: {...}`` events ending with ``data: [DONE]``) and
``GET /v1/models``.

Every request's headers and body are recorded (``server.requests``), so a test
can check the Authorization header carried the key and that a retry re-sent
the same messages. Each chat request takes the next scripted behaviour from
the queue (``server.script(ok(...), status(429), ...)``); an empty queue
answers ``server.fallback`` (default: a 500 saying nothing was scripted).

    with FakeOpenAIServer() as server:
        server.script(status(429, retry_after=0.1), ok('{"narration": "Hi"}'))
        narrator = OpenAINarrator(OpenAISettings(base_url=server.url, model="fake"))

:class:`StalledServer` is the other injected fault: an endpoint that accepts every TCP connection and never
answers a byte (a server hung on a dead GPU, a proxy with no upstream). No real server stalls on demand, so it
too is a fake, for tests only: the fitness check must stop on it, and the game must close without waiting for it.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Behaviour:
    """One scripted answer to one chat request."""

    kind: str
    content: str = ""
    code: int = 200
    retry_after: float | None = None
    delay: float = 0.0
    finish_reason: str = "stop"
    usage: tuple[int, int, int | None] | None = (120, 40, None)
    chunks: list[str] | None = None
    chunk_delay: float = 0.0
    echo_key: bool = False
    then: Behaviour | None = None


def ok(
    content: str,
    *,
    usage: tuple[int, int, int | None] | None = (120, 40, None),
    chunks: list[str] | None = None,
    chunk_delay: float = 0.0,
) -> Behaviour:
    """A 200 with ``content``; ``usage`` is (prompt, completion, cached) tokens; ``chunks`` splits the stream."""
    return Behaviour("ok", content, usage=usage, chunks=chunks, chunk_delay=chunk_delay)


def status(code: int, retry_after: float | None = None, *, message: str = "", echo_key: bool = False) -> Behaviour:
    """An HTTP error; ``echo_key`` puts the request's bearer token in the error message (as some servers do)."""
    return Behaviour("status", message or f"fake error {code}", code=code, retry_after=retry_after, echo_key=echo_key)


def delay(seconds: float, then: Behaviour | None = None) -> Behaviour:
    """Wait ``seconds`` before answering (``then``, or a 200): past the client's timeout, a timeout."""
    return Behaviour("delay", delay=seconds, then=then or ok('{"narration": "Too late."}'))


def invalid_json() -> Behaviour:
    """Broken JSON that even local repair cannot turn into a turn (it has no narration)."""
    return Behaviour("ok", '{"narraton": "You walk, "choices": [oops')


def prose_wrapped_json(obj: dict[str, Any]) -> Behaviour:
    text = f"Sure! Here is the turn:\n```json\n{json.dumps(obj)}\n```\nEnjoy the story."
    return Behaviour("ok", text)


def empty() -> Behaviour:
    return Behaviour("ok", "")


def truncated(content: str = '{"narration": "You step into the dark and') -> Behaviour:
    """An answer cut off by max_tokens (``finish_reason`` ``length``)."""
    return Behaviour("ok", content, finish_reason="length")


def reject_response_format(then: Behaviour | None = None) -> Behaviour:
    """A 400 when the request's response_format is ``json_schema``; else ``then`` (or a plain 200)."""
    return Behaviour("reject_format", then=then or ok('{"narration": "Plain."}'))


def keep_alive(seconds: float) -> Behaviour:
    """A stream that sends only SSE keep-alive comments (``: keep-alive``) for ``seconds``, as some gateways do."""
    return Behaviour("keep_alive", delay=seconds)


def drop() -> Behaviour:
    """Close the connection without answering."""
    return Behaviour("drop")


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None = None
    at: float = field(default_factory=time.monotonic)


class FakeOpenAIServer:
    """The server on 127.0.0.1 and a free port, in a background thread (a context manager)."""

    def __init__(self, *, models: list[str] | None = None, reject_json_schema: bool = False) -> None:
        self.models = ["fake-model"] if models is None else models
        self.reject_json_schema = reject_json_schema
        """Reject every json_schema response_format (a server without it), whatever the queue says."""
        self.queue: deque[Behaviour] = deque()
        self.fallback: Behaviour = status(500, message="fake server: nothing scripted")
        self.responder: Callable[[dict[str, Any]], Behaviour] | None = None
        """When set, picks every chat answer from the request's body (the queue is not used)."""
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def script(self, *behaviours: Behaviour) -> None:
        with self._lock:
            self.queue.extend(behaviours)

    def chat_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def next_behaviour(self, body: dict[str, Any] | None = None) -> Behaviour:
        with self._lock:
            if self.responder is not None and body is not None:
                return self.responder(body)
            return self.queue.popleft() if self.queue else self.fallback

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def _handler(server: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _record(self, body: dict[str, Any] | None) -> None:
            with server._lock:
                server.requests.append(Recorded(self.command, self.path, dict(self.headers.items()), body))

        def do_GET(self) -> None:
            self._record(None)
            if self.path.rstrip("/").endswith("/models"):
                data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in server.models]
                self._json(200, {"object": "list", "data": data})
            else:
                self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
            self._record(body)
            if not self.path.rstrip("/").endswith("/chat/completions") or not isinstance(body, dict):
                self._json(404, {"error": {"message": "bad request", "type": "invalid_request_error"}})
                return
            wants_schema = (body.get("response_format") or {}).get("type") == "json_schema"
            if server.reject_json_schema and wants_schema:  # takes nothing from the queue
                self._error(400, "response_format type json_schema is not supported by this server")
                return
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout)
                self._answer(body, server.next_behaviour(body), wants_schema)

        def _answer(self, body: dict[str, Any], b: Behaviour, wants_schema: bool) -> None:
            if b.kind == "delay":
                time.sleep(b.delay)
                assert b.then is not None
                b = b.then
            if b.kind == "reject_format":
                if wants_schema:
                    self._error(400, "response_format type json_schema is not supported by this server")
                    return
                assert b.then is not None
                b = b.then
            if b.kind == "drop":
                self.close_connection = True
                self.connection.close()
                return
            if b.kind == "keep_alive":
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                self.close_connection = True
                until = time.monotonic() + b.delay
                while time.monotonic() < until:  # comments only: a client sees bytes arrive, never an event
                    self.wfile.write(b": keep-alive\n\n")
                    self.wfile.flush()
                    time.sleep(0.2)
                return
            if b.kind == "status":
                message = b.content
                if b.echo_key:
                    message += f" Incorrect API key provided: {self.headers.get('Authorization', '')[7:]}"
                headers = {"Retry-After": f"{b.retry_after:g}"} if b.retry_after is not None else {}
                self._error(b.code, message, headers)
                return
            if body.get("stream"):
                self._stream(body, b)
            else:
                self._json(200, self._completion(body, b))

        def _error(self, code: int, message: str, headers: dict[str, str] | None = None) -> None:
            kind = {429: "rate_limit_exceeded", 401: "invalid_api_key"}.get(code, "invalid_request_error")
            self._json(code, {"error": {"message": message, "type": kind, "code": kind}}, headers)

        def _json(self, code: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        @staticmethod
        def _usage(b: Behaviour) -> dict[str, Any] | None:
            if b.usage is None:
                return None
            prompt, completion, cached = b.usage
            usage: dict[str, Any] = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            }
            if cached is not None:
                usage["prompt_tokens_details"] = {"cached_tokens": cached}
            return usage

        def _completion(self, body: dict[str, Any], b: Behaviour) -> dict[str, Any]:
            message = {"role": "assistant", "content": b.content}
            return {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "fake-model"),
                "choices": [{"index": 0, "message": message, "finish_reason": b.finish_reason}],
                "usage": self._usage(b),
            }

        def _stream(self, body: dict[str, Any], b: Behaviour) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            self.close_connection = True
            base = {
                "id": "chatcmpl-fake",
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": body.get("model", "fake-model"),
            }
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))

            def event(choices: list[dict[str, Any]], usage: dict[str, Any] | None = None) -> None:
                payload = {**base, "choices": choices}
                if include_usage:
                    payload["usage"] = usage
                self.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())
                self.wfile.flush()

            event([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
            pieces = b.chunks if b.chunks is not None else _split(b.content)
            for piece in pieces:
                if b.chunk_delay:
                    time.sleep(b.chunk_delay)
                event([{"index": 0, "delta": {"content": piece}, "finish_reason": None}])
            event([{"index": 0, "delta": {}, "finish_reason": b.finish_reason}])
            if include_usage:
                event([], self._usage(b))
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

    return Handler


def _split(text: str, size: int = 16) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


class StalledServer:
    """A fake endpoint on 127.0.0.1 that accepts connections and never answers (a context manager, for tests only).

    ``connections`` counts the connections accepted; each is held open, unread, until the server closes."""

    def __init__(self) -> None:
        self._socket = socket.create_server(("127.0.0.1", 0))
        self._socket.settimeout(0.05)
        self._held: list[socket.socket] = []
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._socket.getsockname()[:2]
        return f"http://{host}:{port}/v1"

    @property
    def connections(self) -> int:
        return len(self._held)

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                connection, _ = self._socket.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self._held.append(connection)

    def __enter__(self) -> StalledServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closed.set()
        self._thread.join(timeout=1)
        for connection in self._held:
            with contextlib.suppress(OSError):
                connection.close()
        self._socket.close()
