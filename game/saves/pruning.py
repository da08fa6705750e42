"""The game's own numbered slots, kept to one a line: a numbered slot whose moments a later save holds is reused or
removed (issue 43: lines that went on in ``<slot>-<n>`` slots accumulated).

When the slot a game saves to holds another line (``kept.write_own``), the game goes on in a numbered slot of its
own, ``<slot>-<n>``. Loading that numbered slot again, the game saves to its story's autosave again, finds the other
line still there, and used to claim one more numbered slot, leaving the last one behind with an earlier turn of the
same line: one more slot for every Continue.

Two rules, with one test of what may go (:func:`covered`): a slot's moments may go only when the save written holds
each of them in its history: a turn of the same line no later than the one written, or of a line the game went on
from no later than where it left it (a line never holds two different moments at one turn, ``lines.py``), and no
earlier than the first turn the history keeps. That is the rule ``kept.write_own`` already applies to the game's own
slot, with the history's reach added, for the slot's file and its backup both.

- :func:`reusable`: before a new numbered slot is claimed, a numbered slot whose moments are covered is written
  instead (the game goes on where the player last found it).
- :func:`prune`: after a write, the other numbered slots whose moments are covered are removed.

Only the game's own names are touched: ``<base>-<n>`` (and deeper, ``<base>-<n>-<m>``) beside the slot written,
never ``<base>`` itself (the story's autosave: the title's Continue), and only saves of kind ``autosave``: a slot the
player named (``save NAME``), a quick save, a set-aside game (``-previous-<n>``) and ``storyecho run --slot`` saves
(kind ``manual``) are never reused or removed. Nor is a slot another window holds open, or whose line another window
plays on: the slot is held here (``windows.hold``) from the check to the removal.

*Why prune rather than group them in the load screen*: each numbered slot left behind this way holds nothing that
the slot written does not hold (its moments are turns of the written save's history, loadable with ``storyecho
slots branch``), so the promise "never delete a moment the player could load that is not also held elsewhere"
is the rule ``write_own`` already keeps, checked on headers only. Numbered slots that hold the latest moment of a
line of their own are never covered, and stay.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass

from game.saves.format import SaveError
from game.saves.header import read_header
from game.saves.slots import SLOT_SUFFIX, SlotStore
from game.saves.windows import held_elsewhere, hold, line_held_elsewhere

log = logging.getLogger("storyecho.saves")

OWN_KIND = "autosave"
"""The kind of save whose numbered slots the game names itself (``storyecho play`` and the Textual game)."""


@dataclass(frozen=True)
class Written:
    """A moment of a game just written (or about to be): its line and turn, and what of the game's past its save
    holds: the first turn of its history, and the lines it went on from with the last turn of each it holds."""

    line: str
    turn: int
    first: int
    ancestors: Mapping[str, int]


def base_of(slot: str) -> str:
    """The slot a numbered slot was claimed beside: ``autosave-x`` for ``autosave-x-3`` and ``autosave-x-3-1``."""
    return re.sub(r"(?:-\d{1,9})+$", "", slot)


def covered(moment: tuple[str, int], written: Written) -> bool:
    """Whether ``moment`` (a line and a turn) is a turn of ``written``'s history."""
    line, turn = moment
    last = written.turn if line == written.line else written.ancestors.get(line, -1)
    return written.first <= turn <= last


def reusable(slots: SlotStore, slot: str, written: Written) -> str | None:
    """A numbered slot ``<slot>-<n>`` of the game's own whose moments ``written`` covers and no other window holds
    open, to write instead of claiming a new one (the one holding the latest turn); None when there is none."""
    found = []
    for name in _numbered(slots, slot, f"{re.escape(slot)}-\\d{{1,9}}"):
        turn = _covered(slots, name, written)
        if turn is not None and held_elsewhere(slots.root, name) is None:
            found.append((turn, name))
    return max(found)[1] if found else None


def prune(slots: SlotStore, slot: str, written: Written) -> list[str]:
    """Remove the game's own numbered slots beside ``slot`` (just written with ``written``) whose moments it covers;
    returns their names. A slot that cannot be removed stays (logged): nothing is lost by keeping it."""
    base = base_of(slot)
    removed = []
    for name in _numbered(slots, slot, f"{re.escape(base)}(?:-\\d{{1,9}})+"):
        held = hold(slots.root, name, written.line) if _covered(slots, name, written) is not None else None
        if held is None:  # not covered, or another window holds it open
            continue
        try:
            if _covered(slots, name, written) is not None:  # still, now that no other window can open it
                slots.delete(name)
                removed.append(name)
        except (SaveError, OSError) as exc:
            log.warning("slot %s could not be removed: %s", name, exc)
        finally:
            held.release()
    return removed


def _numbered(slots: SlotStore, slot: str, pattern: str) -> list[str]:
    """The slots other than ``slot`` whose names match ``pattern`` and whose saves are the game's own kind (a slot
    whose file is gone, its backup left, is not among them: it stays). Only those names' headers are read."""
    name = re.compile(pattern)
    try:
        names = [p.name[: -len(SLOT_SUFFIX)] for p in slots.root.glob(f"*{SLOT_SUFFIX}")]
    except OSError:
        return []
    return sorted(n for n in names if n != slot and name.fullmatch(n) and slots.info(n).kind == OWN_KIND)


def _covered(slots: SlotStore, name: str, written: Written) -> int | None:
    """The latest turn slot ``name`` holds when ``written`` covers all it holds (its file and its backup, each that
    exists reading as a save), and no other window plays on their lines; else None."""
    first = slots.moment_of(name)  # cached by the store: most slots are not covered, and cost no read
    if first is None or not covered(first, written):
        return None
    turns = []
    for path in (slots.path(name), slots.backup_path(name)):
        if not path.exists():
            continue
        try:
            header = read_header(path)
        except SaveError:
            return None  # what does not read is not known to be held elsewhere
        moment = (header.session_id, header.turn)
        if not covered(moment, written):
            return None
        if moment[0] != written.line and line_held_elsewhere(slots.root, moment[0]):
            return None
        turns.append(header.turn)
    return max(turns) if turns else None
