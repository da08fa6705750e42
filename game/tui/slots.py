"""The save/load screen: the slots of the data folder in a table, newest first.

The screen only picks a name: the app does the saving or loading with it. In
``load`` mode Enter on a slot dismisses with its name; in ``save`` mode a new
name is typed (checked with the slot store's own rules) or an existing slot is
picked, after a confirmation to overwrite it. ``d`` or Delete removes the
highlighted slot after a confirmation. Slots that cannot be read are listed as
``unreadable``, with the reason shown when highlighted. Every name, title and
place is shown as plain text.

The list is read off the screen's thread (a thread worker reading each save's
header, ``SlotStore.list``), so the screen opens at once with a "reading the
saves" row and takes keys (Escape, a typed name) while a folder of long games
is read; the rows replace it when they arrive. A header is all the list reads,
so the slot picked to load is checked in full (``SlotStore.verify``, on a
worker too) before the screen answers with it: a save damaged past its header
is shown as unreadable then, and the game in play is never closed for it.
"""

from __future__ import annotations

from typing import Literal

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Static
from textual.widgets.data_table import CellDoesNotExist, ColumnKey
from textual.worker import get_current_worker

from game.saves.format import SaveError
from game.saves.slots import SlotInfo, SlotStore, check_name, saved_at_text
from game.tui.confirm import ConfirmScreen
from game.tui.text import plain

SlotMode = Literal["save", "load"]
UNREADABLE = "unreadable"
COLUMNS = ("Slot", "Story", "Turn", "Place", "Kind", "Saved at")
ROWS_AT_ONCE = 25
"""Rows added to the table between two paints (about a screenful)."""
READING = "\x00reading"
"""The row key of the "reading the saves" row (never a slot name: those start with a letter or digit)."""


def slot_cells(info: SlotInfo) -> tuple[Text, ...]:
    """The table cells of one slot, as plain text (never markup)."""
    if info.error:
        return (plain(info.name), Text(UNREADABLE, style="bold red"), Text("-"), Text("-"), Text("-"), Text("-"))
    return (
        plain(info.name),
        plain(info.story_title or info.story_id),
        Text(str(info.turn), justify="right"),
        plain(info.place),
        plain(info.kind),
        plain(saved_at_text(info.saved_at)),
    )


