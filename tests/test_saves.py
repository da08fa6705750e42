"""Save slots: names, links, round trips, the backup, the slot list, transcripts, migration, typed commands."""

from __future__ import annotations

import contextlib
import errno
import os
import threading
from pathlib import Path
from typing import Any

import orjson
import pytest

from game.engine.pipeline import TurnPipeline
from game.engine.session import GameSession
from game.llm.scripted import ScriptedNarrator
from game.saves.format import SCHEMA_VERSION, SaveError, check_against, decode, encode
from game.saves.slots import SlotStore, check_name
from game.saves.transcript import transcript
from game.world.loader import content_root, load_pack
from game.world.state import new_game
from tests.conftest import keyword_memory

WALK = ["take sword", "talk to sage", "north", "look", "look", "east", "look"]
"""Seven turns on the mini pack: an item, a side quest, two places, and a summary at turn 5."""


def engine(pack, seed=3):
    return TurnPipeline(pack, new_game(pack, seed=seed), ScriptedNarrator(pack), keyword_memory(pack))


def session(pack, root, seed=3, **kwargs):
    return GameSession(engine(pack, seed), SlotStore(root), **kwargs)


def played(pack, root, actions=WALK, **kwargs):
    game = session(pack, root, **kwargs)
    for action in actions:
        assert game.play(action).ok, action
    return game


def dumps(game):
    """The whole game as plain data: world state and memory state."""
    return game.engine.state.model_dump(), game.engine.memory.state.model_dump()


def save_bytes(pack, turns=0):
    """Valid save bytes of a game of ``pack`` after ``turns`` turns of looking around."""
    game = engine(pack)
    for _ in range(turns):
        assert game.play("look").ok
    return encode(pack, game.state.model_dump(mode="json"), game.memory.export_state())


# ----------------------------------------------------------------- slot names
@pytest.mark.parametrize(
    "name",
    ["../x", "/etc/passwd", "/tmp/evil", "", ".hidden", "a/b", "a\\b", "a\x00b", "abc\n", "..", "x" * 101, "end."],
)
def test_bad_slot_names_are_refused_everywhere(tmp_path, name):
    store = SlotStore(tmp_path / "saves")
    with pytest.raises(SaveError, match="not a slot name"):
        check_name(name)
    with pytest.raises(SaveError, match="not a slot name"):
        store.path(name)
    with pytest.raises(SaveError, match="not a slot name"):
        store.write(name, b"{}")
    with pytest.raises(SaveError, match="not a slot name"):
        store.read(name)
    assert not any(tmp_path.rglob("*"))  # nothing was written anywhere, not even the folder


def test_an_absolute_path_is_not_a_slot_name(tmp_path):
    outside = tmp_path / "outside"
    with pytest.raises(SaveError, match="not a slot name"):
        SlotStore(tmp_path / "saves").write(str(outside), b"{}")
    assert not outside.exists() and not outside.with_suffix(".json").exists()


@pytest.mark.parametrize("name", ["my save", "slot-2", "Quest_1.final", "a", "x" * 64])
def test_ordinary_slot_names_are_accepted(tmp_path, mini_pack, name):
    store = SlotStore(tmp_path)
    data = save_bytes(mini_pack)
    assert check_name(name) == name
    assert store.write(name, data) == tmp_path / f"{name}.json"
    assert store.read(name).save.story_id == "mini"
    assert [info.name for info in store.list()] == [name]


def test_a_slot_linked_out_of_the_folder_is_refused(tmp_path, mini_pack):
    root, outside = tmp_path / "saves", tmp_path / "elsewhere.json"
    root.mkdir()
    data = save_bytes(mini_pack)
    outside.write_bytes(data)
    (root / "evil.json").symlink_to(outside)
    (root / "dangling.json").symlink_to(tmp_path / "nothing-here.json")
    store = SlotStore(root)
    for name in ("evil", "dangling"):
        with pytest.raises(SaveError, match="link out of the saves folder"):
            store.path(name)
        with pytest.raises(SaveError, match="link out of the saves folder"):
            store.read(name)
        with pytest.raises(SaveError, match="link out of the saves folder"):
            store.write(name, save_bytes(mini_pack, turns=1))
    assert outside.read_bytes() == data  # the file the link points at was not overwritten
    assert not (tmp_path / "nothing-here.json").exists()


