"""Content pack models and loader.

A story lives in ``content/<story_id>/`` as data files validated here with
pydantic. Every error names the file and the field (``npcs.json: [3].location:
unknown node 'forest_gate'``), so a content author can fix a pack without
reading code.

Files of a pack:

- ``story.json``: id, title, genre, intro, start node, player defaults,
  narrator persona, regions (name + ASCII banner), story choices.
- ``map.json``: nodes with exits, NPCs, enemies, items.
- ``items.json``, ``npcs.json``, ``quests.json``, ``enemies.json``,
  ``endings.json``, ``talents.json``, ``achievements.json``.
- ``knowledge.json`` (lore entries) and ``worldview.md`` (prose lore).

Conditions are machine-checkable (:class:`Condition`); every id a condition or
objective names must exist in the pack. Events the rules record as flags:
``visited:<node>``, ``talked:<npc>``, ``defeated:<enemy>``, ``used:<item>``,
``used:<item>@<node>``, ``gave:<item>:<npc>``, ``choice:<choice_id>``,
``quest_done:<quest>``.
"""

from __future__ import annotations

import hashlib
import json
from collections import deque
from pathlib import Path
from typing import Annotated, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

Stat = Literal["strength", "agility", "intelligence"]
Identifier = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$", max_length=64)]

M = TypeVar("M", bound=BaseModel)

MIN_NODES = 14
MIN_NPCS = 6
MIN_MAIN_QUESTS = 5
MIN_SIDE_QUESTS = 4
MIN_ENEMIES = 6
MIN_ENDINGS = 3
MIN_TALENTS = 4
MIN_ACHIEVEMENTS = 6
MIN_KNOWLEDGE = 8

PACK_FILES = (
    "story.json",
    "map.json",
    "items.json",
    "npcs.json",
    "quests.json",
    "enemies.json",
    "endings.json",
    "talents.json",
    "achievements.json",
    "knowledge.json",
)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Condition(_Model):
    """A machine-checkable condition; every clause given must hold."""

    flags: list[str] = []
    not_flags: list[str] = []
    quests_completed: list[Identifier] = []
    min_stats: dict[Stat, int] = {}
    min_level: int = 0
    min_affinity: dict[Identifier, int] = {}
    at_node: Identifier | None = None
    has_items: list[Identifier] = []
    defeated: list[Identifier] = []

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
        return ", ".join(parts) or "always"


class Region(_Model):
    id: Identifier
    name: str
    banner: str = Field(min_length=1, description="Short ASCII-art banner, a few lines")


class PlayerDefaults(_Model):
    name: str = "Traveller"
    hp: int = Field(100, gt=0)
    strength: int = Field(10, ge=0)
    agility: int = Field(10, ge=0)
    intelligence: int = Field(10, ge=0)
    gold: int = Field(20, ge=0)
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


class ExitLock(_Model):
    """An exit that opens only when ``condition`` holds."""

    condition: Condition
    message: str = Field(min_length=5, description="What the player is told while it is locked")


class Node(_Model):
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


class Item(_Model):
    id: Identifier
    name: str
    description: str
    kind: Literal["weapon", "armor", "consumable", "key", "quest", "treasure"]
    attack_bonus: int = 0
    defense_bonus: int = 0
    value: int = Field(0, ge=0)
    consumable: bool = False
    use: UseEffect | None = None
    aliases: list[str] = []


class AffinityThreshold(_Model):
    at: int
    label: str
    effect: str = Field(description="What changes in the relationship at this level")


class NpcMood(_Model):
    condition: Condition
    greeting: str | None = None
    topics: dict[str, str] = {}


class Npc(_Model):
    id: Identifier
    name: str
    role: str
    trait: str
    likes: list[str] = Field(description="Item ids or topics the NPC likes")
    dislikes: list[str]
    initial_affinity: int = Field(ge=-100, le=100)
    location: Identifier
    thresholds: list[AffinityThreshold] = Field(min_length=1)
    dialogue_style: str
    greeting: str
    farewell: str
    topics: dict[str, str] = Field(default_factory=dict, description="keyword -> what the NPC says about it")
    aliases: list[str] = []
    moods: list[NpcMood] = Field(
        default_factory=list,
        description="Later states of the NPC; the last mood whose condition holds overrides greeting and topics",
    )


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


