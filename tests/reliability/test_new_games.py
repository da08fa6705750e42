"""A new game never loses an old one (issue 33, item 1): each game a new game sets aside gets a slot of its own,
never overwritten, listed and loadable, and the player is told which one. A game with no turns is not kept."""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

import pytest

from game.engine.kept import start_fresh
from game.engine.pipeline import TurnPipeline
from game.engine.session import GameSession
from game.llm.scripted import ScriptedNarrator
from game.saves.format import decode
from game.saves.slots import SlotStore, SlotTaken
from game.world.loader import content_root, load_pack
from game.world.state import new_game
from tests.conftest import keyword_memory

FANTASY = load_pack(content_root() / "fantasy_001")
AUTOSAVE = "autosave-fantasy_001"
HOW = "type 'load {slot}' to go back to it"


def session_in(root: Path, seed: int = 5) -> GameSession:
    engine = TurnPipeline(FANTASY, new_game(FANTASY, seed=seed), ScriptedNarrator(FANTASY), keyword_memory(FANTASY))
    return GameSession(engine, SlotStore(root), slot=AUTOSAVE)


def play_and_quit(session: GameSession, turns: int) -> str:
    """Play ``turns`` turns and quit (the save on quit goes to the session's slot); the game's memory session id."""
    for _ in range(turns):
        assert session.play("look").ok
    assert session.close() is None
    return session.engine.memory.session_id


def told_slot(notices: list[str]) -> str:
    """The one slot the notices name."""
    [notice] = notices
    named = re.search(r"kept in slot '([^']+)'", notice)
    assert named, notice
    return named.group(1)


def test_three_new_games_keep_every_previous_game(tmp_path):
    """Was: each new game moved the autosave to ``<autosave>-previous``, overwriting the game kept there: after
    three one-turn new games, the 12-turn game A was loadable from nowhere, and the player had been told each time
    that it was kept in ``autosave-fantasy_001-previous``."""
    games = [(play_and_quit(session_in(tmp_path), 12), 12)]  # game A
    kept: list[str] = []
    for _ in range(3):
        fresh = session_in(tmp_path)
        notices = start_fresh(fresh, AUTOSAVE, HOW)  # what the CLI and the Textual game call
        slot = told_slot(notices)
        session_id, turns = games[-1]
        held = SlotStore(tmp_path).read(slot).save
        assert (held.session_id, held.turn) == (session_id, turns)  # the slot really holds the last game
        assert f"load {slot}" in notices[0]  # and how to load it names that slot
        assert fresh.slot == AUTOSAVE and slot not in kept
        kept.append(slot)
        games.append((play_and_quit(fresh, 1), 1))
    store = SlotStore(tmp_path)
    listed = {info.name: info for info in store.list()}
    for slot, (session_id, turns) in zip(kept, games, strict=False):
        assert listed[slot].turn == turns and not listed[slot].error  # every game set aside is listed
        assert store.read(slot).save.session_id == session_id
    a = store.read(kept[0]).save
    assert a.turn == 12 and a.history is not None and len(a.history.turns) == 12  # game A, loadable with its 12 turns
    back = session_in(tmp_path)
    last = told_slot([n for n in back.load(kept[0]) if "kept in slot" in n])
    assert back.engine.state.turn == 12 and back.play("look").ok
    assert store.read(last).save.turn == 1  # the last new game, kept from game A's autosaves (game.engine.kept)


def test_a_game_with_no_turns_is_not_kept(tmp_path):
    """An autosave at turn 0 holds nothing to go back to: the new game replaces it, and no slot fills up."""
    empty = session_in(tmp_path)
    empty.save(AUTOSAVE, kind="autosave")
    empty.close(save=False)
    fresh = session_in(tmp_path)
    assert start_fresh(fresh, AUTOSAVE, HOW) == []
    assert [info.name for info in SlotStore(tmp_path).list()] == []
    assert fresh.slot == AUTOSAVE