def test_a_slot_linked_inside_the_folder_is_accepted(tmp_path, mini_pack):
    store = SlotStore(tmp_path)
    store.write("real", save_bytes(mini_pack, turns=2))
    (tmp_path / "alias.json").symlink_to(tmp_path / "real.json")
    assert store.path("alias") == tmp_path / "alias.json"
    assert store.read("alias").save.turn == 2


# ----------------------------------------------------------------- round trip
def test_a_loaded_game_is_the_saved_game_and_plays_on_identically(tmp_path, mini_pack):
    first = played(mini_pack, tmp_path)
    assert first.engine.memory.state.summaries  # the save holds a summary (with its synopsis), not only turns
    first.save("alpha")
    second = session(mini_pack, tmp_path, seed=99)  # a new engine, its own memory, another seed
    assert dumps(second) != dumps(first)
    second.load("alpha")
    assert dumps(second) == dumps(first)
    a, b = first.play("take stone"), second.play("take stone")
    assert a.ok and b.ok
    assert a.narration == b.narration and "Smooth Stone" in a.narration
    assert dumps(second) == dumps(first)
    assert second.engine.state.turn == 8


# ------------------------------------------------------------------ the backup
def test_a_damaged_slot_falls_back_to_its_backup_with_a_notice(tmp_path, mini_pack):
    store = SlotStore(tmp_path)
    old, new = save_bytes(mini_pack, turns=1), save_bytes(mini_pack, turns=2)
    store.write("slot", old)
    store.write("slot", new)
    assert store.read("slot").save.turn == 2 and not store.read("slot").from_backup
    assert (tmp_path / ".slot.json.bak").read_bytes() == old
    (tmp_path / "slot.json").write_bytes(new[: len(new) // 2])  # torn
    loaded = store.read("slot")
    assert loaded.from_backup and loaded.save.turn == 1
    assert len(loaded.notices) == 1 and "damaged" in loaded.notices[0] and "from turn 1" in loaded.notices[0]


def test_a_slot_whose_backup_is_damaged_too_cannot_be_loaded(tmp_path, mini_pack):
    store = SlotStore(tmp_path)
    store.write("slot", save_bytes(mini_pack, turns=1))
    store.write("slot", save_bytes(mini_pack, turns=2))
    (tmp_path / "slot.json").write_bytes(b"junk")
    (tmp_path / ".slot.json.bak").write_bytes(b"")
    with pytest.raises(SaveError, match="backup is damaged too"):
        store.read("slot")


def test_a_slot_with_only_its_backup_left_still_loads(tmp_path, mini_pack):
    store = SlotStore(tmp_path)
    store.write("slot", save_bytes(mini_pack, turns=1))
    store.write("slot", save_bytes(mini_pack, turns=2))
    (tmp_path / "slot.json").unlink()
    loaded = store.read("slot")
    assert loaded.from_backup and loaded.save.turn == 1
    assert [info.name for info in store.list()] == ["slot"]


# ---------------------------------------------------------------- list, delete
def test_the_slot_list_shows_story_turn_and_place_and_marks_damaged_slots(tmp_path, mini_pack):
    store = SlotStore(tmp_path)
    assert store.list() == []
    game = played(mini_pack, tmp_path, autosave_every=0)
    game.save("bridge")
    store.write("start", save_bytes(mini_pack))
    (tmp_path / "broken.json").write_bytes(b'{"schema_version": 1}')
    (tmp_path / ".start.json.123.cafe.tmp").write_bytes(b"half a save")  # a writer's temporary file
    (tmp_path / "notes.txt").write_text("not a slot")
    infos = {info.name: info for info in store.list()}
    assert set(infos) == {"bridge", "start", "broken"}
    bridge, start, broken = infos["bridge"], infos["start"], infos["broken"]
    assert (bridge.story_id, bridge.story_title, bridge.turn, bridge.place) == ("mini", "Mini Vale", 7, "Troll Bridge")
    assert (start.turn, start.place, start.kind) == (0, "Quiet Camp", "manual")
    assert not bridge.error and not start.error
    assert "damaged save" in broken.error and broken.turn == 0
    text = game.list_text()
    assert "Troll Bridge" in text and "turn 7" in text and "cannot be loaded" in text


def test_the_latest_slot_is_the_newest_readable_one_and_older_saves_are_not_read(tmp_path, mini_pack, monkeypatch):
    store = SlotStore(tmp_path)
    assert store.latest() is None
    for n, name in enumerate(("old", "middle", "newest")):
        store.write(name, save_bytes(mini_pack, turns=n))
        os.utime(tmp_path / f"{name}.json", (1000 + n, 1000 + n))
    (tmp_path / "newest.json").write_bytes(b"{broken")  # the newest file is damaged, its backup too old to win
    os.utime(tmp_path / "newest.json", (2000, 2000))
    (tmp_path / ".newest.json.bak").unlink(missing_ok=True)
    read: list[str] = []
    real = SlotStore.info  # the list's read of one slot (its header)
    monkeypatch.setattr(SlotStore, "info", lambda self, name: read.append(name) or real(self, name))
    latest = store.latest()
    assert latest is not None and (latest.name, latest.turn) == ("middle", 1)
    assert read == ["newest", "middle"]  # the title reads no more saves than it takes


def test_a_fifo_named_like_a_slot_is_refused_without_hanging(tmp_path, mini_pack):
    os.mkfifo(tmp_path / "pipe.json")  # opening a FIFO for reading blocks until a writer comes
    store = SlotStore(tmp_path)
    with pytest.raises(SaveError, match="not a regular file"):
        store.read("pipe")
    assert "not a regular file" in {i.name: i for i in store.list()}["pipe"].error


def test_delete_removes_the_slot_and_its_backup(tmp_path, mini_pack):
    store = SlotStore(tmp_path)
    store.write("gone", save_bytes(mini_pack, turns=1))
    store.write("gone", save_bytes(mini_pack, turns=2))
    store.write("kept", save_bytes(mini_pack))
    assert (tmp_path / ".gone.json.bak").exists()
    store.delete("gone")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.json"]
    assert not store.exists("gone") and [info.name for info in store.list()] == ["kept"]
    with pytest.raises(SaveError, match="no save named 'gone'"):
        store.read("gone")
    with pytest.raises(SaveError, match="no save named 'gone'"):
        store.delete("gone")


# ----------------------------------------------------------------- transcript
def test_the_transcript_holds_every_action_and_summary_and_escapes_markdown(tmp_path, mini_pack):
    actions = [*WALK, "shout #1 *loudly* at the trees", "look", "look"]  # saved at turn 10, with its summary
    game = played(mini_pack, tmp_path, actions)
    game.save("run")
    save = SlotStore(tmp_path).read("run").save
    summaries = [s.labelled() for s in save.memory.summaries]
    assert [s.turn for s in save.memory.summaries] == [5, 10]
    plain, markdown = transcript(save), transcript(save, markdown=True)
    for action in actions:
        assert f"> {action}\n" in plain
        assert action in markdown.replace("\\", "")
    for summary in summaries:
        assert summary in plain
        assert summary in markdown.replace("\\", "")
    # each summary comes after the turns it covers and before the next one
    assert plain.index("Turn 5 ") < plain.index(summaries[0]) < plain.index("Turn 6 ")
    assert plain.index("Turn 10 ") < plain.index(summaries[1]) < plain.index("The story goes on.")
    assert plain.startswith("Mini Vale - turn 10 at Troll Bridge") and plain.endswith("The story goes on.\n")
    # a player's '#' and '*' are shown literally, not as a heading or emphasis
    assert "> shout \\#1 \\*loudly\\* at the trees" in markdown
    assert "*loudly*" not in markdown and "#1" not in markdown.replace("\\#1", "")
    assert markdown.startswith("# Mini Vale") and "### Turn 8 - Troll Bridge" in markdown


# ------------------------------------------------------------------ migration
V0_SAVE: dict[str, Any] = {
    "version": 0,
    "story": "mini",
    "state": {
        "story_id": "mini",
        "player_name": "Tester",
        "node": "woods",
        "hp": 42,
        "max_hp": 50,
        "strength": 10,
        "agility": 0,
        "intelligence": 8,
        "gold": 15,
        "inventory": ["bread", "sword"],
        "quests": {"find_sword": {"status": "completed", "objectives_done": ["take_sword"]}},
        "flags": ["visited:camp", "visited:woods"],
        "taken_items": ["camp:sword"],
        "turn": 3,
        "clock_minutes": 510,
        "seed": 7,
    },
    "memory": {
        "session_id": "proto0session",
        "window": [
            {"role": "user", "content": "north"},
            {"role": "assistant", "content": "You walk into the dark woods."},
        ],
        "synopsis": "The traveller armed themself and went into the woods.",
        "log": [
            {"turn": 1, "action": "take sword", "narration": "You take the Iron Sword.", "node": "Quiet Camp"},
            {"turn": 2, "action": "look", "narration": "A camp by a fire.", "node": "Quiet Camp"},
            {"turn": 3, "action": "north", "narration": "You walk into the dark woods.", "node": "Dark Woods"},
        ],
        "summaries": [
            {"first_turn": 1, "turn": 1, "text": "The traveller took a sword."},
            {"first_turn": 2, "turn": 2, "text": "The traveller went north."},
        ],
        "bible": [
            {
                "id": "core-1",
                "entry_type": "location",
                "canonical_key": "location:camp",
                "title": "Quiet Camp",
                "content": "A camp by a fire, safe and warm.",
                "status": "active",
            },
            {
                "id": "e-2",
                "entry_type": "item",
                "canonical_key": "item:sword",
                "title": "Iron Sword",
                "content": "The player carries the Iron Sword.",
                "status": "active",
                "source_turn": 1,
            },
        ],
        "last_consolidated_turn": 2,
        "next_entry": 3,
    },
}
"""A prototype (v0) save, written out by hand in the shape ``_v0_to_v1`` documents."""


def test_a_v0_save_is_migrated_to_v1_on_load(tmp_path, mini_pack):
    (tmp_path / "old.json").write_bytes(orjson.dumps(V0_SAVE))
    store = SlotStore(tmp_path)
    save = store.read("old").save
    assert save.schema_version == SCHEMA_VERSION == 1
    assert (save.story_id, save.session_id, save.turn, save.kind) == ("mini", "proto0session", 3, "manual")
    assert save.game.node == "woods" and save.game.hp == 42 and save.game.inventory == ["bread", "sword"]
    memory = save.memory
    assert [e.action for e in memory.log] == ["take sword", "look", "north"]
    assert memory.summaries[-1].synopsis == "The traveller armed themself and went into the woods."
    assert memory.summaries[0].synopsis == ""  # the older summary's synopsis was not kept by v0
    assert memory.synopsis == "The traveller armed themself and went into the woods."
    assert {e.id: e.source for e in memory.bible} == {"core-1": "content", "e-2": "consolidation"}
    assert memory.window(3, 2, 200) == V0_SAVE["memory"]["window"]  # the dropped window is read from the log
    # it belongs to the mini story; a v0 save has no content hash, so the player is told the content changed
    assert check_against(save, mini_pack) and "has changed" in check_against(save, mini_pack)[0]
    game = session(mini_pack, tmp_path)
    game.load("old")
    assert game.engine.state.node == "woods" and game.engine.memory.state.last_consolidated_turn == 2
    assert game.play("south").ok and game.engine.state.node == "camp" and game.engine.state.turn == 4
    game.save("old")  # saved again, it is a v1 file
    assert (tmp_path / "old.json").read_bytes().startswith(b'{"schema_version":1,')
    assert orjson.loads((tmp_path / ".old.json.bak").read_bytes()) == V0_SAVE  # the v0 file is the backup


def test_a_save_from_a_newer_storyecho_is_refused(tmp_path, mini_pack):
    document = orjson.loads(save_bytes(mini_pack))
    document["schema_version"] = 3
    document["a_field_of_the_future"] = True
    (tmp_path / "future.json").write_bytes(orjson.dumps(document))
    with pytest.raises(SaveError, match=r"newer StoryEcho \(save schema 3; this version reads up to 2\)"):
        SlotStore(tmp_path).read("future")


# ----------------------------------------------------------- against a story
def test_a_save_is_checked_against_the_story_it_is_loaded_into():
    fantasy, scifi = load_pack(content_root() / "fantasy_001"), load_pack(content_root() / "scifi_001")
    save = decode(save_bytes(fantasy))
    assert check_against(save, fantasy) == []
    with pytest.raises(SaveError, match="save of another story \\('fantasy_001'\\), not of 'scifi_001'"):
        check_against(save, scifi)
    changed = save.model_copy(update={"content_hash": "0" * len(save.content_hash)})
    notices = check_against(changed, fantasy)
    assert len(notices) == 1 and fantasy.story.title in notices[0] and "has changed" in notices[0]


def test_a_save_naming_what_the_story_does_not_have_is_refused(mini_pack):
    game = engine(mini_pack)
    for field, value, named in [
        ("node", "atlantis", "place 'atlantis'"),
        ("inventory", ["bread", "excalibur"], "item 'excalibur'"),
        ("dropped_items", {"camp": ["excalibur"]}, "item 'excalibur'"),
        ("quests", {"find_grail": {"status": "active"}}, "quest 'find_grail'"),
        ("combat", {"enemy_id": "dragon", "enemy_hp": 5}, "enemy 'dragon'"),
        ("hp", 999, "hp 999/50"),
    ]:
        state = game.state.model_dump(mode="json") | {field: value}
        save = decode(encode(mini_pack, state, game.memory.export_state()))
        with pytest.raises(SaveError, match="does not have") as refused:
            check_against(save, mini_pack)
        assert named in str(refused.value), field


# -------------------------------------------------------------- typed commands
def test_typed_save_saves_and_load_commands(tmp_path, mini_pack):
    game = played(mini_pack, tmp_path, WALK[:3], autosave_every=0)
    result = game.play("save alpha")
    assert result.ok and result.meta == "save" and result.narration == "Saved to 'alpha' (turn 3)."
    assert SlotStore(tmp_path).read("alpha").save.turn == 3
    listing = game.play("saves")
    assert listing.ok and "alpha" in listing.narration and "turn 3" in listing.narration
    assert "Dark Woods" in listing.narration
    at_three = dumps(game)
    for action in WALK[3:]:
        game.play(action)
    assert game.engine.state.turn == 7
    result = game.play("load alpha")
    assert result.ok and "Loaded 'alpha': turn 3." in result.narration
    assert dumps(game) == at_three


def test_save_and_load_without_a_name_use_the_quick_slot(tmp_path, mini_pack):
    game = played(mini_pack, tmp_path, WALK[:2], autosave_every=0)
    missing = game.play("load")
    quick = f"quick-{mini_pack.story.id}"  # each story its own quick slot (issue 43)
    assert not missing.ok and f"no save named {quick!r}" in missing.error
    assert game.play("save").ok
    assert SlotStore(tmp_path).read(quick).save.kind == "quick"
    at_two = dumps(game)
    game.play("north")
    assert game.play("load").ok
    assert dumps(game) == at_two


def test_loading_a_bad_slot_name_is_an_error_and_changes_nothing(tmp_path, mini_pack):
    root = tmp_path / "saves"
    game = played(mini_pack, root, WALK[:3], autosave_every=0)
    game.save("alpha")
    (tmp_path / "x.json").write_bytes(save_bytes(mini_pack))  # what '../x' would reach
    before = dumps(game)
    result = game.play("load ../x")
    assert not result.ok and result.meta == "load" and "not a slot name" in result.error
    assert result.state.turn == 3 and dumps(game) == before
    assert not game.play("save ../x").ok
    assert sorted(p.name for p in root.iterdir() if p.name != ".open") == ["alpha.json"]  # .open: windows.py


# -------------------------------------------------------------------- autosave
def test_autosave_every_five_turns(tmp_path, mini_pack):
    game = session(mini_pack, tmp_path)
    store = SlotStore(tmp_path)
    for _ in range(4):
        game.play("look")
    game.wait_for_autosave()
    assert not store.exists("autosave")
    game.play("look")
    game.wait_for_autosave()
    save = store.read("autosave").save
    assert (save.turn, save.kind) == (5, "autosave")
    for _ in range(4):
        game.play("look")
    game.wait_for_autosave()
    assert store.read("autosave").save.turn == 5
    game.play("look")
    game.wait_for_autosave()
    assert store.read("autosave").save.turn == 10


class HeldBack:
    """Fault injection: the session's foreground gate, holding its autosave thread until ``go`` is set."""

    def __init__(self) -> None:
        self.go = threading.Event()

    def wait_idle(self, timeout: float | None = None) -> bool:
        assert self.go.wait(30)
        return True

    def waiting(self) -> contextlib.AbstractContextManager[None]:
        self.go.set()  # the turn thread waits for the save: let it go
        return contextlib.nullcontext()


def test_the_autosave_is_written_after_the_turn_and_holds_memory_as_of_its_turn(tmp_path, mini_pack, monkeypatch):
    """The turn returns before the autosave is written; the next turn changes memory only after the
    autosave took its export, so the save holds turn 5's memory however late it is written."""
    import game.engine.session as session_module

    held = HeldBack()
    monkeypatch.setattr(session_module, "FOREGROUND", held)
    game = session(mini_pack, tmp_path)
    store = SlotStore(tmp_path)
    for _ in range(5):
        assert game.play("look").ok
    assert not store.exists("autosave")  # turn 5 did not wait for its autosave
    assert game.play("take sword").ok  # turn 6 is recorded while the autosave is still held back
    assert len(game.engine.memory.state.log) == 6
    held.go.set()
    game.wait_for_autosave()
    save = store.read("autosave").save
    assert save.turn == 5 and "sword" not in save.game.inventory
    assert [e.turn for e in save.memory.log] == [1, 2, 3, 4, 5]  # not turn 6, recorded before it was written
    assert game.engine.state.turn == 6


def test_an_autosave_that_fails_is_told_and_the_turn_still_commits(tmp_path, mini_pack, monkeypatch):
    game = session(mini_pack, tmp_path)
    told: list[tuple[int, str | None]] = []
    game.on_autosave = lambda turn, notice: told.append((turn, notice))
    for _ in range(4):
        game.play("look")
    real_replace = os.replace

    def disk_full(src, dst, *args, **kwargs):
        """Fault injection: the disk is full when the save is renamed into place (root ignores chmod)."""
        if Path(dst).parent == tmp_path:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", disk_full)  # the os.replace game.saves.slots calls
    result = game.play("take sword")
    assert result.ok and result.turn == 5
    game.wait_for_autosave()  # written after the turn, on the autosave thread
    assert len(told) == 1 and told[0][0] == 5 and told[0][1] is not None
    assert told[0][1].startswith("Autosave failed") and os.strerror(errno.ENOSPC) in told[0][1]
    assert game.engine.state.turn == 5 and "sword" in game.engine.state.inventory
    assert game.engine.memory.state.log[-1].action == "take sword"
    assert [p for p in tmp_path.iterdir() if p.name != ".open"] == []  # no slot, no temporary file (.open: locks)
    monkeypatch.undo()
    result = game.play("look")
    assert result.notices == [told[0][1]]  # the next result tells it, once
    for _ in range(4):
        result = game.play("look")
    game.wait_for_autosave()
    assert result.notices == [] and SlotStore(tmp_path).read("autosave").save.turn == 10


def test_a_story_of_the_longest_id_saves_and_sets_its_game_aside(tmp_path):
    """Was (issue 43): story ids of 45 to 64 characters were legal, but ``autosave-<id>`` outgrew the 64-character
    slot name, so their games never saved (and from 56 the Textual game crashed on New game, setting a game aside
    as ``autosave-<id>-<n>``)."""
    from game.checker.scaffold import new_story

    story_id = "a" + "_long" * 12 + "_id"  # 64 characters, the longest the checker accepts
    assert len(story_id) == 64
    pack = load_pack(new_story(tmp_path / "stories", story_id))
    slot = f"autosave-{story_id}"
    game = GameSession(engine(pack), SlotStore(tmp_path / "saves"), slot=slot, autosave_every=1)
    assert game.play("look").ok
    game.wait_for_autosave()
    assert (tmp_path / "saves" / f"{slot}.json").exists()  # autosaved
    kept = game.slots.set_aside(slot, slot)
    assert kept == f"{slot}-1" and (tmp_path / "saves" / f"{kept}.json").exists()


def test_the_quick_load_finds_the_storys_own_slot_by_its_whole_name_and_at_the_title_the_newest(tmp_path, mini_pack):
    """Issue 43: F9 loaded another story's quick save without a word. In a game it loads this story's quick slot
    (``quick-lamp`` is not ``quick-lamp_2``); at the title, the newest quick save, whose story it names."""
    store = SlotStore(tmp_path)
    data = save_bytes(mini_pack, turns=1)
    store.write("quick-lamp_2", data)
    assert store.newest("quick-lamp", whole=True) is None
    store.write("quick-lamp", save_bytes(mini_pack, turns=2))
    mine = store.newest("quick-lamp", whole=True)
    assert mine is not None and mine.name == "quick-lamp" and mine.turn == 2
    newest = store.newest("quick-")
    assert newest is not None and newest.story_title == mini_pack.story.title


def test_continue_offers_the_newest_autosave_over_a_newer_scripted_run(tmp_path, mini_pack):
    """Was (issue 43): ``storyecho run --slot X`` made X the title's Continue over a 163-turn autosave. Continue
    asks for the newest autosave first (the Textual game's own), and only without one for the newest save."""
    store = SlotStore(tmp_path)
    game = engine(mini_pack)
    for _ in range(3):
        assert game.play("look").ok
    store.write("autosave-mini", encode(mini_pack, game.state, game.memory.export_state(), kind="autosave"))
    os.utime(tmp_path / "autosave-mini.json", (1000, 1000))
    store.write("x", save_bytes(mini_pack, turns=1))  # a scripted run's slot, written after
    latest = store.latest("autosave") or store.latest()
    assert latest is not None and latest.name == "autosave-mini" and latest.turn == 3
    assert store.latest().name == "x"  # the newest of any kind, when asked so
    store.delete("autosave-mini")
    assert store.latest("autosave") is None and store.latest().name == "x"
