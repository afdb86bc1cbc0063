"""The answer stage: speed of the embedded GGUF model, and how often answers cite a gold file.

    python bench/llm.py speed [--model gemma3-270m] [--threads 1]
    python bench/llm.py grounding [--repos requests,flask,click,libuv] [--limit 10] [--min-relevance 0.5]
    python bench/llm.py context [--repos ...] [--limit 0]      # the context an LLM gets, by relevance threshold

``grounding`` asks the semble dev questions (../shared/bench/semble; corpora as its README says) of
the extractive answer (no LLM) and of the embedded model with RAG, and counts an answer as grounded
when it names a file that is a target of the question. Indexes come from bench/eval_retrieval.py's
cache (/tmp/aintern-bench).
"""

from __future__ import annotations

import argparse
import statistics
import time

from eval_retrieval import open_index
from semble_data import load_repos

from aintern.answer import ConversationStore, InferenceOptions, RagChatOptions, RagChatService, get_llm
from aintern.answer.llm import ChatMessage, Role
from aintern.knowledge import KnowledgeService

CODE = '''def connect(url, timeout=5):
    """Open a connection to the database at url."""
    engine = create_engine(url, pool_size=5, pool_timeout=timeout)
    return engine.connect()
'''


def speed(args: argparse.Namespace) -> None:
    t0 = time.perf_counter()
    if args.threads:
        from aintern.answer.llm.llamacpp import PACKAGED_MODELS, LlamaCppLLM, packaged_model_path

        path = packaged_model_path(args.model) if args.model in PACKAGED_MODELS else args.model
        llm = LlamaCppLLM(path, threads=args.threads)
    else:
        llm = get_llm(model=args.model)
    assert llm is not None
    print(f"{llm.model_id}: loaded in {time.perf_counter() - t0:.2f} s, window {llm.context_window}")
    print("| prompt tokens | time to first token | answer tokens/s |\n|---:|---:|---:|")
    for copies in (1, 10, 40):
        firsts, rates = [], []
        for run in range(args.runs):
            # A different first line each run: llama.cpp would otherwise reuse the cached prompt.
            prompt = [ChatMessage(Role.SYSTEM, f"Run {run}. Answer questions about this code.\n\n" + CODE * copies),
                      ChatMessage(Role.USER, "Where is the database connection opened?")]  # fmt: skip
            n_prompt = sum(llm.count_tokens(m.content) for m in prompt)
            started = time.perf_counter()
            first, pieces = None, 0
            for _piece in llm.stream(prompt, InferenceOptions(temperature=0.0, max_tokens=128, stop=("\n\n\n",))):
                first = first or time.perf_counter()
                pieces += 1
            end = time.perf_counter()
            if first is not None:
                firsts.append(first - started)
                if pieces > 1:
                    rates.append((pieces - 1) / (end - first))
        print(f"| {n_prompt} | {statistics.median(firsts):.2f} s | {statistics.median(rates):.0f} |")


def cites(text: str, targets: list[str], prefix: str) -> bool:
    """Does the answer name a target file (by its path as indexed, or as in the repository)?"""
    for t in targets:
        indexed = t[len(prefix) :] if prefix and t.startswith(prefix) else t
        if indexed in text or t in text:
            return True
    return False