def test_a_slot_named_previous_from_the_current_version_stays_loadable_and_is_never_overwritten(tmp_path):
    """Saves written by the last version kept the set-aside game in ``<autosave>-previous``: it still loads, and a
    new game sets the next one aside elsewhere."""
    old_id = play_and_quit(session_in(tmp_path, seed=7), 4)
    store = SlotStore(tmp_path)
    store.write(f"{AUTOSAVE}-previous", store.path(AUTOSAVE).read_bytes())  # as the current version left it
    store.delete(AUTOSAVE)
    play_and_quit(session_in(tmp_path), 3)
    slot = told_slot(start_fresh(session_in(tmp_path), AUTOSAVE, HOW))
    assert slot != f"{AUTOSAVE}-previous" and store.read(slot).save.turn == 3
    legacy = store.read(f"{AUTOSAVE}-previous").save
    assert legacy.turn == 4 and legacy.session_id == old_id
    back = session_in(tmp_path)
    back.load(f"{AUTOSAVE}-previous")
    assert back.engine.state.turn == 4


def test_a_slot_at_turn_zero_over_a_backup_with_turns_keeps_the_backup(tmp_path):
    """The slot reads at turn 0 but its backup holds turns (a game undone to its start, say): the turns are kept."""
    store = SlotStore(tmp_path)
    empty = session_in(tmp_path)
    empty.save("start")
    empty.close(save=False)
    played = session_in(tmp_path)
    played.play("look")
    played.play("look")
    played.save(AUTOSAVE, kind="autosave")
    played.close(save=False)
    store.write(AUTOSAVE, store.path("start").read_bytes())  # the turn-2 save is now the backup
    store.delete("start")
    slot = told_slot(start_fresh(session_in(tmp_path), AUTOSAVE, HOW))
    assert store.read(slot).save.turn == 2 and not store.exists(AUTOSAVE)


def test_a_new_slot_is_never_written_over(tmp_path):
    """``write(new=True)`` refuses a slot that is there (its file or only its backup); set_aside goes past it."""
    play_and_quit(session_in(tmp_path), 2)
    store = SlotStore(tmp_path)
    data = store.path(AUTOSAVE).read_bytes()
    with pytest.raises(SlotTaken):
        store.write(AUTOSAVE, b"other", new=True)
    assert store.path(AUTOSAVE).read_bytes() == data
    store.backup_path(f"{AUTOSAVE}-previous-1").write_bytes(data)  # a slot whose file is gone, its backup left
    with pytest.raises(SlotTaken):
        store.write(f"{AUTOSAVE}-previous-1", data, new=True)
    assert store.set_aside(AUTOSAVE, f"{AUTOSAVE}-previous") == f"{AUTOSAVE}-previous-2"
    assert not list(tmp_path.glob(".*.tmp"))


def test_loading_another_game_keeps_the_game_the_autosave_held(tmp_path):
    """Was: a loaded save autosaved to its story's autosave, over whatever game was there. Game A saved in slot
    'mine', game B (7 turns) in the autosave: loading A and playing five turns wrote A over B, and B was loadable
    from nowhere. The Textual game's load (F3, Continue) and the typed ``load`` both lost it."""
    a = session_in(tmp_path, seed=9)
    a.slot = "mine"
    a_id = play_and_quit(a, 4)
    b_id = play_and_quit(session_in(tmp_path), 7)
    back = session_in(tmp_path)
    notices = back.load("mine")
    kept = told_slot([n for n in notices if "kept in slot" in n])
    assert notices[-1].startswith("Loaded 'mine'.") and f"load {kept}" in notices[-1]
    for _ in range(5):
        assert back.play("look").ok
    assert back.close() is None
    store = SlotStore(tmp_path)
    b = store.read(kept).save
    assert (b.session_id, b.turn) == (b_id, 7)  # game B, whole
    assert (store.read(AUTOSAVE).save.session_id, store.read(AUTOSAVE).save.turn) == (a_id, 9)
    assert store.read("mine").save.turn == 4  # the save loaded is left as it was


