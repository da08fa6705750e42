"""The game's own numbered slots, one a line (issue 43: lines that went on in ``<slot>-<n>`` slots accumulated;
``saves/pruning.py``): a Continue of a game that goes on in a numbered slot plays on there, and a numbered slot whose
every moment a later save holds in its history is removed. Nothing else is: a numbered slot holding a line of its
own, a slot the player named, a slot another window holds."""

from __future__ import annotations

from pathlib import Path

from game.engine.session import GameSession
from game.saves import windows
from game.saves.slots import SlotStore
from tests.reliability.test_new_games import AUTOSAVE, session_in
from tests.reliability.test_no_moment_lost import moments_of

FIRST = f"{AUTOSAVE}-1"


def _numbered(store: SlotStore) -> list[str]:
    return sorted(info.name for info in store.list() if info.name.startswith(f"{AUTOSAVE}-"))


def _moments(store: SlotStore) -> set[tuple[str, int, bytes]]:
    """Every moment the slots hold, as their own or as a turn of their history (``test_no_moment_lost``)."""
    return set().union(*(moments_of(store.read(info.name).save)[1] for info in store.list()))


def _a_game_gone_back_in(root: Path) -> GameSession:
    """A game saved as ``mine`` at turn 2 and played to turn 8 in the autosave, then ``mine`` loaded again in a new
    window and played three turns: it went on as a line of its own, in ``autosave-<story>-1`` (turn 5)."""
    game = session_in(root)
    for _ in range(2):
        assert game.play("look").ok
    game.save("mine")
    for _ in range(6):
        assert game.play("look").ok
    assert game.close() is None
    again = session_in(root, seed=9)
    assert again.play("load mine").ok
    for _ in range(3):
        assert again.play("look").ok
    assert again.close() is None and again.slot == FIRST
    return again


def _continue(root: Path, slot: str, turns: int = 2) -> GameSession:
    """Load ``slot`` in a new window, play ``turns`` turns and quit."""
    game = session_in(root, seed=11)
    assert game.play(f"load {slot}").ok
    for _ in range(turns):
        assert game.play("look").ok
    assert game.close() is None
    return game


def test_each_continue_of_a_game_in_a_numbered_slot_goes_on_there(tmp_path):
    """Was: each load of ``autosave-<story>-1`` went on in one more numbered slot (``-2``, ``-3``, ...), the one
    before left behind with an earlier turn of the same line."""
    _a_game_gone_back_in(tmp_path)
    store = SlotStore(tmp_path)
    for turn in (7, 9, 11):
        game = _continue(tmp_path, FIRST)
        assert game.slot == FIRST and store.read(FIRST).save.turn == turn
    assert _numbered(store) == [FIRST]
    assert store.read(AUTOSAVE).save.turn == 8  # the other line stays as it was


def test_numbered_slots_left_behind_by_an_older_version_are_removed_once_a_later_save_holds_them(tmp_path):
    """The slots the older version left (each an earlier turn of one line) go once the line is saved later: every
    moment they held is still loadable, from the history of the slot written."""
    _a_game_gone_back_in(tmp_path)
    store = SlotStore(tmp_path)
    second = store.claim(AUTOSAVE, store.path(FIRST).read_bytes())  # as the older version left them: -1 and -2
    assert second == f"{AUTOSAVE}-2"
    before = _moments(store)
    game = session_in(tmp_path, seed=11)
    assert game.play(f"load {second}").ok
    assert game.play("look").ok
    told = game.play(f"save {AUTOSAVE}").narration  # to its own slot, which holds the other line
    assert f"goes on in slot {second!r}" in told and f"{FIRST!r}, removed" in told, told
    assert game.close() is None
    assert game.slot == second and _numbered(store) == [second] and store.read(second).save.turn == 6
    assert before <= _moments(store), "a moment the slots held is gone"


def test_a_numbered_slot_holding_a_line_of_its_own_stays(tmp_path):
    """A numbered slot whose line the written save does not hold (another line of the game) is never removed, nor
    reused: the game goes on in a new one."""
    _a_game_gone_back_in(tmp_path)
    store = SlotStore(tmp_path)
    held = store.read(FIRST).save.turn
    game = session_in(tmp_path, seed=12)
    assert game.play(f"load {AUTOSAVE}").ok  # the main line, turn 8
    for _ in range(4):
        assert game.play("look").ok
    assert game.close() is None
    assert store.read(FIRST).save.turn == held and store.read(AUTOSAVE).save.turn == 12


def test_a_slot_the_player_named_or_another_window_holds_is_never_removed(tmp_path, monkeypatch):
    """A slot named like the game's own but saved by the player (kind ``manual``) stays, and so does a numbered slot
    another window has open, even when the save written holds every moment of both."""
    _a_game_gone_back_in(tmp_path)
    store = SlotStore(tmp_path)
    named = session_in(tmp_path, seed=13)
    assert named.play(f"load {FIRST}").ok
    assert "Saved" in named.save(f"{AUTOSAVE}-5")  # the player's own name, an earlier turn of the line
    named.close(save=False)
    third = store.claim(AUTOSAVE, store.path(FIRST).read_bytes())
    other: dict[Path, object] = {}
    monkeypatch.setattr(windows, "_held", other)  # another window (another process's locks) holds it open
    opened = windows.hold(tmp_path, third, "someone")
    monkeypatch.undo()
    try:
        _continue(tmp_path, FIRST)
        assert {f"{AUTOSAVE}-5", third} <= set(_numbered(store))
    finally:
        monkeypatch.setattr(windows, "_held", other)
        assert opened is not None
        opened.release()
