"""The MCP server for coding agents: search, context, files, related code, symbols and indexing as MCP
tools over the Python API, served over stdio (``aintern mcp``) or streamable HTTP (``aintern serve``
mounts it at ``/mcp``, one process for every agent session).

Fresh by default: the server watches the workspaces it searches and, before answering, waits for the
changes the watcher saw to be indexed, so an agent never gets the old lines of a file it just edited.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, Field

from aintern import __version__
from aintern.assemble.context import ContextBuildOptions, ContextFormat, KnowledgeChunk
from aintern.assemble.snippets import trim
from aintern.assemble.tokens import TokenEstimation, count_tokens
from aintern.chunk.models import SymbolType
from aintern.errors import AinternError
from aintern.index.jobs import Jobs
from aintern.knowledge import KnowledgeQueryOptions, KnowledgeQueryResult, KnowledgeService, scope_options
from aintern.store import SqliteStore, VectorIndex

log = logging.getLogger(__name__)

#: Longest query the tools take (longer text is an agent pasting a file, not asking).
MAX_QUERY_CHARS = 2000
#: Most results any tool returns.
MAX_K = 100
#: The search tool's default threshold: at 0.1 a search of the dev set returns a median of 5 hits in ~640
#: tokens (NDCG@10 0.891); 0.2 halves the tokens and loses 0.03, 0 doubles them for 0.012 (bench/mcp_bench.py).
SEARCH_MIN_RELEVANCE = 0.1
#: How long a search waits for the changes the watcher saw to be indexed.
FRESH_WAIT_S = 30.0

INSTRUCTIONS = """\
aintern searches the code of indexed repositories by meaning and by name and answers with file:line
locations. Start with `search` (a question or a name), then read what it points to. `context` gives one
block of the most relevant code within a token budget; `files` lists the files that matter for a
question; `find_related` shows the definitions, usages and look-alikes of the code at a location;
`symbols` finds definitions by the start of their name. Results are fresh: files edited since the last
index are re-indexed before a search answers. `index` and `status` build and inspect indexes."""


@dataclass
class McpConfig:
    db: Path | None = None
    #: Where the server was started (an agent launches it in its project): searched by default.
    workspace: Path | None = None
    #: More workspaces searched by default: folders, index names or git remotes (``all``: every index).
    repos: list[str] = field(default_factory=list)
    #: Watch the searched workspaces and index their changes before answering.
    watch: bool = True


# -- structured results ---------------------------------------------------------------------------


class Hit(BaseModel):
    repo: str | None = Field(None, description="The repository (index name), when several were searched")
    path: str = Field(description="File path, relative to its repository")
    start_line: int
    end_line: int
    symbol: str | None = None
    symbol_type: str | None = None
    relevance: float = Field(description="Calibrated 0-1: the chance this is what the question is after")
    code: str = Field(description="The chunk's code; long chunks trimmed to the matching lines, '…' marks cuts")
    trimmed: bool = False


class SearchResult(BaseModel):
    query: str
    repos: list[str]
    hits: list[Hit]
    tokens: int = Field(description="Tokens of the text answer (cl100k estimate)")
    truncated: bool = Field(False, description="Hits were left out to stay within max_tokens")
    notes: list[str] = Field(default_factory=list, description="How the answer was made, where it matters")


class ContextResult(BaseModel):
    context: str
    tokens: int
    chunks: int
    files: list[str]
    truncated: bool


class FileHit(BaseModel):
    repo: str | None = None
    path: str
    relevance: float
    match_count: int
    match_lines: list[int]


class FilesResult(BaseModel):
    query: str
    files: list[FileHit]


class Related(BaseModel):
    path: str
    start_line: int
    end_line: int
    symbol: str | None = None
    reason: Literal["definition", "usage", "similar"]
    code: str
    trimmed: bool = False


class RelatedResult(BaseModel):
    repo: str
    path: str
    line: int
    related: list[Related]


class Symbol(BaseModel):
    repo: str
    name: str
    type: str | None = None
    path: str


class SymbolsResult(BaseModel):
    prefix: str
    symbols: list[Symbol]


class StatusResult(BaseModel, extra="allow"):
    """``aintern status --json``, with ``watching`` (this server keeps it fresh) and a running index's ``run``."""

    workspace: str
    name: str
    files: int
    chunks: int
    stale_files: int
    watching: bool


