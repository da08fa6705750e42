"""One writer, readers that never wait for it (issue 33, item 6): ``MirroredStore.open_reader`` and the snapshot a
holder publishes (``game/memory/vectors/mirror.py``, ``snapshot.py``), on a real local Chroma index.

- opening Chroma keeps the last snapshot's files for readers (``published``) instead of deleting its marker;
- a reader reads them while another store holds the index, never touching the lock or Chroma; its writes stay in
  its copy, and are left out of the index while the holder holds it;
- the holder publishes its copy while idle; a reader whose files were replaced meanwhile reads the new ones;
- once the holder has gone, a reader's flush takes the index and writes what it held (and no clean snapshot);
- two games' embedding caches on one data folder are merged, not overwritten.

Every test here fails on the code before readers: ``open_reader`` did not exist, and a second game got an empty
in-process index.
"""

from __future__ import annotations

import time
from pathlib import Path

import orjson
import pytest

from game.memory.vectors import mirror
from game.memory.vectors.chroma import PUBLISHED, SNAPSHOT_MARKER, IndexBusy, IndexLock, snapshot_dir
from game.memory.vectors.mirror import READER, MirroredStore
from game.memory.vectors.stores import StoreUnavailable
from tests.test_mirror_snapshot import COLLECTION, SPACE, BagOfWords, fill, in_chroma, vectors


@pytest.fixture
def index(tmp_path: Path) -> Path:
    return tmp_path / ".index"


def manifest(index: Path, name: str) -> dict:
    return dict(orjson.loads((snapshot_dir(index) / name).read_bytes())["collections"])


def held_by_another(index: Path) -> bool:
    """Whether the index's lock is held: a new lock on it is refused (a lock is per open file, even in one process)."""
    try:
        IndexLock.acquire(index.with_name(index.name + ".lock")).release()
    except IndexBusy:
        return True
    return False


def holder_with_chroma_open(index: Path, seed: int) -> tuple[MirroredStore, list[str]]:
    """A first game: the index snapshot cleanly, then held again by a store that wrote (so opened Chroma)."""
    first = MirroredStore.open_local(index)
    ids, _ = fill(first)
    first.close()
    holder = MirroredStore.open_local(index)
    more, _ = fill(holder, count=5, seed=seed)
    holder.flush()  # Chroma is open now: the clean marker is gone
    return holder, [*ids, *more]


def test_opening_chroma_keeps_the_snapshot_for_readers(index):
    store = MirroredStore.open_local(index)
    fill(store)
    store.close()
    clean = manifest(index, SNAPSHOT_MARKER)
    holder = MirroredStore.open_local(index)
    try:
        holder.chroma()
        assert not (snapshot_dir(index) / SNAPSHOT_MARKER).exists()  # the holder may write: not clean any more
        assert manifest(index, PUBLISHED) == clean  # but its files stay named, for a reader
        for entry in clean.values():
            assert (snapshot_dir(index) / entry["vectors"]).is_file()
    finally:
        holder.close()
    assert (snapshot_dir(index) / SNAPSHOT_MARKER).is_file() and not (snapshot_dir(index) / PUBLISHED).exists()


def test_a_reader_reads_the_snapshot_while_another_holds_the_index_and_keeps_its_writes(index, caplog):
    holder, _ = holder_with_chroma_open(index, seed=1)
    reader = MirroredStore.open_reader(index)
    try:
        assert reader.backend == READER and reader.lock is None
        assert reader.count(COLLECTION) == 20  # the snapshot the holder started from: read, not embedded again
        hits = reader.query(COLLECTION, vectors(20)[7], 1, {"session": "s0"}, space=SPACE)
        assert hits[0].id == "s0:turn-7#d"
        mine, _ = fill(reader, count=3, seed=2)
        assert reader.existing(COLLECTION, mine) == set(mine)  # its own writes, in its copy at once
        reader.flush()  # returns at once: the holder is still there
        assert reader._chroma is None and reader.backend == READER
        assert held_by_another(index)
        with caplog.at_level("INFO", logger="storyecho.memory"):
            reader.close()
        assert "3 vectors of this game left out of the memory index" in caplog.text
        with pytest.raises(StoreUnavailable):
            fill(reader, count=1, seed=4)
    finally:
        holder.close()
    held = in_chroma(index)
    assert "s1:turn-4#d" in held and "s2:turn-0#d" not in held  # the holder's writes; the reader's left out


def wait_for(check, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


def test_the_holder_publishes_its_copy_while_idle_and_a_reader_follows_it(index, monkeypatch):
    monkeypatch.setattr(mirror, "PUBLISH_EVERY_S", 0.0)
    monkeypatch.setattr(mirror, "PUBLISH_IDLE_S", 0.1)
    monkeypatch.setattr(mirror, "PUBLISH_POLL_S", 0.05)
    holder, ids = holder_with_chroma_open(index, seed=1)
    try:
        assert wait_for(lambda: manifest(index, PUBLISHED).get(COLLECTION, {}).get("count") == 25)
        early = MirroredStore.open_reader(index)  # reads the manifest now, its files on first use
        fill(holder, count=4, seed=3)
        holder.flush()
        assert wait_for(lambda: manifest(index, PUBLISHED)[COLLECTION]["count"] == 29)
        for reader in (early, MirroredStore.open_reader(index)):
            try:
                assert reader.count(COLLECTION) == 29  # the early one's files are gone: it read the new manifest
                assert reader.existing(COLLECTION, [*ids, "s3:turn-3#d"]) == {*ids, "s3:turn-3#d"}
            finally:
                reader.close()
    finally:
        holder.close()
    assert (snapshot_dir(index) / SNAPSHOT_MARKER).is_file()
    again = MirroredStore.open_local(index)
    try:
        assert again._chroma is None and again.count(COLLECTION) == 29  # the clean snapshot still is the index
    finally:
        again.close()


def test_a_reader_takes_the_index_once_its_holder_has_gone_and_writes_what_it_held(index):
    holder, ids = holder_with_chroma_open(index, seed=1)
    reader = MirroredStore.open_reader(index)
    mine, _ = fill(reader, count=3, seed=2)
    holder.close()
    reader.flush()  # the lock is free: it takes it, and the held writes reach Chroma
    assert reader.backend == "chroma" and held_by_another(index)
    fill(reader, count=2, seed=5)
    reader.close()
    assert not (snapshot_dir(index) / SNAPSHOT_MARKER).exists(), "its copy may lack the holder's last writes"
    held = in_chroma(index)
    assert set(ids) | set(mine) | {"s5:turn-1#d"} <= set(held)


def test_two_games_embedding_caches_on_one_data_folder_are_merged(index):
    holder = MirroredStore.open_local(index)
    reader = MirroredStore.open_reader(index)
    first, second = BagOfWords(), BagOfWords()
    holder.remember_embeddings(first).embed(["the old hunter"])
    reader.remember_embeddings(second).embed(["a silver harp"])
    reader.close()  # the reader saves first ...
    holder.close()  # ... and the holder's save keeps what the reader saved
    model = BagOfWords()
    again = MirroredStore.open_local(index)
    try:
        again.remember_embeddings(model).embed(["the old hunter", "a silver harp"])
        assert model.texts == []
    finally:
        again.close()
