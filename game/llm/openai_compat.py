"""The narrator for OpenAI-compatible chat endpoints.

One client for OpenAI, DeepSeek, Doubao (Volcengine Ark), Ollama, the
llama.cpp server, vLLM and LM Studio: a *preset* names the endpoint's base
URL, default model, the environment variable holding its key and the best
JSON mode it supports; any setting can override it.

What it guarantees:

- **Bounded.** The SDK's own retries are off; this module retries empty
  answers, cut-off answers, 408/409/429/5xx, timeouts and connection errors at
  most ``max_attempts`` times with a short exponential backoff (honouring
  ``Retry-After`` up to a cap), all within ``timeout_s * max_attempts`` seconds
  of wall time, then raises :class:`NarratorError` naming what happened. A
  retry sends the same messages; nothing is recalled again.
- **JSON.** ``json_schema`` (constrained decoding to :data:`TURN_SCHEMA`)
  where the endpoint supports it, else ``json_object``, else the prompt alone.
  In ``auto`` mode a 400 against a ``response_format`` falls back to the next
  mode once, and the mode that worked is remembered. Validating the turn is
  the pipeline's job (with its one re-ask), not this module's.
- **Streaming.** Every answer is streamed; each text delta goes to
  ``on_text`` as it arrives, and the whole text is returned at the end.
- **Secrets.** The API key never appears in an exception, a log record, a
  ``repr`` or a returned text: every message built from a server's answer
  goes through :meth:`OpenAINarrator.redact`.

``openai`` is imported when a narrator is built, never when this module is
imported (the core stays light; see ``tests/test_architecture.py``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import random
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from game.llm.base import NarratorError, PromptBundle
from game.llm.schemas import (
    FACT_TYPES,
    FACTS_SCHEMA,
    FACTS_SYSTEM,
    MAX_FACT_UPDATES,
    MAX_NEW_FACTS,
    SCHEMA_TEXT,
    SCHEMA_TOKENS,
    SUMMARY_SCHEMA,
    SUMMARY_SYSTEM,
    TURN_SCHEMA,
    clean_facts,
)
from game.llm.settings import PRESETS, OpenAISettings, WireMode
from game.text import shown_url
from game.world.content import ContentPack

if TYPE_CHECKING:
    from openai import APIStatusError, OpenAI
    from openai.types import CompletionUsage

log = logging.getLogger("storyecho.llm")

NEXT_MODE: dict[str, WireMode] = {"json_schema": "json_object", "json_object": "prompt"}
"""Where ``auto`` falls back to when the endpoint rejects a ``response_format``."""
NO_KEY = "not-needed"
"""The placeholder key sent to endpoints that need none (local servers)."""
BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 8.0
RETRY_AFTER_CAP_S = 30.0
"""The longest ``Retry-After`` honoured; a server asking for more is waited on this long at most."""


@dataclass(frozen=True)
class ResolvedEndpoint:
    """Settings merged with their preset, the key read (and kept out of ``repr``)."""

    base_url: str
    model: str | None
    api_key: str = field(repr=False)
    key_source: str
    """Where the key came from: ``env NAME``, ``config`` or ``none``."""
    json_mode: WireMode
    auto: bool
    stream_usage: bool = True
    extra_body: Mapping[str, Any] = field(default_factory=dict)
    object_schema: bool = False

    @property
    def host(self) -> str:
        """The endpoint's host (and port), as messages name it: never its user info."""
        parts = urlsplit(self.shown)
        return parts.netloc or self.shown

    @property
    def shown(self) -> str:
        """The base URL as messages, traces and ``--json`` show it: no user info, no query (``game.text.shown_url``)."""
        return shown_url(self.base_url)


def resolve(settings: OpenAISettings, environ: Mapping[str, str] | None = None) -> ResolvedEndpoint:
    """Merge ``settings`` with its preset and read the key.

    Raises:
        NarratorError: no base URL, or the endpoint needs a key and none is set
            (the message names the variable, never a value).
    """
    env = os.environ if environ is None else environ
    preset = PRESETS[settings.preset] if settings.preset else None
    base_url = settings.base_url or (preset.base_url if preset else None)
    if not base_url:
        raise NarratorError("no endpoint: set a preset (openai, deepseek, doubao, ollama, ...) or a base_url")
    key_env = settings.api_key_env or (preset.api_key_env if preset else None)
    if settings.api_key is not None and settings.api_key.get_secret_value():
        key, source = settings.api_key.get_secret_value(), "config"
    elif key_env and env.get(key_env):
        key, source = env[key_env], f"env {key_env}"
    elif key_env:
        raise NarratorError(f"no API key for {shown_url(base_url)}: set the {key_env} environment variable")
    else:
        key, source = NO_KEY, "none"
    best: WireMode = preset.json_mode if preset else "json_object"
    mode: WireMode = best if settings.json_mode == "auto" else settings.json_mode
    return ResolvedEndpoint(
        base_url=base_url.rstrip("/"),
        model=settings.model or (preset.model if preset else None),
        api_key=key,
        key_source=source,
        json_mode=mode,
        auto=settings.json_mode == "auto",
        stream_usage=preset.stream_usage if preset else True,
        extra_body=dict(preset.extra_body) if preset else {},
        object_schema=preset.object_schema if preset else False,
    )


