"""Saves at their edges (issue 22, item 2): a hostile value never hangs or crashes the game, a save that cannot be
written is told and the game goes on, a new game never loses the last one, a backup is always a save that reads,
and only the game's own temporary files are cleaned up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from game.engine.kept import start_fresh
from game.engine.pipeline import TurnPipeline
from game.engine.session import GameSession
from game.llm.scripted import ScriptedNarrator
from game.saves.format import SaveError, encode
from game.saves.slots import SlotStore
from game.tui.app import StoryEchoApp
from game.world.loader import content_root, load_pack
from game.world.state import new_game
from tests.conftest import keyword_memory
from tests.tui.test_app import SIZE, play, playing, settings_for, until
from tests.tui.test_app import new_game as start_new_game

FANTASY = load_pack(content_root() / "fantasy_001")


def session_at(root: Path, turns: int = 2) -> GameSession:
    engine = TurnPipeline(FANTASY, new_game(FANTASY, seed=5), ScriptedNarrator(FANTASY), keyword_memory(FANTASY))
    session = GameSession(engine, SlotStore(root))
    for _ in range(turns):
        session.play("look")
    return session


def saved(session: GameSession, **game: object) -> bytes:
    doc = orjson.loads(encode(session.engine.pack, session.engine.state, session.engine.memory.export_state()))
    doc["game"].update(game)
    return json.dumps(doc).encode()  # any integer, as a hostile file may hold


@pytest.mark.parametrize(
    ("field", "value"), [("exp", 9_000_000_000_000_000_000), ("gold", 18_446_744_073_709_551_616), ("hp", -(10**12))]
)
def test_a_save_with_a_number_out_of_bounds_is_refused_with_a_message(tmp_path, field, value):
    """Was: exp 9e18 loaded and the next turn never ended; gold 2**64 loaded and every save raised TypeError."""
    session = session_at(tmp_path)
    store = session.slots
    assert store is not None
    store.write("hostile", saved(session, **{field: value}))
    with pytest.raises(SaveError, match=rf"damaged save: game\.{field}: Input should be"):
        store.read("hostile")
    before = session.engine.state.model_copy(deep=True)
    with pytest.raises(SaveError):
        session.load("hostile")
    assert session.engine.state == before and session.play("look").ok  # the game goes on as it was


def test_levels_are_computed_without_a_loop_per_level():
    """Was: level_up looped once per level: a huge experience total never finished (run with a deadline)."""
    code = (
        "from game.world.rules.core import Outcome\n"
        "from game.world.rules.growth import LEVEL_UP_STATS, level_for, level_up\n"
        "from game.world.loader import content_root, load_pack\n"
        "from game.world.state import new_game\n"
        "state = new_game(load_pack(content_root() / 'fantasy_001'))\n"
        "state.exp = 10**15\n"
        "assert level_up(state, Outcome())\n"
        "level = level_for(10**15)\n"
        "assert state.level == level > 10**6 and state.strength == 12 + LEVEL_UP_STATS['strength'] * (level - 1)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], timeout=60, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_a_save_that_cannot_be_written_is_a_save_error_and_the_game_goes_on(tmp_path):
    """Was: `TypeError: Integer exceeds 64-bit range` out of every save (run exited 1, F5 ended the TUI)."""
    session = session_at(tmp_path)
    session.engine.state.gold = 2**64  # what no rule makes; a state that JSON cannot hold
    with pytest.raises(SaveError, match="could not be written"):
        session.save("broken")
    session.engine.state.gold = 10
    assert session.play("look").ok and "broken" not in [i.name for i in session.slots.list()]  # type: ignore[union-attr]


def test_a_new_game_sets_aside_the_good_backup_of_a_damaged_autosave(tmp_path):
    """Was: the message said the last game was kept in <autosave>-previous, which held the damaged bytes, and the
    slot and its good backup were deleted."""
    old = session_at(tmp_path / "saves", turns=3)
    store = old.slots
    assert store is not None
    old.save("autosave-fantasy_001")
    old.play("look")
    old.save("autosave-fantasy_001")  # the turn-3 save is now the backup
    store.path("autosave-fantasy_001").write_bytes(b'{"schema_version": 1, "truncated')
    fresh = session_at(tmp_path / "saves", turns=0)
    told = start_fresh(fresh, "autosave-fantasy_001", "F3 to load it")
    assert told == ["A new game. Your last one is kept in slot 'autosave-fantasy_001-previous-1' (F3 to load it)."]
    kept = store.read("autosave-fantasy_001-previous-1")
    assert kept.save.turn == 3 and not kept.from_backup
    assert not store.exists("autosave-fantasy_001") and fresh.slot == "autosave-fantasy_001"


def test_a_last_game_that_cannot_be_set_aside_is_never_deleted(tmp_path):
    store = SlotStore(tmp_path)
    tmp_path.mkdir(exist_ok=True)
    store.path("autosave-fantasy_001").write_bytes(b"garbage")
    store.backup_path("autosave-fantasy_001").write_bytes(b"garbage too")
    fresh = session_at(tmp_path, turns=0)
    told = start_fresh(fresh, "autosave-fantasy_001", "F3 to load it")
    assert "could not be set aside" in told[0]
    assert store.path("autosave-fantasy_001").read_bytes() == b"garbage"  # nothing deleted
    assert fresh.slot.startswith("autosave-fantasy_001-") and fresh.slot != "autosave-fantasy_001"
    fresh.play("look")
    fresh.save(fresh.slot)
    assert store.path("autosave-fantasy_001").read_bytes() == b"garbage"  # nor overwritten


def test_a_backup_is_only_ever_a_save_that_reads(tmp_path):
    """Was: a write to a damaged slot made the damaged file the backup ("its backup is damaged too")."""
    session = session_at(tmp_path)
    store = session.slots
    assert store is not None
    session.save("game")
    session.play("look")
    session.save("game")
    good_backup = store.backup_path("game").read_bytes()
    store.path("game").write_bytes(b"\x00damaged")
    session.play("look")
    session.save("game")
    assert store.backup_path("game").read_bytes() == good_backup
    assert store.read("game").save.turn == session.engine.state.turn


def test_only_the_games_own_temporary_files_are_cleaned_up(tmp_path):
    """Was: every `.*.tmp` older than the cut-off in the data folder was deleted (a `.vimrc.tmp` went)."""
    session = session_at(tmp_path)
    mine = tmp_path / ".game.json.4242.0badc0de.tmp"
    theirs = tmp_path / ".vimrc.tmp"
    for path in (mine, theirs):
        path.write_text("x")
        old = time.time() - 24 * 3600
        os.utime(path, (old, old))
    session.save("game")
    assert theirs.exists() and not mine.exists()


async def test_quick_load_asks_first_when_the_game_has_unsaved_progress(tmp_path):
    """Was: F9 in Misty Forest loaded the Cyber quick slot without asking."""
    settings = settings_for(tmp_path)
    app = StoryEchoApp(settings)
    async with app.run_test(size=SIZE) as pilot:
        await start_new_game(pilot, 1)  # Cyber
        await play(pilot, "look")
        await pilot.press("f5")
        await until(pilot, lambda: SlotStore(settings.data_dir).exists("quick-scifi_001"), what="quick save")
        await until(pilot, lambda: app.saved_turn == 1, what="saved")
        await play(pilot, "look")  # progress since the save
        await pilot.press("f9")
        await until(pilot, lambda: type(app.screen).__name__ == "ConfirmScreen", what="the question")
        await pilot.press("n")
        await until(pilot, lambda: playing(app), what="back to play")
        assert app.session is not None and app.session.engine.state.turn == 2  # nothing was loaded
        await pilot.press("f9")
        await until(pilot, lambda: type(app.screen).__name__ == "ConfirmScreen", what="the question again")
        await pilot.press("y")
        await until(
            pilot, lambda: playing(app) and app.session is not None and app.session.engine.state.turn == 1, what="load"
        )


def _quick_save(root: Path, story: str, turns: int) -> None:
    """A game of ``story`` played ``turns`` turns and quick saved (``save`` alone: its story's quick slot)."""
    pack = load_pack(content_root() / story)
    engine = TurnPipeline(pack, new_game(pack, seed=4), ScriptedNarrator(pack), keyword_memory(pack))
    game = GameSession(engine, SlotStore(root), slot=f"autosave-{story}")
    for _ in range(turns):
        assert game.play("look").ok
    assert game.play("save").ok
    game.close(save=False)


async def test_quick_load_says_whose_game_it_loads(tmp_path):
    """Was (issue 43): F9 loaded another story's quick save without saying whose it was. At the title F9 loads the
    newest quick save and names its story and turn; in play, the story's own, named too."""
    settings = settings_for(tmp_path)
    _quick_save(Path(settings.data_dir), "fantasy_001", 3)
    time.sleep(0.05)  # the Cyber save is the newer one
    _quick_save(Path(settings.data_dir), "scifi_001", 2)
    app = StoryEchoApp(settings)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: type(app.screen).__name__ == "TitleScreen", what="title")
        await pilot.press("f9")
        await until(pilot, lambda: playing(app), what="the quick save loaded")
        assert app.session is not None and app.session.engine.pack.story.id == "scifi_001"
        told = [n.message for n in app._notifications]
        assert any(m.startswith("Quick load: Cyber") and m.endswith("turn 2.") for m in told), told
        await play(pilot, "look")
        app.saved_turn = app.session.engine.state.turn  # no question about progress: this test is about the words
        await pilot.press("f9")
        await until(pilot, lambda: app.session is not None and app.session.engine.state.turn == 2, what="load")
        told = [n.message for n in app._notifications]
        assert sum(m.startswith("Quick load: Cyber") and m.endswith("turn 2.") for m in told) == 2, told
        assert not any("Misty Forest" in m for m in told)  # another story's quick save is not this story's
