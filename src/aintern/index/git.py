"""The commit a workspace is at, read from .git without running git."""

from __future__ import annotations

from pathlib import Path


def git_dir(workspace: Path) -> Path | None:
    for candidate in (workspace, *workspace.parents):
        dot_git = candidate / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():  # worktrees and submodules: "gitdir: <path>"
            text = dot_git.read_text(errors="replace").strip()
            if text.startswith("gitdir:"):
                path = Path(text[7:].strip())
                return path if path.is_absolute() else (candidate / path).resolve()
    return None


def common_dir(gd: Path) -> Path:
    """Where a worktree's shared refs and config are (its main repository's .git), else ``gd`` itself."""
    commondir = gd / "commondir"
    return (gd / commondir.read_text().strip()).resolve() if commondir.is_file() else gd


def head_commit(workspace: str | Path) -> str | None:
    """The commit HEAD points to, or None outside a git repository (or on any read problem)."""
    try:
        gd = git_dir(Path(workspace).resolve())
        if gd is None:
            return None
        head = (gd / "HEAD").read_text().strip()
        if not head.startswith("ref:"):
            return head or None
        ref = head[4:].strip()
        common = common_dir(gd)
        for base in (gd, common):
            if (base / ref).is_file():
                return (base / ref).read_text().strip() or None
        packed = common / "packed-refs"
        if packed.is_file():
            for line in packed.read_text().splitlines():
                if line.endswith(" " + ref):
                    return line.split(" ", 1)[0]
    except OSError:
        return None
    return None


def remote_url(workspace: str | Path) -> str | None:
    """The ``origin`` remote of the workspace's repository, normalised (``github.com/owner/name``) so
    an https and an ssh clone, or a worktree, of one repository compare equal; None if there is none."""
    try:
        gd = git_dir(Path(workspace).resolve())
        if gd is None:
            return None
        common = common_dir(gd)
        section = None
        for raw in (common / "config").read_text(errors="replace").splitlines():
            line = raw.strip()
            if line.startswith("["):
                section = line
            elif section == '[remote "origin"]' and line.replace(" ", "").startswith("url="):
                return normalise_remote(line.split("=", 1)[1].strip())
    except OSError:
        return None
    return None


def normalise_remote(url: str) -> str:
    """``git@github.com:owner/name.git``, ``https://github.com/owner/name`` → ``github.com/owner/name``."""
    url = url.strip().rstrip("/")
    url = url.removesuffix(".git")
    if "://" in url:
        url = url.split("://", 1)[1]
        url = url.split("@", 1)[-1]  # user@host
    elif "@" in url and ":" in url:  # scp-like: git@host:owner/name
        url = url.split("@", 1)[1].replace(":", "/", 1)
    return url.lower()
