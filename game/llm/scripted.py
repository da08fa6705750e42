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

How it reads a command is ``scripted_reading.py``'s; talk, say and ask are
``scripted_talk.py``'s; the ways it words each kind of turn (several, chosen by
the turn and the place without repeating a recent opening; a retry takes
another) are ``tellings.py``'s; this module plays the turn and the other verbs. It
also provides the summary call memory uses: a digest of the turns
(``digest.py``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from game.language.lexicon import DECISIONS, is_verb_phrase, lemma
from game.language.parser import DIRECTIONS, PRONOUNS, Command
from game.language.reading import read
from game.llm.base import NarratorBase, PromptBundle
from game.llm.digest import digest
from game.llm.recollection import yourself
from game.llm.scripted_talk import Conversation
from game.llm.scripted_trade import gold_given, trade_verbs, with_wares
from game.llm.tellings import Voice, tell
from game.text import best_match, mentions
from game.world.choices import suggested, ways_out
from game.world.conditions import enemies_at, holds, items_at, npcs_at, weapon_in_hand
from game.world.content import ContentPack, Feature
from game.world.describe import (
    changes_here,
    feature_text,
    features_here,
    inventory_text,
    node_description,
    node_text,
    quests_text,
    revisit_text,
    scene_sentences,
    status_text,
    the,
    told_before,
    way_text,
)
from game.world.state import GameState

_ALL = re.compile(r"^(?:all|everything|it\s+all|all\s+of\s+it|every\s*thing\s+here|everything\s+here|all\s+items)$")
"""What "take ..." says to take every thing lying here."""

# Verbs whose text may express a story choice ("negotiate", "play the requiem",
# "say I accept the pact"); questions and talk about a choice never make it.
CHOICE_VERBS = frozenset({"other", "use", "say"})
LATELY = 3
"""A place named in one of this many last tellings is told again in a line (``game.engine.voice.RECENT``: a
telling that repeats one of these is a repetition)."""
_HEAL_ME = re.compile(r"^(?:heal|cure|patch up|bandage|treat)\s+(?:me|myself|my wounds)$", re.I)


VerbHandler = Callable[[Command, GameState, dict[str, Any], list[str], PromptBundle], str]
"""A verb's turn: (command, state, effects to propose, memory notes, bundle) -> the narration."""


class ScriptedNarrator(Conversation, NarratorBase):
    """Deterministic narrator over one content pack."""

    name = "scripted"

    def __init__(self, pack: ContentPack) -> None:
        super().__init__(pack)
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
            "defend": self._do_defend,
            "rest": self._do_rest,
            "inventory": self._do_inventory,
            "quests": self._do_quests,
            "status": self._do_status,
            "other": self._do_other,
            **trade_verbs(pack),
        }
        """Each verb's handler (a test checks every verb of ``game.language.verbs`` but the meta ones has one)."""
        self.told: list[str] = []
        """This turn's last tellings, oldest first: the window's and those the budget cut from it."""

    # ---------------------------------------------------------------- entry
    def narrate(self, bundle: PromptBundle) -> str:
        turn = self.turn(bundle)
        return json.dumps(turn, ensure_ascii=False)

    def turn(self, bundle: PromptBundle) -> dict[str, Any]:
        state, command = bundle.state, bundle.command
        cut = [c.text for c in bundle.cut if c.block == "window" and c.source == "assistant"]  # newest first
        told = cut[::-1] + [m["content"] for m in bundle.messages if m.get("role") == "assistant"]  # oldest first
        self.voice = Voice.of(state.turn, state.node, bundle.attempt, told)  # a retry words it another way
        self.told = told  # the last tellings, those the budget cut included: pacing is not reset by a cut
        self.varied = False
        effects: dict[str, Any] = {}
        notes: list[str] = []
        act = bundle.acts[0] if bundle.acts else None
        if act is not None and act.verb == "choice":  # the engine read a story choice: it is made
            choice: str | None = act.target
        elif bundle.asks in ("", "open") and command.verb in CHOICE_VERBS:  # words the engine left to the narrator
            choice = self._match_choice(command, state)
        else:
            choice = None
        if choice:
            effects["choice"] = choice
            narration = self.pack.choice(choice).description  # type: ignore[union-attr]
        elif state.combat:
            narration = self._combat(command, state, effects)
        else:
            command = self._understood(command, state)
            if command.verb in ("take", "drop", "use", "give", "examine") and command.target in PRONOUNS:
                narration = f"Which one do you mean by '{command.target}'? Name it: {command.verb} the ..."
            else:
                handler = self.verbs.get(command.verb, self._do_other)
                narration = handler(command, state, effects, notes, bundle)
        refused = [r for r in bundle.refused if r.effect in effects]
        if refused:  # asked again: its prose was written before the rules ran; now it tells the refusal
            effects = {k: v for k, v in effects.items() if k not in {r.effect for r in refused}}
            narration = " ".join(dict.fromkeys(r.told for r in refused if r.told)) or "Nothing comes of it."
        if bundle.attempt and not self.varied:  # told in the story's own words only: framed anew
            narration = tell("retold", self.voice, text=narration)
        return {
            "narration": narration,
            "choices": self._choices(state, effects),
            "effects": effects,
            "memory_notes": notes,
        }

    # --------------------------------------------------------------- verbs
    def _combat(self, command: Command, state: GameState, effects: dict[str, Any]) -> str:
        assert state.combat is not None
        foe = the(self.pack.enemies[state.combat.enemy_id].name)
        if command.verb in ("flee", "go"):
            effects["combat_action"] = "flee"
            return self._tell("break_off", foe=foe)
        if command.verb == "use":
            item = best_match(command.target, self._item_names(state.inventory))
            if item is None:
                return f"You fumble for something you do not have while {foe} circles you."
            effects["use_item"] = item
            effects["combat_action"] = "defend"
            return self._tell("reach_in_fight", foe=foe, item=self.pack.items[item].name)
        if command.verb == "attack":
            effects["combat_action"] = "attack"
            return self._tell("strike", foe=foe)
        if command.verb == "defend":
            effects["combat_action"] = "defend"
            return self._tell("guard", foe=foe)
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
            return self._tell("no_way", target=command.target, exits=", ".join(exits))
        if node_id == state.node:
            already = self._tell("already_here", place=self.pack.nodes[node_id].name)
            return f"{already} {node_text(state, self.pack, full=False)}"
        effects["move_to"] = node_id
        here = self.pack.nodes[state.node]
        for direction, lock in here.locked_exits.items():
            if here.exits[direction] == node_id and not holds(lock.condition, state):
                return lock.message  # the rules will refuse the move too
        node = self.pack.nodes[node_id]
        if state.has_flag(f"visited:{node_id}"):  # told before: briefly (issue 35); ``look`` tells it in full
            back = self._tell("return", place=node.name)
            said = self.told
            if any(node.name in told for told in said[-LATELY:]):  # pacing between places: what changed, if anything
                change = changes_here(state, self.pack, node_id)
                return back if not change or told_before(change, said) else f"{back} {change}"
            return f"{back} {revisit_text(state, self.pack, node_id, said)}"  # a change told lately is not retold
        arrived = f"{self._tell('arrive', place=node.name)} {node_description(state, self.pack, node_id)}"
        return with_wares(arrived, state, self.pack, node_id)

    def _do_look(self, command: Command, state: GameState, *_: Any) -> str:
        return with_wares(node_text(state, self.pack), state, self.pack)

    def _do_examine(
        self, command: Command, state: GameState, effects: dict[str, Any], notes: list[str], bundle: PromptBundle
    ) -> str:
        pack, target = self.pack, command.target
        if target.lower() in ("me", "myself", "yourself", "self"):  # the player looks themselves over
            return f"You look yourself over. {status_text(state, pack)}"
        if target in DIRECTIONS.values():  # "look north" (the parser's glance): where that way leads
            return way_text(state, pack, target)
        carried = [*state.inventory, *items_at(state, pack, state.node)]
        if named := self._feature_named(target, state, carried):  # "x spring": the spring, not the Vial of its water
            return feature_text(named, state)
        item = best_match(target, self._item_names(carried))
        if item:
            return f"{pack.items[item].name}: {pack.items[item].description}"
        npc = best_match(target, self._npc_names(npcs_at(pack, state.node)))
        if npc:
            n = pack.npcs[npc]
            return f"{n.name}, {n.role}. {n.trait}"
        enemy = best_match(target, self._enemy_names(enemies_at(state, pack, state.node)))
        if enemy:
            return pack.enemies[enemy].encounter
        feature = self._feature_here(target, state)
        if feature:
            return feature_text(feature, state)
        seen = scene_sentences(state, pack, target)  # what the place's text says of it, as things stand
        if seen:
            return " ".join(seen)
        return f"You study the {target} but find nothing remarkable. {node_text(state, pack, full=False)}"

    def _feature_named(self, target: str, state: GameState, items: list[str]) -> Feature | None:
        """The feature here that ``target`` names by its own name, before any of ``items`` it names only in part."""
        features = {f.id: f for f in features_here(state, self.pack)}
        pool = [*self._item_names(items), *[(f.id, f.names) for f in features.values()]]
        named = mentions(target, pool)[0] if target else []
        return features[named[0]] if len(named) == 1 and named[0] in features else None

    def _feature_here(self, target: str, state: GameState) -> Feature | None:
        """The feature of this place (as it is now) that ``target`` names."""
        features = {f.id: f for f in features_here(state, self.pack)}
        found = best_match(target, [(f.id, f.names) for f in features.values()]) if target else None
        return features[found] if found else None

    # --------------------------------------------------------------- things
    def _do_take(self, command: Command, state: GameState, effects: dict[str, Any], *_: Any) -> str:
        here = items_at(state, self.pack, state.node)
        if _ALL.match(command.target) and len(set(here)) != 1:  # "take everything": each thing, through the rules
            if not here:
                return "There is nothing here to take."
            effects["items_gained"] = list(dict.fromkeys(here))
            return "You gather up what lies here."  # the rules' one line names it all (``interaction.take_all``)
        item = here[0] if _ALL.match(command.target) else best_match(command.target, self._item_names(here))
        if item is None:
            feature = self._feature_here(command.target, state)
            place = self.pack.nodes[state.node].name
            if feature:
                return feature.refusal or f"{the(feature.name, capital=True)} is part of {place}; it stays put."
            if scene_sentences(state, self.pack, command.target):  # the antlers on the eaves: scenery
                return self._tell("scenery", place=place)
            elsewhere = best_match(command.target, self._item_names(self.pack.items))
            if elsewhere:
                effects["items_gained"] = [elsewhere]  # the rules will refuse
                return f"You reach for the {self.pack.items[elsewhere].name}..."
            return self._tell("no_such_thing", target=command.target)
        effects["items_gained"] = [item]
        found = self.pack.items[item]
        return self._tell("take", item=found.name, it="them" if found.many else "it", description=found.description)

    def _do_drop(self, command: Command, state: GameState, effects: dict[str, Any], *_: Any) -> str:
        item = best_match(command.target, self._item_names(state.inventory))
        if item is None:
            return self._tell("not_carrying", target=command.target)
        effects["items_lost"] = [item]
        return self._tell("drop", item=self.pack.items[item].name)

    def _do_use(
        self, command: Command, state: GameState, effects: dict[str, Any], notes: list[str], bundle: PromptBundle
    ) -> str:
        item = best_match(command.target, self._item_names(state.inventory))
        if self._feature_named(command.target, state, state.inventory):  # "drink from the spring", vial in hand
            item = None
        if item is None:
            here = best_match(command.target, self._item_names(items_at(state, self.pack, state.node)))
            if here:
                return f"You would have to pick up the {self.pack.items[here].name} first."
            told = self._use_feature(command, state, effects) or self._feature(command, state)
            return told or self._tell("not_carrying", target=command.target)
        effects["use_item"] = item
        return self._worn(item) or self._tell("use", item=self.pack.items[item].name)

    def _worn(self, item_id: str) -> str | None:
        """Wearing armour or readying a weapon ("wear the jacket"): what it does for the player, or None."""
        item = self.pack.items[item_id]
        if item.use is None and item.kind == "armor":
            bonus = item.defense_bonus
            return f"You put on the {item.name}. Worn, it takes the edge off every blow (+{bonus} defence)."
        if item.use is None and item.kind == "weapon":
            return f"You ready the {item.name} (+{item.attack_bonus} attack). It goes with you into every fight."
        return None

    def _use_feature(self, command: Command, state: GameState, effects: dict[str, Any]) -> str | None:
        """A use of a feature here that the content writes ("drink from the spring" while it is sick), or None."""
        feature = self._feature_here(command.target, state)
        said = set(command.text.lower().replace(",", " ").split())
        for use in feature.uses if feature else []:
            if holds(use.when, state) and said & {w.lower() for w in use.words}:
                if use.hp_delta:
                    effects["hp_delta"] = use.hp_delta
                return use.text
        return None

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
        if (paid := gold_given(self.pack, command, state, effects)) is not None:  # "give 5 gold to garrick"
            return paid
        item = best_match(command.target, self._item_names(state.inventory))
        npc = self._addressee(command.obj, state) if command.obj in PRONOUNS else None
        npc = npc or best_match(command.obj, self._npc_names(self.pack.npcs))
        if item is None:
            return f"You have no {command.target} to give."
        if npc is None:
            return f"There is no '{command.obj}' to give it to."
        effects["give_item"] = {"item": item, "to": npc}
        return self._tell("give", item=self.pack.items[item].name, npc=self.pack.npcs[npc].name)

    def _do_attack(self, command: Command, state: GameState, effects: dict[str, Any], *_: Any) -> str:
        here = enemies_at(state, self.pack, state.node)
        enemy = self._enemy_here(command.target, state) if command.target else (here[0] if here else None)
        if enemy is None:
            named = best_match(command.target, self._enemy_names(self.pack.enemies)) if command.target else None
            if named:
                effects["start_combat"] = named  # the rules will refuse
                return f"You look around for {the(self.pack.enemies[named].name)}..."
            return self._tell("nothing_to_fight")
        effects["start_combat"] = enemy
        effects["combat_action"] = "attack"
        foe = the(self.pack.enemies[enemy].name)
        weapon = weapon_in_hand(state, self.pack)
        if weapon is None:  # nothing to draw
            return self._tell("charge_bare", foe=foe)
        return self._tell("charge", foe=foe, weapon=self.pack.items[weapon].name)

    def _do_flee(self, command: Command, state: GameState, *_: Any) -> str:
        here = enemies_at(state, self.pack, state.node)
        if here:  # no fight yet: fleeing is leaving, which way is the player's to say
            ways = ", ".join(ways_out(state, self.pack))
            return f"You back away from {the(self.pack.enemies[here[0]].name)}. Ways out: {ways}."
        return "There is nothing to flee from."

    def _do_defend(self, command: Command, state: GameState, *_: Any) -> str:
        here = enemies_at(state, self.pack, state.node)
        if here:
            return f"You raise your guard and keep {the(self.pack.enemies[here[0]].name)} in sight."
        return "You raise your guard, but nothing here threatens you."

    def _do_rest(self, command: Command, state: GameState, effects: dict[str, Any], *_: Any) -> str:
        if not self.pack.nodes[state.node].safe:
            return self._tell("no_rest")
        effects["rest"] = True
        return self._tell("rest")

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
        reading = read(command.text)
        if reading.clauses and not reading.binding():  # words that ask for no act: never told as tried
            if any(c.negated for c in reading.clauses):
                return self._tell("held_back")
            if all(c.mood in ("wish", "hypothetical", "report") for c in reading.clauses):
                return self._tell("musing")
        said = reading.clauses[0].core if len(reading.clauses) == 1 and reading.clauses[0].core else text
        head = lemma(said.split()[0]) if said.split() else ""
        if head in DECISIONS:  # "I accept" with nothing offered here: a story choice is made only where it can be
            return f"There is nothing here to {head}."
        if not is_verb_phrase(said):  # "garrick sent me": no act to tell back, and no pronouns to turn
            return f'The story has no act for "{text}". Try a verb first: look, go north, take, talk to, or help.'
        return self._tell("fruitless", action=yourself(said))  # the verb phrase: "munch on", not "you munch on"

    # -------------------------------------------------------------- choices
    def _choices(self, state: GameState, effects: dict[str, Any]) -> list[str]:
        """What the player could do next, read from the state as this turn's move or fight will leave it (the
        engine keeps those still possible after the rules ran: ``game.world.choices.choices_after``)."""
        if state.combat or effects.get("start_combat"):
            healing = [i for i in state.inventory if (use := self.pack.items[i].use) and use.heal]
            return ["attack", "flee", *[f"use {self.pack.items[i].name}" for i in healing[:1]]]
        moving = effects.get("move_to")
        if isinstance(moving, str) and moving in self.pack.nodes and moving != state.node:
            state = state.model_copy(update={"node": moving, "flags": [*state.flags, f"visited:{moving}"]})
        return suggested(state, self.pack)

    # ------------------------------------------------------------ summaries
    def summarize(self, text: str, max_words: int = 60) -> str:
        """A third-person digest of the turns (``game/llm/digest.py``): events, who said what, where."""
        return digest(text, max_words)
