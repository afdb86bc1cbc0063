"""Milvus as an index's search engine: its vectors and its keyword index, for indexes that outgrow one
SQLite file (Milvus Lite in a local file, or a Milvus server or cluster that a team shares).

The SQLite database keeps what it keeps for every index — the index record, the files and their chunks
(the commit point of each file, and what definitions, names, expansion and relevance read) — and
Milvus holds, per chunk, the dense vector, the text its BM25 function indexes, and scalar fields to
filter on (path, language, chunk and symbol type, lines, content hash). One collection per index.

Keyword text: the same tokens FTS5 indexes (SqliteStore.keyword_tokens: porter-stemmed, identifiers
split into their parts), each repeated by its column's weight (path 2, symbol 3, body 1), so Milvus's
BM25 ranks on what the SQLite path ranks on; its standard tokenizer leaves those tokens whole.

Crash safety without cross-system transactions: a file's rows are written to Milvus (keyed by the
SQLite chunk id) before the SQLite transaction that records the file commits, and deleted only after a
commit that removed them. A crash in between leaves rows SQLite does not know (never returned: a hit
is only what SQLite has), and the next run deletes them (``sweep``); a transaction's rows all have ids
above the highest committed one, and rows above it are deleted before they are inserted, so ids that
come back after a rollback never hold two rows.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aintern.errors import StoreError

if TYPE_CHECKING:
    from aintern.embed.base import QueryVector

#: Milvus's VARCHAR limit, in bytes.
_MAX_TEXT = 65_535
_MAX_PATH = 4_096
#: Ids per delete or query expression.
_BATCH = 1_000
#: Collections a process keeps loaded at once (a loaded collection holds memory: ~30 MB each in Milvus
#: Lite; docs/benchmarks.md section 17); the least recently used beyond this are released
#: and load again when next searched. AINTERN_MILVUS_LOADED overrides it.
MAX_LOADED = int(os.environ.get("AINTERN_MILVUS_LOADED") or 64)
_loaded: OrderedDict[tuple[str, str], weakref.WeakSet[MilvusSearch]] = OrderedDict()
_loaded_lock = threading.Lock()


@dataclass(frozen=True)
class MilvusConfig:
    """Where an index's Milvus collection lives: ``uri`` a ``*.db`` path (Milvus Lite) or a server's URL;
    ``token_env`` the name of the environment variable holding its token, if it needs one."""

    uri: str
    collection: str = ""
    token_env: str | None = None
    #: The dense vectors' index: "flat" (exact, the default) or "ivf_flat" (approximate: ``nprobe`` of
    #: ``nlist`` clusters searched), for collections of millions of chunks (bench/scale.py measures it).
    #: Milvus Lite 2.5 ignores both: it searches every collection through segcore's interim index, whose
    #: own nlist and nprobe give recall@10 0.68 for questions at 1M (docs sections 21-22); a server
    #: honours them.
    vector_index: str = "flat"
    nlist: int = 1024
    nprobe: int = 32

    @property
    def lite(self) -> bool:
        """Whether this is Milvus Lite (a local ``*.db`` file) rather than a server."""
        return self.uri.endswith(".db")

    def as_settings(self) -> dict[str, Any]:
        out: dict[str, Any] = {"engine": "milvus", "uri": self.uri, "collection": self.collection}
        if self.token_env:
            out["token_env"] = self.token_env
        if self.vector_index != "flat":
            out.update(vector_index=self.vector_index, nlist=self.nlist, nprobe=self.nprobe)
        return out

    @classmethod
    def from_settings(cls, settings: dict[str, Any]) -> MilvusConfig | None:
        store = settings.get("store")
        if not isinstance(store, dict) or store.get("engine") != "milvus":
            return None
        return cls(
            str(store["uri"]), str(store["collection"]), store.get("token_env"),
            str(store.get("vector_index", "flat")), int(store.get("nlist", 1024)), int(store.get("nprobe", 32)),
        )  # fmt: skip


@dataclass(frozen=True)
class MilvusRow:
    """What Milvus holds of one chunk."""

    chunk_id: int
    vector: Sequence[float]
    keyword_text: str
    path: str
    language: str
    chunk_type: str
    symbol_type: str
    symbol: str
    start_line: int
    end_line: int
    content_hash: str


class MilvusSearch:
    """One index's collection: upsert and delete rows, dense KNN and BM25 search with filters."""

    def __init__(self, config: MilvusConfig, dimension: int) -> None:
        self.config = config
        self.dimension = dimension
        self._client: Any = None
        self._loaded = False
        self._lite = config.lite
        # Whether the server answers TEXT_MATCH (unknown until asked). Milvus Lite does not, though it
        # would keep the text index for it (docs/benchmarks.md section 21: a fifth of a collection's load).
        self._text_match: bool | None = False if self._lite else None

    @property
    def client(self) -> Any:
        if self._client is None:
            MilvusClient = client_class()
            token = os.environ.get(self.config.token_env, "") if self.config.token_env else ""
            if self.config.token_env and not token:
                raise StoreError(f"the Milvus token variable {self.config.token_env} is not set")
            uri, lite = self.config.uri, self._lite
            if lite:  # Milvus Lite: a local file, its folder made if needed
                os.makedirs(os.path.dirname(os.path.abspath(uri)), exist_ok=True)
                if not _lock_lite_file(uri):
                    raise StoreError(
                        f"Milvus Lite at {uri} is in use by another process (aintern serve, mcp, chat or watch?): "
                        "Milvus Lite serves one process at a time. Stop that process or ask it (aintern serve "
                        "answers /api/search), or keep the index in a Milvus server"
                    )
            try:
                # (A failure is raised below with the URI; pymilvus would also log it, naming the connection.)
                with (
                    warnings.catch_warnings(),
                    _lite_server_output(uri + ".log" if lite else None),
                    _quiet("pymilvus", "pymilvus.milvus_client"),
                ):
                    warnings.simplefilter("ignore", UserWarning)
                    # A connection of its own: pymilvus names a connection after its URI, so every client of
                    # one URI would share one, and closing any of them (a store that indexed, in a server)
                    # would cut off the others ("should create connection first").
                    import uuid  # (not imported by a search without Milvus)

                    self._client = MilvusClient(uri=uri, token=token, alias=f"aintern-{uuid.uuid4().hex}")
            except Exception as exc:
                raise StoreError(f"cannot open Milvus at {uri}: {exc}") from exc
        return self._client

    def load(self) -> bool:
        """Load the collection for searching now, if it exists (whether it does). Milvus Lite reads the whole
        collection in then (7.3 s for 200k rows, most of it the BM25 field's; docs/benchmarks.md section 21):
        a server calls this when it starts (SqliteStore.preload), so its first question does not wait."""
        return self._ready()

    def _ready(self) -> bool:
        """Whether the collection exists, loaded for searching (a collection another process made, or one
        released, is loaded first)."""
        if self._loaded:
            self._used()
            return True
        if not self.client.has_collection(self.config.collection):
            return False
        state = self.client.get_load_state(self.config.collection).get("state")
        if "Loaded" not in str(state):
            self.client.load_collection(self.config.collection)
        self._loaded = True
        self._used()
        return True

    def _used(self) -> None:
        """Mark the collection used now, releasing the least recently used ones beyond MAX_LOADED."""
        key = (self.config.uri, self.config.collection)
        with _loaded_lock:
            _loaded.setdefault(key, weakref.WeakSet()).add(self)
            _loaded.move_to_end(key)
            idle = [_loaded.popitem(last=False)[1] for _ in range(max(0, len(_loaded) - MAX_LOADED))]
        for users in idle:
            for other in list(users):  # every object of this process that searches that collection
                other._release()

    def release(self) -> None:
        """Free the memory the loaded collection holds on the server (its next use loads it again)."""
        with _loaded_lock:
            users = _loaded.pop((self.config.uri, self.config.collection), weakref.WeakSet())
        users.add(self)
        for other in list(users):
            other._release()

    def _forget(self) -> None:
        """This object no longer counts among the collection's users (it is closed, or it dropped it)."""
        key = (self.config.uri, self.config.collection)
        with _loaded_lock:
            users = _loaded.get(key)
            if users is not None:
                users.discard(self)
                if not users:
                    del _loaded[key]

    def _release(self) -> None:
        if self._loaded and self._client is not None:
            with contextlib.suppress(Exception):  # (gone, or the server is: the next use says so)
                self._client.release_collection(self.config.collection)
        self._loaded = False

    def create(self) -> None:
        """The collection, if it does not exist yet."""
        from pymilvus import DataType, Function, FunctionType

        name = self.config.collection
        if self.client.has_collection(name):
            return
        schema = self.client.create_schema(auto_id=False)
        schema.add_field("id", DataType.INT64, is_primary=True)
        schema.add_field("dense", DataType.FLOAT_VECTOR, dim=self.dimension)
        schema.add_field(
            "text", DataType.VARCHAR, max_length=_MAX_TEXT, enable_analyzer=True, enable_match=not self._lite,
            analyzer_params={"tokenizer": "standard"},
        )  # fmt: skip
        schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        for field in ("path", "symbol"):
            schema.add_field(field, DataType.VARCHAR, max_length=_MAX_PATH)
        for field in ("language", "chunk_type", "symbol_type"):
            schema.add_field(field, DataType.VARCHAR, max_length=64)
        schema.add_field("content_hash", DataType.VARCHAR, max_length=64)
        schema.add_field("start_line", DataType.INT64)
        schema.add_field("end_line", DataType.INT64)
        schema.add_function(
            Function(
                name="bm25", function_type=FunctionType.BM25, input_field_names=["text"], output_field_names=["sparse"]
            )
        )
        indexes = self.client.prepare_index_params()
        # Exact search (FLAT) by default: the same neighbours as the SQLite path. At millions of chunks
        # IVF_FLAT searches a share of the clusters instead (Milvus Lite has no HNSW); bench/scale.py
        # measures its recall against exact search.
        if self.config.vector_index == "ivf_flat":
            indexes.add_index("dense", index_type="IVF_FLAT", metric_type="IP", params={"nlist": self.config.nlist})
        else:
            indexes.add_index("dense", index_type="FLAT", metric_type="IP")
        indexes.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
        self.client.create_collection(name, schema=schema, index_params=indexes, consistency_level="Strong")
        self._loaded = True
        self._used()

    def drop(self) -> None:
        if self.client.has_collection(self.config.collection):
            self.client.drop_collection(self.config.collection)
        self._forget()
        self._loaded = False

    def write(self, rows: Iterable[MilvusRow], above: int | None = None) -> None:
        """Store rows. ``above``: every row is a chunk new to the collection, its id above this one (the
        highest id committed in SQLite): rows above it are deleted and the new ones inserted, since a write
        whose commit never came may have left rows with the ids these reuse. Without it, an upsert. An
        upsert looks each id up among all the rows already there, so its cost grows with the collection
        (Milvus Lite: 4,238 rows/s over the first 40k, 1,208/s at 200k; inserts hold ~5,000/s: docs section 20)."""
        data = [
            {
                "id": r.chunk_id, "dense": list(r.vector), "text": _clip(r.keyword_text, _MAX_TEXT),
                "path": _clip(r.path, _MAX_PATH), "symbol": _clip(r.symbol, _MAX_PATH), "language": r.language[:64],
                "chunk_type": r.chunk_type, "symbol_type": r.symbol_type, "content_hash": r.content_hash,
                "start_line": r.start_line, "end_line": r.end_line,
            }
            for r in rows
        ]  # fmt: skip
        if not data:
            return
        if not self._ready():
            self.create()
        if above is None:
            self.client.upsert(self.config.collection, data)
            return
        self.client.delete(self.config.collection, filter=f"id > {int(above)}")  # (~1 ms when none is there)
        self.client.insert(self.config.collection, data)

    def delete(self, chunk_ids: Sequence[int]) -> None:
        if not chunk_ids or not self._ready():
            return
        for lo in range(0, len(chunk_ids), _BATCH):
            self.client.delete(self.config.collection, ids=list(chunk_ids[lo : lo + _BATCH]))

    def chunk_ids(self) -> set[int]:
        """Every chunk id the collection holds (for ``sweep``)."""
        if not self._ready():
            return set()
        found: set[int] = set()
        # (Milvus Lite lacks the timestamp call the iterator starts with: pymilvus logs that and falls back.)
        with _quiet("pymilvus", "grpc._server"):
            iterator = self.client.query_iterator(
                self.config.collection, batch_size=5_000, filter="", output_fields=["id"]
            )
            try:
                while batch := iterator.next():
                    found.update(int(r["id"]) for r in batch)
            finally:
                iterator.close()
        return found

    def knn(self, vector: QueryVector, k: int, expression: str, nprobe: int | None = None) -> list[tuple[int, float]]:
        """(chunk id, cosine) of the ``k`` nearest rows matching ``expression`` (vectors are unit length);
        ``nprobe`` overrides the configured clusters searched by an IVF index (bench/scale.py's recall)."""
        if k <= 0 or not self._ready():
            return []
        params: dict[str, Any] = {"metric_type": "IP"}
        if self.config.vector_index == "ivf_flat":
            params["params"] = {"nprobe": nprobe or self.config.nprobe}
        found = self.client.search(
            self.config.collection, data=[[float(x) for x in vector]], anns_field="dense", limit=min(k, 16_384),
            filter=expression, search_params=params,
        )  # fmt: skip
        return [(int(hit["id"]), float(hit["distance"])) for hit in found[0]]

    def bm25(self, tokens: list[str], k: int, expression: str) -> list[tuple[int, float]]:
        """(chunk id, BM25 score, higher is better) of the ``k`` best rows for these index tokens."""
        if not tokens or k <= 0 or not self._ready():
            return []
        found = self.client.search(
            self.config.collection, data=[" ".join(tokens)], anns_field="sparse", limit=min(k, 16_384),
            filter=expression, search_params={"metric_type": "BM25"},
        )  # fmt: skip
        # Milvus Lite reports BM25 as a distance (its negative); a server reports the score itself.
        return [(int(hit["id"]), abs(float(hit["distance"]))) for hit in found[0]]

    def doc_frequency(self, token: str) -> int:
        """How many rows hold this index token: by the text index a server keeps (TEXT_MATCH), else (Milvus
        Lite has none) by a scan for the token between the spaces that separate them."""
        if not self._ready():
            return 0
        if self._text_match is not False:
            try:
                return self._count(f"TEXT_MATCH(text, '{_escape(token)}')")
            except Exception:
                self._text_match = False
        word = _escape(token).replace("%", "\\%").replace("_", "\\_")
        return self._count(
            f"text == '{word}' or text like '{word} %' or text like '% {word}' or text like '% {word} %'"
        )

    def _count(self, where: str) -> int:
        with _quiet("pymilvus"):  # (a rejected TEXT_MATCH is answered, not logged)
            rows = self.client.query(self.config.collection, filter=where, output_fields=["count(*)"])
        return int(rows[0]["count(*)"])

    def vectors(self, chunk_ids: Sequence[int]) -> dict[int, list[float]]:
        if not chunk_ids or not self._ready():
            return {}
        out: dict[int, list[float]] = {}
        for lo in range(0, len(chunk_ids), _BATCH):
            rows = self.client.query(
                self.config.collection, ids=list(chunk_ids[lo : lo + _BATCH]), output_fields=["dense"]
            )
            out.update((int(r["id"]), list(r["dense"])) for r in rows)
        return out

    def count(self) -> int:
        if not self._ready():
            return 0
        rows = self.client.query(self.config.collection, filter="", output_fields=["count(*)"])
        return int(rows[0]["count(*)"])

    def close(self) -> None:
        self._forget()
        self._loaded = False
        if self._client is not None:
            self._client.close()
            self._client = None


