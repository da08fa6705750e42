"""The play screen: header, scene, narration log, choices, action input and sidebar.

A turn runs in a worker thread (:meth:`PlayScreen.play`): the input stays
responsive, a spinner runs while the narrator writes, streamed narration shows
as it arrives, marked as a draft (the rules run after the narrator writes), and
is replaced by the turn's narration, with a note when the rules refused part of
it; a failed turn shows its message and changes nothing.
Combat, quest updates, achievements and endings are shown as such beside the
prose, from the effects the rules applied. While the story's lore is still being
indexed, a line under the story says it is searched by keyword meanwhile, then
that it is ready (``game.tui.lore``).

The marks the play screen draws (here and in widgets.py) are one cell wide in
every terminal: no emoji (a terminal may draw crossed swords or a heavy check
mark two cells wide where Textual counts one, and the sidebar's border moved a
column) and no East Asian "ambiguous" width (two cells in a CJK locale);
tests/tui/test_play_screen.py checks them. The log is never focused: a click in
it leaves the keys with the action line.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, RichLog, Static

from game.engine.results import TurnResult
from game.language.parser import parse
from game.text import clip
from game.tui.lore import LoreLine
from game.tui.messages import LoreIndexed
from game.tui.text import plain
from game.tui.widgets import (
    ActionInput,
    Choices,
    NarrationLog,
    WorldSuggester,
    header_text,
    scene_text,
    sidebar_text,
)
from game.world.choices import choices_after
from game.world.describe import node_description

if TYPE_CHECKING:
    from game.engine.session import GameSession
    from game.llm.stream import NarrationStream
    from game.memory.records import Episode

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
NOTICE = "✱ "
"""The mark of a notice in the log."""
REWRITTEN_TURNS = 20
"""Turns the log shows again after an undo, redo or retry."""
EVENT_STYLES = {
    "start_combat": ("✕ Combat", "bold red"),
    "defeated": ("✕ Defeated", "bold green"),
    "knocked_out": ("✘ Knocked out", "bold red"),
    "quest_started": ("✦ New quest", "bold cyan"),
    "objective_done": ("✓ Objective", "green"),
    "quest_completed": ("✓ Quest completed", "bold green"),
    "achievement": ("✶ Achievement", "bold yellow"),
    "level_up": ("⇑ Level up", "bold yellow"),
    "talent": ("✦ Talent", "yellow"),
    "items_gained": ("+ Item", ""),
    "items_lost": ("- Item", "dim"),
    "ending": ("❖ Ending", "bold magenta"),
}


def event_lines(result: TurnResult, session: GameSession) -> list[Text]:
    """The turn's notable effects as short tagged lines ("✓ Quest completed: The Mist's Call")."""
    lines = []
    for applied in result.applied:
        tag = EVENT_STYLES.get(applied.effect)
        if tag is None:
            continue
        label, style = tag
        detail = _name_of(applied.effect, applied.detail, session)
        if applied.effect == "quest_completed":  # the rules' line, rewards and all, is said here once
            detail = next((rest for rest in _restated(result, "Quest complete: ") if rest.startswith(detail)), detail)
        lines.append(Text.assemble((label, style), ": ", plain(detail)))
    return lines


def _restated(result: TurnResult, prefix: str) -> list[str]:
    """The narration's lines that open with ``prefix``, without it and their last full stop."""
    return [line[len(prefix) :].rstrip(".") for line in result.narration.split("\n") if line.startswith(prefix)]


RESTATED = {
    "quest_started": "New quest: ",
    "objective_done": "Objective complete: ",
    "quest_completed": "Quest complete: ",  # else said above the tags: above "✦ New quest" of the same quest (issue 46)
    "achievement": "Achievement unlocked: ",
    "talent": "Talent learned: ",
    "level_up": "Level up! ",
}
"""The rules' lines a tagged event line says again (in colour, below the narration): shown once, as the tag."""


def untagged(result: TurnResult) -> str:
    """The narration without the rules' lines that :func:`event_lines` tags ("Objective complete: ..." and "✓
    Objective: ..." said one thing twice)."""
    prefixes = tuple(RESTATED[a.effect] for a in result.applied if a.effect in RESTATED)
    if not prefixes:
        return result.narration
    return "\n".join(line for line in result.narration.split("\n") if not line.startswith(prefixes))


