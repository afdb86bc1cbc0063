"""Fit the file map: a linear map from the static model's space to MiniLM's, so that a search can compare
a question's static vector with files' MiniLM vectors without running the transformer (docs/benchmarks.md
section 43).

A file's vector is MiniLM's embedding of its summary (path, name in words, the names it defines:
``aintern.index.files.summary_text``). A question's MiniLM vector would cost a search ~150 ms of loading
onnxruntime; its static vector is already there. ``W`` is fit by ridge regression so that a text's static
vector times ``W`` is near its MiniLM vector, over two kinds of text from real code:

- the summaries of every file of code (what the file vectors are made of), and
- comment lines and definition names in words (written the way questions are: ``train_static.phrases``).

Then ``static(q) @ W . f`` ranks files the way ``minilm(q) . f`` would, and an index stores each file's
vector already mapped back, ``g = W f`` (256 numbers), so a search takes one dot product per file.
``lam`` is chosen on every fifth tree held out from the fit (how many of MiniLM's ten nearest files the
map finds for the held-out trees' comment lines), never on the benchmark; the shipped map is then fit
on every tree.

    # the corpus: scripts/static_corpus.txt, both batches (each tree a `git archive` of the commit listed)
    python scripts/train_file_map.py --work /tmp/train/filemap /tmp/train/src/* /tmp/train/src2/*
    python scripts/train_file_map.py --work /tmp/train/filemap --install   # writes file-map.npy
    python scripts/train_file_map.py --work /tmp/train/filemap --table DIR/static-code.npy   # DIR/file-map.npy
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from build_models import write_manifest
from train_static import phrases

from aintern.embed.onnx import OnnxEmbedder
from aintern.embed.static import StaticEmbedder
from aintern.embed.tokenizer import MODELS_DIR
from aintern.index import Indexer, IndexingOptions
from aintern.index.files import summary_text
from aintern.store import SqliteStore

LAMBDAS = (0.1, 1.0, 10.0)
#: Agreement is measured on the held-out trees' own files: MiniLM's ``TOP`` nearest against the map's.
TOP = 10


def collect(roots: list[Path], work: Path) -> list[dict[str, str]]:
    """(tree, kind, text) rows: each file's summary and the corpus's phrases (cached in work/texts.jsonl)."""
    path = work / "texts.jsonl"
    if path.exists():
        return [json.loads(line) for line in path.open()]
    work.mkdir(parents=True, exist_ok=True)
    store = SqliteStore(work / "corpus.db")
    embedder = StaticEmbedder()
    rows: list[dict[str, str]] = []
    for root in roots:
        index_id = Indexer(store, embedder, IndexingOptions(file_vectors=False)).index(root).index_id
        rows += [
            {"tree": root.name, "kind": "summary", "text": summary_text(p, names)}
            for _, p, names in store.file_summaries(index_id)
        ]
        chunks = store.conn.execute(
            "SELECT coalesce(symbol_type, 'code') || ' ' || coalesce(symbol_name, ''), content FROM chunks "
            "WHERE index_id = ? AND chunk_type = 'code'",
            (index_id,),
        )
        texts = [f"{header}\n{content}" for header, content in chunks]
        (work / root.name).mkdir(exist_ok=True)
        rows += [{"tree": root.name, "kind": "phrase", "text": t} for t in phrases(texts, work / root.name)]
        print(f"{root.name}: {len(rows)} texts so far", flush=True)
    store.close()
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return rows


def vectors(rows: list[dict[str, str]], work: Path, table: Path | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Each text's static and MiniLM vectors (cached in work/static.npy, work/minilm.npy; another
    ``table``'s static vectors in work/static-FOLDER-NAME.npy, beside the same MiniLM vectors)."""
    texts = [r["text"] for r in rows]
    static_path = work / (f"static-{table.parent.name}-{table.stem}.npy" if table else "static.npy")
    minilm_path = work / "minilm.npy"
    if not static_path.exists():
        embedder = StaticEmbedder(table) if table else StaticEmbedder()
        np.save(static_path, np.asarray(embedder.embed_batch(texts), dtype=np.float32))
    if not minilm_path.exists():
        teacher = OnnxEmbedder()
        parts = [np.asarray(teacher.embed_batch(texts[i : i + 512])) for i in range(0, len(texts), 512)]
        np.save(minilm_path, np.concatenate(parts).astype(np.float32))
    return np.load(static_path), np.load(minilm_path)


def fit(static: np.ndarray, minilm: np.ndarray, lam: float) -> np.ndarray:
    """``W`` minimising ||static W - minilm||^2 + lam ||W||^2."""
    return np.linalg.solve(static.T @ static + lam * np.eye(static.shape[1]), static.T @ minilm).astype(np.float32)


def held_out(rows: list[dict[str, str]]) -> list[str]:
    """Every fifth tree, by name: the trees the ridge constant is chosen on."""
    return sorted({r["tree"] for r in rows})[::5]


def agreement(rows: list[dict[str, str]], static: np.ndarray, minilm: np.ndarray, w: np.ndarray | None) -> float:
    """For each held-out tree's phrases: the share of MiniLM's ``TOP`` nearest files of that tree that the
    map finds (``w`` None: the static vectors of the files instead, i.e. without file vectors)."""
    shares = []
    for tree in held_out(rows):
        files = [i for i, r in enumerate(rows) if r["tree"] == tree and r["kind"] == "summary"]
        asked = [i for i, r in enumerate(rows) if r["tree"] == tree and r["kind"] == "phrase"]
        if len(files) < 2 * TOP or not asked:
            continue
        truth = np.argsort(-(minilm[asked] @ minilm[files].T), axis=1)[:, :TOP]
        guess = static[asked] @ (w @ minilm[files].T if w is not None else static[files].T)
        found = np.argsort(-guess, axis=1)[:, :TOP]
        shares += [len(set(a) & set(b)) / TOP for a, b in zip(truth, found)]
    return float(np.mean(shares))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("roots", nargs="*", type=Path, help="source trees (the first run)")
    ap.add_argument("--work", type=Path, required=True, help="cache of texts and vectors")
    ap.add_argument("--install", action="store_true", help="write the map into the package's models")
    ap.add_argument(
        "--table",
        type=Path,
        help="a static token table other than the installed one; the map is "
        "written beside it (TABLE's folder/file-map.npy), where bench/eval_retrieval.py --table finds it",
    )
    args = ap.parse_args()
    rows = collect(args.roots, args.work)
    static, minilm = vectors(rows, args.work, args.table)
    held = set(held_out(rows))
    train = np.array([r["tree"] not in held for r in rows])
    print(f"{len(rows)} texts, {len(held)} trees held out; without the map {agreement(rows, static, minilm, None):.3f}")
    scores = {lam: agreement(rows, static, minilm, fit(static[train], minilm[train], lam)) for lam in LAMBDAS}
    for lam, score in scores.items():
        print(f"lam {lam}: MiniLM's {TOP} nearest files found {score:.3f}")
    lam = max(scores, key=lambda x: scores[x])
    w = fit(static, minilm, lam)
    out = args.table.with_name("file-map.npy") if args.table else args.work / "file-map.npy"
    np.save(out, w)
    print(f"lam {lam}: fit on every tree, {out}")
    if args.install:
        np.save(MODELS_DIR / "file-map.npy", w)
        write_manifest()
        print(f"installed {MODELS_DIR / 'file-map.npy'}")


if __name__ == "__main__":
    main()
