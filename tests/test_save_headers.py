"""The slot list reads each save's header, not the whole save (issue 33, item 5): the same answer as a full read
for what the game writes, the load's own reason for a damaged file, and a full load that still checks everything."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from game.cli import main as cli_main
from game.engine.session import GameSession
from game.saves.format import MAX_SAVE_BYTES, SaveError, decode
from game.saves.header import HEADER_BYTES, SaveHeader, parse_header, read_header
from game.saves.slots import SlotInfo, SlotStore, read_save
from tests.test_saves import V0_SAVE, WALK, engine, played, save_bytes

PREVIOUS_MAIN = Path(__file__).parent / "data" / "previous_main" / "fbce072-turn40.json"
"""A save written by the main before this change (commit fbce072, 40 turns of the Misty Forest)."""


def full_info(store: SlotStore, name: str) -> SlotInfo:
    """The slot's line as the list read it before: the whole save read (its backup when the file is damaged)."""
    try:
        s = store.read(name).save
    except SaveError as exc:
        return SlotInfo(name, error=str(exc))
    return SlotInfo(name, s.story_id, s.story_title, s.turn, s.place, s.saved_at, s.kind, "", store.info(name).mtime)


def header_first(path: Path) -> bool:
    """Whether the file's header is read from its first bytes alone (the list's fast way)."""
    return parse_header(path.read_bytes()[:HEADER_BYTES]) is not None


# ------------------------------------------------------- what the game writes
def test_every_save_the_game_writes_lists_from_its_first_bytes_as_a_full_read_would(tmp_path, mini_pack):
    store = SlotStore(tmp_path)
    game = GameSession(engine(mini_pack), store, autosave_every=0)
    game.save("fresh")
    for action in WALK:
        assert game.play(action).ok, action
    game.save("bridge")
    game.save("quick", kind="quick")
    store.branch("bridge", 3, "at turn 3")
    game.close()  # the session's own autosave slot
    store.write("copied", PREVIOUS_MAIN.read_bytes())
    names = {info.name for info in store.list()}
    assert {"fresh", "bridge", "quick", "at turn 3", "copied"} <= names and len(names) == 6
    for name in names:
        path = store.path(name)
        assert header_first(path), name
        assert read_header(path) == SaveHeader.of(read_save(path)), name
        assert store.info(name) == full_info(store, name), name
    turns = {info.name: (info.turn, info.kind) for info in store.list()}
    assert turns["at turn 3"] == (3, "manual") and turns["quick"] == (7, "quick") and turns["copied"] == (40, "manual")


def test_a_save_of_the_previous_main_lists_as_a_full_read_does(tmp_path):
    store = SlotStore(tmp_path)
    store.write("old main", PREVIOUS_MAIN.read_bytes())
    info = store.info("old main")
    assert (info.story_title, info.turn, info.place, info.error) == ("Misty Forest", 40, "Gate of Night", "")
    assert info == full_info(store, "old main")


@pytest.mark.parametrize("layout", ["game first", "header last", "indented", "escaped title", "v0", "long place"])
def test_a_save_laid_out_otherwise_lists_as_a_full_read_does(tmp_path, mini_pack, layout):
    """Hand-edited, pretty-printed, older: whatever the order, the list says what a load reads."""
    document = orjson.loads(save_bytes(mini_pack, turns=2))
    header = {k: document.pop(k) for k in ("schema_version", "story_id", "story_title", "content_hash", "session_id")}
    rest = {k: document.pop(k) for k in ("turn", "place", "saved_at", "kind")}
    if layout == "game first":
        data = orjson.dumps({**document, **header, **rest})
    elif layout == "header last":
        data = orjson.dumps({**header, **document, **rest})
    elif layout == "indented":
        data = orjson.dumps({**header, **rest, **document}, option=orjson.OPT_INDENT_2)
    elif layout == "escaped title":
        title = '"Caf\\u00e9 \\"Nord\\" \\ud83c\\udf32\\n"'
        data = orjson.dumps({**header, **rest, **document}).replace(b'"Mini Vale"', title.encode(), 1)
    elif layout == "long place":  # a header longer than the bytes looked at first
        data = orjson.dumps({**header, **rest, "place": "x" * (HEADER_BYTES + 10), **document})
    else:
        data = orjson.dumps(V0_SAVE)
    (tmp_path / "odd.json").write_bytes(data)
    store = SlotStore(tmp_path)
    info = store.info("odd")
    assert not info.error and info == full_info(store, "odd")
    if layout == "escaped title":
        assert info.story_title == 'Café "Nord" 🌲\n' and header_first(tmp_path / "odd.json")
    if layout == "indented":
        assert header_first(tmp_path / "odd.json")  # whitespace between the members is no reason to read it all


