"""Local narrators: a small GGUF model run in-process by llama.cpp, offline.

The model, bundled or named by ``model_path``, is found and loaded by
``local_model.py``; it is never downloaded.

Two modes:

- ``full``: the model writes the whole JSON turn from the pipeline's prompt,
  constrained by a grammar built from a compact JSON schema of the turn
  (``local_grammar.py``), so every complete answer parses. ``on_text``
  receives the narration as it is generated (the decoded text of the
  ``narration`` field, not raw JSON).
- ``prose``: the scripted narrator decides the turn (effects, choices, memory
  notes) and the model only retells the engine's own plain line that opens
  the scripted narration ("You make your way to Fogbound Path.", "You press
  the attack against the Granite Troll.") in the story's voice, from a short
  prompt of facts (the place, who is there, what is taken or fought).
  Authored text (place and item descriptions), dialogue, parenthesised hints,
  labelled lists (``Exits: ...``) and recalled memories are kept verbatim
  (:func:`~game.llm.local_prose.split_prose`). The retelling is checked
  (:func:`~game.llm.local_prose.check_rewrite`):
  only its first line, cut to whole sentences, is used; it must not be empty,
  unchanged, too long, in another script, talk about the task, speak in the
  first person, add numbers or capitalised names nobody gave it, or name a
  place, person, item or enemy that is not in the scripted text or the facts
  given, and it must keep every one the retold line names; otherwise the
  scripted narration is used. ``on_text`` receives the final, checked
  narration once.

Every model call is timed and counted; :attr:`LocalNarrator.last_call` holds
the last one (:class:`LocalCall`) and :attr:`LocalNarrator.calls` the recent
ones. The model is used under a lock: memory consolidation calls
:meth:`LocalNarrator.summarize` from its worker thread.

``llama_cpp`` is imported only when a narrator is built, so importing this
module stays light.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from game.llm.base import NarratorBase, NarratorError, PromptBundle, TextCallback
from game.llm.digest import digest
from game.llm.local_grammar import compact_instruction, turn_is_valid, turn_schema
from game.llm.local_model import import_llama_cpp, load_llama, model_file, set_chat_format
from game.llm.local_prose import (
    _FIRST_PERSON,
    _WORD,
    NameIndex,
    RewriteFacts,
    authored_sentences,
    check_rewrite,
    rewrite_facts,
    split_prose,
)
from game.llm.scripted import ScriptedNarrator
from game.llm.settings import LocalSettings
from game.llm.stream import NarrationStream
from game.world.content import ContentPack

log = logging.getLogger("storyecho.llm.local")

REWRITE_MAX_TOKENS = 80
"""The most tokens a prose rewrite may take."""
_CTX_MARGIN = 16
"""Tokens kept free for the chat template's own markers when fitting a prompt."""
REPEAT_PENALTY = 1.1
"""Small models loop ("I am the Shadow Lord, I am the Shadow Lord, ..."); a mild penalty helps."""
ANSWER_KEPT_CHARS = 400
"""How much of each answer :class:`LocalCall` keeps."""


@dataclass
class LocalCall:
    """One model call, measured.

    Attributes:
        kind: ``turn`` (full mode), ``rewrite`` (prose mode) or ``summary``.
        model: the model file's name.
        prompt_tokens: tokens of the formatted prompt (from llama.cpp's context).
        completion_tokens: tokens generated.
        elapsed_ms: wall time of the call.
        time_to_first_token_ms: until the first generated text arrived (prompt processing included).
        tokens_per_s: generation speed after the first token.
        valid: the answer was usable: a full-mode turn that parses as a JSON
            turn, an accepted rewrite, a summary that passed its check.
        finish_reason: ``stop`` or ``length`` (cut at the token limit).
        note: why an answer was not used, or what was done instead.
        answer: the start of the model's answer (for the debug trace and the benchmark).
    """

    kind: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    elapsed_ms: float = 0.0
    time_to_first_token_ms: float | None = None
    tokens_per_s: float = 0.0
    valid: bool = False
    finish_reason: str | None = None
    note: str = ""
    answer: str = ""


