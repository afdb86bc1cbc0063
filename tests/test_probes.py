"""Probes at a size CI affords: generated hostile queries and a hostile tree (docs/benchmarks.md, Reliability)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from workspaces import db_consistent, make_workspace

from aintern.knowledge import KnowledgeQueryOptions
from aintern.workspace import Workspace

PIECES = [
    "\x00", "\x1b[31m", "\x7f", "\u200b", "\ufeff", "\u202e", "\udcff", "\ud800", "\U0001f600", "שלום", "مرحبا",
    '"', "'", "*", "^", ":", "(", ")", "NEAR(", " OR ", " AND ", " NOT ", "col:", "{", "}", "%", "_", "\\",
    "'; DROP TABLE chunks; --", "database", "connection", "open_connection", "User", "GetUserById", "::", "->",
    "\n", "\t", " ", "x" * 300, "\u0301", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "ＦＵＬＬ", "İ", "ß",
]  # fmt: skip


def generated_queries(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        if i % 100 == 0:
            out.append(" ".join(rng.choice(PIECES) for _ in range(rng.randint(2000, 4000))))  # huge
        else:
            out.append("".join(rng.choice(PIECES) for _ in range(rng.randint(1, 12))))
    return out


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    tmp = tmp_path_factory.mktemp("fuzz")
    ws = Workspace(make_workspace(tmp / "project"), tmp / "fuzz.db")
    ws.build_index()
    return ws


def test_query_fuzz(indexed: Workspace) -> None:
    """2,000 generated strings through query, suggestions, files and context: an answer or ValueError('empty')."""
    ws = indexed
    root = str(ws.root)
    failures = []
    for q in generated_queries(2000):
        try:
            ws.knowledge.query(q, KnowledgeQueryOptions(workspace_path=root, min_relevance=0.0))
            ws.knowledge.query_suggestions(q, root)
        except ValueError as exc:
            if "empty" not in str(exc):
                failures.append((q[:40], repr(exc)))
        except Exception as exc:
            failures.append((q[:40], repr(exc)))
    for q in generated_queries(200, seed=8):
        try:
            ws.knowledge.find_relevant_files(q, root)
            ws.knowledge.build_context(q, root)
        except ValueError as exc:
            if "empty" not in str(exc):
                failures.append((q[:40], repr(exc)))
        except Exception as exc:
            failures.append((q[:40], repr(exc)))
    assert not failures, failures[:5]


def test_hostile_tree(tmp_path: Path) -> None:
    """Binary, undecodable, huge, minified, looping, escaping, odd and many files: indexed or skipped with a reason."""
    root = make_workspace(tmp_path / "project")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "leak.py").write_text("SECRET_OUTSIDE = 1\n")
    (root / "binary.py").write_bytes(b"\x00\x01\x02" * 1000)
    (root / "latin1.py").write_bytes("café = 1\n".encode("latin-1"))
    with open(root / "huge.py", "wb") as f:  # 50 MB
        f.truncate(50 * 1024 * 1024)
    (root / "app.min.js").write_text("var a=1;" * 20000)
    (root / "bundle.js").write_text("function f(){return 1}" * 5000)
    os.symlink(root, root / "loop")
    os.symlink(outside, root / "escape")
    os.symlink(outside / "leak.py", root / "leak_link.py")
    os.symlink(root / "nowhere.py", root / "dangling.py")
    os.mkfifo(root / "fifo.py")
    with open(os.path.join(os.fsencode(root), b"bad_\xff.py"), "wb") as f:
        f.write(b"x = 1\n")
    for name in ("spaces in name.py", "ünïcödé.py", "-dash.py", "semi;colon.py", "quote'd.py", "new\nline.py"):
        (root / name).write_text(f"def odd(): return {name!r}\n")
    many = root / "many"
    for i in range(10_000):
        d = many / f"d{i // 500}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n")
    ws = Workspace(root, tmp_path / "hostile.db")
    result = ws.build_index()
    assert result.success, result.error_message
    reasons = {s.rel: s.reason for s in result.skipped}
    assert reasons["binary.py"].startswith("binary")
    assert reasons["latin1.py"].startswith("undecodable")
    assert reasons["huge.py"].startswith("too large")
    assert "minified" in reasons["bundle.js"]
    assert reasons["loop"] == "symlink loop"
    assert reasons["escape"] == "symlink to outside the workspace"
    assert reasons["leak_link.py"] == "symlink to outside the workspace"
    assert reasons["dangling.py"].startswith("unreadable")
    assert reasons["fifo.py"] == "not a regular file (FIFO)"
    assert reasons["bad_\\xff.py"] == "file name is not valid UTF-8"
    index = ws.require_index()
    paths = set(ws.store.get_files(index.id))
    assert {"spaces in name.py", "ünïcödé.py", "-dash.py", "semi;colon.py", "quote'd.py", "new\nline.py"} <= paths
    assert sum(p.startswith("many/") for p in paths) == 10_000
    db_consistent(ws.store, index.id)
    stored = "\n".join(r[0] for r in ws.store.conn.execute("SELECT content FROM chunks"))
    assert "SECRET_OUTSIDE" not in stored
    # A second run changes nothing and reports the same reasons.
    again = ws.build_index()
    assert again.success and again.files_indexed == 0
    ws.close()
