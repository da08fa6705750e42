"""How what a file holds becomes a story's files (the mapping table is in docs/authoring.md).

- a keyed entry -> a ``knowledge.json`` entry: an id made from its name, its keys kept as ``keywords`` (and, when
  its title and text do not hold them, in its title, which recall searches), category ``history`` (or its NovelAI
  category's), and its ``activation`` (issue 44: keys, secondary keys and logic, order, probability, recursion,
  groups, timed effects; :class:`game.world.lore.Activation`), by which memory fires it as its author meant;
- a ``constant`` entry (always in the prompt, in its own tool) -> category ``hidden_rule``, which the Story Bible
  seeds as canon (``world_rule``, recalled when a turn touches it), and a line of the story's ``persona`` under
  :data:`CANON_HEADER`, so it is in every system prompt (clipped to :data:`CANON_CHARS`; the report counts the
  tokens this adds to every prompt);
- a disabled or empty entry -> skipped, with the reason;
- a card's character -> a person (``npcs.json``) at the story's start, whom the Story Bible and the knowledge base
  know; the description and personality as their trait (and, whole, as a ``relationship`` lore entry), the
  scenario as a topic and a worldview section;
- a card's own lore entry -> also a topic its person answers about (``ask mira about the gull``), when a key is
  all it needs to fire (one with secondary keys, a roll, a group or a timing fires only by its activation);
- the card's ``first_mes`` (or, with ``--greeting N``, its N-th alternate greeting) -> the story's ``intro``;
- the card's ``mes_example`` -> the person's ``voice`` (:mod:`~game.checker.imports.voice`), its ``tags`` ->
  theirs, its ``creator_notes`` and other greetings -> the report;
- ``{{char}}`` / ``<BOT>`` -> the card's name, ``{{user}}`` / ``<USER>`` -> the story's player name.

Imported text is untrusted: every text passes :func:`game.memory.guard.strip_instructions`, the guard memory
puts what a model or a player writes through. A sentence that reads as an order to the narrator is left out (the
file kept in ``imported/`` still holds it), the entry is never made canon, and the report names it; with
``--keep-orders`` the sentence is kept in the story's author's note (:mod:`~game.checker.imports.author_note`).
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from game.checker.imports.author_note import AuthorNote
from game.checker.imports.report import ImportReport
from game.checker.imports.sources import Card, ImportFailure, LoreEntry, Source
from game.checker.imports.voice import voice
from game.checker.scaffold import SCAFFOLD_INTRO
from game.files import write_synced
from game.memory.guard import instruction_sentences, looks_like_instruction, strip_instructions
from game.memory.search.lore_keys import compile_key
from game.text import clip, estimate_tokens, keywords
from game.world.lore import Activation

MIN_LORE_CHARS = 10
"""A knowledge entry's shortest text (``KnowledgeEntry.content``)."""
CANON_HEADER = "Always true in this world (imported canon):"
"""The persona's section of imported constant entries."""
CANON_CHARS = 300
"""A constant entry's share of every system prompt; its whole text is in the knowledge base."""
TRAIT_CHARS = 400
"""A person's trait is in every prompt that has them; the whole description is lore, recalled when relevant."""


@dataclass
class PackFiles:
    """The files of a story an import may change, as parsed JSON (and the worldview's text)."""

    story: dict[str, Any]
    map: dict[str, Any]
    npcs: list[dict[str, Any]]
    knowledge: list[dict[str, Any]]
    worldview: str

    @classmethod
    def read(cls, folder: Path) -> PackFiles:
        def load(name: str) -> Any:
            return json.loads((folder / name).read_text(encoding="utf-8"))

        return cls(
            load("story.json"),
            load("map.json"),
            load("npcs.json"),
            load("knowledge.json"),
            (folder / "worldview.md").read_text(encoding="utf-8"),
        )

    def write(self, folder: Path) -> None:
        """Write the files that changed into ``folder``."""
        texts = {
            "story.json": self.story,
            "map.json": self.map,
            "npcs.json": self.npcs,
            "knowledge.json": self.knowledge,
        }
        for name, value in texts.items():
            text = json.dumps(value, indent=2, ensure_ascii=False) + "\n"
            if json.loads((folder / name).read_text(encoding="utf-8")) != value:
                write_synced(folder / name, text.encode("utf-8"))
        if (folder / "worldview.md").read_text(encoding="utf-8") != self.worldview:
            write_synced(folder / "worldview.md", self.worldview.encode("utf-8"))


