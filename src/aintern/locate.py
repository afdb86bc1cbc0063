"""Finding workspaces, indexes and indexed files from what a user names: a folder, an index's name, a git
remote, a path inside a workspace (the lookups the CLI, the web app and the MCP server share)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from aintern.config import CONFIG_FILE, Settings
from aintern.errors import AinternError, FileNotIndexedError, InsideIndexError, NotIndexedError
from aintern.store import SqliteStore, VectorIndex


def resolve_workspaces(store: SqliteStore, specs: Iterable[str]) -> list[VectorIndex]:
    """The indexes a user means by each of ``specs``: a folder (the index at or above it), an index's
    name, or a git remote (``github.com/owner/name``, any URL form: every clone of it). ``all`` or
    ``*``: every index. NotIndexedError names what matched nothing, and what there is."""
    from aintern.index.git import normalise_remote, remote_url

    indexes = store.list_indexes()
    out: dict[int, VectorIndex] = {}
    remotes: dict[int, str | None] | None = None
    for spec in specs:
        spec = spec.strip()
        if spec in ("all", "*"):
            out.update((i.id, i) for i in indexes)
            continue
        found = [i for i in indexes if i.name == spec] or [i for i in indexes if i.name.lower() == spec.lower()]
        if not found and (path := existing_path(spec)) is not None:
            above = store.find_index_above(path)
            found = [above] if above is not None else []
        if not found and ("/" in spec or ":" in spec):
            if remotes is None:  # read each workspace's .git/config once
                remotes = {i.id: remote_url(i.workspace_path) for i in indexes}
            wanted = normalise_remote(spec)
            found = [i for i in indexes if remotes[i.id] == wanted]
        if not found:
            known = ", ".join(sorted(i.name for i in indexes)) or "none"
            raise NotIndexedError(
                f"no index matches {spec!r} (a folder, an index name or a git remote); indexes: {known}"
            )
        out.update((i.id, i) for i in found)
    return list(out.values())


def existing_path(spec: str) -> Path | None:
    """``spec`` as an absolute path that exists, or None: ``~user`` of no such user, a name too long for
    the file system or a NUL in it are names, not paths."""
    try:
        path = Path(spec).expanduser()
        return path if path.is_absolute() and path.exists() else None
    except (RuntimeError, OSError, ValueError):
        return None


def read_indexed_file(store: SqliteStore, index: VectorIndex, rel: str) -> str:
    """The text of ``rel``, an indexed file of ``index``'s workspace, its secrets masked as search results
    mask them: by the masks the index recorded for the version it holds (no scan), or, for a file changed since
    (or an index that recorded none), by a scan of the text read now. An index that includes secrets shows
    them. No ``..``, no absolute path, no symlink out of the workspace: FileNotIndexedError, as for a file
    that is not indexed."""
    from aintern.source_files import FileReadError, decode_source, file_digest, read_regular_file

    rel = rel.replace("\\", "/")
    if not rel or rel.startswith("/") or "\x00" in rel or ".." in rel.split("/"):
        raise FileNotIndexedError("no such file in this workspace")
    base = Path(os.path.realpath(index.workspace_path))
    target = Path(os.path.realpath(base / rel))
    version = store.file_versions(index.id, [rel]).get(rel) if base in target.parents else None
    if version is None:
        raise FileNotIndexedError(f"{rel} is not an indexed file of {index.workspace_path}")
    try:
        # (never blocks on a FIFO put in the file's place)
        data = read_regular_file(target, max(target.stat().st_size, 0) + (1 << 20))
    except (OSError, FileReadError) as exc:
        raise FileNotIndexedError(f"{rel}: {getattr(exc, 'strerror', None) or exc}") from exc
    # As the indexer read it (UTF-8, or an 8-bit encoding); a file turned binary since reads with replacements.
    text = decode_source(data)[0] or data.decode("utf-8", errors="replace")
    if _includes_secrets(index.workspace_path):
        return text
    from aintern.scan.secrets import masked_as_indexed

    same = file_digest(data) == version.content_hash
    return masked_as_indexed(text, rel, version.masks if same else None)


def _includes_secrets(workspace: str) -> bool:
    """Whether the workspace's index keeps secrets unmasked (its settings say so); an unreadable setting masks."""
    try:
        return Settings.load(workspace).include_secrets
    except AinternError:
        return False


def find_workspace(start: str | Path, store: SqliteStore | None = None) -> Path | None:
    """``start`` or its nearest ancestor that has a ``.aintern.toml`` or an index (the way git finds a repo)."""
    here = Path(start).resolve()
    for candidate in (here, *here.parents):
        if (candidate / CONFIG_FILE).is_file():
            return candidate
    if store is not None:
        index = store.find_index_above(here)
        if index is not None:
            return Path(index.workspace_path)
    return None


def check_not_inside_index(store: SqliteStore, root: Path) -> None:
    """InsideIndexError when the index of a folder above ``root`` (resolved) holds files of ``root``: a second
    index of them would show each of them twice in a search of both. A folder that index leaves out may have its
    own. (Asked before a folder's first index: by `aintern index`, the web app's Add and the MCP ``index`` tool.)"""
    outer = holding_index(store, root)
    if outer is None:
        return
    rel = root.relative_to(outer.workspace_path).as_posix()
    import json
    import shlex

    said = f"{root} is indexed already, as part of the index {outer.name!r} of {outer.workspace_path} (a second "
    toml = Path(outer.workspace_path) / CONFIG_FILE
    pattern = json.dumps(f"{rel}/**", ensure_ascii=False)  # (a TOML string; its brackets work: scan/)
    leave_out = f"to index it on its own, leave it out of that index first (add {pattern} to `exclude` in {toml}"
    raise InsideIndexError(
        f"{said}index would show its files twice): `aintern update {shlex.quote(outer.workspace_path)}` keeps it "
        f"fresh and `aintern search --dir {shlex.quote(rel)}` searches only it; {leave_out})",
        web=f"{said}index would show its files twice): update {outer.name!r} on the Indexes page to keep it fresh, "
        f"and search only it with the Search page's Directory filter {rel!r}; {leave_out}, then update that index)",
    )


def holding_index(store: SqliteStore, root: Path) -> VectorIndex | None:
    """The index of the nearest folder above ``root`` (resolved) that has one, when it holds files of ``root``
    (a folder it leaves out may have its own index); else None."""
    for above in root.parents:
        outer = store.get_index_for_workspace(above)
        if outer is not None:
            return outer if store.holds_files_under(outer.id, root.relative_to(above).as_posix()) else None
    return None


def indexes_under(store: SqliteStore, folder: Path) -> list[VectorIndex]:
    """The indexes of folders inside ``folder`` (an index of ``folder`` would hold their files a second time)."""
    return [i for i in store.list_indexes() if folder in Path(i.workspace_path).parents]


def indexes_inside(store: SqliteStore, root: Path, index_id: int) -> list[str]:
    """A notice for each index of a folder inside ``root`` (made before the index ``index_id`` of ``root``) whose
    files that index holds too: a search of both would show them twice."""
    import shlex

    out = []
    for other in store.list_indexes():
        inner = Path(other.workspace_path)
        if root in inner.parents and store.holds_files_under(index_id, inner.relative_to(root).as_posix()):
            out.append(
                f"the index {other.name!r} of {inner} holds files this one holds too (a search of both would show "
                f"them twice): `aintern clear {shlex.quote(str(inner))}` drops it"
            )
    return out
