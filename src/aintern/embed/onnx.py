"""all-MiniLM-L6-v2 as an ONNX graph on onnxruntime: CUDA when available, the CPU otherwise."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from aintern.embed.base import MODEL_IDS, EmbeddingProgress, ProgressCallback, length_sorted_batches, normalize
from aintern.embed.tokenizer import MODELS_DIR, WordPieceTokenizer


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
    ) -> None:
        """``threads``: onnxruntime's threads for one run (default: every core; a server running one
        model per worker process gives each one)."""
        self.path = Path(path)
        # Dynamic int8 quantisation scales activations per batch, so a text's vector would depend on
        # its neighbours; one text per run keeps vectors batch-independent, at no measured cost on CPU
        # (docs/benchmarks.md). Float graphs batch normally.
        self.batch_size = batch_size or (1 if "int8" in self.path.name else 32)
        self.device = device
        self.threads = threads
        self.truncated_count = 0
        self.tokenizer = WordPieceTokenizer()
        self._session: Any = None

    @property
    def is_loaded(self) -> bool:
        return self._session is not None

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
        self._session = ort.InferenceSession(str(self.path), sess_options=opts, providers=self.providers)

    def unload(self) -> None:
        self._session = None

    def embed(self, text: str) -> np.ndarray:
        out: np.ndarray = self.embed_batch([text])[0]
        return out

    def embed_query(self, text: str) -> np.ndarray:
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
        windows: list[list[int]] = []
        owner: list[int] = []
        for i, ids in enumerate(self.tokenizer.ids(list(texts))):
            parts = max(1, -(-len(ids) // self.max_tokens))
            size = -(-len(ids) // parts) if ids else 0
            for lo in range(0, max(len(ids), 1), max(size, 1)):
                windows.append(ids[lo : lo + size])
                owner.append(i)
        vectors = normalize(self._run(windows, progress))
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        np.add.at(out, np.asarray(owner, dtype=np.int64), vectors)
        return normalize(out)

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
            result[batch] = self._session.run(None, {"input_ids": input_ids, "attention_mask": mask})[0]
            done += len(batch)
            if progress:
                progress(EmbeddingProgress(done, len(all_ids)))
        return result