# --------------------------------------------------------- damaged and foreign
def damaged(good: bytes, how: str) -> bytes:
    document = orjson.loads(good)
    if how == "cut in half":
        return good[: len(good) // 2]
    if how == "empty":
        return b""
    if how == "pickle":
        return b"\x80\x04\x95" + good
    if how == "not json":
        return b"{broken" + good
    if how == "an array":
        return b"[" + good + b"]"
    if how == "newer schema":
        return good.replace(b'"schema_version":1', b'"schema_version":3', 1)
    if how == "negative turn":
        return good.replace(f'"turn":{document["turn"]}'.encode(), b'"turn":-1', 1)
    if how == "unknown kind":
        return good.replace(b'"kind":"manual"', b'"kind":"cheat"', 1)
    if how == "turn is text":
        return good.replace(f'"turn":{document["turn"]}'.encode(), b'"turn":"seven"', 1)
    if how == "a foreign member first":
        return b'{"evil":1,' + good[1:]
    if how == "a header member twice":
        return good.replace(b'"kind":"manual"', b'"kind":"manual","turn":3', 1)
    raise AssertionError(how)


DAMAGE = [
    "cut in half",
    "empty",
    "pickle",
    "not json",
    "an array",
    "newer schema",
    "negative turn",
    "unknown kind",
    "turn is text",
    "a foreign member first",
]


@pytest.mark.parametrize("how", DAMAGE)
def test_a_damaged_or_foreign_file_is_listed_as_damaged_with_the_reason_a_load_gives(tmp_path, mini_pack, how):
    (tmp_path / "bad.json").write_bytes(damaged(save_bytes(mini_pack, turns=1), how))
    store = SlotStore(tmp_path)
    with pytest.raises(SaveError) as load:
        store.read("bad")
    [info] = store.list()
    assert info.name == "bad" and info.error == str(load.value)
    assert info.error.startswith("slot 'bad' cannot be loaded: ") and info.turn == 0 and not info.story_id


def test_a_member_the_header_holds_twice_is_read_as_a_full_read_reads_it(tmp_path, mini_pack):
    (tmp_path / "twice.json").write_bytes(damaged(save_bytes(mini_pack, turns=1), "a header member twice"))
    store = SlotStore(tmp_path)
    assert store.info("twice") == full_info(store, "twice")


def test_a_file_over_the_size_cap_is_refused_before_it_is_read(tmp_path, mini_pack):
    path = tmp_path / "huge.json"
    path.write_bytes(save_bytes(mini_pack))
    os.truncate(path, MAX_SAVE_BYTES + 1)  # sparse: nothing is written, nothing must be read
    info = SlotStore(tmp_path).info("huge")
    assert "too large for a save" in info.error


def test_a_damaged_slot_lists_its_backup_as_a_load_reads_it(tmp_path, mini_pack):
    store = SlotStore(tmp_path)
    store.write("slot", save_bytes(mini_pack, turns=1))
    store.write("slot", save_bytes(mini_pack, turns=2))  # turn 1 is the backup now
    good = store.path("slot").read_bytes()
    store.path("slot").write_bytes(good[: len(good) // 2])
    assert store.info("slot").turn == 1 and store.info("slot") == full_info(store, "slot")
    store.backup_path("slot").write_bytes(b"{}")
    info = store.info("slot")
    assert info.error.endswith("(and its backup is damaged too)") and info == full_info(store, "slot")


# ------------------------------------------------------- the header is not the save
def test_a_header_that_lies_changes_the_list_not_the_game_loaded(tmp_path, mini_pack):
    game = played(mini_pack, tmp_path)
    game.save("bridge")
    path = tmp_path / "bridge.json"
    data = path.read_bytes().replace(b'"turn":7', b'"turn":9999', 1).replace(b'"Troll Bridge"', b'"Throne Room"', 1)
    path.write_bytes(data)
    store = SlotStore(tmp_path)
    assert (store.info("bridge").turn, store.info("bridge").place) == (9999, "Throne Room")  # the header says so
    fresh = GameSession(engine(mini_pack, seed=99), store, autosave_every=0)
    fresh.load("bridge")
    assert fresh.engine.state.turn == 7 and fresh.engine.state.node == game.engine.state.node  # the game is its own


@pytest.mark.parametrize("how", ["a log that is not one", "last brace missing"])
def test_a_save_whose_body_is_damaged_lists_by_its_header_and_its_load_falls_back_to_the_backup(
    tmp_path, mini_pack, how
):
    """What the list leaves unread, the load still checks: damage past the header is found there."""
    store = SlotStore(tmp_path)
    store.write("slot", save_bytes(mini_pack, turns=1))
    store.write("slot", save_bytes(mini_pack, turns=2))
    data = store.path("slot").read_bytes()
    if how == "last brace missing":  # the file still ends with a brace: the memory's
        data = data[:-1]
    else:
        document = orjson.loads(data)
        document["memory"]["log"] = "not a log"
        data = orjson.dumps(document)
    store.path("slot").write_bytes(data)
    assert store.info("slot").turn == 2 and not store.info("slot").error  # its header reads
    with pytest.raises(SaveError):
        decode(data)
    loaded = store.read("slot")
    assert loaded.from_backup and loaded.save.turn == 1 and "damaged" in loaded.notices[0]


def test_a_file_changed_since_it_was_listed_is_read_again(tmp_path, mini_pack):
    store = SlotStore(tmp_path)
    store.write("slot", save_bytes(mini_pack, turns=1))
    assert store.list()[0].turn == 1
    path = store.path("slot")
    data = path.read_bytes()
    path.write_bytes(data.replace(b'"turn":1', b'"turn":4', 1))  # in place: the same size and inode
    stamp = path.stat().st_mtime_ns + 1_000_000
    os.utime(path, ns=(stamp, stamp))
    assert store.list()[0].turn == 4
    path.write_bytes(data[: len(data) // 2])
    os.utime(path, ns=(stamp + 1_000_000, stamp + 1_000_000))
    assert "cannot be loaded" in store.list()[0].error


def test_storyecho_slots_list_reads_headers_and_names_the_damaged(tmp_path, mini_pack, capsys):
    store = SlotStore(tmp_path)
    game = played(mini_pack, tmp_path)
    game.save("bridge")
    good = save_bytes(mini_pack, turns=1)
    (tmp_path / "cut.json").write_bytes(good[: len(good) // 2])
    document = orjson.loads(good)
    document["memory"]["log"] = "not a log"  # past the header: the list does not read it, a load refuses it
    (tmp_path / "body.json").write_bytes(orjson.dumps(document))
    assert cli_main(["slots", "list", "--data-dir", str(tmp_path)]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert "Mini Vale" in lines["bridge"] and "turn 7" in lines["bridge"] and "Troll Bridge" in lines["bridge"]
    assert "DAMAGED: slot 'cut' cannot be loaded: not a save file" in lines["cut"]
    assert "turn 1" in lines["body"] and "DAMAGED" not in lines["body"]
    with pytest.raises(SaveError, match=r"memory\.log"):
        store.read("body")


def test_a_slot_linked_out_of_the_folder_is_listed_as_refused_and_the_rest_still_list(tmp_path, mini_pack):
    root = tmp_path / "saves"
    store = SlotStore(root)
    store.write("fine", save_bytes(mini_pack, turns=1))
    (tmp_path / "elsewhere.json").write_bytes(save_bytes(mini_pack))
    (root / "evil.json").symlink_to(tmp_path / "elsewhere.json")
    infos = {info.name: info for info in store.list()}
    assert "link out of the saves folder" in infos["evil"].error and infos["fine"].turn == 1
