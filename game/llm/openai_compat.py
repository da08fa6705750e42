"""The narrator for OpenAI-compatible chat endpoints.

One client for OpenAI, DeepSeek, Doubao (Volcengine Ark), Ollama, the
llama.cpp server, vLLM and LM Studio: a *preset* names the endpoint's base
URL, default model, the environment variable holding its key and the best
JSON mode it supports; any setting can override it (``openai_endpoint.py``).

The narrator says what to ask: a turn (decoded against :data:`TURN_SCHEMA`),
a summary, or Story Bible facts. How it is asked is the chat client's
(``openai_client.py``): bounded retries, the JSON mode the endpoint supports,
streaming, the key kept out of every text, and what each call cost.
Validating the turn is the pipeline's job (with its one re-ask), not this
module's. A turn's text deltas go to ``on_text`` as they arrive.

``openai`` is imported when a narrator is built, never when this module is
imported (the core stays light; see ``tests/test_architecture.py``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from game.llm.base import NarratorError, PromptBundle
from game.llm.openai_client import ChatClient, ChatRequest
from game.llm.schemas import (
    FACT_TYPES,
    FACTS_SCHEMA,
    FACTS_SYSTEM,
    MAX_FACT_UPDATES,
    MAX_NEW_FACTS,
    SUMMARY_SCHEMA,
    SUMMARY_SYSTEM,
    TURN_SCHEMA,
    clean_facts,
)
from game.llm.settings import OpenAISettings
from game.text import within_words
from game.world.content import ContentPack


class OpenAINarrator(ChatClient):
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

    prompt_overhead_tokens = 0
    """Nothing is added to a turn's prompt on the wire: the prompt's answer format is the only copy of the format
    (the schema goes only as ``response_format``, where the endpoint decodes against it)."""

    def __init__(
        self,
        settings: OpenAISettings,
        pack: ContentPack | None = None,
        on_text: Callable[[str], None] | None = None,
        *,
        on_retry: Callable[[str], None] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(settings, on_retry=on_retry, environ=environ)
        self.pack = pack
        self.on_text = on_text
        self.name = settings.preset or "openai-compat"
        self.dropped_facts: list[str] = []
        """Why facts of the last :meth:`extract_facts` answer were dropped."""

    def __repr__(self) -> str:
        return (
            f"OpenAINarrator(preset={self.settings.preset!r}, base_url={self.endpoint.shown!r}, "
            f"model={self._model!r}, json_mode={self._mode!r}, key={self.endpoint.key_source!r})"
        )

    # ---------------------------------------------------------- protocol
    def narrate(self, bundle: PromptBundle) -> str:
        """Send the turn's messages and return the model's raw answer (one JSON object, unvalidated)."""
        request = ChatRequest(
            "turn",
            [dict(m) for m in bundle.messages],
            "turn",
            TURN_SCHEMA,
            self.settings.temperature,
            self.on_text,
            schema_after=next((b.text for b in bundle.blocks if b.name == "json_instruction"), None),
            seed=bundle.attempt or None,
        )
        return self._call(request)

    def summarize(self, text: str, max_words: int = 60) -> str:
        """Stateless summary of ``text`` in at most ``max_words`` words (third person, facts only)."""
        request = ChatRequest(
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
        return within_words(summary, max_words)

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
        request = ChatRequest(
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
