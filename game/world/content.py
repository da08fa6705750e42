"""Content pack models and loader.

A story lives in ``content/<story_id>/`` as data files validated here with
pydantic. Every error names the file and the field (``npcs.json: [3].location:
unknown node 'forest_gate'``), so a content author can fix a pack without
reading code.

Files of a pack:

- ``story.json``: id, title, genre, intro, start node, player defaults,
  narrator persona, regions (name + ASCII banner), story choices, currency,
  help examples.
- ``map.json``: nodes with exits, NPCs, enemies, items, state-dependent text.
- ``items.json``, ``npcs.json``, ``quests.json``, ``enemies.json``,
  ``endings.json``, ``talents.json``, ``achievements.json``.
- ``knowledge.json`` (lore entries) and ``worldview.md`` (prose lore).

Conditions are machine-checkable (:class:`Condition`); every id a condition or
objective names must exist in the pack. Events the rules record as flags:
``visited:<node>``, ``talked:<npc>``, ``defeated:<enemy>``, ``used:<item>``,
``used:<item>@<node>``, ``gave:<item>:<npc>``, ``choice:<choice_id>``,
``quest_done:<quest>``, ``obtained:<item>``, ``won_fight`` (any enemy defeated).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, model_validator

from game.world.content_base import FROZEN, MAX_AMOUNT, MAX_STAT, ItemKind
from game.world.content_base import Aggression as Aggression
from game.world.content_base import Condition as Condition  # the building blocks, re-exported
from game.world.content_base import Data as Data
from game.world.content_base import HeavyAttack as HeavyAttack
from game.world.content_base import Identifier as Identifier
from game.world.content_base import Loot as Loot
from game.world.content_base import LoreCondition as LoreCondition
from game.world.content_base import Stat as Stat
from game.world.content_base import Trade as Trade
from game.world.content_base import Weakness as Weakness
from game.world.lore import Activation

AUTHOR_NOTE_CHARS = 1_000
"""The longest of the author's notes (``Story.author_note``): each is in every system prompt."""
VOICE_CHARS = 600
"""The longest example of a person's voice (``Npc.voice``), shown on each turn the player talks to them."""


class _Model(BaseModel):
    model_config = FROZEN


class _Named(_Model):
    """Something players refer to by name: its name, its aliases, its id with spaces."""

    id: Identifier
    name: str
    aliases: list[str] = []

    @property
    def names(self) -> list[str]:
        return [self.name, *self.aliases, self.id.replace("_", " ")]


class _Countable(_Named):
    """A thing whose name may name many ("Loft Rats", "Torn Nets"): the words told of it agree with its name."""

    plural: bool | None = Field(
        None, description="Its name names many ('Torn Nets': 'look them over'); unset: a last word ending in s does"
    )

    @property
    def many(self) -> bool:
        """Whether the name names many: ``plural``, else a last word ending in a single s ("Rats", not "Moss")."""
        if self.plural is not None:
            return self.plural
        last = self.name.split()[-1].lower() if self.name.split() else ""
        return last.endswith("s") and not last.endswith(("ss", "us", "is"))


class Region(_Model):
    id: Identifier
    name: str
    banner: str = Field(min_length=1, description="Short ASCII-art banner, a few lines")


class PlayerDefaults(_Model):
    name: str = "Traveller"
    hp: int = Field(100, gt=0, le=MAX_STAT)
    strength: int = Field(10, ge=0, le=MAX_STAT)
    agility: int = Field(10, ge=0, le=MAX_STAT)
    intelligence: int = Field(10, ge=0, le=MAX_STAT)
    gold: int = Field(20, ge=0, le=MAX_AMOUNT)
    inventory: list[Identifier] = []


class StoryChoice(_Model):
    """A decisive choice the player can make (sets flag ``choice:<id>``)."""

    id: Identifier
    name: str
    keywords: list[str] = Field(min_length=1, description="Words that express the choice")
    description: str
    condition: Condition = Condition()


