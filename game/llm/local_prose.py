"""The prose mode of the local narrator: what the model may retell, and the check of its retelling.

In ``prose`` mode the scripted narrator decides the turn and the model only
retells the engine's own plain line that opens the scripted narration in the
story's voice. Authored text, dialogue, parenthesised hints, labelled lists
and recalled memories are kept verbatim (:func:`split_prose`); the retelling
is checked against the facts it was given (:func:`check_rewrite`), with the
names of the pack (:class:`NameIndex`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from game.world.conditions import enemies_at, items_at, npcs_at
from game.world.content import ContentPack, Enemy, ExitLock, Item, Node, Npc, StoryChoice, UseEffect
from game.world.state import GameState
from game.world.texts import TextField, texts_of

REWRITE_SENTENCES = 2
"""A rewrite keeps at most this many sentences of the model's answer (small models ramble on)."""

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


PROSE: frozenset[TextField] = frozenset(
    {
        (ContentPack, "worldview"),
        (Node, "description"),
        (Item, "description"),
        (Enemy, "encounter"),
        (Npc, "role"),
        (Npc, "trait"),
        (Npc, "greeting"),
        (Npc, "topics"),
    }
)
"""The story's prose whose words are common words, not names (:class:`NameIndex`)."""


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
        corpus = " ".join(t.text for t in texts_of(pack, PROSE))
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


AUTHORED: frozenset[TextField] = frozenset(
    {
        (Node, "description"),
        (ExitLock, "message"),
        (Item, "description"),
        (UseEffect, "text"),
        (UseEffect, "node_texts"),
        (Enemy, "encounter"),
        (StoryChoice, "description"),
    }
)
"""The texts the narration quotes as the authors wrote them (``split_prose`` keeps them word for word)."""


def authored_sentences(pack: ContentPack) -> frozenset[str]:
    """Every sentence the story's authors wrote for the narration: descriptions, encounters, messages."""
    texts = [t.text for t in texts_of(pack, AUTHORED)]
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
