"""Widgets of the play screen: header line, scene, sidebar, choices, the action input and the loading bar."""

from __future__ import annotations

from collections import Counter

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.suggester import Suggester
from textual.widgets import Input, RichLog, Static

from game.language.verbs import TYPED
from game.tui.text import bar, plain
from game.world.amounts import how_many
from game.world.conditions import enemies_at, items_at, npcs_at
from game.world.content import ContentPack
from game.world.state import GameState


def header_text(state: GameState, pack: ContentPack) -> Text:
    """Story, place, in-game time and turn."""
    node = pack.nodes[state.node]
    text = Text()
    text.append(f" {pack.story.title} ", style="bold reverse")
    text.append(f"  {node.name}", style="bold")
    text.append(f"  ∙  {state.clock_text()}  ∙  Turn {state.turn}")
    return text


def scene_text(state: GameState, pack: ContentPack, *, banner: bool = True) -> Text:
    """The region's ASCII banner (when there is room) and the place: name, who and what is here, exits."""
    node = pack.nodes[state.node]
    region = pack.region(node.region)
    text = Text()
    if banner and region is not None and region.banner:
        text.append(region.banner.rstrip("\n") + "\n", style="bold")
    text.append(node.name, style="bold underline")
    here = [pack.npcs[n].name for n in npcs_at(pack, state.node)]
    things = [pack.items[i].name for i in items_at(state, pack, state.node)]
    foes = [pack.enemies[e] for e in enemies_at(state, pack, state.node)]
    danger = [e.name for e in foes if e.aggressive]  # they strike first if left alone, as the narrators say
    waiting = [e.name for e in foes if not e.aggressive]
    if here:
        text.append("\nHere: ", style="bold").append(", ".join(here))
    if things:
        text.append("\nYou notice: ", style="bold").append(", ".join(things))
    if danger:
        text.append("\nDanger: ", style="bold red").append(", ".join(danger) + " (may attack)")
    if waiting:
        text.append("\nFoes: ", style="bold").append(", ".join(waiting) + " (if you start it)")
    text.append("\nExits: ", style="bold").append(
        ", ".join(f"{d} ({pack.nodes[t].name})" for d, t in node.exits.items())
    )
    return text


def sidebar_text(state: GameState, pack: ContentPack, width: int = 24) -> Text:
    """HP bar, attributes, level and exp, money, inventory, quests with objectives ticked, NPC affinity."""
    text = Text()
    share = state.hp / max(state.max_hp, 1)
    colour = "green" if share > 0.6 else "yellow" if share > 0.3 else "red"
    text.append("HP ", style="bold").append(bar(state.hp, state.max_hp, width - 12), style=colour)
    text.append(f" {state.hp}/{state.max_hp}\n")
    text.append(f"STR {state.strength}  AGI {state.agility}  INT {state.intelligence}\n")
    text.append(f"Level {state.level}  ({state.exp} exp)\n")
    text.append(f"{pack.story.currency.capitalize()} {state.gold}\n", style="bold")
    if state.combat is not None:
        text.append("In combat\n", style="bold red")
    text.append("\nInventory\n", style="bold underline")
    if not state.inventory:
        text.append("  nothing\n", style="dim")
    for item_id, carried in Counter(state.inventory).items():  # "Stim Pack x5", not five lines (issue 46)
        item = pack.items.get(item_id)
        name = how_many(item.name if item else item_id, carried)
        worn = item_id in (state.equipped_weapon, state.equipped_armor)
        text.append(f"  {name}{' (equipped)' if worn else ''}\n")
    text.append("\nQuests\n", style="bold underline")
    if not state.quests:
        text.append("  none yet\n", style="dim")
    for quest_id, progress in state.quests.items():
        quest = pack.quest(quest_id)
        if quest is None:
            continue
        done = progress.status == "completed"
        text.append(f"  {'✓' if done else '‣'} {quest.title}\n", style="dim" if done else "bold")
        if not done:
            for objective in quest.objectives:
                ticked = objective.id in progress.objectives_done
                text.append(f"   {'✓' if ticked else '☐'} {objective.description}\n", style="dim" if ticked else "")
    # the people the player has spoken with, in the order they met, with how each feels about them: a name the
    # player has not met yet is a spoiler, whatever the quests did to its feelings
    talked = [flag.removeprefix("talked:") for flag in state.flags if flag.startswith("talked:")]
    met = [(pack.npcs[n].name, state.affinity.get(n, 0)) for n in dict.fromkeys(talked) if n in pack.npcs]
    if met:
        text.append("\nPeople\n", style="bold underline")
        for name, value in met:
            mood = "green" if value >= 20 else "red" if value < 0 else ""
            text.append(f"  {name} ", style="").append(f"{value:+d}\n", style=mood)
    if state.achievements:
        text.append("\nAchievements\n", style="bold underline")
        for achievement_id in state.achievements:
            found = next((a for a in pack.achievements if a.id == achievement_id), None)
            text.append(f"  ✶ {found.name if found else achievement_id}\n", style="yellow")
    return text


