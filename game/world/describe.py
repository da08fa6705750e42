"""Plain-text views of the world, shared by the narrators, prompts and front-ends."""

from __future__ import annotations

import re
from collections.abc import Sequence

from game.language.verbs import VERBS
from game.text import keywords
from game.world.amounts import counted, money
from game.world.conditions import enemies_at, holds, items_at, npcs_at, variant_holds
from game.world.content import Condition, ContentPack, Feature, Node, NodeVariant, Npc, Quest
from game.world.state import GameState
from game.world.texts import text_fields


def the(name: str, *, capital: bool = False) -> str:
    """``name`` with a definite article, without doubling one ("The Dark Code")."""
    base = name[4:] if name.lower().startswith("the ") else name
    return f"{'The' if capital else 'the'} {base}"


def exits_text(state: GameState, pack: ContentPack) -> str:
    node = pack.nodes[state.node]
    return ", ".join(f"{d} to {pack.nodes[t].name}" for d, t in node.exits.items())


def node_description(state: GameState, pack: ContentPack, node_id: str | None = None) -> str:
    """A place's description as things stand now (default: the player's place).

    The base text, or the last ``replace`` variant that holds instead of it,
    then every other variant that holds, in file order (see :class:`~game.world.content.Node`).
    """
    return " ".join(text for text, _ in description_parts(state, pack, node_id))


def description_parts(
    state: GameState, pack: ContentPack, node_id: str | None = None
) -> list[tuple[str, NodeVariant | None]]:
    """The texts :func:`node_description` joins, each with the variant it comes from (``None``: the base text)."""
    node = pack.nodes[node_id or state.node]
    base: tuple[str, NodeVariant | None] = (node.description, None)
    extra: list[tuple[str, NodeVariant | None]] = []
    for variant in node.variants:
        if variant_holds(variant, state, pack, node.id):
            if variant.replace:
                base = (variant.text, variant)
            else:
                extra.append((variant.text, variant))
    return [base, *extra]


def features_here(state: GameState, pack: ContentPack, node_id: str | None = None) -> list[Feature]:
    """The features of a place that are there now (their ``when`` holds)."""
    return [f for f in pack.nodes[node_id or state.node].features if holds(f.when, state)]


def feature_text(feature: Feature, state: GameState) -> str:
    """How a feature looks now: its description, or the last of its variants that holds."""
    text = feature.description
    for variant in feature.variants:
        if holds(variant.when, state):
            text = variant.text
    return text


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'])")


def scene_sentences(state: GameState, pack: ContentPack, words: str) -> list[str]:
    """The sentences of the place's text as it is now that name what ``words`` name ("spring": the spring's
    sentences, healed or not), in order; empty when the text names none of it."""
    wanted = set(keywords(words))
    if not wanted:
        return []
    return [
        sentence for sentence in _SENTENCE.split(node_description(state, pack)) if wanted <= set(keywords(sentence))
    ]


def changes_here(state: GameState, pack: ContentPack, node_id: str) -> str:
    """What has happened to a place: the variants that hold because something happened there (their ``when``),
    without the unchanged description: of a rewritten description (``replace``), the sentences the original does
    not have ("The elven archers in the boughs know your face now...")."""
    node = pack.nodes[node_id]
    holding = [v for v in node.variants if variant_holds(v, state, pack, node.id)]
    rewrite = next((v for v in reversed(holding) if v.replace), None)  # the description as it stands (the last)
    base = {" ".join(s.split()) for s in _SENTENCE.split(node.description)}
    told: list[str] = []
    for variant in holding:
        # a variant of the things lying there only ("You notice" lists them), or of what is not done yet only: it
        # holds from the start, so it is the place as first told ("a yew bow far too fine"), not a change
        if variant.when == Condition(not_flags=variant.when.not_flags):
            continue
        if variant is rewrite:  # a rewritten description: only its sentences the first telling did not have
            told += [s for s in _SENTENCE.split(variant.text) if " ".join(s.split()) not in base]
        elif not variant.replace:
            told.append(variant.text)
    return " ".join(told)


def told_before(text: str, told: Sequence[str]) -> bool:
    """Whether ``text`` opens one of the ``told`` texts' lines: the prompt's window keeps each telling's first 200
    characters only, so its opening words stand for it."""
    return bool(text) and any(text[:48] in said for said in told)


def revisit_text(state: GameState, pack: ContentPack, node_id: str, told: Sequence[str] = ()) -> str:
    """A place the player has been told before, briefly: what changed (unless one of the ``told`` texts, the last
    tellings, already said it), who and what is there, the exits (the full description is ``look``'s, and a first
    visit's; so is why a foe waits)."""
    there = state.model_copy(update={"node": node_id})
    changed = changes_here(there, pack, node_id)
    if told_before(changed, told):  # the change was told on a return not long ago
        changed = ""
    return " ".join(part for part in (changed, *here_lines(there, pack, brief=True)) if part)