def _name_of(effect: str, detail: str, session: GameSession) -> str:
    pack = session.engine.pack
    if effect in ("quest_started", "quest_completed") and (quest := pack.quest(detail)):
        return quest.title
    if effect in ("items_gained", "items_lost") and detail in pack.items:
        return pack.items[detail].name
    if effect in ("start_combat", "defeated") and detail in pack.enemies:
        return pack.enemies[detail].name
    if effect == "achievement":
        found = next((a for a in pack.achievements if a.id == detail), None)
        return found.name if found else detail
    if effect == "talent":
        talent = next((t for t in pack.talents if t.id == detail), None)
        return f"{talent.name}: {talent.description}" if talent else detail
    if effect == "objective_done":
        quest_id, _, objective_id = detail.partition(":")
        quest = pack.quest(quest_id)
        found_objective = next((o for o in quest.objectives if o.id == objective_id), None) if quest else None
        return found_objective.description if found_objective else detail
    if effect == "ending":
        found_ending = next((e for e in pack.endings if e.id == detail), None)
        return found_ending.title if found_ending else detail
    return detail


DRAFT = "✎ draft, until the rules decide: "
"""What streamed narration says it is: the narrator writes before the rules run, and they may refuse part of it."""
REPLACED = "✎ The rules refused part of the narrator's draft; this is what happened:"
"""Said in the log when the narration shown replaces a streamed draft the rules refused."""
ECHO_CHARS = 300
"""Most of the player's action the log echoes (the engine refuses an action over 500 characters)."""


