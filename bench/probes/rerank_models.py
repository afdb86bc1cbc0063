"""Model rerankers of the default ranking's first candidates, scored out of fold (issue 50 item 2; the note
docs/research/2026-11-29-reranking-models.md has the numbers).

    python bench/probes/rerank_models.py score minilm --out /tmp/s-minilm.json [--per-repo N] [--depth 30]
    python bench/probes/rerank_models.py score ql --out /tmp/s-ql.json --per-repo 4 --depth 20
    python bench/probes/rerank_models.py score llm --out /tmp/s-llm.json --per-repo 3 --depth 20
    python bench/probes/rerank_models.py blend /tmp/s-minilm.json [...]

``score`` runs the default ranking (as eval_retrieval.py's ``default``) on a set (the dev split, or
SEMBLE_SET/SEMBLE_CORPORA for an own set), keeps each question's first ``depth`` hits and scores each with
a model: ``minilm`` the full tier's model on the (question, chunk) pair, the best cosine over windows of
128 tokens; ``ql`` the embedded LLM (gemma3-270m) as a query-likelihood scorer, the mean log-probability of
the question's tokens after the chunk's head; ``llm`` the shipped listwise reranker (``--rerank llm``)
with the embedded LLM standing in for the user's endpoint. ``blend`` mixes the model's score with the
ranking's order (each scaled to 0-1 within a question's candidates; ``--by-score``: its fused scores) at
weights 0-1, picks the weight and depth on one fold of repositories and scores them on the other, both
ways; for an own set, the dev split's choice.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from eval_retrieval import config, open_index, static_embedder
from semble_data import files_on_disk, load_repos, ndcg_at_10

from aintern.embed import get_embedder
from aintern.retrieve.hybrid import hybrid_search
from aintern.store import VectorSearchOptions

WEIGHTS = [round(0.1 * i, 1) for i in range(11)]
DEPTHS = (10, 20, 30)


class MiniLMPairs:
    """The full tier's model on (question, window of the chunk): the best cosine of the chunk's windows."""

    def __init__(self, window: int = 128) -> None:
        self.model = get_embedder("minilm")
        self.window = window

    def scores(self, question: str, texts: list[str]) -> list[float]:
        q = self.model.embed_query(question)
        windows, owner = [], []
        for i, ids in enumerate(self.model.tokenizer.ids(texts)):
            for lo in range(0, max(len(ids), 1), self.window):
                windows.append(ids[lo : lo + self.window])
                owner.append(i)
        vectors = self.model._run(windows, None)
        vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
        cos = vectors @ q
        best = [-1.0] * len(texts)
        for i, c in zip(owner, cos):
            best[i] = max(best[i], float(c))
        return best


class QueryLikelihood:
    """gemma3-270m: mean log P(question tokens | the chunk's head), the question read after the code."""

    def __init__(self, head_tokens: int = 128) -> None:
        from llama_cpp import Llama

        from aintern.answer.llm.llamacpp import packaged_model_path

        self.llm = Llama(
            model_path=str(packaged_model_path("gemma3-270m")), n_ctx=512, logits_all=True, n_threads=2, verbose=False
        )
        self.head = head_tokens

    def scores(self, question: str, texts: list[str], paths: list[str]) -> list[float]:
        asked = self.llm.tokenize(f" {question}".encode(), add_bos=False, special=False)[:64]
        out = []
        for text, path in zip(texts, paths):
            code = self.llm.tokenize(f"File {path}:\n{text}".encode(), add_bos=True)[: self.head]
            prefix = code + self.llm.tokenize(b"\n\nA question this code answers:", add_bos=False)
            tokens = prefix + asked
            self.llm.reset()
            self.llm.eval(tokens)
            logits = np.asarray(self.llm.scores[len(prefix) - 1 : len(tokens) - 1], dtype=np.float64)
            top = logits.max(axis=1, keepdims=True)
            logp = logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True))
            out.append(float(np.mean(logp[np.arange(len(asked)), asked])))
        return out


