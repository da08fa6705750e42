"""Lines: what a save's moments belong to, so that no write replaces a moment of another line (issue 43, item 1).

A game is played on a **line**: a sequence of moments, one a turn, that only ever goes forward. A save names its
line in its header's ``session_id``: ``<game>`` for a game's first line (the game's own id, its memory's session id,
as every save written before lines names it: they are all on their game's first line, and a save written now loads
in the version before lines too), ``<game>.<hex>`` for every later one. A new line is minted (:func:`new_line`)
wherever the game could otherwise hold two different moments at one turn of one line:

- a branch (``slots branch``, F4: the save made is on a new line), and a game that goes on as a branch of its own
  because another window plays it (``window.branch_off``);
- a loaded moment older than its line's latest one (a slot holds a later turn of that line), or whose line another
  window plays on (``engine/lines.py``): it goes on as a new line, and the player is told;
- undo and retry: the moments after the one gone back to may stay in other slots; the game goes on as a new line.

So a line never holds two different moments at one turn, and a slot holding an earlier turn of a line holds a
moment in the history of any later turn of it. Every write of a game to its slot checks the line the slot holds
first (``kept.write_own``): it replaces only an earlier (or the same) moment of its own line, or what this session
wrote there itself; anything else stays, and the game goes on in a slot of its own. That check was there before,
keyed by the game's id: a branch carried its game's id, so a branch loaded and played on wrote over the main line's
later turns (``docs/saves.md``).
"""

from __future__ import annotations

import secrets

LINE_HEX = 8
"""Hex digits a minted line adds to its game's id (32 bits: the lines of one game never meet)."""


def game_of(line: str) -> str:
    """The game (its id) a line is of."""
    return line.partition(".")[0]


def new_line(line: str) -> str:
    """A line of the game of ``line`` (a line of it, or its id) that no save is on yet."""
    return f"{game_of(line)}.{secrets.token_hex(LINE_HEX // 2)}"