class SlotScreen(ModalScreen[str | None]):
    """Pick a save slot; dismisses with its name, or None (Escape).

    Args:
        slots: the slot store to list (and delete from).
        mode: ``load`` (pick an existing, readable slot) or ``save`` (type a new
            name or pick a slot to overwrite, after a confirmation).
        story_id: the story being played, to warn before overwriting another
            story's save.
    """

    DEFAULT_CSS = """
    SlotScreen {
        align: center middle;
    }
    SlotScreen > #slots-dialog {
        width: 100%;
        max-width: 110;
        height: 100%;
        max-height: 30;
        border: thick $primary;
        background: $surface;
        padding: 0 1;
    }
    SlotScreen #slots-title {
        text-style: bold;
        width: 100%;
        height: 1;
    }
    SlotScreen #slots-table {
        height: 1fr;
        min-height: 3;
    }
    SlotScreen #slot-name {
        margin-top: 1;
    }
    SlotScreen #slots-detail {
        height: auto;
        max-height: 2;
        color: $text-muted;
    }
    SlotScreen #slots-status {
        height: auto;
        max-height: 3;
    }
    SlotScreen .error {
        color: $error;
    }
    SlotScreen #slots-keys {
        height: 1;
        color: $text-muted;
    }
    """

    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("d,delete", "delete_slot", "Delete"),
    ]

    def __init__(self, slots: SlotStore, mode: SlotMode, story_id: str | None = None) -> None:
        super().__init__()
        if mode not in ("save", "load"):
            raise ValueError(f"mode must be 'save' or 'load', not {mode!r}")
        self.slots = slots
        self.mode: SlotMode = mode
        self.story_id = story_id
        self.infos: dict[str, SlotInfo] = {}
        self.listed = False
        """Whether the rows shown are the slots read (False while the list is being read)."""
        self.columns: list[ColumnKey] = []
        self._generation = 0
        """Counts the lists shown: rows still being added for an older one are dropped."""
        self.checking: str | None = None
        """The slot picked to load while its whole save is being checked."""

    # ------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        with Vertical(id="slots-dialog"):
            title = (
                "Save the game: pick a slot to overwrite, or type a new name" if self.mode == "save" else "Load a game"
            )
            yield Static(title, id="slots-title", markup=False)
            table: DataTable[Text] = DataTable(id="slots-table", cursor_type="row", zebra_stripes=True)
            yield table
            if self.mode == "save":
                yield Input(placeholder="new slot name, then Enter", id="slot-name", max_length=64)
            yield Static("", id="slots-detail", markup=False)
            yield Static("", id="slots-status", markup=False)
            keys = "Enter: save here · Tab: name/table" if self.mode == "save" else "Enter: load"
            yield Static(f"{keys} · d/Del: delete slot · Esc: close", id="slots-keys", markup=False)

    def on_mount(self) -> None:
        table = self.query_one("#slots-table", DataTable)
        self.refresh_slots()
        if self.mode == "save":
            self.query_one("#slot-name", Input).focus()
        else:
            table.focus()

    # ------------------------------------------------------------- state
    def refresh_slots(self, keep: int | None = None) -> None:
        """Read the slot list again, off the screen's thread, into the table (the cursor goes to row ``keep`` when
        given); until it arrives the table shows one "reading the saves" row."""
        table: DataTable[Text] = self.query_one("#slots-table", DataTable)
        table.clear(columns=True)  # columns as wide as their cells: not as the "reading" row's
        self.columns = table.add_columns(*COLUMNS)
        self.infos = {}
        self.listed = False
        self._generation += 1
        table.add_row(Text("reading the saves...", style="italic"), *(Text("") for _ in COLUMNS[1:]), key=READING)
        self.describe_highlighted()
        self._read_slots(keep)

    @work(thread=True, exclusive=True, group="slot-list")
    def _read_slots(self, keep: int | None) -> None:
        """The slots' headers, read on a worker thread, handed to :meth:`_show_slots` on the screen's."""
        try:
            infos: list[SlotInfo] | str = self.slots.list()
        except (SaveError, OSError) as exc:
            infos = f"Cannot list the saves in {self.slots.root}: {exc}"
        if not get_current_worker().is_cancelled:  # the screen was closed, or the list asked for again
            self.app.call_from_thread(self._show_slots, infos, keep)

    def _show_slots(self, infos: list[SlotInfo] | str, keep: int | None) -> None:
        if not self.is_attached:
            return
        table: DataTable[Text] = self.query_one("#slots-table", DataTable)
        table.clear(columns=True)
        self.columns = table.add_columns(*COLUMNS)
        if isinstance(infos, str):
            self.listed = True
            self.show(infos, error=True)
            self.show_detail("")
            return
        self.infos, self.listed = {}, False
        self._generation += 1
        self._add_rows(infos, keep, self._generation)

    def _add_rows(self, infos: list[SlotInfo], keep: int | None, generation: int) -> None:
        """Add the rows :data:`ROWS_AT_ONCE` at a time, the screen painted between (each row is measured and the
        table laid out again: a folder of many saves must not hold the screen's thread)."""
        if generation != self._generation or not self.is_attached:  # the list was read again, or the screen closed
            return
        table: DataTable[Text] = self.query_one("#slots-table", DataTable)
        for info in infos[:ROWS_AT_ONCE]:
            self.infos[info.name] = info
            table.add_row(*slot_cells(info), key=info.name)
        if len(infos) > ROWS_AT_ONCE:
            self.call_after_refresh(self._add_rows, infos[ROWS_AT_ONCE:], keep, generation)
            return
        self.listed = True
        if not self.infos:
            self.show_detail("No saves yet." if self.mode == "load" else "No saves yet: type a name for this one.")
            return
        if keep is not None:
            table.move_cursor(row=min(keep, table.row_count - 1))
        self.describe_highlighted()

    def show(self, message: str, *, error: bool = False) -> None:
        """Tell the player what happened (an error in red)."""
        status = self.query_one("#slots-status", Static)
        status.update(plain(message))
        status.set_class(error, "error")

    def show_detail(self, message: str, *, error: bool = False) -> None:
        detail = self.query_one("#slots-detail", Static)
        detail.update(plain(message))
        detail.set_class(error, "error")

    def highlighted(self) -> SlotInfo | None:
        """The slot under the table's cursor, if any."""
        table: DataTable[Text] = self.query_one("#slots-table", DataTable)
        if table.row_count == 0:
            return None
        try:
            row_key, _ = table.coordinate_to_cell_key(table.cursor_coordinate)
        except CellDoesNotExist:
            return None
        return self.infos.get(str(row_key.value)) if row_key.value is not None else None

    def describe_highlighted(self) -> None:
        """The highlighted slot's line below the table, from its header (nothing more is read)."""
        info = self.highlighted()
        if not self.listed:
            self.show_detail(f"Reading the saves in {self.slots.root}...")
        elif info is None:
            self.show_detail("")
        elif info.error:
            self.show_detail(f"{info.name}: {info.error}", error=True)
        else:
            self.show_detail(f"{info.name}: {info.story_title or info.story_id}, turn {info.turn}, at {info.place}")

    # ------------------------------------------------------------ events
    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self.describe_highlighted()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        name = str(event.row_key.value)
        info = self.infos.get(name)
        if info is None:
            return
        if self.mode == "load":
            if info.error:
                self.show(f"Slot {name!r} cannot be loaded: {info.error}", error=True)
                return
            self.check_then_load(name)
        else:
            self.confirm_overwrite(name)

    def check_then_load(self, name: str) -> None:
        """Dismiss with ``name`` once its whole save is checked (on a worker thread): the list read only headers,
        and a save damaged past its header is refused here, before the game in play is closed for it."""
        if self.checking is not None:
            return
        self.checking = name
        self.show(f"Checking slot {name!r}...")
        self._check(name)

    @work(thread=True, group="slot-check")
    def _check(self, name: str) -> None:
        info = self.slots.verify(name)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._checked, info)

    def _checked(self, info: SlotInfo) -> None:
        self.checking = None
        if not self.is_attached:
            return
        if not info.error:
            self.dismiss(info.name)
            return
        self.infos[info.name] = info
        table: DataTable[Text] = self.query_one("#slots-table", DataTable)
        try:
            for column, cell in zip(self.columns, slot_cells(info), strict=True):
                table.update_cell(info.name, column, cell)
        except CellDoesNotExist:  # the list was read again meanwhile
            pass
        self.show(f"Slot {info.name!r} cannot be loaded: {info.error}", error=True)
        self.describe_highlighted()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.show("")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        name = event.value.strip()
        try:
            check_name(name)
            exists = self.slots.exists(name)
        except SaveError as exc:
            self.show(str(exc), error=True)
            return
        if exists:
            self.confirm_overwrite(name)
        else:
            self.dismiss(name)

    def confirm_overwrite(self, name: str) -> None:
        """Ask before overwriting slot ``name``, saying what it holds (read off the thread when not listed yet)."""
        info = self.infos.get(name)
        if info is None:
            self._read_slot(name)
        else:
            self.ask_overwrite(name, info)

    @work(thread=True, group="slot-info")
    def _read_slot(self, name: str) -> None:
        info = self.slots.info(name)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self.ask_overwrite, name, info)

    def ask_overwrite(self, name: str, info: SlotInfo) -> None:
        if not self.is_attached:
            return
        what = f"Slot {name!r} already holds a save"
        if info.error:
            what = f"Slot {name!r} holds an unreadable save"
        else:
            story = info.story_title or info.story_id
            other = self.story_id is not None and info.story_id != self.story_id
            what += f" of {'another story, ' if other else ''}{story} (turn {info.turn}, at {info.place})"

        def answered(yes: bool | None) -> None:
            if yes:
                self.dismiss(name)
            else:
                self.show(f"Slot {name!r} kept as it was.")

        self.app.push_screen(ConfirmScreen(f"{what}. Overwrite it with this game?", yes="Overwrite"), answered)

    # ----------------------------------------------------------- actions
    def action_close(self) -> None:
        self.dismiss(None)

    def action_delete_slot(self) -> None:
        info = self.highlighted()
        if info is None:
            self.show("No slot to delete.")
            return
        name = info.name
        row = self.query_one("#slots-table", DataTable).cursor_row

        def answered(yes: bool | None) -> None:
            if not yes:
                self.show(f"Slot {name!r} kept.")
                return
            try:
                self.slots.delete(name)
            except (SaveError, OSError) as exc:
                self.refresh_slots(keep=row)
                self.show(f"Could not delete slot {name!r}: {exc}", error=True)
                return
            self.refresh_slots(keep=row)
            self.show(f"Slot {name!r} deleted.")

        self.app.push_screen(ConfirmScreen(f"Delete slot {name!r}? This cannot be undone.", yes="Delete"), answered)