def grounding(args: argparse.Namespace) -> None:
    llm = get_llm(model=args.model)
    rows = []
    totals = {"extractive": [0, 0], "llm": [0, 0], "llm_any": [0, 0], "context": [0, 0]}
    latency = []
    for repo in load_repos(args.repos.split(",") if args.repos else None):
        if not repo.root.is_dir():
            print(f"skipping {repo.name}: no corpus at {repo.root}")
            continue
        store, _, _ = open_index(repo.name, repo.root, "static", False)
        knowledge = KnowledgeService(store)
        options = RagChatOptions(
            workspace_path=str(repo.root.resolve()), min_relevance=args.min_relevance, max_rag_tokens=args.max_rag_tokens,
            inference=InferenceOptions(temperature=0.0, max_tokens=args.max_tokens, seed=0),
        )  # fmt: skip
        extractive = RagChatService(knowledge, None, ConversationStore(store))
        generative = RagChatService(knowledge, llm, ConversationStore(store))
        counts = {k: 0 for k in totals}
        queries = repo.queries[: args.limit] if args.limit else repo.queries
        for q in queries:
            e = extractive.generate_with_rag(None, q.text, options)
            counts["extractive"] += cites(e.read(), q.targets, repo.prefix)
            started = time.perf_counter()
            g = generative.generate_with_rag(None, q.text, options)
            text = g.read()
            latency.append(time.perf_counter() - started)
            counts["llm"] += cites(text, q.targets, repo.prefix)
            counts["llm_any"] += any(s.path in text for s in g.sources)
            counts["context"] += any(cites(str(s), q.targets, repo.prefix) for s in g.sources)
        n = len(queries)
        for k in totals:
            totals[k][0] += counts[k]
            totals[k][1] += n
        rows.append((repo.name, n, counts))
        print(f"{repo.name:10} n={n:3} " + " ".join(f"{k}={v / n:.2f}" for k, v in counts.items()), flush=True)
        store.close()
    print(f"\nmin_relevance {args.min_relevance}, context budget {args.max_rag_tokens} tokens, "
          f"answers of at most {args.max_tokens} tokens, {llm.model_id if llm else '-'}")  # fmt: skip
    print(
        "| repo | questions | extractive cites a gold file | LLM answer cites a gold file | LLM cites any source | gold file in the LLM's context |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for name, n, c in rows:
        print(
            f"| {name} | {n} | {c['extractive'] / n:.2f} | {c['llm'] / n:.2f} | {c['llm_any'] / n:.2f} | {c['context'] / n:.2f} |"
        )
    n = totals["llm"][1]
    print(
        f"| all | {n} | "
        + " | ".join(f"{totals[k][0] / n:.2f}" for k in ("extractive", "llm", "llm_any", "context"))
        + " |"
    )
    if latency:
        print(f"\nLLM answer time per question: median {statistics.median(latency):.1f} s")


def context(args: argparse.Namespace) -> None:
    """How often the gold file is in the context, and how large the context is, by min_relevance."""
    from aintern.answer.rag import RagContextPreview
    from aintern.assemble.context import ContextBuildOptions

    thresholds = (0.0, 0.2, 0.3, 0.4, 0.5)
    hits = dict.fromkeys(thresholds, 0)
    tokens: dict[float, list[int]] = {t: [] for t in thresholds}
    n = 0
    for repo in load_repos(args.repos.split(",") if args.repos else None):
        if not repo.root.is_dir():
            continue
        store, _, _ = open_index(repo.name, repo.root, "static", False)
        rag = RagChatService(KnowledgeService(store), None, ConversationStore(store))
        for q in repo.queries[: args.limit] if args.limit else repo.queries:
            n += 1
            found: RagContextPreview = rag._retrieve(q.text, RagChatOptions(workspace_path=str(repo.root.resolve())))
            for t in thresholds:
                built = rag.knowledge.build_context_from_chunks(
                    [c for c in found.chunks if c.relevance >= t], ContextBuildOptions(max_tokens=args.max_rag_tokens)
                )
                hits[t] += any(cites(c.file_path, q.targets, repo.prefix) for c in built.chunks)
                tokens[t].append(built.estimated_tokens)
        store.close()
    print(f"{n} questions, context budget {args.max_rag_tokens} tokens (chars/4 estimate)")
    print("| min_relevance | gold file in the context | context tokens, median | questions with no context |")
    print("|---:|---:|---:|---:|")
    for t in thresholds:
        empty = sum(1 for x in tokens[t] if x == 0)
        print(f"| {t} | {hits[t] / n:.2f} | {statistics.median(tokens[t]):.0f} | {empty / n:.2f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["speed", "grounding", "context"])
    ap.add_argument("--model", default="gemma3-270m", help="GGUF path or gemma3-270m")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="llama.cpp threads (default: every core)")
    ap.add_argument("--repos", default="requests,flask,click,libuv")
    ap.add_argument("--limit", type=int, default=10, help="questions per repository (0: all)")
    ap.add_argument("--min-relevance", type=float, default=0.5)
    ap.add_argument("--max-rag-tokens", type=int, default=2000)
    ap.add_argument("--max-tokens", type=int, default=128)
    args = ap.parse_args()
    {"speed": speed, "grounding": grounding, "context": context}[args.what](args)


if __name__ == "__main__":
    main()