class ListwiseLocal:
    """The shipped ``--rerank llm`` stage with the embedded LLM in place of an endpoint: its order as scores."""

    def __init__(self, timeout: float) -> None:
        from aintern.answer import get_llm
        from aintern.answer.rerank import ListwiseReranker

        llm = get_llm("gemma3-270m", context_window=4096)
        assert llm is not None
        self.reranker = ListwiseReranker(llm, timeout=timeout)
        self.notes = 0

    def scores(self, question: str, hits: list) -> list[float]:  # type: ignore[type-arg]
        from aintern.retrieve.rerank import Ranked

        ranked = [Ranked(h.chunk_id, h.chunk, h.score, h.score) for h in hits]
        order, note = self.reranker.rerank_with_note(ranked, question)
        self.notes += note is not None
        if note:
            print(f"  note: {note}", flush=True)
        place = {r.chunk_id: i for i, r in enumerate(order)}
        return [float(len(hits) - place[h.chunk_id]) for h in hits]


def score(args: argparse.Namespace) -> None:
    repos = load_repos(None)
    embedder = get_embedder("static")
    scorer = (
        ListwiseLocal(args.timeout)
        if args.scorer == "llm"
        else {"minilm": MiniLMPairs, "ql": QueryLikelihood}[args.scorer]()
    )
    cfg = config("default")
    rows, seconds, cpu = [], [], []
    for repo in repos[: args.repos or None]:
        store, index_id, _ = open_index(repo.name, repo.root, "static", False)
        for q in repo.queries[: args.per_repo or None]:
            hits = hybrid_search(
                store, index_id, q.text, embedder.embed(q.text), VectorSearchOptions(top_k=10), cfg,
                file_vector=static_embedder().embed_query(q.text),
            )[: args.depth]  # fmt: skip
            t0, c0 = time.perf_counter(), time.process_time()
            texts = [h.chunk.content for h in hits]
            if args.scorer == "minilm":
                model = scorer.scores(q.text, texts)
            elif args.scorer == "ql":
                model = scorer.scores(q.text, texts, [h.chunk.file_path for h in hits])
            else:
                model = scorer.scores(q.text, hits)
            seconds.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            rows.append({
                "repo": repo.name, "question": q.text, "targets": list(q.targets),
                "paths": [repo.prefix + h.chunk.file_path for h in hits], "base": [h.score for h in hits],
                "model": model,
            })  # fmt: skip
            # (saved after each question: a slow scorer's run stopped early still counts what it did)
            Path(args.out).write_text(json.dumps({"scorer": args.scorer, "depth": args.depth, "rows": rows}))
        store.close()
        print(
            f"{repo.name}: {len(rows)} questions, {statistics.median(seconds) * 1000:.0f} ms median, "
            f"{statistics.median(cpu):.2f} CPU-s median",
            flush=True,
        )
    s, c = sorted(seconds), sorted(cpu)
    print(f"cost per question ({len(s)}): p50 {s[len(s) // 2] * 1000:.0f} ms, p90 {s[int(len(s) * 0.9)] * 1000:.0f} ms")
    print(
        f"CPU time per question (every thread of the process): p50 {c[len(c) // 2]:.2f} s, p90 {c[int(len(c) * 0.9)]:.2f} s"
    )
    if args.scorer == "llm":
        print(f"questions kept in their order after a bad answer: {scorer.notes}")


def _scaled(values: list[float]) -> list[float]:
    lo, hi = min(values), max(values)
    return [(v - lo) / (hi - lo) if hi > lo else 0.0 for v in values]


#: --by-score: the ranking's side of the blend is its fused scores, not its order.
BY_SCORE = False


