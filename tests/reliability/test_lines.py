"""Games have identity, branches are games (issue 43, item 1): every new game, branch, and loaded older moment that
goes on is a line of its own (``saves/lines.py``), and no write replaces a moment of another line or a later moment
of the same one. Each test here failed on 0d7437c, where a branch carried its game's id."""

from __future__ import annotations

from pathlib import Path

import orjson

from game.engine.kept import go_on, start_fresh
from game.engine.lines import AS_A_NEW_LINE
from game.saves.format import SaveFile
from game.saves.lines import game_of
from game.saves.slots import SlotStore
from tests.reliability.test_new_games import AUTOSAVE, HOW, session_in
from tests.reliability.test_no_moment_lost import fingerprint, run_a_turn


def moment(save: SaveFile) -> bytes:
    return fingerprint(save.game, save.memory, save.turn)


def kept_anywhere(store: SlotStore, wanted: bytes) -> list[str]:
    """The slots whose own moment is ``wanted``."""
    return [info.name for info in store.list() if moment(store.read(info.name).save) == wanted]


def test_a_branch_loaded_and_played_past_the_main_lines_turn_never_replaces_it(tmp_path):
    """Was: ``slots branch`` at turn 1 of a game saved at turn 3, loaded and played on to turn 6: the branch carried
    the game's id, so its autosaves wrote over ``autosave-<story>`` (turn 3 "or before" of the same game) and, two
    writes later, over its backup: the main line's turns 2 and 3 were in no slot."""
    main = session_in(tmp_path)
    for action in ("go east", "look", "go west"):
        assert main.play(action).ok
    assert main.close() is None
    store = SlotStore(tmp_path)
    third = moment(store.read(AUTOSAVE).save)
    branched = store.branch(AUTOSAVE, 1, "fork").save

    game = session_in(tmp_path, seed=9)
    game.load("fork")
    for _ in range(5):
        assert game.play("look").ok
    assert game.close() is None

    assert kept_anywhere(store, third), "the main line's turn 3 is in no slot"
    assert game.slot != AUTOSAVE and store.read(game.slot).save.turn == 6
    assert game_of(branched.session_id) == main.game_id and branched.session_id != main.line  # a line of its own


def test_a_branch_made_with_f4_is_a_line_of_its_own(tmp_path):
    game = session_in(tmp_path)
    for _ in range(3):
        assert game.play("look").ok
    game.branch(1, "fork")
    assert game.close() is None
    store = SlotStore(tmp_path)
    assert store.line_of(AUTOSAVE) == game.game_id
    fork = store.line_of("fork")
    assert fork is not None and fork != game.game_id and game_of(fork) == game.game_id


def test_loading_an_older_moment_goes_on_as_a_new_line_and_says_so(tmp_path):
    game = session_in(tmp_path)
    for _ in range(2):
        assert game.play("look").ok
    game.save("mine")
    for _ in range(6):
        assert game.play("look").ok
    assert game.close() is None
    store = SlotStore(tmp_path)
    eighth = moment(store.read(AUTOSAVE).save)

    again = session_in(tmp_path, seed=9)
    told = again.play("load mine")
    assert told.ok and again.engine.state.turn == 2
    [said] = [line for line in told.narration.splitlines() if AS_A_NEW_LINE in line]
    assert "went on to turn 8" in said and repr(AUTOSAVE) in said
    assert again.line != game.line and game_of(again.line) == game.game_id
    for _ in range(8):
        assert again.play("look").ok
    assert again.close() is None
    assert kept_anywhere(store, eighth) == [AUTOSAVE]  # where the sentence said it stays
    assert store.read(again.slot).save.turn == 10


def test_undo_then_loading_the_undone_turn_never_replaces_the_turn_played_instead(tmp_path):
    """Was: ``save mine`` at turn 5, undo, another turn 5 played and saved on quit; ``mine`` loaded and played on
    wrote over the autosave's turn 5 (the same game, no later turn): the turn played instead was in no slot."""
    game = session_in(tmp_path)
    for _ in range(4):
        assert game.play("look").ok
    assert game.play("go east").ok
    game.save("mine")
    assert game.play("undo").ok
    assert game.play("rest").ok
    assert game.close() is None
    store = SlotStore(tmp_path)
    instead = moment(store.read(AUTOSAVE).save)
    assert instead != moment(store.read("mine").save)

    again = session_in(tmp_path, seed=9)
    again.load("mine")
    for _ in range(6):
        assert again.play("look").ok
    assert again.close() is None
    assert kept_anywhere(store, instead), "the turn played after the undo is in no slot"


def test_a_branch_made_by_another_window_loaded_and_played_on_keeps_the_first_windows_turns(tmp_path):
    """The no-moment-lost machine's case (test_no_moment_lost.py, minimised; was its docstring): window A plays
    three turns; ``storyecho run --slot autosave-fantasy_001`` plays a turn as a branch in
    ``autosave-fantasy_001-1``; A plays turn 4 and quits; A loads the branch from the load screen and plays on: A's
    turn 4 was in no slot."""
    a = session_in(tmp_path)
    start_fresh(a, AUTOSAVE, HOW)  # the window holds its slot
    for action in ("look", "go east", "look"):
        assert a.play(action).ok
    a.wait_for_autosave()
    assert a.save(AUTOSAVE, kind="autosave", complete=False)
    run_a_turn(tmp_path, AUTOSAVE)
    branch = f"{AUTOSAVE}-1"
    store = SlotStore(tmp_path)
    assert store.read(branch).save.turn == 4
    assert a.play("rest").ok and a.close() is None  # not the branch's own turn 4 ("look")
    fourth = moment(store.read(AUTOSAVE).save)

    again = session_in(tmp_path, seed=9)  # the load screen: the game closed, the slot's game built and gone on
    again.slot = branch
    again.resume(store.read(branch))
    go_on(again, AUTOSAVE, branch, HOW)
    for action in ("go south", "take the tonic"):
        assert again.play(action).ok
    assert again.close() is None
    assert kept_anywhere(store, fourth), "the first window's turn 4 is in no slot"


def test_storyecho_run_says_an_older_moment_goes_on_as_a_new_line_in_json_too(tmp_path):
    game = session_in(tmp_path)
    for _ in range(2):
        assert game.play("look").ok
    game.save("mine")
    for _ in range(3):
        assert game.play("look").ok
    assert game.close() is None

    done = run_a_turn(tmp_path, "mine")
    [first] = [orjson.loads(line) for line in done.stdout.splitlines()]
    assert any(AS_A_NEW_LINE in notice for notice in first["notices"]), first["notices"]
    assert AS_A_NEW_LINE in done.stderr
    store = SlotStore(tmp_path)
    assert store.read(AUTOSAVE).save.turn == 5  # the line's later turns, where they were
    assert store.read("mine").save.turn == 3  # the new line, over its own first moment


def test_a_save_written_before_lines_is_on_its_games_first_line(tmp_path):
    """A save without a line (today's main wrote none: tests/data/previous_main/) is on its game's first line,
    named by the game's id: loaded at its latest moment it goes on on that line, in place."""
    fixture = Path(__file__).parents[1] / "data" / "previous_main" / "fbce072-turn40.json"
    (tmp_path / "old.json").write_bytes(fixture.read_bytes())
    store = SlotStore(tmp_path)
    old = store.read("old").save
    assert old.session_id == old.memory.session_id  # the game's id: its first line
    game = session_in(tmp_path)
    assert not any(AS_A_NEW_LINE in n for n in game.load("old"))
    assert game.line == old.session_id