_KEYLIKE = re.compile(r"(?i)\b(bearer\s+)\S+|\b(sk|ak|pk)-[A-Za-z0-9_*.\-]{6,}")


def redact(text: str, *secrets: str) -> str:
    """``text`` with every secret, bearer token and key-like word replaced by ``***``."""
    for secret in secrets:
        if secret and secret != NO_KEY:
            text = text.replace(secret, "***")
    return _KEYLIKE.sub(lambda m: (m.group(1) or "") + "***", text)


def _url_secrets(url: str) -> list[str]:
    """What a base URL may hold besides its place: the user name and password, the query's values."""
    from urllib.parse import parse_qsl

    try:
        parts = urlsplit(url if "//" in url else f"//{url}")
    except ValueError:
        return []
    found = [parts.username or "", parts.password or "", parts.fragment]
    found += [value for _, value in parse_qsl(parts.query, keep_blank_values=False)]
    return sorted({f for f in found if len(f) >= 3}, key=len, reverse=True)


# ------------------------------------------------------------------- calls
@dataclass
class CallStats:
    """What one call cost and how it went (the debug trace shows it).

    Attributes:
        attempts: HTTP requests made (retries and a JSON-mode fallback included).
        cached_tokens: prompt tokens the server served from its cache, when it says.
        json_mode: the mode of the request that answered (or of the last one).
        time_to_first_token_ms: from the start of the call (retries included) to the first text.
        error: why the call failed (None when it answered).
    """

    purpose: str
    model: str
    attempts: int = 0
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    json_mode: str = "prompt"
    schema_in_prompt: bool = False
    elapsed_ms: float = 0.0
    time_to_first_token_ms: float | None = None
    error: str | None = None


@dataclass
class _Request:
    purpose: str
    messages: list[dict[str, str]]
    schema_name: str
    schema: dict[str, Any]
    temperature: float
    stream_to: Callable[[str], None] | None = None
    schema_after: str | None = None
    """Text of the system prompt the schema follows when it travels in the prompt (the answer format)."""


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


