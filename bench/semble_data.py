"""Load the semble-derived benchmark (../shared/bench/semble) and score rankings as its README says."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

SHARED = Path(os.environ.get("AINTERN_SHARED", Path(__file__).resolve().parents[2] / "shared"))
#: The query set: the shared semble-derived dev split, or another folder of the same shape (SEMBLE_SET),
#: such as bench/sets/own.
SEMBLE = Path(os.environ.get("SEMBLE_SET", SHARED / "bench" / "semble"))
CORPORA = Path(os.environ.get("SEMBLE_CORPORA", "/tmp/semble/corpora"))


@dataclass
class Query:
    text: str
    targets: list[str]
    category: str


@dataclass
class Repo:
    name: str
    language: str
    root: Path  # the directory that is indexed
    prefix: str  # benchmark_root, to turn indexed paths back into repo-relative ones
    queries: list[Query]


def load_repos(names: list[str] | None = None, whole: bool = False) -> list[Repo]:
    """The set's repositories (``names``: only these); ``whole``: each indexed whole, not its benchmark_root."""
    repos = []
    for entry in json.loads((SEMBLE / "repos.json").read_text()):
        if names and entry["name"] not in names:
            continue
        root_rel = "" if whole else entry.get("benchmark_root") or ""
        root = CORPORA / entry["name"] / root_rel if root_rel not in ("", ".") else CORPORA / entry["name"]
        prefix = "" if root_rel in ("", ".") else root_rel.rstrip("/") + "/"
        queries = []
        for q in json.loads((SEMBLE / "annotations" / f"{entry['name']}.json").read_text()):
            targets = [t if isinstance(t, str) else t["path"] for t in q["relevant"] + q.get("secondary", [])]
            queries.append(Query(q["query"], targets, q["category"]))
        repos.append(Repo(entry["name"], entry["language"], root, prefix, queries))
    return repos


def files_on_disk(repo: Repo) -> set[str]:
    """Every file of the indexed tree, repo-relative: the targets that count (README, "exist in the indexed
    tree"). Not the files aintern indexed, so that a relevant file the scanner leaves out scores 0."""
    return {repo.prefix + p.relative_to(repo.root).as_posix() for p in repo.root.rglob("*") if p.is_file()}


def path_matches(path: str, target: str) -> bool:
    return path == target or path.endswith("/" + target) or target.endswith("/" + path)


def ndcg_at_10(ranked_paths: list[str], targets: list[str], existing: set[str]) -> float:
    """NDCG@10 over chunk results: each target scores at the rank of its first matching chunk."""
    present = [t for t in targets if any(path_matches(p, t) for p in existing)]
    if not present:
        return 0.0
    dcg = 0.0
    for t in present:
        for rank, p in enumerate(ranked_paths[:10]):
            if path_matches(p, t):
                dcg += 1.0 / math.log2(rank + 2)
                break
    ideal = sum(1.0 / math.log2(r + 2) for r in range(min(10, len(present))))
    return dcg / ideal