class Story(_Model):
    id: Identifier
    title: str
    genre: str
    intro: str
    start_node: Identifier
    persona: str = Field(min_length=20, description="Narrator system prompt persona")
    player: PlayerDefaults = PlayerDefaults()
    regions: list[Region] = Field(min_length=1)
    choices: list[StoryChoice] = []
    main_quest_order: list[Identifier] = Field(min_length=1)
    currency: str = Field("gold", min_length=1, description="What the story's money is called, as in '25 gold'")
    currency_one: str | None = Field(
        None, description="One of it, as in '1 shilling'; unset: the currency, without a plural's last s"
    )
    help_examples: list[str] = Field(
        default_factory=list, description="Sample actions the help shows; empty: generic ones (game.world.describe)"
    )
    author_note: list[Annotated[str, Field(min_length=1, max_length=AUTHOR_NOTE_CHARS)]] = Field(
        default_factory=list,
        max_length=20,
        description="The author's wishes for how the story is told (style, form: 'end each reply with a weather "
        "tag'): every system prompt shows them as the author's, never as facts of the world (never canon or lore)",
    )


class ExitLock(_Model):
    """An exit that opens only when ``condition`` holds."""

    condition: Condition
    message: str = Field(min_length=5, description="What the player is told while it is locked")


class NodeVariant(_Model):
    """Text that is true of a place only while ``when`` holds and the ``items_here`` lie there."""

    when: Condition = Condition()
    items_here: list[Identifier] = Field(default_factory=list, description="Holds only while all these lie here")
    text: str = Field(min_length=1)
    replace: bool = Field(False, description="True: replaces the base description; False: follows it")


class FeatureVariant(_Model):
    """What a feature looks like while ``when`` holds (the last that holds wins)."""

    when: Condition
    text: str = Field(min_length=1)


class FeatureUse(_Model):
    """What happens when the player uses a feature ("drink from the spring") while ``when`` holds."""

    words: list[str] = Field(min_length=1, description="Words of the action that mean this use: drink, sip, wash")
    when: Condition = Condition()
    text: str = Field(min_length=1, description="What the player is told")
    hp_delta: int = Field(0, le=0, ge=-10, description="Harm it does (the rules allow a narrator at most 10)")


class Feature(_Named):
    """Something a place's text names that is part of the place: it answers ``examine`` and is never taken.

    ``when``: the feature is there only while it holds (the bow over the hearth, until Garrick gives it away).
    ``description`` is how it looks as the story starts; the last of ``variants`` that holds replaces it.
    """

    when: Condition = Condition()
    description: str = Field(min_length=10)
    variants: list[FeatureVariant] = []
    refusal: str = Field("", description="Told when the player tries to take it; empty: a plain refusal")
    uses: list[FeatureUse] = []


class Node(_Model):
    """A place. What the player reads of it is composed from the state (``describe.node_description``).

    ``description`` is the place as the story starts; it must not describe
    what can change (an item that can be taken, an enemy that can be killed, a
    socket still empty): that goes in ``variants``, each told only while its
    ``when`` condition holds (``at_node`` is not allowed: a variant belongs to
    its place) and, with ``items_here``, while those items lie here. Of the
    variants that hold, the last one with ``replace`` replaces the base text;
    the others follow it, in file order.
    """

    id: Identifier
    name: str
    region: Identifier
    description: str = Field(min_length=20)
    exits: dict[str, Identifier] = Field(min_length=1, description="direction -> node id")
    npcs: list[Identifier] = []
    enemies: list[Identifier] = []
    items: list[Identifier] = []
    safe: bool = Field(True, description="Resting is possible here")
    locked_exits: dict[str, ExitLock] = Field(default_factory=dict, description="direction -> lock")
    variants: list[NodeVariant] = Field(default_factory=list, description="State-dependent text (see the docstring)")
    features: list[Feature] = Field(default_factory=list, description="What its text names that can be examined")

    @model_validator(mode="after")
    def _locks_name_exits(self) -> Node:
        for direction in self.locked_exits:
            if direction not in self.exits:
                raise ValueError(f"locked_exits.{direction}: no such exit")
        return self


class GameMap(_Model):
    nodes: list[Node]


class UseEffect(_Model):
    heal: int = 0
    stats: dict[Stat, int] = {}
    max_hp: int = 0
    text: str = Field("", description="Told when used; no numbers (the rules print those)")
    node_texts: dict[Identifier, str] = Field(default_factory=dict, description="node id -> text when used there")
    only_at: list[Identifier] = Field(
        default_factory=list, description="Nodes where it can be used; elsewhere using it is refused and costs nothing"
    )


