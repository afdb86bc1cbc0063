"""An index's health as the knowledge service reports it (seed KnowledgeIndexHealth)."""

from __future__ import annotations

from dataclasses import dataclass

from aintern.plural import count


@dataclass
class KnowledgeIndexHealth:
    is_indexed: bool = False
    index_id: int | None = None
    index_name: str | None = None
    total_files: int = 0
    total_chunks: int = 0
    last_updated: str | None = None
    created_at: str | None = None
    stale_files: int = 0
    #: Only `aintern index --force` brings it in line, for ``reindex_reason`` (changed files are never one).
    needs_reindex: bool = False
    reindex_reason: str | None = None
    #: One of states.STATES, as `aintern status` and the Indexes page judge it (None: not indexed).
    state: str | None = None
    embedding_model: str | None = None
    embedding_dimension: int = 0
    index_size_bytes: int = 0

    @property
    def average_chunks_per_file(self) -> float:
        return self.total_chunks / self.total_files if self.total_files else 0.0

    @property
    def stale_percentage(self) -> float:
        return self.stale_files / self.total_files * 100 if self.total_files else 0.0

    @property
    def formatted_size(self) -> str:
        b = self.index_size_bytes
        if b < 1024:
            return f"{b} B"
        if b < 1024**2:
            return f"{b / 1024:.1f} KB"
        if b < 1024**3:
            return f"{b / 1024**2:.1f} MB"
        return f"{b / 1024**3:.2f} GB"

    @property
    def status_message(self) -> str:
        if not self.is_indexed:
            return "Not indexed"
        if self.needs_reindex:
            return f"Needs reindex ({self.reindex_reason}): run `aintern index --force`"
        if self.stale_files:
            return f"{count(self.stale_files, 'file')} changed: run `aintern update`"
        return "Up to date"
