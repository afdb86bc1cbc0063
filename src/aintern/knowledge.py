"""The knowledge service (seed IKnowledgeService): questions in, ranked chunks, files and context out."""

from __future__ import annotations

import contextlib
import math
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, cast

from aintern import search_checks
from aintern.assemble.context import ContextBuildOptions, ContextBuildResult, KnowledgeChunk, assemble
from aintern.assemble.expand import FileContextExpander
from aintern.assemble.files import MATCH_DEPTH, RelevantFiles, ranking_short, relevant_files
from aintern.assemble.hits import marked_stale, merged_hits, shown_hits
from aintern.config import FILES_MARK_RELEVANCE, Settings
from aintern.embed import Embedder, embedder_for_model_id
from aintern.embed.base import MODEL_IDS
from aintern.errors import AinternError, NotIndexedError
from aintern.health import KnowledgeIndexHealth
from aintern.knowledge_models import KnowledgeQueryOptions as KnowledgeQueryOptions
from aintern.knowledge_models import KnowledgeQueryResult as KnowledgeQueryResult
from aintern.knowledge_models import ModelState as ModelState
from aintern.knowledge_models import scope_options as scope_options
from aintern.retrieve import rerank
from aintern.retrieve.cache import QueryCache
from aintern.retrieve.config import FULL_TIER, HybridConfig
from aintern.retrieve.hybrid import hybrid_search
from aintern.retrieve.question import Question
from aintern.retrieve.relevance import (
    REPO_LIKELIHOOD,
    calibrated,
    chosen_hits,
    evidence,
    ranked_by_relevance,
    repository_discounts,
    repository_likelihood,
)
from aintern.retrieve.rerank import RerankingStrategy
from aintern.search_notes import about_repository, index_notes
from aintern.store import SqliteStore, Store, VectorIndex, VectorSearchOptions, VectorTier
from aintern.words import clean_user_text

if TYPE_CHECKING:
    from aintern.embed.base import QueryVector

#: Symbol names are short; a longer partial name cannot match one (and would make LIKE too complex).
MAX_SYMBOL_CHARS = 200


class KnowledgeQueryError(AinternError):
    """A query could not be answered (the query embedding failed, the reranker failed...)."""


#: How strongly a repository's weaker evidence (its best hits' evidence plus REPO_LIKELIHOOD times how
#: well its words explain the question) discounts its hits in a query over several, in logits per unit:
#: chosen on each half of the dev repositories and checked on the other (bench/multi_repo.py).
REPO_AFFINITY = 2.0