class Item(_Countable):
    description: str
    kind: ItemKind
    attack_bonus: int = 0
    defense_bonus: int = 0
    value: int = Field(0, ge=0, description="Its price in the story's currency: what traders ask and pay a share of")
    consumable: bool = False
    use: UseEffect | None = None
    gift_texts: dict[Identifier, str] = Field(
        default_factory=dict, description="npc id -> how they take it when given it; no numbers (the rules print those)"
    )


class AffinityThreshold(_Model):
    at: int
    label: str
    effect: str = Field(description="What changes in the relationship at this level")


LineTruths = Annotated[
    dict[Data, Condition],
    Field(
        default_factory=dict,
        description="line ('greeting' or a topic) -> what must hold for it to be true; `storyecho content check` "
        "reports a line that can be said while it does not",
    ),
]


def _truths_name_lines(truths: dict[str, Condition], greeting: str | None, topics: dict[str, str]) -> None:
    for line in truths:
        if (greeting if line == "greeting" else topics.get(line)) is None:
            raise ValueError(f"true_while.{line}: no such line (the greeting or a topic of its own)")


class NpcMood(_Model):
    condition: Condition
    greeting: str | None = None
    topics: dict[str, str] = {}
    true_while: LineTruths

    @model_validator(mode="after")
    def _truths_name_lines(self) -> NpcMood:
        _truths_name_lines(self.true_while, self.greeting, self.topics)
        return self


class Npc(_Named):
    role: str
    trait: str
    likes: list[Data] = Field(description="Item ids or topics the NPC likes")
    dislikes: list[Data]
    initial_affinity: int = Field(ge=-100, le=100)
    location: Identifier
    thresholds: list[AffinityThreshold] = Field(min_length=1)
    dialogue_style: str
    greeting: str
    farewell: str
    topics: dict[str, str] = Field(default_factory=dict, description="keyword -> what the NPC says about it")
    moods: list[NpcMood] = Field(
        default_factory=list,
        description="Later states of the NPC; the last mood whose condition holds overrides greeting and topics",
    )
    topic_aliases: dict[str, list[str]] = Field(
        default_factory=dict, description="topic keyword -> other words players use for it ('crying' for 'mother')"
    )
    pronouns: Data = Field(
        "they/them", pattern=r"^[a-z]+/[a-z]+$", description="How the story refers to them: he/him, she/her, it/its"
    )
    true_while: LineTruths
    trade: Trade | None = Field(None, description="What they sell and buy; none: they do not trade")
    voice: list[Annotated[str, Field(min_length=1, max_length=VOICE_CHARS)]] = Field(
        default_factory=list,
        max_length=10,
        description="Example exchanges in their own voice (a card's mes_example): the prompt shows them, as how they "
        "speak and never as what happened, on a turn the player talks to them",
    )
    tags: list[Data] = Field(default_factory=list, description="Words that class them (a card's tags): lore, not rules")

    @model_validator(mode="after")
    def _aliases_name_topics(self) -> Npc:
        known = set(self.topics).union(*(m.topics for m in self.moods))
        for topic in self.topic_aliases:
            if topic not in known:
                raise ValueError(f"topic_aliases.{topic}: no such topic")
        _truths_name_lines(self.true_while, self.greeting, self.topics)
        return self


class Reward(_Model):
    exp: int = Field(0, ge=0)
    gold: int = Field(0, ge=0)
    item: Identifier | None = None
    stats: dict[Stat, int] = {}
    affinity: dict[Identifier, int] = {}


class Objective(_Model):
    """One step of a quest, done when its event flag is set and ``requires`` holds.

    kind -> event: visit ``visited:<target>``, talk ``talked:<target>``, obtain
    (carrying ``<target>``), defeat ``defeated:<target>``, use
    ``used:<target>[@<at_node>]``, give ``gave:<target>:<to_npc>``, choice
    ``choice:<target>``.
    """

    id: Identifier
    description: str
    kind: Literal["visit", "talk", "obtain", "defeat", "use", "give", "choice"]
    target: Identifier
    at_node: Identifier | None = None
    to_npc: Identifier | None = None
    requires: dict[Stat, int] = {}
    refusal: str | None = Field(
        None, description="What the player is told while ``requires`` fails; unset: what is lacking, in plain words"
    )

    @model_validator(mode="after")
    def _give_needs_npc(self) -> Objective:
        if self.kind == "give" and not self.to_npc:
            raise ValueError("a 'give' objective needs to_npc")
        return self

    def event_flag(self) -> str:
        """The flag whose presence means the objective's event happened."""
        if self.kind == "use":
            return f"used:{self.target}@{self.at_node}" if self.at_node else f"used:{self.target}"
        if self.kind == "give":
            return f"gave:{self.target}:{self.to_npc}"
        prefix = {
            "visit": "visited",
            "talk": "talked",
            "defeat": "defeated",
            "choice": "choice",
            "obtain": "obtained",
        }[self.kind]
        return f"{prefix}:{self.target}"


