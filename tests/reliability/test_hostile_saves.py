"""Hostile save files: each is refused with a specific message, executes nothing, crashes nothing.

Every file of the corpus is written as a slot and read three ways: through
:meth:`SlotStore.read` (then :func:`check_against` for the ones only the story
can refuse), through ``GameSession.load`` and the typed ``load`` of a game in
progress (which must be left exactly as it was), and through ``storyecho run
--slot`` (exit code 2, the reason on stderr).
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import orjson
import pytest

from game.cli import main
from game.engine.pipeline import TurnPipeline
from game.engine.session import GameSession
from game.llm.scripted import ScriptedNarrator
from game.saves import slots as slots_module
from game.saves.format import MAX_SAVE_BYTES, SaveError, SaveFile, check_against, encode
from game.saves.slots import SlotStore
from game.world.loader import content_root, load_pack
from game.world.state import new_game
from tests.conftest import keyword_memory

FANTASY = load_pack(content_root() / "fantasy_001")
SCIFI = load_pack(content_root() / "scifi_001")
SLOT = "hostile"
MARKER = "pickle-was-executed"


def engine(pack):
    return TurnPipeline(pack, new_game(pack, seed=5), ScriptedNarrator(pack), keyword_memory(pack))


@cache
def valid_save(story: str = "fantasy_001") -> bytes:
    """A real save of two turns of ``story``; the corpus is made by breaking it."""
    game = engine(FANTASY if story == "fantasy_001" else SCIFI)
    for action in ("look", "inventory", "look"):
        game.play(action)
    return encode(game.pack, game.state.model_dump(mode="json"), game.memory.export_state())


def document(**changes: Any) -> dict[str, Any]:
    """The valid save as a dict; ``game__hp=...`` changes ``game.hp``."""
    doc: dict[str, Any] = orjson.loads(valid_save())
    for key, value in changes.items():
        *parents, last = key.split("__")
        target = doc
        for parent in parents:
            target = target[parent]
        target[last] = value
    return doc


def with_token(token: bytes, **placeholder: Any) -> bytes:
    """The valid save with one value replaced by raw bytes JSON cannot otherwise hold (NaN, bad UTF-8)."""
    data = orjson.dumps(document(**placeholder))
    mark = orjson.dumps(next(iter(placeholder.values())))
    assert data.count(mark) == 1, mark
    return data.replace(mark, token)


def version_last(data: bytes) -> bytes:
    """The save with ``schema_version`` moved to the end (read by the general parser, not the fast path)."""
    head = b'{"schema_version":1,'
    assert data.startswith(head)
    return b"{" + data[len(head) : -1] + b',"schema_version":1}'


class Trap:
    """Pickles to a payload that creates a marker file when unpickled (nothing may ever unpickle a save)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def deep(levels: int) -> bytes:
    return b"[" * levels + b"]" * levels


@dataclass(frozen=True)
class Hostile:
    id: str
    make: Callable[[Path], None]
    """Writes the hostile slot file at the path given (its folder's parent holds the pickle marker)."""
    words: tuple[str, ...]
    """What the refusal must say (every one)."""
    by_story: bool = False
    """A well-formed save that only the story it is loaded into can refuse."""


def writes(data: bytes | Callable[[], bytes]) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        path.write_bytes(data() if callable(data) else data)

    return write


def sparse_junk(path: Path) -> None:
    with open(path, "wb") as handle:
        handle.truncate(200 * 1024 * 1024)  # 200 MB of zero bytes that take no disk space


def v1_with_deep_nesting() -> bytes:
    return orjson.dumps(document(story_title=0)).replace(b'"story_title":0', b'"story_title":' + deep(10_000))


