"""Milvus Lite on its own, without aintern's pipeline: how writes slow as a collection grows (insert or
upsert, batch size, with or without the BM25 text field), and the recall and latency of IVF_FLAT against
exact search at a million distinct vectors.

    python bench/probes/milvus_alone.py vectors --from DB [DB ...]     # distinct static vectors of indexed code
    python bench/probes/milvus_alone.py ingest --mode full-insert --rows 200000 --batch 256
    python bench/probes/milvus_alone.py recall --nlist 1024 128 0      # 0: FLAT (exact)
    python bench/probes/milvus_alone.py recall --nlist 1024 --questions  # queries: the semble dev questions
    python bench/probes/milvus_alone.py recall --hnsw --ef 64 128 --questions  # HNSW (Milvus Lite 3, a server)
    python bench/probes/milvus_alone.py load --mode full-insert --batch 256  # a fresh process opens ingest's collection
    python bench/probes/milvus_alone.py interim --nlist 100 --nprobe 4   # a model of Lite 2.5's index (needs faiss)

``vectors`` gathers the distinct vectors of the given aintern databases' embedding caches (index real code
with the static model first, e.g. the dev corpora and a virtualenv's site-packages) and grows them to
1,000,000 with noisy copies (each copy = a vector + N(0, 0.03) per dimension, renormalised: cosine ~0.9
to its source, so every row is distinct, unlike bench/scale.py's exact copies). Files go to /tmp/milvus-alone.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import time
from pathlib import Path

import numpy as np

WORK = Path("/tmp/milvus-alone")
# Milvus Lite's server logs through glog, into files in /tmp at every start unless told otherwise.
os.environ.setdefault("GLOG_logtostderr", "1")
os.environ.setdefault("GLOG_minloglevel", "2")
DIMENSION = 256


def gather(a: argparse.Namespace) -> None:
    seen: dict[bytes, bytes] = {}
    texts: list[str] = []
    for db in a.dbs:
        conn = sqlite3.connect(db)
        for digest, blob in conn.execute("SELECT content_hash, vector FROM embedding_cache"):
            if len(blob) == DIMENSION * 4:
                seen.setdefault(bytes(digest), blob)
        texts += [r[0][:8000] for r in conn.execute("SELECT content FROM chunks LIMIT 100000")]
    base = np.stack([np.frombuffer(v, dtype=np.float32) for v in seen.values()])
    norms = np.linalg.norm(base, axis=1)
    base = np.unique((base[norms > 0] / norms[norms > 0, None]).round(5), axis=0).astype(np.float32)
    rng = np.random.default_rng(1)
    parts, total = [base], len(base)
    while total < a.rows:
        noisy = base + rng.normal(0, 0.03, base.shape).astype(np.float32)
        parts.append(noisy / np.linalg.norm(noisy, axis=1, keepdims=True))
        total += len(base)
    WORK.mkdir(exist_ok=True)
    np.save(WORK / "vectors.npy", np.concatenate(parts)[: a.rows].astype(np.float32))
    (WORK / "texts.txt").write_text("\0".join(texts[:100_000]))
    print(f"{len(base):,} distinct vectors, grown to {a.rows:,}; {min(len(texts), 100_000):,} chunk texts")


def collection(path: Path, full: bool, nlist: int, text_match: bool = True, algo: str = "", hnsw: bool = False):  # type: ignore[no-untyped-def]
    from pymilvus import DataType, Function, FunctionType, MilvusClient

    if path.exists():
        os.remove(path)
    client = MilvusClient(str(path))
    schema = client.create_schema(auto_id=False)
    schema.add_field("id", DataType.INT64, is_primary=True)
    schema.add_field("dense", DataType.FLOAT_VECTOR, dim=DIMENSION)
    indexes = client.prepare_index_params()
    if hnsw:
        indexes.add_index("dense", index_type="HNSW", metric_type="IP", params={"M": 16, "efConstruction": 200})
    elif nlist:
        indexes.add_index("dense", index_type="IVF_FLAT", metric_type="IP", params={"nlist": nlist})
    else:
        indexes.add_index("dense", index_type="FLAT", metric_type="IP")
    if full:  # the text aintern's collections have: analysed, with Milvus's BM25 function over it
        schema.add_field(
            "text", DataType.VARCHAR, max_length=65_535, enable_analyzer=True, enable_match=text_match,
            analyzer_params={"tokenizer": "standard"},
        )  # fmt: skip
        schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        schema.add_function(
            Function(
                name="bm25", function_type=FunctionType.BM25, input_field_names=["text"], output_field_names=["sparse"]
            )
        )
        params = {"inverted_index_algo": algo} if algo else {}
        indexes.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25", params=params)
    client.create_collection("v", schema=schema, index_params=indexes, consistency_level="Strong")
    return client


def ingest(a: argparse.Namespace) -> None:
    vectors = np.load(WORK / "vectors.npy", mmap_mode="r")
    texts = (WORK / "texts.txt").read_text().split("\0")
    full = a.mode.startswith("full")
    client = collection(_ingest_path(a), full, 1024, not a.no_text_match, a.sparse_algo)
    write = client.upsert if a.mode.endswith("upsert") else client.insert
    started = mark = time.perf_counter()
    done = 0
    for lo in range(0, a.rows, a.batch):
        rows = []
        for j in range(lo, min(lo + a.batch, a.rows)):
            row = {"id": j, "dense": vectors[j].tolist()}
            if full:
                row["text"] = texts[j % len(texts)][: a.text_chars]
            rows.append(row)
        write("v", rows)
        if (lo + a.batch) // a.every > done // a.every:
            now = time.perf_counter()
            rate = (lo + a.batch - done) / (now - mark)
            print(
                f"{a.mode} batch {a.batch}: {lo + a.batch:>9,} rows  {rate:>6,.0f} rows/s since the last line",
                flush=True,
            )
            done, mark = lo + a.batch, now
    print(f"{a.mode} batch {a.batch}: {a.rows:,} rows in {time.perf_counter() - started:.0f} s")


def _ingest_path(a: argparse.Namespace) -> Path:
    # (Milvus Lite takes file names under 36 characters)
    algo = a.sparse_algo.split("_")[-1].lower()
    cut = f"-t{a.text_chars}" if a.text_chars != 8_000 else ""
    return WORK / f"{a.mode}-{a.batch}{'-nm' if a.no_text_match else ''}{'-' + algo if algo else ''}{cut}.db"


def load(a: argparse.Namespace) -> None:
    """How long a new process waits before its first search of a collection ``ingest`` wrote and closed."""
    from pymilvus import MilvusClient

    vectors = np.load(WORK / "vectors.npy", mmap_mode="r")
    started = time.perf_counter()
    client = MilvusClient(str(_ingest_path(a)))
    opened = time.perf_counter()
    client.load_collection("v")
    loaded = time.perf_counter()
    client.search("v", data=[vectors[7].tolist()], anns_field="dense", limit=10, search_params={"metric_type": "IP"})
    rows = client.query("v", filter="", output_fields=["count(*)"])[0]["count(*)"]
    print(
        f"{_ingest_path(a).name}: {rows:,} rows; open {opened - started:.1f} s, load {loaded - opened:.1f} s, "
        f"first search {(time.perf_counter() - loaded) * 1000:.0f} ms"
    )
    if a.flush:  # (whether a flushed collection loads faster: it does not)
        client.flush("v")
    client.close()


def _questions() -> np.ndarray:
    """The dev questions' static vectors, kept in WORK so that another virtualenv (another Milvus Lite)
    can use them without aintern installed."""
    saved = WORK / "questions.npy"
    if not saved.exists():
        from semble_data import load_repos

        from aintern.embed import get_embedder

        static = get_embedder("static")
        texts = [q.text for repo in load_repos() for q in repo.queries]
        np.save(saved, np.stack([np.asarray(static.embed_query(t), dtype=np.float32) for t in texts]))
    return np.load(saved)


def recall(a: argparse.Namespace) -> None:
    vectors = np.load(WORK / "vectors.npy")
    if a.questions:  # the semble dev split's questions, embedded as a search embeds them
        queries = _questions()
    else:  # stored vectors with noise: cosine ~0.95 to one of them (closer than a question is to code)
        rng = np.random.default_rng(0)
        queries = vectors[rng.choice(len(vectors), a.queries, replace=False)]
        queries = queries + rng.normal(0, 0.02, queries.shape).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    exact = np.argsort(-(queries @ vectors.T), axis=1)[:, :10]
    for nlist in [0] if a.hnsw else a.nlist:
        client = collection(
            WORK / (f"recall-{nlist}.db" if not a.hnsw else "recall-hnsw.db"), False, nlist, hnsw=a.hnsw
        )
        started = time.perf_counter()
        for lo in range(0, len(vectors), 5_000):
            client.insert(
                "v", [{"id": j, "dense": vectors[j].tolist()} for j in range(lo, min(lo + 5_000, len(vectors)))]
            )
        client.flush("v")
        loaded = time.perf_counter() - started
        for nprobe in (a.ef if a.hnsw else a.nprobe) or [None]:  # HNSW: the search's ef instead
            params: dict = {"metric_type": "IP"}
            if nprobe:
                params["params"] = {"ef": nprobe} if a.hnsw else {"nprobe": nprobe}
            times, found = [], []
            for q, truth in zip(queries, exact):
                t = time.perf_counter()
                hits = client.search("v", data=[q.tolist()], anns_field="dense", limit=10, search_params=params)
                times.append(time.perf_counter() - t)
                found.append(len({h["id"] for h in hits[0]} & set(truth.tolist())) / 10)
            kind = f"IVF_FLAT nlist {nlist}" + (f" nprobe {nprobe}" if nprobe else "") if nlist else "FLAT"
            if a.hnsw:
                kind = "HNSW M 16 efConstruction 200" + (f" ef {nprobe}" if nprobe else "")
            print(
                f"{len(vectors):,} vectors, {kind}: loaded in {loaded:.0f} s, recall@10 {np.mean(found):.3f}, "
                f"KNN p50 {np.median(times) * 1000:.1f} ms, p95 {np.percentile(times, 95) * 1000:.1f} ms",
                flush=True,
            )
        client.close()


def interim(a: argparse.Namespace) -> None:
    """A model of what Milvus Lite 2.5 searches: its one growing segment's interim index, an IVF index per
    chunk of rows with segcore's own nlist and nprobe, trained on a share of each chunk (faiss: install
    faiss-cpu, e.g. in the virtualenv that has Milvus Lite 3)."""
    import faiss

    vectors = np.load(WORK / "vectors.npy")
    queries = _questions()
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    exact = np.argsort(-(queries @ vectors.T), axis=1)[:, :10]
    scores, ids = [], []
    for lo in range(0, len(vectors), a.chunk_rows):
        part = vectors[lo : lo + a.chunk_rows]
        index = faiss.IndexIVFFlat(faiss.IndexFlatIP(DIMENSION), DIMENSION, a.nlist, faiss.METRIC_INNER_PRODUCT)
        index.train(part[:: a.train_every])
        index.add(part)
        index.nprobe = a.nprobe
        d, i = index.search(queries, 10)
        scores.append(d)
        ids.append(np.where(i >= 0, i + lo, -1))
    merged, distances = np.hstack(ids), np.hstack(scores)
    top = np.take_along_axis(merged, np.argsort(-distances, axis=1)[:, :10], axis=1)
    found = np.mean([len(set(t) & set(e)) / 10 for t, e in zip(top.tolist(), exact.tolist())])
    print(
        f"IVF per {a.chunk_rows:,}-row chunk, nlist {a.nlist}, nprobe {a.nprobe}, trained on 1 row in "
        f"{a.train_every}: recall@10 {found:.3f} for {len(queries)} questions"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="command", required=True)
    v = sub.add_parser("vectors")
    v.add_argument("--from", dest="dbs", nargs="+", required=True)
    v.add_argument("--rows", type=int, default=1_000_000)
    ingest_parser, load_parser = sub.add_parser("ingest"), sub.add_parser("load")
    for i in (ingest_parser, load_parser):  # what names the collection: load opens the one ingest wrote
        i.add_argument("--mode", choices=["dense-insert", "dense-upsert", "full-insert", "full-upsert"], required=True)
        i.add_argument("--batch", type=int, default=256)
        i.add_argument("--no-text-match", action="store_true", help="without the text index TEXT_MATCH uses")
        i.add_argument("--sparse-algo", default="", help="the BM25 index's inverted_index_algo (default: Milvus's)")
        i.add_argument("--text-chars", type=int, default=8_000, help="each row's text cut to this many characters")
    ingest_parser.add_argument("--rows", type=int, default=200_000)
    ingest_parser.add_argument("--every", type=int, default=20_000)
    load_parser.add_argument("--flush", action="store_true", help="flush the collection before closing it")
    r = sub.add_parser("recall")
    r.add_argument("--nlist", type=int, nargs="+", default=[1024, 128, 0])
    r.add_argument("--queries", type=int, default=200)
    r.add_argument("--questions", action="store_true", help="query with the semble dev questions instead")
    r.add_argument("--nprobe", type=int, nargs="*", help="clusters searched (default: Milvus's)")
    r.add_argument("--hnsw", action="store_true", help="an HNSW index instead (Milvus Lite 3 or a server)")
    r.add_argument("--ef", type=int, nargs="*", help="HNSW: candidates searched (default: Milvus's)")
    m = sub.add_parser("interim")
    m.add_argument("--chunk-rows", type=int, default=32_768)
    m.add_argument("--nlist", type=int, default=100)
    m.add_argument("--nprobe", type=int, default=4)
    m.add_argument("--train-every", type=int, default=10, help="train each chunk's clusters on 1 row in N")
    a = ap.parse_args()
    {"vectors": gather, "ingest": ingest, "load": load, "recall": recall, "interim": interim}[a.command](a)


if __name__ == "__main__":
    main()
