"""In-process vector index: numpy brute force vs FAISS, with the filter memory needs.

Every memory query is filtered (this session, turns up to now), so the
comparison includes the filter: ``InProcessVectorStore`` (numpy, mask then
matrix product) against FAISS ``IndexFlatIP`` searched through an
``IDSelectorBatch`` of the allowed ids. Both are exact. Sizes span a long game
(hundreds of turns) to far past it.

    python bench/vector_index.py [--sizes 1000 5000 20000 50000] [--queries 200] [--json]

Reports the median milliseconds per filtered top-10 query and the ratio,
measured side by side in one run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from game.memory.vectors.inprocess import InProcessVectorStore

DIM = 384
SESSIONS = 10


def unit(rows: int, rng: np.random.Generator) -> np.ndarray:
    vectors = rng.normal(size=(rows, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def measure(size: int, queries: int, rng: np.random.Generator) -> dict[str, Any]:
    import faiss

    vectors = unit(size, rng)
    sessions = rng.integers(0, SESSIONS, size)
    turns = np.arange(size) // SESSIONS
    metas = [{"session": f"s{s}", "turn": int(t)} for s, t in zip(sessions, turns, strict=True)]
    store = InProcessVectorStore()
    store.upsert("bench", [str(i) for i in range(size)], vectors, metas)
    index = faiss.IndexFlatIP(DIM)
    index.add(vectors)
    probes = unit(queries, rng)
    numpy_ms, faiss_ms = [], []
    for n, query in enumerate(probes):
        session, upto = f"s{n % SESSIONS}", int(turns.max() * 0.8)
        start = time.perf_counter()
        store.query("bench", query, 10, {"session": session, "turn": {"$lte": upto}})
        numpy_ms.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        allowed = np.flatnonzero((sessions == n % SESSIONS) & (turns <= upto)).astype(np.int64)
        params = faiss.SearchParameters(sel=faiss.IDSelectorBatch(allowed))  # type: ignore[call-arg]
        index.search(query.reshape(1, -1), 10, params=params)
        faiss_ms.append((time.perf_counter() - start) * 1000)
    numpy_median, faiss_median = statistics.median(numpy_ms), statistics.median(faiss_ms)
    return {
        "size": size,
        "numpy_ms": round(numpy_median, 3),
        "faiss_ms": round(faiss_median, 3),
        "faiss_over_numpy": round(faiss_median / numpy_median, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000, 20000, 50000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "vector_index.json")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(7)
    rows = [measure(size, args.queries, rng) for size in args.sizes]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=2))
    if args.json:
        print(json.dumps(rows))
        return 0
    print(f"{'vectors':>8}{'numpy ms':>11}{'faiss ms':>11}{'faiss/numpy':>13}")
    for row in rows:
        print(f"{row['size']:>8}{row['numpy_ms']:>11.3f}{row['faiss_ms']:>11.3f}{row['faiss_over_numpy']:>13.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
