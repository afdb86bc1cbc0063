"""Which repositories one MCP server serves, and so what its tools may search, read, index and clear.

An agent in project A must not read, index or delete project B through a server started for A: the
server serves its folder and its ``--repo`` ones, or every index with ``--all-repos`` (``aintern serve``'s
/mcp holds every index of its database). A folder that is not indexed is said so: with nothing else served, as
the tools' error; with ``--repo`` ones (the user chose them) or every index served, as a note on each answer
from them, naming them, so another project's results are never taken for the folder's own."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path

from mcp.server.mcpserver.exceptions import ToolError

from aintern.errors import AinternError, InsideIndexError
from aintern.locate import check_not_inside_index, indexes_under
from aintern.store import SqliteStore, VectorIndex

#: What names every repository in the ``repos`` argument.
EVERY = ("all", "*")


@dataclass
class McpConfig:
    db: Path | None = None
    #: Where the server was started (an agent launches it in its project): served and searched by default.
    workspace: Path | None = None
    #: More repositories served and searched by default: folders, index names or git remotes.
    repos: list[str] = field(default_factory=list)
    #: Serve every index of the database (``--all-repos``; ``aintern serve``'s /mcp, which holds them all);
    #: searched by default when neither the workspace nor a ``--repo`` one is indexed.
    all_repos: bool = False
    #: Watch the searched workspaces and index their changes before answering.
    watch: bool = True
    #: Mounted by ``aintern serve`` at /mcp (it serves every index of its database; there is no --all-repos).
    web: bool = False


class Scope:
    """The served repositories of one server, over its database; refusals are tool errors."""

    def __init__(self, store: SqliteStore, config: McpConfig) -> None:
        self.store = store
        self.config = config

    def own(self) -> list[VectorIndex]:
        """The workspace's index (at or above its folder) and the indexed ``--repo`` ones."""
        from aintern.workspace import resolve_workspaces

        found: dict[int, VectorIndex] = {}
        if self.config.workspace is not None:
            index = self.store.find_index_above(self.config.workspace)
            if index is not None:
                found[index.id] = index
        for spec in self.config.repos:
            try:
                found.update((i.id, i) for i in resolve_workspaces(self.store, [spec]))
            except (AinternError, OSError, RuntimeError, ValueError):  # (not indexed yet: the server may index it)
                continue
        return list(found.values())

    def served(self) -> list[VectorIndex]:
        return self.store.list_indexes() if self.config.all_repos else self.own()

    def defaults(self) -> list[VectorIndex]:
        """What a tool uses when no repository is named."""
        return self.own() or (self.store.list_indexes() if self.config.all_repos else [])

    def inside(self, root: Path) -> list[VectorIndex]:
        """The indexes of folders inside ``root`` (locate.indexes_under)."""
        return indexes_under(self.store, root)

    def not_indexed(self) -> str:
        """Why a call naming no repository has none, and what to do: never to index a folder that holds
        indexed repositories (an agent started in the home folder would index all of it)."""
        where = self.config.workspace
        if where is None:
            return "nothing is indexed yet: call `index` with the repository's folder first"
        inner = self.inside(where)
        served = self.served()
        if inner:  # (each repository named once: those it serves, then any it does not)
            ids = {i.id for i in served}
            mine, others = [i for i in inner if i.id in ids], [i for i in inner if i.id not in ids]
            if not mine:
                return (
                    f"{where} is not indexed; it holds the indexed repositories {self._names(inner)}: start the "
                    "server in one of them, or with --repo naming it"
                )
            held = self._names(mine) + (f"; and {self._names(others)}, which it does not serve" if others else "")
            which = "one this server serves" if others else "one of them"
            return (
                f"{where} is not indexed; it holds the indexed repositories {held}: name {which} in the call "
                "(a folder, an index name or a git remote)"
            )
        if served:
            return (
                f"{where}, where this server was started, is not indexed; it serves {self._names(served)}: name one "
                f"in the call (a folder, an index name or a git remote), or call `index` with path {str(where)!r} "
                "to index this folder"
            )
        return (
            f"{where} is not indexed: call `index` with path {str(where)!r} (or run `aintern index` in it), "
            "then ask again"
        )

    def answered_by(self, named: list[str] | str | None, indexes: list[VectorIndex]) -> list[str]:
        """The note of an answer from the defaults (``named``: the repositories the call named, none) of a server
        started in a folder that is not indexed: which repositories answered (the ``--repo`` ones the user chose,
        or every one served) and how to index the folder. An answer never passes another project's results off
        as the folder's own."""
        where = self.config.workspace
        said = [named] if isinstance(named, str) else named or []
        if where is None or not indexes or any(s.strip() for s in said) or self.store.find_index_above(where):
            return []
        chosen = "the --repo ones it was started with" if self.own() else "every repository it serves"
        fix = "" if self.inside(where) else f"; call `index` with path {str(where)!r} to index it"
        return [
            f"{where}, where this server was started, is not indexed: this answer is from {self._names(indexes)}, "
            f"{chosen}{fix}"
        ]

    def resolve(self, specs: list[str] | None) -> list[VectorIndex]:
        """The served indexes ``specs`` name (the defaults when none); a tool error for anything else."""
        if not specs:
            found = self.defaults()
            if not found:
                raise ToolError(self.not_indexed())
            return found
        served = self.served()
        out: dict[int, VectorIndex] = {}
        for spec in specs:
            if spec.strip() in EVERY:
                out.update((i.id, i) for i in served)
            else:
                out.update((i.id, i) for i in self._matching(spec, served))
        if not out:
            raise ToolError(self.not_indexed())
        return list(out.values())

    def one(self, spec: str | None, action: str, required: bool = False) -> VectorIndex:
        """The one served index ``spec`` names (default: this project, unless ``required``) for ``action``;
        'all' and a name of several repositories are refused."""
        if required and not (spec or "").strip():
            raise ToolError(f"{action}: name the repository (a folder, an index name or a git remote)")
        if spec is not None and spec.strip() in EVERY:
            raise ToolError(f"{action} takes one repository (a folder, an index name or a git remote), not {spec!r}")
        if not (spec or "").strip():
            own = self.store.find_index_above(self.config.workspace) if self.config.workspace is not None else None
            if own is not None:  # (the project the server was started in is the default, its --repo ones beside it)
                return own
            spec = None
        found = self.resolve([spec] if spec else None)
        if len(found) > 1:
            said = f"{spec[:200]!r} names" if spec else "this server searches"
            raise ToolError(
                f"{action}: {said} several repositories ({self._names(found)}); name one (a folder, an index name "
                "or a git remote)"
            )
        return found[0]

    def check_index(self, root: Path, nested: bool = False) -> None:
        """``root`` (resolved) may be indexed: a served index's folder, or the server's own folder or a
        ``--repo`` folder before its first index; a folder holding indexed repositories only when the call
        says so (``nested``): an agent asked to index "here" in the home folder would index every project twice."""
        allowed = {Path(i.workspace_path) for i in self.served()}
        workspace = self.config.workspace
        if workspace is not None and self.store.find_index_above(workspace) is None:
            allowed.add(workspace.resolve())
        for spec in self.config.repos:
            path = Path(spec).expanduser()
            if path.is_absolute() and path.is_dir():
                allowed.add(path.resolve())
        try:  # (a folder inside an index is refused as `aintern index` refuses it: its advice is what works)
            if self.store.get_index_for_workspace(root) is None:
                check_not_inside_index(self.store, root)
        except InsideIndexError as exc:
            raise ToolError(str(exc)) from exc
        inner = self.inside(root) if not nested and self.store.get_index_for_workspace(root) is None else []
        if inner:
            raise ToolError(
                f"{root} holds indexed repositories ({self._names(inner)}): an index of it would hold their files a "
                "second time, and a search of both would show them twice. Name those repositories in the calls "
                "instead; to index the whole folder anyway, call `index` again with nested=true"
            )
        if root in allowed:
            return
        quoted = shlex.quote(str(root))
        if self.config.web:
            then = (
                "this server (`aintern serve`, which serves every index of its database) serves it once it is indexed"
            )
        elif self.config.all_repos:
            then = "this server (--all-repos) serves it once it is indexed"
        else:
            then = f"start the server with --repo {quoted} (or --all-repos) to use it here"
        raise ToolError(
            f"{root} is not a repository this server serves ({self._names(self.served())}): index it with "
            f"`aintern index {quoted}` and {then}"
        )

    def _matching(self, spec: str, served: list[VectorIndex]) -> list[VectorIndex]:
        from aintern.workspace import resolve_workspaces

        try:
            found = resolve_workspaces(self.store, [spec])
        except (AinternError, OSError, RuntimeError, ValueError):  # (matches nothing; a name too long to be a folder)
            found = []
        ids = {i.id for i in served}
        inside = [i for i in found if i.id in ids]
        if inside:
            return inside
        what = (f"{spec[:200]!r} is not served by this server" if found
                else f"no index matches {spec[:200]!r} (a folder, an index name or a git remote)")  # fmt: skip
        raise ToolError(f"{what}; it serves: {self._names(served)}")

    @staticmethod
    def _names(indexes: list[VectorIndex]) -> str:
        return ", ".join(sorted(f"{i.name} ({i.workspace_path})" for i in indexes)) or "nothing indexed yet"
