"""Title, story choice, loading and ending screens."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Center, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, OptionList, ProgressBar, Static
from textual.widgets.option_list import Option

from game.tui.text import plain

if TYPE_CHECKING:
    from collections.abc import Callable

    from game.engine.session import GameSession
    from game.world.content import ContentPack
    from game.world.library import StoryLibrary

BANNER = r"""
 ____  _                    _____     _
/ ___|| |_ ___  _ __ _   _ | ____|___| |__   ___
\___ \| __/ _ \| '__| | | ||  _| / __| '_ \ / _ \
 ___) | || (_) | |  | |_| || |__| (__| | | | (_) |
|____/ \__\___/|_|   \__, ||_____\___|_| |_|\___/
                     |___/
"""
KEYS_HINT = "  ".join(
    f"[b $footer-key-foreground]{key}[/] {what}"
    for key, what in (("n", "new game"), ("c", "continue"), ("F1", "help"), ("F3", "load"), ("ctrl+q", "quit"))
)
"""The title's key line. A Footer would do it, but it restyles each of its keys as it mounts: 0.14 s of
the first frame (measured with cProfile under ``bench/startup.py``'s child)."""
MENU = (
    ("new", "New game"),
    ("continue", "Continue"),
    ("load", "Load"),
    ("settings", "Settings"),
    ("help", "Help"),
    ("quit", "Quit"),
)


def pitch(pack: ContentPack, chars: int = 320) -> str:
    """A story's one-paragraph pitch: the start of its intro, cut at a sentence."""
    intro = " ".join(pack.story.intro.split())
    if len(intro) <= chars:
        return intro
    cut = intro[:chars]
    end = cut.rfind(". ")
    return cut[: end + 1] if end > 80 else cut.rstrip() + "…"


class TitleScreen(Screen[None]):
    """The banner, the menu and what is still loading in the background."""

    BINDINGS = [Binding("n", "menu('new')", "New game"), Binding("c", "menu('continue')", "Continue")]

    def __init__(self, continue_label: str | None = None) -> None:
        super().__init__()
        self.continue_label = continue_label

    def compose(self) -> ComposeResult:
        with Vertical(id="title-box"):
            yield Static(Text(BANNER.strip("\n"), style="bold"), id="banner")
            yield Static(Text("a text adventure whose narrator remembers", style="italic"), id="tagline")
            with Center():
                yield OptionList(*self._options(), id="menu")
            yield LoadingBar(id="loading")
        yield Static(KEYS_HINT, id="title-keys")

    def _options(self) -> list[Option]:
        options = []
        for key, label in MENU:
            if key == "continue":
                text = f"Continue ({self.continue_label})" if self.continue_label else "Continue"
                options.append(Option(plain(text), id=key, disabled=self.continue_label is None))
            else:
                options.append(Option(label, id=key))
        return options

    def on_mount(self) -> None:
        self.query_one("#menu", OptionList).focus()
        self.app.show_loading()  # type: ignore[attr-defined]

    def set_continue(self, label: str | None) -> None:
        self.continue_label = label
        menu = self.query_one("#menu", OptionList)
        highlighted = menu.highlighted
        menu.clear_options()
        menu.add_options(self._options())
        menu.highlighted = highlighted

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.action_menu(event.option.id or "")

    def action_menu(self, choice: str) -> None:
        self.app.menu(choice)  # type: ignore[attr-defined]


def story_packs(library: StoryLibrary, warn: Callable[..., object]) -> list[ContentPack]:
    """The stories to pick from, the shipped ones and the player's; a broken story of theirs is named, not fatal."""
    from game.world.content import ContentError
    from game.world.loader import load_pack

    packs = []
    for story in library.ids():
        try:
            packs.append(load_pack(library.path(story)))
        except ContentError as exc:
            warn(f"Story {story!r} cannot be played: {str(exc).splitlines()[0]}", severity="warning")
    for line in library.refused:
        warn(line, severity="warning")
    return packs


class StoryScreen(ModalScreen[str | None]):
    """Pick a story: each with its one-paragraph pitch."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Back")]

    def __init__(self, packs: list[ContentPack]) -> None:
        super().__init__()
        self.packs = packs

    def compose(self) -> ComposeResult:
        with Vertical(id="story-dialog"):
            yield Static(Text("Choose your story", style="bold"), id="story-title")
            options = []
            for pack in self.packs:
                text = Text.assemble((pack.story.title, "bold"), "\n", plain(pitch(pack), "italic"), "\n")
                options.append(Option(text, id=pack.story.id))
            yield OptionList(*options, id="stories")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#stories", OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)


class LoadingScreen(Screen[None]):
    """Shown while a game is being built (the narrator, the knowledge base index)."""

    def __init__(self, title: str) -> None:
        super().__init__()
        self.title_text = title

    def compose(self) -> ComposeResult:
        with Vertical(id="loading-box"):
            yield Static(plain(self.title_text, "bold"), id="loading-title")
            yield LoadingBar(id="loading")

    def on_mount(self) -> None:
        self.app.show_loading()  # type: ignore[attr-defined]


def ending_summary(session: GameSession) -> Text:
    """The run in a few lines: the ending, turns, quests, achievements and the choices made."""
    from game.world.amounts import money

    engine = session.engine
    state, pack = engine.state, engine.pack
    ending = next((e for e in pack.endings if e.id == state.ending), None)
    text = Text()
    text.append((ending.title if ending else "The End") + "\n\n", style="bold")
    if ending is not None:
        text.append_text(plain(ending.description))
        text.append("\n\n")
    done = [q for q in pack.all_quests() if state.quests.get(q.id) and state.quests[q.id].status == "completed"]
    text.append(f"Turns played: {state.turn}\n", style="bold")
    text.append(f"Quests completed: {len(done)}\n", style="bold")
    for quest in done:
        text.append(f"  ✓ {quest.title}\n")
    names = {a.id: a.name for a in pack.achievements}
    text.append(f"Achievements: {len(state.achievements)}\n", style="bold")
    for achievement in state.achievements:
        text.append(f"  ✶ {names.get(achievement, achievement)}\n")
    choices = [c.name for c in pack.story.choices if state.has_flag(f"choice:{c.id}")]
    if choices:
        text.append("Choices made:\n", style="bold")
        for choice in choices:
            text.append(f"  ❖ {choice}\n")
    text.append(f"\nLevel {state.level}, {money(state.gold, pack)}, HP {state.hp}/{state.max_hp}.\n")
    return text


def ending_where(session: GameSession) -> str:
    """Where the game stands at its ending, and whether it can be taken back (the ending screen's own words)."""
    timeline, turn = session.timeline, session.engine.state.turn
    saved = session.slots is not None and session.autosave_every > 0
    where = f"The story ended at turn {turn}" + (", and your autosave holds the ending." if saved else ".")
    if not (timeline.started and timeline.can_undo):
        return f"{where} This save keeps no turn before it: load another save or start a new game."
    back = timeline.moments[timeline.position - 1].turn
    again = " (and the autosave)" if saved else ""
    return (
        f"{where} Ctrl+Z takes it back: the game{again} returns to turn {back}, and you play on from there. "
        f"Ctrl+R tells turn {turn} again. F4 lists the turns to branch from."
    )


class EndingScreen(Screen[None]):
    """An ending: a summary of the run, then undo, retry, the timeline, a new game, a load or quit."""

    BINDINGS = [
        Binding("ctrl+z", "rewind('undo')", "Undo"),
        Binding("ctrl+r", "rewind('retry')", "Retry"),
        Binding("f4", "timeline", "Timeline"),
    ]
    """No letter keys (issue 43: typing "inventory" + Enter on an ending started a new game, "look" opened Load,
    "quests" quit); Load and Quit are the game's own F3 and ctrl+q, the rest the list's arrows and Enter."""

    def __init__(self, session: GameSession) -> None:
        super().__init__()
        self.session = session

    def compose(self) -> ComposeResult:
        timeline = self.session.timeline
        stuck = not (timeline.started and timeline.can_undo)
        with VerticalScroll(id="ending-box"):
            yield Static(ending_summary(self.session), id="ending-summary")
            yield Static(plain(ending_where(self.session), "italic"), id="ending-where")
            yield OptionList(
                Option("Undo the ending (ctrl+z)", id="undo", disabled=stuck),
                Option("Retry the last turn (ctrl+r)", id="retry", disabled=stuck),
                Option("Timeline (F4)", id="timeline"),
                Option("New game", id="new"),
                Option("Load a save (F3)", id="load"),
                Option("Quit (ctrl+q)", id="quit"),
            )
        yield Footer()

    def on_mount(self) -> None:
        # the choices take the keys, but the box opens at its top: scrolling them into view hid the ending's title
        choices = self.query_one(OptionList)
        choices.focus(scroll_visible=False)
        choices.highlighted = None  # nothing chosen until an arrow picks: an Enter typed on from play does nothing
        self._hinted = False

    def on_key(self, event: events.Key) -> None:
        """A letter typed as if to the action line: say once how the ending's choices are made."""
        if event.is_printable and not self._hinted:
            self._hinted = True
            self.notify("The story has ended: choose with the arrows and Enter (ctrl+z undoes the ending).")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        choice = event.option.id or ""
        if choice in ("undo", "retry"):
            self.action_rewind(choice)
        elif choice == "timeline":
            self.action_timeline()
        else:
            self.action_choose(choice)

    def action_choose(self, choice: str) -> None:
        self.app.menu(choice)  # type: ignore[attr-defined]

    def action_rewind(self, verb: str) -> None:
        """Undo or retry the ending turn on the play screen beneath, as its ctrl+z and ctrl+r do; the app shows
        this screen again when the game is still at an ending after it (``StoryEchoApp.turn_played``)."""
        from game.tui.play import PlayScreen

        timeline = self.session.timeline
        if not (timeline.started and timeline.can_undo):
            self.notify("This save keeps no turn before the ending.", severity="warning")
            return
        play = next((s for s in self.app.screen_stack if isinstance(s, PlayScreen)), None)
        if play is None or play.session is not self.session or play.busy.is_set():
            return
        self.dismiss(None)
        play.action_rewind(verb)

    def action_timeline(self) -> None:
        from game.tui.timeline import TimelineScreen

        self.app.push_screen(TimelineScreen(self.session, self.app.game_lock))  # type: ignore[attr-defined]


class LoadingBar(Vertical):
    """A label and a progress bar for what loads in the background (safe to update before it is composed)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._shown: tuple[str, int, int] = ("", 0, 0)

    def compose(self) -> ComposeResult:
        yield Static("", id="loading-label")
        yield ProgressBar(total=None, show_eta=False, id="loading-bar")

    def on_mount(self) -> None:
        self._apply()

    def show(self, label: str, done: int, total: int) -> None:
        self._shown = (label, done, total)
        self._apply()

    def _apply(self) -> None:
        label, done, total = self._shown
        labels = self.query("#loading-label").results(Static)
        bars = self.query("#loading-bar").results(ProgressBar)
        for widget in labels:
            widget.update(plain(f"{label} {done}/{total}" if total and label else label))
        for bar_widget in bars:
            bar_widget.update(total=total or None, progress=done)
