"""The scripted narrator: deterministic, content-driven, offline.

It reads the parsed command, the state snapshot and the recalled memory blocks
of the prompt bundle (not the prose prompt), proposes effects the way an LLM
narrator would, and answers with the same JSON turn. Its narration is built
from the content pack's own text. Questions ("where is Hal?", "what is my
name?") are answered from the memory blocks it is given, so it is also a probe
of what memory recalled: if the answer was not injected, it cannot know it.
Recalled facts are said as sentences: the Story Bible's first (the latest
value of a fact wins), then the history's, never a raw log line.

It understands players the way a game master would:

- a question or talk with one person present goes to that person ("who are
  you?", "ask about kyoto"), who answers in their own words (topics and their
  ``topic_aliases``; a name another character goes by finds the topic about
  them: "the shadow lord" is Silas), with the pronouns the content gives;
- "me", "my" and "myself" are the player ("ask senda about me");
- words the parser reads but the story does not name here ("speak the verse",
  "haul him out of the roots", "wrench the case free") are matched against the
  words of the quest objectives not yet done, so no objective's own wording
  falls through.

It also provides the summary call memory uses: a digest of the turns (``digest.py``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from game.llm.base import NarratorBase, PromptBundle
from game.llm.digest import digest
from game.llm.lore import lore_reply
from game.llm.recollection import PLAYER, Recollection, second_person, sentence, to_you, yourself
from game.llm.recollection import words as _words
from game.memory.player_facts import PLAYER_TEMPLATES
from game.text import best_match, mentions
from game.world.conditions import enemies_at, holds, items_at, npcs_at
from game.world.content import ContentPack, Enemy, Item, Npc, Objective
from game.world.describe import (
    inventory_text,
    node_description,
    node_text,
    npc_now,
    quests_text,
    status_text,
    the,
)
from game.world.parser import DIRECTIONS, PRONOUNS, Command, clauses, verb_key
from game.world.state import GameState

# Verbs whose text may express a story choice ("negotiate", "play the requiem",
# "say I accept the pact"); questions and talk about a choice never make it.
CHOICE_VERBS = frozenset({"other", "use", "say"})
_YOU = re.compile(r"\b(?:you|your|yours|yourself|ya|u)\b", re.I)
_ABOUT_SELF = re.compile(
    r"^(?:you|yourself)$|\b(?:who|what)\s+(?:are|r)\s+(?:you|u)\b|\byour\s+name\b|\byourself\b|\babout\s+you$"
    r"|\bwho\s+you\s+are\b"
)
_ABOUT_PLAYER = re.compile(
    r"^(?:me|myself|i)$|\babout\s+(?:me|myself)\b|\bmy\s+name\b|\bwho\s+(?:am\s+i|i\s+am)\b|\b(?:know|remember)\s+me\b"
)
_TOLD_ME = re.compile(r"\bwhat\b(?:\s+(?:did|has|had|does))?\s+(?P<who>.+?)\s+(?:tell|told|say|said)\b")
"""\"What did Garrick tell me?\", \"what has Alicia said\", \"tell me what Garrick said\": a person's own words."""
_MY_NAME = re.compile(r"\bmy\s+name\b")
_HEAL_ME = re.compile(r"^(?:heal|cure|patch up|bandage|treat)\s+(?:me|myself|my wounds)$", re.I)
_CONVEYANCE = re.compile(r"\b(?:elevator|lift|stairs?|staircase|stairway|ladder|escalator|ramp)\b")
_FORMS = {"he": ("him", "his"), "she": ("her", "her"), "they": ("them", "their"), "it": ("it", "its")}
_REREAD_NEVER = frozenset({"look", "inventory", "quests", "status", "rest", "flee", "help", "ask"})

VerbHandler = Callable[[Command, GameState, dict[str, Any], list[str], PromptBundle], str]
"""A verb's turn: (command, state, effects to propose, memory notes, bundle) -> the narration."""


def pronouns(npc: Npc) -> tuple[str, str, str]:
    """(subject, object, possessive) of an NPC, from its content ``pronouns`` ("she/her", "it/its")."""
    subject, _, second = npc.pronouns.partition("/")
    obj, possessive = _FORMS.get(subject, (second, second))
    return subject, obj, possessive


