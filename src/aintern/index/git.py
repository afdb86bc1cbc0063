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
        common = gd
        if (gd / "commondir").is_file():
            common = (gd / (gd / "commondir").read_text().strip()).resolve()
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
