"""Load content packs from disk and check them across files.

``load_pack`` validates each file with the models of :mod:`game.world.content`
and then checks what no single file can: every id named exists, the map is
connected. Every error names the file and the field. How big a story is, is its
author's choice: the sizes that keep the shipped stories complete are a test of
those stories (``tests/test_content.py``), not a rule for every pack.
"""

from __future__ import annotations

import hashlib
import json
from collections import deque
from importlib import resources
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from game.world.content import (
    Achievement,
    Condition,
    ContentError,
    ContentPack,
    Ending,
    Enemy,
    GameMap,
    Item,
    KnowledgeEntry,
    Npc,
    Objective,
    QuestBook,
    Story,
    Talent,
)
from game.world.content_base import ITEM_KINDS

M = TypeVar("M", bound=BaseModel)


class _Identified(Protocol):
    @property
    def id(self) -> str: ...


Indexed = TypeVar("Indexed", bound=_Identified)

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


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ContentError(f"{path.name}: file is missing") from None
    except json.JSONDecodeError as exc:
        raise ContentError(f"{path.name}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None


def _format_loc(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(root)"


ID_PATTERN_WORDS = "an id is lowercase letters, digits and _, starting with a letter (e.g. old_lodge)"


def _message(error: Any) -> str:
    """Pydantic's message, with a pattern said in words where the content has a rule for it."""
    pattern = (error.get("ctx") or {}).get("pattern")
    if error.get("type") == "string_pattern_mismatch" and pattern == "^[a-z][a-z0-9_]*$":
        return f"{error.get('input')!r} is not an id: {ID_PATTERN_WORDS}"
    return str(error["msg"])


def _parse(model: type[M], path: Path, data: object) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        lines = [f"{path.name}: {_format_loc(e['loc'])}: {_message(e)}" for e in exc.errors()]
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
                errors.append(f"{path.name}: [{index}]{'.' if e['loc'] else ''}{_format_loc(e['loc'])}: {_message(e)}")
    if errors:
        raise ContentError("\n".join(errors))
    return out


def _index(entries: list[Indexed], filename: str) -> dict[str, Indexed]:
    out: dict[str, Indexed] = {}
    for index, entry in enumerate(entries):
        entry_id = entry.id
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


def load_pack(root: Path | str) -> ContentPack:
    """Load and validate the content pack in the folder ``root``.

    Raises:
        ContentError: with one line per problem, each naming file and field.
    """
    root = Path(root)
    if not root.is_dir():
        there = available_stories(root.parent)
        known = f"; the stories there: {', '.join(there)}" if there else ""
        raise ContentError(f"{root}: content pack folder not found{known}")
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
    return [
        *_check_story(pack),
        *_check_map(pack),
        *_check_npcs(pack),
        *_check_items(pack),
        *_check_enemies(pack),
        *_check_quests(pack),
        *_check_growth(pack),
        *_check_knowledge(pack),
        *_check_connected(pack),
    ]


def _check_knowledge(pack: ContentPack) -> list[str]:
    """knowledge.json: the condition over the game's state an entry is recalled under (``when``)."""
    p: list[str] = []
    quest_ids = {q.id for q in pack.all_quests()}
    for entry in pack.knowledge:
        if entry.when is None:
            continue
        where = f"knowledge.json: [{entry.id}].when"
        p += _check_condition(pack, where, entry.when)
        p += [f"{where}.npcs_present: unknown npc {n!r}" for n in entry.when.npcs_present if n not in pack.npcs]
        p += [f"{where}.quests_active: unknown quest {q!r}" for q in entry.when.quests_active if q not in quest_ids]
    return p


def _check_story(pack: ContentPack) -> list[str]:
    """story.json: the start, the player's inventory, the main quests' order, the choices' conditions."""
    p: list[str] = []
    story = pack.story
    if story.start_node not in pack.nodes:
        p.append(f"story.json: start_node: unknown node {story.start_node!r}")
    for item in story.player.inventory:
        if item not in pack.items:
            p.append(f"story.json: player.inventory: unknown item {item!r}")
    main_ids = [q.id for q in pack.quests.main]
    if sorted(story.main_quest_order) != sorted(main_ids):
        p.append("story.json: main_quest_order: must list every main quest exactly once")
    for i, choice in enumerate(story.choices):
        p += _check_condition(pack, f"story.json: choices[{i}].condition", choice.condition)
    return p


def _check_map(pack: ContentPack) -> list[str]:
    """map.json: each place's region, exits, NPCs, enemies, items, locks and variants."""
    p: list[str] = []
    region_ids = {r.id for r in pack.story.regions}
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
        for i, variant in enumerate(node.variants):
            p += _check_condition(pack, f"{where}.variants[{i}].when", variant.when)
            if variant.when.at_node:
                p.append(f"{where}.variants[{i}].when.at_node: not allowed (a variant already belongs to its place)")
            p += [
                f"{where}.variants[{i}].items_here: unknown item {item!r}"
                for item in variant.items_here
                if item not in pack.items
            ]
    return p


def _check_npcs(pack: ContentPack) -> list[str]:
    """npcs.json: every NPC's place (which must list it), then their moods' conditions."""
    p: list[str] = []
    for npc in pack.npcs.values():
        if npc.location not in pack.nodes:
            p.append(f"npcs.json: [{npc.id}].location: unknown node {npc.location!r}")
        elif npc.id not in pack.nodes[npc.location].npcs:
            p.append(f"npcs.json: [{npc.id}].location: node {npc.location!r} does not list this npc")
    for npc in pack.npcs.values():
        for i, mood in enumerate(npc.moods):
            p += _check_condition(pack, f"npcs.json: [{npc.id}].moods[{i}].condition", mood.condition)
        if npc.trade:  # what they trade in must be things of the story (item kinds for what they buy)
            p += [
                f"npcs.json: [{npc.id}].trade.sells: unknown item {i!r}" for i in npc.trade.sells if i not in pack.items
            ]
            p += [
                f"npcs.json: [{npc.id}].trade.buys: unknown item or item kind {i!r}"
                for i in npc.trade.buys
                if i not in pack.items and i not in ITEM_KINDS
            ]
    return p + _check_prices(pack)


def _check_prices(pack: ContentPack) -> list[str]:
    """No trader sells a thing for less than another pays for it (money out of nothing); see ``rules.trade``."""
    p: list[str] = []
    trades = [(n.id, n.trade) for n in pack.npcs.values() if n.trade]
    for seller, sold in trades:
        for item_id, price in sold.sells.items():
            item = pack.items.get(item_id)
            if item is None:
                continue  # an unknown item: reported above
            asked = price or max(1, item.value)
            for buyer, bought in trades:
                share = bought.buys.get(item_id, bought.buys.get(item.kind))
                paid = max(1, round(item.value * share)) if share and item.value else 0
                if paid > asked:
                    p.append(
                        f"npcs.json: [{seller}].trade.sells.{item_id}: sold for {asked}, less than {buyer} pays for "
                        f"it ({paid}): buying and selling it would make money from nothing"
                    )
    return p


def _check_items(pack: ContentPack) -> list[str]:
    """items.json: the places an item's use names, and the NPCs its gift texts name."""
    p: list[str] = []
    for item_model in pack.items.values():
        if item_model.use:
            p += [
                f"items.json: [{item_model.id}].use: unknown node {n!r}"
                for n in [*item_model.use.node_texts, *item_model.use.only_at]
                if n not in pack.nodes
            ]
        p += [
            f"items.json: [{item_model.id}].gift_texts: unknown npc {n!r}"
            for n in item_model.gift_texts
            if n not in pack.npcs
        ]
    return p


def _check_enemies(pack: ContentPack) -> list[str]:
    """enemies.json: where each enemy roams and what it drops."""
    p: list[str] = []
    for enemy in pack.enemies.values():
        p += [f"enemies.json: [{enemy.id}].nodes: unknown node {n!r}" for n in enemy.nodes if n not in pack.nodes]
        p += [
            f"enemies.json: [{enemy.id}].loot: unknown item {lt.item!r}"
            for lt in enemy.loot
            if lt.item not in pack.items
        ]
    return p


def _check_quests(pack: ContentPack) -> list[str]:
    """quests.json: givers, rewards, triggers and objectives; and no two quests with one id."""
    p: list[str] = []
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
    quest_ids = {q.id for q in pack.all_quests()}
    if len(quest_ids) != len(pack.all_quests()):
        p.append("quests.json: quest ids must be unique")
    return p


def _check_growth(pack: ContentPack) -> list[str]:
    """endings.json, talents.json, achievements.json: their conditions."""
    p: list[str] = []
    for i, ending in enumerate(pack.endings):
        p += _check_condition(pack, f"endings.json: [{i}].condition", ending.condition)
    for i, talent in enumerate(pack.talents):
        p += _check_condition(pack, f"talents.json: [{i}].condition", talent.condition)
    for i, ach in enumerate(pack.achievements):
        p += _check_condition(pack, f"achievements.json: [{i}].condition", ach.condition)
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
    """The folder holding the bundled stories, one sub-folder per story id.

    An installed game (a wheel, ``pip install .``, ``pipx``) carries them as the
    package data ``game/content/``, found through :mod:`importlib.resources`;
    running from a checkout (or an editable install of one), they are the
    repository's top-level ``content/`` folder, their single source.
    """
    bundled = resources.files("game") / "content"
    if isinstance(bundled, Path) and bundled.is_dir():
        return bundled
    return Path(__file__).resolve().parents[2] / "content"


def available_stories(root: Path | None = None) -> list[str]:
    """The ids of the stories under ``root`` (default :func:`content_root`), sorted."""
    base = root or content_root()
    return sorted(p.name for p in base.iterdir() if (p / "story.json").is_file()) if base.is_dir() else []