class OpenAINarrator:
    """A narrator on any OpenAI-compatible chat endpoint.

    Args:
        settings: endpoint, model and limits (see :class:`OpenAISettings`).
        pack: the story; its NPC, item and place ids steer fact extraction.
        on_text: called with each streamed text delta of a turn, in order.
            A retried or re-asked turn streams again from the start
            (``on_retry`` marks a retry, e.g. to clear the shown text).
        on_retry: called with the reason before each retry.
        environ: where to read the key (default ``os.environ``).

    Raises:
        NarratorError: at construction when the endpoint needs a key and none is set.
    """

    backoff_base_s = BACKOFF_BASE_S

    def __init__(
        self,
        settings: OpenAISettings,
        pack: ContentPack | None = None,
        on_text: Callable[[str], None] | None = None,
        *,
        on_retry: Callable[[str], None] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        import openai

        self.settings = settings
        self.pack = pack
        self.on_text = on_text
        self.on_retry = on_retry
        self.endpoint = resolve(settings, environ)
        self.name = settings.preset or "openai-compat"
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
        """The last :meth:`narrate` call (summaries run in the background and keep their own)."""
        self.last_calls: dict[str, CallStats] = {}
        """The last call of each purpose: ``turn``, ``summary``, ``facts``."""
        self.dropped_facts: list[str] = []
        """Why facts of the last :meth:`extract_facts` answer were dropped."""

    def __repr__(self) -> str:
        return (
            f"OpenAINarrator(preset={self.settings.preset!r}, base_url={self.endpoint.shown!r}, "
            f"model={self._model!r}, json_mode={self._mode!r}, key={self.endpoint.key_source!r})"
        )

    @property
    def prompt_overhead_tokens(self) -> int:
        """Tokens added to each turn's prompt: the schema, unless the endpoint decodes against it."""
        return 0 if self._mode == "json_schema" else SCHEMA_TOKENS

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
            *_url_secrets(self.endpoint.base_url),
        )

    # ---------------------------------------------------------- protocol
    def narrate(self, bundle: PromptBundle) -> str:
        """Send the turn's messages and return the model's raw answer (one JSON object, unvalidated)."""
        request = _Request(
            "turn",
            [dict(m) for m in bundle.messages],
            "turn",
            TURN_SCHEMA,
            self.settings.temperature,
            self.on_text,
            schema_after=next((b.text for b in bundle.blocks if b.name == "json_instruction"), None),
        )
        return self._call(request)

    def summarize(self, text: str, max_words: int = 60) -> str:
        """Stateless summary of ``text`` in at most ``max_words`` words (third person, facts only)."""
        request = _Request(
            "summary",
            [
                {"role": "system", "content": SUMMARY_SYSTEM.format(max_words=max_words)},
                {"role": "user", "content": text},
            ],
            "summary",
            SUMMARY_SCHEMA,
            min(self.settings.temperature, 0.3),
        )
        data = self._json_object(self._call(request), "summary")
        summary = data.get("summary")
        if not isinstance(summary, str) or not summary.strip():
            raise NarratorError("the summary answer had no 'summary' text")
        return " ".join(summary.split()[:max_words])

    def extract_facts(self, text: str, known_keys: Iterable[str] = ()) -> list[dict[str, Any]]:
        """Stateless Story Bible extraction from ``text``.

        Returns:
            Valid facts, each ``{entry_type, canonical_key, title, content,
            importance, update}`` (``update``: the key is one of
            ``known_keys``), at most :data:`MAX_NEW_FACTS` new ones and
            :data:`MAX_FACT_UPDATES` updates, one per key. Why the others were
            dropped is in :attr:`dropped_facts`.

        Raises:
            NarratorError: the call failed or the answer was not a JSON object.
        """
        known = sorted(set(known_keys))
        request = _Request(
            "facts",
            [
                {"role": "system", "content": self._facts_prompt(known)},
                {"role": "user", "content": text},
            ],
            "story_bible_facts",
            FACTS_SCHEMA,
            0.0,
        )
        data = self._json_object(self._call(request), "facts")
        facts, dropped = clean_facts(data, set(known))
        self.dropped_facts = dropped
        return facts

    # ----------------------------------------------------------- helpers
    def _facts_prompt(self, known: list[str]) -> str:
        ids = ""
        if self.pack is not None:
            pack = self.pack
            ids = (
                f"NPC ids: {', '.join(pack.npcs)}\nItem ids: {', '.join(pack.items)}\n"
                f"Place ids: {', '.join(pack.nodes)}\n"
            )
        return FACTS_SYSTEM.format(
            types=", ".join(FACT_TYPES),
            max_new=MAX_NEW_FACTS,
            max_updates=MAX_FACT_UPDATES,
            ids=ids,
            known=", ".join(known[:200]) or "none",
        )

    def _json_object(self, raw: str, what: str) -> dict[str, Any]:
        for candidate in (raw, raw[raw.find("{") : raw.rfind("}") + 1]):
            try:
                data = json.loads(candidate)
            except ValueError:
                continue
            if isinstance(data, dict):
                return data
        raise NarratorError(f"the {what} answer was not a JSON object: {self.redact(raw[:120])!r}")

    def _messages(self, request: _Request, mode: WireMode) -> tuple[list[dict[str, str]], bool]:
        """The messages to send; a turn without schema-constrained decoding gets the schema in its system prompt."""
        if request.purpose != "turn" or mode == "json_schema":
            return request.messages, False
        return with_schema(request.messages, request.schema_after), True

    def _response_format(self, request: _Request, mode: WireMode) -> dict[str, Any] | None:
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
    def _call(self, request: _Request) -> str:
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

    def _model_name(self, timeout: float) -> str:
        if self._model is None:
            listed = [m.id for m in self._client.models.list(timeout=timeout).data]
            if not listed:
                raise _Fatal(f"{self.endpoint.shown} serves no model; set one in the settings")
            self._model = listed[0]
        return self._model

    def _once(self, request: _Request, mode: WireMode, timeout: float, stats: CallStats, start: float) -> str:
        """One HTTP request; raises ``_Retryable``/``_Fatal``/``_Unsupported`` with a redacted problem."""
        import openai

        endpoint = self.endpoint
        messages, stats.schema_in_prompt = self._messages(request, mode)
        response_format = self._response_format(request, mode)
        parts: list[str] = []
        held = ""  # streamed text not shown yet: it might be the start of the key
        finish: str | None = None
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
            if endpoint.extra_body:
                kwargs["extra_body"] = dict(endpoint.extra_body)
            if not endpoint.stream_usage and request.stream_to is None:
                # nobody reads the stream, and this server reports usage only without one: ask for the whole answer
                kwargs["stream"] = False
                whole = self._client.chat.completions.create(**kwargs)
                if whole.usage is not None:
                    self._usage(whole.usage, stats)
                first = next((c for c in whole.choices if c.index == 0), None)
                parts.append((first.message.content or "") if first is not None else "")
                finish = first.finish_reason if first is not None else None
                stats.time_to_first_token_ms = round((time.monotonic() - start) * 1000, 1)
                return self._answer_text(parts, finish, stats)
            if endpoint.stream_usage:
                kwargs["stream_options"] = {"include_usage": True}
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
                            self._usage(chunk.usage, stats)
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

    @staticmethod
    def _usage(usage: CompletionUsage, stats: CallStats) -> None:
        # the SDK builds usage without validating it: a field the server left out is None, not an error
        stats.prompt_tokens = usage.prompt_tokens
        stats.completion_tokens = usage.completion_tokens
        details = usage.prompt_tokens_details
        cached = details.cached_tokens if details is not None else None
        if cached is None:  # DeepSeek reports its context cache its own way, a field the SDK does not know
            cached = (usage.model_extra or {}).get("prompt_cache_hit_tokens")
        stats.cached_tokens = cached if isinstance(cached, int) else None

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
