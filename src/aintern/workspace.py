"""A workspace and its index: the Python API the CLI (and later the web UI and MCP server) stand on."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from aintern.chunk.models import CHUNKER_VERSION
from aintern.config import Settings
from aintern.embed import DEFAULT_MODEL, RETIRED_MODELS, Embedder, embedder_for_model_id, get_embedder
from aintern.errors import AinternError, NoDatabaseError, NotAFolderError, NotIndexedError, SettingsError, StoreError
from aintern.locate import check_not_inside_index as check_not_inside_index
from aintern.locate import existing_path as existing_path
from aintern.locate import find_workspace as find_workspace
from aintern.locate import holding_index, indexes_inside, indexes_under
from aintern.locate import read_indexed_file as read_indexed_file
from aintern.locate import resolve_workspaces as resolve_workspaces
from aintern.states import STATES as STATES
from aintern.states import IndexStatus as IndexStatus
from aintern.states import WorkspaceSummary as WorkspaceSummary
from aintern.states import list_workspaces as list_workspaces
from aintern.states import reindex_reason
from aintern.states import summarize as summarize
from aintern.states import tier_dict as tier_dict
from aintern.store import SqliteStore, VectorIndex, default_db_path
from aintern.store.db import check_pages, driver
from aintern.workspace_fill import Filling

# The indexing pipeline (tree-sitter, the scanner) and the LLM stack are imported by the methods that use
# them: a command that only searches never loads them (issue: the CLI answers in under 200 ms); the query
# path likewise, for a command that only indexes (`aintern index`: ~40 ms of its start-up, issue 49).
if TYPE_CHECKING:
    from aintern.answer import LLM, RagChatService
    from aintern.chunk.models import ChunkingOptions
    from aintern.index import IndexingProgress, IndexingResult, ProgressCallback
    from aintern.knowledge import KnowledgeService
    from aintern.retrieve.rerank import ListwiseReranking, Ranked, RerankChoice
    from aintern.scan import ScanOptions


class _LLMRerankers:
    """answer.rerank's, loaded by the first search that asks for ``--rerank llm`` (one that does not loads
    no LLM code: the CLI answers a search in a tenth of a second)."""

    def __init__(self) -> None:
        self._made: ListwiseReranking | None = None

    def rerank(
        self, workspace: str, results: list[Ranked], query: str, choice: RerankChoice
    ) -> tuple[list[Ranked], bool, list[str]]:
        if self._made is None:
            from aintern.answer.rerank import LLMRerankers

            self._made = LLMRerankers()
        return self._made.rerank(workspace, results, query, choice)


def knowledge_service(store: SqliteStore, in_memory: bool = True) -> KnowledgeService:
    """The knowledge service of a workspace, a server or an agent's session: with the workspace's LLM to rank by."""
    from aintern.knowledge import KnowledgeService

    return KnowledgeService(store, in_memory=in_memory, llm_rerankers=_LLMRerankers())


class Workspace(Filling):
    """One workspace directory, its settings and its index in the application database."""

    def __init__(
        self,
        root: str | Path,
        db: str | Path | None = None,
        model: str | None = None,
        readonly: bool = False,
        opened: SqliteStore | None = None,
    ) -> None:
        """``readonly``: only read the database (never create or write it), for commands that only look.
        ``opened``: a read-only store already open (``discover``'s), taken when it is of this database."""
        self.root = Path(root).resolve()
        self.settings = Settings.load(self.root)
        self._db = db or self.settings.db
        self._store: SqliteStore | None = None
        if opened is not None and readonly and opened.path == Path(self._db or default_db_path()):
            self._store = opened  # (a search opens its database once, not twice)
        else:
            if opened is not None:
                opened.close()
            try:
                self._store = SqliteStore(self._db, readonly=readonly, create=False)
            except NoDatabaseError:
                if readonly:
                    raise  # (no database yet: made by the first write, see ``store``)
        self._model_name = model or self.settings.model
        self._embedder: Embedder | None = None
        self._tier_embedder: Embedder | None = None
        self._knowledge: KnowledgeService | None = None
        #: Hold the index in memory for many queries (KnowledgeService); one-shot commands turn it off.
        self.in_memory = True
        #: Things the user should be told (e.g. a credential withheld from an untrusted endpoint).
        self.notices: list[str] = []

    @classmethod
    def discover(
        cls, start: str | Path = ".", db: str | Path | None = None, model: str | None = None, readonly: bool = False
    ) -> Workspace:
        """The workspace containing ``start``; NotIndexedError if there is none."""
        path = Path(db or Settings.load(Path(start)).db or default_db_path())
        try:
            probe: SqliteStore | None = SqliteStore(path, readonly=True)
        except NoDatabaseError:
            probe = None  # no database yet: only a .aintern.toml can mark a workspace
        try:
            root = find_workspace(start, probe)
        except BaseException:
            if probe is not None:
                probe.close()
            raise
        if root is None:
            where = f"{Path(start).resolve()} is not indexed yet"
            if probe is None:  # (which database: AINTERN_DB may name another one than the user thinks)
                why = f"{path} is empty" if os.path.exists(path) else f"there is no database at {path}"
                raise NoDatabaseError(f"{where} ({why}); run `aintern index`")
            held = [i.name for i in indexes_under(probe, Path(start).resolve())]
            probe.close()
            if held:  # (a folder of repositories: indexing it would index them all again, as MCP says)
                names = ", ".join(held[:5]) + (f" and {len(held) - 5} more" if len(held) > 5 else "")
                raise NotIndexedError(
                    f"{Path(start).resolve()} is not indexed; it holds indexed repositories ({names}): run the command "
                    "in one of them, or `aintern search --all-repos`"
                )
            raise NotIndexedError(f"{where}; run `aintern index` there first")
        return cls(root, db, model, readonly, opened=probe)

    @property
    def store(self) -> SqliteStore:
        """The application database. Where there is none yet (no file, or an empty one) it is made here, at
        the first use that needs it (indexing): a command that finds nothing to do leaves no database."""
        if self._store is None:
            self._store = SqliteStore(self._db)
        return self._store

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the database (and wait for a model load the service started); ``with Workspace(...)`` does."""
        if self._knowledge is not None:
            self._knowledge.close()
        if self._store is not None:
            self._store.close()

    @property
    def index(self) -> VectorIndex | None:
        return self.store.get_index_for_workspace(self.root) if self._store is not None else None

    def require_index(self) -> VectorIndex:
        index = self.index
        if index is None:
            none = f" (there is no database at {self._db or default_db_path()} yet)" if self._store is None else ""
            above = holding_index(self._store, self.root) if self._store is not None and self.root.is_dir() else None
            raise NotIndexedError.of(self.root, none, above.workspace_path if above else None)
        return index

    @property
    def embedder(self) -> Embedder:
        """The model of the existing index, else the configured one, else the default."""
        if self._embedder is None:
            index = self.index
            if index is not None and self._model_name is None and index.embedding_model in RETIRED_MODELS:
                self._embedder = get_embedder(RETIRED_MODELS[index.embedding_model])
            elif index is not None and self._model_name is None:
                self._embedder = embedder_for_model_id(index.embedding_model)
            else:
                self._embedder = get_embedder(self._model_name or DEFAULT_MODEL)
        return self._embedder

    def scan_options(self) -> ScanOptions:
        return self.settings.scan_options()

    def search_engine(self) -> tuple[str | None, str | None, str | None]:
        """(engine, Milvus URI, token variable) the settings ask new indexes to use. A repository's own
        .aintern.toml may not send its code to a Milvus server, nor pick the variable whose value goes
        there as a token, unless the user trusts it (`aintern trust`); a local Milvus Lite file it may."""
        s = self.settings
        uri = s.milvus_uri
        if s.store == "milvus":
            uri = uri or str(default_db_path().with_name("milvus.db"))
            named = s.from_workspace("milvus_uri") or s.from_workspace("milvus_token_env")
            if "://" in uri and named and not s.trusted:
                raise SettingsError(
                    f"{self.root / '.aintern.toml'} names a Milvus server or the variable holding its token; "
                    f"run `aintern trust` if you want this repository's code indexed at {uri}"
                )
        return s.store, uri if s.store == "milvus" else None, s.milvus_token_env

    def chunking_options(self, force: bool = False) -> ChunkingOptions:
        """The chunk sizes to index with: the settings' for a new index or a forced run, else those the
        index was built with (a later update never silently chunks differently; ``notices`` says so)."""
        from aintern.chunk.models import ChunkingOptions

        wanted = self.settings.chunking()
        index = self.index
        built = {k: index.settings[k] for k in wanted if k in index.settings} if index is not None else {}
        if built and not force and built != wanted:
            self.notices.append(
                f"the index was built with chunk_size {built.get('chunk_size')} and chunk_overlap "
                f"{built.get('chunk_overlap')}; the settings now say {wanted['chunk_size']} and "
                f"{wanted['chunk_overlap']}: updates keep the index's own until `aintern index --force` re-chunks "
                "every file"
            )
            wanted = {**wanted, **{k: int(str(v)) for k, v in built.items()}}
        size, overlap = int(wanted["chunk_size"]), int(wanted["chunk_overlap"])
        return ChunkingOptions(target_chunk_size=size, chunk_overlap=overlap, max_chunk_size=max(1024, size),
                               min_chunk_size=min(50, size))  # fmt: skip

    def _indexing(
        self,
        kind: str,
        progress: ProgressCallback | None,
        wait: float,
        run: Callable[[ProgressCallback], IndexingResult],
    ) -> IndexingResult:
        """Run ``run`` as the workspace's only indexing run (index.runs), recording its progress for other
        processes, and its failure (or success, with the chunk sizes used) on the index."""
        from aintern.index.runs import RunRecorder

        with RunRecorder(self.store, self.root, kind, wait) as recorder:
            before = self.index  # (a first run replaces nothing: its keyword table has no deleted rows to drop)
            had_files = before is not None and before.file_count > 0

            def on_progress(p: IndexingProgress) -> None:
                recorder.record(p)
                if progress is not None:
                    progress(p)

            try:
                result = run(on_progress)
            except StoreError:
                raise  # a damaged or unwritable database: nothing more is written to it
            except AinternError as exc:
                self._record_error(str(exc))
                raise
            self._record_error(None if result.success or result.cancelled else result.error_message)
            self._compact(result, had_files)
            return result

    def _compact(self, result: IndexingResult, had_files: bool) -> None:
        """Keep the database from growing run after run: a run that rewrote a quarter of the files of an index
        that had some merges its keyword table, and many free pages go back to the file system (store.compact).
        A failure (the database busy past its timeout) leaves the file as large as it was; the run stands. A run
        that indexed and removed nothing writes nothing here either (a no-op `update` leaves the file as it was)."""
        rewrote = result.files_indexed + result.files_removed
        if not rewrote:
            return
        merge = result.index_id if had_files and rewrote * 4 >= rewrote + result.files_unchanged else None
        with contextlib.suppress(StoreError, driver().Error):
            self.store.compact(merge)

    def _record_error(self, error: str | None) -> None:
        """Keep the last run's failure on the index (written only when it changes: a no-op run writes nothing)."""
        index = self.index
        if index is not None and index.last_error != error:
            self.store.set_index_error(index.id, error)

    def build_index(
        self,
        force: bool = False,
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
        include_secrets: bool | None = None,
        wait: float = 0.0,
        on_file: Callable[[str, int], None] | None = None,
        file_vectors_later: bool = False,
        tier: str | None = None,
    ) -> IndexingResult:
        """Index the workspace, incrementally unless ``force``. A forced run may change the model.
        Another run on the workspace is IndexingBusyError (after ``wait`` seconds of waiting for it).
        The file vectors are computed once the rest is committed (searchable), or with
        ``file_vectors_later`` left to ``fill_file_vectors``. ``tier``: what ``settle_tier`` is asked next."""
        from aintern.index import Indexer, IndexingOptions

        # What refuses the run is asked before the database is made: a refused first run leaves no database
        # behind (one that was there is left as it was).
        self.check_folder()
        new = self.index is None
        self.check_models(tier)
        engine, milvus_uri, token_env = self.search_engine()
        if engine == "milvus":
            from aintern.store.milvus import client_class

            client_class()  # (not installed: said before the index there is goes)
        if new and self._store is not None:  # (no database yet: no index for this folder to be inside)
            check_not_inside_index(self.store, self.root)

        def run(on_progress: ProgressCallback) -> IndexingResult:
            index = self.index
            replaced = index is not None and index.embedding_model in RETIRED_MODELS
            moved = engine is not None and index is not None and engine != self.store.engine_of(index.id)
            had_tier = False
            if index is not None and (
                ((force or replaced) and index.embedding_model != self.embedder.model_id) or (force and moved)
            ):
                # A model change means every vector is recomputed anyway; so does a move to another engine.
                had_tier = self.store.vector_tier(index.id) is not None
                self.store.delete_index(index.id)
            # An index an older chunker built is re-chunked whole (its chunk sizes stay the index's own); one
            # without files (a first run killed before its first) has nothing to re-chunk.
            index = self.index
            rechunk = index is not None and index.file_count > 0 and index.settings.get("chunker", 1) != CHUNKER_VERSION
            if rechunk and not force:
                self.notices.append(
                    "this index was chunked by an older aintern: every file is chunked again (the vectors of "
                    "unchanged text come from the cache)"
                )
            remember = force or rechunk or self.index is None or "chunk_size" not in self.index.settings
            chunking = self.chunking_options(force)
            scan = self.scan_options()
            if include_secrets is not None:
                scan.include_secrets = include_secrets
            built: dict[str, object] = {
                "chunk_size": chunking.target_chunk_size, "chunk_overlap": chunking.chunk_overlap, "chunker": CHUNKER_VERSION
            }  # fmt: skip
            options = IndexingOptions(
                chunking=chunking, scan=scan, force_reindex=force or rechunk, engine=engine, milvus_uri=milvus_uri,
                milvus_token_env=token_env, milvus_index=self.settings.milvus_index or "flat",
                file_vectors=self.settings.file_vectors, file_vectors_later=file_vectors_later,
                index_settings=built if remember else None,  # (recorded before the file vectors)
            )  # fmt: skip
            indexer = Indexer(self.store, self.embedder, options)
            indexer.on_file = on_file
            result = indexer.index(self.root, on_progress, cancel)
            if result.success and had_tier and self.embedder.model_id != self.tier_embedder.model_id:
                self.set_tier("full")  # the rebuilt index keeps its full tier (settle_tier then fills it)
            return result

        result = self._indexing("reindex" if force else "index", progress, wait, run)
        if new and result.success and self.index is not None:  # (an index made before, of a folder inside this one)
            self.notices += indexes_inside(self.store, self.root, self.index.id)
        return result

    def check_folder(self) -> None:
        """Refuse to index a folder that is not there, or is a file (NotAFolderError), before a run is recorded:
        a scan of it would find no file and record an empty index (or remove every file from one)."""
        if not self.root.is_dir():
            raise NotAFolderError.of(self.root)

    def check_models(self, tier: str | None = None) -> None:
        """Refuse a run whose model, or full tier's model (``tier`` asked, else the index's or the settings'),
        cannot load (ModelNotInstalledError: what to install) before it writes or removes anything."""
        self.embedder  # noqa: B018 (made here: a model whose package is missing says so)
        if tier == "full" or (tier is None and (self.tier is not None or self.settings.tier == "full")):
            self.tier_embedder  # noqa: B018
        if tier == "full" and self.embedder.model_id == self.tier_embedder.model_id:  # (before the run, not after)
            raise AinternError(
                f"{self.embedder.model_id} is the full tier's own model: an index built with it has no full tier to "
                "add; index with the static model (the default) for a full tier, or leave the full tier out"
            )

    def index_files(
        self,
        paths: Iterable[str],
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
        wait: float = 0.0,
        on_file: Callable[[str, int], None] | None = None,
    ) -> IndexingResult:
        """Re-index just these workspace-relative paths (changed, added or deleted): what the watcher calls.
        With a full tier, the tier's vectors of these files are computed too (a few chunks: a fraction of
        a second), so a complete tier stays complete."""
        from aintern.index import Indexer, IndexingOptions

        self.check_folder()
        index = self.index
        if index is not None and (
            index.embedding_model in RETIRED_MODELS or index.settings.get("chunker", 1) != CHUNKER_VERSION
        ):
            return self.build_index(progress=progress, cancel=cancel, wait=wait, on_file=on_file)  # all recomputed
        paths = list(paths)

        def run(on_progress: ProgressCallback) -> IndexingResult:
            options = IndexingOptions(
                chunking=self.chunking_options(), scan=self.scan_options(), file_vectors=self.settings.file_vectors
            )
            indexer = Indexer(self.store, self.embedder, options)
            indexer.on_file = on_file
            result = indexer.index_files(self.root, paths, on_progress, cancel)
            if result.success and self.tier is not None:
                self.fill_tier(cancel=cancel, paths=paths)
            return result

        return self._indexing("files", progress, wait, run)

    @property
    def knowledge(self) -> KnowledgeService:
        """Queries, context and file discovery over this database (see aintern.knowledge). Asking makes no
        database: with none yet, nothing is indexed (NotIndexedError, saying where it was looked for)."""
        if self._knowledge is None:
            if self._store is None:
                self.require_index()
            self._knowledge = knowledge_service(self.store, in_memory=self.in_memory)
        return self._knowledge

    def llm(
        self, model: str | None = None, endpoint: str | None = None, context_window: int | None = None
    ) -> LLM | None:
        """The LLM to answer with: arguments, else the environment, else the settings; None if none is set
        (aintern.answer.llm.configured; ``notices`` says what the user should know)."""
        from aintern.answer.llm.configured import configured_llm

        return configured_llm(self.settings, self.root, self.notices, model, endpoint, context_window)

    def chat(self, llm: LLM | None) -> RagChatService:
        """RAG chat over this workspace's index; conversations live in the same database."""
        from aintern.answer import ConversationStore, RagChatService

        store = self.store  # (made here if there is none: the conversation is kept in it)
        return RagChatService(self.knowledge, llm, ConversationStore(store))

    def status(self, on_check: Callable[[int], None] | None = None) -> IndexStatus:
        """The index's state, after a check of the whole database for damage (CorruptDatabaseError): one the
        size of which skipped the check at open is read now, unless it passed as it is (``on_check`` gets its
        size first: a second or more a GB)."""
        index = self.require_index()
        check_pages(self.store.path, on_check)
        from aintern.index.git import head_commit
        from aintern.index.status import staleness

        stale = staleness(self.store, index.id, self.root, self.scan_options())
        return IndexStatus(
            index, self.store.statistics(index.id), stale.changed, stale.new, stale.deleted, head_commit(self.root),
            stale.unreadable,
        )  # fmt: skip

    def status_dict(self, st: IndexStatus | None = None) -> dict[str, object]:
        """The index's state as ``aintern status --json`` prints it (and the MCP ``status`` tool returns it)."""
        from aintern.index.runs import active_run

        st = st or self.status()
        s = st.statistics
        run = active_run(self.store, self.root)
        milvus = self.store.milvus(st.index.id)
        where = {**milvus.config.as_settings(), "lite": milvus.config.lite} if milvus is not None else None
        return {
            "workspace": str(self.root), "database": str(self.store.path), "files": s.file_count, "chunks": s.chunk_count,
            "source_bytes": s.total_bytes, "index_bytes": s.index_size_bytes, "model": s.embedding_model,
            "dimension": s.embedding_dimension, "last_updated": st.index.updated_at, "by_language": s.by_language,
            "by_chunk_type": s.by_chunk_type, "stale_files": st.stale_files, "changed": st.changed_files,
            "new": st.new_files, "deleted": st.deleted_files, "unreadable": st.unreadable_files, "git_commit_indexed": s.git_commit,
            "git_commit_current": st.current_commit, "behind_git": st.behind_git, "tier": tier_dict(self.tier),
            "name": st.index.name, "last_error": st.index.last_error, "run": run.to_dict() if run else None,
            "file_vectors": self.file_vector_state(run),
            "engine": "milvus" if milvus is not None else "sqlite", "milvus": where,
            "reindex_reason": None if run else reindex_reason(st.index, self.settings, st.stale_files),
            "interrupted": st.index.interrupted,
        }  # fmt: skip

    @classmethod
    def recorded(cls, spec: str | Path, db: str | Path | None = None) -> Workspace | None:
        """The workspace of the index recorded for ``spec`` (a folder deleted since, or now a file) or named
        ``spec`` (the one index of that name); None if there is none. What `aintern list` shows, clear reaches."""
        ws = cls(spec, db)
        named = [i for i in ws.store.list_indexes() if i.name == str(spec)] if ws._store and not ws.index else []
        if len(named) == 1:
            ws.close()
            ws = cls(named[0].workspace_path, db)
        if ws.index is None:
            ws.close()
            return None
        return ws

    def clear(self) -> bool:
        index = self.index
        if index is None:
            return False
        self.store.delete_index(index.id)
        return True
