"""The timeline screen: this session's turns, each with its place and a line of narration; branch from any one.

Enter on a turn saves the game as it was after that turn to a new slot (``GameSession.branch``, in a worker
under the app's game lock), and the game being played goes on; a name that cannot be used is told in the
dialog. The name is typed in the input below the table (a default is offered). Every place and line is shown
as plain text.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Static

from game.engine.timeline import Compacted, Moment
from game.saves.format import SaveError
from game.saves.slots import check_name
from game.tui.text import plain

if TYPE_CHECKING:
    from game.engine.session import GameSession

COLUMNS = ("Turn", "Place", "Action", "What happened")


def default_name(story_id: str, turn: int) -> str:
    return f"{story_id}-branch-{turn}"


class TimelineScreen(ModalScreen[None]):
    """This session's turns; Enter branches from the one highlighted (Escape closes)."""

    DEFAULT_CSS = """
    TimelineScreen {
        align: center middle;
    }
    TimelineScreen > #timeline-dialog {
        width: 100%;
        max-width: 120;
        height: 100%;
        max-height: 32;
        border: thick $primary;
        background: $surface;
        padding: 0 1;
    }
    TimelineScreen #timeline-title {
        text-style: bold;
        height: 1;
    }
    TimelineScreen #timeline-table {
        height: 1fr;
        min-height: 3;
    }
    TimelineScreen #branch-name {
        margin-top: 1;
    }
    TimelineScreen #timeline-status {
        height: auto;
        max-height: 2;
        color: $error;
    }
    TimelineScreen #timeline-keys {
        height: 1;
        color: $text-muted;
    }
    """

    BINDINGS = [Binding("escape", "close", "Close")]

    def __init__(self, session: GameSession, lock: threading.Lock) -> None:
        super().__init__()
        self.session = session
        self.game_lock = lock
        self.moments: list[Moment | Compacted] = session.timeline.played() if session.timeline.started else []
        self.story_id = session.engine.pack.story.id

    def compose(self) -> ComposeResult:
        with Vertical(id="timeline-dialog"):
            yield Static("Timeline: pick a turn to branch from (this game goes on)", id="timeline-title")
            yield DataTable(id="timeline-table", cursor_type="row", zebra_stripes=True)
            yield Input(placeholder="name of the new slot", id="branch-name", max_length=64)
            yield Static("", id="timeline-status", markup=False)
            yield Static("Enter: branch here · Tab: table/name · Esc: close", id="timeline-keys", markup=False)

    def on_mount(self) -> None:
        table: DataTable[Text] = self.query_one("#timeline-table", DataTable)
        table.add_columns(*COLUMNS)
        for moment in self.moments:
            table.add_row(
                Text(str(moment.turn), justify="right"),
                plain(moment.place),
                plain(moment.action or "(start)"),
                plain(moment.line),
                key=str(moment.turn),
            )
        if self.moments:
            table.move_cursor(row=len(self.moments) - 1)
            self.query_one("#branch-name", Input).value = default_name(self.story_id, self.moments[-1].turn)
        table.focus()

    def highlighted(self) -> Moment | Compacted | None:
        table: DataTable[Text] = self.query_one("#timeline-table", DataTable)
        row = table.cursor_row
        return self.moments[row] if 0 <= row < len(self.moments) else None

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        moment = self.highlighted()
        name = self.query_one("#branch-name", Input)
        if moment is not None and (not name.value or name.value.startswith(f"{self.story_id}-branch-")):
            name.value = default_name(self.story_id, moment.turn)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.branch()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.branch()

    def branch(self) -> None:
        moment = self.highlighted()
        if moment is None:
            return
        name = self.query_one("#branch-name", Input).value.strip()
        try:
            check_name(name)
        except SaveError as exc:
            self.query_one("#timeline-status", Static).update(plain(str(exc)))
            return
        self._branch(moment.turn, name)

    @work(thread=True, exclusive=True, group="branch")
    def _branch(self, turn: int, name: str) -> None:
        try:
            with self.game_lock:
                message = self.session.branch(turn, name)
        except SaveError as exc:
            self.app.call_from_thread(self.query_one("#timeline-status", Static).update, plain(str(exc)))
            return
        self.app.call_from_thread(self._done, message)

    def _done(self, message: str) -> None:
        self.app.notify(message, markup=False)
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)
