"""Chroma off the first turn's path (``game/memory/vectors/mirror.py``): the index snapshot and the writes behind.

- a clean close leaves a snapshot and its marker; the next open reads the
  collections from it without importing ``chromadb``, and Chroma holds every write;
- any open of the local Chroma deletes the marker first; a marker that does not fit
  the index (changed behind its back) or an unreadable snapshot falls back to Chroma;
- a failed write or a crash after Chroma was opened leaves no marker;
- a damaged index found at the deferred open is moved aside and refilled from the copy;
- the writer does not open Chroma while the game is busy;
- ``storyecho run`` prints its first turn before ``chromadb`` is imported, and after a
  kill mid-game the next start recalls the same memories.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest

from game.memory.vectors import mirror
from game.memory.vectors.chroma import SNAPSHOT_MARKER, IndexBusy, open_chroma, snapshot_dir
from game.memory.vectors.embedders import EmbeddingSpace, Vectors
from game.memory.vectors.mirror import MirroredStore
from game.memory.vectors.stores import SpaceMismatch, StoreUnavailable

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}
SPACE = EmbeddingSpace("fake-model", "v1")
OTHER = EmbeddingSpace("other-model", "v1")
COLLECTION = "memories__fake"


def vectors(count: int, seed: int = 0, dimension: int = 8) -> np.ndarray:
    rng = np.random.default_rng(seed)
    matrix = rng.normal(size=(count, dimension)).astype(np.float32)
    unit: np.ndarray = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    return unit


def fill(store: MirroredStore, count: int = 20, seed: int = 0) -> tuple[list[str], np.ndarray]:
    ids = [f"s{seed}:turn-{n}#d" for n in range(count)]
    matrix = vectors(count, seed)
    store.upsert(COLLECTION, ids, matrix, [{"session": f"s{seed}", "turn": n} for n in range(count)], space=SPACE)
    return ids, matrix


def marker(index: Path) -> Path:
    return snapshot_dir(index) / SNAPSHOT_MARKER


def in_chroma(index: Path) -> dict[str, np.ndarray]:
    """The collection as the raw Chroma index holds it (this opens it, so deletes the marker)."""
    raw = open_chroma(index)
    try:
        col = raw._collection(COLLECTION)
        got = col.get(include=["embeddings"]) if col is not None else {"ids": [], "embeddings": []}
        return {i: np.asarray(v, dtype=np.float32) for i, v in zip(got["ids"], got["embeddings"], strict=True)}
    finally:
        raw.close()


@pytest.fixture
def index(tmp_path: Path) -> Path:
    return tmp_path / ".index"


def test_a_clean_close_writes_everything_to_chroma_then_a_snapshot(index):
    store = MirroredStore.open_local(index)
    ids, matrix = fill(store)
    store.delete(COLLECTION, ids[:2])
    assert store.count(COLLECTION) == 18  # the copy changed at once
    store.close()
    assert marker(index).is_file()
    held = in_chroma(index)
    assert sorted(held) == sorted(ids[2:])
    assert np.allclose(np.stack([held[i] for i in ids[2:]]), matrix[2:], atol=1e-6)
    assert not marker(index).exists(), "opening the raw index may write: it deletes the marker first"


CHILD = textwrap.dedent(
    """
    import sys, numpy as np
    from pathlib import Path
    from game.memory.vectors.embedders import EmbeddingSpace, Vectors
    from game.memory.vectors.mirror import MirroredStore
    store = MirroredStore.open_local(Path(sys.argv[1]))
    space = EmbeddingSpace("fake-model", "v1")
    vector = np.asarray([float(x) for x in sys.argv[2].split(",")], dtype=np.float32)
    hits = store.query("memories__fake", vector, 3, {"session": "s0"}, space=space)
    print(store.count("memories__fake"), hits[0].id, "chromadb" in sys.modules)
    store.close()
    print("chromadb" in sys.modules)
    """
)


def test_a_closed_store_refuses_writes_and_never_hangs(index):
    store = MirroredStore.open_local(index)
    fill(store)
    store.close()
    with pytest.raises(StoreUnavailable):
        fill(store, count=2, seed=3)
    store.flush()  # returns: nothing is queued
    store.close()
    assert store.count(COLLECTION) == 20  # the refused write changed nothing


def test_the_next_open_reads_the_snapshot_without_importing_chroma(index):
    store = MirroredStore.open_local(index)
    ids, matrix = fill(store)
    store.close()
    probe = ",".join(str(float(x)) for x in matrix[5])
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(index), probe],
        capture_output=True,
        text=True,
        env=ENV,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    first, after = done.stdout.splitlines()
    assert first == f"20 {ids[5]} False"  # served from the snapshot: no chromadb
    assert after == "False"  # nothing written: the close needs no Chroma either, and the marker still holds
    assert marker(index).is_file()


def test_a_snapshot_keeps_the_collections_embedding_model(index):
    store = MirroredStore.open_local(index)
    fill(store)
    store.close()
    again = MirroredStore.open_local(index)
    try:
        assert again._chroma is None  # from the snapshot
        with pytest.raises(SpaceMismatch):
            again.query(COLLECTION, vectors(1)[0], 3, space=OTHER)
        with pytest.raises(SpaceMismatch):
            again.upsert(COLLECTION, ["x"], vectors(1), [{}], space=OTHER)
        assert again._chroma is None
    finally:
        again.close()


def test_the_lock_is_taken_at_start_even_without_chroma(index):
    store = MirroredStore.open_local(index)
    fill(store)
    store.close()
    first = MirroredStore.open_local(index)
    try:
        assert first._chroma is None
        with pytest.raises(IndexBusy):
            MirroredStore.open_local(index)
    finally:
        first.close()


def test_an_index_changed_behind_the_snapshot_is_not_trusted(index):
    store = MirroredStore.open_local(index)
    ids, _ = fill(store)
    store.close()
    kept = marker(index).read_bytes()
    raw = open_chroma(index)  # another tool writes the index (and deletes the marker) ...
    raw.upsert(COLLECTION, ["stranger"], vectors(1, seed=9), [{"session": "s9", "turn": 1}], space=SPACE)
    raw.close()
    marker(index).write_bytes(kept)  # ... and a stale marker is put back
    again = MirroredStore.open_local(index)
    try:
        assert again._chroma is not None, "the fingerprint no longer fits: Chroma is read"
        assert again.existing(COLLECTION, [*ids, "stranger"]) == {*ids, "stranger"}
    finally:
        again.close()


@pytest.mark.parametrize("damage", ["vectors", "records", "marker"])
def test_an_unreadable_snapshot_falls_back_to_chroma(index, caplog, damage):
    store = MirroredStore.open_local(index)
    ids, _ = fill(store)
    store.close()
    folder = snapshot_dir(index)
    if damage == "marker":
        marker(index).write_bytes(b"\x00garbage")
    else:
        entry = orjson.loads(marker(index).read_bytes())["collections"][COLLECTION]
        target = folder / entry[damage]
        target.write_bytes(target.read_bytes()[:-7] + b"garbage")
    with caplog.at_level(logging.WARNING, logger="storyecho.memory"):
        again = MirroredStore.open_local(index)
        try:
            assert again.count(COLLECTION) == 20 and again.existing(COLLECTION, ids) == set(ids)
            assert again._chroma is not None
        finally:
            again.close()
    assert "snapshot" in caplog.text and "reading the index instead" in caplog.text
    assert marker(index).is_file()  # a new, good one


def test_a_failed_write_leaves_no_marker_and_the_next_start_misses_the_vectors(index, monkeypatch, caplog):
    store = MirroredStore.open_local(index)
    fill(store)
    store.close()
    again = MirroredStore.open_local(index)

    def refuse(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(again.chroma(), "upsert", refuse)
    with caplog.at_level(logging.WARNING, logger="storyecho.memory"):
        fill(again, count=3, seed=1)
        assert again.count(COLLECTION) == 23  # the game goes on from the copy
        again.close()
    assert "writing to the memory index failed" in caplog.text
    assert not marker(index).exists()
    third = MirroredStore.open_local(index)
    try:
        assert third.count(COLLECTION) == 20  # read from Chroma: the 3 are missing, to be embedded again
    finally:
        third.close()


CRASH = textwrap.dedent(
    """
    import os, sys, numpy as np
    from pathlib import Path
    from game.memory.vectors.embedders import EmbeddingSpace, Vectors
    from game.memory.vectors.mirror import MirroredStore
    store = MirroredStore.open_local(Path(sys.argv[1]))
    late = np.ones((1, 8), dtype=np.float32) / 8 ** 0.5
    space = EmbeddingSpace("fake-model", "v1")
    store.upsert("memories__fake", ["late"], late, [{"session": "s0", "turn": 99}], space=space)
    if sys.argv[2] == "flushed":
        store.flush()
    os._exit(1)
    """
)


@pytest.mark.parametrize("when", ["flushed", "queued"])
def test_a_crash_never_leaves_a_stale_marker(index, when):
    store = MirroredStore.open_local(index)
    ids, _ = fill(store)
    store.close()
    done = subprocess.run(
        [sys.executable, "-c", CRASH, str(index), when], capture_output=True, text=True, env=ENV, cwd=ROOT, check=False
    )
    assert done.returncode == 1, done.stderr
    if when == "flushed":  # Chroma was opened (and written): no marker
        assert not marker(index).exists()
    else:  # never opened, so never written: the snapshot still is the index
        assert marker(index).is_file()
    again = MirroredStore.open_local(index)
    try:
        assert (again._chroma is None) == (when == "queued")
        expected = {*ids, "late"} if when == "flushed" else set(ids)
        assert again.existing(COLLECTION, [*ids, "late"]) == expected
    finally:
        again.close()


def test_a_damaged_index_found_at_the_deferred_open_is_rebuilt_from_the_copy(index, tmp_path):
    store = MirroredStore.open_local(index)
    ids, _ = fill(store)
    store.close()
    database = index / "chroma.sqlite3"
    info = database.stat()
    database.write_bytes(os.urandom(info.st_size))  # garbage that the fingerprint cannot see
    os.utime(database, ns=(info.st_atime_ns, info.st_mtime_ns))
    told: list[str] = []
    again = MirroredStore.open_local(index, say=told.append)
    assert again._chroma is None  # the snapshot fits: nothing opened yet
    fill(again, count=3, seed=1)
    again.close()
    assert told and "damaged" in told[0]
    assert list(tmp_path.glob(".index.broken-*")), "the damaged index is kept aside"
    assert sorted(in_chroma(index)) == sorted([*ids, *[f"s1:turn-{n}#d" for n in range(3)]])


def test_the_writer_waits_while_the_game_is_busy(index, monkeypatch):
    store = MirroredStore.open_local(index)
    fill(store)
    store.close()
    monkeypatch.setattr(mirror, "IDLE_S", 0.4)
    again = MirroredStore.open_local(index)
    try:
        busy_until = time.monotonic() + 1.0
        while time.monotonic() < busy_until:  # back-to-back turns: a query, a write, a query...
            again.query(COLLECTION, vectors(1)[0], 3, space=SPACE)
            fill(again, count=2, seed=2)
            time.sleep(0.05)
        assert again._chroma is None, "Chroma must not be opened mid-turn"
        deadline = time.monotonic() + 10
        while again._chroma is None and time.monotonic() < deadline:  # idle: it opens and writes
            time.sleep(0.05)
        assert again._chroma is not None
        again.flush()
        assert not marker(index).exists()
    finally:
        again.close()
    assert "s2:turn-1#d" in in_chroma(index)


def test_writes_queued_behind_a_wait_go_at_once_so_back_to_back_turns_never_pile_them_up(index, monkeypatch):
    """The writer waits for the turn (foreground.py) before the first write of a backlog only: with a turn
    always under way, one bounded wait per write let the queue grow faster than it drained."""
    import threading

    from game.memory.vectors.foreground import FOREGROUND

    monkeypatch.setattr(mirror, "WRITE_WAIT_S", 0.3)
    store = MirroredStore.open_local(index)
    store._go.set()  # past the first write's idle rule (the test above): this is about every write after it
    release, held = threading.Event(), threading.Event()

    def turns_back_to_back() -> None:
        with FOREGROUND.busy():
            held.set()
            release.wait(30)

    playing = threading.Thread(target=turns_back_to_back)
    playing.start()
    try:
        assert held.wait(10)
        started = time.monotonic()
        for n in range(40):  # 40 writes queued while the game never goes idle: 12 s at one wait per write
            fill(store, count=1, seed=100 + n)
        while store._queue.unfinished_tasks and time.monotonic() - started < 30:
            time.sleep(0.02)
        assert not store._queue.unfinished_tasks
        assert time.monotonic() - started < 6  # one wait, Chroma's open, then the backlog at once
    finally:
        release.set()
        playing.join(10)
        store.close()


# ------------------------------------------------------------------ the game, in processes
FIRST_TURN_PROBE = textwrap.dedent(
    """
    import sys
    write = sys.stdout.write
    seen = []
    def probe(text):
        if text.strip() and not seen:
            seen.append("chromadb" in sys.modules)
            sys.stderr.write(f"CHROMADB_AT_FIRST_OUTPUT={seen[0]}\\n")
        return write(text)
    sys.stdout.write = probe
    from game.cli import main
    code = main(sys.argv[1:])
    sys.stderr.write(f"CHROMADB_AT_EXIT={'chromadb' in sys.modules}\\n")
    raise SystemExit(code)
    """
)


GAME = ("run", "--json", "--story", "fantasy_001", "--llm", "scripted")


def run_probe(data: Path, *actions: str) -> tuple[list[dict[str, Any]], str]:
    done = subprocess.run(
        [sys.executable, "-c", FIRST_TURN_PROBE, *GAME, "--data-dir", str(data), "--actions", "-"],
        input="\n".join(actions) + "\n",
        capture_output=True,
        text=True,
        env=ENV,
        cwd=ROOT,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return [orjson.loads(line) for line in done.stdout.splitlines() if line.strip()], done.stderr


def test_run_prints_its_first_turn_before_chroma_is_imported_and_chroma_holds_it_after(tmp_path):
    data = tmp_path / "data"
    _, stderr = run_probe(data, "look")  # the first start: no snapshot yet, Chroma is read
    assert "CHROMADB_AT_FIRST_OUTPUT=True" in stderr
    assert marker(data / ".index").is_file()
    lines, stderr = run_probe(data, "say my name is Ysolde", "look")
    assert "CHROMADB_AT_FIRST_OUTPUT=False" in stderr, stderr[-3000:]
    assert "CHROMADB_AT_EXIT=True" in stderr  # the writes went to Chroma before the exit
    session = lines[0]["retrieval_meta"]["session"]
    assert lines[0]["retrieval_meta"]["strategy"] == "hybrid:chroma"
    snapshot = orjson.loads(marker(data / ".index").read_bytes())["collections"]
    (memories,) = [name for name in snapshot if name.startswith("memories__")]
    raw = open_chroma(data / ".index")
    try:
        held = set(raw._collection(memories).get(include=[])["ids"])
    finally:
        raw.close()
    assert any(i.startswith(f"{session}:turn-1#") for i in held)  # the turn's vector
    assert any(i.startswith(f"{session}:turn-2#") for i in held)
    assert len(held) == snapshot[memories]["count"]


def test_a_game_killed_mid_play_leaves_no_marker_and_the_next_start_recalls_the_same(tmp_path):
    data = tmp_path / "data"
    run_probe(data, "look")  # a snapshot to start from
    game = subprocess.Popen(
        [sys.executable, "-m", "game", *GAME, "--data-dir", str(data), "--slot", "mine"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
        cwd=ROOT,
    )
    assert game.stdin is not None and game.stdout is not None
    try:
        for action in ("say my name is Ysolde", "save kept"):
            game.stdin.write(action + "\n")
            game.stdin.flush()
            line = orjson.loads(game.stdout.readline())
        assert line["meta"] == "save" and line["ok"]  # a full save waits for the writes: Chroma is open now
        assert not marker(data / ".index").exists()
    finally:
        game.kill()
        game.communicate(timeout=60)
    resumed = []
    for name in ("killed", "rebuilt"):
        folder = tmp_path / name
        shutil.copytree(data, folder)
        if name == "rebuilt":  # the reference: no index at all, every vector embedded again from the save's text
            shutil.rmtree(folder / ".index")
            shutil.rmtree(snapshot_dir(folder / ".index"), ignore_errors=True)
        done = subprocess.run(
            [sys.executable, "-m", "game", "run", "--json", "--slot", "kept", "--data-dir", str(folder)],
            input="what is my name?\n",
            capture_output=True,
            text=True,
            env=ENV,
            cwd=ROOT,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        (answer,) = [orjson.loads(line) for line in done.stdout.splitlines() if line.strip()]
        assert "ysolde" in answer["narration"].lower(), name
        assert answer["retrieval_meta"]["strategy"] == "hybrid:chroma"
        assert marker(folder / ".index").is_file()  # that game exited cleanly
        resumed.append(answer)
    assert resumed[0]["memory_blocks"] == resumed[1]["memory_blocks"]


# ------------------------------------------------------------------ texts embedded before
class BagOfWords:
    """A FAKE embedding model (hashed bag of words, unit length) that counts what it embeds."""

    model_name = "fake-bag-of-words"
    model_version = "test-1"

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.texts.extend(texts)
        out: Vectors = np.zeros((len(texts), 32), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, sum(word.encode()) % 32] += 1.0
            out[row] /= max(float(np.linalg.norm(out[row])), 1e-9)
        return out


def test_remembered_vectors_are_the_models_own_and_survive_a_restart(index, caplog):
    model = BagOfWords()
    store = MirroredStore.open_local(index)
    cached = store.remember_embeddings(model)
    texts = ["the old hunter", "a silver harp", "the old hunter"]
    first = cached.embed(texts)
    assert np.array_equal(first, model.embed(texts)) and model.texts.count("the old hunter") == 3
    store.close()
    again = MirroredStore.open_local(index)
    fresh = BagOfWords()
    cached = again.remember_embeddings(fresh)
    assert np.array_equal(cached.embed(["a silver harp", "a new text"]), fresh.embed(["a silver harp", "a new text"]))
    assert fresh.texts == ["a new text", "a silver harp", "a new text"]  # only the new text was embedded by the cache
    again.close()
    (saved,) = list(index.with_name(".index.embeddings").iterdir())
    saved.write_bytes(b"garbage")
    third = MirroredStore.open_local(index)
    model = BagOfWords()
    with caplog.at_level(logging.WARNING, logger="storyecho.memory"):
        assert third.remember_embeddings(model).embed(["a silver harp"]).shape == (1, 32)
    assert model.texts == ["a silver harp"] and "embedding cache" in caplog.text
    third.close()


def test_a_new_game_does_not_embed_its_seeded_story_bible_again(tmp_path):
    from game.config import load_settings
    from game.llm.scripted import ScriptedNarrator
    from game.wiring import make_memory
    from game.world.loader import content_root, load_pack

    pack = load_pack(content_root() / "fantasy_001")
    settings = load_settings(data_dir=tmp_path)
    seen: list[list[str]] = []
    for _ in range(2):
        model = BagOfWords()
        memory = make_memory(settings, pack, ScriptedNarrator(pack), embedder=model)
        memory.flush()
        seeds = [entry.text() for entry in memory.state.bible]
        seen.append([text for text in model.texts if text in seeds])
        assert not memory.memories.pending_ids()
        memory.close()
    assert len(seen[0]) == len(memory.state.bible) > 0  # the first game embedded them
    assert seen[1] == []  # the second found them remembered
