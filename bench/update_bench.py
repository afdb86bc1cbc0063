"""How fast an edit becomes searchable: one saved file through ``index_files`` (what the watcher runs)
against a full incremental ``aintern update``, in a workspace of many files.

    python bench/update_bench.py [--files 20000] [--source DIR] [--repeat 5]

The workspace is built in a temp folder: ``--files`` files, copied round-robin from the code files of
``--source`` (default: the small functions it writes itself) under distinct paths. Prints one JSON line:
cold index time, a no-op full update (in process, and as ``aintern update``: a process, start-up
included), ``aintern update`` after editing 10 files, and per save: ``index_files`` time and
save-to-searchable time (the edit is a new function whose name a symbol query then finds).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from aintern.knowledge import KnowledgeQueryOptions
from aintern.workspace import Workspace


def build(root: Path, n: int, source: Path | None) -> None:
    texts: list[str] = []
    if source is not None:
        texts = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(source.rglob("*.py"))[:2000]]
    for i in range(n):
        d = root / f"pkg{i // 500}"
        d.mkdir(parents=True, exist_ok=True)
        text = texts[i % len(texts)] if texts else f"def handler_{i}(request):\n    return {i}\n"
        (d / f"mod{i}.py").write_text(text + f"\n# file {i}\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=20_000)
    ap.add_argument("--source", type=Path)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        build(root, a.files, a.source)
        ws = Workspace(root, Path(tmp) / "u.db")
        t = time.perf_counter()
        first = ws.build_index()
        cold = time.perf_counter() - t
        t = time.perf_counter()
        noop = ws.build_index()
        noop_s = time.perf_counter() - t
        env = {**os.environ, "AINTERN_DB": str(Path(tmp) / "u.db")}
        update = [sys.executable, "-m", "aintern", "update", str(root)]
        cli_noop = []
        for _ in range(3):
            t = time.perf_counter()
            subprocess.run(update, env=env, check=True, capture_output=True)
            cli_noop.append(time.perf_counter() - t)
        for i in range(10):
            edited = root / "pkg7" / f"mod{3500 + i}.py"
            edited.write_text(edited.read_text() + f"\ndef edited_function_{i}():\n    return {i}\n")
        t = time.perf_counter()
        subprocess.run(update, env=env, check=True, capture_output=True)
        cli_ten = time.perf_counter() - t
        saves, searchable = [], []
        for i in range(a.repeat):
            target = root / "pkg3" / f"mod{1500 + i}.py"
            name = f"freshly_saved_function_{i}"
            target.write_text(target.read_text() + f"\ndef {name}():\n    return {i}\n")
            t = time.perf_counter()
            result = ws.index_files([target.relative_to(root).as_posix()])
            saves.append((time.perf_counter() - t) * 1000)
            found = ws.knowledge.query(name, KnowledgeQueryOptions(workspace_path=str(root), min_relevance=0.0))
            searchable.append((time.perf_counter() - t) * 1000)
            assert result.files_indexed == 1 and found.chunks and found.chunks[0].file_path.endswith(target.name)
        print(json.dumps({
            "files": first.files_indexed, "chunks": first.chunks_created, "cold_s": round(cold, 1),
            "noop_update_s": round(noop_s, 2), "noop_files_unchanged": noop.files_unchanged,
            "cli_noop_update_s": [round(x, 2) for x in cli_noop], "cli_update_10_edited_s": round(cli_ten, 2),
            "index_files_ms": [round(x) for x in saves], "save_to_searchable_ms": [round(x) for x in searchable],
            "save_to_searchable_p50_ms": round(statistics.median(searchable)),
        }))  # fmt: skip
        ws.close()


if __name__ == "__main__":
    main()
