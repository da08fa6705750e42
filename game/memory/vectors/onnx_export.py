"""The all-MiniLM-L6-v2 BERT encoder written as an ONNX graph from its safetensors weights (numpy and ``onnx`` only).

:func:`export_model` is what ``onnx_embedder.OnnxEmbedder`` runs once per
weights and precision (the result is cached); the graph is built by
:class:`_Graph`, one method per part of the encoder.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from game.memory.vectors.embedders import EmbedderUnavailable

if TYPE_CHECKING:
    import onnx

EXPORTER_VERSION = 4
"""Bumped whenever :func:`export_model` writes a different graph (old cache files are then ignored)."""
OPSET = 17
"""LayerNormalization is a standard op from opset 17; ONNX Runtime 1.17+ runs it."""
IR_VERSION = 8
"""The ONNX IR version the file declares, readable by every supported ONNX Runtime."""
Precision = Literal["fp32", "int8"]


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
    from onnx import TensorProto, helper

    config = _bert_config(model_dir)
    graph = _Graph(model_dir, config, precision == "int8")
    x = graph.embeddings()
    for layer in range(int(config["num_hidden_layers"])):
        x = graph.layer(x, layer)
    graph.node("Identity", [x], "token_embeddings")
    model = helper.make_model(
        helper.make_graph(
            graph.nodes,
            "sentence_encoder",
            [
                helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
                helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"]),
            ],
            [helper.make_tensor_value_info("token_embeddings", TensorProto.FLOAT, ["batch", "tokens", graph.hidden])],
            graph.initializers,
        ),
        opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)],
        producer_name="storyecho",
        producer_version=str(EXPORTER_VERSION),
    )
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model)
    onnx.save_model(model, str(out))


class _Graph:
    """The nodes and initializers of the encoder's graph, added part by part (see :func:`export_model`)."""

    def __init__(self, model_dir: Path, config: dict[str, Any], quantized: bool) -> None:
        from safetensors.numpy import load_file

        self.weights = load_file(str(model_dir / "model.safetensors"))
        self.prefix = "bert." if any(k.startswith("bert.") for k in self.weights) else ""
        self.hidden = int(config["hidden_size"])
        self.heads = int(config["num_attention_heads"])
        self.head_dim = self.hidden // self.heads
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.quantized = quantized
        self.initializers: list[onnx.TensorProto] = []
        self.nodes: list[onnx.NodeProto] = []
        if quantized:
            self.const("q_tiny", 1e-12)
            self.const("q_step", 1.0 / 127.0)
            self.const("q_levels", 127.0)
            self.const("q_offset", 128.5)
            self.const("q_one", 1.0)
            self.const("q_zero", np.uint8(128), np.uint8)

    def w(self, name: str) -> npt.NDArray[np.float32]:
        return np.ascontiguousarray(self.weights[self.prefix + name], dtype=np.float32)

    def const(self, name: str, value: npt.ArrayLike, dtype: Any = np.float32) -> str:
        from onnx import numpy_helper

        self.initializers.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def node(self, op: str, inputs: list[str], name: str, **attrs: Any) -> str:
        from onnx import helper

        self.nodes.append(helper.make_node(op, inputs, [name], name=name, **attrs))
        return name

    def matmul(self, x: str, matrix: npt.NDArray[np.float32], name: str) -> str:
        """``x @ matrix`` (matrix (in, out)); int8 as :func:`export_model`'s docstring describes."""
        from onnx import TensorProto

        node, const = self.node, self.const
        if not self.quantized:
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

    def product(self, x: str, stems: list[str], name: str, scales: list[float] | None = None) -> tuple[str, str]:
        """One product for the layers in ``stems`` side by side (torch Linear stores (out, in)), and its bias."""
        scales = scales or [1.0] * len(stems)
        matrix = np.concatenate([self.w(f"{s}.weight").T * k for s, k in zip(stems, scales, strict=True)], axis=1)
        bias = np.concatenate([self.w(f"{s}.bias") * k for s, k in zip(stems, scales, strict=True)])
        return self.matmul(x, matrix, name), self.const(f"{name}.b", bias)

    def linear(self, x: str, stems: list[str], name: str, scales: list[float] | None = None) -> str:
        return self.node("Add", list(self.product(x, stems, name, scales)), name)

    def residual_norm(self, x: str, stems: list[str], skip: str, ln: str, name: str) -> str:
        """LayerNorm(x @ W + b + skip), as one SkipLayerNormalization after the product."""
        if not self.quantized:
            added = self.node("Add", [self.linear(x, stems, f"{name}.lin"), skip], f"{name}.res")
            return self.layer_norm(added, ln, name)
        mm, b = self.product(x, stems, f"{name}.lin")
        gamma = self.const(f"{name}.g", self.w(f"{ln}.weight"))
        beta = self.const(f"{name}.beta", self.w(f"{ln}.bias"))
        return self.node(
            "SkipLayerNormalization", [mm, skip, gamma, beta, b], name, domain="com.microsoft", epsilon=self.eps
        )

    def layer_norm(self, x: str, stem: str, name: str) -> str:
        gamma = self.const(f"{name}.g", self.w(f"{stem}.weight"))
        beta = self.const(f"{name}.beta", self.w(f"{stem}.bias"))
        return self.node("LayerNormalization", [x, gamma, beta], name, axis=-1, epsilon=self.eps)

    def embeddings(self) -> str:
        """Words + (positions + token type 0), then LayerNorm; and the attention mask the layers read."""
        from onnx import TensorProto

        node, const, w = self.node, self.const, self.w
        words = node("Gather", [const("word_embeddings", w("embeddings.word_embeddings.weight")), "input_ids"], "words")
        positions_table = w("embeddings.position_embeddings.weight") + w("embeddings.token_type_embeddings.weight")[0]
        length = node("Slice", [node("Shape", ["input_ids"], "ids_shape"), const("one", [1], np.int64),
                                const("two", [2], np.int64)], "length")  # fmt: skip
        positions = node("Slice", [const("position_embeddings", positions_table), const("zero", [0], np.int64),
                                   length, const("axis0", [0], np.int64)], "positions")  # fmt: skip
        x = self.layer_norm(node("Add", [words, positions], "embedded"), "embeddings.LayerNorm", "emb_ln")
        if self.quantized:  # ONNX Runtime's MultiHeadAttention takes the padding mask (it adds -10000 where it is 0)
            node("Cast", ["attention_mask"], "key_mask", to=TensorProto.INT32)
        else:  # the additive attention mask: 0 for tokens, -10000 for padding, shaped (batch, 1, 1, tokens)
            mask = node("Cast", ["attention_mask"], "mask", to=TensorProto.FLOAT)
            inverted = node("Sub", [const("f_one", 1.0), mask], "inverted")
            node("Unsqueeze", [node("Mul", [inverted, const("neg", -10000.0)], "neg_mask"),
                               const("axes12", [1, 2], np.int64)], "attn_bias")  # fmt: skip
            const("split_heads", [0, 0, self.heads, self.head_dim], np.int64)
            const("merge_heads", [0, 0, self.hidden], np.int64)
        return x

    def attention(self, q: str, k: str, v: str, n: str) -> str:
        """The heads' attention over the padding mask: the fused contrib operator (int8), else standard ops."""
        node = self.node
        if self.quantized:
            return node("MultiHeadAttention", [q, k, v, "", "key_mask"], f"{n}.mha", domain="com.microsoft",
                        num_heads=self.heads, scale=1.0)  # fmt: skip
        qh = node("Transpose", [node("Reshape", [q, "split_heads"], f"{n}.qr")], f"{n}.qh", perm=[0, 2, 1, 3])
        kh = node("Transpose", [node("Reshape", [k, "split_heads"], f"{n}.kr")], f"{n}.kh", perm=[0, 2, 3, 1])
        vh = node("Transpose", [node("Reshape", [v, "split_heads"], f"{n}.vr")], f"{n}.vh", perm=[0, 2, 1, 3])
        scores = node("Add", [node("MatMul", [qh, kh], f"{n}.qk"), "attn_bias"], f"{n}.scores")
        probs = node("Softmax", [scores], f"{n}.probs", axis=-1)
        context = node("Transpose", [node("MatMul", [probs, vh], f"{n}.pv")], f"{n}.ctx_t", perm=[0, 2, 1, 3])
        return node("Reshape", [context, "merge_heads"], f"{n}.ctx")

    def layer(self, x: str, i: int) -> str:
        """Encoder layer ``i``: attention, then the feed-forward with its exact GELU, each with its residual norm."""
        from onnx import helper

        node, const = self.node, self.const
        p, n, hidden = f"encoder.layer.{i}.", f"l{i}", self.hidden
        scale = 1.0 / float(np.sqrt(self.head_dim))
        qkv = self.linear(x, [p + "attention.self.query", p + "attention.self.key", p + "attention.self.value"],
                          f"{n}.qkv", [scale, 1.0, 1.0])  # fmt: skip
        q, k, v = (f"{n}.{part}" for part in ("q", "k", "v"))
        self.nodes.append(helper.make_node("Split", [qkv, const(f"{n}.split", [hidden] * 3, np.int64)], [q, k, v],
                                           name=f"{n}.split", axis=-1))  # fmt: skip
        context = self.attention(q, k, v, n)
        x = self.residual_norm(context, [p + "attention.output.dense"], x, p + "attention.output.LayerNorm", f"{n}.ln1")
        inner = self.linear(x, [p + "intermediate.dense"], f"{n}.ff1")
        # exact GELU, x * 0.5 * (1 + erf(x / sqrt 2)), the pattern ONNX Runtime fuses into one Gelu
        erf = node("Erf", [node("Div", [inner, const(f"{n}.sqrt2", np.sqrt(2.0))], f"{n}.div")], f"{n}.erf")
        gelu = node("Mul", [node("Mul", [inner, node("Add", [erf, const(f"{n}.one", 1.0)], f"{n}.erf1")], f"{n}.xe"),
                            const(f"{n}.half", 0.5)], f"{n}.gelu")  # fmt: skip
        return self.residual_norm(gelu, [p + "output.dense"], x, p + "output.LayerNorm", f"{n}.ln2")