class IndexResult(BaseModel):
    workspace: str
    run_id: str = Field(description="The run (status shows its progress while it goes)")
    phase: str
    done: bool
    files_indexed: int | None = None
    files_unchanged: int | None = None
    files_removed: int | None = None
    chunks: int | None = None
    seconds: float | None = Field(None, description="How long the run took, its full tier's fill included")
    error: str | None = None


#: The ``repos`` parameter the tools share.
Repos = Annotated[
    list[str] | None,
    Field(
        description="Repositories: folder paths, index names or git remotes; 'all' for every index. Default: this project"
    ),
]


# -- the server -----------------------------------------------------------------------------------


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
        self.knowledge = knowledge or KnowledgeService(self.store)
        self.jobs = jobs or Jobs(self.config.db)
        self.server = MCPServer("aintern", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
        self._register()

    # -- workspaces ---------------------------------------------------------------------------------

    def default_indexes(self) -> list[VectorIndex]:
        """The server's workspace (if indexed) and its ``--repo`` ones; every index when there are none."""
        from aintern.workspace import resolve_workspaces

        found: dict[int, VectorIndex] = {}
        if self.config.workspace is not None:
            index = self.store.find_index_above(self.config.workspace)
            if index is not None:
                found[index.id] = index
        if self.config.repos:
            found.update((i.id, i) for i in resolve_workspaces(self.store, self.config.repos))
        return list(found.values()) or self.store.list_indexes()

    def indexes(self, repos: list[str] | None) -> list[VectorIndex]:
        from aintern.workspace import resolve_workspaces

        try:
            found = resolve_workspaces(self.store, repos) if repos else self.default_indexes()
        except AinternError as exc:
            raise ToolError(str(exc)) from exc
        if not found:
            raise ToolError("nothing is indexed yet: call `index` with the repository's folder first")
        return found

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
        s.resource("aintern://file/{repo}/{+path}", name="file", mime_type="text/plain",
                   description="An indexed file of a repository (read-only, inside the repository only)")(self.read_file)  # fmt: skip
        s.prompt(name="explain", description="Explain the code at a location, citing file:line sources")(self.explain)

    async def search(
        self,
        query: Annotated[str, Field(description="A question in plain words, or a name (function, class, file)")],
        repos: Repos = None,
        k: Annotated[int, Field(description="Most hits to return (1-100)")] = 10,
        language: Annotated[str | None, Field(description="Only this language, e.g. python")] = None,
        path: Annotated[str | None, Field(description="Only files matching this glob, e.g. src/**/*.py")] = None,
        symbol_type: Annotated[
            str | None, Field(description="Only definitions of this kind: function, class, method, ...")
        ] = None,
        min_relevance: Annotated[float | None, Field(description="Lowest relevance 0-1 (default 0.1)")] = None,
        max_tokens: Annotated[int, Field(description="Budget for the whole answer, in tokens")] = 4000,
    ) -> Annotated[CallToolResult, SearchResult]:
        query = _query(query)
        k = _k(k)
        kinds: tuple[SymbolType, ...] = ()
        if symbol_type:
            try:
                kinds = (SymbolType(symbol_type.lower()),)
            except ValueError as exc:
                raise ToolError(f"symbol_type: one of {', '.join(t.value for t in SymbolType)}") from exc
        indexes = self.indexes(repos)
        several = len(indexes) > 1
        options = KnowledgeQueryOptions(
            **scope_options(_scope(indexes)), max_results=k, min_relevance=SEARCH_MIN_RELEVANCE if min_relevance is None else min_relevance,
            expand_context=False, languages=(language,) if language else (), file_patterns=(path,) if path else (),
            symbol_types=kinds,
        )  # fmt: skip

        def run() -> KnowledgeQueryResult:
            self.fresh(indexes)
            return self.knowledge.query(query, options)

        answer = await _call(run)
        hits, text, tokens, truncated = _hits(answer.chunks, several, max_tokens)
        if answer.notes:
            text = "\n".join(f"note: {n}" for n in answer.notes) + "\n" + text
        result = SearchResult(query=query, repos=[i.name for i in indexes], hits=hits, tokens=tokens,
                              truncated=truncated, notes=answer.notes)  # fmt: skip
        return _result(text, result)

    async def context(
        self,
        query: Annotated[str, Field(description="What the code is needed for")],
        max_tokens: Annotated[int, Field(description="Token budget of the block (100-100000)")] = 4000,
        format: Annotated[
            Literal["markdown", "xml", "json", "plain"], Field(description="Layout of the block")
        ] = "markdown",
        repos: Repos = None,
    ) -> Annotated[CallToolResult, ContextResult]:
        query = _query(query)
        if not 100 <= max_tokens <= 100_000:
            raise ToolError("max_tokens: between 100 and 100000")
        indexes = self.indexes(repos)
        options = ContextBuildOptions(
            max_tokens=max_tokens, format=ContextFormat(format), max_chunks=20, min_relevance=0.3
        )

        def run() -> Any:
            self.fresh(indexes)
            return self.knowledge.build_context(query, _scope(indexes), options)

        built = await _call(run)
        result = ContextResult(context=built.context, tokens=built.estimated_tokens, chunks=built.chunks_included,
                               files=built.files_included, truncated=built.was_truncated)  # fmt: skip
        text = built.context or "No code in the index is relevant enough to this question."
        return _result(text, result)

    async def files(
        self,
        query: Annotated[str, Field(description="A question or a name")],
        n: Annotated[int, Field(description="Most files to return (1-100)")] = 10,
        repos: Repos = None,
    ) -> Annotated[CallToolResult, FilesResult]:
        query = _query(query)
        n = _k(n)
        indexes = self.indexes(repos)

        def run() -> Any:
            self.fresh(indexes)
            return self.knowledge.find_relevant_files(query, _scope(indexes), n, 0.4, fill=True)

        found = await _call(run)
        files = [FileHit(repo=f.repo, path=f.file_path, relevance=round(f.relevance, 3), match_count=f.match_count,
                         match_lines=f.match_lines) for f in found]  # fmt: skip
        lines = [f"{f.repo + '/' if f.repo else ''}{f.path}  {f.relevance:.2f}  lines {', '.join(map(str, f.match_lines[:8]))}"
                 for f in files]  # fmt: skip
        return _result("\n".join(lines) or "No relevant files.", FilesResult(query=query, files=files))

    async def find_related(
        self,
        path: Annotated[str, Field(description="File path, relative to its repository")],
        line: Annotated[int, Field(description="A line in that file (1-based)")],
        k: Annotated[int, Field(description="Most results (1-100)")] = 10,
        repo: Annotated[str | None, Field(description="The repository; default: this project")] = None,
    ) -> Annotated[CallToolResult, RelatedResult]:
        from aintern.retrieve.related import find_related

        k = _k(k)
        index = self.indexes([repo] if repo else None)[0]

        def run() -> Any:
            self.fresh([index])
            try:
                return find_related(self.store, index, path.strip().lstrip("./"), max(1, line), k)
            except ValueError as exc:
                raise ToolError(str(exc)) from exc

        found = await _call(run)
        related = []
        for r in found:
            code, cut = trim(KnowledgeChunk(content=r.chunk.content, file_path=r.chunk.file_path, start_line=r.chunk.start_line,
                                            end_line=r.chunk.end_line, relevance=r.score))  # fmt: skip
            related.append(Related(path=r.chunk.file_path, start_line=r.chunk.start_line, end_line=r.chunk.end_line,
                                   symbol=r.chunk.symbol_name, reason=r.reason, code=code, trimmed=cut))  # fmt: skip
        text = "\n\n".join(f"{r.path}:{r.start_line}-{r.end_line}  {r.reason}{'  ' + r.symbol if r.symbol else ''}\n{r.code}"
                           for r in related)  # fmt: skip
        return _result(
            text or "Nothing related found.", RelatedResult(repo=index.name, path=path, line=line, related=related)
        )

    async def symbols(
        self,
        prefix: Annotated[str, Field(description="The start of a name, e.g. open_conn or UserServ")],
        repos: Repos = None,
        k: Annotated[int, Field(description="Most results (1-100)")] = 20,
    ) -> Annotated[CallToolResult, SymbolsResult]:
        prefix = prefix.strip()[:200]
        if not prefix:
            raise ToolError("prefix: give the start of a name")
        k = _k(k)
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

        found = await _call(run)
        text = "\n".join(f"{s.name}  {s.type or ''}  {s.repo + '/' if len(indexes) > 1 else ''}{s.path}" for s in found)
        return _result(text or f"No definitions start with {prefix!r}.", SymbolsResult(prefix=prefix, symbols=found))

    async def index(
        self,
        ctx: Context,
        path: Annotated[str, Field(description="The repository's folder (absolute path)")],
        wait: Annotated[
            bool, Field(description="Wait until done (progress is reported); false: start and return")
        ] = True,
        force: Annotated[bool, Field(description="Re-index every file, not just the changed ones")] = False,
    ) -> Annotated[CallToolResult, IndexResult]:
        root = Path(path).expanduser()
        if not root.is_absolute():
            raise ToolError(f"{path}: give the absolute path of a folder")
        if not root.is_dir():
            raise ToolError(f"{path}: {'not a folder' if root.exists() else 'no such folder'}")
        root = root.resolve()
        try:
            job = self.jobs.running(root) or self.jobs.start(root, "reindex" if force else "index")
        except AinternError as exc:
            raise ToolError(str(exc)) from exc
        if self.config.watch:
            self._watch(root)
        while wait and not job.done:
            await anyio.sleep(0.25)
            p = job.progress
            if p is not None and p.total_files:
                await ctx.report_progress(p.processed_files, p.total_files, f"{p.phase.value}: {p.current_file or ''}")
        r = job.result
        result = IndexResult(
            workspace=str(root), run_id=job.id, phase=job.phase, done=job.done, error=job.error,
            files_indexed=r.files_indexed if r else None, files_unchanged=r.files_unchanged if r else None,
            files_removed=r.files_removed if r else None, chunks=r.chunks_created if r else None,
            seconds=round(job.elapsed, 2) if r else None,
        )  # fmt: skip
        error = job.error or (r.error_message if r is not None and not r.success and not r.cancelled else None)
        if error:
            raise ToolError(f"indexing {root} failed: {error}")
        text = (f"{root}: {job.phase}" + (f", {r.files_indexed} files indexed, {r.files_unchanged} unchanged, "
                f"{r.chunks_created} chunks in {job.elapsed:.1f} s" if r else " (running; `status` shows its progress)"))  # fmt: skip
        return _result(text, result)

    async def status(
        self,
        path: Annotated[
            str | None, Field(description="A repository (folder, name or git remote); default: this project")
        ] = None,
    ) -> Annotated[CallToolResult, StatusResult]:
        from aintern.workspace import Workspace

        index = self.indexes([path] if path else None)[0]

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
            return data

        data = await _call(run)
        text = (f"{data['name']} ({data['workspace']}): {data['files']} files, {data['chunks']} chunks, "
                f"{'up to date' if not data['stale_files'] else str(data['stale_files']) + ' files changed'}"
                + (f"; indexing {data['run'].get('percent', 0):.0f} %" if data.get("run") else ""))  # fmt: skip
        return _result(text, data)

    async def clear(
        self,
        path: Annotated[str, Field(description="The repository whose index to delete (folder, name or git remote)")],
    ) -> str:
        index = self.indexes([path])[0]
        await _call(lambda: self.store.delete_index(index.id))
        self.jobs.unwatch(index.workspace_path)
        return f"deleted the index of {index.workspace_path}"

    # -- resources and prompts -------------------------------------------------------------------------

    def read_file(self, repo: str, path: str) -> str:
        from aintern.workspace import read_indexed_file, resolve_workspaces

        try:
            index = resolve_workspaces(self.store, [repo])[0]
            return read_indexed_file(self.store, index, path)
        except AinternError as exc:
            raise ResourceError(str(exc)) from exc

    def explain(self, path: str, line: str = "1", question: str = "") -> str:
        """Explain the code at a location with its sources."""
        return (
            f"Explain the code at {path}:{line}{' — ' + question if question else ''}.\n"
            f"Use the aintern tools: `find_related` with path={path!r} and line={line} for its definitions and "
            "usages, `search` for anything else you need. Cite every claim with its source as path:line."
        )


# -- helpers --------------------------------------------------------------------------------------

SEARCH_HELP = (
    "Find code by meaning or by name across the indexed repositories: ranked path:start-end hits with the "
    "symbol, a calibrated relevance and the matching lines. Use it first for any question about the code "
    "('where is the session saved?', 'UserService', 'retry with backoff')."
)
CONTEXT_HELP = (
    "One block of the code most relevant to a question, grouped by file with line numbers, within a token "
    "budget: paste-ready context for answering or editing."
)
FILES_HELP = "The files that matter most for a question, best first, with the lines that matched."
RELATED_HELP = (
    "Code related to a location (path and line): the definitions and usages of the symbol there first, "
    "then code that looks alike. Use it to follow a function to its callers or a call to its definition."
)
SYMBOLS_HELP = "Definitions (functions, classes, methods, ...) whose name starts with a prefix, with their files."
INDEX_HELP = (
    "Index a repository's folder (only changed files after the first time), reporting progress. Searches of "
    "a repository this server watches stay fresh without calling it again."
)
STATUS_HELP = "An index's state: files, chunks, model, files changed since indexing, a running index's progress."
CLEAR_HELP = "Delete a repository's index (the files are not touched)."


def _query(text: str) -> str:
    from aintern.store.text import clean_user_text

    cleaned = clean_user_text(text or "", MAX_QUERY_CHARS)
    if not cleaned:
        raise ToolError("query: give a question or a name")
    return cleaned


def _k(k: int) -> int:
    if not 1 <= k <= MAX_K:
        raise ToolError(f"k: between 1 and {MAX_K}, not {k}")
    return k


def _scope(indexes: list[VectorIndex]) -> str | list[str]:
    """One workspace, or several searched together."""
    return indexes[0].workspace_path if len(indexes) == 1 else [i.workspace_path for i in indexes]


async def _call(fn: Callable[[], Any]) -> Any:
    """Run blocking work in a thread; aintern's own errors reach the agent as tool errors."""
    try:
        return await anyio.to_thread.run_sync(fn)
    except ToolError:
        raise
    except (AinternError, ValueError) as exc:
        raise ToolError(str(exc)) from exc


def _hits(chunks: list[KnowledgeChunk], several: bool, max_tokens: int) -> tuple[list[Hit], str, int, bool]:
    """The hits as structured results and as compact text (with its tokens), as many as fit ``max_tokens``."""
    hits: list[Hit] = []
    parts: list[str] = []
    used = 0
    for c in chunks:
        code, cut = trim(c)
        hit = Hit(repo=c.repo if several else None, path=c.file_path, start_line=c.start_line, end_line=c.end_line,
                  symbol=c.symbol_name, symbol_type=c.symbol_type.value if c.symbol_type else None,
                  relevance=round(c.relevance, 3), code=code, trimmed=cut)  # fmt: skip
        where = f"{c.display_path}:{c.start_line}-{c.end_line}"
        head = f"{where}  {c.symbol_name or ''}{' (' + hit.symbol_type + ')' if hit.symbol_type else ''}  {hit.relevance:.2f}"
        part = f"{head}\n```{c.language or ''}\n{code}\n```"
        cost = count_tokens(part, TokenEstimation.TOKENIZER)
        if hits and used + cost > max_tokens:
            return hits, "\n\n".join(parts), used, True
        hits.append(hit)
        parts.append(part)
        used += cost
    return hits, "\n\n".join(parts) or "No code matched.", used, False


def _result(text: str, structured: BaseModel | dict[str, Any]) -> CallToolResult:
    data = (
        structured.model_dump(mode="json")
        if isinstance(structured, BaseModel)
        else json.loads(json.dumps(structured, default=str))
    )
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)
