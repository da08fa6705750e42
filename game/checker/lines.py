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
from game.world.conditions import holds, unmet
from game.world.content import ContentPack
from game.world.describe import npc_lines


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
