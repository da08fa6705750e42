"""What goes wrong with a save, in words a player can read."""

from __future__ import annotations


class SaveError(Exception):
    """A save could not be written or read; the message says why, in words."""


class SaveTooLong(SaveError):
    """The game has grown past what a save holds: no slot would take it, so no notice advises another one."""


def what_to_try(exc: Exception) -> str:
    """What a player can do after a failed save: another slot, unless no slot would take the game (issue 43: the
    notice advised ``save NAME``, which failed the same way)."""
    if isinstance(exc, SaveTooLong):
        return "no slot holds a game this long, so your last save stays as it was."
    return "try 'save NAME' elsewhere."