def test_loading_an_older_moment_of_the_game_in_play_goes_on_beside_its_later_one(tmp_path):
    """A quick save of the game in play, loaded to go back (a fight gone wrong), goes on in a slot of its own and
    says so: the autosave keeps the later moment (issue 43: it was saved over "as undo does", and turn 7 was
    gone; a branch loaded the same way destroyed the main line)."""
    game = session_in(tmp_path)
    for _ in range(3):
        assert game.play("look").ok
    game.save("quick", kind="quick")
    for _ in range(4):
        assert game.play("look").ok  # the autosave holds turn 7 once the load writes the game in play first
    game.load("quick")
    assert game.engine.state.turn == 3
    assert game.play("look").ok and game.play("look").ok  # turn 5: the autosave, written in the background
    game.wait_for_autosave()
    told = game.play("look").notices  # what the autosave had to say comes with the next result
    assert any("holds turn 7 of this game" in n and f"{AUTOSAVE}-1" in n for n in told), told
    assert game.slot == f"{AUTOSAVE}-1" and game.close() is None
    store = SlotStore(tmp_path)
    assert sorted(info.name for info in store.list()) == [AUTOSAVE, f"{AUTOSAVE}-1", "quick"]
    assert store.read(AUTOSAVE).save.turn == 7 and store.read(f"{AUTOSAVE}-1").save.turn == 6


def test_a_damaged_autosave_is_left_where_it_is_when_another_game_is_loaded(tmp_path):
    """An autosave that does not read (nor its backup) is not saved over either: the game loaded saves to a slot
    of its own and says so, and the damaged file stays for the player to recover."""
    mine = session_in(tmp_path)
    mine.slot = "mine"
    play_and_quit(mine, 2)
    store = SlotStore(tmp_path)
    store.path(AUTOSAVE).write_bytes(b'{"schema_version": 9, "story_id": ')
    back = session_in(tmp_path)
    [notice] = [n for n in back.load("mine") if "set aside" in n]
    assert back.slot != AUTOSAVE and repr(back.slot) in notice
    assert back.play("look").ok and back.close() is None
    assert store.path(AUTOSAVE).read_bytes() == b'{"schema_version": 9, "story_id": '
    assert store.read(back.slot).save.turn == 3


def test_a_typed_load_keeps_the_turns_played_since_the_last_autosave(tmp_path):
    """Was: typing ``load mine`` set aside the autosave as it stood at the last autosave (turn 5), and turns 6-8 of
    the game in play were lost. The Textual game's F3 closes the game (a save) first; the typed load now saves too."""
    mine = session_in(tmp_path, seed=9)
    mine.slot = "mine"
    play_and_quit(mine, 2)
    game = session_in(tmp_path)
    for _ in range(8):
        assert game.play("look").ok
    game_id = game.game_id
    result = game.play("load mine")
    assert result.ok, result.narration
    kept = told_slot(re.findall(r"Your last one is kept in slot '[^']+'", result.narration))
    held = SlotStore(tmp_path).read(kept).save
    assert (held.session_id, held.turn) == (game_id, 8)  # every turn of it
    assert game.engine.state.turn == 2


def test_a_typed_load_that_cannot_save_the_game_in_play_first_loads_nothing(tmp_path, monkeypatch):
    game = session_in(tmp_path)
    mine = session_in(tmp_path, seed=9)
    mine.slot = "mine"
    play_and_quit(mine, 2)
    for _ in range(7):
        assert game.play("look").ok
    game.wait_for_autosave()
    real_replace = os.replace

    def disk_full(src, dst, *args, **kwargs):
        """Fault injection: the disk is full when the save is renamed into place (root ignores chmod)."""
        if Path(dst).parent == tmp_path:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", disk_full)
    result = game.play("load mine")
    assert not result.ok and "could not be saved first, so nothing was loaded" in result.narration
    assert game.engine.state.turn == 7 and game.slot == AUTOSAVE  # the game in play goes on
    monkeypatch.undo()
    assert game.play("load mine").ok and game.engine.state.turn == 2


def test_a_branch_loaded_and_played_on_never_writes_over_the_main_line(tmp_path):
    """Was (issue 43): branch at turn 4, play the main line to turn 20, load the branch and play on: the branch
    carries the game's id, so it autosaved over ``autosave-<story>``, and two autosaves later turn 20 was gone,
    its backup included. The branch goes on in a slot of its own; the main line's turn 20 stays, backup too."""
    game = session_in(tmp_path)
    for _ in range(4):
        assert game.play("look").ok
    game.branch(4, "fork")
    for _ in range(16):
        assert game.play("look").ok
    game.wait_for_autosave()
    store = SlotStore(tmp_path)
    assert store.read(AUTOSAVE).save.turn == 20
    game.load("fork")
    for _ in range(12):  # two autosaves and more
        assert game.play("look").ok
    assert game.close() is None
    assert store.read(AUTOSAVE).save.turn == 20
    assert store.moment_of(AUTOSAVE) == (game.game_id, 20)
    assert game.slot != AUTOSAVE and store.read(game.slot).save.turn == 16
    backup = store.backup_path(AUTOSAVE)
    assert not backup.exists() or decode(backup.read_bytes()).turn >= 15  # the main line's, not the branch's


