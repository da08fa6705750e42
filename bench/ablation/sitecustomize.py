"""Switch off one of memory's performance mechanisms in every process of a benchmark (``bench/ablation.py``).

``bench.ablation`` puts this folder first on ``PYTHONPATH`` and names the
mechanisms to switch off in ``STORYECHO_ABLATE`` (comma-separated), so the
benchmark's own process and the ``storyecho`` processes it starts all run
without them. Each switch patches one module right after it is first imported
(never importing it early, so start-up times are not moved):

- ``mirror``: ``wiring.make_store`` never mirrors: reads and writes go straight to
  Chroma (no in-process copy, write-behind, snapshot, row maps or embed cache);
- ``embed_cache``: the mirror does not remember vectors by text between runs;
- ``foreground``: background work never yields to the turn (``memory/foreground.py``);
- ``store_rows``: a dense hit is mapped to the index's row by a dictionary lookup of its vector id, not by
  the row array kept up to date (``memory/store_rows.py``);
- ``onnx``: the default embedder is sentence-transformers on torch, not ONNX Runtime (``onnx_embedder.py``).

A measurement tool: the game never reads ``STORYECHO_ABLATE``.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import os
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

ABLATE = {name for name in os.environ.get("STORYECHO_ABLATE", "").split(",") if name}


def _no_mirror(module: ModuleType) -> None:
    make_store = module.make_store

    def plain(*args: Any, **kwargs: Any) -> Any:
        kwargs["mirrored"] = False
        return make_store(*args, **kwargs)

    vars(module)["make_store"] = plain


def _no_embed_cache(module: ModuleType) -> None:
    module.MirroredStore.remember_embeddings = lambda self, embedder: embedder


def _no_foreground(module: ModuleType) -> None:
    cls = module.Foreground
    cls.busy = lambda self: contextlib.nullcontext()
    cls.waiting = lambda self: contextlib.nullcontext()
    cls.wait_idle = lambda self, *args, **kwargs: True


def _no_store_rows(module: ModuleType) -> None:
    import numpy as np

    def hit_rows(self: Any, answer: Any) -> Any:
        ids = [answer.vector_id(n) or "" for n in range(len(answer.similarity))]
        return np.fromiter((self._vector_row.get(i, -1) for i in ids), dtype=np.int64, count=len(ids))

    module.HybridIndex._hit_rows = hit_rows


def _no_onnx(module: ModuleType) -> None:
    vars(module)["onnx_available"] = lambda: False


PATCHES: dict[str, tuple[str, Callable[[ModuleType], None]]] = {
    "mirror": ("game.wiring", _no_mirror),
    "embed_cache": ("game.memory.vectors.mirror", _no_embed_cache),
    "foreground": ("game.memory.vectors.foreground", _no_foreground),
    "onnx": ("game.memory.vectors.onnx_embedder", _no_onnx),
    "store_rows": ("game.memory.search.hybrid", _no_store_rows),
}
unknown = ABLATE - set(PATCHES)
if unknown:
    raise SystemExit(f"STORYECHO_ABLATE: unknown mechanism(s) {sorted(unknown)}; known: {sorted(PATCHES)}")
AFTER = {PATCHES[name][0]: PATCHES[name][1] for name in ABLATE}


class _PatchAfterImport(importlib.abc.MetaPathFinder):
    """Finds the module as the other finders do, then patches it once its code has run."""

    def find_spec(self, name: str, path: Sequence[str] | None, target: ModuleType | None = None) -> Any:
        if name not in AFTER:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None:
                run = spec.loader.exec_module

                def exec_module(module: ModuleType, run: Any = run) -> None:
                    run(module)
                    AFTER[name](module)

                spec.loader.exec_module = exec_module  # type: ignore[method-assign]
                return spec
        return None


if AFTER:
    sys.meta_path.insert(0, _PatchAfterImport())
