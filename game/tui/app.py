"""The Textual game: ``storyecho`` with no arguments.

The title screen shows at once; the story engine and the embedding model load in a worker thread with a visible
progress bar, and a game is built in another; it plays at once, its lore searched by keyword until the vectors the
index lacks have been embedded on a thread of their own (``game.tui.lore``: "Lore ready" when they land). Every
operation on the game (a turn, a save, a load, closing) runs in a worker or thread under
:attr:`StoryEchoApp.game_lock`, so the screen never freezes and two of them never touch the session at once. Heavy
libraries (torch, chromadb, openai, llama.cpp) are imported in those workers, never before the first frame.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import ScreenStackError, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from game.tui.leaving import LeavingApp, to_stderr
from game.tui.loading import ask_before_loading
from game.tui.logs import HoldsLogs
from game.tui.messages import Autosaved
from game.tui.themes import THEMES, TITLE, theme_for
from game.tui.title import EndingScreen, LoadingBar, LoadingScreen, StoryScreen, TitleScreen, story_packs

if TYPE_CHECKING:
    from game.config import Settings
    from game.engine.results import TurnResult
    from game.engine.session import GameSession
    from game.memory.search.knowledge import BackgroundIndexing
    from game.memory.vectors.embedders import Embedder
    from game.saves.slots import SlotInfo, SlotStore
    from game.world.content import ContentPack

AUTOSAVE = "autosave"
log = logging.getLogger("storyecho.tui")


class StoryEchoApp(HoldsLogs, LeavingApp):
    """StoryEcho in the terminal."""

    CSS_PATH = Path(__file__).parent / "app.tcss"
    TITLE = "StoryEcho"
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = [
        Binding("ctrl+q", "request_quit", "Quit", priority=True),
        Binding("f1", "help", "Help"),
        Binding("f2", "save", "Save"),
        Binding("f3", "load", "Load"),
        Binding("f5", "quick_save", "Quick save", show=False),
        Binding("f9", "quick_load", "Quick load", show=False),
        Binding("f12", "debug", "Memory"),
    ]

    def __init__(
        self,
        settings: Settings | Callable[[], Settings],
        *,
        config_path: Path | None = None,
        story: str | None = None,
        content_dir: Path | None = None,
    ) -> None:
        """``settings``: the settings, or what reads them (``game.main``'s path: called after the first frame)."""
        super().__init__()
        self._read_settings: Callable[[], Settings] | None = settings if callable(settings) else None
        self._settings: Settings | None = None if callable(settings) else settings
        self._settings_lock = threading.Lock()
        self.settings_error: str | None = None
        """Why the settings could not be read (the app then closes, and :func:`run_app` reports it)."""
        self.config_path = config_path or Path("storyecho.toml")
        self.story = story
        self.content_dir = content_dir
        self._slots: SlotStore | None = None
        self.session: GameSession | None = None
        self.game_lock = threading.Lock()
        """Held by every worker that touches the session (turns, saves, loads, close)."""
        self.ready = threading.Event()
        """Set when the warm-up (engine modules, embedder) is done: a game may start."""
        self.embedder: Embedder | None = None
        self._lore: BackgroundIndexing | None = None  # the game's lore embedding as it plays; stopped before it closes
        self.loading: tuple[str, int, int] = ("Starting", 0, 0)
        self.saved_turn = 0
        """The turn of the last save of this game (quit asks first when the game is past it)."""
        for theme in THEMES:
            self.register_theme(theme)
        # The title's theme is set without its watcher, as App.__init__ sets its default: no stylesheet has been
        # parsed yet, and the watcher would parse every rule a second time before the first frame (0.08 s).
        self.set_reactive(StoryEchoApp.theme, TITLE.name)
        self.set_class(TITLE.dark, "-dark-mode", update=False)
        self.set_class(not TITLE.dark, "-light-mode", update=False)
        self.set_class(True, f"-theme-{TITLE.name}", update=False)
        self.stylesheet.set_variables(self.get_css_variables())

    # -------------------------------------------------------------- startup
    def on_mount(self) -> None:
        self.push_screen(TitleScreen())
        # the heavy imports start once the title is on screen: an import holds the GIL, and would delay the frame;
        # so does reading the saves for Continue, which the title shows as soon as the newest one is read
        self.call_after_refresh(self._after_first_frame)

    def _after_first_frame(self) -> None:
        if self._settings is None:
            self.read_settings()
        else:
            self._start()

    def _start(self) -> None:
        self.find_continue()
        self.warm_up()
        if self.story:  # `storyecho play --story ID` plays that story at once, as the README says (issue 46)
            self.start_game(self.story)

    @work(thread=True, group="warm-up")
    def read_settings(self) -> None:
        """Read and validate the settings off the UI thread, then start; a bad value closes the app."""
        from game.config import ConfigError

        try:
            self.settings  # noqa: B018 - reads them
        except (ConfigError, OSError) as exc:
            self.settings_error = str(exc)
            self.call_from_thread(self.exit, return_code=2)
            return
        self.call_from_thread(self._start)

    @property
    def settings(self) -> Settings:
        """The game's settings, read on first use when the app was given what reads them."""
        with self._settings_lock:  # read once: the title's menu may ask while the warm-up is still reading them
            if self._settings is None:
                assert self._read_settings is not None
                self._settings = self._read_settings()
        return self._settings

    @settings.setter
    def settings(self, settings: Settings) -> None:
        self._settings = settings

    @property
    def slots(self) -> SlotStore:
        """The save slots of the configured data folder (the saves module loads on first use)."""
        from game.saves.slots import SlotStore

        if self._slots is None or self._slots.root != Path(self.settings.data_dir):
            self._slots = SlotStore(self.settings.data_dir)
        return self._slots

    @work(thread=True, group="saves")
    def find_continue(self) -> None:
        """Read the newest save for the title's Continue, off the UI thread."""
        label = self._continue_label()
        self.call_from_thread(self._set_continue, label)

    def _set_continue(self, label: str | None) -> None:
        for screen in self.screen_stack:
            if isinstance(screen, TitleScreen):
                screen.set_continue(label)

    @work(thread=True, group="warm-up")
    def warm_up(self) -> None:
        """Import the engine's libraries and load the embedding model, with progress; then a game may start.

        No lore is indexed here: a game plays at once and embeds its story's missing lore vectors meanwhile
        (``game.tui.lore``), so what a first start embeds never stands between the title and play.
        """
        steps = 2 if self.settings.memory.embeddings else 1
        self.progress("Loading the story engine", 0, steps)
        from game import wiring  # the narrators, memory stores and their libraries

        threading.Thread(target=wiring.preload_store, args=(self.settings,), name="preload", daemon=True).start()
        if self.settings.memory.embeddings:
            self.progress("Loading the memory model", 1, steps)
            self.embedder = wiring.make_embedder(self.settings)
        self.ready.set()  # before the last progress: the title hides its bar once the game is ready
        self.progress("Ready", steps, steps)

    def progress(self, label: str, done: int, total: int) -> None:
        """Show loading progress (from any thread)."""
        self.loading = (label, done, total)
        if threading.get_ident() == self._thread_id:
            self.show_loading()
        else:
            self.call_from_thread(self.show_loading)

    def show_loading(self) -> None:
        label, done, total = self.loading
        for bar in self.screen.query(LoadingBar):
            bar.show(label, done, total)
            bar.display = not (self.ready.is_set() and isinstance(self.screen, TitleScreen))

    def _continue_label(self) -> str | None:
        latest = self._latest_slot()
        if latest is None:
            return None
        return f"{latest.name}: {latest.story_title or latest.story_id}, turn {latest.turn}"

    def _latest_slot(self) -> SlotInfo | None:
        try:
            return self.slots.latest("autosave") or self.slots.latest()
        except OSError:
            return None

    # ----------------------------------------------------------------- menu
    def menu(self, choice: str) -> None:
        """A choice of the title or ending screen."""
        if choice == "new":
            if self.story:
                self.start_game(self.story)
            else:
                self.push_screen(StoryScreen(self._packs()), self._picked_story)
        elif choice == "continue":
            latest = self._latest_slot()
            if latest is not None:
                ask_before_loading(self, self.slots, latest.name, self._load)
        elif choice == "load":
            self.action_load()
        elif choice == "settings":
            self.action_settings()
        elif choice == "help":
            self.action_help()
        elif choice == "quit":
            self.action_request_quit()

    def _packs(self) -> list[ContentPack]:
        """The stories to pick from (not via game.wiring: the engine imports on the warm-up thread, not this one)."""
        from game.world.library import StoryLibrary

        return story_packs(StoryLibrary.of(self.settings.stories_folder, self.content_dir), self.notify)

    def _picked_story(self, story: str | None) -> None:
        if story:
            self.start_game(story)

    # ----------------------------------------------------------------- game
    def start_game(self, story: str | None, *, slot: str | None = None, branch: bool = False) -> None:
        """Build a game of ``story`` (or the one in ``slot``, or a branch of it) in a worker, then play it."""
        self._show(LoadingScreen("Loading your game…" if slot else "Preparing the story…"))
        self._build(story, slot, branch)

    @work(thread=True, exclusive=True, group="game")
    def _build(self, story: str | None, slot: str | None, branch: bool) -> None:
        from game import wiring
        from game.engine.kept import go_on
        from game.saves.format import SaveError

        with self.game_lock:
            self._close_session()
            self.ready.wait()
            try:
                session, more = wiring.make_session(
                    story,
                    self.settings,
                    slot,
                    embedder=self.embedder,
                    progress=self.progress,
                    say=lambda message: self.call_from_thread(self.notify, message),
                    on_text=self._stream,
                    lore_later=True,
                )
            except (SaveError, OSError, ValueError) as exc:
                self.call_from_thread(self._failed_start, str(exc))
                return
            except Exception as exc:  # a game that cannot start must not take the app down (logged)
                log.exception("the game could not start")
                self.call_from_thread(self._failed_start, f"{type(exc).__name__}: {exc}")
                return
            autosave = f"{AUTOSAVE}-{session.engine.pack.story.id}"
            try:  # a new game never overwrites the last one, nor a loaded one another game (game.engine.kept)
                loaded = slot or (None if story else autosave)  # None: a new game
                notices = go_on(session, autosave, loaded, "F3 to load it", branch=branch)
            except SaveError as exc:  # no slot of its own for the branch: it is not played
                session.close(save=False)
                self.call_from_thread(self._failed_start, str(exc))
                return
            self.call_from_thread(self._enter, session, notices + more)

    def _failed_start(self, message: str) -> None:
        self.notify(message, title="Could not start the game", severity="error", markup=False)
        self._to_title()

    def _enter(self, session: GameSession, notices: list[str]) -> None:
        self.session = session
        self.saved_turn = session.engine.state.turn

        # a message, not call_from_thread: closing the game waits for the autosave thread on this thread
        def autosaved(turn: int, notice: str | None) -> None:
            self.post_message(Autosaved(session, turn, notice))

        session.on_autosave = autosaved
        from game.tui.lore import index_lore
        from game.tui.play import PlayScreen

        self.theme = theme_for(session.engine.pack.story.genre)
        play = PlayScreen(session, notices)
        self._show(play)
        if session.engine.state.ending:
            self.push_screen(EndingScreen(session))
        self._lore = index_lore(play, session)  # keyword lore until its vectors land

    def _show(self, screen: Screen[Any]) -> None:
        """Show ``screen`` above the title (the title stays at the bottom of the stack)."""
        if isinstance(self.screen, TitleScreen):
            self.push_screen(screen)
        else:
            while len(self.screen_stack) > 3 or (len(self.screen_stack) == 3 and self.screen.is_modal):
                self.pop_screen()
            self.switch_screen(screen)

    def _to_title(self) -> None:
        while len(self.screen_stack) > 2:
            self.pop_screen()
        self.theme = TITLE.name
        if isinstance(self.screen, TitleScreen):
            self.find_continue()

    def _stream(self, chunk: str) -> None:
        from game.tui.play import PlayScreen

        try:
            screen = self.screen
            if isinstance(screen, PlayScreen):
                self.call_from_thread(screen.stream, chunk)
        except (ScreenStackError, RuntimeError):  # the game closed while a turn it abandoned still streams (a quit)
            return

    def turn_played(self, result: TurnResult) -> None:
        """After each turn: note autosaves, show an ending (reached, or still there after an undo or retry)."""
        session = self.session
        if session is None:
            return
        state = session.engine.state
        if result.meta in ("save", "load") and result.ok:
            self.saved_turn = state.turn
        shown = any(isinstance(screen, EndingScreen) for screen in self.screen_stack)
        if state.ending and result.meta in (None, "load", "undo", "redo", "retry") and not shown:
            self.push_screen(EndingScreen(session))

    def on_autosaved(self, message: Autosaved) -> None:
        """An autosave was written (after its turn, on the autosave thread), or failed."""
        if message.session is not self.session:
            return  # a game closed meanwhile
        if message.notice is None:
            # a save or load told before this message (F2 at a later turn, a load back) stays the last save
            if self.saved_turn <= message.turn <= message.session.engine.state.turn:
                self.saved_turn = message.turn
            self.notify(f"Autosaved at turn {message.turn}.", timeout=2)
        else:  # the next turn's result tells it too, in the story
            self.notify(message.notice, title="Autosave failed", severity="error", markup=False)

    def on_unmount(self) -> None:
        if self._lore is not None:  # the app closed without closing its game (an error, a test): no batch outlives it
            self._lore.stop()

    # -------------------------------------------------------------- actions
    def action_help(self) -> None:
        from game.tui.help import HelpScreen

        self.push_screen(HelpScreen(self.session.engine.pack if self.session else None))

    def action_settings(self) -> None:
        from game.tui.settings import SettingsScreen

        self.push_screen(SettingsScreen(self.settings, self.config_path), self._settings_saved)

    def _settings_saved(self, settings: Settings | None) -> None:
        if settings is not None:
            self.settings = settings
            self.notify("Settings saved. The narrator and memory settings apply to the next game.")

    def action_debug(self) -> None:
        if self.session is None:
            self.notify("Start a game first: the memory panel shows what each turn's prompt held.")
            return
        from game.tui.debug import DebugScreen

        if isinstance(self.screen, DebugScreen):
            self.pop_screen()
        else:
            self.push_screen(DebugScreen(self.session))

    def action_save(self) -> None:
        if self.session is None:
            self.notify("There is no game to save yet.")
            return
        from game.tui.slots import SlotScreen

        self.push_screen(SlotScreen(self.slots, "save", self.session.engine.pack.story.id), self._save_to)

    def _save_to(self, name: str | None) -> None:
        if name:
            self._save(name, "manual")

    def action_quick_save(self) -> None:
        if self.session is None:
            self.notify("There is no game to save yet.")
            return
        self._save(self.session.quick_slot, "quick")

    @work(thread=True, group="game")
    def _save(self, name: str, kind: str) -> None:
        from game.saves.format import SaveError

        with self.game_lock:
            session = self.session
            if session is None:
                return
            try:
                message = session.save(name, kind=kind)  # type: ignore[arg-type]
            except SaveError as exc:
                self.call_from_thread(self.notify, str(exc), title="Not saved", severity="error", markup=False)
                return
            self.saved_turn = session.engine.state.turn
            self.call_from_thread(self.notify, message, markup=False)

    def action_load(self) -> None:
        from game.tui.slots import SlotScreen

        self.push_screen(SlotScreen(self.slots, "load"), self._load_from)

    def action_quick_load(self) -> None:
        """Load this story's quick save; at the title, the newest quick save, and say whose it is (issue 43: F9
        loaded another story's quick save without a word)."""
        from game.engine.session import QUICK_SLOT

        playing = self.session is not None  # this story's own, by its whole name ("quick-lamp" is not "quick-lamp_2")
        newest = self.slots.newest(self.session.quick_slot if self.session else f"{QUICK_SLOT}-", whole=playing)
        if newest is None:
            self.notify("There is no quick save of this story yet (F5 makes one).")
            return
        self.notify(f"Quick load: {newest.story_title}, turn {newest.turn}.", markup=False)
        self._load_from(newest.name)

    def _load_from(self, name: str | None) -> None:
        """Load slot ``name``, once asked what must be (``loading.py``: a game open in another window, progress not
        saved yet)."""
        if name:
            ask_before_loading(self, self.slots, name, self._load, self.session, self.saved_turn)

    def _load(self, name: str, branch: bool) -> None:
        self.start_game(None, slot=name, branch=branch)

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Memory debug panel", "What the last turn's prompt held, and why (F12)", self.action_debug)
        yield SystemCommand("Save game", "Save to a slot (F2)", self.action_save)
        yield SystemCommand("Load game", "Load a slot (F3)", self.action_load)
        yield SystemCommand("Settings", "Narrator, model, memory", self.action_settings)
        yield SystemCommand("Help", "How to play (F1)", self.action_help)


def run_app(
    settings: Settings | Callable[[], Settings], *, story: str | None = None, config_path: Path | None = None
) -> int:
    """Play until the player quits, or the game is ended otherwise (a signal; its browser tab gone under ``storyecho
    serve``): the game is saved either way; 2 when the settings are invalid (the reason on stderr)."""
    app = StoryEchoApp(settings, story=story, config_path=config_path)
    app.handles_signals = True
    try:
        app.run()
    finally:  # every way out saves the game as ctrl+q does (game.tui.leaving); after ctrl+q there is none left
        app.leave(to_stderr)
    if app.settings_error is not None:
        print(f"storyecho: {app.settings_error}", file=sys.stderr)
        return 2
    return 0
