"""What the game's own threads post to the app and its screens (never waiting for them, as ``call_from_thread``
would: closing a game waits for those threads on the app's thread)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from game.engine.session import GameSession


class Autosaved(Message):
    """Posted from the autosave thread (``GameSession.on_autosave``): turn ``turn`` was written, or failed."""

    def __init__(self, session: GameSession, turn: int, notice: str | None) -> None:
        super().__init__()
        self.session = session
        self.turn = turn
        self.notice = notice


class LoreIndexed(Message):
    """Posted from the lore-indexing thread: ``done`` of ``total`` documents have their vector; ``embedded`` (set
    once all have landed) is how many were embedded now."""

    def __init__(self, session: GameSession, done: int, total: int, embedded: int | None = None) -> None:
        super().__init__()
        self.session = session
        self.done = done
        self.total = total
        self.embedded = embedded

    @property
    def ready(self) -> bool:
        return self.embedded is not None

    def line(self) -> str:
        """What the play screen's lore line says."""
        if not self.ready:
            return f"Lore: keyword only, indexing {self.done}/{self.total}…"
        if self.done < self.total:
            return f"Lore ready: {self.done} of {self.total} entries indexed (the rest by keyword)."
        return f"Lore ready: {self.total} entries indexed."

    def notice(self) -> str:
        """The notification that the lore is ready."""
        return f"{self.line()} Recall searches it by meaning too from this turn on ({self.embedded} embedded now)."
