"""File vectors (aintern.index.files, store.files): a transformer vector per file of code, of its path and
the names it defines, taken into the static model's space by the file map, kept with the files and used
to reorder a search's first files (issue 11, docs sections 42-43). Real SQLite and sqlite-vec, the real
static model, the real MiniLM and the shipped map."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from aintern.chunk.models import TextChunk
from aintern.embed.base import MODEL_IDS
from aintern.index import Indexer, IndexingOptions
from aintern.index.files import file_embedder, file_map, summary_text
from aintern.knowledge import KnowledgeQueryOptions, KnowledgeService
from aintern.retrieve.hybrid import HybridConfig, nearest_files
from aintern.retrieve.question import Question
from aintern.retrieve.ranking import by_file_vectors
from aintern.store import SqliteStore, files
from aintern.store.files import FILE_SPACE

SPACE = FILE_SPACE

FILES = {
    "src/cache.py": "class LruCache:\n    def evict_oldest(self):\n        return self.entries.popitem(last=False)\n",
    "src/retry.py": "def retry_with_backoff(call, attempts=3):\n    for n in range(attempts):\n        call()\n",
    "src/http_client.py": "class HttpClient:\n    def send_request(self, url):\n        return self.session.get(url)\n",
    "README.md": "# Project\n\nA cache, retries and an HTTP client.\n",
}


def write(root: Path, files: dict[str, str]) -> None:
    for name, body in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(body)


def test_summary_text_is_the_path_the_name_and_the_definitions() -> None:
    assert summary_text("src/http_client.py", ["HttpClient", "send_request"]) == (
        "src / http_client.py http client Http Client send request"
    )
    assert len(summary_text("a.py", [f"get_name{i}" for i in range(200)]).split()) == 64  # (words at most)


def test_file_vectors_follow_the_files_of_code(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ws = tmp_path / "ws"
    write(ws, FILES)
    store = SqliteStore(tmp_path / "i.db")
    assert Indexer(store, static).index(ws).success  # (on by default: the `file_vectors` setting)
    index = store.get_index_for_workspace(ws.resolve())
    assert index is not None
    vectors = files.load_file_vectors(store.conn, index.id, SPACE)
    assert vectors is not None
    assert vectors.paths == ["src/cache.py", "src/http_client.py", "src/retry.py"]  # (no vector for prose)
    # Each is MiniLM's vector of the file's summary taken into the static model's space by the file map.
    summary = summary_text("src/http_client.py", ["HttpClient", "send_request"])
    expected = file_embedder().embed_batch([summary])[0] @ file_map().T
    assert vectors.matrix.shape == (3, static.dimension)
    assert np.allclose(vectors.matrix[1], expected, atol=1e-4)
    before = store.file_vector_hashes(index.id, SPACE)

    # A file written again keeps its vector, so a search during a run ranks it as before; the run's end
    # embeds it again only if its summary changed.
    kept = files.file_vector_row(store.conn, index.id, "src/cache.py")
    again = TextChunk(FILES["src/cache.py"], "src/cache.py", 1, 3, 0, len(FILES["src/cache.py"]))
    with store.transaction():
        store.upsert_file(index.id, store.get_files(index.id)["src/cache.py"], [again], np.zeros((1, 256), np.float32))
    assert kept is not None and files.file_vector_row(store.conn, index.id, "src/cache.py") == kept

    # A renamed definition makes a new vector; a deleted file takes its vector with it.
    (ws / "src/cache.py").write_text("class LfuCache:\n    def evict_least_used(self):\n        pass\n")
    (ws / "src/retry.py").unlink()
    assert Indexer(store, static).index(ws).success
    after = store.file_vector_hashes(index.id, SPACE)
    vectors = files.load_file_vectors(store.conn, index.id, SPACE)
    assert vectors is not None and vectors.paths == ["src/cache.py", "src/http_client.py"]
    assert len(after) == 2 and set(after.values()) - set(before.values())  # (cache.py's text changed)

    # A run of one file (the watcher's) embeds that file again and leaves the others' vectors alone.
    (ws / "src/http_client.py").write_text(
        FILES["src/http_client.py"] + "\n    def close_session(self):\n        pass\n"
    )
    assert Indexer(store, static).index_files(ws, ["src/http_client.py"]).success
    again = store.file_vector_hashes(index.id, SPACE)
    ids = store.file_ids(index.id, ["src/cache.py", "src/http_client.py"])
    assert set(again) == set(ids.values())  # (both files have a vector)
    assert again[ids["src/cache.py"]] in after.values() and again[ids["src/http_client.py"]] not in after.values()

    # The question's static vector finds the file about it first, ranked in SQL by a one-shot search and
    # in memory by a long-running process alike.
    question = static.embed_query("sending HTTP requests")
    nearest = nearest_files(store, index.id, HybridConfig(), question)
    assert nearest is not None and nearest[0] == "src/http_client.py"
    service = KnowledgeService(store)
    result = service.query("sending HTTP requests", KnowledgeQueryOptions(workspace_path=str(ws), min_relevance=0.0))
    assert result.chunks and result.chunks[0].file_path == "src/http_client.py"
    # A question embedded by another model (a `minilm` index, a full tier) is embedded by the static
    # model for them: that vector is not in their space.
    asked = Question.parse("sending HTTP requests")
    other = service._file_vector(asked, MODEL_IDS["minilm"], np.ones(384, dtype=np.float32), HybridConfig())
    assert other is not None and nearest_files(store, index.id, HybridConfig(), other) == nearest
    assert service._file_vector(asked, MODEL_IDS["static"], question, HybridConfig(file_vector_weight=0.0)) is None
    store.keep_in_memory()
    assert nearest_files(store, index.id, HybridConfig(), question) == nearest
    assert nearest_files(store, index.id, HybridConfig(file_vector_weight=0.0), question) is None  # (weight 0)

    # With the setting turned off the next run drops them, and a search goes on without them.
    assert Indexer(store, static, IndexingOptions(file_vectors=False)).index(ws).success
    assert files.load_file_vectors(store.conn, index.id, SPACE) is None
    assert nearest_files(store, index.id, HybridConfig(), question) is None
    result = service.query("sending HTTP requests", KnowledgeQueryOptions(workspace_path=str(ws), min_relevance=0.0))
    assert result.chunks and result.chunks[0].file_path == "src/http_client.py"
    store.close()


def test_both_rankings_agree_on_many_files(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """sqlite-vec's ranking (one-shot searches) and numpy's (long-running processes) give the same files in
    the same order; a question of no known token has nothing near."""
    ws = tmp_path / "ws"
    topics = ["cache", "retry", "http", "parser", "logger", "config", "router", "session", "queue", "token"]
    write(ws, {f"src/{t}_{n}.py": f"def {t}_step_{n}(value):\n    return value\n" for t in topics for n in range(4)})
    store = SqliteStore(tmp_path / "i.db")
    assert Indexer(store, static).index(ws).success
    index = store.get_index_for_workspace(ws.resolve())
    assert index is not None
    questions = [static.embed_query(q) for q in ("http session handling", "parse the config", "retry a queued job")]
    questions.append(np.zeros(static.dimension, dtype=np.float32))  # (a question of no known token)
    one_shot = [store.nearest_files(index.id, SPACE, q, 12) for q in questions]
    store.keep_in_memory()
    assert [store.nearest_files(index.id, SPACE, q, 12) for q in questions] == one_shot
    assert len(one_shot[0] or []) == 12 and one_shot[-1] == []
    assert (one_shot[0] or [""])[0].startswith(("src/http", "src/session"))
    store.close()


def test_the_file_vectors_reorder_only_the_first_files_and_each_files_first_hit() -> None:
    """Each of the first files' first hit moves with its file; a file's other hits and the files further
    down keep their places."""
    scored = [
        (-9.0, "a.py", 1, 1),
        (-8.0, "b.py", 1, 2),
        (-7.0, "a.py", 20, 3),  # a.py's second hit
        (-6.0, "c.py", 1, 4),
        (-5.0, "d.py", 1, 5),  # beyond the first three files
    ]
    cfg = HybridConfig(file_vector_weight=0.5, file_vector_k=1.0, file_vector_files=3)
    out = by_file_vectors(scored, ["c.py", "d.py"], cfg)
    # c.py: 0.5/(1+2) + 0.5/1 beats a.py's 0.5/1 and b.py's 0.5/2; d.py is not among the first three files.
    assert [hit[3] for hit in out] == [4, 1, 3, 2, 5]
    assert by_file_vectors(scored, [], cfg) == scored  # (nothing near: the order stands)
    light = HybridConfig(file_vector_weight=0.15, file_vector_k=5.0, file_vector_files=3)
    # At the default weight the file vectors move a file up one place, not two: c.py passes b.py, not a.py.
    assert [hit[3] for hit in by_file_vectors(scored, ["c.py"], light)] == [1, 4, 3, 2, 5]


def test_a_runs_summaries_are_embedded_while_it_goes_on(static, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Each new file's summary is collected as the file is written (the names read from its chunks are the
    ones the store reads back) and embedded once the index is searchable (issue 49: no thread beside the
    pipeline); a file whose summary is unchanged is not embedded again; a cancelled run leaves no thread
    behind."""
    import threading

    from aintern.index import files as file_vectors

    handed: list[tuple[set[str], list[str]]] = []  # (the texts added during the run, those asked for at its end)
    vectors = file_vectors.SummaryVectors.vectors

    def spy(
        self: file_vectors.SummaryVectors, texts: list[str], batch: int = 256, cancel: threading.Event | None = None
    ) -> np.ndarray | None:
        handed.append((set(self._seen), list(texts)))
        return vectors(self, texts, batch, cancel)

    monkeypatch.setattr(file_vectors.SummaryVectors, "vectors", spy)
    ws = tmp_path / "ws"
    many = {f"src/mod_{n}.py": f"class Parser{n}:\n    def parse_{n}(self):\n        pass\n" for n in range(12)}
    write(ws, {**FILES, **many})
    store = SqliteStore(tmp_path / "i.db")
    assert Indexer(store, static, IndexingOptions(batch_size=4)).index(ws).success
    index = store.get_index_for_workspace(ws.resolve())
    assert index is not None
    ((added, asked),) = handed
    assert len(asked) == 15 and set(asked) <= added  # (every file of code, collected as it was written)
    names = {path: names for _, path, names in store.file_summaries(index.id)}
    assert summary_text("src/http_client.py", names["src/http_client.py"]) in added
    # The vectors are, to the bit, those the end of the run would have computed alone.
    stored = files.load_file_vectors(store.conn, index.id, SPACE)
    assert stored is not None and len(stored.paths) == 15
    alone = file_embedder().embed_batch([summary_text(path, names[path]) for path in stored.paths]) @ file_map().T
    assert np.array_equal(stored.matrix, alone.astype(np.float32))

    # An edit that renames nothing embeds nothing; a renamed definition embeds that file alone.
    handed.clear()
    (ws / "src/mod_1.py").write_text(many["src/mod_1.py"] + "        return 1\n")
    (ws / "src/mod_2.py").write_text("class Lexer2:\n    def lex(self):\n        pass\n")
    assert Indexer(store, static).index(ws).success
    ((added, asked),) = handed
    assert added == set(asked) == {summary_text("src/mod_2.py", ["Lexer2", "lex"])}

    # A cancelled run stops the thread (after the text it is embedding).
    cancel = threading.Event()
    cancel.set()
    assert Indexer(store, static, IndexingOptions(force_reindex=True)).index(ws, cancel=cancel).cancelled
    for thread in [t for t in threading.enumerate() if t.name == "aintern-file-vectors"]:
        thread.join(timeout=60)
        assert not thread.is_alive()
    store.close()