# ------------------------------------------------------------ the narrator
class LocalNarrator(NarratorBase):
    """A narrator run by llama.cpp on a local GGUF model (see the module doc).

    Args:
        settings: model, threads, context, sampling and mode.
        pack: the story (names for the grammar and the checker; the scripted narrator).
        on_text: called with narration text as it is produced.

    Raises:
        NarratorError: llama-cpp-python is not installed, the model file is
            missing, or llama.cpp cannot load it.
    """

    def __init__(self, settings: LocalSettings | None, pack: ContentPack, on_text: TextCallback | None = None) -> None:
        self.settings = settings or LocalSettings()
        self.pack = pack
        self.on_text = on_text
        self.mode = self.settings.mode
        self.name = f"local-{self.mode}"
        self.scripted = ScriptedNarrator(pack)
        self.names = NameIndex(pack)
        self.authored = authored_sentences(pack)
        self.last_call: LocalCall | None = None
        self.calls: deque[LocalCall] = deque(maxlen=512)
        self._lock = threading.RLock()
        self._grammars: dict[str, Any] = {}
        self.model_path = model_file(self.settings)
        self.model_name = self.model_path.name
        started = time.perf_counter()
        self._llama_cpp = import_llama_cpp()
        self.llm: Any = load_llama(self._llama_cpp, self.settings, self.model_path)
        self.load_ms = round((time.perf_counter() - started) * 1000, 1)
        self.fold_system = set_chat_format(self.llm)

    # ------------------------------------------------------------ narrate
    def narrate(self, bundle: PromptBundle) -> str:
        with self._lock:
            if self.mode == "full":
                return self._full(bundle)
            return self._prose(bundle)

    def _full(self, bundle: PromptBundle) -> str:
        # key order matters (narration first): no sort_keys
        schema = json.dumps(turn_schema(self.pack, bundle.state, self.settings.max_tokens))
        grammar = self._grammars.get(schema)
        if grammar is None:
            grammar = self._llama_cpp.LlamaGrammar.from_json_schema(schema, verbose=False)
            if len(self._grammars) > 64:
                self._grammars.clear()
            self._grammars[schema] = grammar
        messages = self._fit(compact_instruction(bundle), self.settings.max_tokens)
        stream = NarrationStream()
        on_text = self.on_text

        def deliver(piece: str) -> None:
            text = stream.feed(piece)
            if text and on_text is not None:
                on_text(text)

        raw, call = self._complete(
            "turn", messages, self.settings.max_tokens, grammar=grammar, on_piece=deliver, attempt=bundle.attempt
        )
        call.valid = turn_is_valid(raw)
        if not call.valid:
            call.note = "cut off at max_tokens" if call.finish_reason == "length" else "not a valid turn"
        self._record(call)
        return raw

    def _prose(self, bundle: PromptBundle) -> str:
        turn = self.scripted.turn(bundle)
        scripted = str(turn["narration"])
        prose, kept = split_prose(scripted, self.authored)
        call = LocalCall("rewrite", self.model_name)
        narration = scripted
        if len(_WORD.findall(prose)) < 4:
            call.note = "skipped: nothing of the engine's own to retell (authored text, dialogue and lists are kept)"
        else:
            facts = rewrite_facts(self.pack, bundle.state, turn["effects"])
            prompt = (
                "Retell this line of the story in one or two vivid sentences, speaking to the player as "
                '"you". Keep every name. Add no new people, places, items or numbers.\n'
                + "\n".join(facts.lines)
                + f"\nLine: {prose}"
            )
            messages = [{"role": "system", "content": self.pack.story.persona}, {"role": "user", "content": prompt}]
            limit = min(REWRITE_MAX_TOKENS, self.settings.max_tokens)
            text, call = self._complete(
                "rewrite", self._fit(messages, limit), limit, stop=["\n\n"], attempt=bundle.attempt
            )
            cleaned, reason = check_rewrite(
                text, prose, facts, self.names, truncated=call.finish_reason == "length", context=kept
            )
            call.valid = cleaned is not None
            call.note = reason if cleaned is not None else f"rejected: {reason}; scripted narration used"
            if cleaned is not None:
                narration = f"{cleaned} {kept}".strip()
        self._record(call)
        if self.on_text is not None:
            self.on_text(narration)
        return json.dumps({**turn, "narration": narration}, ensure_ascii=False)

    # ---------------------------------------------------------- summarize
    def summarize(self, text: str, max_words: int = 60) -> str:
        """Stateless summary in at most ``max_words`` words.

        The scripted narrator's digest (``digest.py``, no model call) in prose mode and with
        a bundled model: measured over 60 turns, SmolLM2's summaries passed
        the check 1 time in 24, at 2.4 s each. A model named by
        ``model_path`` in full mode writes a short completion, checked like a
        rewrite (no names the text does not have, no chatter), else the
        digest.
        """
        if self.mode == "prose" or self.settings.model_path is None:
            return digest(text, max_words)
        with self._lock:
            limit = min(max(24, int(max_words * 1.6)), self.settings.max_tokens)
            messages = [
                {"role": "system", "content": "You summarise story events briefly and factually."},
                {
                    "role": "user",
                    "content": f"Summarise in at most {max_words} words, in the third person, naming the people "
                    "and places involved: what happened and who said what. Leave out the player's commands as "
                    "typed, recollections ('You recall: ...') and anything said twice.\n" + text,
                },
            ]
            try:
                answer, call = self._complete("summary", self._fit(messages, limit), limit)
            except NarratorError as exc:
                self._record(LocalCall("summary", self.model_name, note=f"failed: {exc}; digest used"))
                return digest(text, max_words)
            facts = RewriteFacts(allowed=self.names.named(text))
            cleaned, reason = check_rewrite(
                answer, text, facts, self.names, truncated=call.finish_reason == "length", context=text
            )
            if cleaned is not None and _FIRST_PERSON.search(cleaned) is None:
                call.valid, call.note = True, "accepted"
                self._record(call)
                return " ".join(cleaned.split()[:max_words])
            call.note = f"rejected: {reason}; digest used"
            self._record(call)
            return digest(text, max_words)

    # -------------------------------------------------------------- model
    def count_tokens(self, text: str) -> int:
        return len(self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def _fit(self, messages: list[dict[str, str]], answer_tokens: int) -> list[dict[str, str]]:
        """``messages`` within the context window: the oldest window messages go first.

        Raises:
            NarratorError: even the system prompt and the last message do not fit.
        """
        room = self.settings.n_ctx - answer_tokens - _CTX_MARGIN
        sizes = [self.count_tokens(m["content"]) + 6 for m in messages]
        kept = list(range(len(messages)))
        while sum(sizes[i] for i in kept) > room and len(kept) > 2:
            kept.pop(1)  # the oldest message after the system prompt
        total = sum(sizes[i] for i in kept)
        if total > room:
            raise NarratorError(
                f"the prompt ({total} tokens) does not fit the model's context of {self.settings.n_ctx} tokens "
                f"with {answer_tokens} left for the answer: lower prompt_budget_tokens or raise n_ctx"
            )
        if len(kept) < len(messages):
            log.info("dropped %d old window messages to fit n_ctx", len(messages) - len(kept))
        return [messages[i] for i in kept]

    def _complete(
        self,
        kind: str,
        messages: list[dict[str, str]],
        max_tokens: int,
        *,
        grammar: Any = None,
        on_piece: TextCallback | None = None,
        stop: list[str] | None = None,
        attempt: int = 0,
    ) -> tuple[str, LocalCall]:
        """Stream one chat completion; return its text and its measurements."""
        call = LocalCall(kind, self.model_name)
        if self.fold_system and messages and messages[0]["role"] == "system":
            messages = _fold_system(messages)
        started = time.perf_counter()
        first: float | None = None
        prompt_tokens: int | None = None
        parts: list[str] = []
        try:
            chunks = self.llm.create_chat_completion(
                messages=messages,
                max_tokens=max_tokens,
                temperature=self.settings.temperature,
                seed=self.settings.seed + attempt,  # a retried turn samples another telling
                grammar=grammar,
                stop=stop or [],
                repeat_penalty=REPEAT_PENALTY,
                stream=True,
            )
            for chunk in chunks:
                choice = chunk["choices"][0]
                if prompt_tokens is None:
                    prompt_tokens = int(self.llm.n_tokens)  # the prompt is in the context; the first token is not
                piece = choice.get("delta", {}).get("content")
                if piece:
                    if first is None:
                        first = time.perf_counter()
                    parts.append(piece)
                    if on_piece is not None:
                        on_piece(piece)
                if choice.get("finish_reason"):
                    call.finish_reason = str(choice["finish_reason"])
        except NarratorError:
            raise
        except Exception as exc:  # llama.cpp errors: context overflow, decode failure
            raise NarratorError(f"the local model failed: {type(exc).__name__}: {exc}") from exc
        end = time.perf_counter()
        text = "".join(parts)
        call.answer = text[:ANSWER_KEPT_CHARS]
        evaluated = int(self.llm.n_tokens)
        call.prompt_tokens = prompt_tokens or 0
        # every generated token but the last is evaluated; a stop ends on an end-of-turn token that is not text
        completion = evaluated - call.prompt_tokens + (1 if call.finish_reason == "length" else 0)
        call.completion_tokens = max(completion, 1 if text else 0)
        call.elapsed_ms = round((end - started) * 1000, 1)
        if first is not None:
            call.time_to_first_token_ms = round((first - started) * 1000, 1)
            if call.completion_tokens > 1 and end > first:
                call.tokens_per_s = round((call.completion_tokens - 1) / (end - first), 1)
        return text, call

    def _record(self, call: LocalCall) -> None:
        self.last_call = call
        self.calls.append(call)


def _fold_system(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    """The system prompt put at the head of the first user message (for formats without a system role)."""
    system, rest = messages[0]["content"], messages[1:]
    for n, message in enumerate(rest):
        if message["role"] == "user":
            return [*rest[:n], {**message, "content": f"{system}\n\n{message['content']}"}, *rest[n + 1 :]]
    return [{"role": "user", "content": system}, *rest]
