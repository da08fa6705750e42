"""The chat client under the OpenAI-compatible narrator: requests, retries, JSON modes, streaming, measurements.

What it guarantees:

- **Bounded.** The SDK's own retries are off; this module retries empty
  answers, cut-off answers, 408/409/429/5xx, timeouts and connection errors at
  most ``max_attempts`` times with a short exponential backoff (honouring
  ``Retry-After`` up to a cap), all within ``timeout_s * max_attempts`` seconds
  of wall time, then raises :class:`NarratorError` naming what happened. A
  retry sends the same messages; nothing is recalled again.
- **JSON.** ``json_schema`` (constrained decoding to the request's schema)
  where the endpoint supports it, else ``json_object``, else the prompt alone.
  In ``auto`` mode a 400 against a ``response_format`` falls back to the next
  mode once, and the mode that worked is remembered.
- **Streaming.** Every answer is streamed (unless nobody reads the stream and
  the server reports usage only without one); each text delta goes to the
  request's ``stream_to`` as it arrives, and the whole text is returned at the end.
- **Secrets.** The API key never appears in an exception, a log record, a
  ``repr`` or a returned text: every message built from a server's answer
  goes through :meth:`ChatClient.redact`.
- **Measured.** Each call's tokens, attempts and times are kept as
  :class:`~game.llm.openai_stats.CallStats` (:attr:`ChatClient.last_calls`).

``openai`` is imported when a client is built, never when this module is
imported (the core stays light; see ``tests/test_architecture.py``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from game.llm.base import NarratorError
from game.llm.openai_endpoint import NO_KEY, redact, resolve, url_secrets
from game.llm.openai_stats import CallStats, read_usage
from game.llm.presets import WireMode
from game.llm.schemas import SCHEMA_TEXT
from game.llm.settings import OpenAISettings

if TYPE_CHECKING:
    from openai import APIStatusError, OpenAI

log = logging.getLogger("storyecho.llm")

NEXT_MODE: dict[str, WireMode] = {"json_schema": "json_object", "json_object": "prompt"}
"""Where ``auto`` falls back to when the endpoint rejects a ``response_format``."""
BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 8.0
RETRY_AFTER_CAP_S = 30.0
"""The longest ``Retry-After`` honoured; a server asking for more is waited on this long at most."""


@dataclass
class ChatRequest:
    """One call to make: its purpose (``turn``, ``summary``, ``facts``), messages and answer schema, and where its
    text streams to."""

    purpose: str
    messages: list[dict[str, str]]
    schema_name: str
    schema: dict[str, Any]
    temperature: float
    stream_to: Callable[[str], None] | None = None
    schema_after: str | None = None
    """Text of the system prompt the schema follows when it travels in the prompt (the answer format)."""
    seed: int | None = None
    """Sampling seed (a retried turn's: another telling); None leaves it to the server."""


def with_schema(messages: list[dict[str, str]], schema_after: str | None = None) -> list[dict[str, str]]:
    """``messages`` with :data:`SCHEMA_TEXT` in the system prompt, right after ``schema_after`` when it is there.

    A turn's system prompt begins with what never changes (persona, answer format) and ends with
    what changes every few turns (the Story Bible, the quests, the synopsis; see
    ``game/engine/prompt.py``): the schema goes right after the answer format, so an endpoint's
    prompt cache keeps it in the prefix every turn shares, instead of after the synopsis.
    """
    out = [dict(m) for m in messages]
    if not out or out[0].get("role") != "system":
        return [{"role": "system", "content": SCHEMA_TEXT}, *out]
    system = out[0]["content"]
    if schema_after and schema_after in system:
        out[0]["content"] = system.replace(schema_after, f"{schema_after}\n\n{SCHEMA_TEXT}", 1)
    else:
        out[0]["content"] = f"{system}\n\n{SCHEMA_TEXT}"
    return out


def _has_format(request: ChatRequest) -> bool:
    system = request.messages[0].get("content", "") if request.messages else ""
    return request.schema_after is not None and request.schema_after in system


class _Retryable(Exception):
    def __init__(self, problem: str, wait: float | None = None) -> None:
        super().__init__(problem)
        self.problem, self.wait = problem, wait


class _Fatal(Exception):
    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem


class _Unsupported(_Fatal):
    """A 4xx against a request that carried a response_format."""


def _retry_after(headers: Mapping[str, str]) -> float | None:
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value:
            try:
                return max(0.0, float(value) * scale)
            except ValueError:
                continue
    return None


class ChatClient:
    """Chat completions from one OpenAI-compatible endpoint, within the guarantees of the module doc.

    Args:
        settings: endpoint, model and limits (see :class:`OpenAISettings`).
        on_retry: called with the reason before each retry.
        environ: where to read the key (default ``os.environ``).

    Raises:
        NarratorError: at construction when the endpoint needs a key and none is set.
    """

    backoff_base_s = BACKOFF_BASE_S

    def __init__(
        self,
        settings: OpenAISettings,
        *,
        on_retry: Callable[[str], None] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        import openai

        self.settings = settings
        self.on_retry = on_retry
        self.endpoint = resolve(settings, environ)
        self._client: OpenAI = openai.OpenAI(
            base_url=self.endpoint.base_url,
            api_key=self.endpoint.api_key,
            timeout=settings.timeout_s,
            max_retries=0,
        )
        self._lock = threading.Lock()
        self._mode: WireMode = self.endpoint.json_mode
        self._model: str | None = self.endpoint.model
        self.last_call: CallStats | None = None
        """The last ``turn`` call (summaries run in the background and keep their own)."""
        self.last_calls: dict[str, CallStats] = {}
        """The last call of each purpose: ``turn``, ``summary``, ``facts``."""

    @property
    def json_mode(self) -> WireMode:
        """The JSON mode the next request uses (after any ``auto`` fallback)."""
        return self._mode

    def redact(self, text: str) -> str:
        """``text`` without the API key (or anything that looks like one) and without what the base URL holds
        besides its place (user info, query values)."""
        return redact(
            text.replace(self.endpoint.base_url, self.endpoint.shown),
            self.endpoint.api_key,
            *url_secrets(self.endpoint.base_url),
        )

    def _messages(self, request: ChatRequest, mode: WireMode) -> tuple[list[dict[str, str]], bool]:
        """The messages to send: as composed. Only a turn whose prompt lacks the answer format (``schema_after``
        absent) and that the endpoint does not decode against the schema gets the schema in its system prompt: the
        engine's answer format already gives every key and shape, and sending both cost 756 tokens a turn."""
        if request.purpose != "turn" or mode == "json_schema" or _has_format(request):
            return request.messages, False
        return with_schema(request.messages, request.schema_after), True

    def _response_format(self, request: ChatRequest, mode: WireMode) -> dict[str, Any] | None:
        if mode == "json_schema":
            return {
                "type": "json_schema",
                "json_schema": {"name": request.schema_name, "schema": request.schema, "strict": False},
            }
        if mode == "json_object":
            return (
                {"type": "json_object", "schema": request.schema}
                if self.endpoint.object_schema
                else {"type": "json_object"}
            )
        return None

    def _backoff(self, tries: int) -> float:
        return float(min(BACKOFF_CAP_S, self.backoff_base_s * 2 ** (tries - 1) * (1 + random.random() / 4)))

    # -------------------------------------------------------------- call
    def _call(self, request: ChatRequest) -> str:
        settings = self.settings
        start = time.monotonic()
        deadline = start + settings.timeout_s * settings.max_attempts
        stats = CallStats(purpose=request.purpose, model=self._model or "?")
        with self._lock:
            mode = self._mode
        tried_modes: list[WireMode] = []
        tries = 0
        problem = ""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0.01:
                problem = problem or f"no answer from {self.endpoint.shown} in time"
                break
            tries += 1
            stats.attempts += 1
            stats.json_mode = mode
            try:
                text = self._once(request, mode, min(settings.timeout_s, remaining), stats, start)
            except _Unsupported as exc:
                problem = exc.problem
                nxt = NEXT_MODE.get(mode)
                if self.endpoint.auto and nxt is not None:
                    log.info("%s rejected response_format %s; trying %s", self.endpoint.host, mode, nxt)
                    tried_modes.append(mode)
                    mode, tries = nxt, tries - 1  # a fallback is not a retry
                    continue
                if not self.endpoint.auto:
                    problem += f" (json_mode is {mode}; json_mode 'auto' falls back to what the server supports)"
                break
            except _Fatal as exc:
                problem = exc.problem
                break
            except _Retryable as exc:
                problem = exc.problem
                if tries >= settings.max_attempts:
                    break
                wait = self._backoff(tries) if exc.wait is None else min(exc.wait, RETRY_AFTER_CAP_S)
                if time.monotonic() + wait >= deadline:
                    if exc.wait is not None:
                        problem += f" (asked to wait {exc.wait:g}s)"
                    break
                log.info("%s call attempt %d failed: %s; retrying in %.2fs", request.purpose, tries, problem, wait)
                self._emit(self.on_retry, problem)
                time.sleep(wait)
                continue
            if tried_modes:
                with self._lock:
                    self._mode = mode  # remember the mode that worked
            self._finish(stats, start, None)
            return text
        stats.error = self.redact(f"{problem} ({stats.attempts} attempt{'s' if stats.attempts != 1 else ''})")
        self._finish(stats, start, stats.error)
        raise NarratorError(stats.error)

    def _finish(self, stats: CallStats, start: float, error: str | None) -> None:
        stats.elapsed_ms = round((time.monotonic() - start) * 1000, 1)
        self.last_calls[stats.purpose] = stats
        if stats.purpose == "turn":
            self.last_call = stats
        if error:
            log.warning("%s call failed: %s", stats.purpose, error)
        else:
            log.debug(
                "%s call: %s attempts, %s ms, %s prompt / %s completion / %s cached tokens",
                stats.purpose,
                stats.attempts,
                stats.elapsed_ms,
                stats.prompt_tokens,
                stats.completion_tokens,
                stats.cached_tokens,
            )

    def model_context(self) -> int | None:
        """The model's context size in tokens, when the endpoint's model list says (OpenRouter's
        ``context_length``, vLLM's ``max_model_len``, llama.cpp's ``meta.n_ctx_train``); None when it does not
        or cannot be asked."""
        import openai

        try:
            listed = self._client.models.list(timeout=min(10.0, self.settings.timeout_s)).data
        except openai.OpenAIError:
            return None
        for model in listed:
            if self._model is not None and model.id != self._model:
                continue
            extra: dict[str, Any] = model.model_extra or {}
            meta: dict[str, Any] = extra["meta"] if isinstance(extra.get("meta"), dict) else {}
            for value in (
                extra.get("context_length"),
                extra.get("max_model_len"),
                meta.get("n_ctx"),
                meta.get("n_ctx_train"),
            ):
                if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                    return value
        return None

    def _model_name(self, timeout: float) -> str:
        if self._model is None:
            listed = [m.id for m in self._client.models.list(timeout=timeout).data]
            if not listed:
                raise _Fatal(f"{self.endpoint.shown} serves no model; set one in the settings")
            self._model = listed[0]
        return self._model

    def _once(self, request: ChatRequest, mode: WireMode, timeout: float, stats: CallStats, start: float) -> str:
        """One HTTP request; raises ``_Retryable``/``_Fatal``/``_Unsupported`` with a redacted problem."""
        import openai

        endpoint = self.endpoint
        messages, stats.schema_in_prompt = self._messages(request, mode)
        response_format = self._response_format(request, mode)
        stats.response_format = json.dumps(response_format, ensure_ascii=False) if response_format else ""
        until = time.monotonic() + timeout
        try:
            stats.model = self._model_name(timeout)
            kwargs: dict[str, Any] = {
                "model": stats.model,
                "messages": messages,
                "temperature": request.temperature,
                "max_tokens": self.settings.max_tokens,
                "stream": True,
                "timeout": timeout,
            }
            if response_format is not None:
                kwargs["response_format"] = response_format
            if request.seed is not None:
                kwargs["seed"] = request.seed
            if endpoint.extra_body:
                kwargs["extra_body"] = dict(endpoint.extra_body)
            if not endpoint.stream_usage and request.stream_to is None:
                # nobody reads the stream, and this server reports usage only without one: ask for the whole answer
                kwargs["stream"] = False
                return self._whole(kwargs, stats, start)
            if endpoint.stream_usage:
                kwargs["stream_options"] = {"include_usage": True}
            parts, finish, held = self._streamed(kwargs, request, timeout, until, stats, start)
        except openai.APITimeoutError:
            raise _Retryable(f"no answer from {endpoint.shown} within {timeout:.3g}s") from None
        except openai.APIConnectionError:
            raise _Retryable(f"could not connect to {endpoint.shown}") from None
        except openai.APIStatusError as exc:
            raise self._status_problem(exc, response_format is not None) from None
        except openai.OpenAIError as exc:
            raise _Retryable(f"{endpoint.host} failed mid-answer: {self._detail(exc)}") from None
        except ValueError as exc:  # a malformed event in the stream
            raise _Retryable(f"{endpoint.host} sent a malformed stream ({type(exc).__name__})") from None
        self._emit(request.stream_to, self.redact_exact(held))
        return self._answer_text(parts, finish, stats)

    def _whole(self, kwargs: dict[str, Any], stats: CallStats, start: float) -> str:
        """The answer of a request that asked for it whole (no stream)."""
        whole = self._client.chat.completions.create(**kwargs)
        if whole.usage is not None:
            read_usage(whole.usage, stats)
        first = next((c for c in whole.choices if c.index == 0), None)
        parts = [(first.message.content or "") if first is not None else ""]
        finish = first.finish_reason if first is not None else None
        stats.time_to_first_token_ms = round((time.monotonic() - start) * 1000, 1)
        return self._answer_text(parts, finish, stats)

    def _streamed(
        self,
        kwargs: dict[str, Any],
        request: ChatRequest,
        timeout: float,
        until: float,
        stats: CallStats,
        start: float,
    ) -> tuple[list[str], str | None, str]:
        """Read one streamed answer until ``until``: its text parts, its finish reason, and the tail held back
        (streamed text not shown yet: it might be the start of the key)."""
        endpoint = self.endpoint
        parts: list[str] = []
        held = ""
        finish: str | None = None
        stream = self._client.chat.completions.create(**kwargs)
        # a wall-clock deadline for the whole answer: an endpoint that streams only keep-alive comments resets
        # every read timeout but never sends an event, so the stream is closed under the reading loop
        expired = threading.Event()

        def expire() -> None:
            expired.set()
            with contextlib.suppress(Exception):
                stream.close()

        watchdog = threading.Timer(max(0.0, until - time.monotonic()), expire)
        watchdog.daemon = True
        watchdog.start()
        try:
            with stream:
                for chunk in stream:
                    if chunk.usage is not None:
                        read_usage(chunk.usage, stats)
                    for choice in chunk.choices:
                        if choice.index != 0:
                            continue
                        delta = choice.delta.content if choice.delta is not None else None
                        if delta:
                            if stats.time_to_first_token_ms is None:
                                stats.time_to_first_token_ms = round((time.monotonic() - start) * 1000, 1)
                            parts.append(delta)
                            safe, held = self._hold_back(held + delta)
                            self._emit(request.stream_to, safe)
                        if choice.finish_reason:
                            finish = choice.finish_reason
                    if time.monotonic() > until:
                        raise _Retryable(f"no complete answer from {endpoint.shown} within {timeout:.3g}s")
        except Exception:
            if expired.is_set():
                raise _Retryable(f"no complete answer from {endpoint.shown} within {timeout:.3g}s") from None
            raise
        finally:
            watchdog.cancel()
        if expired.is_set():  # closed under the loop, which then simply ended
            raise _Retryable(f"no complete answer from {endpoint.shown} within {timeout:.3g}s")
        return parts, finish, held

    def _answer_text(self, parts: list[str], finish: str | None, stats: CallStats) -> str:
        """The whole answer, or why it is not one (cut off, filtered, empty)."""
        endpoint = self.endpoint
        stats.finish_reason = finish
        text = self.redact_exact("".join(parts))
        if finish == "length":
            raise _Retryable(f"the model's answer was cut off (max_tokens {self.settings.max_tokens})")
        if finish == "content_filter":
            raise _Fatal(f"{endpoint.host}'s content filter blocked the answer")
        if not text.strip():
            raise _Retryable("the model returned an empty answer")
        return text

    def redact_exact(self, text: str) -> str:
        """``text`` without the exact API key (model output: nothing else is touched)."""
        key = self.endpoint.api_key
        return text.replace(key, "***") if key and key != NO_KEY and key in text else text

    def _hold_back(self, pending: str) -> tuple[str, str]:
        """Split streamed text into what may be shown and a tail that could begin the key (shown later)."""
        key = self.endpoint.api_key
        if not key or key == NO_KEY:
            return pending, ""
        pending = pending.replace(key, "***")
        for n in range(min(len(key) - 1, len(pending)), 0, -1):
            if key.startswith(pending[-n:]):
                return pending[:-n], pending[-n:]
        return pending, ""

    def _emit(self, sink: Callable[[str], None] | None, text: str) -> None:
        if sink is None or not text:
            return
        try:
            sink(text)
        except Exception:
            log.exception("narrator callback failed")

    def _detail(self, exc: Exception) -> str:
        import openai

        body = exc.body if isinstance(exc, openai.APIError) else None
        message = body.get("message") if isinstance(body, Mapping) else None
        text = str(message) if message else str(body) if body else str(exc)
        return self.redact(" ".join(text.split()))[:200]

    def _status_problem(self, exc: APIStatusError, had_format: bool) -> Exception:
        endpoint, code = self.endpoint, int(exc.status_code)
        detail = self._detail(exc)
        if code == 429:
            return _Retryable(f"rate limited by {endpoint.host}: {detail}", _retry_after(exc.response.headers))
        if had_format and code >= 500 and "response_format" in detail:  # a server that 500s on a format it lacks
            return _Unsupported(f"{endpoint.host} rejected the request ({code}: {detail})")
        if code >= 500 or code in (408, 409):
            return _Retryable(f"server error {code} from {endpoint.host}: {detail}")
        if code in (401, 403):
            where = f"; check {self._key_hint()}" if endpoint.key_source != "none" else ""
            return _Fatal(f"{endpoint.host} refused the API key ({code}: {detail}){where}")
        if code == 404:
            what = f"model {self._model!r}" if self._model else "the model list"
            return _Fatal(f"{endpoint.host} answered 404 for {what}: {detail}")
        if had_format and code in (400, 422):
            return _Unsupported(f"{endpoint.host} rejected the request ({code}: {detail})")
        return _Fatal(f"{endpoint.host} rejected the request ({code}: {detail})")

    def _key_hint(self) -> str:
        source = self.endpoint.key_source
        return source.removeprefix("env ") if source.startswith("env ") else "api_key in the config file"