def reranked(row: dict, weight: float, depth: int) -> list[str]:  # type: ignore[type-arg]
    """The paths in the blended order of the first ``depth`` candidates, the rest as they were."""
    n = min(depth, len(row["paths"]))
    # The ranking's side is its order (its scores are not: file evidence, diversity and the file vectors
    # reorder hits without rescoring them), so weight 0 is the ranking exactly.
    base = _scaled(row["base"][:n] if BY_SCORE else [float(n - i) for i in range(n)])
    model = _scaled(row["model"][:n])
    order = sorted(range(n), key=lambda i: (-((1 - weight) * base[i] + weight * model[i]), i))
    return [row["paths"][i] for i in order] + row["paths"][n:]


def fold_mean(rows: list, existing: dict, fold: set[str], depth: int, weight: float) -> float:  # type: ignore[type-arg]
    """Mean NDCG@10 over the repositories of ``fold`` (each the mean of its questions)."""
    per_repo: dict[str, list[float]] = {}
    for r in rows:
        if r["repo"] in fold:
            s = ndcg_at_10(reranked(r, weight, depth)[:10], r["targets"], existing[r["repo"]])
            per_repo.setdefault(r["repo"], []).append(s)
    return statistics.mean(statistics.mean(v) for v in per_repo.values())


def blend(args: argparse.Namespace) -> None:
    existing = {r.name: files_on_disk(r) for r in load_repos(None)}
    for file in args.files:
        data = json.loads(Path(file).read_text())
        rows = data["rows"]
        names = list(dict.fromkeys(r["repo"] for r in rows))
        half = len(names) // 2
        folds = {"A": set(names[:half]), "B": set(names[half:]), "all": set(names)}
        grid = [(d, w) for d in DEPTHS if d <= data["depth"] for w in WEIGHTS]
        print(f"{file} ({data['scorer']}, {len(rows)} questions, {len(names)} repositories)")
        print(f"  base (weight 0) {fold_mean(rows, existing, folds['all'], 10, 0.0):.4f}")
        for d, w in grid:
            if w:
                print(f"  depth {d:2d} weight {w:.1f}: all {fold_mean(rows, existing, folds['all'], d, w):.4f}")
        for tune, test in (("A", "B"), ("B", "A")):
            d, w = max(grid, key=lambda dw: fold_mean(rows, existing, folds[tune], *dw))
            print(
                f"  OOF tuned on {tune}: depth {d} weight {w} -> {test} {fold_mean(rows, existing, folds[test], d, w):.4f} "
                f"(base {fold_mean(rows, existing, folds[test], 10, 0.0):.4f})"
            )
        if args.weight is not None:  # (a weight chosen elsewhere, e.g. on the dev split, scored here)
            d, w = args.depth, args.weight
            print(f"  given depth {d} weight {w}: {fold_mean(rows, existing, folds['all'], d, w):.4f}")
            for name in names:
                base, given = (fold_mean(rows, existing, {name}, dd, ww) for dd, ww in ((10, 0.0), (d, w)))
                print(f"    {name:24s} base {base:.4f}  given {given:.4f}  ({given - base:+.4f})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    s = sub.add_parser("score")
    s.add_argument("scorer", choices=("minilm", "ql", "llm"))
    s.add_argument("--out", required=True)
    s.add_argument("--per-repo", type=int, default=0, help="the first N questions of each repository (0: all)")
    s.add_argument("--depth", type=int, default=30)
    s.add_argument("--repos", type=int, default=0, help="the first N repositories (0: all)")
    s.add_argument("--timeout", type=float, default=120.0, help="llm: seconds before the search's order is kept")
    b = sub.add_parser("blend")
    b.add_argument("files", nargs="+")
    b.add_argument("--weight", type=float, help="also score this weight (chosen on another set)")
    b.add_argument("--depth", type=int, default=20)
    b.add_argument("--by-score", action="store_true", help="blend with the ranking's scores, not its order")
    args = ap.parse_args()
    global BY_SCORE
    BY_SCORE = getattr(args, "by_score", False)
    score(args) if args.command == "score" else blend(args)


if __name__ == "__main__":
    main()