class Loot(_Model):
    item: Identifier
    chance: float = Field(ge=0.0, le=1.0)


class Enemy(_Model):
    id: Identifier
    name: str
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
    aliases: list[str] = []


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


class ContentError(Exception):
    """A content pack failed to load; the message names the file and field."""


class ContentPack(_Model):
    """A validated story: everything the rules and narrators read."""

    root: str
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
    content_hash: str

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


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ContentError(f"{path.name}: file is missing") from None
    except json.JSONDecodeError as exc:
        raise ContentError(f"{path.name}: invalid JSON at line {exc.lineno}: {exc.msg}") from None


def _format_loc(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(root)"


def _parse(model: type[M], path: Path, data: object) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        lines = [f"{path.name}: {_format_loc(e['loc'])}: {e['msg']}" for e in exc.errors()]
        raise ContentError("\n".join(lines)) from None


def _parse_list(model: type[M], path: Path, data: object) -> list[M]:
    if not isinstance(data, list):
        raise ContentError(f"{path.name}: expected a JSON list at the top level")
    errors: list[str] = []
    out: list[M] = []
    for index, entry in enumerate(data):
        try:
            out.append(model.model_validate(entry))
        except ValidationError as exc:
            for e in exc.errors():
                errors.append(f"{path.name}: [{index}]{'.' if e['loc'] else ''}{_format_loc(e['loc'])}: {e['msg']}")
    if errors:
        raise ContentError("\n".join(errors))
    return out


def _index(entries: list[M], filename: str) -> dict[str, M]:
    out: dict[str, M] = {}
    for index, entry in enumerate(entries):
        entry_id = str(getattr(entry, "id"))  # noqa: B009 - every indexed model has an id
        if entry_id in out:
            raise ContentError(f"{filename}: [{index}].id: duplicate id {entry_id!r}")
        out[entry_id] = entry
    return out


def content_hash(root: Path) -> str:
    """SHA-256 over the pack's files, so indexes can tell when content changed."""
    digest = hashlib.sha256()
    for path in sorted(root.iterdir()):
        if path.is_file() and path.suffix in {".json", ".md"}:
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def load_pack(root: Path | str, *, require_full_story: bool = True) -> ContentPack:
    """Load and validate the content pack in ``root``.

    Args:
        root: the pack folder.
        require_full_story: also enforce the minimum sizes of a complete story
            (14 nodes, 6 NPCs, ...); small test packs turn this off.

    Raises:
        ContentError: with one line per problem, each naming file and field.
    """
    root = Path(root)
    if not root.is_dir():
        raise ContentError(f"{root}: content pack folder not found")
    raw = {name: _read_json(root / name) for name in PACK_FILES}
    story = _parse(Story, root / "story.json", raw["story.json"])
    game_map = _parse(GameMap, root / "map.json", raw["map.json"])
    quests = _parse(QuestBook, root / "quests.json", raw["quests.json"])
    worldview_path = root / "worldview.md"
    if not worldview_path.is_file():
        raise ContentError("worldview.md: file is missing")
    pack = ContentPack(
        root=str(root),
        story=story,
        nodes=_index(game_map.nodes, "map.json"),
        items=_index(_parse_list(Item, root / "items.json", raw["items.json"]), "items.json"),
        npcs=_index(_parse_list(Npc, root / "npcs.json", raw["npcs.json"]), "npcs.json"),
        quests=quests,
        enemies=_index(_parse_list(Enemy, root / "enemies.json", raw["enemies.json"]), "enemies.json"),
        endings=_parse_list(Ending, root / "endings.json", raw["endings.json"]),
        talents=_parse_list(Talent, root / "talents.json", raw["talents.json"]),
        achievements=_parse_list(Achievement, root / "achievements.json", raw["achievements.json"]),
        knowledge=_parse_list(KnowledgeEntry, root / "knowledge.json", raw["knowledge.json"]),
        worldview=worldview_path.read_text(encoding="utf-8"),
        content_hash=content_hash(root),
    )
    problems = check_references(pack)
    if require_full_story:
        problems += _check_sizes(pack)
        if len(pack.quests.side) > len([q for q in pack.quests.side if any(o.requires for o in q.objectives)]):
            problems.append("quests.json: side: every side quest needs an objective with an attribute check (requires)")
    if problems:
        raise ContentError("\n".join(problems))
    return pack


def _check_condition(pack: ContentPack, where: str, cond: Condition) -> list[str]:
    out: list[str] = []
    quest_ids = {q.id for q in pack.all_quests()}
    out += [f"{where}.quests_completed: unknown quest {q!r}" for q in cond.quests_completed if q not in quest_ids]
    out += [f"{where}.min_affinity: unknown npc {n!r}" for n in cond.min_affinity if n not in pack.npcs]
    if cond.at_node and cond.at_node not in pack.nodes:
        out.append(f"{where}.at_node: unknown node {cond.at_node!r}")
    out += [f"{where}.has_items: unknown item {i!r}" for i in cond.has_items if i not in pack.items]
    out += [f"{where}.defeated: unknown enemy {e!r}" for e in cond.defeated if e not in pack.enemies]
    for flag in (*cond.flags, *cond.not_flags):
        if flag.startswith("choice:") and pack.choice(flag.removeprefix("choice:")) is None:
            out.append(f"{where}.flags: unknown choice {flag!r}")
    return out


def check_references(pack: ContentPack) -> list[str]:
    """Cross-file checks: every id named exists and the map is connected."""
    p: list[str] = []
    story = pack.story
    region_ids = {r.id for r in story.regions}
    if story.start_node not in pack.nodes:
        p.append(f"story.json: start_node: unknown node {story.start_node!r}")
    for item in story.player.inventory:
        if item not in pack.items:
            p.append(f"story.json: player.inventory: unknown item {item!r}")
    quest_ids = {q.id for q in pack.all_quests()}
    main_ids = [q.id for q in pack.quests.main]
    if sorted(story.main_quest_order) != sorted(main_ids):
        p.append("story.json: main_quest_order: must list every main quest exactly once")
    for i, choice in enumerate(story.choices):
        p += _check_condition(pack, f"story.json: choices[{i}].condition", choice.condition)
    for node in pack.nodes.values():
        where = f"map.json: nodes[{node.id}]"
        if node.region not in region_ids:
            p.append(f"{where}.region: unknown region {node.region!r}")
        p += [f"{where}.exits.{d}: unknown node {t!r}" for d, t in node.exits.items() if t not in pack.nodes]
        p += [f"{where}.npcs: unknown npc {n!r}" for n in node.npcs if n not in pack.npcs]
        p += [f"{where}.enemies: unknown enemy {e!r}" for e in node.enemies if e not in pack.enemies]
        p += [f"{where}.items: unknown item {i!r}" for i in node.items if i not in pack.items]
        for direction, lock in node.locked_exits.items():
            p += _check_condition(pack, f"{where}.locked_exits.{direction}.condition", lock.condition)
    for npc in pack.npcs.values():
        if npc.location not in pack.nodes:
            p.append(f"npcs.json: [{npc.id}].location: unknown node {npc.location!r}")
        elif npc.id not in pack.nodes[npc.location].npcs:
            p.append(f"npcs.json: [{npc.id}].location: node {npc.location!r} does not list this npc")
    for npc in pack.npcs.values():
        for i, mood in enumerate(npc.moods):
            p += _check_condition(pack, f"npcs.json: [{npc.id}].moods[{i}].condition", mood.condition)
    for item_model in pack.items.values():
        if item_model.use:
            p += [
                f"items.json: [{item_model.id}].use: unknown node {n!r}"
                for n in [*item_model.use.node_texts, *item_model.use.only_at]
                if n not in pack.nodes
            ]
    for enemy in pack.enemies.values():
        p += [f"enemies.json: [{enemy.id}].nodes: unknown node {n!r}" for n in enemy.nodes if n not in pack.nodes]
        p += [
            f"enemies.json: [{enemy.id}].loot: unknown item {lt.item!r}"
            for lt in enemy.loot
            if lt.item not in pack.items
        ]
    for quest in pack.all_quests():
        where = f"quests.json: [{quest.id}]"
        if quest.giver and quest.giver not in pack.npcs:
            p.append(f"{where}.giver: unknown npc {quest.giver!r}")
        if quest.reward.item and quest.reward.item not in pack.items:
            p.append(f"{where}.reward.item: unknown item {quest.reward.item!r}")
        p += [f"{where}.reward.affinity: unknown npc {n!r}" for n in quest.reward.affinity if n not in pack.npcs]
        if quest.trigger:
            if quest.trigger.npc not in pack.npcs:
                p.append(f"{where}.trigger.npc: unknown npc {quest.trigger.npc!r}")
            p += _check_condition(pack, f"{where}.trigger.condition", quest.trigger.condition)
        for obj in quest.objectives:
            p += _check_objective(pack, f"{where}.objectives[{obj.id}]", obj)
    if len(quest_ids) != len(pack.all_quests()):
        p.append("quests.json: quest ids must be unique")
    for i, ending in enumerate(pack.endings):
        p += _check_condition(pack, f"endings.json: [{i}].condition", ending.condition)
    for i, talent in enumerate(pack.talents):
        p += _check_condition(pack, f"talents.json: [{i}].condition", talent.condition)
    for i, ach in enumerate(pack.achievements):
        p += _check_condition(pack, f"achievements.json: [{i}].condition", ach.condition)
    p += _check_connected(pack)
    return p


def _check_objective(pack: ContentPack, where: str, obj: Objective) -> list[str]:
    table: dict[str, dict[str, object]] = {
        "visit": dict(pack.nodes),
        "talk": dict(pack.npcs),
        "obtain": dict(pack.items),
        "defeat": dict(pack.enemies),
        "use": dict(pack.items),
        "give": dict(pack.items),
        "choice": {c.id: c for c in pack.story.choices},
    }
    out: list[str] = []
    if obj.target not in table[obj.kind]:
        out.append(f"{where}.target: unknown {obj.kind} target {obj.target!r}")
    if obj.at_node and obj.at_node not in pack.nodes:
        out.append(f"{where}.at_node: unknown node {obj.at_node!r}")
    if obj.to_npc and obj.to_npc not in pack.npcs:
        out.append(f"{where}.to_npc: unknown npc {obj.to_npc!r}")
    return out


def _check_sizes(pack: ContentPack) -> list[str]:
    sizes = [
        ("map.json", "nodes", len(pack.nodes), MIN_NODES),
        ("npcs.json", "npcs", len(pack.npcs), MIN_NPCS),
        ("quests.json", "main", len(pack.quests.main), MIN_MAIN_QUESTS),
        ("quests.json", "side", len(pack.quests.side), MIN_SIDE_QUESTS),
        ("enemies.json", "enemies", len(pack.enemies), MIN_ENEMIES),
        ("endings.json", "endings", len(pack.endings), MIN_ENDINGS),
        ("talents.json", "talents", len(pack.talents), MIN_TALENTS),
        ("achievements.json", "achievements", len(pack.achievements), MIN_ACHIEVEMENTS),
        ("knowledge.json", "entries", len(pack.knowledge), MIN_KNOWLEDGE),
    ]
    return [f"{f}: {what}: {n} found, at least {m} needed" for f, what, n, m in sizes if n < m]


def _check_connected(pack: ContentPack) -> list[str]:
    start = pack.story.start_node
    if start not in pack.nodes:
        return []
    seen = {start}
    queue = deque([start])
    while queue:
        for target in pack.nodes[queue.popleft()].exits.values():
            if target in pack.nodes and target not in seen:
                seen.add(target)
                queue.append(target)
    unreachable = sorted(set(pack.nodes) - seen)
    if unreachable:
        return [f"map.json: nodes: not reachable from {start!r}: {', '.join(unreachable)}"]
    return []


def content_root() -> Path:
    """The repository's bundled ``content/`` folder."""
    return Path(__file__).resolve().parents[2] / "content"


def available_stories(root: Path | None = None) -> list[str]:
    base = root or content_root()
    return sorted(p.name for p in base.iterdir() if (p / "story.json").is_file()) if base.is_dir() else []
