"""semble 0.7.0 on the same semble-derived dev set, same machine, same scorer — for comparison.

Run it with a Python that has both semble and aintern (semble's own model comes from a hub,
which is unreachable here, so semble is given aintern's MiniLM-distilled static model in
model2vec format — the "hybrid with a MiniLM-distilled static model" configuration):

    python -m venv /tmp/semblevenv && /tmp/semblevenv/bin/pip install semble==0.7.0 -e .
    /tmp/semblevenv/bin/python bench/semble_side_by_side.py [--whole]

``--whole``: each repository indexed whole, as ``eval_retrieval.py semble --whole``.
``--time PATH``: only semble's cold index time of PATH, three runs (next to ``bench/index_bench.py PATH``).

Prints per repo: semble's cold index time, NDCG@10 of its BM25+ranking mode (alpha 0) and of its
hybrid mode (alpha auto).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from semble_data import files_on_disk, load_repos, ndcg_at_10


def export_static_model(directory: Path) -> str:
    """aintern's static model as a model2vec StaticModel directory."""
    from model2vec import StaticModel
    from tokenizers import Tokenizer

    from aintern.embed.static import StaticEmbedder

    emb = StaticEmbedder()
    emb.load()
    assert emb._table is not None
    tokenizer = Tokenizer.from_file(str(Path(emb.path).parent / "tokenizer.json"))
    StaticModel(vectors=emb._table, tokenizer=tokenizer, normalize=True).save_pretrained(str(directory))
    return str(directory)


def main() -> None:
    whole = "--whole" in sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["HOME"] = tmp  # a cold, empty semble cache
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
        os.environ["HF_HUB_OFFLINE"] = "1"
        from semble import SembleIndex

        model_dir = export_static_model(Path(tmp) / "model")
        if "--time" in sys.argv:
            path = sys.argv[sys.argv.index("--time") + 1]
            for _ in range(3):
                t0 = time.perf_counter()
                index = SembleIndex.from_path(path, model_path=model_dir)
                print(f"semble cold index {path}: {time.perf_counter() - t0:.2f}s, {index.stats}")
            return
        bm25_scores, hybrid_scores, times = [], [], []
        for repo in load_repos(whole=whole):
            t0 = time.perf_counter()
            index = SembleIndex.from_path(str(repo.root), model_path=model_dir)
            seconds = time.perf_counter() - t0
            existing = files_on_disk(repo)
            row = []
            for alpha in (0.0, None):
                scores = []
                for q in repo.queries:
                    results = index.search(q.text, top_k=10, alpha=alpha)
                    paths = [repo.prefix + Path(r.chunk.file_path).resolve().relative_to(repo.root.resolve()).as_posix()
                             if Path(r.chunk.file_path).is_absolute() else repo.prefix + r.chunk.file_path for r in results]  # fmt: skip
                    scores.append(ndcg_at_10(paths, q.targets, existing))
                row.append(statistics.mean(scores))
            bm25_scores.append(row[0])
            hybrid_scores.append(row[1])
            times.append(seconds)
            print(
                f"{repo.name:10s} {repo.language:10s} index {seconds:5.2f}s  bm25+ranking={row[0]:.3f}  hybrid={row[1]:.3f}",
                flush=True,
            )
        print(f"MEAN semble bm25+ranking={statistics.mean(bm25_scores):.4f} hybrid={statistics.mean(hybrid_scores):.4f} "
              f"index total {sum(times):.1f}s")  # fmt: skip


if __name__ == "__main__":
    main()
