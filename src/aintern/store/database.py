"""The application database file as the store holds it: one connection per thread, snapshots, transactions
that the indexes' search engines follow (store.engine), the check before the first write, and the engine
of each index, chosen when it is first used: its Milvus collection if it was made with one, else
sqlite-vec and FTS5 in the file (SqliteStore, in store.sqlite, builds on this)."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aintern.errors import CorruptDatabaseError, StoreError
from aintern.store import checked, damage
from aintern.store.db import connect, default_db_path
from aintern.store.engine import SearchEngine
from aintern.store.integrity import IntegrityCheck
from aintern.store.keywords import Vocabulary
from aintern.store.sqlite_engine import SqliteEngine

#: How long after its check a store may vouch for what it wrote (store.checked; ``Database.close``).
VOUCH_SECONDS = 600.0

if TYPE_CHECKING:
    from aintern.store.memory import InMemorySearch
    from aintern.store.milvus import MilvusSearch
    from aintern.store.milvus_engine import MilvusEngine


class Database:
    """One application database file: its connections (one per thread), snapshots and transactions, and the
    search engine of each of its indexes."""

    def __init__(self, path: str | Path | None = None, readonly: bool = False, create: bool = True) -> None:
        """``readonly``: never create, initialise or write the database (a missing one is NoDatabaseError).
        ``create``: make the database if there is none (a missing or empty file); else NoDatabaseError."""
        self.path = Path(path) if path else default_db_path()
        self.readonly = readonly
        self.create = create
        self._key = damage.key(self.path)
        # One connection per thread: a connection's statements and temp tables are not shared between
        # threads, so a service answering queries on several threads needs no lock around SQL.
        self._local = threading.local()
        self._connections: list[tuple[threading.Thread, Any]] = []
        self._connections_lock = threading.Lock()
        self.vocabulary = Vocabulary(lambda: self.conn)
        self.integrity = IntegrityCheck(self.path)
        #: Whether a transaction of this store changed the database.
        self._wrote = False
        #: Each index's search engine, once opened (sqlite-vec and FTS5 in this file, or Milvus).
        self._engines: dict[int, SearchEngine] = {}
        self._sqlite = SqliteEngine(self)
        #: What a long-running process holds in memory to search faster (None: everything from the file).
        self.memory: InMemorySearch | None = None
        self._closed = False
        damage.recheck(self.path)
        _ = self.conn  # open now: a bad database is reported at once, not at the first query

    @property
    def conn(self) -> Any:
        """This thread's connection to the database (opened at its first use)."""
        known = damage.known(self._key)
        if known is not None:  # (found by a run of this process: nothing more is read from it either)
            raise CorruptDatabaseError(known)
        conn = getattr(self._local, "conn", None)
        if conn is None:
            if self._closed:
                raise StoreError(f"the store of {self.path} is closed")
            conn = connect(self.path, create=self.create, readonly=self.readonly)
            me = threading.current_thread()
            with self._connections_lock:
                alive = []
                for thread, other in self._connections:
                    if thread.is_alive():
                        alive.append((thread, other))
                    else:  # a finished thread's connection: nobody can use it any more
                        with contextlib.suppress(Exception):
                            other.close()
                self._connections = [*alive, (me, conn)]
            self._local.conn = conn
        return conn

    @property
    def writing(self) -> bool:
        """Whether this thread is inside ``transaction``."""
        return bool(getattr(self._local, "writing", False))

    def preload(self, index_id: int, tier: bool = False) -> None:
        """Load what the store keeps in memory of the index now (through a connection of its own: a
        server or a chat calls this in a background thread when it starts), and what its engine loads."""
        self.engine(index_id).preload(index_id, tier)

    def close(self) -> None:
        """Close every thread's connection, and the engines. A store that checked its database (or found it as
        it passed: store.checked) less than VOUCH_SECONDS ago and wrote to it since, a run of `index` or
        `update`, vouches for what it wrote: the next process need not read the whole file again. A server's or
        a watcher's store, open for hours, does not (anything may have happened to the file meanwhile), but one
        that found the file as it last passed (its runs vouched) keeps it vouched for once checkpointed."""
        since = self.integrity.verified_at
        vouch = self._wrote and since is not None and time.monotonic() - since < VOUCH_SECONDS
        self._closed = True
        engines = list(self._engines.values())
        for engine in engines:
            engine.after_commit()
        for engine in engines:
            engine.close()
        self._engines.clear()
        # A store that leaves the file as it last passed (a server whose run vouched for what it wrote) is often its
        # last connection: closing moves the WAL's pages into the file, which a check would find as sound.
        passed = None if vouch else checked.passed_facts(self.path)
        with self._connections_lock:
            for _, conn in self._connections:
                with contextlib.suppress(Exception):
                    conn.close()
            self._connections = []
        self._local = threading.local()
        if vouch:  # (after the last connection's checkpoint: the file as this process leaves it)
            checked.remember_passed(self.path, checked.database_facts(self.path))
        elif (error := damage.known(self._key)) is not None:  # (as this process leaves it, checkpointed)
            checked.remember_damaged(self.path, error)
        elif passed is not None and (now := checked.database_facts(self.path)) != passed:
            checked.remember_passed(self.path, now)

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        """Reads inside see one state of the database (a read transaction), whatever others commit meanwhile."""
        conn = self.conn
        if conn.in_transaction:  # already inside a transaction: it is the snapshot
            yield
            return
        conn.execute("BEGIN")
        self._local.generations = {}  # (one state: an index's generation is asked once per snapshot)
        try:
            yield
        finally:
            self._local.generations = None
            conn.execute("COMMIT")  # nothing was written: this only ends the read

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """One atomic write: everything in it is committed together or not at all. The first that changes
        anything checks the database before it commits (``verify``): nothing is written into a damaged one,
        and a transaction that changed nothing (a run with nothing to do) costs no check."""
        conn = self.conn  # (one connection throughout: a damage found inside, refused from then on, rolls back)
        conn.execute("BEGIN IMMEDIATE")
        changes = conn.total_changes
        # The highest chunk id committed: an engine outside the file gives the transaction's chunks ids above
        # it, so a rolled-back write can never have overwritten its row of a chunk that is still here.
        floor = self._local.chunk_floor = conn.execute("SELECT max(id) FROM chunks").fetchone()[0] or 0
        self._local.writing = True
        try:
            yield
            if conn.total_changes != changes:
                self.verify()
            for engine in list(self._engines.values()):  # (what the engines queued, before the commit)
                engine.before_commit(floor)
        except BaseException:
            conn.execute("ROLLBACK")
            for engine in list(self._engines.values()):
                engine.after_rollback()
            raise
        finally:
            self._local.writing = False
        conn.execute("COMMIT")
        self._wrote = self._wrote or conn.total_changes != changes
        for engine in list(self._engines.values()):
            engine.after_commit()

    def start_verify(self) -> None:
        self.integrity.start_verify()

    def cancel_verify(self) -> None:
        self.integrity.cancel_verify()

    def verify(self) -> None:
        self.integrity.verify()

    @property
    def verified(self) -> bool:
        return self.integrity.verified

    # -- engines ---------------------------------------------------------------------------------

    def engine(self, index_id: int) -> SearchEngine:
        """The index's search engine: its Milvus collection if it was made with one, else this file's."""
        if index_id not in self._engines:
            row = self.conn.execute(
                "SELECT settings_json, embedding_dimension FROM indexes WHERE id = ?", (index_id,)
            ).fetchone()
            settings = json.loads(row[0]) if row else {}
            engine: SearchEngine = self._sqlite
            if row and isinstance(settings.get("store"), dict):  # (else no Milvus module is imported: a search's)
                from aintern.store.milvus import MilvusConfig, MilvusSearch
                from aintern.store.milvus_engine import MilvusEngine

                config = MilvusConfig.from_settings(settings)
                if config is not None:
                    engine = MilvusEngine(self, MilvusSearch(config, int(row[1])))
            self._engines[index_id] = engine
        return self._engines[index_id]

    def engine_of(self, index_id: int) -> str:
        """Where an index keeps its vectors and keyword search: "milvus" or "sqlite"."""
        return self.engine(index_id).name

    def milvus(self, index_id: int) -> MilvusSearch | None:
        """The index's Milvus collection when Milvus is its engine, else None."""
        engine = self._milvus_engine(index_id)
        return engine.collection if engine is not None else None

    def sweep_milvus(self, index_id: int) -> tuple[int, set[str]]:
        """Bring the index's Milvus rows in line with this file's chunks (MilvusEngine.sweep); (0, no paths)
        for an index of this file."""
        engine = self._milvus_engine(index_id)
        return engine.sweep(index_id) if engine is not None else (0, set())

    def _milvus_engine(self, index_id: int) -> MilvusEngine | None:
        engine = self.engine(index_id)
        if engine.name != "milvus":  # (a search of an index without Milvus never imports its engine)
            return None
        from aintern.store.milvus_engine import MilvusEngine

        return engine if isinstance(engine, MilvusEngine) else None

    def generation(self, index_id: int) -> tuple[object, ...]:
        """Changes whenever the index's content does: cached answers are keyed on it."""
        known: dict[int, tuple[object, ...]] | None = getattr(self._local, "generations", None)
        if known is not None and index_id in known:
            return known[index_id]
        row = self.conn.execute("SELECT revision FROM indexes WHERE id = ?", (index_id,)).fetchone()
        generation = (index_id, row[0] if row else None)
        if known is not None:
            known[index_id] = generation
        return generation
