"""Acts of the corpus (``rows.py``) as effects, states for its rows, and which acts a turn applied."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from game.world.content import ContentPack
from game.world.rules import AppliedEffect
from game.world.state import CombatState, GameState, QuestProgress, new_game
from tests.language.rows import EXPECTS, KINDS, Natural, Row

VERBS = {
    "go": 1,
    "take": 1,
    "drop": 1,
    "use": 1,
    "give": 2,
    "buy": 2,
    "sell": 2,
    "talk": 1,
    "attack": 1,
    "flee": 0,
    "defend": 0,
    "rest": 0,
    "choice": 1,
}
"""Each act's verb and how many ids follow it."""


def state_for(row: Row | Natural, pack: ContentPack) -> GameState:
    """A new game of ``pack`` set up as ``row`` says."""
    state = new_game(pack)
    state.node = row.at
    state.add_flag(f"visited:{row.at}")
    state.inventory += list(row.carried)
    for flag in row.flags:
        state.add_flag(flag)
    if row.gold is not None:
        state.gold = row.gold
    if row.hp is not None:
        state.hp = row.hp
    for quest in row.done:
        state.quests[quest] = QuestProgress(status="completed")
    for quest in getattr(row, "started", ()):  # a Natural sentence starts none, nor grows a stat
        state.quests[quest] = QuestProgress(status="active")
    for stat, value in getattr(row, "stats", ()):
        setattr(state, stat, value)
    if row.fight:
        state.combat = CombatState(enemy_id=row.fight, enemy_hp=pack.enemies[row.fight].hp)
    return state


def effects_of(act: str, state: GameState) -> dict[str, Any]:
    """The effects a model proposes for ``act`` in ``state``."""
    verb, *ids = act.split()
    if verb == "go":
        return {"move_to": ids[0]}
    if verb == "take":
        return {"items_gained": [ids[0]]}
    if verb == "drop":
        return {"items_lost": [ids[0]]}
    if verb == "use":
        return {"use_item": ids[0]}
    if verb == "give":
        return {"give_item": {"item": ids[0], "to": ids[1]}}
    if verb in ("buy", "sell"):
        return {"trade": {"deal": verb, "item": ids[0], "npc": ids[1]}}
    if verb == "talk":
        return {"talk_to": ids[0]}
    if verb == "attack":
        return {"combat_action": "attack"} if state.combat else {"start_combat": ids[0]}
    if verb in ("flee", "defend"):
        return {"combat_action": verb}
    if verb == "rest":
        return {"rest": True}
    if verb == "choice":
        return {"choice": ids[0]}
    raise ValueError(f"unknown act {act!r}")


def acts_applied(applied: list[AppliedEffect]) -> list[str]:
    """The corpus's acts among what the rules applied, in order."""
    out: list[str] = []
    for a in applied:
        if a.effect == "move_to":
            out.append(f"go {a.detail}")
        elif a.effect == "items_gained":
            out.append(f"take {a.detail}")
        elif a.effect == "items_lost":
            out.append(f"drop {a.detail}")
        elif a.effect == "use_item":
            out.append(f"use {a.detail}")
        elif a.effect == "give_item":
            item, _, npc = a.detail.partition("->")
            out.append(f"give {item} {npc}")
        elif a.effect == "trade":
            deal, rest = a.detail.split(" ", 1)
            pair = rest.split(" ")[0]
            item, npc = pair.split("<-" if deal == "buy" else "->")
            out.append(f"{deal} {item} {npc}")
        elif a.effect == "talk_to":
            out.append(f"talk {a.detail}")
        elif a.effect == "start_combat":
            out.append(f"attack {a.detail}")
        elif a.effect == "combat_action":
            out.append({"attack": "attack", "flee": "flee", "flee-failed": "flee", "defend": "defend"}[a.detail])
        elif a.effect == "rest":
            out.append("rest")
        elif a.effect in ("choice", "choice_failed"):
            out.append(f"choice {a.detail.removeprefix('choice:')}")
    return out


def same_act(wanted: str, applied: str) -> bool:
    """Whether an applied act is the one wanted (a blow in a fight is an attack on its enemy)."""
    if wanted == applied:
        return True
    return wanted.startswith("attack ") and applied == "attack"


