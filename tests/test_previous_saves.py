"""Saves written by the previous main load and play on (issue 33: nothing in the save format loses compatibility).

``tests/data/previous_main/fbce072-turn40.json`` was written by the code of commit fbce072 (the main before issue 33),
in a checkout of it (``git worktree add /tmp/oldmain fbce072``), by this script run there with
``PYTHONPATH=/tmp/oldmain python make_fixture.py FOLDER``::

    from bench.saves import play, STORY
    pack = load_pack(content_root() / STORY)
    session, memory = play(pack, 40)                      # 40 turns of the walkthroughs, keyword memory
    entry = next(e for e in memory.state.bible if e.status == "active" and e.source == "content")
    memory.review_bible(entry.id, "pin", session.engine.state.turn)
    session.undo(); session.undo(); session.redo()
    session.play("look")
    SlotStore(Path(FOLDER)).write("oldmain", session.snapshot(complete=True))

It holds a history of 40 turns (branches start from any of them) and a pin the player made.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson

from game.saves.format import branch, decode
from tests.conftest import scripted_session

FIXTURE = Path(__file__).parent / "data" / "previous_main" / "fbce072-turn40.json"


session = scripted_session


def test_a_save_of_the_previous_main_loads_plays_branches_and_saves_again(fantasy, tmp_path):
    shutil.copy(FIXTURE, tmp_path / "old.json")
    game = session(fantasy, tmp_path)
    game.load("old")
    assert game.engine.state.turn == 40
    assert [e.turn for e in game.engine.memory.state.log if e.action][-3:] == [38, 39, 40]
    pinned = [e.id for e in game.engine.memory.bible_entries() if e.pinned]
    assert pinned == ["bible-1"]  # the player's pin, as the old game kept it

    old = decode(FIXTURE.read_bytes())
    at_twenty = decode(branch(old, 20))  # ``storyecho slots branch``: from the old save's history
    assert at_twenty.game.turn == 20 and max(e.turn for e in at_twenty.memory.log) == 20

    for action in ["look", "go east", "look"]:
        assert game.play(action).ok
    assert game.play("undo").ok and game.engine.state.turn == 42
    game.save("again")
    again = decode((tmp_path / "again.json").read_bytes())
    assert again.turn == 42 and again.history is not None and len(again.history.turns) == 42
    reloaded = session(fantasy, tmp_path)
    reloaded.load("again")
    assert reloaded.engine.state == game.engine.state
    assert reloaded.play("look").ok


def keys(value: Any, where: str = "") -> set[str]:
    """The paths of every object key in ``value`` (list items share their list's path)."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            found |= {f"{where}.{key}"} | keys(item, f"{where}.{key}")
    elif isinstance(value, list):
        for item in value:
            found |= keys(item, f"{where}[]")
    return found


def test_a_save_written_now_holds_no_field_the_previous_main_does_not_know(fantasy, tmp_path):
    """The previous main refuses unknown fields: a save of this version loads there too while this holds."""
    shutil.copy(FIXTURE, tmp_path / "old.json")
    game = session(fantasy, tmp_path)
    game.load("old")
    assert game.play("look").ok
    written = keys(orjson.loads(game.snapshot()))
    known = keys(orjson.loads(FIXTURE.read_bytes()))
    assert written - known == set()