CORPUS = [
    Hostile(
        "newer schema version",
        writes(lambda: orjson.dumps(document(schema_version=3))),
        ("newer StoryEcho", "save schema 3", "reads up to 2"),
    ),
    Hostile(
        "in parts, naming none",
        writes(lambda: orjson.dumps(document(schema_version=2))),
        ("damaged save", "parts"),
    ),
    Hostile(
        "in parts, naming one not there",
        writes(lambda: orjson.dumps(document(schema_version=2, parts={"memory.log": ["0" * 64]}))),
        ("part 000000000000", "cannot be read"),
    ),
    Hostile(
        "schema version not a number",
        writes(lambda: orjson.dumps(document(schema_version="one"))),
        ("not a save file", "no schema_version"),
    ),
    Hostile(
        "negative schema version",
        writes(lambda: orjson.dumps(document(schema_version=-1))),
        ("not a save file", "schema_version -1"),
    ),
    Hostile(
        "hp is a word",
        writes(lambda: orjson.dumps(document(game__hp="lots"))),
        ("damaged save", "game.hp", "valid integer"),
    ),
    Hostile(
        "NaN where an int belongs",
        writes(lambda: with_token(b"NaN", game__hp=-123456789)),
        ("damaged save", "game.hp", "finite number"),
    ),
    Hostile(
        "NaN inside a nested list",
        writes(lambda: with_token(b"[[NaN, 1e999]]", game__flags=["nan-goes-here"])),
        ("damaged save", "game.flags.0", "valid string"),
    ),
    Hostile(
        "NaN inside a nested list, version last",
        writes(lambda: version_last(with_token(b"[[NaN]]", game__flags=["nan-goes-here"]))),
        ("not a save file", "not valid JSON"),
    ),
    Hostile("10,000 nested arrays", writes(deep(10_000)), ("not a save file", "not valid JSON", "depth limit")),
    Hostile(
        "10,000 nested arrays inside a save",
        writes(v1_with_deep_nesting),
        ("not a save file", "Invalid JSON", "recursion limit"),
    ),
    Hostile(
        "invalid UTF-8 in a string",
        writes(lambda: with_token(b'"Ma\xff\xfegus"', story_title="utf8-goes-here")),
        ("not a save file", "invalid unicode"),
    ),
    Hostile(
        "invalid UTF-8, version last",
        writes(lambda: version_last(with_token(b'"\xc3\x28"', story_title="utf8-goes-here"))),
        ("not a save file", "not valid UTF-8"),
    ),
    Hostile(
        "a pickle payload",
        lambda path: writes(pickle.dumps(Trap(path.parent.parent / MARKER)))(path),
        ("not a save file", "pickle", "never loaded"),
    ),
    Hostile(
        "a protocol-0 pickle payload",
        lambda path: writes(pickle.dumps(Trap(path.parent.parent / MARKER), protocol=0))(path),
        ("not a save file", "not valid JSON"),
    ),
    Hostile(
        "200 MB of junk", sparse_junk, ("too large for a save", "209,715,200 bytes", f"at most {MAX_SAVE_BYTES:,}")
    ),
    Hostile("an empty file", writes(b""), ("the file is empty",)),
    Hostile("a JSON array", writes(b'[{"schema_version": 1}]'), ("not a save file", "a JSON list, not an object")),
    Hostile("a torn save", writes(lambda: valid_save()[:-200]), ("not a save file", "EOF while parsing")),
    Hostile(
        "an unknown field",
        writes(lambda: orjson.dumps(document(run_this="__import__('os').system('id')"))),
        ("damaged save", "run_this", "Extra inputs are not permitted"),
    ),
    Hostile(
        "an unknown field in the game",
        writes(lambda: orjson.dumps(document(game__god_mode=True))),
        ("damaged save", "game.god_mode", "Extra inputs are not permitted"),
    ),
    Hostile(
        "a save of another story",
        writes(lambda: valid_save("scifi_001")),
        ("save of", "'scifi_001'", "'fantasy_001'"),
        by_story=True,
    ),
    Hostile(
        "a place and items the story does not have",
        writes(lambda: orjson.dumps(document(game__node="nowhere", game__inventory=["excalibur", "holy_grail"]))),
        ("does not have", "place 'nowhere'", "item 'excalibur'", "item 'holy_grail'"),
        by_story=True,
    ),
]


@pytest.fixture(params=CORPUS, ids=lambda case: case.id)
def hostile(request, tmp_path, monkeypatch):
    """The case, its slot written under ``tmp_path/saves``; for the junk, any parsing fails the test."""
    case: Hostile = request.param
    (tmp_path / "saves").mkdir()
    case.make(tmp_path / "saves" / f"{SLOT}.json")
    if case.id == "200 MB of junk":

        def parsed(*args, **kwargs):
            raise AssertionError("a file over the size limit was read and parsed")

        monkeypatch.setattr(slots_module, "decode", parsed)
        monkeypatch.setattr(orjson, "loads", parsed)  # the one game.saves.format parses with
        monkeypatch.setattr(SaveFile, "model_validate_json", parsed)
    return case


