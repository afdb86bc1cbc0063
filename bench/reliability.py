"""What the hardening costs and bounds: a 10,000-word question, and the secret scan's throughput.

    python bench/reliability.py WORKSPACE [--db PATH] [--repeat 3]

Indexes WORKSPACE (incremental, into --db or a temp file), then times a 10,200-word question through
the knowledge service with the in-memory index and through SQLite (as the one-shot CLI), and the secret
scan (prefilter and detect-secrets on candidate lines) over the workspace's indexed files. The failure
counts of the probes are the tests' (tests/test_hardening.py, tests/test_probes.py).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from aintern.knowledge import KnowledgeQueryOptions
from aintern.scan import Scanner
from aintern.scan.secrets import redactor
from aintern.workspace import Workspace


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--db", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    db = a.db or Path(tempfile.mkdtemp()) / "reliability.db"
    ws = Workspace(a.workspace, db)
    ws.build_index()
    index = ws.require_index()
    words = " ".join(f"word{i} array connection" for i in range(3400))
    out: dict[str, object] = {"workspace": str(ws.root), "chunks": index.chunk_count, "query_words": len(words.split())}
    for in_memory in (True, False):
        ws.knowledge.in_memory = in_memory
        ws.knowledge.query("warm up", KnowledgeQueryOptions(workspace_path=str(ws.root)))
        times = []
        for i in range(a.repeat):
            ws.knowledge.cache.clear()
            t = time.perf_counter()
            ws.knowledge.query(f"{words} {i}", KnowledgeQueryOptions(workspace_path=str(ws.root)))
            times.append((time.perf_counter() - t) * 1000)
        out[f"long_query_ms_{'memory' if in_memory else 'sqlite'}"] = [round(x, 1) for x in times]
    texts = []
    for f in Scanner(ws.root, ws.scan_options()).scan().files:
        try:
            texts.append((f.rel, f.path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue
    r = redactor()
    t = time.perf_counter()
    candidates = sum(len(r.candidate_lines(text)) for _, text in texts)
    prefilter = time.perf_counter() - t
    t = time.perf_counter()
    found = sum(len(r.find(text, rel)) for rel, text in texts)  # the prefilter again, then the plugins
    total = time.perf_counter() - t
    size = sum(len(text) for _, text in texts)
    out.update(secret_scan_mb=round(size / 1e6, 2), secret_prefilter_s=round(prefilter, 2),
               secret_scan_s=round(total, 2), secret_mb_per_s=round(size / 1e6 / total, 1),
               candidate_lines=candidates, lines=sum(text.count("\n") + 1 for _, text in texts), findings=found)  # fmt: skip
    print(json.dumps(out))
    ws.close()


if __name__ == "__main__":
    main()