def client_class() -> Any:
    """pymilvus' MilvusClient; StoreError, saying what to install, where the `[milvus]` extra is not installed."""
    try:
        with warnings.catch_warnings():  # (milvus-lite imports the deprecated pkg_resources)
            warnings.simplefilter("ignore", UserWarning)
            from pymilvus import MilvusClient
    except ImportError as exc:
        raise StoreError("Milvus is not installed: install aintern[milvus] (pymilvus, milvus-lite)") from exc
    return MilvusClient


#: Milvus Lite lock files this process holds (a descriptor each, open while the process lives).
_lite_locks: dict[str, int] = {}


def _lock_lite_file(uri: str) -> bool:
    """Take the lock Milvus Lite takes on a database file (its server serves one process at a time) before
    it does; False if another process holds it. When Milvus Lite 2.5 fails to get it, cleaning up after itself
    deletes the lock file the other process holds (Server.__del__), so that a third process would then open
    the same database beside the running server (reproduced; docs/benchmarks.md section 24). Asking first
    means a busy file is never opened, and holding the lock from here on leaves no gap for another process
    between this check and the server's own lock (which, in the same process, succeeds)."""
    import fcntl

    db = Path(uri).absolute().resolve()
    path = str(db.parent / f".{db.name}.lock")
    held = _lite_locks.get(path)
    if held is not None:
        try:
            if os.fstat(held).st_ino == os.stat(path).st_ino:
                fcntl.lockf(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # (still this process's: a no-op)
                return True
        except OSError:
            pass  # the file went with a server this process stopped: lock it anew (the old descriptor stays open)
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.lockf(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(descriptor)  # (this process held no lock on the file: closing it releases nothing)
        return False
    _lite_locks[path] = descriptor
    return True


#: Where the Milvus Lite server's own logging (glog) goes unless the user says otherwise: to its standard
#: error (the log file beside the database), errors only. By default glog writes files into /tmp at
#: every start of the server, i.e. at every one-shot `aintern search` (hundreds of them after a day).
_LITE_GLOG = {"GLOG_logtostderr": "1", "GLOG_minloglevel": "2"}


@contextlib.contextmanager
def _quiet(*loggers: str) -> Iterator[None]:
    """These loggers silent meanwhile (what they would say reaches the user as an error of ours, or not at all)."""
    quiet = [logging.getLogger(name) for name in loggers]
    levels = [q.level for q in quiet]
    for q in quiet:
        q.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for q, level in zip(quiet, levels):
            q.setLevel(level)


@contextlib.contextmanager
def _lite_server_output(path: str | None) -> Iterator[None]:
    """File descriptor 2 pointed at ``path`` meanwhile, and glog told to write there: the Milvus Lite
    server started meanwhile inherits both, and logs there (its text index writes a line per commit)
    instead of into the user's terminal and /tmp."""
    if path is None:
        yield
        return
    added = {name: value for name, value in _LITE_GLOG.items() if name not in os.environ}
    saved = os.dup(2)
    try:
        os.environ.update(added)
        with open(path, "ab") as log_file:
            os.dup2(log_file.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        for name in added:
            os.environ.pop(name, None)


def expression(
    languages: Sequence[str] = (),
    chunk_types: Sequence[str] = (),
    symbol_types: Sequence[str] = (),
    paths: Sequence[str] | None = None,
) -> str:
    """A Milvus filter for the search options (``paths``: the files a path filter allows, None for all)."""
    parts = []
    for field, values in (("language", languages), ("chunk_type", chunk_types), ("symbol_type", symbol_types)):
        if values:
            parts.append(f"{field} in [{', '.join(_quote(v) for v in values)}]")
    if paths is not None:
        parts.append(f"path in [{', '.join(_quote(p) for p in paths)}]")
    return " and ".join(parts)


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _escape(value: str) -> str:
    """``value`` inside a quoted string of a Milvus expression (TEXT_MATCH takes single quotes)."""
    return value.replace("\\", "\\\\").replace("'", "\\'")


def _clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` UTF-8 bytes (at a character boundary)."""
    data = text.encode("utf-8")
    return text if len(data) <= limit else data[:limit].decode("utf-8", "ignore")
