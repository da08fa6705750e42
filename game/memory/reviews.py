"""The player's Story Bible reviews, kept apart from the moments of the game (issue 33).

A review (accept, reject, archive, pin, unpin: ``StoryBible.review``) is the player's word on a fact, not something
a turn did: undo, redo, retry and branches return memory to a moment, and the reviews made at any time, before or
after it, still hold there. So each review is kept in ``MemoryState.reviews`` (saved with the game; every frozen
copy of a game's state shares the one list, ``MemoryState.frozen``) and :func:`reapply` makes them again on memory
returned to a moment (``GameMemory.restore``, a load, a branch) and on the entries a turn makes anew.

Only the last word counts: a newer review of an entry replaces the older one of the same kind (its status: accept,
reject, archive; its pin: pin, unpin), and a reject or archive ends its pin. A review is made again on the entry of
its id only while that entry says what was reviewed (same key, same content): a turn undone and played anew may
give the id to another fact. One the entry already reflects, or that its status no longer allows (a fact the
story superseded since), is skipped: reapplying is idempotent.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection

from game.memory.bible import StoryBible
from game.memory.records import BibleEntry, MemoryState, Review, ReviewAction

PIN_ACTIONS = ("pin", "unpin")
ENDS_PIN = ("reject", "archive")


def _kind(action: str) -> str:
    return "pin" if action in PIN_ACTIONS else "status"


def keep(state: MemoryState, entry: BibleEntry, action: ReviewAction, turn: int) -> None:
    """Keep the player's review of ``entry`` (made: ``StoryBible.review`` allowed it) as the last word on it."""
    kind = _kind(action)

    def replaced(review: Review) -> bool:
        ends = action in ENDS_PIN and review.action in PIN_ACTIONS
        return review.entry == entry.id and (_kind(review.action) == kind or ends)

    # in place: the list is shared by every moment of the game
    state.reviews[:] = [r for r in state.reviews if not replaced(r)]
    state.reviews.append(
        Review(entry=entry.id, key=entry.canonical_key, content=entry.content, action=action, turn=turn)
    )


def _reflected(entry: BibleEntry, action: str) -> bool:
    """Whether ``entry`` already is as ``action`` leaves it."""
    if action == "accept":
        return entry.status == "active"
    if action == "reject":
        return entry.status == "rejected"
    if action == "archive":
        return entry.status == "archived"
    return entry.pinned == (action == "pin")


def reapply(state: MemoryState, bible: StoryBible, ids: Collection[str] | None = None) -> list[BibleEntry]:
    """Make the player's reviews again on ``state`` (only those of the entries ``ids``, when given); returns the
    entries changed. A review is dated no later than the last turn ``state`` holds, so that an entry it ends is
    not read as active "until then" by memory as of that turn (``bible_view.active_at``)."""
    if not state.reviews:
        return []
    by_id = {e.id: e for e in state.bible}
    now = max((e.turn for e in state.log), default=0)
    changed: list[BibleEntry] = []
    for review in list(state.reviews):
        if ids is not None and review.entry not in ids:
            continue
        entry = by_id.get(review.entry)
        if entry is None or (entry.canonical_key, entry.content) != (review.key, review.content):
            continue
        if _reflected(entry, review.action):
            continue
        with contextlib.suppress(ValueError):  # no longer allowed: the story has moved the fact on since
            changed += bible.review(entry.id, review.action, min(review.turn, now))
    return changed
