"""The building blocks of content models: ids, data strings, the frozen model base and conditions.

:mod:`game.world.content` builds the pack's models from these (and re-exports them).
"""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

Stat = Literal["strength", "agility", "intelligence"]
ItemKind = Literal["weapon", "armor", "consumable", "key", "quest", "treasure"]
ITEM_KINDS: tuple[str, ...] = get_args(ItemKind)
MAX_AMOUNT = 1_000_000_000
"""Most experience or money a game holds (a whole story gives a few thousand)."""
MAX_STAT = 100_000
"""Most HP, strength, agility or intelligence (a whole story gives a few hundred). The game's state holds these
bounds (``state.py``), and a story's player starts within them (issue 43: HP and gold above them passed ``content
validate``, then ``check`` and ``run`` crashed)."""

Identifier = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$", max_length=64)]


class _DataMarker:
    """Marks a string field as data for the rules, not words a person reads (see :data:`Data`)."""


Data = Annotated[str, _DataMarker()]
"""A string that is data, not text: a flag, an id or topic keyword, a folder, a hash.

Every other ``str`` field of these models (alone, optional, or in a list or
dict) holds text the story's authors wrote, and :func:`game.world.texts.author_texts`
finds it without a list of fields; ids are :data:`Identifier`, fixed choices ``Literal``.
"""


FROZEN = ConfigDict(extra="forbid", frozen=True)
"""Every content model's configuration: frozen, and a field it does not know is an error."""


class Model(BaseModel):
    model_config = FROZEN


class Condition(Model):
    """A machine-checkable condition; every clause given must hold."""

    flags: list[Data] = []
    not_flags: list[Data] = []
    quests_completed: list[Identifier] = []
    min_stats: dict[Stat, int] = {}
    min_level: int = 0
    min_affinity: dict[Identifier, int] = {}
    at_node: Identifier | None = None
    has_items: list[Identifier] = []
    defeated: list[Identifier] = []
    hp_below_percent: int = Field(
        0, ge=0, le=100, description="Holds while HP is below this share of max HP; for words only (moods, lines)"
    )

    def describe(self) -> str:
        """Human-readable summary, used in prompts and rejection reasons."""
        parts: list[str] = []
        parts += [f"flag {f}" for f in self.flags]
        parts += [f"not {f}" for f in self.not_flags]
        parts += [f"quest {q} completed" for q in self.quests_completed]
        parts += [f"{s} >= {n}" for s, n in self.min_stats.items()]
        if self.min_level:
            parts.append(f"level >= {self.min_level}")
        parts += [f"{npc} affinity >= {n}" for npc, n in self.min_affinity.items()]
        if self.at_node:
            parts.append(f"at {self.at_node}")
        parts += [f"carrying {i}" for i in self.has_items]
        parts += [f"{e} defeated" for e in self.defeated]
        if self.hp_below_percent:
            parts.append(f"HP below {self.hp_below_percent}%")
        return ", ".join(parts) or "always"


TimeOfDay = Literal["morning", "afternoon", "evening", "night"]
"""A part of the game's day (``state.clock_minutes``): morning 06:00-12:00, afternoon to 18:00, evening to 22:00,
night to 06:00 (``game.world.lore_state.time_of_day``)."""


class LoreCondition(Condition):
    """When a lore entry may reach the prompt (``knowledge.json`` ``when``): the condition language of choices,
    exits and endings, and three clauses of its own that only lore asks about. Every clause given must hold."""

    npcs_present: list[Identifier] = Field([], description="These people are at the player's place")
    quests_active: list[Identifier] = Field([], description="These quests are under way (started, not completed)")
    time_of_day: list[TimeOfDay] = Field([], description="The game's clock is in one of these parts of the day")

    def describe(self) -> str:
        parts = [] if super().describe() == "always" else [super().describe()]
        parts += [f"{n} present" for n in self.npcs_present]
        parts += [f"quest {q} under way" for q in self.quests_active]
        if self.time_of_day:
            parts.append(" or ".join(self.time_of_day))
        return ", ".join(parts) or "always"


Share = Annotated[float, Field(gt=0, le=1)]


class Trade(Model):
    """What a person who trades sells and buys (``game.world.rules.trade``); an NPC without it does not trade.

    Prices are in the story's currency. A thing they sell costs its price here, else the item's ``value``; a thing
    they buy fetches its ``value`` times the share its id (or else its kind) is bought at, at least 1.
    """

    sells: dict[Identifier, int] = Field(
        default_factory=dict, description="item id -> its price here (0: the item's value); each may be bought again"
    )
    buys: dict[Data, Share] = Field(
        default_factory=dict,
        description="item id or item kind (treasure, weapon, armor, consumable, key, quest) -> the share of the "
        "item's value they pay (0.5: half); an item's own id wins over its kind",
    )

    @property
    def trades(self) -> bool:
        return bool(self.sells or self.buys)


class Loot(Model):
    item: Identifier
    chance: float = Field(ge=0.0, le=1.0)


class HeavyAttack(Model):
    """An enemy's strong attack, announced (``tell``) a round ahead so that defending or an item can answer it."""

    chance: float = Field(0.3, ge=0.0, le=1.0, description="Chance each round from the second (never twice running)")
    multiplier: float = Field(2.5, ge=1.0, description="Its damage, as a multiple of an ordinary hit; never dodged")
    tell: str = Field(description="What the player sees it prepare, the round before")
    text: str = Field("", description="The blow landing (optional)")


class Weakness(Model):
    item: Identifier
    damage: int = Field(ge=0, description="Damage it takes when the item breaks its heavy attack")
    text: str


class Aggression(Model):
    """An aggressive enemy: it attacks a player who stays in its place without fighting it (``rules.combat``)."""

    tell: str = Field(description="What the player sees the turn before it attacks")
    text: str = Field("", description="It attacking (optional)")
