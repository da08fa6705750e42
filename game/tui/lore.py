"""The lore of the story being played, indexed while the player plays, and the play screen's word on it.

A game starts with its story's lore searchable by keyword (``KnowledgeBase.stage``): what the vector index
lacks (on a first start, every document) is embedded on a thread of its own (``BackgroundIndexing``), which
posts :class:`LoreIndexed` to the play screen. Its :class:`LoreLine` says "Lore: keyword only, indexing 31/95"
meanwhile, and "Lore ready: 95 entries indexed" (with a notification) once recall searches the lore by meaning.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.message_pump import MessagePump
from textual.widgets import Static

from game.tui.messages import LoreIndexed

if TYPE_CHECKING:
    from game.engine.session import GameSession
    from game.memory.search.knowledge import BackgroundIndexing, IndexStats

READY_SHOWN_S = 12.0
"""How long the lore line keeps saying "Lore ready" before it leaves the screen to the story."""


def index_lore(screen: MessagePump, session: GameSession) -> BackgroundIndexing | None:
    """Embed what ``session``'s lore lacks (a game built with ``lore_later``) once ``screen`` is drawn, telling it
    as it goes; None when nothing is missing. Stop what this returns before the session closes."""
    from game import wiring

    def progress(done: int, total: int) -> None:
        screen.post_message(LoreIndexed(session, done, total))  # thread-safe, and never waits for the screen

    def finished(stats: IndexStats) -> None:
        indexed = stats.unchanged + stats.embedded  # less than all when the embedder failed on some (kept by keyword)
        screen.post_message(LoreIndexed(session, indexed, stats.documents, stats.embedded))

    job = wiring.lore_indexing(session, progress, finished, start=False)
    if job is not None:
        screen.call_after_refresh(job.start)  # once the play screen is drawn: the embedding does not delay it
    return job


class LoreLine(Static):
    """One line under the story: the lore's indexing, then that it is ready (hidden otherwise: no ``DEFAULT_CSS``,
    whose first use restyles the whole screen, as the play screen appears)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.display = False

    def show(self, message: LoreIndexed) -> None:
        self.update(Text(message.line(), style="bold green" if message.ready else "dim italic"))
        self.display = True
        if message.ready:
            self.set_timer(READY_SHOWN_S, self._hide)

    def _hide(self) -> None:
        self.display = False