class SideTrigger(_Model):
    npc: Identifier
    condition: Condition = Condition()


class Quest(_Model):
    id: Identifier
    title: str
    description: str
    giver: Identifier | None = None
    objectives: list[Objective] = Field(min_length=1)
    reward: Reward = Reward()
    trigger: SideTrigger | None = None
    ordered: bool = Field(
        False,
        description="Objectives complete in order; each one's event must happen after the previous one is done",
    )


class QuestBook(_Model):
    main: list[Quest] = Field(min_length=1)
    side: list[Quest] = []

    @model_validator(mode="after")
    def _side_quests_have_triggers(self) -> QuestBook:
        for quest in self.side:
            if quest.trigger is None:
                raise ValueError(f"side quest {quest.id!r} needs a trigger")
        return self


class Enemy(_Countable):
    category: str
    tier: int = Field(ge=1, le=5)
    hp: int = Field(gt=0)
    attack: int = Field(ge=0)
    nodes: list[Identifier] = Field(min_length=1)
    encounter: str
    loot: list[Loot] = []
    exp: int = Field(0, ge=0)
    gold: int = Field(0, ge=0)
    boss: bool = False
    initiative: bool = Field(False, description="Strikes first, before the player's first blow, when a fight starts")
    heavy: HeavyAttack | None = None
    weaknesses: list[Weakness] = Field([], description="Items that, used as its heavy attack comes, break it")
    aggressive: Aggression | None = Field(
        None, description="Attacks first when the player stays in its place without fighting it (see rules.combat)"
    )

    @model_validator(mode="after")
    def _bosses_wait(self) -> Enemy:
        if self.boss and self.aggressive is not None:
            raise ValueError("aggressive: a boss is fought when the player chooses to (its endings may need talk)")
        return self


class Ending(_Model):
    id: Identifier
    title: str
    description: str
    condition: Condition
    hidden: bool = False
    priority: int = Field(0, description="Higher is checked first")


class Talent(_Model):
    id: Identifier
    name: str
    description: str
    condition: Condition
    bonus: dict[Stat, int] = {}
    max_hp_bonus: int = 0


class Achievement(_Model):
    id: Identifier
    name: str
    description: str
    condition: Condition


class KnowledgeEntry(_Model):
    id: Identifier
    category: Literal["item", "relationship", "hidden_rule", "history", "place", "faction"]
    title: str
    content: str = Field(min_length=10)
    keywords: list[str] = []
    when: LoreCondition | None = Field(
        None, description="Reaches the prompt only while this holds over the game's state, never otherwise"
    )
    activation: Activation | None = Field(None, description="an imported entry's own activation (keys, logic...)")


class ContentError(Exception):
    """A content pack failed to load; the message names the file and field."""


class ContentPack(_Model):
    """A validated story: everything the rules and narrators read."""

    root: Data
    story: Story
    nodes: dict[str, Node]
    items: dict[str, Item]
    npcs: dict[str, Npc]
    quests: QuestBook
    enemies: dict[str, Enemy]
    endings: list[Ending]
    talents: list[Talent]
    achievements: list[Achievement]
    knowledge: list[KnowledgeEntry]
    worldview: str
    content_hash: Data

    @property
    def id(self) -> str:
        return self.story.id

    def quest(self, quest_id: str) -> Quest | None:
        for quest in (*self.quests.main, *self.quests.side):
            if quest.id == quest_id:
                return quest
        return None

    def all_quests(self) -> list[Quest]:
        return [*self.quests.main, *self.quests.side]

    def region(self, region_id: str) -> Region | None:
        return next((r for r in self.story.regions if r.id == region_id), None)

    def choice(self, choice_id: str) -> StoryChoice | None:
        return next((c for c in self.story.choices if c.id == choice_id), None)
