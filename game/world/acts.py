"""An act the player asks for, resolved to the story's ids, and the scene a line's acts are resolved in.

An :class:`Act` is a verb of the game's closed set (go, take, drop, use, give, buy, sell, talk, attack, flee,
defend, rest, a story choice) with the ids it acts on; it says itself in the story's names (what the narrator's
prompt and a question back read), as the effects that carry it out (what the rules apply), and as the parser's
command (what the scripted narrator plays). A :class:`Scene` is the state as a line's earlier acts leave it, for
the names of the next clause ("take the herb and eat it" eats what it took).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from game.language.parser import Command
from game.world.conditions import enemies_at, items_at, npcs_at
from game.world.content import ContentPack
from game.world.describe import the
from game.world.rules.trade import asking_price
from game.world.state import GameState


@dataclass(frozen=True)
class Act:
    """One act the player asks for: a verb of the game's closed set and the ids it acts on."""

    verb: str
    """go, take, drop, use, give, buy, sell, talk, attack, flee, defend, rest or choice."""
    target: str = ""
    """The id acted on: a node, an item, a person, an enemy or a story choice."""
    to: str = ""
    """The second id: whom a thing is given or sold to, whom it is bought from."""
    topic: str = ""
    """For talk: what the player asks or says (empty: just a word with them)."""
    guessed: bool = False
    """A name found by a misspelling forgiven or a description, not said."""
    step: int = 0
    """Which step of the line it is: acts of one step are one turn ("take everything"), each step its own."""

    def describe(self, pack: ContentPack) -> str:
        """The act in the story's names: "take the Healing Herb", "give the Hunter's Letter to Old Garrick"."""
        names = {**{i: it.name for i, it in pack.items.items()}, **{e: en.name for e, en in pack.enemies.items()}}
        thing = the(names.get(self.target, self.target))
        person = pack.npcs[self.to].name if self.to in pack.npcs else self.to
        if self.verb == "go":
            return f"go to {the(pack.nodes[self.target].name)}" if self.target in pack.nodes else "go"
        if self.verb == "talk":
            return f"talk to {pack.npcs[self.target].name}" if self.target in pack.npcs else "talk"
        if self.verb == "choice":
            choice = pack.choice(self.target)
            return choice.name[:1].lower() + choice.name[1:] if choice else self.target
        if self.verb in ("give", "sell"):
            return f"{self.verb} {thing} to {person}"
        if self.verb == "buy":
            return f"buy {thing} from {person}"
        if self.verb in ("flee", "defend", "rest"):
            return self.verb
        return f"{self.verb} {thing}"

    def effects(self, state: GameState) -> dict[str, Any]:
        """The effects that carry the act out (what a narrator would propose for it)."""
        verb, target = self.verb, self.target
        if verb == "go":
            return {"move_to": target}
        if verb == "take":
            return {"items_gained": [target]}
        if verb == "drop":
            return {"items_lost": [target]}
        if verb == "use":
            return {"use_item": target}
        if verb == "give":
            return {"give_item": {"item": target, "to": self.to}}
        if verb in ("buy", "sell"):
            return {"trade": {"deal": verb, "item": target, "npc": self.to}}
        if verb == "talk":
            return {"talk_to": target}
        if verb == "attack":
            # a fight not yet begun is begun with the blow asked for, as the built-in narrator plays it (issue 42:
            # a model that proposed the act's effects alone lost a turn to every fight it opened)
            return {"combat_action": "attack"} if state.combat else {"start_combat": target, "combat_action": "attack"}
        if verb in ("flee", "defend"):
            return {"combat_action": verb}
        if verb == "rest":
            return {"rest": True}
        return {"choice": target}

    def command(self, pack: ContentPack, text: str = "") -> Command:
        """The parser's command for the act, in the story's names (what the scripted narrator plays)."""
        names = {**{i: it.name for i, it in pack.items.items()}, **{e: en.name for e, en in pack.enemies.items()}}
        person = pack.npcs[self.to].name if self.to in pack.npcs else ""
        if self.verb == "go":
            return Command("go", target=pack.nodes[self.target].name, text=text)
        if self.verb == "talk":
            return Command("talk", obj=pack.npcs[self.target].name, topic=self.topic, text=text)
        if self.verb in ("give", "buy", "sell"):
            return Command(self.verb, target=names.get(self.target, self.target), obj=person, text=text)
        if self.verb in ("flee", "defend", "rest"):
            return Command(self.verb, text=text)
        return Command(self.verb, target=names.get(self.target, self.target), text=text)


@dataclass(frozen=True)
class Scene:
    """The world a line's clauses are resolved in: the state, changed by the line's earlier acts."""

    state: GameState
    pack: ContentPack
    carried: tuple[str, ...]
    lying: tuple[str, ...]
    node: str
    needed: frozenset[str] = field(default_factory=frozenset)
    """Items a quest or a story choice still needs: giving or dropping one is consequential."""

    @classmethod
    def of(cls, state: GameState, pack: ContentPack) -> Scene:
        needed = {o.target for q in pack.all_quests() for o in q.objectives if o.kind in ("give", "use")}
        needed |= {i for c in pack.story.choices for i in c.condition.has_items}
        return cls(
            state, pack, tuple(state.inventory), tuple(items_at(state, pack, state.node)), state.node, frozenset(needed)
        )

    def after(self, act: Act) -> Scene:
        """The scene once ``act`` is done, as far as the next clause's names go."""
        if act.verb in ("take", "buy"):
            carried = (*self.carried, act.target)
            return replace(self, carried=carried, lying=tuple(i for i in self.lying if i != act.target)).holding()
        if act.verb in ("drop",):
            carried = tuple(i for i in self.carried if i != act.target)
            return replace(self, carried=carried, lying=(*self.lying, act.target)).holding()
        item = self.pack.items.get(act.target)
        if act.verb in ("give", "sell") or (act.verb == "use" and item is not None and item.consumable):
            return replace(self, carried=tuple(i for i in self.carried if i != act.target)).holding()
        if act.verb == "go":
            moved = self.state.model_copy(update={"node": act.target})
            return replace(self, node=act.target, lying=tuple(items_at(moved, self.pack, act.target)), state=moved)
        return self

    def holding(self) -> Scene:
        """This scene with its state carrying what the scene carries: a later clause's conditions read it ("get
        the oil, go up, and kindle the lamp": the lamp needs the oil)."""
        return replace(self, state=self.state.model_copy(update={"inventory": list(self.carried)}))

    @property
    def people(self) -> list[str]:
        return npcs_at(self.pack, self.node)

    @property
    def enemies(self) -> list[str]:
        return enemies_at(self.state, self.pack, self.node)

    @property
    def exits(self) -> dict[str, str]:
        return dict(self.pack.nodes[self.node].exits)

    def price(self, item: str, npc: str) -> int | None:
        return asking_price(self.pack, npc, item)


@dataclass(frozen=True)
class Found:
    """What one clause resolved to (:mod:`game.world.resolve`): the acts asked, a refusal in one sentence, an offer
    to ask back, or nothing resolved (``open``: left to the narrator)."""

    acts: tuple[Act, ...] = ()
    refusal: str = ""
    refused: Act | None = None
    """The act refused, when it names something of the story (the rules say why in their words too)."""
    offer: tuple[Act, ...] = ()
    open: bool = False
    note: str = ""
    unknown: bool = False
    """The refusal is of words that name nothing of the story ("There is no man here."): perhaps a thing described."""
