"""``storyecho content export STORY --format worldinfo|card``: a story's lore and people back out, as files
SillyTavern imports (issue 44, item 7).

- ``worldinfo``: a SillyTavern World Info JSON, ``{"entries": {uid: entry}}``, each entry with every field of
  ``newWorldInfoEntryDefinition`` (``public/scripts/world-info.js``) plus ``uid`` and ``displayIndex``. An imported
  entry writes back the activation it came with (``knowledge.json``'s ``activation``; the field map is
  ``game/checker/imports/triggers.py``'s), so a World Info file imported and exported comes back with every field
  the formats share as it was. The story's own lore (no ``activation``) goes out as a keyed entry: its
  ``keywords`` as keys (else its title, without "The"), and ``constant`` when it is canon (``hidden_rule``).
- ``card``: one person as a Character Card V2 (the spec: ``character-card-spec-v2``'s ``spec_v2.md``): the
  name, the description (the full text an import kept as lore, else the trait), the manner of speech as the
  personality, the situation topic as the scenario, the greeting as ``first_mes``, and as its
  ``character_book`` the lore entries their card brought and the topics they answer about (SillyTavern's own
  field names in each entry's ``extensions``, as its ``convertCharacterBook`` reads them).

What a format has no field for is left out: a NovelAI ``searchRange`` (``scan_chars``) has no World Info
equivalent.
"""

from __future__ import annotations

import re
from typing import Any

from game.checker.imports.triggers import BOOK, BOOK_EXTENSIONS, WORLD_INFO
from game.world.content import ContentPack, KnowledgeEntry, Npc
from game.world.lore import LOGIC_CODES, Activation

FORMATS = ("worldinfo", "card")
WORLD_INFO_ORDER = (
    "uid", "key", "keysecondary", "comment", "content", "constant", "vectorized", "selective", "selectiveLogic",
    "addMemo", "order", "position", "disable", "excludeRecursion", "preventRecursion", "delayUntilRecursion",
    "probability", "useProbability", "depth", "group", "groupOverride", "groupWeight", "scanDepth", "caseSensitive",
    "matchWholeWords", "useGroupScoring", "automationId", "role", "sticky", "cooldown", "delay", "displayIndex",
)  # fmt: skip
"""A World Info entry's fields, in SillyTavern's order (``newWorldInfoEntryDefinition``, then ``displayIndex``)."""


class ExportFailure(ValueError):
    """The story cannot be exported as asked (no such person); the message says why."""


def activation_of(entry: KnowledgeEntry) -> Activation:
    """How ``entry`` fires in SillyTavern: its own activation, or one made for the story's own lore."""
    if entry.activation is not None:
        return entry.activation
    keys = list(entry.keywords) or [re.sub(r"^(?:the|a|an)\s+", "", _name(entry.title), flags=re.I)]
    return Activation(keys=keys, constant=entry.category == "hidden_rule", name=_name(entry.title))


def _name(title: str) -> str:
    """A title without the keys an import added to it ("Saltmere (also: harbour town)" -> "Saltmere")."""
    return re.sub(r"\s*\(also: [^)]*\)$", "", title)


def _fields(activation: Activation) -> dict[str, Any]:
    """The activation's fields as SillyTavern numbers them (``logic`` as its ``selectiveLogic`` code)."""
    fields = activation.model_dump()
    fields["logic"] = LOGIC_CODES.index(activation.logic)
    return fields


def world_info(pack: ContentPack) -> dict[str, Any]:
    """The story's lore as a SillyTavern World Info document."""
    taken = {e.activation.uid for e in pack.knowledge if e.activation is not None and e.activation.uid is not None}
    fresh = (n for n in range(len(pack.knowledge) + len(taken) + 1) if n not in taken)
    used: set[int] = set()
    entries: dict[str, dict[str, Any]] = {}
    for index, entry in enumerate(pack.knowledge):
        activation = activation_of(entry)
        uid = activation.uid if activation.uid is not None and activation.uid not in used else next(fresh)
        used.add(uid)
        record: dict[str, Any] = {"disable": False, "content": entry.content}
        fields = _fields(activation)
        for source, (name, _) in WORLD_INFO.items():
            record[source] = fields[name]
        record["uid"] = uid
        record["comment"] = activation.name or _name(entry.title)
        record["displayIndex"] = activation.display_index if activation.display_index is not None else index
        entries[str(uid)] = {name: record[name] for name in WORLD_INFO_ORDER}
    return {"entries": entries}


def card(pack: ContentPack, person: str) -> dict[str, Any]:
    """The person ``person`` (an id of ``npcs.json``) as a Character Card V2.

    Raises:
        ExportFailure: the story has no such person.
    """
    npc = pack.npcs.get(person)
    if npc is None:
        people = ", ".join(sorted(pack.npcs)) or "none"
        raise ExportFailure(f"{pack.id}: no person {person!r} (its people: {people})")
    about = next(
        (e.content for e in pack.knowledge if e.category == "relationship" and _name(e.title) == npc.name), npc.trait
    )
    data: dict[str, Any] = {
        "name": npc.name,
        "description": about,
        "personality": npc.dialogue_style,
        "scenario": npc.topics.get("situation", ""),
        "first_mes": npc.greeting,
        "mes_example": _examples(npc.voice, npc.name, pack.story.player.name),
        "creator_notes": f"Exported from the StoryEcho story {pack.story.title!r} ({pack.id}).",
        "system_prompt": "",
        "post_history_instructions": "",
        "alternate_greetings": [],
        "tags": [],
        "creator": "",
        "character_version": "",
        "extensions": {},
        "character_book": {"name": f"{npc.name}'s lore", "extensions": {}, "entries": _book(pack, npc)},
    }
    return {"spec": "chara_card_v2", "spec_version": "2.0", "data": data}


def _examples(voice: list[str], name: str, player: str) -> str:
    """A person's voice as a card's ``mes_example``: each exchange after ``<START>``, their name and the player's at
    the start of a line written back as ``{{char}}`` and ``{{user}}`` (what the import resolved)."""
    said = (re.sub(rf"^{re.escape(name)}:", "{{char}}:", x, flags=re.M) for x in voice)
    return "".join(f"<START>\n{re.sub(rf'^{re.escape(player)}:', '{{user}}:', x, flags=re.M)}\n" for x in said)


def _book(pack: ContentPack, npc: Npc) -> list[dict[str, Any]]:
    """The person's ``character_book`` entries: the lore their card brought, then the topics no entry holds."""
    entries: list[dict[str, Any]] = []
    own = [e for e in pack.knowledge if e.activation is not None and e.activation.book == npc.name]
    keys_held = {k.lower() for e in own for k in activation_of(e).keys}
    for entry in own:
        entries.append(_book_entry(activation_of(entry), entry.content, len(entries)))
    for topic, said in npc.topics.items():
        if topic == "situation" or topic.lower() in keys_held:
            continue
        keys = [topic, *npc.topic_aliases.get(topic, [])]
        entries.append(_book_entry(Activation(keys=keys, name=topic), said, len(entries)))
    return entries


def _book_entry(activation: Activation, content: str, index: int) -> dict[str, Any]:
    record: dict[str, Any] = {"content": content, "enabled": True, "name": activation.name}
    fields = _fields(activation)
    for source, (name, _) in BOOK.items():
        record[source] = fields[name]
    record["id"] = activation.uid if activation.uid is not None else index
    record["comment"] = activation.name
    record["position"] = "before_char" if activation.position == 0 else "after_char"
    record["extensions"] = {source: fields[name] for source, (name, _) in BOOK_EXTENSIONS.items()}
    return record