class PlayScreen(Screen[None]):
    """One game being played."""

    CSS_PATH = Path(__file__).parent / "play.tcss"
    BINDINGS = [
        Binding("escape", "focus_input", "Input", show=False),
        Binding("pageup", "scroll_log(-1)", "Scroll up", show=False),
        Binding("pagedown", "scroll_log(1)", "Scroll down", show=False),
        Binding("ctrl+home", "scroll_log(-2)", "Log start", show=False),
        Binding("ctrl+end", "scroll_log(2)", "Log end", show=False),
        Binding("ctrl+z", "rewind('undo')", "Undo"),
        Binding("ctrl+r", "rewind('retry')", "Retry"),
        Binding("ctrl+y", "rewind('redo')", "Redo", show=False),
        Binding("f4", "timeline", "Timeline", show=False),
    ]

    def __init__(self, session: GameSession, notices: list[str] | None = None) -> None:
        super().__init__()
        self.session = session
        self.notices = notices or []
        self.busy = threading.Event()
        self.suggester = WorldSuggester()
        self._choices: list[str] = []
        self._frame = 0
        self._spinning = False
        self._streamed = ""
        self._raw = ""
        self._decoder: NarrationStream | None = None
        self._decoding = False
        self._rewinding = False
        """The turn under way is an undo, redo or retry: the log is written again from memory after it."""

    # --------------------------------------------------------------- layout
    def compose(self) -> ComposeResult:
        yield Static(id="header")
        with Horizontal(id="main"):
            with Vertical(id="story"):
                yield Static(id="scene")
                yield NarrationLog(id="log", wrap=True, markup=False, auto_scroll=True, min_width=20)
                yield Static(id="stream", markup=False)
                yield Static(id="status", markup=False)
                yield LoreLine(id="lore", markup=False)
                yield Choices(id="choices")
                yield ActionInput(id="action", suggester=self.suggester)
            with VerticalScroll(id="sidebar", can_focus=False):  # a click in it leaves the keys with the input
                yield Static(id="stats")
        yield Footer()

    def on_mount(self) -> None:
        engine = self.session.engine
        log = self.query_one("#log", RichLog)
        if engine.state.turn == 0:
            log.write(Text(engine.pack.story.title, style="bold"))
            log.write(plain(engine.pack.story.intro))
            log.write(plain(node_description(engine.state, engine.pack)))
        else:
            log.write(Text(f"{engine.pack.story.title}: continuing at turn {engine.state.turn}.", style="bold"))
            self._write_turns(engine.memory.last_episodes(3))
        for notice in self.notices:
            log.write(_notice(notice))
        self.query_one("#stream", Static).display = False
        self.query_one("#status", Static).display = False
        self.refresh_world(choices_after([], engine.state, engine.pack))  # a new game or Continue: what to try
        self.query_one("#action", ActionInput).focus()
        self.set_interval(0.1, self._spin)

    # ---------------------------------------------------------------- state
    def refresh_world(self, choices: list[str] | None = None) -> None:
        """Header, scene, sidebar, completion words and (when given) the choices, from the state as it is."""
        engine = self.session.engine
        state, pack = engine.state, engine.pack
        self.query_one("#header", Static).update(header_text(state, pack))
        self.query_one("#scene", Static).update(scene_text(state, pack, banner=self.app.size.height >= 30))
        self.query_one("#stats", Static).update(sidebar_text(state, pack))
        self.suggester.update(state, pack)
        if choices is not None:
            self._choices = list(choices)
            self.query_one("#choices", Choices).show(self._choices)

    # ----------------------------------------------------------------- turns
    def on_input_submitted(self, event: ActionInput.Submitted) -> None:
        text = event.value.strip()
        if not text:
            return
        if self.busy.is_set():
            self.notify("The narrator is still writing the last turn.", severity="warning")
            return
        action = self.query_one("#action", ActionInput)
        action.remember(text)
        action.value = ""
        self.submit(text)

    def on_action_input_choice(self, event: ActionInput.Choice) -> None:
        self.pick(event.number)

    def on_choices_picked(self, event: Choices.Picked) -> None:
        self.submit(event.choice)

    def pick(self, number: int) -> None:
        if 1 <= number <= len(self._choices) and not self.busy.is_set():
            self.submit(self._choices[number - 1])

    def submit(self, text: str) -> None:
        """Play ``text`` (help and quit are the app's; everything else is the session's)."""
        verb = parse(text).verb
        if verb == "help":
            self.app.action_help()  # type: ignore[attr-defined]
            return
        if verb == "quit":
            self.app.action_request_quit()  # type: ignore[attr-defined]
            return
        if self.busy.is_set():
            return
        from game.engine.rewind import REWIND_VERBS
        from game.llm.stream import NarrationStream

        self._rewinding = verb in REWIND_VERBS
        self.busy.set()
        self._streamed = ""
        self._raw = ""
        self._decoding = False
        self._decoder = NarrationStream()
        shown = clip(text, ECHO_CHARS)  # a 10,000-character paste is not echoed whole before it is refused
        self.query_one("#log", RichLog).write(_echo(shown))
        self.play(text)

    def play(self, text: str) -> None:
        """Run the turn on a daemon thread of its own, not a Textual thread worker: those run on asyncio's default
        executor, which is joined when the game closes, so a turn stalled on an endpoint would hold the quit for
        minutes. Quitting abandons such a turn (``StoryEchoApp._quit``)."""
        threading.Thread(target=self._turn, args=(text,), name="turn", daemon=True).start()

    def _turn(self, text: str) -> None:
        """One turn, under the game lock (the session never raises)."""
        try:
            with self.app.game_lock:  # type: ignore[attr-defined]
                result = self.session.play(text)
        except Exception as exc:  # noqa: BLE001 - the app must survive anything a turn does
            self._tell(self._failed, f"{type(exc).__name__}: {exc}")
            return
        self._tell(self.show_result, result)

    def _tell(self, show: Callable[[Any], None], what: object) -> None:
        """Show a turn's end on the screen, unless the game closed while it was out."""
        with contextlib.suppress(RuntimeError):  # the app is no longer running: nothing to show
            self.app.call_from_thread(show, what)

    def stream(self, chunk: str) -> None:
        """Narration as the model writes it (called on the UI thread).

        A model narrator streams its JSON answer: the ``narration`` string is
        decoded from it as it arrives; a narrator that streams prose (the
        local one decodes its own) is shown as it comes.
        """
        self._raw += chunk
        decoder = self._decoder
        if decoder is not None and self._decoding:
            chunk = decoder.feed(chunk)
        elif decoder is not None and ('"narration"' in self._raw or self._raw.lstrip().startswith("{")):
            self._decoding = True
            chunk = decoder.feed(self._raw)
        if not chunk:
            return
        self._streamed += chunk
        stream = self.query_one("#stream", Static)
        stream.display = True
        stream.update(Text.assemble((DRAFT, "dim"), plain(self._streamed[-600:], "italic dim")))

    def _failed(self, message: str) -> None:
        self.busy.clear()
        self.query_one("#log", RichLog).write(plain(f"Something went wrong: {message}. Nothing changed.", "red"))

    def show_result(self, result: TurnResult) -> None:
        self.busy.clear()
        self._streamed = ""
        self.query_one("#stream", Static).display = False
        log = self.query_one("#log", RichLog)
        if self._rewinding and result.ok:
            self._rewrite_log()
            if result.meta is not None:  # an undo or redo says what it did; a retry's telling is the last turn
                log.write(
                    Text.assemble(
                        ("↶ " if result.meta == "undo" else "↷ ", "bold"),
                        plain(result.narration.split("\n")[0], "italic"),
                    )
                )
        elif not result.ok:
            log.write(plain(result.error or result.narration or "That did not work.", "red"))
        else:
            if result.trace.narration_replaced:  # what streamed was told before the rules refused part of it
                log.write(Text(REPLACED, style="dim italic"))
            log.write(plain(untagged(result)))
        for line in event_lines(result, self.session):
            log.write(line)
        for notice in result.notices:
            log.write(_notice(notice))
        self.refresh_world(result.choices if result.ok else None)
        self.app.turn_played(result)  # type: ignore[attr-defined]

    def _rewrite_log(self) -> None:
        """The log as the game now stands (after an undo, redo or retry): nothing of a turn taken back stays."""
        engine = self.session.engine
        log = self.query_one("#log", RichLog)
        log.clear()
        log.write(Text(engine.pack.story.title, style="bold"))
        episodes = engine.memory.last_episodes(REWRITTEN_TURNS)
        if engine.state.turn <= REWRITTEN_TURNS:
            log.write(plain(engine.pack.story.intro))
        self._write_turns(episodes)
        if not episodes:
            log.write(plain(node_description(engine.state, engine.pack)))

    def _write_turns(self, episodes: list[Episode]) -> None:
        """Turns already played, as the log showed them when they were played."""
        log = self.query_one("#log", RichLog)
        for episode in episodes:
            log.write(_echo(episode.action))
            log.write(plain(episode.narration))

    def action_rewind(self, verb: str) -> None:
        self.submit(verb)

    def action_timeline(self) -> None:
        from game.tui.timeline import TimelineScreen

        self.app.push_screen(TimelineScreen(self.session, self.app.game_lock))  # type: ignore[attr-defined]

    def _spin(self) -> None:
        status = self.query_one("#status", Static)
        if self.busy.is_set():
            self._frame = (self._frame + 1) % len(SPINNER)
            status.update(Text(f"{SPINNER[self._frame]} The narrator is writing...", style="italic"))
            status.display = self._spinning = True
        elif self._spinning:
            self._spinning = status.display = False

    def on_lore_indexed(self, message: LoreIndexed) -> None:
        """The lore's indexing moved on, or is done (posted from its thread, ``game.tui.lore``)."""
        if message.session is not self.session:
            return
        for line in self.query("#lore").results(LoreLine):
            line.show(message)
        if message.ready:
            self.notify(message.notice(), title="Lore ready", timeout=8)

    def on_resize(self) -> None:
        self.refresh_world()

    def action_focus_input(self) -> None:
        self.query_one("#action", ActionInput).focus()

    def action_scroll_log(self, direction: int) -> None:
        """A page up (-1) or down (1), or to the start (-2) or the end (2) of the log."""
        log = self.query_one("#log", RichLog)
        if direction == -2:
            log.scroll_home(animate=False)
        elif direction == 2:
            log.scroll_end(animate=False)
        elif direction < 0:
            log.scroll_page_up()
        else:
            log.scroll_page_down()


def _notice(notice: str) -> Text:
    """How the log shows a notice (an autosave failure, a load's note)."""
    return Text.assemble((NOTICE, "bold"), plain(notice, "italic"))


def _echo(action: str) -> Text:
    """How the log shows an action the player typed."""
    return Text.assemble(("\n> ", "bold"), plain(action, "bold"))