def way_text(state: GameState, pack: ContentPack, direction: str) -> str:
    """A glance one way ("look north"): where the way leads, whether it is barred, or that there is none."""
    node = pack.nodes[state.node]
    there = node.exits.get(direction)
    if there is None:
        return f"No way leads {direction} from here. Exits: {exits_text(state, pack)}."
    place = pack.nodes[there]
    where = {"up": "Up", "down": "Down", "in": "Inside", "out": "Outside"}.get(direction, f"To the {direction}")
    lock = node.locked_exits.get(direction)
    barred = " The way is barred for now." if lock is not None and not holds(lock.condition, state) else ""
    known = "" if state.has_flag(f"visited:{there}") else ", where you have not been yet"
    return f"{where} lies {place.name}{known}.{barred}"


def node_text(state: GameState, pack: ContentPack, *, full: bool = True) -> str:
    """What the player sees at the current node."""
    node = pack.nodes[state.node]
    lines = [f"{node.name}." + (f" {node_description(state, pack)}" if full else "")]
    return " ".join([*lines, *here_lines(state, pack)])


def here_lines(state: GameState, pack: ContentPack, *, brief: bool = False) -> list[str]:
    """Who, what and which foes are at the current node, and its exits; ``brief`` leaves out why a foe waits."""
    lines = []
    npcs = [pack.npcs[n].name for n in npcs_at(pack, state.node)]
    if npcs:
        lines.append("Here: " + ", ".join(npcs) + ".")
    items = [pack.items[i].name for i in items_at(state, pack, state.node)]
    if items:
        lines.append("You notice: " + ", ".join(items) + ".")
    here = [pack.enemies[e] for e in enemies_at(state, pack, state.node)]
    hunting = [e.name for e in here if e.aggressive]  # they strike first when left alone (rules.combat.stalk)
    waiting = [e.name for e in here if not e.aggressive]
    if hunting:
        lines.append("Danger: " + ", ".join(hunting) + " may attack.")
    if waiting:
        lines.append("Foes here: " + ", ".join(waiting) + ("." if brief else " (they fight if you start it)."))
    lines.append("Exits: " + exits_text(state, pack) + ".")
    return lines


def inventory_text(state: GameState, pack: ContentPack) -> str:
    purse = f"{pack.story.currency[:1].upper()}{pack.story.currency[1:]}: {state.gold}."
    if not state.inventory:
        return f"You carry nothing. {purse}"
    names = counted(pack.items[i].name if i in pack.items else i for i in state.inventory)
    return f"You carry: {', '.join(names)}. {purse}"


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
        f"STR {state.strength} AGI {state.agility} INT {state.intelligence}, {money(state.gold, pack)}. "
        f"Talents: {talents}. {state.clock_text()}, turn {state.turn}."
    )


GENERIC_HELP_EXAMPLES = tuple(line.sample for verb in VERBS if not verb.meta for line in verb.help)
"""Help examples for a story that names none of its own (``story.help_examples``)."""


def help_text(pack: ContentPack | None = None) -> str:
    """The ``help`` answer, with the story's own examples (or generic ones)."""
    examples = (pack.story.help_examples if pack else None) or GENERIC_HELP_EXAMPLES
    return (
        "Type what you want to do. Examples: " + ", ".join(f"'{e}'" for e in examples) + ". "
        "Meta: 'inventory', 'quests', 'status', 'help', 'quit'. "
        "Saves: 'save NAME', 'load NAME', 'saves' (the list); 'save' and 'load' alone use the quick slot. "
        "The game autosaves every 5 turns and when you quit."
    )


HELP_TEXT = help_text()
"""The help with generic examples; a story being played has :func:`help_text` (pack)."""


def npc_now(npc: Npc, state: GameState) -> tuple[str, dict[str, str]]:
    """The NPC's greeting and topics as the story stands: later moods whose condition holds override earlier ones."""
    lines = npc_lines(npc, state)
    return lines.pop("greeting")[0], {topic: text for topic, (text, _) in lines.items()}


def npc_lines(npc: Npc, state: GameState) -> dict[str, tuple[str, Condition | None]]:
    """Each line the NPC would say now ("greeting", then each topic): its text and what must hold for it to be
    true (``true_while`` of the NPC or mood it comes from; None: nothing)."""
    lines: dict[str, tuple[str, Condition | None]] = {
        key: (text, npc.true_while.get(key)) for key, text in {"greeting": npc.greeting, **npc.topics}.items()
    }
    for mood in npc.moods:
        if holds(mood.condition, state):
            said = {"greeting": mood.greeting, **mood.topics} if mood.greeting else mood.topics
            lines.update({key: (text, mood.true_while.get(key)) for key, text in said.items()})
    return lines


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


_NODE_TOLD = frozenset({"name", "description"})


def node_texts(node: Node) -> list[tuple[str, str]]:
    """A place's text fields besides its name and description, by field name: what a narrator is told of it
    beyond the description (so a text field added to ``Node`` reaches the prompt without another edit)."""
    return sorted(node.model_dump(include=set(text_fields(Node) - _NODE_TOLD)).items())
