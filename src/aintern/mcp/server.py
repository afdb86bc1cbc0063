"""The MCP server for coding agents: search, context, files, related code, symbols and indexing as MCP
tools over the Python API, served over stdio (``aintern mcp``) or streamable HTTP (``aintern serve``
mounts it at ``/mcp``, one process for every agent session).

Fresh by default: the server watches the workspaces it searches and, before answering, waits for the
changes the watcher saw to be indexed, so an agent never gets the old lines of a file it just edited.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import quote

import anyio
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import CallToolResult
from pydantic import Field

from aintern import __version__
from aintern.assemble.context import ContextBuildOptions, ContextFormat
from aintern.assemble.expand import text_lines
from aintern.chunk.models import SymbolType
from aintern.config import AGENT_SEARCH_MIN_RELEVANCE, CONTEXT_MIN_RELEVANCE
from aintern.errors import AinternError
from aintern.jobs import Jobs
from aintern.knowledge import KnowledgeQueryOptions, KnowledgeQueryResult, KnowledgeService, scope_options
from aintern.mcp import args, output, reading
from aintern.mcp.checked import CheckedServer
from aintern.mcp.models import (
    CLEAR_HELP,
    CONTEXT_HELP,
    FILES_HELP,
    INDEX_HELP,
    INSTRUCTIONS,
    RELATED_HELP,
    SEARCH_HELP,
    STATUS_HELP,
    SYMBOLS_HELP,
    ContextResult,
    FileHit,
    FilesResult,
    IndexResult,
    RelatedResult,
    Repos,
    SearchResult,
    StatusResult,
    Symbol,
    SymbolsResult,
)
from aintern.mcp.output import call, scope_of, with_notes
from aintern.mcp.scope import McpConfig, Scope
from aintern.phases import run_progress, run_steps, run_words
from aintern.plural import count
from aintern.retrieve.rerank import RerankingStrategy
from aintern.search_checks import CONTEXT_TOKENS, RELEVANCE, RESULTS, SEARCH_TOKENS, RerankNeedsLLM
from aintern.search_notes import short_by_threshold, threshold_words
from aintern.store import SqliteStore, VectorIndex
from aintern.workspace import knowledge_service

log = logging.getLogger(__name__)

#: The search tool's default threshold (config.py tells the story of every default).
SEARCH_MIN_RELEVANCE = AGENT_SEARCH_MIN_RELEVANCE
#: How long a search waits for the changes the watcher saw to be indexed.
FRESH_WAIT_S = 30.0


class AinternMcp:
    """The MCP server over one application database. ``store``, ``knowledge`` and ``jobs`` are shared
    with the web app when ``aintern serve`` mounts it, so both use one loaded index."""

    def __init__(
        self,
        config: McpConfig | None = None,
        store: SqliteStore | None = None,
        knowledge: KnowledgeService | None = None,
        jobs: Jobs | None = None,
    ) -> None:
        self.config = config or McpConfig()
        self.store = store or SqliteStore(self.config.db)
        self.knowledge = knowledge or knowledge_service(self.store)
        self.jobs = jobs or Jobs(self.config.db)
        self.server = CheckedServer("aintern", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
        self._register()

    @classmethod
    def refusing(cls, config: McpConfig, error: str) -> AinternMcp:
        """A server that cannot open its database (damaged, another application's): it starts, lists its tools,
        and every call answers ``error``, so the agent learns what to do instead of meeting a dead server."""
        self = cls.__new__(cls)
        self.config = config
        self.server = CheckedServer("aintern", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
        self.server.refusal = error
        self._register()
        return self

    # -- workspaces ---------------------------------------------------------------------------------

    @property
    def scope(self) -> Scope:
        return Scope(self.store, self.config)

    def default_indexes(self) -> list[VectorIndex]:
        """What the tools use when no repository is named: the server's workspace (if indexed) and its
        ``--repo`` ones; with ``--all-repos`` and neither indexed, every index."""
        return self.scope.defaults()

    def indexes(self, repos: list[str] | str | None) -> list[VectorIndex]:
        """The served indexes ``repos`` names (default: this project); a tool error for any other. One name may come
        bare (``"all"``): agents read "'all' for every one" and send the word, not a list of it."""
        return self.scope.resolve([repos] if isinstance(repos, str) else repos)

    def start_background(self) -> None:
        """Load the default workspaces' indexes (so the first search does not wait) and watch them
        (re-indexing their changes where auto-index is on), after bringing in what changed while no server
        was running."""
        from aintern.errors import IndexingBusyError

        for index in self.default_indexes():
            root = index.workspace_path
            if not Path(root).is_dir():
                continue
            self.knowledge.preload(root)
            if not self.config.watch:
                continue
            if self._watch(root) and self.jobs.job(root) is None:
                with contextlib.suppress(IndexingBusyError):  # (another process's run brings the changes in)
                    self.jobs.start(root, "index")  # catch up: files changed since the last index

    def _watch(self, root: str | Path) -> bool:
        """Watch ``root`` as its settings say; whether it re-indexes changes (auto-index)."""
        try:
            return self.jobs.watch(root)
        except AinternError as exc:  # a broken .aintern.toml: searches still answer
            log.warning("not watching %s: %s", root, exc)
            return False

    def fresh(self, indexes: list[VectorIndex]) -> None:
        for index in indexes:
            self.jobs.settle(index.workspace_path, FRESH_WAIT_S)

    # -- the tools ------------------------------------------------------------------------------------

    def _register(self) -> None:
        s = self.server
        s.add_tool(self.search, title="Search code", description=SEARCH_HELP)
        s.add_tool(self.context, title="Context block for a question", description=CONTEXT_HELP)
        s.add_tool(self.files, title="Relevant files", description=FILES_HELP)
        s.add_tool(self.find_related, title="Code related to a location", description=RELATED_HELP)
        s.add_tool(self.symbols, title="Find definitions by name", description=SYMBOLS_HELP)
        s.add_tool(self.index, title="Index a repository", description=INDEX_HELP)
        s.add_tool(self.status, title="Index status", description=STATUS_HELP)
        s.add_tool(self.clear, title="Delete an index", description=CLEAR_HELP)
        s.resource(reading.FILE_URI, name="file", mime_type="text/plain",
                   description="An indexed file of a repository, its secrets masked as search masks them (read-only, "
                               f"inside the repository only), {reading.MAX_READ_CHARS:,} characters at most a read: "
                               "`lines=START-END` reads a range, and a longer file's piece ends with a line naming "
                               "the next")(self.read_file)  # fmt: skip
        s.prompt(name="explain", description="Explain the code at a location, citing file:line sources")(self.explain)

    async def search(
        self,
        query: Annotated[str, Field(description="A question in plain words, or a name (function, class, file)")],
        repos: Repos = None,
        k: Annotated[int, args.limited("Most hits to return", RESULTS)] = 10,
        language: Annotated[str | None, Field(description="Only this language, e.g. python (or py, .py)")] = None,
        path: Annotated[str | None, Field(description="Only files matching this glob, e.g. src/**/*.py")] = None,
        symbol_type: Annotated[
            str | None, Field(description="Only definitions of this kind: function, class, method, ...")
        ] = None,
        min_relevance: Annotated[
            float | None, args.limited(f"Lowest relevance (default {SEARCH_MIN_RELEVANCE:g})", RELEVANCE)
        ] = None,
        max_tokens: Annotated[int, args.limited("Budget for the whole answer, in tokens", SEARCH_TOKENS)] = 4000,
        rerank: Annotated[
            Literal["none", "llm"] | None,
            Field(
                description="llm: the first 20 hits ordered by the user's LLM (one request, seconds); "
                "default: the user's `rerank` setting"
            ),
        ] = None,
    ) -> Annotated[CallToolResult, SearchResult]:
        query = args.query(query)
        k = args.count(k)
        max_tokens = args.between(max_tokens, "max_tokens", *SEARCH_TOKENS)
        min_relevance = args.relevance(min_relevance)
        language = args.language(language)
        path = args.glob(path)
        kinds: tuple[SymbolType, ...] = ()
        if symbol_type:
            try:
                kinds = (SymbolType(symbol_type.lower()),)
            except ValueError as exc:
                raise ToolError(f"symbol_type: one of {', '.join(t.value for t in SymbolType)}") from exc
        indexes = self.indexes(repos)
        several = len(indexes) > 1
        options = KnowledgeQueryOptions(
            **scope_options(scope_of(indexes)), max_results=k, min_relevance=SEARCH_MIN_RELEVANCE if min_relevance is None else min_relevance,
            expand_context=False, languages=(language,) if language else (), file_patterns=(path,) if path else (),
            symbol_types=kinds, reranking=RerankingStrategy(rerank) if rerank else None,
        )  # fmt: skip

        def run() -> KnowledgeQueryResult:
            self.fresh(indexes)
            try:
                return self.knowledge.query(query, options)
            except RerankNeedsLLM as exc:  # (the Python API names no option: the tool's is rerank)
                raise ToolError(exc.said_as('rerank "llm"')) from exc

        answer = await call(run)
        hits, text, tokens, left_out = output.hits(answer.chunks, several, max_tokens)

        floor = options.min_relevance
        short = short_by_threshold(len(answer.chunks), k, floor, answer.listed_at_any_relevance)
        notes = self.scope.answered_by(repos, indexes) + answer.notes + left_out
        notes += [threshold_words(len(answer.chunks), "hit", floor, "min_relevance 0 shows more")] if short else []
        found = SearchResult(query=query, repos=[i.name for i in indexes], hits=hits, tokens=tokens,
                             truncated=bool(left_out), notes=notes)  # fmt: skip
        text = with_notes(notes, text)
        return output.result(text, found)

    async def context(
        self,
        query: Annotated[str, Field(description="What the code is needed for")],
        max_tokens: Annotated[int, args.limited("Token budget of the block", CONTEXT_TOKENS)] = 4000,
        format: Annotated[
            Literal["markdown", "xml", "json", "plain"], Field(description="Layout of the block")
        ] = "markdown",
        repos: Repos = None,
    ) -> Annotated[CallToolResult, ContextResult]:
        query = args.query(query)
        max_tokens = args.between(max_tokens, "max_tokens", *CONTEXT_TOKENS)
        indexes = self.indexes(repos)
        options = ContextBuildOptions(
            max_tokens=max_tokens, format=ContextFormat(format), max_chunks=20, min_relevance=CONTEXT_MIN_RELEVANCE
        )

        def run() -> Any:
            self.fresh(indexes)
            return self.knowledge.build_context(query, scope_of(indexes), options)

        built = await call(run)
        notes = self.scope.answered_by(repos, indexes) + built.notes
        made = ContextResult(context=built.context, tokens=built.estimated_tokens, chunks=built.chunks_included,
                             files=built.files_included, truncated=built.was_truncated, notes=notes)  # fmt: skip
        text = built.context or "No code in the index is relevant enough to this question."
        return output.result(with_notes(notes, text), made)

    async def files(
        self,
        query: Annotated[str, Field(description="A question or a name")],
        n: Annotated[int, args.limited("Most files to return", RESULTS)] = 10,
        repos: Repos = None,
    ) -> Annotated[CallToolResult, FilesResult]:
        query = args.query(query)
        n = args.count(n, "n")
        indexes = self.indexes(repos)

        def run() -> Any:
            self.fresh(indexes)
            return self.knowledge.find_relevant_files(query, scope_of(indexes), n, 0.4, fill=True)

        found = await call(run)
        files = [FileHit(repo=f.repo, path=f.file_path, relevance=round(f.relevance, 3), match_count=f.match_count,
                         match_lines=f.match_lines) for f in found]  # fmt: skip
        lines = [f"{f.repo + '/' if f.repo else ''}{f.path}  {f.relevance:.2f}  lines {', '.join(map(str, f.match_lines[:8]))}"
                 for f in files]  # fmt: skip
        notes = self.scope.answered_by(repos, indexes) + ([found.short] if found.short else [])
        text = with_notes(notes, "\n".join(lines) or "No relevant files.")
        return output.result(text, FilesResult(query=query, files=files, notes=notes))

    async def find_related(
        self,
        path: Annotated[str, Field(description="File path, relative to its repository")],
        line: Annotated[int, Field(description="A line in that file (1-based)", json_schema_extra={"minimum": 1})],
        k: Annotated[int, args.limited("Most results", RESULTS)] = 10,
        repo: Annotated[str | None, Field(description="The repository; default: this project")] = None,
    ) -> Annotated[CallToolResult, RelatedResult]:
        from aintern.retrieve.related import find_related
        from aintern.workspace import read_indexed_file

        k = args.count(k)
        if line < 1:
            raise ToolError(f"line: lines count from 1, not {line}")
        rel = args.file_path(path)
        index = self.scope.one(repo, "find_related")

        rel = args.inside(rel, index.workspace_path)

        def run() -> Any:
            self.fresh([index])
            if not self.store.file_hashes(index.id, [rel]):
                raise ToolError(f"{rel[:300]} is not indexed in {index.workspace_path}")
            source = read_indexed_file(self.store, index, rel)
            last = len(text_lines(source))
            if line > last:
                raise ToolError(f"line: {rel} has {count(last, 'line')}, not {line}")
            return find_related(self.store, index, rel, line, k, source)

        notes = self.scope.answered_by(repo, [index])
        return output.related(
            await call(run), RelatedResult(repo=index.name, path=rel, line=line, related=[], notes=notes)
        )

    async def symbols(
        self,
        prefix: Annotated[str, Field(description="The start of a name, e.g. open_conn or UserServ")],
        repos: Repos = None,
        k: Annotated[int, args.limited("Most results", RESULTS)] = 20,
    ) -> Annotated[CallToolResult, SymbolsResult]:
        prefix = args.prefix(prefix)
        k = args.count(k)
        indexes = self.indexes(repos)

        def run() -> list[Symbol]:
            self.fresh(indexes)
            out = []
            for index in indexes:
                out += [
                    Symbol(repo=index.name, name=n, type=t, path=p)
                    for n, t, p in self.store.search_symbols(index.id, prefix, k)
                ]
            return out[:k]

        found = await call(run)
        text = "\n".join(f"{s.name}  {s.type or ''}  {s.repo + '/' if len(indexes) > 1 else ''}{s.path}" for s in found)
        notes = self.scope.answered_by(repos, indexes)
        text = with_notes(notes, text or f"No definitions start with {prefix!r}.")
        return output.result(text, SymbolsResult(prefix=prefix, symbols=found, notes=notes))

    async def index(
        self,
        ctx: Context,
        path: Annotated[str, Field(description="The repository's folder (absolute path)")],
        wait: Annotated[
            bool, Field(description="Wait until done (progress is reported); false: start and return")
        ] = True,
        force: Annotated[bool, Field(description="Re-index every file, not just the changed ones")] = False,
        nested: Annotated[
            bool,
            Field(
                description="Index a folder that holds indexed repositories, their files a second time (refused without it)"
            ),
        ] = False,
    ) -> Annotated[CallToolResult, IndexResult]:
        root = args.folder(path)
        self.scope.check_index(root, nested)
        try:
            job = self.jobs.running(root) or self.jobs.start(root, "reindex" if force else "index")
        except AinternError as exc:
            raise ToolError(str(exc)) from exc
        if self.config.watch:
            self._watch(root)
        last = -1
        while wait and not job.done:
            await anyio.sleep(0.25)
            p = job.progress
            if p is None:
                continue
            # Said when the run has moved on, a step for each phase and each file (phases.run_steps: the MCP spec
            # wants each notification's progress higher than the last), with its phase in words (run_progress):
            # those that count no files (finishing, the file vectors, the full tier) are said once, and may last minutes.
            step, total = run_steps(p.phase.value, *job.files)
            if step > last:
                last = step
                await ctx.report_progress(step, total, run_progress(job, p.current_file))
        if wait and (ended := run_steps(job.phase, *job.files))[0] > last:  # (its end: complete, all steps done)
            await ctx.report_progress(*ended, run_progress(job, None))
        r = job.result
        done = IndexResult(
            workspace=str(root), run_id=job.id, phase=job.phase, done=job.done, error=job.error,
            files_indexed=r.files_indexed if r else None, files_unchanged=r.files_unchanged if r else None,
            files_removed=r.files_removed if r else None, chunks=r.chunks_created if r else None,
            seconds=round(job.elapsed, 2) if r else None,
        )  # fmt: skip
        error = job.error or (r.error_message if r is not None and not r.success and not r.cancelled else None)
        if error:
            raise ToolError(f"indexing {root} failed: {error}")
        text = (f"{root}: {job.phase}, {count(r.files_indexed, 'file')} indexed, {r.files_unchanged} unchanged, "
                f"{count(r.chunks_created, 'chunk')} in {job.elapsed:.1f} s" if r
                else f"{root}: {run_words(job)} (running; `status` shows its progress)")  # fmt: skip
        return output.result(text, done)

    async def status(
        self,
        path: Annotated[
            str | None, Field(description="A repository (folder, name or git remote); default: this project")
        ] = None,
    ) -> Annotated[CallToolResult, StatusResult]:
        from aintern.workspace import Workspace

        workspace = self.config.workspace
        if not (path or "").strip() and workspace is not None and not self.scope.own():
            return self._not_indexed(workspace)
        index = self.scope.one(path, "status")

        def run() -> dict[str, Any]:
            ws = Workspace(index.workspace_path, self.config.db or self.store.path, readonly=True)
            try:
                data = ws.status_dict()
            finally:
                ws.close()
            job = self.jobs.job(index.workspace_path)
            if job is not None and not job.done:
                data["run"] = job.to_dict(log_from=len(job.log))
            data["watching"] = self.jobs.watching(index.workspace_path)
            data["indexed"] = True
            data["notes"] = self.scope.answered_by(path, [index])  # (this project not indexed: whose status this is)
            return data

        data = await call(run)
        text = (
            f"{data['name']} ({data['workspace']}): {count(data['files'], 'file')}, {count(data['chunks'], 'chunk')}, "
            f"{count(data['stale_files'], 'file') + ' changed' if data['stale_files'] else 'up to date'}"
            + (f"; {data['run']['words']}" if data.get("run") else "")
        )  # fmt: skip (phases.run_words)
        return output.result(with_notes(data["notes"], text), data)

    def _not_indexed(self, workspace: Path) -> CallToolResult:
        """The status of the server's own folder before its first index: itself, never another workspace."""
        hint = self.scope.not_indexed()
        data = {"workspace": str(workspace), "name": workspace.name, "files": 0, "chunks": 0, "stale_files": 0,
                "watching": False, "indexed": False, "hint": hint,
                "serves": sorted(i.workspace_path for i in self.scope.served())}  # fmt: skip
        return output.result(hint, data)

    async def clear(
        self,
        path: Annotated[str, Field(description="The repository whose index to delete (folder, name or git remote)")],
    ) -> str:
        index = self.scope.one(path, "clear", required=True)
        await call(lambda: self.store.delete_index(index.id))
        self.jobs.unwatch(index.workspace_path)
        return f"deleted the index of {index.workspace_path}"

    # -- resources and prompts -------------------------------------------------------------------------

    def read_file(self, repo: str, path: str, lines: str | None = None) -> str:
        from aintern.workspace import read_indexed_file

        try:
            index = self.scope.one(repo, "read", required=True)
            text = read_indexed_file(self.store, index, path)
        except (AinternError, ToolError) as exc:
            raise ResourceError(str(exc)) from exc
        return reading.piece(text, f"aintern://file/{quote(repo, safe='')}/{quote(path)}", lines)

    def explain(
        self,
        path: reading.FilePath,
        line: reading.Line = "1",
        question: reading.Question = "",
        repo: reading.Repo = None,
    ) -> str:
        """Explain the code at a location with its sources."""
        path, number = reading.explained_location(self.scope, path, line, repo)
        return (
            f"Explain the code at {path}:{number}{' — ' + question if question else ''}.\n"
            f"Use the aintern tools: `find_related` with path={path!r} and line={number}"
            f"{f' and repo={repo!r}' if repo else ''} for its definitions and usages, `search` for anything else you "
            "need. Cite every claim with its source as path:line."
        )