def make_id(name: str, taken: set[str], fallback: str) -> str:
    """An id (lowercase letters, digits, _) made from ``name``, not in ``taken`` (which it joins)."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    base = re.sub(r"[^a-z0-9]+", "_", plain).strip("_")
    base = re.sub(r"^(?:the|a|an)_(?=[a-z])", "", base)[:48].strip("_")
    if not base or not base[0].isalpha():
        base = f"{fallback}_{base}".strip("_")
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}_{n}", n + 1
    taken.add(candidate)
    return candidate


class Substitution:
    """``{{char}}`` and ``{{user}}`` (and V1's ``<BOT>`` / ``<USER>``) replaced by names."""

    def __init__(self, char: str, user: str) -> None:
        self.char, self.user, self.unnamed = char, user, 0

    def __call__(self, text: str) -> str:
        char = self.char or "the character"
        if not self.char and re.search(r"\{\{\s*char\s*\}\}|<BOT>", text, re.I):
            self.unnamed += 1
        text = re.sub(r"\{\{\s*char\s*\}\}|<BOT>", lambda _: char, text, flags=re.I)
        return re.sub(r"\{\{\s*user\s*\}\}|<USER>", lambda _: self.user, text, flags=re.I).strip()


class Mapper:
    """Maps one :class:`Source` into :class:`PackFiles`, writing what it did into an :class:`ImportReport`."""

    def __init__(
        self,
        source: Source,
        files: PackFiles,
        report: ImportReport,
        *,
        character: str = "",
        opening: bool = False,
        place: str = "",
        keep_orders: bool = False,
    ) -> None:
        """``character``: the person a lorebook's ``{{char}}`` names when the file brings no card of its own (the
        one character an earlier import's card made of this story); ``opening``: a card's greeting replaces an
        opening the author wrote; ``place``: where the card's person stands (the story's start by default);
        ``keep_orders``: what the guard takes out goes to the author's note (:mod:`.author_note`)."""
        self.source, self.files, self.report = source, files, report
        self.replace_opening, self.place = opening, place
        self.orders = AuthorNote(files.story, report) if keep_orders else None
        player = str(files.story.get("player", {}).get("name", "Traveller"))
        self.sub = Substitution(source.card.name if source.card else character, player)
        self.lore_ids = {str(k["id"]) for k in files.knowledge}
        self.canon: list[str] = []
        self.person_id = ""

    def guarded(self, where: str, text: str) -> str:
        """``text`` with its instruction-like sentences left out (the report names where)."""
        kept = strip_instructions(text)
        if kept != text or looks_like_instruction(kept):
            kept_as = f"{self.report.kept_as} keeps them"
            if self.orders is not None:
                self.orders.keep(where, instruction_sentences(text))
                kept_as = "kept as the author's note, story.json author_note, with --keep-orders"
            self.report.guarded.append(
                f"{where}: reads as an instruction to the narrator: those sentences were left out of the lore (never "
                f"canon; {kept_as})"
            )
            kept = "" if looks_like_instruction(kept) else kept
        return kept

    def run(self, greeting: int) -> None:
        count = len(self.source.entries)
        self.report.format = self.source.format + (
            f", {count} lore entr{'y' if count == 1 else 'ies'}" if count else ""
        )
        self.report.unused += self.source.unused
        if self.source.card is not None:
            self.card(self.source.card, greeting)
            if self.source.card.world:
                self.report.notes.append(
                    f"the card links the World Info {self.source.card.world!r} (extensions.world), a file of its "
                    "own: import it too to bring its lore"
                )
        for entry in self.source.entries:
            self.entry(entry)
        if self.orders is not None:
            self.orders.write()
        if self.canon:
            persona = str(self.files.story["persona"]).rstrip()
            if CANON_HEADER not in persona:
                persona += f"\n\n{CANON_HEADER}"
            self.files.story["persona"] = persona + "".join(f"\n- {c}" for c in self.canon if f"- {c}" not in persona)
            tokens = estimate_tokens("\n".join(self.canon))
            self.report.mapped.append(
                f"{len(self.canon)} constant entr{'y' if len(self.canon) == 1 else 'ies'} -> story.json persona, "
                f"in every system prompt (about {tokens} tokens)"
            )
        if self.sub.unnamed:
            self.report.notes.append(
                f"{self.sub.unnamed} text(s) name {{{{char}}}}, which a lorebook alone cannot name: written as "
                "'the character'"
            )

    def entry(self, entry: LoreEntry) -> None:
        label = f"{entry.where} {entry.name or (entry.keys[0] if entry.keys else '(no name)')!r}"
        self.report.entry_unused.update(entry.unused)
        if not entry.enabled:
            self.report.skipped.append(f"{label}: disabled in the source")
            return
        text = self.guarded(label, self.sub(entry.content))
        if len(text) < MIN_LORE_CHARS:
            why = "nothing left once the guard took out its orders" if entry.content.strip() else "no text"
            self.report.skipped.append(f"{label}: {why}")
            return
        same = self.lore_with(text)
        activation = self.activation(entry)
        if same:
            known = next(k for k in self.files.knowledge if k["id"] == same)
            if activation and known.get("activation") != activation:  # imported before its activation was kept
                known["activation"] = activation
                self.report.mapped.append(f"{label} -> knowledge.json {same!r}: its activation updated")
                return
            self.report.skipped.append(f"{label}: already in the story (knowledge.json {same!r})")
            return
        if (earlier := self.entry_named(entry)) is not None:  # the same entry, imported again after an edit
            earlier["content"] = text
            if activation:
                earlier["activation"] = activation
            self.report.mapped.append(f"{label} -> knowledge.json {earlier['id']!r} updated (imported before)")
            return
        instruction = text != self.sub(entry.content)
        keys = [k for k in dict.fromkeys(self.sub(k) for k in entry.keys) if k and not looks_like_instruction(k)]
        name = self.sub(entry.name)
        if not name or looks_like_instruction(name):
            name = keys[0] if keys else clip(text, 40)
        card = self.source.card
        category = "hidden_rule" if entry.constant and not instruction else entry.category or "history"
        if category == "history" and card is not None and set(keywords(name)) == set(keywords(card.name)):
            category = "relationship"
        lore_id = make_id(name, self.lore_ids, "lore")
        made = {"id": lore_id, "category": category, "title": _title(name, keys, text), "content": text}
        self.files.knowledge.append({**made, "keywords": keys, **({"activation": activation} if activation else {})})
        if category == "hidden_rule":
            self.canon.append(clip(f"{name}: {text}", CANON_CHARS))
        canon = ": Story Bible canon" if category == "hidden_rule" else ""
        held = "; constant, but not canon: the guard held it back" if entry.constant and instruction else ""
        shown = f"keys: {', '.join(keys)}" if keys else "no keys: recalled by its title and text"
        if activation and not keys and not entry.constant:
            shown = "no keys: never fires by key (as in its source)" + (
                "; recalled by meaning (vectorized)" if activation.get("vectorized") else ""
            )
        gate = _gated(activation)
        told = f"; not a topic of {self.person_id!r}: it fires only {gate}" if gate and self.person_id else ""
        told = told or self.topic(keys, text)
        self.report.mapped.append(f"{label} -> knowledge.json {lore_id!r} ({category}{canon}; {shown}){held}{told}")

    def activation(self, entry: LoreEntry) -> dict[str, Any]:
        """The entry's activation as ``knowledge.json`` keeps it: its fields that differ from the defaults, its keys
        with ``{{char}}`` and ``{{user}}`` named (issue 44)."""
        if not entry.activation:
            return {}
        fields = dict(entry.activation)
        if looks_like_instruction(str(fields.get("name", ""))):  # the guard reads names: an order is no name
            fields["name"] = ""
        for name in ("keys", "secondary_keys"):
            fields[name] = [k for k in dict.fromkeys(self.sub(k) for k in fields.get(name, [])) if k]
        try:
            activation = Activation(**fields)
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(str(p) for p in problem["loc"])
            raise ImportFailure(f"{self.report.source}: {entry.where}: {where}: {problem['msg']}") from None
        for key in (*activation.keys, *activation.secondary_keys):
            refused = compile_key(key, case_sensitive=False, whole_words=True).refused
            if refused:
                self.report.notes.append(f"{entry.where}: the key {key!r} is never matched: {refused}")
        return {"keys": activation.keys, **activation.model_dump(exclude_defaults=True)}  # keys first, even none

    def entry_named(self, entry: LoreEntry) -> dict[str, Any] | None:
        """The story's lore entry an earlier import made of this one: the same name and keys."""
        keys = [k for k in dict.fromkeys(self.sub(k) for k in entry.keys) if k]
        name = self.sub(entry.name) or (keys[0] if keys else "")
        for known in self.files.knowledge:
            if keys and known.get("keywords") == keys and str(known.get("title", "")).startswith(name):
                return known
        return None

    def lore_with(self, text: str) -> str:
        """The id of the story's lore entry with this text ("" when there is none): an import made twice adds
        nothing the second time."""
        return next((str(k["id"]) for k in self.files.knowledge if k.get("content") == text), "")

    def topic(self, keys: list[str], text: str) -> str:
        """A card's own lore entry as a topic its person answers about (first key; the others its aliases)."""
        person = next((n for n in self.files.npcs if n["id"] == self.person_id), None)
        words = [k.lower() for k in keys if re.fullmatch(r"[\w' -]+", k)]
        if person is None or not words or words[0] in person.setdefault("topics", {}):
            return ""
        person["topics"][words[0]] = clip(spoken(text, str(person["name"]), self.sub.user) or text, 300)
        if words[1:]:
            person.setdefault("topic_aliases", {})[words[0]] = words[1:]
        return f"; {self.person_id}'s topic {words[0]!r}"

    def card(self, card: Card, greeting: int) -> None:
        """The card's character as a person at the story's start, and its greeting as the story's opening."""
        if looks_like_instruction(card.name):  # a name is said in every prompt that has the person in it
            raise ImportFailure(
                f"{self.report.source}: data.name: {card.name!r} reads as an instruction to the narrator, not a "
                "name; rename the character in the card and import it again"
            )
        description = self.guarded("data.description", self.sub(card.description))
        personality = self.guarded("data.personality", self.sub(card.personality))
        scenario = self.guarded("data.scenario", self.sub(card.scenario))
        npc_id = self.person_id = self.person(card.name, description, personality, scenario)
        self.card_voice(card, next(n for n in self.files.npcs if n["id"] == npc_id))
        about = "\n\n".join(t for t in (description, personality) if t)
        if len(about) >= MIN_LORE_CHARS and not self.lore_with(about):
            lore_id = make_id(card.name, self.lore_ids, "lore")
            self.files.knowledge.append(
                {"id": lore_id, "category": "relationship", "title": card.name, "content": about,
                 "keywords": [card.name]}
            )  # fmt: skip
            self.report.mapped.append(f"data.description + personality -> knowledge.json {lore_id!r} (relationship)")
        section = f"## {card.name}'s situation"
        if scenario and section not in self.files.worldview:
            self.files.worldview = self.files.worldview.rstrip() + f"\n\n{section}\n{scenario}\n"
            self.report.mapped.append(f"data.scenario -> worldview.md section and {npc_id}'s topic 'situation'")
        self.opening(card, greeting, npc_id)

    def card_voice(self, card: Card, person: dict[str, Any]) -> None:
        """The card's example dialogue as the person's voice (:mod:`.voice`), its tags as theirs, its creator's
        notes in the report."""
        said = voice(self.guarded("data.mes_example", self.sub(card.mes_example)), self.sub)
        if said.examples and person.get("voice") != said.examples:  # an import made again changes nothing
            person["voice"] = said.examples
            self.report.mapped.append(
                f"data.mes_example -> npcs.json {person['id']!r} voice ({len(said.examples)} exchange(s), shown as how "
                "they speak when the player talks to them)"
            )
        self.report.skipped += [f"data.mes_example {why}" for why in said.left_out]
        had = person.get("tags", [])
        tags = [t.strip() for t in card.tags if t.strip() and not looks_like_instruction(t) and t.strip() not in had]
        if tags:
            person["tags"] = list(dict.fromkeys([*had, *tags]))
            self.report.mapped.append(f"data.tags -> npcs.json {person['id']!r} tags ({', '.join(tags)})")
        if card.creator_notes.strip():
            self.report.notes.append(f"the card's creator notes: {clip(' '.join(card.creator_notes.split()), 300)}")

    def person(self, name: str, description: str, personality: str, scenario: str) -> str:
        """The card's character as a person at the story's start (one of that name already there is kept)."""
        same = next((str(n["id"]) for n in self.files.npcs if n.get("name") == name), "")
        if same:
            self.report.skipped.append(f"data.name: {name!r} is already a person of the story (npcs.json {same!r})")
            return same
        taken = {str(n["id"]) for n in self.files.npcs}
        npc_id = make_id(name, taken, "person")
        start = self.place or str(self.files.story["start_node"])
        node = next((n for n in self.files.map["nodes"] if n["id"] == start), None)
        if node is None:
            places = ", ".join(str(n["id"]) for n in self.files.map["nodes"])
            raise ImportFailure(
                f"{self.report.source}: --place {start}: no such place in the story (its places: {places})"
            )
        node.setdefault("npcs", []).append(npc_id)
        words = name.split()
        self.files.npcs.append(
            {
                "id": npc_id,
                "name": name,
                "role": _role(description, name),
                "trait": clip(" ".join(t for t in (description, personality) if t), TRAIT_CHARS) or f"{name}.",
                "likes": [],
                "dislikes": [],
                "initial_affinity": 0,
                "location": start,
                "thresholds": [{"at": 30, "label": "friend", "effect": f"{name} trusts you and speaks freely"}],
                "dialogue_style": clip(personality, 160) or "In their own words.",
                "greeting": "Well met.",  # spoken, as a greeting is: the words the card's opening says, if any
                "farewell": "Until we meet again.",
                "topics": {"situation": clip(scenario, 300)} if scenario else {},
                "topic_aliases": {"situation": ["here", "this place", "scenario"]} if scenario else {},
                # and, once the card's lore entries are read, what the person knows: one topic each (``topic``)
                "aliases": [words[0]] if len(words) > 1 else [],
                "pronouns": _pronouns(f"{description} {personality}"),
            }
        )
        self.report.mapped.append(
            f"data.name + description + personality -> npcs.json {npc_id!r} at {start!r} (a person the narrator knows)"
        )
        return npc_id

    def opening(self, card: Card, greeting: int, npc_id: str) -> None:
        """The chosen greeting as the story's intro; the words said in it as the person's greeting."""
        greetings = [card.first_mes, *card.alternate_greetings]
        if not 0 <= greeting < len(greetings):
            raise ImportFailure(
                f"{self.report.source}: --greeting {greeting}: the card has greetings 0 (first_mes) to "
                f"{len(greetings) - 1}"
            )
        field = "data.first_mes" if greeting == 0 else f"data.alternate_greetings[{greeting - 1}]"
        intro = self.guarded(field, self.sub(greetings[greeting]))
        own = not str(self.files.story.get("intro", "")).endswith(SCAFFOLD_INTRO)
        if intro and own and not self.replace_opening:
            self.report.skipped.append(
                f"{field}: the story keeps the opening its author wrote (add --opening to open with the card's "
                "greeting instead)"
            )
        elif intro:
            self.files.story["intro"] = intro
        if intro:
            said = re.search(r'["\u201c]([^"\u201d]{8,300})["\u201d]', intro)
            if said:
                person = next(n for n in self.files.npcs if n["id"] == npc_id)
                person["greeting"] = said.group(1).strip()
            if self.files.story["intro"] == intro:
                self.report.mapped.append(f"{field} -> story.json intro ({{{{char}}}} and {{{{user}}}} named)")
        else:
            self.report.skipped.append(f"{field}: no text to open the story with; the story keeps its intro")
        others = [(i, g) for i, g in enumerate(greetings) if i != greeting and g.strip()]
        if others:
            self.report.unused.append(
                f"{len(others)} other greeting(s) of the card (a story has one opening: pick one with --greeting N)"
            )
            self.report.notes += [f"--greeting {i} opens with: {clip(self.sub(g), 80)!r}" for i, g in others]


_SPEAKER = re.compile(r"(?:^|(?<=[\s\"\u201d*.!?]))([A-Z][\w'-]*(?: [A-Z][\w'-]*)?):\s")
"""A speaker's tag inside a card's transcript text ("Traveller: ", "Seraphina: ")."""


def spoken(text: str, name: str, user: str) -> str:
    """What a card's text has its character ``name`` say, as words a person answers with: the quoted words of
    their own turns of a transcript, never the ``user``'s ("Traveller: "What are Shadowfangs?" Seraphina:
    *Seraphina's eyes darken* "Beasts of the old dark.""), else their turns without the ``*actions*``; "" when
    the text gives them no words (the caller keeps it as it is)."""
    parts = _SPEAKER.split(text)
    turns = [("", parts[0]), *zip(parts[1::2], parts[2::2], strict=False)]
    first = name.split()[0].lower() if name.split() else ""
    mine = [said for who, said in turns if not who or who.lower() in (name.lower(), first)]
    if len(turns) > 1 and not any(who.lower() in (name.lower(), first) for who, _ in turns[1:]):
        return ""  # a transcript of other people: not this person's words
    joined = " ".join(mine)
    quoted = re.findall(r"[\"\u201c]([^\"\u201d]+)[\"\u201d]", joined)
    words = " ".join(q.strip() for q in quoted) if quoted else re.sub(r"\*[^*]*\*", " ", joined)
    return " ".join(words.split())


def _gated(activation: dict[str, Any]) -> str:
    """How an entry's activation asks more than a key (a topic answers whenever its word is asked about), in
    words; "" when a key is all it needs."""
    if activation.get("secondary_keys") and activation.get("selective", True):
        logic = str(activation.get("logic", "and_any")).replace("_", " ").upper()
        return f"with its secondary keys ({logic} {', '.join(activation['secondary_keys'])})"
    if activation.get("use_probability", True) and activation.get("probability", 100) < 100:
        return f"on a {activation['probability']}% roll"
    if activation.get("group") or activation.get("delay") or activation.get("cooldown"):
        return "by its inclusion group or timing"
    return ""


def _title(name: str, keys: list[str], text: str) -> str:
    """The entry's title: its name, and the keys its name and text do not hold (recall searches title and text)."""
    held = set(keywords(f"{name} {text}"))
    missing = [k for k in keys if not set(keywords(k)) <= held]
    return clip(f"{name} (also: {', '.join(missing)})" if missing else name, 160)


def _role(description: str, name: str) -> str:
    """A short role from the description's first sentence ("X is a retired keeper." -> "a retired keeper")."""
    first = re.split(r"(?<=[.!?])\s", description.strip(), maxsplit=1)[0].rstrip(".!?")
    found = re.match(rf"^(?:{re.escape(name)}|she|he|they)\s+(?:is|was|are)\s+(.+)$", first, re.I)
    return clip(found.group(1), 60) if found else "someone met here"


def _pronouns(text: str) -> str:
    words = re.findall(r"[a-z]+", text.lower())
    counts = {
        "she/her": sum(w in ("she", "her", "hers", "herself") for w in words),
        "he/him": sum(w in ("he", "him", "his", "himself") for w in words),
    }
    best = max(counts, key=lambda k: counts[k])
    return best if counts[best] > 0 and list(counts.values()).count(counts[best]) == 1 else "they/them"
