"""The memory debug panel (F12): what the narrator was shown on a turn, and why.

:class:`DebugScreen` is pushed over the play screen. For one turn of the
session (the latest; ``[`` and ``]`` step through the earlier ones) it shows,
in tabs that fit an 80x24 terminal and work without a mouse:

- **Blocks**: every memory section in recall order (the Story Bible and the
  L3 synopsis go in the system prompt, the L1 window after it, the other
  recalled blocks in the user prompt), each item with its
  source, score and score parts, and what was cut, by the block's own budget
  or by the prompt budget;
- **Tokens**: each part of the prompt as a coloured bar of its share, and the
  prompt of every turn of the session stacked block by block;
- **Prompt**: the system prompt and every message sent, the composed user
  prompt among them;
- **Output**: the narration, the model's raw answers, validation errors and
  repairs, effects the rules refused and why, dropped memory notes;
- **Timings**: time per stage, tokens per narrator call (cached ones too),
  and the retrieval metadata;
- **Bible**: the Story Bible (:class:`BibleView`), to filter, accept, reject,
  pin and archive entries.

Everything a model or a player wrote (narration, prompts, raw output, memory
and Bible texts) is shown as plain text: Rich/Textual markup is never parsed
(``[@click=app.quit]`` is just text) and control characters are made visible
(an ANSI escape shows as ``\\x1b[31m``). Building the view reads the turn's trace
only: the panel never searches memory.

This module holds the widgets. :mod:`game.tui.debug_data` turns a
:class:`TurnResult` into the plain rows the panel draws (:class:`DebugData`),
and :mod:`game.tui.debug_render` draws each tab from them as Rich text.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static, TabbedContent, TabPane

from game.tui.debug_data import DebugData, tokens_by_turn, traced
from game.tui.debug_render import (
    render_blocks,
    render_output,
    render_prompt,
    render_timings,
    render_title,
    render_tokens,
)
from game.tui.text import plain, safe

if TYPE_CHECKING:
    from game.engine.results import TurnResult
    from game.engine.session import GameSession
    from game.memory.bible import ReviewAction
    from game.memory.records import BibleEntry

log = logging.getLogger("storyecho.tui.debug")


BIBLE_FILTERS = ("all", "candidate", "active", "disputed", "superseded", "archived", "rejected", "pinned")


class BibleView(Vertical):
    """The Story Bible as a table: ``f`` filters by status; ``a``/``r``/``p``/``x`` review the selected entry.

    Reviews go through ``GameMemory.review_bible(entry_id, action, turn)``; a
    refusal (ValueError) is shown as a notification.
    """

    DEFAULT_CSS = """
    BibleView { height: 1fr; }
    BibleView #bible-status { height: 1; padding: 0 1; background: $boost; }
    BibleView #bible-table { height: 1fr; }
    BibleView #bible-detail { height: auto; max-height: 6; padding: 0 1; border-top: solid $primary; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "review('accept')", "Accept"),
        Binding("r", "review('reject')", "Reject"),
        Binding("p", "pin", "Pin/unpin"),
        Binding("x", "review('archive')", "Archive"),
        Binding("f", "next_filter", "Filter"),
    ]
    COLUMNS = ("status", "pin", "imp", "title", "key", "source", "turn")

    def __init__(self, session: GameSession, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.session = session
        self.status_filter = "all"
        self._shown: list[BibleEntry] = []

    def compose(self) -> ComposeResult:
        yield Static(id="bible-status")
        yield DataTable[Text](id="bible-table", cursor_type="row", zebra_stripes=True)
        yield Static(id="bible-detail")

    def on_mount(self) -> None:
        table = self.table
        for column in self.COLUMNS:
            table.add_column(column, key=column)
        self.refresh_entries()

    @property
    def table(self) -> DataTable[Text]:
        return self.query_one("#bible-table", DataTable)

    # ---------------------------------------------------------------- data
    def entries(self) -> list[BibleEntry]:
        """Every Bible entry (copies), all statuses."""
        return self.session.engine.memory.bible_entries()

    def visible_entries(self) -> list[BibleEntry]:
        """The entries the filter lets through, in Bible order."""
        entries = self.entries()
        if self.status_filter == "all":
            return entries
        if self.status_filter == "pinned":
            return [e for e in entries if e.pinned]
        return [e for e in entries if e.status == self.status_filter]

    def selected_entry(self) -> BibleEntry | None:
        table = self.table
        if not self._shown or not table.is_valid_row_index(table.cursor_row):
            return None
        return self._shown[table.cursor_row]

    def refresh_entries(self, keep: str | None = None) -> None:
        """Re-read the Bible and redraw the table, the cursor staying on entry ``keep`` (or the selected one)."""
        if keep is None:
            selected = self.selected_entry() if self.is_mounted and self._shown else None
            keep = selected.id if selected is not None else None
        table = self.table
        table.clear()
        self._shown = self.visible_entries()
        for entry in self._shown:
            table.add_row(
                plain(entry.status, _STATUS_STYLE.get(entry.status, "")),
                plain("●" if entry.pinned else "", "bold yellow"),
                plain(entry.importance),
                plain(_clip(entry.title or entry.content, 30)),
                plain(_clip(entry.canonical_key, 26)),
                plain(entry.source),
                plain(entry.source_turn),
                key=entry.id,
            )
        self.query_one("#bible-status", Static).update(self._status_line())
        if keep is not None:
            index = next((i for i, e in enumerate(self._shown) if e.id == keep), None)
            if index is not None:
                table.move_cursor(row=index)
        self._show_detail()

    def _status_line(self) -> Text:
        """The filter, how many entries it shows, and how many entries of each status the Bible holds."""
        counts = Counter(entry.status for entry in self.entries())
        status = Text()
        status.append(f"filter: {self.status_filter} ", style="bold")
        status.append(f"({len(self._shown)} shown) · ")
        status.append(" ".join(f"{s} {n}" for s, n in counts.items()), style="dim")
        status.append(" · f filter, a/r/p/x review", style="dim")
        return status

    def _show_detail(self) -> None:
        entry = self.selected_entry()
        detail = Text()
        if entry is None:
            detail.append("No entry." if not self._shown else "", style="italic")
        else:
            detail.append(f"{safe(entry.id)} · {safe(entry.entry_type)} · {safe(entry.canonical_key)}", style="bold")
            extra = [f"importance {entry.importance}", f"turn {entry.source_turn}", entry.source]
            if entry.supersedes:
                extra.append(f"supersedes {entry.supersedes}")
            if entry.ended_turn is not None:
                extra.append(f"ended turn {entry.ended_turn}")
            if entry.npcs:
                extra.append("npcs " + ", ".join(entry.npcs))
            detail.append(" · " + safe(" · ".join(extra)) + "\n", style="dim")
            detail.append(safe(entry.text()))
            if entry.reason:
                detail.append("\nreason: " + safe(entry.reason), style="yellow")
        self.query_one("#bible-detail", Static).update(detail)

    @on(DataTable.RowHighlighted, "#bible-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self._show_detail()

    # ------------------------------------------------------------- actions
    def review(self, action: ReviewAction) -> BibleEntry | None:
        """Review the selected entry (``accept``, ``reject``, ``pin``, ``unpin``, ``archive``); None when refused."""
        entry = self.selected_entry()
        if entry is None:
            self.notify("No Bible entry selected.", severity="warning", markup=False)
            return None
        try:
            changed = self.session.engine.memory.review_bible(entry.id, action, self.session.engine.state.turn)
        except ValueError as exc:
            self.notify(str(exc), title="Not changed", severity="warning", markup=False)
            return None
        except Exception as exc:  # a failed review is told, never ends the game
            log.exception("review_bible %s %s failed", entry.id, action)
            self.notify(f"Review failed: {type(exc).__name__}: {exc}", severity="error", markup=False)
            return None
        self.refresh_entries(keep=entry.id)
        self.notify(f"{entry.id}: {action} done.", markup=False)
        return changed

    def action_review(self, action: ReviewAction) -> None:
        self.review(action)

    def action_pin(self) -> None:
        entry = self.selected_entry()
        self.review("unpin" if entry is not None and entry.pinned else "pin")

    def action_next_filter(self) -> None:
        self.status_filter = BIBLE_FILTERS[(BIBLE_FILTERS.index(self.status_filter) + 1) % len(BIBLE_FILTERS)]
        self.refresh_entries()


def _clip(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 1] + "…"


_STATUS_STYLE = {
    "candidate": "yellow",
    "active": "green",
    "superseded": "dim",
    "disputed": "red",
    "archived": "dim",
    "rejected": "red dim",
}

TABS = ("blocks", "tokens", "prompt", "output", "timings", "bible")


class DebugScreen(Screen[None]):
    """The memory debug panel for the turns of ``session`` (``session.history``; ``history`` if the session has none).

    Keys: ``[``/``]`` step to the previous/next turn, ``1``-``6`` pick a tab,
    Escape or F12 close. In the Bible tab: ``f`` filter, ``a`` accept,
    ``r`` reject, ``p`` pin/unpin, ``x`` archive.
    """

    DEFAULT_CSS = """
    DebugScreen { layout: vertical; }
    DebugScreen #debug-title { height: auto; max-height: 2; padding: 0 1; background: $boost; }
    DebugScreen TabbedContent { height: 1fr; }
    DebugScreen TabbedContent > ContentSwitcher { height: 1fr; }
    DebugScreen TabPane { height: 1fr; padding: 0; }
    DebugScreen VerticalScroll { height: 1fr; }
    DebugScreen .debug-body { width: 100%; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("f12", "close", "Close", show=False),
        Binding("left_square_bracket", "step(-1)", "Prev turn", key_display="["),
        Binding("right_square_bracket", "step(1)", "Next turn", key_display="]"),
        *(Binding(str(i), f"tab('{tab}')", tab.title(), show=False) for i, tab in enumerate(TABS, 1)),
    ]
    TITLE = "Memory debug"

    def __init__(self, session: GameSession) -> None:
        super().__init__()
        self.session = session
        self.results: list[TurnResult] = []
        self.index = -1
        self.data: DebugData | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="debug-title")
        with TabbedContent(initial="blocks"):
            for tab in TABS[:-1]:
                with TabPane(tab.title(), id=tab), VerticalScroll(id=f"{tab}-scroll"):
                    yield Static(id=f"{tab}-body", classes="debug-body")
            with TabPane("Bible", id="bible"):
                yield BibleView(self.session, id="bible-view")
        yield Footer()

    def on_mount(self) -> None:
        self.reload()

    def on_screen_resume(self) -> None:
        """Back on top (a dialog closed, or pushed again): show the turns played since."""
        if self.is_mounted:
            self.reload()

    # ---------------------------------------------------------------- data
    def reload(self) -> None:
        """Re-read the session's turns: stay on the turn on view, or on the latest when that was on view."""
        at_end = self.index == len(self.results) - 1
        self.results = traced(self.session.history)
        if at_end or not 0 <= self.index < len(self.results):
            self.index = len(self.results) - 1
        self.show(self.index)

    def show(self, index: int) -> None:
        """Show the ``index``-th traced turn (0-based; clamped)."""
        title = self.query_one("#debug-title", Static)
        if not self.results:
            self.index, self.data = -1, None
            title.update(Text("Memory debug · no turns played yet in this session · Esc close", style="bold"))
            message = plain("No turn yet: play one, then open this panel again (F12).", "italic")
            for tab in TABS[:-1]:
                self.query_one(f"#{tab}-body", Static).update(message)
            return
        self.index = max(0, min(index, len(self.results) - 1))
        data = self.data = DebugData.from_result(self.results[self.index])
        title.update(render_title(data, self.index + 1, len(self.results)))
        series = tokens_by_turn(self.session, self.results)
        bodies = {
            "blocks": render_blocks(data),
            "tokens": render_tokens(data, series, self.index if len(series) == len(self.results) else None),
            "prompt": render_prompt(data),
            "output": render_output(data),
            "timings": render_timings(data),
        }
        for tab, body in bodies.items():
            self.query_one(f"#{tab}-body", Static).update(body)

    def body_text(self, tab: str) -> str:
        """The plain text the ``tab`` tab shows (``blocks``, ``tokens``, ``prompt``, ``output``, ``timings``)."""
        content = self.query_one(f"#{tab}-body", Static).content
        return content.plain if isinstance(content, Text) else str(content)

    # ------------------------------------------------------------- actions
    def action_step(self, delta: int) -> None:
        if not self.results:
            return
        target = self.index + delta
        if not 0 <= target < len(self.results):
            self.app.bell()
            return
        self.show(target)

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "bible":
            view = self.query_one(BibleView)
            view.refresh_entries()
            view.table.focus()

    def action_close(self) -> None:
        if self.is_current:
            self.dismiss()
