"""How the scripted narrator reads a command: what the player's words name in the story.

People, items, enemies and places by their names (or, for a person here, by
a pronoun); a movement's destination; the story choice a text expresses; the
topic of an NPC a question is about; and, for words the story does not name
here ("speak the verse", "wrench the case free"), the step of a quest
objective not yet done that they describe.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from game.language.parser import DIRECTIONS, PRONOUNS, Command, clauses, verb_key
from game.llm.recollection import PLAYER
from game.llm.recollection import words as _words
from game.text import best_match, mentions
from game.world.conditions import enemies_at, holds, items_at, npcs_at
from game.world.content import ContentPack, Enemy, Item, Npc, Objective
from game.world.describe import npc_now
from game.world.state import GameState

_CONVEYANCE = re.compile(r"\b(?:elevator|lift|stairs?|staircase|stairway|ladder|escalator|ramp)\b")
_FORMS = {"he": ("him", "his"), "she": ("her", "her"), "they": ("them", "their"), "it": ("it", "its")}
_REREAD_NEVER = frozenset({"look", "inventory", "quests", "status", "rest", "flee", "help", "ask"})


def pronouns(npc: Npc) -> tuple[str, str, str]:
    """(subject, object, possessive) of an NPC, from its content ``pronouns`` ("she/her", "it/its")."""
    subject, _, second = npc.pronouns.partition("/")
    obj, possessive = _FORMS.get(subject, (second, second))
    return subject, obj, possessive


class StoryReader:
    """What a command means in one content pack (the scripted narrator reads with it)."""

    def __init__(self, pack: ContentPack) -> None:
        self.pack = pack

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
            and c.condition.at_node in (None, state.node)  # a choice is recognised only where it can be made
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
        if command.verb == "go" and DIRECTIONS.get(command.target) == command.target:
            return command  # a way given exactly ("go south" with no south here) names no objective's place
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

    # ---------------------------------------------------------------- topics
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