def _agree(subject: str, verb: str) -> str:
    """The verb as ``subject`` (a pronoun or a name) does it: "she shakes", "they shake", "Old Sage shakes"."""
    if subject == "they":
        return verb
    return verb + ("es" if verb.endswith(("s", "sh", "ch", "x", "z", "o")) else "s")


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


class ScriptedNarrator(NarratorBase):
    """Deterministic narrator over one content pack."""

    name = "scripted"

    def __init__(self, pack: ContentPack) -> None:
        self.pack = pack
        self.recollection = Recollection(pack)
        self.verbs: dict[str, VerbHandler] = {
            "go": self._do_go,
            "look": self._do_look,
            "examine": self._do_examine,
            "talk": self._do_talk,
            "say": self._do_say,
            "ask": self._do_ask,
            "take": self._do_take,
            "drop": self._do_drop,
            "use": self._do_use,
            "give": self._do_give,
            "attack": self._do_attack,
            "flee": self._do_flee,
            "rest": self._do_rest,
            "inventory": self._do_inventory,
            "quests": self._do_quests,
            "status": self._do_status,
            "other": self._do_other,
        }
        """Each verb's handler; a verb without one (``defend`` out of combat) is :meth:`_do_other`."""

    # ---------------------------------------------------------------- names
    def _npc_names(self, ids: Iterable[str]) -> list[tuple[str, list[str]]]:
        return [(i, self.pack.npcs[i].names) for i in ids]

    def _item_names(self, ids: Iterable[str]) -> list[tuple[str, list[str]]]:
        return [(i, self.pack.items[i].names) for i in ids]

    def _enemy_names(self, ids: Iterable[str]) -> list[tuple[str, list[str]]]:
        return [(i, self.pack.enemies[i].names) for i in ids]

    def _node_names(self, ids: Iterable[str]) -> list[tuple[str, list[str]]]:
        return [(i, [self.pack.nodes[i].name, i.replace("_", " ")]) for i in ids]

    def _addressee(self, who: str, state: GameState) -> str | None:
        """The NPC present ``who`` means: by name, by a pronoun, or the one person here when unnamed."""
        here = npcs_at(self.pack, state.node)
        if not who:
            return here[0] if len(here) == 1 else None
        if who in PRONOUNS or who in ("you", "u"):
            fits = [n for n in here if who in (*pronouns(self.pack.npcs[n])[:2], self.pack.npcs[n].pronouns)]
            fits = fits or here
            return fits[0] if fits else None
        return best_match(who, self._npc_names(here))

    def _enemy_here(self, name: str, state: GameState) -> str | None:
        """The enemy here ``name`` means: by its names, or by the names of the character it is.

        The Shadow Lord is Silas: at the throne, "talk to silas" finds the Shadow Lord.
        """
        here = enemies_at(state, self.pack, state.node)
        if not name or not here:
            return None
        enemy = best_match(name, self._enemy_names(here))
        if enemy:
            return enemy
        npc = best_match(name, self._npc_names(self.pack.npcs))
        if npc:
            for alias in self.pack.npcs[npc].names:
                found = mentions(alias, self._enemy_names(here))[0]
                if len(found) == 1:
                    return found[0]
        return None

    def _destination(self, target: str, state: GameState) -> str | None:
        """The node a movement toward ``target`` leads to (a direction, a place, a lift or stair here)."""
        exits = self.pack.nodes[state.node].exits
        target = DIRECTIONS.get(target, target)
        if target in exits:
            return exits[target]
        if not target:
            return None
        node_id = best_match(target, self._node_names(exits.values())) or best_match(
            target, self._node_names(self.pack.nodes)
        )
        if (node_id is None or node_id == state.node) and _CONVEYANCE.search(target):
            vertical = [d for d in ("up", "down") if d in exits]
            if len(vertical) == 1:  # "take the lift" where it is: where it goes
                return exits[vertical[0]]
        return node_id

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
            command = self._understood(command, state)
            handler = self.verbs.get(command.verb, self._do_other)
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

    # ------------------------------------------------------ understanding
    def _understood(self, command: Command, state: GameState) -> Command:
        """The command as the story understands it.

        Free text, words said that are not about the player, and a verb whose
        object is nowhere here are read against the objectives still to do:
        "speak the verse" at the spring is the dewdrop's use the objective
        "Pour the dewdrop ... and speak the verse" asks for.
        """
        if command.verb in _REREAD_NEVER:
            return command
        if command.verb == "say" and (command.obj or PLAYER.search(command.target)):
            return command
        if command.verb not in ("other", "say") and self._resolves(command, state):
            return command
        return self._objective_step(command, state) or command

    def _resolves(self, command: Command, state: GameState) -> bool:
        """Whether what ``command`` names is here to act on."""
        pack, verb = self.pack, command.verb
        if verb == "go":
            return self._destination(command.target, state) is not None
        if verb == "take":
            return best_match(command.target, self._item_names(items_at(state, pack, state.node))) is not None
        if verb in ("use", "drop"):
            return best_match(command.target, self._item_names(state.inventory)) is not None
        if verb == "attack":
            if not command.target:
                return bool(enemies_at(state, pack, state.node))
            return self._enemy_here(command.target, state) is not None
        if verb == "talk":
            return self._addressee(command.obj, state) is not None or self._enemy_here(command.obj, state) is not None
        if verb == "give":
            item = best_match(command.target, self._item_names(state.inventory))
            return item is not None and best_match(command.obj, self._npc_names(pack.npcs)) is not None
        if verb == "examine":
            here = [*state.inventory, *items_at(state, pack, state.node)]
            return any(
                best_match(command.target, names) is not None
                for names in (
                    self._item_names(here),
                    self._npc_names(npcs_at(pack, state.node)),
                    self._enemy_names(enemies_at(state, pack, state.node)),
                )
            )
        return True

    def _objective_step(self, command: Command, state: GameState) -> Command | None:
        """The action an objective still to do describes in the player's words, if any.

        The player's verb must mean the verb of one of the objective's steps
        (``parser.clauses``, ``parser.verb_key``), and one of the other words
        must be the step's or name what the objective is about.
        """
        words = re.findall(r"[a-z0-9'-]+", command.text.lower())
        if len(words) < 2:
            return None
        verb, said = verb_key(words[0]), _words(" ".join(words[1:]))
        if not said:
            return None
        skip = {"choice", "talk"} if command.verb == "say" else {"choice"}  # what is said stays said
        best: tuple[tuple[int, bool], Objective] | None = None
        for quest in self.pack.all_quests():
            progress = state.quests.get(quest.id)
            if progress is not None and progress.status != "active":
                continue
            for objective in quest.objectives:
                if objective.kind in skip or (progress is not None and objective.id in progress.objectives_done):
                    continue
                named = _words(" ".join(self._objective_names(objective)))
                for step in clauses(objective.description):
                    first, _, rest = step.partition(" ")
                    if verb_key(first) != verb:
                        continue
                    overlap = len(said & (_words(rest) | named))
                    score = (overlap, progress is not None)
                    if overlap and (best is None or score > best[0]):
                        best = (score, objective)
        return self._objective_command(best[1], command.text) if best else None

    def _objective_names(self, objective: Objective) -> list[str]:
        pack, target = self.pack, objective.target
        pools: dict[str, Mapping[str, Npc | Item | Enemy]] = {
            "talk": pack.npcs,
            "obtain": pack.items,
            "use": pack.items,
            "give": pack.items,
            "defeat": pack.enemies,
        }
        names: list[str] = []
        if objective.kind == "visit":  # a place has one name
            names += [pack.nodes[target].name] if target in pack.nodes else []
        elif (thing := pools[objective.kind].get(target)) is not None:
            names += thing.names
        if objective.at_node:
            names.append(pack.nodes[objective.at_node].name)
        if objective.to_npc:
            names += pack.npcs[objective.to_npc].names
        return names

    def _objective_command(self, objective: Objective, text: str) -> Command | None:
        pack, target = self.pack, objective.target
        if objective.kind == "visit":
            return Command("go", target=pack.nodes[target].name, text=text)
        if objective.kind == "talk":
            return Command("talk", obj=pack.npcs[target].name, text=text)
        if objective.kind == "obtain":
            return Command("take", target=pack.items[target].name, text=text)
        if objective.kind == "defeat":
            return Command("attack", target=pack.enemies[target].name, text=text)
        if objective.kind == "use":
            return Command("use", target=pack.items[target].name, text=text)
        if objective.kind == "give" and objective.to_npc:
            return Command("give", target=pack.items[target].name, obj=pack.npcs[objective.to_npc].name, text=text)
        return None

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
        if command.verb == "defend":
            effects["combat_action"] = "defend"
            return f"You brace yourself against {foe}."
        if command.verb in ("look", "examine", "status", "inventory", "quests"):
            return f"{self.pack.enemies[state.combat.enemy_id].encounter} You are locked in a fight with {foe}."
        return f"There is no time for that: you are fighting {foe}. Attack, defend, flee, or use an item."

    def _do_go(
        self, command: Command, state: GameState, effects: dict[str, Any], notes: list[str], bundle: PromptBundle
    ) -> str:
        exits = self.pack.nodes[state.node].exits
        node_id = self._destination(command.target, state)
        if node_id is None:
            if self._addressee(command.target, state) and command.target:  # "find hal" where Hal is
                return self._do_talk(
                    Command("talk", obj=command.target, text=command.text), state, effects, notes, bundle
                )
            return f"You cannot go '{command.target}' from here. Exits lead {', '.join(exits)}."
        effects["move_to"] = node_id
        here = self.pack.nodes[state.node]
        for direction, lock in here.locked_exits.items():
            if here.exits[direction] == node_id and not holds(lock.condition, state):
                return lock.message  # the rules will refuse the move too
        node = self.pack.nodes[node_id]
        return f"You make your way to {node.name}. {node_description(state, self.pack, node_id)}"

    def _do_look(self, command: Command, state: GameState, *_: Any) -> str:
        return node_text(state, self.pack)

    def _do_examine(
        self, command: Command, state: GameState, effects: dict[str, Any], notes: list[str], bundle: PromptBundle
    ) -> str:
        pack, target = self.pack, command.target
        if target.lower() in ("me", "myself", "yourself", "self"):  # the player looks themselves over
            return f"You look yourself over. {status_text(state, pack)}"
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
        npc_id = self._addressee(command.obj, state)
        if npc_id is None:
            enemy = self._enemy_here(command.obj, state)
            if enemy:
                return self._parley(enemy, state)
            other = best_match(command.obj, self._npc_names(self.pack.npcs)) if command.obj else None
            if other:
                effects["talk_to"] = other  # the rules will say they are not here
                return f"You call out for {self.pack.npcs[other].name}, but no one answers."
            if not command.obj and here:
                return f"Whom do you mean? Here: {', '.join(self.pack.npcs[n].name for n in here)}."
            return "There is no one here by that name." if command.obj else "There is no one here to talk to."
        npc = self.pack.npcs[npc_id]
        effects["talk_to"] = npc_id
        if command.topic:
            return self._reply(npc_id, command.topic, state, notes, bundle, asked=False)
        greeting, topics = self._mood(npc_id, state)
        return (
            f'{npc.name}: "{greeting}" (You could ask about: {", ".join(sorted(topics)) or "nothing in particular"}.)'
        )

    def _parley(self, enemy_id: str, state: GameState) -> str:
        """Words to an enemy: it answers with its challenge; the story's choices here are what words can do."""
        options = [c.name[:1].lower() + c.name[1:] for c in self.pack.story.choices if holds(c.condition, state)]
        offer = f" (You could {'; '.join(options)} - or fight.)" if options else " It is in no mood to talk."
        return self.pack.enemies[enemy_id].encounter + offer

    def _reply(
        self, npc_id: str, topic: str, state: GameState, notes: list[str], bundle: PromptBundle, *, asked: bool
    ) -> str:
        """What an NPC says when asked about ``topic`` (or asked ``topic``, a question)."""
        npc = self.pack.npcs[npc_id]
        _, obj, possessive = pronouns(npc)
        said = self._topic(npc_id, topic, state)
        if said:
            notes.append(f"{npc.name} said: {said}" if asked else f"{npc.name} said about {topic}: {said}")
            return f'{npc.name} answers: "{said}"' if asked else f'{npc.name}: "{said}"'
        lowered = topic.lower().strip()
        if _ABOUT_SELF.search(lowered):
            role = npc.role[:1].lower() + npc.role[1:] if npc.role[1:2].islower() else npc.role
            said = f"I am {npc.name}, {role}."
            notes.append(f"{npc.name} said: {said}")
            return f'{npc.name}: "{said}"'
        if _ABOUT_PLAYER.search(lowered):
            return self._about_player(npc_id, state, bundle)
        _, topics = self._mood(npc_id, state)
        lore = lore_reply(self.pack, npc_id, topic, topics)
        if lore:
            notes.append(f"{npc.name} said about {topic}: {lore}")
            return f'{npc.name} answers: "{lore}"' if asked else f'{npc.name}: "{lore}"'
        known = ", ".join(sorted(topics)) or "nothing in particular"
        if asked:
            return (
                f"{npc.name} {_agree(npc.name, 'look')} at you for a long moment and {_agree(npc.name, 'give')} "
                f"no answer to that. (You could ask {obj} about: {known}.)"
            )
        return f'{npc.name} {_agree(npc.name, "shake")} {possessive} head. "I know nothing about {to_you(topic)}."'

    def _about_player(self, npc_id: str, state: GameState, bundle: PromptBundle) -> str:
        """What an NPC knows of the player: what memory holds the player said of themselves, and how they feel."""
        npc = self.pack.npcs[npc_id]
        subject, _, _ = pronouns(npc)
        facts = [
            second_person(PLAYER_TEMPLATES[label].format(value))
            for label, value in self.recollection.player_facts(bundle)
        ]
        known = f"{'. '.join(facts)}. That much I know." if facts else "I know little about you yet."
        affinity = state.affinity.get(npc_id, npc.initial_affinity)
        mood = "friendly" if affinity >= 30 else "warm" if affinity >= 10 else "wary" if affinity < 0 else "neutral"
        feeling = f"{_cap(subject)} {_agree(subject, 'seem')} {mood} toward you."
        return f'{npc.name} {_agree(npc.name, "look")} you over. "{known}" {feeling}'

    def _mood(self, npc_id: str, state: GameState) -> tuple[str, dict[str, str]]:
        """The NPC's greeting and topics now: later moods override earlier ones."""
        return npc_now(self.pack.npcs[npc_id], state)

    def _topic(self, npc_id: str, topic: str, state: GameState) -> str | None:
        _, topics = self._mood(npc_id, state)
        key = self._topic_key(self.pack.npcs[npc_id], list(topics), topic)
        return topics[key] if key else None

    def _topic_key(self, npc: Npc, topics: list[str], text: str) -> str | None:
        """Which of ``topics`` ``text`` is about.

        A topic or one of its ``topic_aliases`` whose words all occur (the most
        words wins); an alias of stop words only ("me", "who am i") as a whole
        phrase; a character named by another name stands for their topic ("the
        shadow lord" finds "silas"); else the topic sharing the most words.
        """
        lowered = " ".join(text.lower().split()).strip(" ?!.")
        bare = re.sub(r"^(?:about|of|the|a|an)\s+", "", lowered)
        words = _words(lowered)
        others = mentions(lowered, self._npc_names(n for n in self.pack.npcs if n != npc.id))[0]
        also = _words(" ".join(name for other in others for name in self.pack.npcs[other].names))
        best: tuple[int, str] | None = None
        for key in topics:
            for phrase in [key, *npc.topic_aliases.get(key, [])]:
                needed = _words(phrase)
                phrase_l = phrase.lower()
                if needed:
                    hit = needed <= words or needed <= also
                elif " " in phrase_l:
                    hit = re.search(rf"(?<![\w']){re.escape(phrase_l)}(?![\w'])", lowered) is not None
                else:
                    hit = bare == phrase_l
                score = len(needed) or len(phrase_l.split())
                if hit and (best is None or score > best[0]):
                    best = (score, key)
        if best:
            return best[1]
        if PLAYER.search(lowered) and not words - {"player"}:
            return None  # "me", "my name": about the player, not a topic that shares no word
        return best_match(lowered, [(k, [k]) for k in topics])

    def _do_say(
        self, command: Command, state: GameState, effects: dict[str, Any], notes: list[str], bundle: PromptBundle
    ) -> str:
        spoken = command.target or re.sub(r"^(say|shout|whisper|tell)\s+(to\s+)?", "", command.text, flags=re.I)
        spoken = spoken.strip(" \"'")
        notes.append(f"The player said: {spoken}")
        npc_id = self._addressee(command.obj, state)
        if npc_id:
            effects["talk_to"] = npc_id
            npc = self.pack.npcs[npc_id]
            subject = pronouns(npc)[0]
            listens = f"{npc.name} {_agree(npc.name, 'listen')}; {subject} will remember it."
            if re.match(r"^about\s", spoken, re.I):
                return f"You tell {npc.name} {to_you(spoken)}. {listens}"
            return f'You tell {npc.name}: "{sentence(spoken)}" {listens}'
        return f'You say aloud: "{sentence(spoken)}" The words hang in the air.'

    def _do_ask(
        self, command: Command, state: GameState, effects: dict[str, Any], notes: list[str], bundle: PromptBundle
    ) -> str:
        question = command.topic
        if re.search(r"\bwhere am i\b", question):
            return node_text(state, self.pack)
        told = _TOLD_ME.search(question)
        speaker = best_match(told.group("who"), self._npc_names(self.pack.npcs)) if told else None
        if speaker is not None:
            return self._what_they_said(speaker, bundle)
        here = npcs_at(self.pack, state.node)
        if _MY_NAME.search(question) or (_ABOUT_PLAYER.search(question) and not _YOU.search(question)):
            mine = self._about_myself(question, here, state, effects, bundle)
            if mine:
                return mine
        if here and _YOU.search(question):  # asked of someone: the person here answers, not your memory
            npc_id = self._asked(question, here, state)
            effects["talk_to"] = npc_id
            about = re.search(r"\babout\s+(?P<x>.+)$", question)
            return self._reply(npc_id, about.group("x") if about else question, state, notes, bundle, asked=True)
        for npc_id in here:
            said = (
                self._topic(npc_id, question, state)
                if not PLAYER.search(question)
                else self._alias_topic(npc_id, question, state)
            )
            if said:
                effects["talk_to"] = npc_id
                npc = self.pack.npcs[npc_id]
                notes.append(f"{npc.name} said: {said}")
                return f'{npc.name} answers: "{said}"'
        answer = self.recollection.answer(question, bundle)
        if answer:
            return answer
        return "You search your memory, but nothing you know answers that."

    def _what_they_said(self, npc_id: str, bundle: PromptBundle) -> str:
        """What a person told the player, in their words, from the memory the prompt holds."""
        name = self.pack.npcs[npc_id].name
        quotes = self.recollection.said_by(npc_id, bundle)[:2]
        if quotes:
            told = "; ".join(f'{f"about {q.topic}, " if q.topic else ""}"{q.words}"' for q in quotes)
            return f"You recall what {name} told you: {told}"
        return f"You cannot recall {name} telling you anything."

    def _about_myself(
        self, question: str, here: list[str], state: GameState, effects: dict[str, Any], bundle: PromptBundle
    ) -> str | None:
        """ "What is my name?", "who am I?": what the player said of themselves (never someone else's sketch);
        without a name in the Story Bible, someone here who has words for it ("who am I" to the Voice), then a
        turn where the player gave a name, else that it is not known."""
        facts = dict(self.recollection.player_facts(bundle))
        asks_name = _MY_NAME.search(question) is not None
        if "name" in facts:
            if asks_name:
                return f"You recall: Your name is {facts['name']}."
            more = [sentence(second_person(PLAYER_TEMPLATES[k].format(v))) for k, v in facts.items() if k != "name"]
            return " ".join([f"You recall: You are {facts['name']}.", *more])
        for npc_id in here:
            said = self._alias_topic(npc_id, question, state)
            if said:
                effects["talk_to"] = npc_id
                return f'{self.pack.npcs[npc_id].name} answers: "{said}"'
        given = self.recollection.answer("what is my name?", bundle, must_cue=True)  # "my name is Kael", said
        if given:
            return given
        return "You have not told anyone your name yet." if asks_name else None

    def _alias_topic(self, npc_id: str, question: str, state: GameState) -> str | None:
        """A topic a question about the player names by a phrase of the content ("who am i"), not by a shared word."""
        npc = self.pack.npcs[npc_id]
        _, topics = self._mood(npc_id, state)
        lowered = " ".join(question.lower().split()).strip(" ?!.")
        for key in topics:
            for phrase in npc.topic_aliases.get(key, []):
                if " " in phrase and not _words(phrase) and re.search(rf"\b{re.escape(phrase.lower())}\b", lowered):
                    return topics[key]
        return None

    def _asked(self, question: str, here: list[str], state: GameState) -> str:
        """Who of those here a question in the second person is for: the one named, one who knows, else the first."""
        named = [n for n in mentions(question, self._npc_names(here))[0] if n in here]
        if named:
            return named[0]
        knows = [n for n in here if self._topic(n, question, state)]
        return (knows or here)[0]

    # --------------------------------------------------------------- things
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

    def _do_use(
        self, command: Command, state: GameState, effects: dict[str, Any], notes: list[str], bundle: PromptBundle
    ) -> str:
        item = best_match(command.target, self._item_names(state.inventory))
        if item is None:
            here = best_match(command.target, self._item_names(items_at(state, self.pack, state.node)))
            if here:
                return f"You would have to pick up the {self.pack.items[here].name} first."
            feature = self._feature(command, state)
            return feature or f"You have no {command.target}."
        effects["use_item"] = item
        return f"You use the {self.pack.items[item].name}."

    def _feature(self, command: Command, state: GameState) -> str | None:
        """Using what is part of the place ("drink from the spring"): the place, or who lives by it, answers."""
        node = self.pack.nodes[state.node]
        said = None
        for npc_id in npcs_at(self.pack, state.node):
            said = said or ((npc_id, s) if (s := self._topic(npc_id, command.target, state)) else None)
        place = best_match(command.target, self._node_names([node.id]))
        if said is None and place is None:
            return None
        action = " ".join(command.text.strip().rstrip(".!?").split())
        told = f"You {action[:1].lower() + action[1:]}."
        if said:
            return f'{told} {self.pack.npcs[said[0]].name}: "{said[1]}"'
        return f"{told} {node_description(state, self.pack, node.id)}"

    def _do_give(self, command: Command, state: GameState, effects: dict[str, Any], *_: Any) -> str:
        item = best_match(command.target, self._item_names(state.inventory))
        npc = self._addressee(command.obj, state) if command.obj in PRONOUNS else None
        npc = npc or best_match(command.obj, self._npc_names(self.pack.npcs))
        if item is None:
            return f"You have no {command.target} to give."
        if npc is None:
            return f"There is no '{command.obj}' to give it to."
        effects["give_item"] = {"item": item, "to": npc}
        return f"You offer the {self.pack.items[item].name} to {self.pack.npcs[npc].name}."

    def _do_attack(self, command: Command, state: GameState, effects: dict[str, Any], *_: Any) -> str:
        here = enemies_at(state, self.pack, state.node)
        enemy = self._enemy_here(command.target, state) if command.target else (here[0] if here else None)
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
        text = command.text.strip().rstrip(".!")
        if _HEAL_ME.match(text):  # "heal me": the player tends to themselves with what they carry
            healing = [i for i in state.inventory if (use := self.pack.items[i].use) and use.heal]
            if not healing:
                return "You have nothing to heal yourself with."
            effects["use_item"] = healing[0]
            return f"You tend to yourself with the {self.pack.items[healing[0]].name}."
        return f"You try to {yourself(text)}, but nothing much comes of it."

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
        """A third-person digest of the turns (``game/llm/digest.py``): events, who said what, where."""
        return digest(text, max_words)
