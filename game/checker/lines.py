"""Stale lines: what a person says that the story has made untrue ("Knock the shadow out of him" to the player
who already did).

A line that depends on the state carries a condition (``true_while`` of the NPC or of the mood it belongs to).
Every state a search explored is asked which line each person would say now (``describe.npc_lines``, as the
narrators do), at full HP and at 1 HP (the searches drop HP: a line about wounds must hold either way); a line
said while its condition does not hold is reported once, with the shortest actions that lead there.
"""

from __future__ import annotations

from game.checker.report import StaleLine
from game.checker.search import Search
from game.text import mentions
from game.world.conditions import holds, unmet
from game.world.content import ContentPack, NodeVariant
from game.world.describe import description_parts, npc_lines


def stale_lines(pack: ContentPack, search: Search, found: dict[tuple[str, str, str], StaleLine]) -> None:
    """Add to ``found`` (keyed by person, line and text) each line the states of ``search`` say while untrue."""
    speakers = [n for n in pack.npcs.values() if n.true_while or any(m.true_while for m in n.moods)]
    if not speakers:
        return
    for sid, explored in enumerate(search.states):
        for hp in {explored.max_hp, 1}:
            state = explored.model_copy(update={"hp": hp})
            for npc in speakers:
                for line, (text, truth) in npc_lines(npc, state).items():
                    key = (npc.id, line, text)
                    if truth is None or key in found or holds(truth, state):
                        continue
                    found[key] = StaleLine(
                        npc.id, npc.name, line, text, "; ".join(unmet(truth, state, pack)), search.path(sid)
                    )


def told_after(variant: NodeVariant | None) -> set[str]:
    """The enemies a place's text ``variant`` is told after the defeat of: it was written for that, so naming one
    ("where the drowned sailor stood") says what it became."""
    if variant is None:
        return set()
    flagged = {flag.removeprefix("defeated:") for flag in variant.when.flags if flag.startswith("defeated:")}
    return set(variant.when.defeated) | flagged


def dead_mentions(pack: ContentPack, search: Search, found: dict[tuple[str, str], str]) -> None:
    """Add to ``found`` (keyed by text and enemy) each text that still names an enemy after it is defeated, with no
    variant, mood or ``true_while`` saying what it became: a warning for the author (issue 34), with the shortest
    actions that lead there. A variant told after the enemy's defeat may name it. A line that declares
    ``true_while`` is :func:`stale_lines`' to judge."""
    names = [(enemy.id, [enemy.name]) for enemy in pack.enemies.values()]
    for sid, state in enumerate(search.states):
        dead = {e for e in pack.enemies if state.has_flag(f"defeated:{e}")}
        if not dead or state.ending:
            continue
        places = sorted({node for e in dead for node in pack.enemies[e].nodes})
        texts = [
            (f"map.json: nodes[{n}].description", text, told_after(variant))
            for n in places
            for text, variant in description_parts(state, pack, n)
        ]
        texts += [
            (f"npcs.json: [{npc.id}] line {line!r}", text, set())
            for npc in pack.npcs.values()
            for line, (text, truth) in npc_lines(npc, state).items()
            if truth is None
        ]
        for where, text, after in texts:
            for enemy in sorted(set(mentions(text, names)[0]) & dead - after):
                if (where, enemy) not in found:
                    path = search.path(sid)
                    shown = " / ".join(path[-6:])
                    found[(where, enemy)] = (
                        f"{where} still names {pack.enemies[enemy].name} once it is defeated (after {len(path)} "
                        f"actions, ending: {shown}): say what it became with a variant (a place), a mood (a "
                        "person) or a true_while"
                    )
