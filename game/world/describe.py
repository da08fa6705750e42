"""Plain-text views of the world, shared by the narrators, prompts and front-ends."""

from __future__ import annotations

from game.world.conditions import enemies_at, holds, items_at, npcs_at
from game.world.content import ContentPack, Npc, Quest
from game.world.state import GameState


def the(name: str, *, capital: bool = False) -> str:
    """``name`` with a definite article, without doubling one ("The Dark Code")."""
    base = name[4:] if name.lower().startswith("the ") else name
    return f"{'The' if capital else 'the'} {base}"


def exits_text(state: GameState, pack: ContentPack) -> str:
    node = pack.nodes[state.node]
    return ", ".join(f"{d} to {pack.nodes[t].name}" for d, t in node.exits.items())


def node_text(state: GameState, pack: ContentPack, *, full: bool = True) -> str:
    """What the player sees at the current node."""
    node = pack.nodes[state.node]
    lines = [f"{node.name}." + (f" {node.description}" if full else "")]
    npcs = [pack.npcs[n].name for n in npcs_at(pack, state.node)]
    if npcs:
        lines.append("Here: " + ", ".join(npcs) + ".")
    items = [pack.items[i].name for i in items_at(state, pack, state.node)]
    if items:
        lines.append("You notice: " + ", ".join(items) + ".")
    enemies = [pack.enemies[e].name for e in enemies_at(state, pack, state.node)]
    if enemies:
        lines.append("Danger: " + ", ".join(enemies) + " may attack.")
    lines.append("Exits: " + exits_text(state, pack) + ".")
    return " ".join(lines)


def inventory_text(state: GameState, pack: ContentPack) -> str:
    if not state.inventory:
        return f"You carry nothing. Gold: {state.gold}."
    names = [pack.items[i].name if i in pack.items else i for i in state.inventory]
    return f"You carry: {', '.join(names)}. Gold: {state.gold}."


def objective_lines(quest: Quest, state: GameState) -> list[str]:
    done = set(state.quests[quest.id].objectives_done) if quest.id in state.quests else set()
    lines = []
    for objective in quest.objectives:
        mark = "x" if objective.id in done else " "
        needs = ", ".join(f"{s} {n}" for s, n in objective.requires.items())
        lines.append(f"  [{mark}] {objective.description}" + (f" (needs {needs})" if needs else ""))
    return lines


def quests_text(state: GameState, pack: ContentPack) -> str:
    lines: list[str] = []
    for quest_id, progress in state.quests.items():
        quest = pack.quest(quest_id)
        if quest is None:
            continue
        kind = "Main" if quest_id in pack.story.main_quest_order else "Side"
        status = "done" if progress.status == "completed" else "active"
        lines.append(f"{kind} quest - {quest.title} ({status})")
        if progress.status == "active":
            lines += objective_lines(quest, state)
    return "\n".join(lines) or "No quests yet."


def status_text(state: GameState, pack: ContentPack) -> str:
    talents = ", ".join(t.name for t in pack.talents if t.id in state.talents) or "none"
    return (
        f"{state.player_name} - level {state.level} ({state.exp} exp), HP {state.hp}/{state.max_hp}, "
        f"STR {state.strength} AGI {state.agility} INT {state.intelligence}, gold {state.gold}. "
        f"Talents: {talents}. {state.clock_text()}, turn {state.turn}."
    )


HELP_TEXT = (
    "Type what you want to do. Examples: 'go north', 'look', 'examine the altar', "
    "'talk to the old hunter', 'ask elvin about the harp', 'take the herbs', 'use the potion', "
    "'give the flower to alicia', 'attack the wolf', 'flee', 'rest', 'say my name is Ren'. "
    "Meta: 'inventory', 'quests', 'status', 'help', 'quit'. "
    "Saves: 'save NAME', 'load NAME', 'saves' (the list); 'save' and 'load' alone use the quick slot. "
    "The game autosaves every 5 turns and when you quit."
)


def npc_now(npc: Npc, state: GameState) -> tuple[str, dict[str, str]]:
    """The NPC's greeting and topics as the story stands: later moods whose condition holds override earlier ones."""
    greeting, topics = npc.greeting, dict(npc.topics)
    for mood in npc.moods:
        if holds(mood.condition, state):
            greeting = mood.greeting or greeting
            topics.update(mood.topics)
    return greeting, topics


def npc_brief(npc: Npc, state: GameState) -> str:
    """Who an NPC present is, for a narrator: role, manner, mood toward the player, greeting now, topics."""
    greeting, topics = npc_now(npc, state)
    affinity = state.affinity.get(npc.id, npc.initial_affinity)
    mood = "friendly" if affinity >= 30 else "warm" if affinity >= 10 else "wary" if affinity < 0 else "neutral"
    return (
        f"{npc.name} ({npc.id}), {npc.role}. {npc.trait.rstrip('.')}. Speaks: {npc.dialogue_style} "
        f'Toward you: {mood} (affinity {affinity}). Greets you now with: "{greeting}" '
        f"Knows about: {', '.join(sorted(topics)) or 'nothing in particular'}."
    )