class NarrationLog(RichLog):
    """The narration log: never focused, so what the player types after a click in it goes to the action line.

    The mouse wheel scrolls it, and PageUp/PageDown and Ctrl+Home/Ctrl+End (the play screen's keys) from the
    action line; a focused log took the keys the player typed (issue 25).
    """

    can_focus = False


class Choices(Vertical):
    """Numbered suggested choices; a click or the keys 1-4 (on an empty input) pick one."""

    class Picked(Message):
        def __init__(self, choice: str) -> None:
            super().__init__()
            self.choice = choice

    def show(self, choices: list[str]) -> None:
        self.remove_children()
        self.mount_all(ChoiceLine(n, choice) for n, choice in enumerate(choices[:4], start=1))


class ChoiceLine(Static):
    """One suggested choice."""

    def __init__(self, number: int, choice: str) -> None:
        text = Text.assemble((f"{number}. ", "bold"), plain(choice))
        super().__init__(text, classes="choice")
        self.choice = choice

    def on_click(self) -> None:
        self.post_message(Choices.Picked(self.choice))


WEB_DELETE_WORD = Binding("ctrl+w", "delete_left_word", "Delete word", key_display="alt+backspace")
"""The action line's delete-word key as a browser player presses it (``ActionInput.on_mount``)."""


class ActionInput(Input):
    """The action line: up/down walk the history, tab completes, 1-4 on an empty line pick a choice."""

    BINDINGS = [
        Binding("up", "history(-1)", "Previous", show=False),
        Binding("down", "history(1)", "Next", show=False),
        Binding("tab", "complete", "Complete", show=False),
    ]

    class Choice(Message):
        def __init__(self, number: int) -> None:
            super().__init__()
            self.number = number

    def __init__(self, **kwargs: object) -> None:
        super().__init__(placeholder="What do you do?  (1-4: a choice, F1: help)", **kwargs)  # type: ignore[arg-type]
        self.history: list[str] = []
        self._position = 0

    def on_mount(self) -> None:
        """In a browser (``storyecho serve``), the footer shows how to delete a word: the browser keeps ctrl+w (it
        closes the tab), and its alt+backspace reaches the game as ctrl+w (Textual reads ESC DEL so)."""
        if self.app.is_web:  # in place of Input's own ctrl+w binding, which the footer does not show
            self._bindings.key_to_bindings["ctrl+w"] = [WEB_DELETE_WORD]
            self.refresh_bindings()

    def remember(self, text: str) -> None:
        if text and (not self.history or self.history[-1] != text):
            self.history.append(text)
        self._position = len(self.history)

    def action_history(self, step: int) -> None:
        if not self.history:
            return
        self._position = max(0, min(len(self.history), self._position + step))
        self.value = self.history[self._position] if self._position < len(self.history) else ""
        self.cursor_position = len(self.value)

    def action_complete(self) -> None:
        if self._suggestion:
            self.value = self._suggestion
            self.cursor_position = len(self.value)

    async def _on_key(self, event: events.Key) -> None:
        if not self.value and event.character in ("1", "2", "3", "4"):
            event.stop()
            event.prevent_default()
            self.post_message(self.Choice(int(event.character)))
            return
        await super()._on_key(event)


class WorldSuggester(Suggester):
    """Completes the last word of an action from verbs, exits, people and things here and carried."""

    def __init__(self) -> None:
        super().__init__(use_cache=False, case_sensitive=False)
        self.words: list[str] = list(TYPED)

    def update(self, state: GameState, pack: ContentPack) -> None:
        node = pack.nodes[state.node]
        words = [*TYPED, *node.exits]
        words += [pack.npcs[n].name for n in npcs_at(pack, state.node)]
        words += [pack.items[i].name for i in items_at(state, pack, state.node) + state.inventory if i in pack.items]
        words += [pack.enemies[e].name for e in enemies_at(state, pack, state.node)]
        self.words = list(dict.fromkeys(w.lower() for w in words))

    async def get_suggestion(self, value: str) -> str | None:
        """The input with its last one to three words completed to a known phrase ("talk to old g" -> "...garrick")."""
        lowered = value.lower()
        if not lowered.strip() or lowered.endswith(" "):
            return None
        words = lowered.split(" ")
        for size in (3, 2, 1):
            if len(words) < size:
                continue
            tail = " ".join(words[-size:])
            for phrase in self.words:
                if phrase.startswith(tail) and phrase != tail:
                    return value[: len(value) - len(tail)] + phrase
        return None
