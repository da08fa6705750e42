"""The scripted narrator: deterministic, content-driven, offline.

It reads the parsed command, the state snapshot and the recalled memory blocks
of the prompt bundle (not the prose prompt), proposes effects the way an LLM
narrator would, and answers with the same JSON turn. Its narration is built
from the content pack's own text. Questions ("where is Hal?", "what is my
name?") are answered from the memory blocks it is given, so it is also a probe
of what memory recalled: if the answer was not injected, it cannot know it.

It also provides the extractive summary call memory uses.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from game.llm.base import PromptBundle
from game.text import best_match, keywords
from game.world.conditions import enemies_at, holds, items_at, npcs_at
from game.world.content import ContentPack
from game.world.describe import inventory_text, node_text, npc_now, quests_text, status_text, the
from game.world.parser import DIRECTIONS, Command
from game.world.state import GameState

_SENTENCE = re.compile(r"(?<=[.!?|])\s+|\s*\|\s*|\n+")
# Verbs whose text may express a story choice ("negotiate", "play the requiem",
# "say I accept the pact"); questions and talk about a choice never make it.
CHOICE_VERBS = frozenset({"other", "use", "say"})
_BLOCK_WEIGHT = {
    "relevant_memories": 1.0,
    "history_recall": 0.9,
    "bible_core": 0.8,
    "open_threads": 0.7,
    "knowledge": 0.6,
}
_QUESTION_NOISE = frozenset({"know", "remember", "tell", "said", "say", "told", "now", "again", "recall"})


def _words(text: str) -> set[str]:
    return set(keywords(text))


def _second_person(text: str) -> str:
    """Memory speaks of 'the player'; the narrator speaks to 'you'."""

    def verb(match: re.Match[str]) -> str:
        word = match.group(1)
        base = (
            word[:-3] + "y"
            if word.endswith("ies")
            else word[:-2]
            if word.endswith("es") and word[-3] in "sxz"
            else word[:-1]
        )
        return f"you {base}"

    text = re.sub(r"\b[Tt]he player's\b", "your", text)
    text = re.sub(r"\b[Tt]he player (\w+s)\b", verb, text)
    text = re.sub(r"\b[Tt]he player\b", "you", text)
    return re.sub(r"(^|[.:!?]\s+)([a-z])", lambda m: m.group(1) + m.group(2).upper(), text)


class ScriptedNarrator:
    """Deterministic narrator over one content pack."""

    name = "scripted"

    def __init__(self, pack: ContentPack) -> None:
        self.pack = pack

    # ---------------------------------------------------------------- names
    def _npc_names(self, ids: Iterable[str]) -> list[tuple[str, list[str]]]:
        return [(i, self.pack.npcs[i].names) for i in ids]

    def _item_names(self, ids: Iterable[str]) -> list[tuple[str, list[str]]]:
        return [(i, self.pack.items[i].names) for i in ids]

    def _enemy_names(self, ids: Iterable[str]) -> list[tuple[str, list[str]]]:
        return [(i, self.pack.enemies[i].names) for i in ids]

    # ---------------------------------------------------------------- entry
    def narrate(self, bundle: PromptBundle) -> str:
        turn = self.turn(bundle)
        return json.dumps(turn, ensure_ascii=False)

    def turn(self, bundle: PromptBundle) -> dict[str, Any]:
        state, command = bundle.state, bundle.command
        effects: dict[str, Any] = {}
        notes: list[str] = []
        choice = self._match_choice(command, state) if command.verb in CHOICE_VERBS else None
        if choice:
            effects["choice"] = choice
            narration = self.pack.choice(choice).description  # type: ignore[union-attr]
        elif state.combat:
            narration = self._combat(command, state, effects)
        else:
            handler = getattr(self, f"_do_{command.verb}", self._do_other)
            narration = handler(command, state, effects, notes, bundle)
        refused = [r for r in bundle.refused if r.effect in effects]
        if refused:  # asked again: its prose was written before the rules ran; now it tells the refusal
            effects = {k: v for k, v in effects.items() if k not in {r.effect for r in refused}}
            narration = " ".join(dict.fromkeys(r.told for r in refused if r.told)) or "Nothing comes of it."
        return {
            "narration": narration,
            "choices": self._choices(state, effects),
            "effects": effects,
            "memory_notes": notes,
        }

    def _match_choice(self, command: Command, state: GameState) -> str | None:
        """The story choice ``text`` expresses, preferring one possible here.

        A keyword that names an impossible choice still counts when the text
        means nothing else ("negotiate" far from the throne gets the rules'
        refusal), but "play the harp" at the altar stays a plain use of the harp.
        """
        lowered = f" {command.text.lower()} "
        matches = [
            c
            for c in self.pack.story.choices
            if any(re.search(rf"\b{re.escape(k.lower())}\b", lowered) for k in c.keywords)
        ]
        possible = [c for c in matches if holds(c.condition, state)]
        if possible:
            return possible[0].id
        return matches[0].id if matches and command.verb == "other" else None

    # --------------------------------------------------------------- verbs
    def _combat(self, command: Command, state: GameState, effects: dict[str, Any]) -> str:
        assert state.combat is not None
        foe = the(self.pack.enemies[state.combat.enemy_id].name)
        if command.verb in ("flee", "go"):
            effects["combat_action"] = "flee"
            return f"You look for a way past {foe}."
        if command.verb == "use":
            item = best_match(command.target, self._item_names(state.inventory))
            if item is None:
                return f"You fumble for something you do not have while {foe} circles you."
            effects["use_item"] = item
            effects["combat_action"] = "defend"
            return f"Keeping {foe} at bay, you reach for your {self.pack.items[item].name}."
        if command.verb == "attack":
            effects["combat_action"] = "attack"
            return f"You press the attack against {foe}."
        if command.verb in ("look", "examine", "status", "inventory", "quests"):
            return f"{self.pack.enemies[state.combat.enemy_id].encounter} You are locked in a fight with {foe}."
        return f"There is no time for that: you are fighting {foe}. Attack, flee, or use an item."

    def _do_go(self, command: Command, state: GameState, effects: dict[str, Any], *_: Any) -> str:
        exits = self.pack.nodes[state.node].exits
        target = DIRECTIONS.get(command.target, command.target)
        node_id = exits.get(target)
        if node_id is None:
            named = [(n, [self.pack.nodes[n].name, n.replace("_", " ")]) for n in self.pack.nodes]
            node_id = best_match(target, [c for c in named if c[0] in exits.values()]) or best_match(target, named)
        if node_id is None:
            return f"You cannot go '{command.target}' from here. Exits lead {', '.join(exits)}."
        effects["move_to"] = node_id
        here = self.pack.nodes[state.node]
        for direction, lock in here.locked_exits.items():
            if here.exits[direction] == node_id and not holds(lock.condition, state):
                return lock.message  # the rules will refuse the move too
        node = self.pack.nodes[node_id]
        return f"You make your way to {node.name}. {node.description}"

    def _do_look(self, command: Command, state: GameState, *_: Any) -> str:
        return node_text(state, self.pack)

    def _do_examine(
        self, command: Command, state: GameState, effects: dict[str, Any], notes: list[str], bundle: PromptBundle
    ) -> str:
        pack, target = self.pack, command.target
        item = best_match(target, self._item_names([*state.inventory, *items_at(state, pack, state.node)]))
        if item:
            return f"{pack.items[item].name}: {pack.items[item].description}"
        npc = best_match(target, self._npc_names(npcs_at(pack, state.node)))
        if npc:
            n = pack.npcs[npc]
            return f"{n.name}, {n.role}. {n.trait}"
        enemy = best_match(target, self._enemy_names(enemies_at(state, pack, state.node)))
        if enemy:
            return pack.enemies[enemy].encounter
        return f"You study the {target} but find nothing remarkable. {node_text(state, pack, full=False)}"

    def _do_talk(
        self, command: Command, state: GameState, effects: dict[str, Any], notes: list[str], bundle: PromptBundle
    ) -> str:
        here = npcs_at(self.pack, state.node)
        npc_id = best_match(command.obj, self._npc_names(here))
        if npc_id is None and len(here) == 1 and not command.obj:
            npc_id = here[0]
        if npc_id is None:
            other = best_match(command.obj, self._npc_names(self.pack.npcs))
            if other:
                effects["talk_to"] = other  # the rules will say they are not here
                return f"You call out for {self.pack.npcs[other].name}, but no one answers."
            return "There is no one here by that name."
        npc = self.pack.npcs[npc_id]
        effects["talk_to"] = npc_id
        if command.topic:
            said = self._topic(npc_id, command.topic, state)
            if said:
                notes.append(f"{npc.name} said about {command.topic}: {said}")
                return f'{npc.name}: "{said}"'
            return f'{npc.name} shakes their head. "I know nothing about {command.topic}."'
        greeting, topics = self._mood(npc_id, state)
        return (
            f'{npc.name}: "{greeting}" (You could ask about: {", ".join(sorted(topics)) or "nothing in particular"}.)'
        )

    def _mood(self, npc_id: str, state: GameState) -> tuple[str, dict[str, str]]:
        """The NPC's greeting and topics now: later moods override earlier ones."""
        return npc_now(self.pack.npcs[npc_id], state)

    def _topic(self, npc_id: str, topic: str, state: GameState) -> str | None:
        _, topics = self._mood(npc_id, state)
        key = best_match(topic, [(k, [k]) for k in topics])
        return topics[key] if key else None

    def _do_say(
        self, command: Command, state: GameState, effects: dict[str, Any], notes: list[str], bundle: PromptBundle
    ) -> str:
        text = re.sub(r"^(say|shout|whisper|tell)\s+(to\s+)?", "", command.text, flags=re.I).strip(" \"'")
        notes.append(f"The player said: {text}")
        here = npcs_at(self.pack, state.node)
        npc_id = (
            best_match(command.obj, self._npc_names(here)) if command.obj else (here[0] if len(here) == 1 else None)
        )
        if npc_id:
            effects["talk_to"] = npc_id
            npc = self.pack.npcs[npc_id]
            return f'You tell {npc.name}: "{text}" {npc.name} listens, and will remember it.'
        return f'You say aloud: "{text}" The words hang in the air.'

    def _do_ask(
        self, command: Command, state: GameState, effects: dict[str, Any], notes: list[str], bundle: PromptBundle
    ) -> str:
        question = command.topic
        if re.search(r"\bwhere am i\b", question):
            return node_text(state, self.pack)
        for npc_id in npcs_at(self.pack, state.node):
            said = self._topic(npc_id, question, state)
            if said:
                effects["talk_to"] = npc_id
                npc = self.pack.npcs[npc_id]
                notes.append(f"{npc.name} said: {said}")
                return f'{npc.name} answers: "{said}"'
        answer = self._answer_from_memory(question, bundle)
        if answer:
            return answer
        return "You search your memory, but nothing you know answers that."

    def _answer_from_memory(self, question: str, bundle: PromptBundle) -> str | None:
        """Answer from the injected memory blocks only (extractive).

        The best item shares the most question words and best fits the kind of
        question (a place for "where", a person for "who"); from it, the
        sentence naming the subject and the sentence carrying the answer.
        """
        lowered = question.lower()
        wanted = _words(question) - _QUESTION_NOISE
        if re.search(r"\b(my|i|me|mine|myself)\b", lowered):
            wanted.add("player")  # memory speaks of the player in the third person
        if not wanted:
            return None
        cues = self._cues(lowered)
        best: tuple[float, list[str]] | None = None
        for block in bundle.memory.blocks:
            weight = _BLOCK_WEIGHT.get(block.name, 0.5)
            for item in block.items:
                overlap = len(wanted & _words(item.text))
                if not overlap:
                    continue
                sentences = [x.strip() for x in _SENTENCE.split(item.text) if x.strip()]
                score = overlap + 0.3 * weight + 0.3 * max(self._cue_score(x, cues) for x in sentences)
                if best is None or score > best[0]:
                    best = (score, sentences)
        if best is None:
            return None
        sentences = best[1]
        subject = max(sentences, key=lambda x: len(wanted & _words(x)))
        answer = max(sentences, key=lambda x: self._cue_score(x, cues))
        if not self._cue_score(answer, cues):
            answer = subject
        parts = [subject] if answer == subject else [subject, answer]
        return "You recall: " + _second_person(" ".join(parts))

    def _cues(self, question: str) -> dict[str, float]:
        """Words that mark an answer to this kind of question, with their weight."""
        if question.startswith("where") or " where " in question:
            names = [n.name for n in self.pack.nodes.values()] + [r.name for r in self.pack.story.regions]
            return {n.lower(): 2.0 for n in names} | dict.fromkeys(("seen", "lives", "hiding", "gone to"), 1.0)
        if question.startswith("who") or " who " in question:
            return {n.name.lower(): 2.0 for n in self.pack.npcs.values()}
        if "name" in question:
            return dict.fromkeys(("name is", "called"), 2.0)
        return {}

    @staticmethod
    def _cue_score(sentence: str, cues: dict[str, float]) -> float:
        lowered = sentence.lower()
        found = [w for cue, w in cues.items() if re.search(rf"\b{re.escape(cue)}\b", lowered)]
        return max(found) + 0.1 * len(found) if found else 0.0  # a list of exits is no better an answer

    def _do_take(self, command: Command, state: GameState, effects: dict[str, Any], *_: Any) -> str:
        here = items_at(state, self.pack, state.node)
        item = best_match(command.target, self._item_names(here))
        if item is None:
            elsewhere = best_match(command.target, self._item_names(self.pack.items))
            if elsewhere:
                effects["items_gained"] = [elsewhere]  # the rules will refuse
                return f"You reach for the {self.pack.items[elsewhere].name}..."
            return f"There is no {command.target} here."
        effects["items_gained"] = [item]
        return self.pack.items[item].description

    def _do_drop(self, command: Command, state: GameState, effects: dict[str, Any], *_: Any) -> str:
        item = best_match(command.target, self._item_names(state.inventory))
        if item is None:
            return f"You are not carrying {command.target}."
        effects["items_lost"] = [item]
        return f"You set down the {self.pack.items[item].name}."

    def _do_use(self, command: Command, state: GameState, effects: dict[str, Any], *_: Any) -> str:
        item = best_match(command.target, self._item_names(state.inventory))
        if item is None:
            here = best_match(command.target, self._item_names(items_at(state, self.pack, state.node)))
            if here:
                return f"You would have to pick up the {self.pack.items[here].name} first."
            return f"You have no {command.target}."
        effects["use_item"] = item
        return f"You use the {self.pack.items[item].name}."

    def _do_give(self, command: Command, state: GameState, effects: dict[str, Any], *_: Any) -> str:
        item = best_match(command.target, self._item_names(state.inventory))
        npc = best_match(command.obj, self._npc_names(self.pack.npcs))
        if item is None:
            return f"You have no {command.target} to give."
        if npc is None:
            return f"There is no '{command.obj}' to give it to."
        effects["give_item"] = {"item": item, "to": npc}
        return f"You offer the {self.pack.items[item].name} to {self.pack.npcs[npc].name}."

    def _do_attack(self, command: Command, state: GameState, effects: dict[str, Any], *_: Any) -> str:
        here = enemies_at(state, self.pack, state.node)
        enemy = best_match(command.target, self._enemy_names(here)) if command.target else (here[0] if here else None)
        if enemy is None:
            named = best_match(command.target, self._enemy_names(self.pack.enemies)) if command.target else None
            if named:
                effects["start_combat"] = named  # the rules will refuse
                return f"You look around for {the(self.pack.enemies[named].name)}..."
            return "There is nothing here to fight."
        effects["start_combat"] = enemy
        effects["combat_action"] = "attack"
        return f"You draw your weapon and charge {the(self.pack.enemies[enemy].name)}!"

    def _do_flee(self, command: Command, state: GameState, *_: Any) -> str:
        return "There is nothing to flee from."

    def _do_rest(self, command: Command, state: GameState, effects: dict[str, Any], *_: Any) -> str:
        if not self.pack.nodes[state.node].safe:
            return "You glance around: this is no place to close your eyes."
        effects["rest"] = True
        return "You find a quiet corner and close your eyes for a while."

    def _do_inventory(self, command: Command, state: GameState, *_: Any) -> str:
        return inventory_text(state, self.pack)

    def _do_quests(self, command: Command, state: GameState, *_: Any) -> str:
        return quests_text(state, self.pack)

    def _do_status(self, command: Command, state: GameState, *_: Any) -> str:
        return status_text(state, self.pack)

    def _do_other(
        self, command: Command, state: GameState, effects: dict[str, Any], notes: list[str], bundle: PromptBundle
    ) -> str:
        return f"You try to {command.text.strip().rstrip('.')}, but nothing much comes of it."

    # -------------------------------------------------------------- choices
    def _choices(self, state: GameState, effects: dict[str, Any]) -> list[str]:
        if state.combat or effects.get("start_combat"):
            healing = [i for i in state.inventory if (use := self.pack.items[i].use) and use.heal]
            return ["attack", "flee", *[f"use {self.pack.items[i].name}" for i in healing[:1]]]
        moving = effects.get("move_to")
        node_id: str = moving if isinstance(moving, str) and moving in self.pack.nodes else state.node
        node = self.pack.nodes[node_id]
        out: list[str] = []
        for npc in node.npcs[:1]:
            out.append(f"talk to {self.pack.npcs[npc].name}")
        taking = set(effects.get("items_gained", []))
        for item in [i for i in items_at(state, self.pack, node_id) if i not in taking][:1]:
            out.append(f"take {self.pack.items[item].name}")
        for enemy in enemies_at(state, self.pack, node_id)[:1]:
            out.append(f"attack {self.pack.enemies[enemy].name}")
        for direction in list(node.exits)[:2]:
            out.append(f"go {direction}")
        while len(out) < 2:
            out.append("look around")
        return out[:4]

    # ------------------------------------------------------------ summaries
    def summarize(self, text: str, max_words: int = 60) -> str:
        """Extractive summary: the most content-rich sentences, in order."""
        return extractive_summary(text, max_words)


def extractive_summary(text: str, max_words: int = 60) -> str:
    """The most content-rich sentences of ``text``, in their order, within ``max_words``."""
    sentences = [s.strip() for s in _SENTENCE.split(text) if s.strip()]
    if not sentences:
        return ""
    freq = Counter(keywords(text))
    scored = sorted(
        range(len(sentences)),
        key=lambda i: -sum(freq[w] for w in set(keywords(sentences[i]))) / (1 + len(sentences[i].split()) ** 0.5),
    )
    chosen: list[int] = []
    words = 0
    for index in scored:
        length = len(sentences[index].split())
        if words + length > max_words and chosen:
            continue
        chosen.append(index)
        words += length
        if words >= max_words:
            break
    summary = " ".join(sentences[i] for i in sorted(chosen))
    return " ".join(summary.split()[:max_words])


class ExtractiveSummarizer:
    """The scripted narrator's summary call on its own (no story needed)."""

    def summarize(self, text: str, max_words: int = 60) -> str:
        return extractive_summary(text, max_words)
