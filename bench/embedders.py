"""Compare the shipped embedders: speed on this CPU and vector-only retrieval quality (semble NDCG@10).

    python bench/embedders.py --quality            # NDCG@10 per repo, static vs transformer
    python bench/embedders.py --speed              # chunks/s at batch sizes 1..64

Quality here is pure vector search over aintern's chunks (no BM25, no reranking): it isolates
the embedding model. Corpora: see ../shared/bench/semble/README.md (SEMBLE_CORPORA).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
from semble_data import load_repos, ndcg_at_10

from aintern.chunk import Chunker
from aintern.embed import embedding_text, get_embedder


def repo_chunks(chunker: Chunker, root: Path, prefix: str) -> list:
    chunks = []
    for f in sorted(root.rglob("*")):
        if f.is_file():
            res = chunker.chunk_file(f, prefix + f.relative_to(root).as_posix())
            chunks.extend(res.chunks)
    return chunks


def quality(names: list[str], models: list[str]) -> None:
    repos = load_repos(names or None)
    for model in models:
        emb = get_embedder(model)
        chunker = Chunker(emb.tokenizer, emb.max_tokens - 16)  # room for the path header
        per_repo = []
        t_embed = 0.0
        n_chunks = 0
        for repo in repos:
            chunks = repo_chunks(chunker, repo.root, repo.prefix)
            t0 = time.perf_counter()
            vecs = emb.embed_batch([embedding_text(c) for c in chunks])
            t_embed += time.perf_counter() - t0
            n_chunks += len(chunks)
            existing = {c.file_path for c in chunks}
            qv = emb.embed_batch([q.text for q in repo.queries])
            scores = []
            for q, v in zip(repo.queries, qv):
                order = np.argsort(-(vecs @ v))[:10]
                scores.append(ndcg_at_10([chunks[i].file_path for i in order], q.targets, existing))
            per_repo.append(statistics.mean(scores))
            print(
                f"{model:12s} {repo.name:12s} {repo.language:11s} chunks={len(chunks):5d} ndcg={per_repo[-1]:.3f}",
                flush=True,
            )
        print(
            f"{model:12s} MEAN ndcg@10={statistics.mean(per_repo):.3f} chunks={n_chunks} embed {n_chunks / t_embed:.0f} chunks/s"
        )


def speed(models: list[str], corpus: Path) -> None:
    for model in models:
        emb = get_embedder(model)
        chunker = Chunker(emb.tokenizer, emb.max_tokens - 16)
        texts = [embedding_text(c) for c in repo_chunks(chunker, corpus, "")][:512]
        mean_tokens = statistics.mean(len(x) for x in emb.tokenizer.ids(texts))
        emb.embed_batch(texts[:8])
        for bs in (1, 8, 32, 64):
            emb.batch_size = bs
            t0 = time.perf_counter()
            emb.embed_batch(texts)
            dt = time.perf_counter() - t0
            print(f"{model:12s} batch={bs:3d} {len(texts) / dt:8.1f} chunks/s (mean {mean_tokens:.0f} tokens/chunk)")
        q = ["Where is the database connection handled?"] * 50
        t0 = time.perf_counter()
        for x in q:
            emb.embed(x)
        print(f"{model:12s} single query {(time.perf_counter() - t0) / len(q) * 1000:.2f} ms")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--quality", action="store_true")
    ap.add_argument("--speed", action="store_true")
    ap.add_argument("--models", default="static,minilm")
    ap.add_argument("--repos", default="")
    ap.add_argument("--corpus", type=Path, default=Path("/tmp/semble/corpora/flask"))
    a = ap.parse_args()
    models = a.models.split(",")
    if a.quality:
        quality([n for n in a.repos.split(",") if n], models)
    if a.speed:
        speed(models, a.corpus)
