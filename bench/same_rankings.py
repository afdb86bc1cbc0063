"""Whether a change to the query path changed any answer: every query of the semble-derived dev set,
through ``KnowledgeService.query`` on both of its paths (the in-memory index a server holds, and
SQLite's sqlite-vec and FTS5), its top 10 saved as (path, line, relevance to 12 digits).

    python bench/same_rankings.py --save /tmp/before.json     # at the old commit
    python bench/same_rankings.py --compare /tmp/before.json  # at the new one: lists what differs

A speed-up that leaves every ranking and relevance as it was cannot have changed a quality number.
The database is bench/multi_repo.py's (every dev repository indexed in one file; built if missing).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from semble_data import load_repos

from aintern.embed import get_embedder
from aintern.index import Indexer, IndexingOptions
from aintern.knowledge import KnowledgeQueryOptions, KnowledgeService
from aintern.store import SqliteStore


def rankings(db: Path) -> dict[str, list[list[object]]]:
    store = SqliteStore(db)
    repos = load_repos()
    embedder = get_embedder("static")
    for repo in repos:
        if store.get_index_for_workspace(repo.root) is None:
            Indexer(store, embedder, IndexingOptions()).index(repo.root)
    services = {"memory": KnowledgeService(SqliteStore(db)), "sqlite": KnowledgeService(store, in_memory=False)}
    out: dict[str, list[list[object]]] = {}
    for repo in repos:
        options = KnowledgeQueryOptions(workspace_path=str(repo.root.resolve()), max_results=10, min_relevance=0.0)
        for q in repo.queries:
            for path, service in services.items():
                result = service.query(q.text, options)
                out[f"{repo.name}\t{path}\t{q.text}"] = [
                    [c.file_path, c.start_line, round(c.relevance, 12)] for c in result.chunks
                ]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--db", type=Path, default=Path(os.environ.get("AINTERN_BENCH_CACHE", "/tmp/aintern-bench")) / "all-repos.db"
    )
    group = ap.add_mutually_exclusive_group(required=True)
    group.add_argument("--save", type=Path)
    group.add_argument("--compare", type=Path)
    args = ap.parse_args()
    now = rankings(args.db)
    if args.save:
        args.save.write_text(json.dumps(now))
        print(f"{len(now)} rankings saved to {args.save}")
        return
    before = json.loads(args.compare.read_text())
    differ = [k for k in before.keys() | now.keys() if before.get(k) != now.get(k)]
    for key in sorted(differ)[:20]:
        print(key.replace("\t", " | "), "\n  before:", before.get(key), "\n  now:   ", now.get(key))
    print(f"{len(now)} rankings, {len(differ)} differ")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
