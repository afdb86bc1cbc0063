"""all-MiniLM-L6-v2 as an ONNX graph on onnxruntime: CUDA when available, the CPU otherwise.

The wheel ships one graph, int8 (MatMul weights per channel, activations quantised per run), the fast
one on a CPU. On a GPU its dynamic quantisation is the wrong shape of work (a quantise step per layer,
one text per run), so there the same weights are dequantised once into a float32 graph that batches
(``float_graph``; needs the ``onnx`` package, which GPU installs have).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from aintern.embed.base import (
    MODEL_IDS,
    EmbeddingProgress,
    ProgressCallback,
    length_sorted_batches,
    normalize,
    read_in_windows,
)
from aintern.embed.tokenizer import MODELS_DIR, WordPieceTokenizer

log = logging.getLogger(__name__)


class OnnxEmbedder:
    """The transformer: slower than the static model, better at paraphrase. Window 256 tokens."""

    model_id = MODEL_IDS["minilm"]
    dimension = 384
    #: sentence-transformers' max_seq_length is 256 including [CLS] and [SEP].
    max_tokens = 254

    def __init__(
        self,
        path: Path = MODELS_DIR / "minilm-l6-v2.int8.onnx",
        batch_size: int | None = None,
        device: str = "auto",
        threads: int | None = None,
        graph: str = "auto",
        spinning: bool = False,
    ) -> None:
        """``threads``: onnxruntime's threads for one run (default: every core; a server running one
        model per worker process gives each one). ``graph``: ``int8`` as shipped, ``float`` (its
        weights dequantised, see ``float_graph``), or ``auto``: float on a GPU, int8 on a CPU.
        ``spinning``: let the threads spin between runs, for a bulk job that no search shares the
        process with (the file vectors: Django's 768 summaries in 1.17 s instead of 1.65,
        bench/probes/file_vector_embed.py)."""
        if graph not in ("auto", "int8", "float"):
            raise ValueError(f"graph must be auto, int8 or float, not {graph!r}")
        self.path = Path(path)
        # Dynamic int8 quantisation scales activations per batch, so a text's vector would depend on
        # its neighbours; one text per run keeps vectors batch-independent, at no measured cost on CPU
        # (docs/benchmarks.md). Float graphs batch normally.
        self._batch_size = batch_size
        self.graph = graph
        self.device = device
        self.threads = threads
        self.spinning = spinning
        self.truncated_count = 0
        self.tokenizer = WordPieceTokenizer()
        self._session: Any = None
        self._query_embedder: OnnxEmbedder | None = None

    @property
    def is_loaded(self) -> bool:
        return self._session is not None

    @property
    def on_gpu(self) -> bool:
        """Whether the model runs on CUDA: what the loaded session uses, else what onnxruntime offers
        (a build with CUDA lists it even on a machine without a usable GPU; ``load`` finds out)."""
        if self._session is not None:
            return bool(self._session.get_providers()[0] == "CUDAExecutionProvider")
        return self.providers[0] == "CUDAExecutionProvider"

    @property
    def dequantised(self) -> bool:
        """Whether the int8 file runs as a float graph (``float_graph``)."""
        if "int8" not in self.path.name:
            return False
        return self.graph == "float" or (self.graph == "auto" and self.on_gpu)

    @property
    def batch_size(self) -> int:
        """Texts per run: one for the int8 graph (see above); for a float one 64 on a GPU (85 % of the
        throughput of 256, its memory arena half as large: docs/benchmarks.md), 32 on a CPU."""
        if self._batch_size:
            return self._batch_size
        if self.dequantised or "int8" not in self.path.name:
            return 64 if self.on_gpu else 32
        return 1

    @property
    def providers(self) -> list[str]:
        import onnxruntime as ort

        available = ort.get_available_providers()
        if self.device in ("auto", "cuda") and "CUDAExecutionProvider" in available:
            return ["CUDAExecutionProvider", "CPUExecutionProvider"]
        if self.device == "cuda":
            raise RuntimeError(
                "device 'cuda' requested but onnxruntime has no CUDAExecutionProvider (pip install onnxruntime-gpu)"
            )
        return ["CPUExecutionProvider"]

    def load(self) -> None:
        if self._session is not None:
            return
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.intra_op_num_threads = self.threads or os.cpu_count() or 1
        # Threads that spin after a run keep both cores busy: a search that embeds its question here (the
        # file vectors, the full tier) then ran its numpy at half speed (warm p50 7.3 ms, 3.6 ms without
        # spinning; bulk embedding is ~20 % slower without it: docs/benchmarks.md section 42).
        opts.add_session_config_entry("session.intra_op.allow_spinning", "1" if self.spinning else "0")
        providers = self.providers
        if providers[0] == "CUDAExecutionProvider":
            if hasattr(ort, "preload_dlls"):
                ort.preload_dlls()  # CUDA and cuDNN from the nvidia-* pip packages, no LD_LIBRARY_PATH needed
            model = float_graph(self.path) if self.dequantised else str(self.path)
            cuda: dict[str, str] = {}
            cap = os.environ.get("AINTERN_GPU_MEMORY_MB", "").strip()
            if cap:  # a shared GPU: stay under this much (batches shrink)
                if not cap.isdigit():
                    raise ValueError(f"AINTERN_GPU_MEMORY_MB={cap!r}: give a number of megabytes")
                cuda["gpu_mem_limit"] = str(int(cap) << 20)
            session = ort.InferenceSession(model, sess_options=opts, providers=providers, provider_options=[cuda, {}])
            if session.get_providers()[0] == "CUDAExecutionProvider":
                self._session = session
                return
            if self.device == "cuda":
                raise RuntimeError("device 'cuda' requested but onnxruntime could not use a GPU (see its log)")
            # onnxruntime-gpu on a machine whose GPU it cannot use: it fell back to the CPU, where the
            # shipped int8 graph, one text a run, is the fast choice.
            log.warning("onnxruntime-gpu found no usable GPU (see its log above); the model runs on the CPU")
            providers = ["CPUExecutionProvider"]
            self.graph = "int8" if self.graph == "auto" else self.graph
        model = float_graph(self.path) if self.dequantised else str(self.path)  # (after a fallback, not "auto")
        self._session = ort.InferenceSession(model, sess_options=opts, providers=providers)

    def unload(self) -> None:
        self._session = None

    def embed(self, text: str) -> np.ndarray:
        out: np.ndarray = self.embed_batch([text])[0]
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """A question is embedded on the CPU even where a GPU is used: one short text takes ~1 ms
        there, and a one-shot search would otherwise wait for CUDA to start (docs/benchmarks.md)."""
        if self._session is None and self.on_gpu:
            if self._query_embedder is None:
                self._query_embedder = OnnxEmbedder(self.path, device="cpu", threads=self.threads)
            return self._query_embedder.embed(text)
        return self.embed(text)

    def embed_batch(self, texts: Sequence[str], progress: ProgressCallback | None = None) -> np.ndarray:
        """Unit vectors of ``texts``; a text longer than the window is truncated (and counted)."""
        all_ids = self.tokenizer.ids(list(texts))
        for i, ids in enumerate(all_ids):
            if len(ids) > self.max_tokens:
                self.truncated_count += 1
                all_ids[i] = ids[: self.max_tokens]
        return normalize(self._run(all_ids, progress))

    def embed_windows(self, texts: Sequence[str], progress: ProgressCallback | None = None) -> np.ndarray:
        """Unit vectors of ``texts`` read whole: a text longer than the window is cut into windows of
        equal size, and its vector is the mean of theirs (the full tier embeds 512-token chunks this way)."""
        return read_in_windows(self.tokenizer.ids(list(texts)), self.max_tokens, lambda w: self._run(w, progress))

    def _run(self, all_ids: list[list[int]], progress: ProgressCallback | None) -> np.ndarray:
        """The encoder's mean-pooled outputs for token id lists of at most ``max_tokens`` each."""
        self.load()
        cls_id, sep_id, pad_id = self.tokenizer.special_ids
        result = np.zeros((len(all_ids), self.dimension), dtype=np.float32)
        done = 0
        for batch in length_sorted_batches([len(x) for x in all_ids], self.batch_size):
            width = max(len(all_ids[i]) for i in batch) + 2
            input_ids = np.full((len(batch), width), pad_id, dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                ids = all_ids[i]
                input_ids[row, : len(ids) + 2] = [cls_id, *ids, sep_id]
                mask[row, : len(ids) + 2] = 1
            result[batch] = self._encode(input_ids, mask)
            done += len(batch)
            if progress:
                progress(EmbeddingProgress(done, len(all_ids)))
        return result

    def _encode(self, input_ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """One run of the model; where the GPU's memory runs out, the batch in halves, and the smaller
        size from then on (a laptop's GPU, or one that other programs share)."""
        try:
            out: np.ndarray = self._session.run(None, {"input_ids": input_ids, "attention_mask": mask})[0]
            return out
        except Exception as exc:
            message = str(exc).lower()
            if len(input_ids) == 1 or ("out of memory" not in message and "failed to allocate" not in message):
                raise
            half = len(input_ids) // 2
            if self._batch_size is None or half < self._batch_size:  # (said once per size)
                log.warning("the GPU ran out of memory at %d texts a batch; going on with %d", len(input_ids), half)
                self._batch_size = half
            return np.vstack([self._encode(input_ids[:half], mask[:half]), self._encode(input_ids[half:], mask[half:])])


def cuda_build_installed() -> bool:
    """Whether the installed onnxruntime is a build with CUDA (onnxruntime-gpu), found without importing
    it: most installs have none, and ``aintern index`` then pays nothing to find out."""
    import importlib.util

    spec = importlib.util.find_spec("onnxruntime")
    folders = spec.submodule_search_locations if spec is not None else None
    return any((Path(f) / "capi" / "libonnxruntime_providers_cuda.so").exists() for f in folders or ())


def float_graph(path: Path) -> bytes:
    """The int8 graph at ``path`` with its quantised MatMuls made float32 again: each
    DynamicQuantizeLinear → MatMulInteger → Cast → Mul chain becomes one MatMul with the weights
    dequantised (``(W - zero point) × scale``, per output column). Same weights, float activations."""
    try:
        import onnx
        from onnx import helper, numpy_helper
    except ImportError as exc:  # pragma: no cover - GPU installs bring onnx (docs/scaling.md: "The full tier")
        raise RuntimeError("the model on a GPU needs the onnx package: pip install onnx") from exc

    model = onnx.load(str(path))
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)

    drop: set[int] = set()
    replacement: dict[int, onnx.NodeProto] = {}
    new_inits: list[onnx.TensorProto] = []
    for node in graph.node:
        if node.op_type != "MatMulInteger":
            continue
        x_q, w_q, _, w_zp = node.input
        quantise = producer[x_q]
        (cast,) = consumers[node.output[0]]
        (rescale,) = consumers[cast.output[0]]
        scale_of = producer[next(i for i in rescale.input if i != cast.output[0])]  # x scale × w scale
        w_scale = next(i for i in scale_of.input if i in inits)
        weights = numpy_helper.to_array(inits[w_q]).astype(np.float32)
        weights -= numpy_helper.to_array(inits[w_zp]).astype(np.float32)
        weights *= numpy_helper.to_array(inits[w_scale]).astype(np.float32)
        name = w_q.removesuffix("_quantized") + "_float"
        new_inits.append(numpy_helper.from_array(weights, name))
        replacement[id(rescale)] = helper.make_node("MatMul", [quantise.input[0], name], list(rescale.output))
        drop.update((id(node), id(cast), id(scale_of), id(quantise)))

    nodes = [replacement.get(id(n), n) for n in graph.node if id(n) not in drop]
    used = {name for n in nodes for name in n.input}
    kept_inits = [t for t in graph.initializer if t.name in used]
    del graph.node[:]
    graph.node.extend(nodes)
    del graph.initializer[:]
    graph.initializer.extend([*kept_inits, *new_inits])
    return bytes(model.SerializeToString())
