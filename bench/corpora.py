"""Materialise every benchmark tree that bench/every_set.py reads, from bare git mirrors.

    python bench/corpora.py [--mirror /work/.mirror] [--only dev,own5,commits]

Each repository must be in the mirror folder as ``<owner>+<name>/repo`` (what the `fetch` tool
writes for ``github:<owner>/<name>``; a missing one is named with that source and skipped). Trees:

- the dev split: ``/tmp/semble/corpora/<name>`` (the whole tree at the pinned revision),
- our own sets: ``/tmp/<set>/corpora/<name>`` (``bench/sets/<set>/repos.json``),
- the commit sets: flask and click from their PyPI sdists into ``/tmp/commits-bench``; PHPMailer,
  Carbon, Hono and xstate (section 31 of docs/benchmarks.md) into ``/tmp/commits-more``; Caddy, Coil
  and FluentValidation (own10's trees) into ``/tmp/commits-own10``, each with its query set made by
  ``../shared/bench/commits/make_queries.py --max 60`` at the tree's revision.

A tree that is already there is left alone (delete it to make it again).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared" / "bench"
#: (set name, owner/name, snapshot) of the commit sets made from a mirror.
COMMIT_TREES = [
    ("commits-more", "phpmailer", "PHPMailer/PHPMailer", "4a489474e7"),
    ("commits-more", "carbon", "briannesbitt/Carbon", "b13f05955d"),
    ("commits-more", "hono", "honojs/hono", "28a9c12891"),
    ("commits-more", "xstate", "statelyai/xstate", "b1811bf77b"),
    ("commits-own10", "caddy", "caddyserver/caddy", "0cf03d32f7d99cf160d5375e8a40fbe3d910d515"),
    ("commits-own10", "coil", "coil-kt/coil", "a42b7709600630cd2bed73517832442b98d4d7b5"),
    (
        "commits-own10",
        "fluentvalidation",
        "FluentValidation/FluentValidation",
        "ea299fe59719950018fa240dab86da414190d7f4",
    ),
]
SDISTS = [("flask", "3.1.3"), ("click", "8.5.0")]


def mirror_of(mirror: Path, repo: str) -> Path | None:
    path = mirror / repo.replace("/", "+") / "repo"
    if path.is_dir():
        return path
    print(f"  missing mirror: fetch github:{repo}", file=sys.stderr)
    return None


def extract(git_dir: Path, revision: str, dest: Path) -> bool:
    """``git archive`` of one revision into ``dest``; where the mirror lacks a blob (coil's test images, four
    of ktor's files), the tree is written file by file without those files and without symbolic links."""
    if dest.is_dir() and any(dest.iterdir()):
        return True
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "--git-dir", str(git_dir), "archive", revision], capture_output=True)
    if archive.returncode == 0:
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
        return True
    # A mirror may lack a blob or two (coil's test image): write the tree file by file without them.
    listing = subprocess.run(
        ["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-z", revision], capture_output=True, check=True
    ).stdout.split(b"\0")
    skipped = 0
    for entry in filter(None, listing):
        meta, path = entry.split(b"\t", 1)
        mode, kind, sha = meta.split()
        if kind != b"blob" or mode == b"120000":
            continue  # (symbolic links too: the trees measured in docs/benchmarks.md were written without them)
        blob = subprocess.run(["git", "--git-dir", str(git_dir), "cat-file", "blob", sha], capture_output=True)
        if blob.returncode:
            skipped += 1
            continue
        target = dest / path.decode("utf-8", "surrogateescape")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blob.stdout)
    print(f"  {dest}: written file by file, {skipped} missing from the mirror", file=sys.stderr)
    return True


def semble_sets(mirror: Path, only: set[str]) -> None:
    sets = [("dev", SHARED / "semble", Path("/tmp/semble/corpora"))]
    for folder in sorted(HERE.glob("sets/own*"), key=lambda p: int(p.name[3:] or 1)):
        sets.append((folder.name, folder, Path(f"/tmp/{folder.name}/corpora")))
    for label, folder, corpora in sets:
        if only and label not in only:
            continue
        for entry in json.loads((folder / "repos.json").read_text()):
            repo = entry["url"].removeprefix("https://github.com/").removesuffix(".git")
            git_dir = mirror_of(mirror, repo)
            if git_dir and extract(git_dir, entry["revision"], corpora / entry["name"]):
                print(f"{label}: {corpora / entry['name']}")


def commit_sets(mirror: Path) -> None:
    bench = Path("/tmp/commits-bench")
    for package, version in SDISTS:
        tree = bench / package
        if not tree.is_dir():
            bench.mkdir(parents=True, exist_ok=True)
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps",
                 f"{package}=={version}", "-d", str(bench)],
                check=True,
            )  # fmt: skip
            sdist_file = bench / f"{package}-{version}.tar.gz"
            expected = json.loads((SHARED / "commits" / f"{package}.json").read_text())["corpus"]["sdist_sha256"]
            if hashlib.sha256(sdist_file.read_bytes()).hexdigest() != expected:
                sys.exit(f"{sdist_file}: not the sdist the commit set was made from (sha256 differs)")
            with tarfile.open(sdist_file) as sdist:
                sdist.extractall(bench, filter="data")
            (bench / f"{package}-{version}").rename(tree)
        print(f"commits: {tree}")
    for folder, name, repo, snapshot in COMMIT_TREES:
        git_dir = mirror_of(mirror, repo)
        if not git_dir:
            continue
        extract(git_dir, snapshot, Path("/tmp") / folder / name)
        queries = Path("/tmp") / folder / f"{name}.json"
        if not queries.exists():
            subprocess.run(
                [sys.executable, str(SHARED / "commits" / "make_queries.py"), "--git-dir", str(git_dir),
                 "--repo", repo, "--snapshot", snapshot, "--id-prefix", name, "--max", "60", "--out", str(queries)],
                check=True, capture_output=True,
            )  # fmt: skip
        print(f"commits: {queries}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirror", default="/work/.mirror", help="folder of <owner>+<name>/repo bare mirrors")
    ap.add_argument("--only", default="", help="comma-separated: dev, own, own2 ..., commits (default: all)")
    args = ap.parse_args()
    only = set(filter(None, args.only.split(",")))
    if not only or only - {"commits"}:
        semble_sets(Path(args.mirror), only - {"commits"})
    if not only or "commits" in only:
        commit_sets(Path(args.mirror))


if __name__ == "__main__":
    main()
