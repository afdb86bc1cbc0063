"""Plain data of the indexing pipeline (seed: IndexingOptions, IndexingProgress, IndexingResult, ...)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from aintern.chunk.models import ChunkingOptions, TextChunk
from aintern.scan import ScannedFile, ScanOptions, SkippedFile

if TYPE_CHECKING:
    from aintern.scan.secrets import Masks


class IndexingPhase(str, enum.Enum):
    SCANNING = "scanning"
    ANALYZING = "analyzing"
    CHUNKING = "chunking"
    EMBEDDING = "embedding"
    STORING = "storing"
    FINALIZING = "finalizing"
    #: The index is searchable (every chunk and the keyword statistics committed); the file vectors are
    #: being computed (``aintern status``: "file vectors: filling").
    FILE_VECTORS = "file_vectors"
    #: The full tier's vectors are being computed (a run of its own, Workspace.fill_tier).
    FULL_TIER = "full_tier"
    COMPLETE = "complete"
    CANCELLED = "cancelled"
    ERROR = "error"


class IndexingErrorType(str, enum.Enum):
    FILE_READ = "file_read"
    PARSING = "parsing"
    CHUNKING = "chunking"
    EMBEDDING = "embedding"
    STORAGE = "storage"
    UNKNOWN = "unknown"


@dataclass
class IndexingOptions:
    chunking: ChunkingOptions = field(default_factory=ChunkingOptions)
    scan: ScanOptions = field(default_factory=ScanOptions)
    force_reindex: bool = False
    #: Chunks embedded together; files are written in transactions of about this many chunks.
    batch_size: int = 256
    #: Where a new index keeps its vectors and keyword index: "sqlite" (this database) or "milvus"
    #: (``milvus_uri``: a ``*.db`` path for Milvus Lite or a server's URL; ``milvus_token_env``: the
    #: variable holding its token). None: an existing index keeps its own, a new one uses SQLite.
    engine: str | None = None
    milvus_uri: str | None = None
    milvus_token_env: str | None = None
    #: The Milvus collection's vector index: "flat" (exact) or "ivf_flat" (approximate, for millions of chunks).
    milvus_index: str = "flat"
    #: A transformer vector per file of code (its path and the names it defines), for the search to
    #: reorder its first files by (aintern.index.files: embedded by a low-priority thread beside the
    #: pipeline as files are written, the rest at the run's end). A search compares them with the
    #: question's static vector, so it never loads the transformer (docs/benchmarks.md sections 42-43).
    #: They are computed after the rest of the run is committed: the index is searchable meanwhile.
    file_vectors: bool = True
    #: Leave a full run's file vectors to the caller (``Workspace.fill_file_vectors``, e.g. in a thread of
    #: its own): the run ends as soon as the index is searchable, ``file_vectors_pending`` set.
    file_vectors_later: bool = False
    #: The index's settings to record (chunk sizes, chunker version) in the run's last commit before the
    #: file vectors: a run killed while it computes them leaves an index the next run only completes.
    index_settings: dict[str, object] | None = None


@dataclass(frozen=True)
class IndexingProgress:
    phase: IndexingPhase
    total_files: int = 0
    processed_files: int = 0
    total_chunks: int = 0
    processed_chunks: int = 0
    current_file: str | None = None
    message: str | None = None
    elapsed: float = 0.0
    estimated_remaining: float | None = None

    @property
    def percent_complete(self) -> float:
        """Of the files; of the chunks where no files are counted (a full tier's fill)."""
        if self.total_files:
            return self.processed_files / self.total_files * 100
        return self.processed_chunks / self.total_chunks * 100 if self.total_chunks else 0.0


@dataclass(frozen=True)
class IndexingError:
    file_path: str
    error: str
    type: IndexingErrorType


@dataclass
class IndexingResult:
    success: bool
    index_id: int
    files_indexed: int = 0
    files_unchanged: int = 0
    files_removed: int = 0
    chunks_created: int = 0
    #: Chunks whose vectors the model computed (the rest came from the embedding cache).
    chunks_embedded: int = 0
    duration: float = 0.0
    #: Seconds from the run's start until the index was searchable (every chunk and the keyword statistics
    #: committed), before the file vectors; None if it never was (an error, cancelled).
    searchable_s: float | None = None
    #: The file vectors are left to compute (``IndexingOptions.file_vectors_later``).
    file_vectors_pending: bool = False
    embed_seconds: float = 0.0
    skipped: list[SkippedFile] = field(default_factory=list)
    #: The skipped files an earlier run already reported, unchanged since (``new_skipped`` are the others).
    skipped_before: set[str] = field(default_factory=set)
    errors: list[IndexingError] = field(default_factory=list)
    error_message: str | None = None
    cancelled: bool = False
    git_commit: str | None = None
    #: Secrets masked in the stored text, per file: (line, kind) of each (see aintern.scan.secrets).
    secrets_redacted: dict[str, list[tuple[int, str]]] = field(default_factory=dict)

    @property
    def files_skipped(self) -> int:
        return len(self.skipped)

    @property
    def new_skipped(self) -> list[SkippedFile]:
        return [s for s in self.skipped if s.rel not in self.skipped_before]

    @property
    def files_errored(self) -> int:
        return len(self.errors)


@dataclass
class Prepared:
    """A file read and chunked, waiting for its vectors."""

    file: ScannedFile
    content_hash: str
    language: str | None
    #: None: the content is unchanged (only touched); just record the new size and mtime.
    chunks: list[TextChunk] | None
    #: Set when the file is left out for its content (binary, minified, ...).
    skip_reason: str | None = None
    #: Where its secrets were masked (None: not masked, secrets included): stored for what search shows.
    masks: Masks | None = None