class KnowledgeService:
    """Answers questions about any workspace indexed in one application database."""

    def __init__(
        self,
        store: Store,
        hybrid: HybridConfig | None = None,
        in_memory: bool = True,
        hybrid_full: HybridConfig | None = None,
        llm_rerankers: rerank.ListwiseReranking | None = None,
    ) -> None:
        """``in_memory``: have the store hold each queried index in memory from its first query on
        (``SqliteStore.keep_in_memory``: store.memory); a process that asks one question is faster without
        (the CLI's one-shot commands). ``llm_rerankers``: the owner's (answer.rerank), for ``--rerank llm``."""
        self.store = store
        self.hybrid = hybrid or HybridConfig()
        #: The fusion of an index whose full tier is complete (its vectors deserve more say).
        self.hybrid_full = hybrid_full or FULL_TIER
        if in_memory:
            store.keep_in_memory()
        #: How much a repository's weaker evidence discounts its hits in a query over several (REPO_AFFINITY).
        self.repo_affinity = REPO_AFFINITY
        self.repo_likelihood = REPO_LIKELIHOOD
        self.cache: QueryCache[KnowledgeQueryResult] = QueryCache(max_size=100, ttl_seconds=300)
        self.llm_rerankers = llm_rerankers or rerank.NoListwiseReranking()
        self._embedders: dict[str, Embedder] = {}
        #: Each embedding model's state, as the last ModelState event said (seed: ModelStateChanged).
        self.model_states: dict[str, ModelState] = {}
        self._model_listeners: list[Callable[[ModelState], None]] = []
        self._model_lock = threading.Lock()
        #: Models whose full load failed once: a query does not try again (it loads what it needs).
        self._load_failed: set[str] = set()
        self._expanders: dict[str, FileContextExpander] = {}
        self._lock = threading.Lock()
        self._loading: list[threading.Thread] = []

    @property
    def in_memory(self) -> bool:
        return self.store.kept_in_memory

    @in_memory.setter
    def in_memory(self, keep: bool) -> None:
        self.store.keep_in_memory(keep)

    # -- helpers --------------------------------------------------------------------------------

    def _index(self, workspace: str) -> VectorIndex | None:
        return self.store.get_index_for_workspace(search_checks.folder(workspace))

    def embedder(self, model_id: str) -> Embedder:
        """The embedder of ``model_id``, loaded on first use: all of it when indexes are kept in memory (as
        ``preload`` would), else what a query needs (a one-shot search)."""
        with self._lock:
            embedder = self._embedders.get(model_id)
        if embedder is None:
            embedder = self.load_model(model_id, full=False)
        if self.store.kept_in_memory and not embedder.is_loaded and model_id not in self._load_failed:
            try:
                self.load_model(model_id)
            except Exception:  # (listeners heard it; a query embeds with what it needs, or says why it cannot)
                self._load_failed.add(model_id)
        return embedder

    def on_model_state(self, listener: Callable[[ModelState], None]) -> None:
        """Call ``listener`` (from the loading thread) whenever a model starts loading, is ready or fails."""
        self._model_listeners.append(listener)

    def load_model(self, model_id: str, full: bool = True) -> Embedder:
        """The embedder of ``model_id``, loaded (``full``: every weight now, not at first use); listeners
        hear ``loading``, then ``ready`` or ``error`` (whose exception is raised)."""
        with self._model_lock:  # one load at a time: a query during a preload waits for it
            embedder = self._embedders.get(model_id)
            if embedder is not None and (embedder.is_loaded or not full):
                return embedder
            self._model_state(ModelState(model_id, "loading"))
            started = time.perf_counter()
            try:
                embedder = embedder or embedder_for_model_id(model_id)
                if full:
                    embedder.load()
                dimension = embedder.dimension if full else None
            except Exception as exc:
                self._model_state(ModelState(model_id, "error", error=str(exc)))
                raise
            with self._lock:
                self._embedders[model_id] = embedder
            self._model_state(ModelState(model_id, "ready", dimension, seconds=time.perf_counter() - started))
            return embedder

    def _model_state(self, state: ModelState) -> None:
        self.model_states[state.model_id] = state
        for listener in list(self._model_listeners):
            try:
                listener(state)
            except Exception:  # a listener's failure is its own
                import logging  # (not imported by a search: logging's import costs a one-shot search 3 ms)

                logging.getLogger(__name__).exception("model state listener failed")

    def _expander(self, root: str) -> FileContextExpander:
        with self._lock:
            if root not in self._expanders:
                redact = not Settings.load(root).include_secrets  # as the index did
                self._expanders[root] = FileContextExpander(root, redact_secrets=redact)
            return self._expanders[root]

    def _tier(self, store: Store, index: VectorIndex) -> VectorTier | None:
        """The index's full tier if it covers every chunk (until then, queries use the fast vectors)."""
        tier = store.vector_tier(index.id)
        return tier if tier is not None and tier.complete and tier.vector_count else None

    def preload(self, workspace_path: str) -> threading.Thread | None:
        """Load a workspace's model, and its index into memory when the store keeps indexes there, in a
        background thread (a chat or a server calls this when it starts, so its first question does not
        wait). None when there is nothing to load."""
        index = self._index(workspace_path)
        if index is None or not self.store.kept_in_memory:
            return None

        def load() -> None:
            tier = self._tier(self.store, index)
            with contextlib.suppress(Exception):  # (listeners heard the error; a query raises it again)
                self.load_model(tier.model_id if tier else index.embedding_model)
            with contextlib.suppress(Exception):  # (a Milvus server down, a damaged file: a query says so)
                self.store.preload(index.id, tier is not None)

        thread = threading.Thread(target=load, name="aintern-preload", daemon=True)
        thread.start()
        with self._lock:
            self._loading = [*(t for t in self._loading if t.is_alive()), thread]
        return thread

    def close(self, timeout: float = 120.0) -> None:
        """Wait for the loads ``preload`` started: a process that exits while one is inside a native library
        (onnxruntime starting) is aborted by it ("terminate called without an active exception")."""
        with self._lock:
            loading, self._loading = self._loading, []
        for thread in loading:
            thread.join(timeout)

    # -- the seed's operations ------------------------------------------------------------------

    def query(self, question: str, options: KnowledgeQueryOptions) -> KnowledgeQueryResult:
        """Ranked chunks for ``question``: hybrid retrieval, optional reranking, relevance threshold, expansion.
        Options out of range are SearchOptionError; a folder with no index is NotIndexedError (both AinternError)."""
        return self._ask(question, search_checks.query_options(options))

    def _ask(self, question: str, options: KnowledgeQueryOptions) -> KnowledgeQueryResult:
        """``query`` with options already checked (or made here: files ask for more than a search may)."""
        # The question is read once, here: everything below takes the Question, never the string.
        q = Question.parse(question if isinstance(question, str) else "")
        if not q.text:
            raise search_checks.SearchOptionError(f"question: {search_checks.EMPTY_QUESTION}")
        if options.workspace_paths:
            return self._query_many(q, options)
        # Every read of one query sees one state of the index, whatever an indexer commits meanwhile (a
        # file re-indexed between the vector and the keyword search would otherwise drop out of one).
        with self.store.snapshot():
            return self._query(q, options)

    def _not_indexed(self, path: str) -> NotIndexedError:
        """What a question about a folder with no index raises ("not indexed" is no "no hits")."""
        store = cast(SqliteStore, self.store)
        named = [i.workspace_path for i in store.list_indexes() if i.name == path]
        if len(named) == 1:  # (a script that names an index as `--repo` does)
            return NotIndexedError(f"{path!r} names an index, not a folder: ask with its folder, {named[0]}")
        from pathlib import Path

        from aintern.locate import holding_index  # (only for the words: which index holds its files)

        above = holding_index(store, Path(path).resolve()) if os.path.isdir(path) else None
        return NotIndexedError.of(path, inside=above.workspace_path if above else None)

    def _file_vector(self, q: Question, model_id: str, vector: QueryVector, cfg: HybridConfig) -> QueryVector | None:
        """The question's vector in the file vectors' space, the static model's: ``vector`` when ``model_id``
        is that model, else the static model's (a `minilm` index, a full tier). None when the config gives
        file vectors no weight, or the model fails to load (the ranking is then as it would be without them)."""
        if not cfg.file_vector_weight:
            return None
        try:
            return vector if model_id == MODEL_IDS["static"] else self.embedder(MODEL_IDS["static"]).embed_query(q.text)
        except Exception:  # (the search stands without them; an index run reports a broken model)
            return None

    def _query(self, q: Question, options: KnowledgeQueryOptions) -> KnowledgeQueryResult:
        started = time.perf_counter()
        index = self._index(options.workspace_path)
        if index is None:
            raise self._not_indexed(options.workspace_path)
        strategy = RerankingStrategy(options.reranking or Settings.load(index.workspace_path).search_rerank)
        key = (q.text, options, strategy, index.id, self.store.generation(index.id), index.interrupted)
        cached = self.cache.get(key)
        if cached is not None:  # (whether a hit's file changed since is the disk's now, not the cached answer's)
            chunks = marked_stale(cached.chunks, index.workspace_path)
            return replace(cached, chunks=chunks, cache_hit=True, query_time=time.perf_counter() - started)
        tier = self._tier(self.store, index)
        embedder = self.embedder(tier.model_id if tier else index.embedding_model)
        try:
            query_vector = embedder.embed_query(q.text)
        except Exception as exc:
            raise KnowledgeQueryError(f"failed to embed the question: {exc}") from exc
        search = VectorSearchOptions(
            top_k=options.max_results, languages=list(options.languages), file_patterns=list(options.file_patterns),
            directories=list(options.directory_filters), symbol_types=[s.value for s in options.symbol_types],
            deduplicate=options.deduplicate_chunks,
        )  # fmt: skip
        cfg = self.hybrid_full if tier else self.hybrid
        hits = hybrid_search(
            self.store, index.id, q, query_vector, search, cfg, top_k=options.max_results * 3, tier=tier is not None,
            file_vector=self._file_vector(q, embedder.model_id, query_vector, cfg),
        )  # fmt: skip
        hit_ids = [h.chunk_id for h in hits]
        cosines = self.store.cosines(index.id, query_vector, hit_ids, tier=tier is not None)
        coverage = self.store.term_coverage(index.id, q.terms, hit_ids)
        model = "full" if tier else "fast"
        ranked = ranked_by_relevance(hits, cosines, coverage, model)
        was_reranked, notes, scored = False, list[str](), dict[int, float]()
        try:  # (the LLM's: an error, a timeout or no LLM for the setting's keeps the order, with a note)
            if strategy is RerankingStrategy.LLM:
                ranked, was_reranked, notes = self.llm_rerankers.rerank(index.workspace_path, ranked, q.text, options)
            elif reranker := rerank.create(strategy, {h.chunk_id: h.keyword_rank for h in hits if h.keyword_rank}):
                ranked, was_reranked = reranker.rerank(ranked, q), True
        except search_checks.SearchOptionError:
            raise  # (RerankNeedsLLM: the caller's to say, naming its own option)
        except AinternError as exc:
            raise KnowledgeQueryError(f"{strategy.value} reranking failed: {exc}") from exc
        if options.boost_exact_matches:
            ranked = rerank.boost_exact_matches(ranked, q.lower)
        if (was_reranked and strategy is not RerankingStrategy.LLM) or options.boost_exact_matches:
            ranked, scored = calibrated(ranked)  # (their order; the relevance shown and thresholded: calibrated)
        above, chosen = chosen_hits(ranked, options.min_relevance, options.max_results, options.deduplicate_chunks)
        every = chosen if not options.min_relevance else chosen_hits(
            ranked, 0.0, options.max_results, options.deduplicate_chunks
        )[1]  # fmt: skip
        files = self.store.file_versions(index.id, list({r.chunk.file_path for r in chosen}))
        expander = self._expander(index.workspace_path) if options.expand_context else None
        chunks = shown_hits(
            chosen, q, files, index.workspace_path, expander, options.context_lines, options.include_snippets
        )
        for k in chunks:
            k.evidence = evidence(cosines.get(k.chunk_id, 0.0), coverage.get(k.chunk_id, 0.0), model)
            k.rerank_score = scored.get(k.chunk_id)
        result = KnowledgeQueryResult(
            chunks=chunks, relevant_files=list(dict.fromkeys(c.file_path for c in chunks)),
            query_time=time.perf_counter() - started, total_chunks_searched=index.chunk_count,
            chunks_above_threshold=len(above), listed_at_any_relevance=len(every), query_embedding=query_vector, was_reranked=was_reranked,
            reranking_applied=strategy, vector_model=embedder.model_id, notes=[*index_notes(self.store, index), *notes],
        )  # fmt: skip
        if not notes:  # (a rerank that timed out is tried again next time)
            self.cache.set(key, result)
        return result

    def _query_many(self, q: Question, options: KnowledgeQueryOptions) -> KnowledgeQueryResult:
        """One ranking over several workspaces. Each index answers as it would alone; a hit's relevance
        is then discounted by how much worse its repository's evidence is than the best repository's: its
        top hits' cosine and term coverage (rank left out) and how well its words explain the question
        (repository_likelihood). Most questions are about one repository, and every index's own top hit
        looks good within it. docs/benchmarks.md has the numbers (chosen out of fold, by repository)."""
        started = time.perf_counter()
        asked: list[VectorIndex] = []
        for path in dict.fromkeys(options.workspace_paths):
            if (one_index := self._index(path)) is None:
                raise self._not_indexed(path)
            asked.append(one_index)
        names = [i.name for i in asked]

        def repo(index: VectorIndex) -> str:  # (a name two indexes share would not tell them apart: the path does)
            return index.name if names.count(index.name) == 1 else index.workspace_path

        answers: list[tuple[VectorIndex, KnowledgeQueryResult, float]] = []
        notes, errors = [], []
        for index in asked:
            try:
                with self.store.snapshot():
                    one = self._query(q, replace(options, workspace_path=index.workspace_path, workspace_paths=()))
            except AinternError as exc:  # one broken index (its engine not installed, say) leaves the others searched
                errors.append(exc)
                notes.append(f"{index.name} was not searched: {exc}")
                continue
            notes += [about_repository(note, repo(index), index.workspace_path) for note in one.notes]
            top = [c.evidence for c in one.chunks[:3] if c.evidence is not None]
            answers.append((index, one, max(top, default=-math.inf)))
        if errors and not answers:
            raise errors[0]
        found = [index for index, _, _ in answers]
        likelihood = repository_likelihood(
            [self.store.doc_frequencies(index.id, q.terms) for index in found], [index.chunk_count for index in found]
        )
        discounts = repository_discounts(
            [a for _, _, a in answers], likelihood, self.repo_affinity, self.repo_likelihood
        )
        chunks = merged_hits(
            [(index.workspace_path, repo(index), one.chunks, discount) for (index, one, _), discount in zip(answers, discounts)],
            options.min_relevance, options.max_results,
        )  # fmt: skip
        models = {(index.name, one.vector_model) for index, one, _ in answers if one.vector_model}
        if len({m for _, m in models}) > 1:
            # Each index is searched with its own model, and relevance is calibrated per model, so their
            # hits rank together; the caller hears which model answered for which repository.
            notes.append(
                "the repositories use different embedding models, each searched with its own (relevance is "
                "calibrated per model): " + ", ".join(f"{n} {m.rsplit('/', 1)[-1]}" for n, m in sorted(models))
            )
        return KnowledgeQueryResult(
            chunks=chunks, relevant_files=list(dict.fromkeys(c.display_path for c in chunks)),
            query_time=time.perf_counter() - started, total_chunks_searched=sum(o.total_chunks_searched for _, o, _ in answers),
            chunks_above_threshold=sum(o.chunks_above_threshold for _, o, _ in answers),
            listed_at_any_relevance=min(options.max_results, sum(o.listed_at_any_relevance for _, o, _ in answers)),
            reranking_applied=next((o.reranking_applied for _, o, _ in answers), RerankingStrategy.NONE),
            was_reranked=any(o.was_reranked for _, o, _ in answers),
            cache_hit=bool(answers) and all(o.cache_hit for _, o, _ in answers), notes=notes,
        )  # fmt: skip

    def build_context(
        self,
        question: str,
        workspace: str | os.PathLike[str] | Sequence[str],
        options: ContextBuildOptions | None = None,
    ) -> ContextBuildResult:
        """The context block for ``question`` from one workspace, or from several searched together."""
        o = search_checks.context_options(options or ContextBuildOptions())
        result = self.query(question, KnowledgeQueryOptions(
            **scope_options(workspace), max_results=o.max_chunks, min_relevance=o.min_relevance,
            expand_context=o.expand_context, context_lines=o.context_lines, file_patterns=o.file_patterns,
            languages=o.languages, reranking=RerankingStrategy(o.reranking),
        ))  # fmt: skip
        # (an incomplete index's notes go beside the block, not into it: the block is the code, within its budget)
        return replace(self.build_context_from_chunks(result.chunks, o), notes=result.notes)

    def build_context_from_chunks(
        self, chunks: list[KnowledgeChunk], options: ContextBuildOptions | None = None
    ) -> ContextBuildResult:
        return assemble(chunks, options)

    def find_relevant_files(
        self,
        query: str,
        workspace: str | os.PathLike[str] | Sequence[str],
        max_files: int = 10,
        min_relevance: float = FILES_MARK_RELEVANCE,
        fill: bool = False,
        filters: KnowledgeQueryOptions | None = None,
    ) -> RelevantFiles:
        """Files ranked by their best chunk (then by how many chunks matched), with the lines that matched.

        ``fill``: if fewer than ``max_files`` reach ``min_relevance``, the next best follow, marked ``below_threshold``
        (a list that does not collapse to two files). ``filters``: a search's options, whose filters apply too.
        """
        scope = {"workspace_path": "", "workspace_paths": (), **scope_options(workspace)}
        max_files = search_checks.result_count(max_files, "max_files")
        min_relevance = search_checks.relevance(min_relevance)
        checked = search_checks.query_options(replace(filters or KnowledgeQueryOptions(), **scope))
        depth = max(MATCH_DEPTH, max_files * 3)  # (deeper than a search may ask: asked unchecked)
        result = self._ask(query, replace(
            checked, max_results=depth, reranking=RerankingStrategy.NONE,
            min_relevance=0.0 if fill else min_relevance, include_snippets=False, expand_context=False,
        ))  # fmt: skip
        files = RelevantFiles(relevant_files(result.chunks, max_files, min_relevance))
        ranked, chunks = len(result.chunks), result.total_chunks_searched
        files.short = ranking_short(len(files), max_files, ranked, depth, chunks) if fill else None
        return files

    def is_indexed(self, workspace: str) -> bool:
        return self._index(workspace) is not None

    def index_health(self, workspace: str) -> KnowledgeIndexHealth:
        index = self._index(workspace)
        if index is None:
            return KnowledgeIndexHealth()
        from aintern.states import summarize  # (the scanner: not loaded by a process that only searches)

        stats = self.store.statistics(index.id)
        now = summarize(cast(SqliteStore, self.store), index, size=False)  # (as status and the Indexes page judge)
        return KnowledgeIndexHealth(
            is_indexed=True, index_id=index.id, index_name=index.name, total_files=stats.file_count,
            total_chunks=stats.chunk_count, last_updated=index.updated_at, created_at=index.created_at,
            stale_files=now.stale_files, needs_reindex=now.reindex_reason is not None, reindex_reason=now.reindex_reason,
            state=now.state, embedding_model=index.embedding_model, embedding_dimension=index.embedding_dimension,
            index_size_bytes=stats.index_size_bytes,
        )  # fmt: skip

    def query_suggestions(self, partial: str, workspace: str, max_suggestions: int = 5) -> list[str]:
        index = self._index(workspace)
        partial = clean_user_text(partial, MAX_SYMBOL_CHARS)
        if index is None or not partial:
            return []
        names = [name for name, _, _ in self.store.search_symbols(index.id, partial, max_suggestions * 3)]
        return list(dict.fromkeys(n for n in names if n))[:max_suggestions]
