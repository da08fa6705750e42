"""Long games stay savable (issue 43, item 3): a save keeps what grows with every turn in parts written once each
(``game/saves/parted.py``), so an autosave writes the same few runs at any length, and a game is refused only past
the bounds of a whole game.

Was: every autosave rewrote the whole file, and an honest game could no longer be saved from about turn 12,250
(the bounds of one file: 30,000 JSON objects, 10 MiB), with a notice advising ``save NAME``, which failed the same
way. The 50,000-turn game is measured in ``bench/long_games.py``; these tests run the same code at a small size, the
size a list is sealed at (``export.PART_BYTES``) and the bounds lowered.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from game.cli import main
from game.memory import export
from game.memory.export import json_counts
from game.saves import format as save_format
from game.saves import parted
from game.saves.format import SaveError, branch, decode
from game.saves.slots import SlotStore
from tests.conftest import scripted_session

ACTIONS = ["look", "go north", "talk to garrick", "go south", "say {the} fog, {never}, lifts", "inventory", "rest"]
CURRENT_MAIN = Path(__file__).parents[1] / "data" / "previous_main" / "54f7235-turn60.json"
"""A save written by the main before saves in parts (54f7235), by a 60-turn game of ``bench/saves.py``'s actions
(seed 7)."""


@pytest.fixture
def small_parts(monkeypatch):
    """Lists sealed every 2 KB: a game of a hundred turns has the parts a game of thousands has."""
    monkeypatch.setattr(export, "PART_BYTES", 2048)


def played(game, turns: int, actions: list[str] = ACTIONS) -> None:
    n = 0
    while game.engine.state.turn < turns:
        assert game.play(actions[n % len(actions)]).ok
        n += 1
        assert n < 4 * turns + 20, f"only {game.engine.state.turn} turns after {n} lines"


def whole(root: Path, name: str) -> bytes:
    """The whole document of slot ``name`` (its parts joined, as a load joins them)."""
    data = (root / f"{name}.json").read_bytes()
    raw = orjson.loads(data)
    return parted.join(raw, SlotStore(root).parts.read) if raw["schema_version"] == 2 else data


def test_a_game_past_what_one_file_holds_autosaves_the_same_few_runs_and_loads(
    fantasy, tmp_path, small_parts, monkeypatch
):
    """Each autosave writes a slot file of about the same size however long the game (flat), and the game saves
    and loads whole past the bounds of one file (lowered here to what 40 turns hold)."""
    monkeypatch.setattr(save_format, "MAX_SAVE_OBJECTS", 120)
    game = scripted_session(fantasy, tmp_path)
    game.autosave_every = 5
    game.slot = "long"
    sizes = {}
    for turns in (40, 80, 120):
        played(game, turns)
        game.wait_for_autosave()
        assert not [n for n in game.notices if "Autosave failed" in n]
        sizes[turns] = (tmp_path / "long.json").stat().st_size
    objects = json_counts(whole(tmp_path, "long"))[0]
    assert objects > 2 * save_format.MAX_SAVE_OBJECTS  # what one file may hold, well past
    assert max(sizes.values()) < 2 * min(sizes.values())  # flat: not growing with the game (was: linear)
    assert len(list((tmp_path / ".parts").glob("*.json"))) > 5

    game.save("long")
    again = scripted_session(fantasy, tmp_path)
    again.load("long")
    assert again.engine.state == game.engine.state
    assert again.engine.memory.state.log == game.engine.memory.state.log
    assert again.engine.memory.state.summaries == game.engine.memory.state.summaries
    assert again.play("look").ok


def test_a_branch_of_a_game_in_parts_shares_its_parts_and_plays(fantasy, tmp_path, small_parts):
    game = scripted_session(fantasy, tmp_path)
    played(game, 80)
    game.save("long")
    parts = set((tmp_path / ".parts").iterdir())
    store = SlotStore(tmp_path)
    store.branch("long", 30, "early")
    assert set((tmp_path / ".parts").iterdir()) == parts  # its runs are the game's own: none written again
    at_thirty = scripted_session(fantasy, tmp_path)
    at_thirty.load("early")
    assert at_thirty.engine.state.turn == 30 and max(e.turn for e in at_thirty.engine.memory.state.log) == 30
    assert at_thirty.play("look").ok
    assert decode(branch(store.read("long").save, 70), store.parts.read).turn == 70


def test_a_save_of_the_main_before_parts_loads_unchanged_and_saves_again_in_parts(fantasy, tmp_path, small_parts):
    shutil.copy(CURRENT_MAIN, tmp_path / "old.json")
    game = scripted_session(fantasy, tmp_path)
    game.load("old")
    assert game.engine.state.turn == 60
    old = decode(CURRENT_MAIN.read_bytes())
    assert game.engine.memory.state.log == old.memory.log
    played(game, 70, ["defend", "flee", "say the {fog}, never lifts here", "rest", "look"])
    game.save("old")  # its own slot: the same game, a later moment
    assert orjson.loads((tmp_path / "old.json").read_bytes())["schema_version"] == 2
    again = scripted_session(fantasy, tmp_path)
    again.load("old")
    assert again.engine.memory.state.log[: len(old.memory.log)] == old.memory.log


def test_a_missing_or_damaged_part_is_refused_with_its_reason(fantasy, tmp_path, small_parts):
    game = scripted_session(fantasy, tmp_path)
    played(game, 60)
    game.save("long")
    raw = orjson.loads((tmp_path / "long.json").read_bytes())
    first = raw["parts"]["memory.log"][0]
    part = tmp_path / ".parts" / f"{first}.json"
    good = part.read_bytes()
    part.write_bytes(good.replace(b"look", b"LOOK", 1))
    with pytest.raises(SaveError, match=rf"part {first[:12]} of this save is damaged"):
        SlotStore(tmp_path).read("long")
    assert SlotStore(tmp_path).info("long").turn == 60  # listed from its header, as a damaged file is
    part.unlink()
    with pytest.raises(SaveError, match=rf"part {first[:12]} of this save cannot be read"):
        SlotStore(tmp_path).read("long")
    game.save("long")  # the game in play writes it again
    assert part.read_bytes() == good
    assert SlotStore(tmp_path).read("long").save.turn == 60


def test_a_game_in_parts_past_the_bounds_of_a_whole_game_is_refused_before_it_is_validated(
    fantasy, tmp_path, small_parts, monkeypatch
):
    game = scripted_session(fantasy, tmp_path)
    played(game, 60)
    game.save("long")
    objects = json_counts(whole(tmp_path, "long"))[0]
    monkeypatch.setattr(parted, "MAX_GAME_OBJECTS", objects - 10)
    with pytest.raises(SaveError, match=r"too many parts for a save .* JSON objects in all"):
        SlotStore(tmp_path).read("long")


def test_no_notice_advises_a_save_that_fails_the_same_way(fantasy, tmp_path, small_parts, monkeypatch):
    """Was (issue 43): a game grown past what a save holds was told "try 'save NAME' elsewhere", which failed the
    same way."""
    game = scripted_session(fantasy, tmp_path)
    game.autosave_every = 5
    played(game, 20)
    game.wait_for_autosave()
    monkeypatch.setattr(parted, "MAX_GAME_OBJECTS", 10)
    played(game, 25)
    game.wait_for_autosave()
    told = " ".join(game.notices) + " ".join(game._background.told())
    assert "grown past what a save holds" in told
    assert "save NAME" not in told and "no slot holds a game this long" in told


def test_slots_export_of_a_game_in_parts_writes_every_turn_to_one_file(fantasy, tmp_path, small_parts, capsys):
    game = scripted_session(fantasy, tmp_path)
    played(game, 60)
    game.save("long")
    out = tmp_path / "long.txt"
    assert main(["slots", "export", "long", "--output", str(out), "--data-dir", str(tmp_path)]) == 0
    text = out.read_text(encoding="utf-8")
    told = [e.turn for e in game.engine.memory.state.log if e.action]
    assert all(f"Turn {turn} " in text or f"Turn {turn}\n" in text for turn in told)


def test_a_list_in_parts_is_the_same_list_through_appends_and_undos(monkeypatch):
    """Parts sealed, unsealed by an undo into them, and the runs a save names are always the list's own items."""
    import random

    monkeypatch.setattr(export, "PART_BYTES", 50)
    rng = random.Random(43)
    for _ in range(100):
        packed, items = export.PackedJson(sealed=True), []
        for step in range(60):
            if items and rng.random() < 0.15:
                kept = rng.randrange(len(items) + 1)
                packed.truncate(kept)
                del items[kept:]
            else:
                item = {"turn": step, "text": "a" * rng.randrange(30)}
                packed.append(orjson.dumps(item))
                items.append(item)
            count = rng.randrange(len(items) + 1)
            parts, rest = packed.parted(count)
            named = [item for part in parts for item in orjson.loads(part.json())]
            assert named + orjson.loads(orjson.dumps(rest)) == items[:count]
            assert list(packed.items(count)) == items[:count] == orjson.loads(packed.array(count))