def refusal_says(message: str, case: Hostile) -> None:
    missing = [word for word in case.words if word not in message]
    assert not missing, f"{message!r} does not say {missing}"


def untouched(tmp_path: Path, before: bytes | int) -> None:
    """Nothing was executed (no marker), nothing was written, the hostile slot is as it was."""
    assert not (tmp_path / MARKER).exists()
    assert sorted(p.name for p in (tmp_path / "saves").iterdir()) == [f"{SLOT}.json"]
    slot = tmp_path / "saves" / f"{SLOT}.json"
    assert (slot.stat().st_size if isinstance(before, int) else slot.read_bytes()) == before


def snapshot_of(path: Path) -> bytes | int:
    """The slot file's bytes, or only its size for the 200 MB one."""
    size = path.stat().st_size
    return size if size > 1024 * 1024 else path.read_bytes()


def test_the_pickle_trap_is_live(tmp_path):
    """The pickle payload of the corpus really would create its marker if anything unpickled it."""
    pickle.loads(pickle.dumps(Trap(tmp_path / "proof")))  # our own payload, unpickled on purpose
    pickle.loads(pickle.dumps(Trap(tmp_path / "proof0"), protocol=0))
    assert (tmp_path / "proof").exists() and (tmp_path / "proof0").exists()


def test_the_corpus_breaks_a_save_that_loads(tmp_path):
    """Without what each case breaks, the save it is made from loads, also with its version last."""
    store = SlotStore(tmp_path)
    for data in (valid_save(), version_last(valid_save()), orjson.dumps(document())):
        store.write("fine", data)
        assert check_against(store.read("fine").save, FANTASY) == []


def test_the_slot_store_refuses_it(hostile, tmp_path):
    store = SlotStore(tmp_path / "saves")
    before = snapshot_of(store.path(SLOT))
    if hostile.by_story:
        loaded = store.read(SLOT)  # well formed: only the story can refuse it
        with pytest.raises(SaveError) as refused:
            check_against(loaded.save, FANTASY)
    else:
        with pytest.raises(SaveError) as refused:
            store.read(SLOT)
        assert str(refused.value).startswith(f"slot '{SLOT}' cannot be loaded: ")
        [info] = store.list()  # the list reads headers: it names the slot, and the whole save checked refuses it
        assert info.name == SLOT and store.verify(SLOT).error == str(refused.value)
    refusal_says(str(refused.value), hostile)
    untouched(tmp_path, before)


def test_a_game_in_progress_refuses_it_and_goes_on_unchanged(hostile, tmp_path):
    game = GameSession(engine(FANTASY), SlotStore(tmp_path / "saves"), autosave_every=0)
    for action in ("look", "north", "look"):
        game.play(action)
    before = snapshot_of(tmp_path / "saves" / f"{SLOT}.json")

    def everything():
        return game.engine.state.model_dump(), game.engine.memory.state.model_dump()

    playing = everything()
    with pytest.raises(SaveError) as refused:
        game.load(SLOT)
    refusal_says(str(refused.value), hostile)
    assert everything() == playing
    result = game.play(f"load {SLOT}")
    assert not result.ok and result.meta == "load"
    refusal_says(result.error or "", hostile)
    assert everything() == playing
    untouched(tmp_path, before)
    assert game.play("look").ok and game.engine.state.turn == 4


def test_storyecho_run_refuses_it(hostile, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # no storyecho.toml of the working folder
    monkeypatch.delenv("STORYECHO_CONFIG", raising=False)
    actions = tmp_path / "actions.txt"
    actions.write_text("look\n")
    before = snapshot_of(tmp_path / "saves" / f"{SLOT}.json")
    argv = ["run", "--story", "fantasy_001", "--slot", SLOT, "--data-dir", str(tmp_path / "saves"), "--no-embeddings"]
    code = main([*argv, "--actions", str(actions)])
    out, err = capsys.readouterr()
    assert code == 2, err
    assert out == "" and err.startswith("storyecho: ") and "Traceback" not in err
    refusal_says(err, hostile)
    untouched(tmp_path, before)