def first_not_done(wanted: Iterable[str], applied: list[str]) -> str | None:
    """The first wanted act not applied in order after the ones before it, or None when all were."""
    position = 0
    for act in wanted:
        found = next((i for i in range(position, len(applied)) if same_act(act, applied[i])), None)
        if found is None:
            return act
        position = found + 1
    return None


def shipped_packs() -> dict[str, ContentPack]:
    """Every shipped story's content pack, by story id."""
    from game.world.library import story_ids
    from game.world.loader import content_root, load_pack

    return {s: load_pack(content_root() / s) for s in story_ids(content_root())}


def load_module(path: str) -> Any:
    """The module at ``path`` (a corpus part or the sixty sentences, outside the package while held out)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"rows_{abs(hash(path))}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def problems(row: Row | Natural, packs: dict[str, ContentPack]) -> list[str]:
    """What is wrong with ``row`` as data: unknown ids, an unknown kind, a wanted act the rules would refuse."""
    from game.world.effects import Effects
    from game.world.rules import Rules

    if row.story not in packs:
        return [f"unknown story {row.story}"]
    pack = packs[row.story]
    out = []
    if row.at not in pack.nodes:
        out.append(f"unknown node {row.at}")
    if isinstance(row, Row):
        if row.kind not in KINDS:
            out.append(f"unknown kind {row.kind}")
        if bool(row.want) != (row.kind in KINDS[: KINDS.index("negation")]):
            out.append(f"kind {row.kind} with want={row.want}")
    else:
        if row.expect not in EXPECTS:
            out.append(f"unknown expect {row.expect}")
        if bool(row.want) != (row.expect == "act"):
            out.append(f"expect {row.expect} with want={row.want}")
        if row.expect == "answer" and row.by != "rules" and row.by not in pack.npcs:
            out.append(f"answer by unknown {row.by!r}")
    for item in row.carried:
        if item not in pack.items:
            out.append(f"unknown item {item}")
    if row.fight and row.fight not in pack.enemies:
        out.append(f"unknown enemy {row.fight}")
    for act in (*row.want, *getattr(row, "tempt", ())):
        verb, *ids = act.split()
        if verb not in VERBS or len(ids) != VERBS[verb]:
            out.append(f"malformed act {act!r}")
            continue
        pools = {
            "go": [pack.nodes],
            "take": [pack.items],
            "drop": [pack.items],
            "use": [pack.items],
            "give": [pack.items, pack.npcs],
            "buy": [pack.items, pack.npcs],
            "sell": [pack.items, pack.npcs],
            "talk": [pack.npcs],
            "attack": [pack.enemies],
            "choice": [{c.id: c for c in pack.story.choices}],
        }.get(verb, [])
        for pool, ident in zip(pools, ids, strict=False):
            if ident not in pool:
                out.append(f"unknown id {ident!r} in {act!r}")
    if out:
        return out
    state = state_for(row, pack)
    rules = Rules(pack)
    for act in row.want:
        effects = Effects.model_validate(effects_of(act, state))
        outcome = rules.resolve_turn(state, effects)
        done = acts_applied(outcome.applied)
        if not any(same_act(act, d) for d in done):
            why = "; ".join(f"{r.effect}: {r.reason}" for r in outcome.rejected) or "nothing applied"
            out.append(f"{act!r} is not possible there ({why})")
            break
    return out


def check_file(path: str) -> int:
    """Print the problems of every row in the module at ``path`` (its ``ROWS`` or ``NATURAL`` list); return how
    many rows have one."""
    module = load_module(path)
    packs = shipped_packs()
    bad = 0
    seen: set[tuple[str, str, str]] = set()
    rows = getattr(module, "ROWS", None) or module.NATURAL
    for i, row in enumerate(rows):
        found = problems(row, packs)
        key = (row.story, row.at, row.action.lower().strip())
        if key in seen:
            found.append("duplicate row")
        seen.add(key)
        if found:
            bad += 1
            print(f"row {i} {row.action!r}: " + "; ".join(found))
    kinds: dict[str, int] = {}
    for row in rows:
        kind = row.kind if isinstance(row, Row) else row.expect
        kinds[kind] = kinds.get(kind, 0) + 1
    print(f"{len(rows)} rows, {bad} with problems; by kind: {kinds}")
    return bad


if __name__ == "__main__":
    import sys

    raise SystemExit(1 if check_file(sys.argv[1]) else 0)
