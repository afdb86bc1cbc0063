"""What the MCP tools answer: their structured results (pydantic, for the tools' output schemas) and
the texts that describe the server and its tools to an agent."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

INSTRUCTIONS = """\
aintern searches the code of indexed repositories by meaning and by name and answers with file:line
locations. Start with `search` (a question or a name), then read what it points to. `context` gives one
block of the most relevant code within a token budget; `files` lists the files that matter for a
question; `find_related` shows the definitions, usages and look-alikes of the code at a location;
`symbols` finds definitions by the start of their name. Results are fresh: the server watches its
repositories and re-indexes edited files before a search answers (started with --no-watch it does not, and a
hit whose file changed since it was indexed says so). `index` and `status` build and inspect indexes. The
server serves the repositories it was started for (its folder, --repo ones, or every index with --all-repos)."""

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
    "Code related to a location (path and line): the definitions of the names its code uses (each with its own "
    "lines), then the callers of the definition it is in, then code that looks alike. Use it to follow a function "
    "to its callers or a call to its definition."
)
SYMBOLS_HELP = "Definitions (functions, classes, methods, ...) whose name starts with a prefix, with their files."
INDEX_HELP = (
    "Index a repository this server serves (its own folder, even before its first index), reporting progress; "
    "only changed files after the first time. Searches of a repository this server watches stay fresh "
    "without calling it again."
)
STATUS_HELP = "An index's state: files, chunks, model, files changed since indexing, a running index's progress."
CLEAR_HELP = "Delete the index of one repository this server serves (the files are not touched; never 'all')."


#: The ``repos`` parameter the tools share.
Repos = Annotated[
    list[str] | str | None,
    Field(
        description="Repositories this server serves: folder paths, index names or git remotes (one, or a list); "
        "'all' for every one it serves. Default: this project"
    ),
]


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
    stale: bool | None = Field(
        None, description="True when the file changed or was deleted since it was indexed: `code` is the indexed text"
    )


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
    notes: list[str] = Field(
        default_factory=list, description="What the search said of the indexes (an incomplete one), beside the block"
    )


class FileHit(BaseModel):
    repo: str | None = None
    path: str
    relevance: float
    match_count: int
    match_lines: list[int]


class FilesResult(BaseModel):
    query: str
    files: list[FileHit]
    notes: list[str] = Field(
        default_factory=list, description="Why fewer files than n are listed, when the search had no more"
    )


class Related(BaseModel):
    path: str
    start_line: int
    end_line: int
    symbol: str | None = None
    reason: Literal["definition", "usage", "similar"]
    #: The line it is cited for: a usage's line that names the definition.
    line: int | None = None
    code: str
    trimmed: bool = False


class RelatedResult(BaseModel):
    repo: str
    path: str
    line: int
    related: list[Related]
    notes: list[str] = Field(
        default_factory=list,
        description="Whose answer this is, when the folder the server was started in is not indexed",
    )


class Symbol(BaseModel):
    repo: str
    name: str
    type: str | None = None
    path: str


class SymbolsResult(BaseModel):
    prefix: str
    symbols: list[Symbol]
    notes: list[str] = Field(
        default_factory=list,
        description="Whose answer this is, when the folder the server was started in is not indexed",
    )


class StatusResult(BaseModel, extra="allow"):
    """``aintern status --json``, with ``watching`` (this server keeps it fresh) and a running index's ``run``;
    for the server's own folder before its first index, ``indexed`` false and zero counts."""

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
