"""How each index stands (running, its folder gone, failed, stale, behind git, up to date): what the Indexes
page, `aintern list` and `aintern status` show."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from aintern.config import Settings
from aintern.embed import RETIRED_MODELS, model_id
from aintern.phases import run_label
from aintern.plural import count
from aintern.store import IndexStatistics, SqliteStore, VectorIndex, VectorTier

if TYPE_CHECKING:
    from aintern.index.runs import IndexRun


#: What a workspace's index is doing or how it compares with the files, worst first.
STATES = ("indexing", "missing", "error", "needs_reindex", "interrupted", "stale", "behind_git", "up_to_date")


@dataclass
class WorkspaceSummary:
    """One index as the Indexes page and ``aintern list`` show it."""

    index: VectorIndex
    #: One of STATES.
    state: str
    stale_files: int
    current_commit: str | None
    #: None when not asked for (it sums every chunk's length: most of a second at 100k chunks).
    index_bytes: int | None
    run: IndexRun | None = None
    #: Why a full re-index is due (state ``needs_reindex``).
    reindex_reason: str | None = None
    tier: VectorTier | None = None

    @property
    def label(self) -> str:
        """The state in words: ``indexing 45 %``, ``3 files changed``, ``folder missing``..."""
        if self.run is not None:
            return run_label(self.run)
        return {
            "indexing": "indexing", "missing": "folder missing", "error": "error", "behind_git": "behind git", "up_to_date": "up to date",
            "needs_reindex": "needs re-index", "interrupted": "interrupted",
            "stale": f"{count(self.stale_files, 'file')} changed",
        }[self.state]  # fmt: skip

    def to_dict(self) -> dict[str, object]:
        i = self.index
        return {
            "id": i.id, "name": i.name, "workspace": i.workspace_path, "state": self.state, "label": self.label,
            "files": i.file_count, "chunks": i.chunk_count, "index_bytes": self.index_bytes, "model": i.embedding_model,
            "created_at": i.created_at, "updated_at": i.updated_at, "git_commit_indexed": i.git_commit,
            "git_commit_current": self.current_commit, "stale_files": self.stale_files, "last_error": i.last_error,
            "settings": i.settings, "run": self.run.to_dict() if self.run else None,
            "reindex_reason": self.reindex_reason, "tier": tier_dict(self.tier),
        }  # fmt: skip


def tier_dict(t: VectorTier | None) -> dict[str, object] | None:
    """A full tier as the JSON of ``aintern status`` and the Indexes page show it."""
    return None if t is None else {"model": t.model_id, "vectors": t.vector_count, "chunks": t.chunk_count,
                                   "complete": t.complete}  # fmt: skip


#: Each index's size by (database, generation): reading it sums every chunk's text, and the web app's badge
#: asks for a summary at every change, so it is read again only when the index's content has changed.
_SIZES: dict[tuple[str, tuple[object, ...]], int] = {}


def _index_bytes(store: SqliteStore, index: VectorIndex) -> int:
    key = (str(store.path), store.generation(index.id))
    size = _SIZES.get(key)
    if size is None:
        if len(_SIZES) >= 64:
            _SIZES.clear()
        size = _SIZES[key] = store.statistics(index.id).index_size_bytes
    return size


def summarize(
    store: SqliteStore, index: VectorIndex, runs: dict[str, IndexRun] | None = None, size: bool = True
) -> WorkspaceSummary:
    """How ``index`` stands: running, its folder gone, failed, stale (a scan of its folder), behind git;
    with ``size``, also how many bytes the index takes."""
    from aintern.index.git import head_commit
    from aintern.index.runs import active_runs
    from aintern.index.status import staleness

    run = (runs if runs is not None else active_runs(store)).get(index.workspace_path)
    root = Path(index.workspace_path)
    index_bytes = _index_bytes(store, index) if size else None
    tier = store.vector_tier(index.id)
    if not root.is_dir():
        return WorkspaceSummary(index, "indexing" if run else "missing", 0, None, index_bytes, run, tier=tier)
    settings = Settings.load(root)
    stale = 0 if run else staleness(store, index.id, root, settings.scan_options()).count
    reason = None if run else reindex_reason(index, settings, stale)
    commit = head_commit(root)
    state = (
        "indexing" if run else "error" if index.last_error else "needs_reindex" if reason
        else "interrupted" if index.interrupted else "stale" if stale
        else "behind_git" if commit is not None and commit != index.git_commit else "up_to_date"
    )  # fmt: skip
    return WorkspaceSummary(index, state, stale, commit, index_bytes, run, reason, tier)


def reindex_reason(index: VectorIndex, settings: Settings, stale_files: int) -> str | None:
    """Why only a full re-index (``aintern index --force``) brings ``index`` in line, or None: its model
    was retired or is not the one the settings name, or its chunk sizes are not the settings'. Changed
    files, however many, are not a reason: ``aintern update`` redoes those and only those."""
    if index.embedding_model in RETIRED_MODELS:
        return "its embedding model was retired"
    wanted = model_id(settings.model) if settings.model else None  # unset: an index keeps its own model
    if wanted is not None and wanted != index.embedding_model:
        return f"the settings name the {settings.model} model"
    built = {k: index.settings[k] for k in ("chunk_size", "chunk_overlap") if k in index.settings}
    if built and built != settings.chunking():
        return "the chunk size settings changed"
    return None


def list_workspaces(store: SqliteStore) -> list[WorkspaceSummary]:
    """Every index in the application database, with its state (``aintern list``, the Indexes page)."""
    from aintern.index.runs import active_runs

    runs = active_runs(store)
    return [summarize(store, index, runs) for index in store.list_indexes()]


@dataclass
class IndexStatus:
    index: VectorIndex
    statistics: IndexStatistics
    #: Files changed (size or mtime), added or deleted since the index was last updated.
    changed_files: list[str]
    new_files: list[str]
    deleted_files: list[str]
    current_commit: str | None
    #: Files no run could read (permission denied), unchanged since: skipped, not stale.
    unreadable_files: list[str] = field(default_factory=list)

    @property
    def stale_files(self) -> int:
        return len(self.changed_files) + len(self.new_files) + len(self.deleted_files)

    @property
    def behind_git(self) -> bool:
        return self.current_commit is not None and self.current_commit != self.statistics.git_commit
