"""Both vector stores answer alike: filters, scores, deletes."""

from __future__ import annotations

import numpy as np
import pytest

from game.memory.vectors.chroma import open_chroma
from game.memory.vectors.inprocess import InProcessVectorStore
from game.memory.vectors.stores import StoreUnavailable


@pytest.fixture(params=["chroma", "inprocess"])
def store(request, tmp_path):
    return open_chroma(tmp_path / "index") if request.param == "chroma" else InProcessVectorStore()


def vectors(n: int) -> np.ndarray:
    rng = np.random.default_rng(3)
    v = rng.normal(size=(n, 384)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_filtered_query_scores_and_metadata(store):
    v = vectors(6)
    metas = [{"session": "a" if i < 4 else "b", "turn": i} for i in range(6)]
    store.upsert("mem", [f"m{i}" for i in range(6)], v, metas)
    hits = store.query("mem", v[2], 3, {"session": "a", "turn": {"$lte": 2}})
    assert hits[0].id == "m2"
    assert {h.id for h in hits} <= {"m0", "m1", "m2"}
    assert hits[0].similarity == pytest.approx(1.0, abs=1e-5)
    assert [h.similarity for h in hits] == sorted((h.similarity for h in hits), reverse=True)
    assert set(store.metadata("mem", {"session": "b"})) == {"m4", "m5"}
    assert store.count("mem") == 6


def test_inner_product_keeps_mean_vectors_unnormalised(store):
    v = vectors(2)
    mean = (v[0] + v[1]) / 2  # an item stored with context
    store.upsert("mem", ["x"], mean.reshape(1, -1), [{"session": "a"}])
    (hit,) = store.query("mem", v[0], 1)
    assert hit.similarity == pytest.approx(float(v[0] @ mean), abs=1e-4)


def test_upsert_replaces_and_delete_removes(store):
    v = vectors(3)
    store.upsert("mem", ["a", "b"], v[:2], [{"n": 1}, {"n": 2}])
    store.upsert("mem", ["a"], v[2:3], [{"n": 3}])
    assert store.count("mem") == 2
    assert store.metadata("mem")["a"] == {"n": 3}
    store.delete("mem", ["a"])
    assert set(store.metadata("mem")) == {"b"}
    assert store.query("mem", v[0], 5, {"n": 99}) == []


def test_unreachable_server_is_reported():
    with pytest.raises(StoreUnavailable):
        open_chroma(url="http://127.0.0.1:9")


def test_both_stores_filter_alike_through_deletes_and_growth(tmp_path):
    """One where evaluator in process; Chroma is the reference for what it must answer."""
    chroma, local = open_chroma(tmp_path / "index"), InProcessVectorStore()
    v = vectors(120)
    metas = [{"session": "ab"[i % 2], "turn": i, "kind": "turn" if i % 3 else "note"} for i in range(120)]
    for store in (chroma, local):
        for start in range(0, 120, 7):  # many small upserts: the in-process matrix grows
            ids = [f"m{i}" for i in range(start, min(start + 7, 120))]
            store.upsert("mem", ids, v[start : start + 7], metas[start : start + 7])
        store.delete("mem", [f"m{i}" for i in range(0, 100, 2)] + ["absent"])  # more than half: compaction
        store.upsert("mem", ["m1"], v[119:120], [{"session": "b", "turn": 500, "kind": "note"}])  # changed
    wheres = [
        None,
        {"session": "b"},
        {"turn": {"$lte": 40}},
        {"session": "b", "turn": {"$lte": 60}},
        {"$and": [{"kind": "note"}, {"turn": {"$lte": 99}}]},
        {"kind": {"$eq": "turn"}},
        {"missing": 1},
    ]
    for where in wheres:
        assert set(local.metadata("mem", where)) == set(chroma.metadata("mem", where)), where
        assert {h.id for h in local.query("mem", v[5], 200, where)} == {
            h.id for h in chroma.query("mem", v[5], 200, where)
        }
    assert local.count("mem") == chroma.count("mem") == 70
    assert local.existing("mem", ["m1", "m2", "m3"]) == chroma.existing("mem", ["m1", "m2", "m3"]) == {"m1", "m3"}
    assert local.query("mem", v[119], 1)[0].id in {"m1", "m119"}


def test_chroma_keeps_a_write_larger_than_its_batch_limit(tmp_path):
    """Was: the rebuilt index of the largest save (30,000 Story Bible entries) reached Chroma as one write, which
    Chroma refused ("Batch size of 29783 is greater than max batch size of 5461"): every load embedded it again."""
    store = open_chroma(tmp_path / "index")
    count = 12_000
    ids = [f"s:bible-{n}#x" for n in range(count)]
    matrix = np.random.default_rng(1).standard_normal((count, 8)).astype(np.float32)
    store.upsert("memories", ids, matrix, [{"session": "s", "turn": n % 7} for n in range(count)])
    assert store.count("memories") == count
    assert len(store.existing("memories", ids[-3:])) == 3
    store.close()
