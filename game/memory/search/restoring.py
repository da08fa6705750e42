"""Keywords alone while a restored index lacks most of its vectors (issue 43, item 7).

An index rebuilt from a large save takes the vectors the store holds and gets the rest from background jobs, a
chunk at a time (``game/memory/restore.py``), for minutes. Ranked against the few vectors held, the many still
waiting would all take the dense pool's lowest score and sink below every item that has one; keywords rank every
item alike. So until ``RESTORED_SHARE`` of its items have their vector, the index ranks by keywords and says why
(the search's ``fallback``, shown in a turn's ``retrieval_meta``); from then on it ranks as an intact index, and
does not go back to keywords for that restore.
"""

from __future__ import annotations

RESTORED_SHARE = 0.9
"""The share of a restored index's items that must have their vector before it ranks by meaning again."""


class Restoring:
    """Whether one index still ranks by keywords for its restore (``HybridIndex.restored``). Not thread-safe: the
    index calls it under its own lock."""

    def __init__(self) -> None:
        self._on = False

    def start(self, dense: bool, pending: int, items: int) -> None:
        """The index was rebuilt with ``pending`` of its ``items`` still to embed, in the background; only an index
        that ranks by meaning (``dense``) has anything to wait for."""
        self._on = dense
        self.why(pending, items)

    def why(self, pending: int, items: int) -> str | None:
        """Why the index ranks by keywords alone now that ``pending`` of its ``items`` lack a vector, or None (no
        restore under way, or ``RESTORED_SHARE`` of the items have theirs: from then on, None for good)."""
        if self._on and pending <= (1 - RESTORED_SHARE) * items:
            self._on = False
        if not self._on:
            return None
        return f"restoring a save: {pending:,} of {items:,} texts still to embed"