def test_two_windows_of_one_story_never_write_over_each_others_game(tmp_path):
    """Was (issue 43): a second window's New game set the first game aside; from then on each window's autosave
    wrote over the other's, and after both quit and one more new game, a game played to turn 10 survived only as
    turn 5. Each window's game keeps its own slot: a write that finds another game there goes to a new one."""
    first = session_in(tmp_path, seed=5)
    for _ in range(6):
        assert first.play("look").ok  # autosaved at turn 5 to autosave-<story>
    first.wait_for_autosave()
    second = session_in(tmp_path, seed=9)
    start_fresh(second, AUTOSAVE, "F3")  # the second window's New game sets the first game aside
    for _ in range(5):
        assert second.play("look").ok  # its autosave at turn 5 takes autosave-<story>
    second.wait_for_autosave()
    for _ in range(4):
        assert first.play("look").ok  # the first window's autosave at turn 10 finds the second's game there
    first.wait_for_autosave()
    assert first.slot != AUTOSAVE
    assert first.close() is None and second.close() is None
    store = SlotStore(tmp_path)
    assert store.moment_of(AUTOSAVE) == (second.game_id, 5)
    assert store.moment_of(first.slot) == (first.game_id, 10)
    kept = [i.name for i in store.list() if store.line_of(i.name) == first.line]
    assert max(store.read(name).save.turn for name in kept) == 10  # the first game's turn 10 is kept


def test_a_quick_save_is_the_storys_own_and_never_replaces_another_games_without_keeping_it(tmp_path):
    """Was (issue 43): F5 in Cyber wrote over the Misty Forest game in ``quick`` (turn 43) without a word. Each
    story has its own quick slot, and a quick save that finds another game of the story there keeps that one in a
    slot of its own and says where."""
    cyber = load_pack(content_root() / "scifi_001")
    forest = session_in(tmp_path)
    for _ in range(3):
        assert forest.play("look").ok
    assert forest.play("save").ok
    other = GameSession(
        TurnPipeline(cyber, new_game(cyber, seed=2), ScriptedNarrator(cyber), keyword_memory(cyber)),
        SlotStore(tmp_path),
    )
    assert other.play("look").ok and other.play("save").ok
    store = SlotStore(tmp_path)
    assert store.moment_of("quick-fantasy_001") == (forest.game_id, 3)
    assert store.moment_of("quick-scifi_001") == (other.game_id, 1)
    again = session_in(tmp_path, seed=8)  # another game of Misty Forest
    assert again.play("look").ok
    told = again.play("save")
    assert told.ok and "quick save of your other game (turn 3) is kept in slot 'quick-fantasy_001-previous-1'" in (
        told.narration
    )
    assert store.moment_of("quick-fantasy_001-previous-1") == (forest.game_id, 3)
    assert store.moment_of("quick-fantasy_001") == (again.game_id, 1)


def test_a_slot_the_player_names_is_replaced_only_after_a_question(tmp_path):
    """Issue 43: ``save NAME`` over a slot holding another game, or a later moment of this one, wrote over it. It
    asks first; the same command next replaces it, anything else in between asks again. A slot of this game at an
    earlier turn is saved over at once (saving on is what a named save is for)."""
    other = session_in(tmp_path, seed=2)
    for _ in range(9):
        assert other.play("look").ok
    assert other.play("save mine").ok and other.close() is None
    game = session_in(tmp_path, seed=4)
    assert game.play("look").ok
    asked = game.play("save mine")
    assert asked.ok and "holds another game (turn 9)" in asked.narration
    store = SlotStore(tmp_path)
    assert store.moment_of("mine") == (other.game_id, 9)  # nothing written yet
    assert game.play("look").ok
    assert "holds another game" in game.play("save mine").narration  # a turn in between: asked again
    done = game.play("save mine")
    assert done.ok and "Saved to 'mine'" in done.narration
    assert store.moment_of("mine") == (game.game_id, 2)
    assert game.play("look").ok and "Saved to 'mine'" in game.play("save mine").narration  # this game, later: at once
