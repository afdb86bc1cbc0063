from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from embed_server import EmbeddingServer

from aintern.embed import embedding_header, embedding_text, get_embedder
from aintern.embed.cache import CachedEmbedder, EmbeddingCache
from aintern.embed.http import OpenAIEmbedder
from aintern.errors import EmbeddingError, EndpointUnreachableError

DATA = Path(__file__).parent / "data"
TEXTS = [
    "Where is the database connection handled?",
    "def connect(url):\n    return sqlite3.connect(url, timeout=5)",
    "render a jinja template with the request context",
    "",
]


@pytest.fixture(params=["static", "minilm"])
def embedder(request: pytest.FixtureRequest, static, minilm):
    return {"static": static, "minilm": minilm}[request.param]


def test_dimension_and_unit_norm(embedder) -> None:
    vectors = embedder.embed_batch(TEXTS[:3])
    assert vectors.shape == (3, embedder.dimension) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_batch_equals_single_and_is_deterministic(embedder) -> None:
    batch = embedder.embed_batch(TEXTS[:3])
    singles = np.vstack([embedder.embed(t) for t in TEXTS[:3]])
    np.testing.assert_allclose(batch, singles, atol=2e-5)
    np.testing.assert_array_equal(embedder.embed_batch(TEXTS[:3]), batch)


def test_empty_text_and_empty_batch(embedder) -> None:
    assert embedder.embed_batch([]).shape[0] == 0
    v = embedder.embed("")
    assert v.shape == (embedder.dimension,) and np.isfinite(v).all()


def test_question_is_closest_to_the_code_that_answers_it(embedder) -> None:
    q, code, other = embedder.embed_batch(TEXTS[:3])
    assert q @ code > q @ other


def test_progress_reports(embedder) -> None:
    seen = []
    embedder.embed_batch([f"x {i}" for i in range(70)], progress=seen.append)
    assert seen and seen[-1].processed_count == 70 and seen[-1].total_count == 70
    assert seen[-1].percent_complete == 100.0


def test_minilm_matches_sentence_transformers(minilm) -> None:
    """The shipped int8 graph against vectors computed with sentence-transformers (tests/data)."""
    texts = json.loads((DATA / "minilm_reference_texts.json").read_text())
    reference = np.load(DATA / "minilm_reference.npy")
    cosine = (minilm.embed_batch(texts) * reference).sum(axis=1)
    assert cosine.min() >= 0.97 and cosine.mean() >= 0.985, cosine


def test_the_gpu_graph_is_the_shipped_weights_in_float_and_batches() -> None:
    """What a GPU runs: the int8 file's weights dequantised, float activations, in batches. It is
    closer to sentence-transformers than the int8 graph, and a text's vector ignores its batch."""
    from aintern.embed.onnx import OnnxEmbedder

    texts = json.loads((DATA / "minilm_reference_texts.json").read_text())
    reference = np.load(DATA / "minilm_reference.npy")
    gpu_graph = OnnxEmbedder(device="cpu", graph="float")
    assert gpu_graph.dequantised and gpu_graph.batch_size == 32
    vectors = gpu_graph.embed_batch(texts)
    cosine = (vectors * reference).sum(axis=1)
    assert cosine.min() >= 0.999, cosine.min()
    one_by_one = OnnxEmbedder(device="cpu", graph="float", batch_size=1).embed_batch(texts[:6])
    np.testing.assert_allclose(one_by_one, vectors[:6], atol=1e-5)
    with pytest.raises(ValueError, match="graph must be"):
        OnnxEmbedder(graph="fp8")


def test_with_a_gpu_chunks_run_there_and_a_question_on_the_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """onnxruntime-gpu seeing a GPU (the only stand-in here: CI has none) picks the float graph in
    batches for chunks, and a question in a fresh embedder does not start CUDA for one short text."""
    import onnxruntime as ort

    from aintern.embed.onnx import OnnxEmbedder

    cpu_vector = OnnxEmbedder(device="cpu").embed_query("where is the session closed")
    providers = ort.get_available_providers()
    monkeypatch.setattr(ort, "get_available_providers", lambda: ["CUDAExecutionProvider", *providers])
    embedder = OnnxEmbedder()
    assert embedder.on_gpu and embedder.dequantised and embedder.batch_size == 64
    np.testing.assert_array_equal(embedder.embed_query("where is the session closed"), cpu_vector)
    assert not embedder.is_loaded  # no CUDA session was started for the question
    assert OnnxEmbedder(device="cpu").batch_size == 1 and not OnnxEmbedder(device="cpu").dequantised


@pytest.mark.filterwarnings("ignore:Specified provider 'CUDAExecutionProvider':UserWarning")  # the stand-in's
def test_onnxruntime_gpu_without_a_usable_gpu_runs_the_int8_graph(monkeypatch, caplog) -> None:
    """A build with CUDA lists its provider on any machine; where it cannot use a GPU onnxruntime falls
    back to the CPU, and there the model runs as on a laptop (int8, one text a run), said once."""
    import onnxruntime as ort

    from aintern.embed.onnx import OnnxEmbedder

    texts = ["def connect(url): ...", "where is the session closed", "x"]
    expected = OnnxEmbedder(device="cpu").embed_batch(texts)
    providers = ort.get_available_providers()
    monkeypatch.setattr(ort, "get_available_providers", lambda: ["CUDAExecutionProvider", *providers])
    embedder = OnnxEmbedder()
    vectors = embedder.embed_batch(texts)
    assert not embedder.on_gpu and not embedder.dequantised and embedder.batch_size == 1
    np.testing.assert_array_equal(vectors, expected)
    assert any("no usable GPU" in r.getMessage() for r in caplog.records)
    with pytest.raises(RuntimeError, match="could not use a GPU"):
        OnnxEmbedder(device="cuda").load()


def test_a_gpu_out_of_memory_halves_the_batch_and_the_vectors_are_the_same(caplog) -> None:
    """A GPU that runs out of memory (a laptop's, or a shared one; a stand-in raising onnxruntime's own
    message here, CI has none) gets the batch in halves, and smaller batches from then on."""
    from aintern.embed.onnx import OnnxEmbedder

    texts = [f"def handler_{i}(request):\n    return respond(request, {i})" for i in range(8)]
    expected = OnnxEmbedder(device="cpu", graph="float", batch_size=8).embed_batch(texts)
    embedder = OnnxEmbedder(device="cpu", graph="float", batch_size=8)
    embedder.load()
    real = embedder._session

    class SmallGpu:  # onnxruntime's BFC arena message when a run does not fit
        def run(self, names, feeds):  # type: ignore[no-untyped-def]
            if len(feeds["input_ids"]) > 2:
                raise RuntimeError("BFCArena::AllocateRawInternal Failed to allocate memory for requested buffer")
            return real.run(names, feeds)

    embedder._session = SmallGpu()
    np.testing.assert_allclose(embedder.embed_batch(texts), expected, atol=1e-5)
    assert embedder.batch_size == 2 and "ran out of memory at 8 texts" in caplog.text

    class Broken:
        def run(self, names, feeds):  # type: ignore[no-untyped-def]
            raise RuntimeError("Invalid input name: input_ids")

    embedder._session = Broken()
    with pytest.raises(RuntimeError, match="Invalid input name"):  # other errors are not retried
        embedder.embed_batch(texts)


def test_long_text_truncated_and_counted(minilm) -> None:
    before = minilm.truncated_count
    long_text = "token " * 2000
    v = minilm.embed(long_text)
    assert np.isfinite(v).all()
    assert minilm.truncated_count == before + 1


def test_length_sorted_batches_keep_order(minilm) -> None:
    texts = ["short", "a much longer text " * 30, "mid sized text here", "x"]
    batch = minilm.embed_batch(texts)
    for text, vector in zip(texts, batch):
        np.testing.assert_allclose(minilm.embed(text), vector, atol=2e-5)


def test_loads_offline_in_a_fresh_process(tmp_path: Path) -> None:
    """HF_HUB_OFFLINE=1 and no network: the shipped models load from the package."""
    code = (
        "import aintern, numpy as np\n"
        "for name in ('static', 'minilm'):\n"
        "    e = aintern.get_embedder(name); v = e.embed('hello world')\n"
        "    assert abs(float(np.linalg.norm(v)) - 1) < 1e-4, name\n"
        "print('ok')\n"
    )
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(tmp_path),
        "no_proxy": "*",
        "HTTP_PROXY": "http://127.0.0.1:9",
        "HTTPS_PROXY": "http://127.0.0.1:9",
    }
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_unload_and_reload(static) -> None:
    v = static.embed_batch(["reload me"])[0]
    static.unload()
    assert not static.is_loaded
    np.testing.assert_array_equal(static.embed_batch(["reload me"]), [v])
    assert static.is_loaded


def test_one_query_reads_only_its_rows_from_the_mapped_table() -> None:
    """A search process embeds its question from the memory-mapped file, without converting the table."""
    fresh = get_embedder("static")
    query = fresh.embed(TEXTS[0])
    assert not fresh.is_loaded  # the whole table was never read into memory
    fresh.load()
    np.testing.assert_allclose(query, fresh.embed_batch([TEXTS[0]])[0], atol=1e-6)
    assert np.all(fresh.embed("") == 0)


def test_a_question_is_tokenised_without_the_rust_tokenizer() -> None:
    """One plain question never loads the Rust tokenizer; one in another script does, and both embed
    exactly as the batch path (the Rust tokenizer) does."""
    fresh = get_embedder("static")
    vector = fresh.embed("How does getUserById() handle a missing user? (naïve café)")
    assert fresh._tokenizer is None  # type: ignore[attr-defined]
    np.testing.assert_allclose(
        vector, fresh.embed_batch(["How does getUserById() handle a missing user? (naïve café)"])[0], atol=1e-6
    )
    other = get_embedder("static")
    cjk = other.embed("数据库连接 database")
    assert other._tokenizer is not None  # type: ignore[attr-defined]
    np.testing.assert_allclose(cjk, other.embed_batch(["数据库连接 database"])[0], atol=1e-6)


def test_plain_wordpiece_gives_the_rust_tokenizer_ids(static) -> None:
    """Every character below U+0370 (Latin scripts, accents, combining marks, controls, punctuation) in
    context, random strings of them, and real code: the same ids as the Rust tokenizer."""
    import random

    from aintern.embed.tokenizer import MODELS_DIR
    from aintern.embed.wordpiece import PLAIN_BELOW, PlainWordPiece

    plain = PlainWordPiece(MODELS_DIR / "vocab.tsv")  # what a search reads
    rng = random.Random(7)
    alphabet = [chr(c) for c in range(PLAIN_BELOW)]
    texts = [f"ab{ch}cd {ch}x{ch}" for ch in alphabet]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 60))) for _ in range(3000)]
    texts += [
        (Path(__file__).parent / "samples.py").read_text(), "[CLS] a [SEP][MASK]b [UNK]", "x" * 101, "y" * 100,
        "HTTPAdapter.send() -> Response", "Straße ÉCOLE naïve", "tab\tnew\nline\r\x00nul\ufffd",
    ]  # fmt: skip
    for text, expected in zip(texts, static.tokenizer.ids(texts)):
        assert plain.ids(text) == expected, repr(text)


def test_sorted_vocabulary_is_the_tokenizer_json_vocabulary() -> None:
    """The shipped vocab.tsv (tokenizer.json's vocabulary as ``token<TAB>id`` lines sorted by UTF-8 bytes)
    with BERT's defaults reads as tokenizer.json does: same tokens and ids, found by its binary search
    and absent ones not found, same unknown token, specials and word limit."""
    from aintern.embed.tokenizer import MODELS_DIR
    from aintern.embed.wordpiece import SortedVocab, _load

    sorted_vocab, *rest = _load(str(MODELS_DIR / "vocab.tsv"))
    vocab, *expected = _load(str(MODELS_DIR / "tokenizer.json"))
    assert isinstance(sorted_vocab, SortedVocab) and isinstance(vocab, dict) and rest == expected
    assert sorted_vocab.as_dict() == vocab
    assert all(sorted_vocab.get(token) == i for token, i in vocab.items())
    for absent in ["", "zzzzzzzzzz", "\x00", "##", "[unk]", "\U0010ffff", "aardvarkish", "a\tb"]:
        assert absent in vocab or sorted_vocab.get(absent) is None


def test_a_question_embeds_without_numpy_as_with_it(static) -> None:
    """embed_query reads the question's rows from the table's file in plain Python: the same unit
    vector as the numpy path, for words, unknown tokens and an empty question; a process that only
    embeds a question never imports numpy."""
    from array import array

    fresh = get_embedder("static")
    for text in ["Where is the database connection handled?", "HTTPAdapter.send", "zzqxj", "", "Straße ÉCOLE"]:
        light = fresh.embed_query(text)  # type: ignore[attr-defined]
        assert isinstance(light, array) and light.typecode == "f"
        np.testing.assert_allclose(np.asarray(light), static.embed(text), atol=2e-6)
    # A server loads the whole table: its question vector (numpy's gather, a dict vocabulary) is the same
    # to the bit, so a result never depends on which process answered.
    loaded = get_embedder("static")
    loaded.load()
    for text in ["Where is the database connection handled?", "HTTPAdapter.send", "zzqxj", "", "Straße ÉCOLE"]:
        assert list(loaded.embed_query(text)) == list(fresh.embed_query(text))  # type: ignore[attr-defined]
    code = (
        "import sys\nfrom aintern.embed.static import StaticEmbedder\n"
        "v = StaticEmbedder().embed_query('how are migrations applied')\n"
        "assert abs(sum(x * x for x in v) - 1) < 1e-5 and 'numpy' not in sys.modules, sorted(sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_unit_by_numpy_is_unit_in_plain_python_to_the_bit() -> None:
    """A loaded table scales the question's vector with numpy: the same float32s as the plain-Python path
    (vectors of every scale, a zero one, ties at float32's rounding)."""
    from aintern.embed.static import unit, unit_of

    rng = np.random.default_rng(7)
    totals = [rng.normal(size=256) * scale for scale in (1e-9, 1e-3, 1.0, 37.0, 1e6) for _ in range(40)]
    totals += [np.zeros(256), np.full(256, 1 / 3), rng.integers(-3, 4, size=256).astype(np.float64)]
    for total in totals:
        assert unit_of(total).tobytes() == unit(total.tolist()).tobytes()


def test_unknown_model_name() -> None:
    with pytest.raises(ValueError, match="unknown embedding model"):
        get_embedder("nope")


# -- OpenAI-compatible HTTP backend, against a real server on 127.0.0.1 ---------------------


def test_http_backend_serves_real_embeddings(static, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AINTERN_TEST_KEY", "sk-local-test")
    with EmbeddingServer(static) as server:
        remote = get_embedder(
            "openai", url=server.url, model="static-test", api_key_env="AINTERN_TEST_KEY", batch_size=2
        )
        vectors = remote.embed_batch(TEXTS[:3])
        np.testing.assert_allclose(vectors, static.embed_batch(TEXTS[:3]), atol=1e-5)
        assert remote.dimension == static.dimension
        assert remote.model_id == "openai/static-test"
        assert server.requests[0]["model"] == "static-test"
        # (the two requests are in flight together: either may arrive first)
        assert sorted(len(r["input"]) for r in server.requests) == [1, 2], "batched by batch_size"
        assert server.headers[0]["Authorization"] == "Bearer sk-local-test"


def test_http_backend_keeps_several_requests_in_flight(static) -> None:
    """Many texts go out as concurrent requests (a server with several workers or a GPU stays busy), and
    the vectors come back in the order of the texts."""
    texts = [f"def handler_{i}(request): return respond(request, {i})" for i in range(12)]
    with EmbeddingServer(static, together=3) as server:
        remote = OpenAIEmbedder(url=server.url, model="m", batch_size=2, concurrency=3, max_retries=0)
        vectors = remote.embed_batch(texts)
        assert server.together_met is True, "three requests were in flight at once"
        assert len(server.requests) == 6
        np.testing.assert_allclose(vectors, static.embed_batch(texts), atol=1e-5)
        remote.unload()


def test_http_backend_retries_then_succeeds(static) -> None:
    with EmbeddingServer(static, fail_first=2, fail_status=503) as server:
        remote = OpenAIEmbedder(url=server.url, model="m", backoff=0.01)
        v = remote.embed("retry me")
        np.testing.assert_allclose(v, static.embed("retry me"), atol=1e-5)
        assert len(server.requests) == 3


def test_http_backend_gives_up_with_clear_error(static) -> None:
    with EmbeddingServer(static, fail_first=100, fail_status=503) as server:
        remote = OpenAIEmbedder(url=server.url, model="m", backoff=0.01, max_retries=2)
        with pytest.raises(EmbeddingError, match="503"):
            remote.embed("x")
        assert len(server.requests) == 3


def test_http_backend_client_error_is_not_retried(static) -> None:
    with EmbeddingServer(static) as server:
        remote = OpenAIEmbedder(url=server.url.replace("/v1", "/wrong"), model="m", backoff=0.01)
        with pytest.raises(EmbeddingError, match="404"):
            remote.embed("x")
        assert len(server.requests) == 1


def test_http_backend_bad_payload(static) -> None:
    with EmbeddingServer(static, garbage=True) as server, pytest.raises(EmbeddingError, match="unexpected response"):
        OpenAIEmbedder(url=server.url, model="m").embed("x")


def test_http_backend_unreachable() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    remote = OpenAIEmbedder(url=f"http://127.0.0.1:{port}/v1", model="m", backoff=0.01, max_retries=1)
    with pytest.raises(EndpointUnreachableError, match="unreachable"):
        remote.embed("x")


# -- cache -------------------------------------------------------------------------------


def test_cache_never_embeds_the_same_text_twice(static, tmp_path: Path) -> None:
    with EmbeddingServer(static) as server:
        remote = OpenAIEmbedder(url=server.url, model="m")
        cached = CachedEmbedder(remote, EmbeddingCache.open(tmp_path / "cache.db"))
        first = cached.embed_batch(["alpha", "beta", "alpha"])
        assert cached.misses == 2 and cached.hits == 1
        inputs_sent = sum(len(r["input"]) for r in server.requests)
        assert inputs_sent == 2, "a duplicate in one batch is embedded once"
        again = cached.embed_batch(["beta", "alpha", "gamma"])
        assert sum(len(r["input"]) for r in server.requests) == inputs_sent + 1, "only gamma is new"
        np.testing.assert_allclose(again[0], first[1])
        np.testing.assert_allclose(again[1], first[0])
    # The cache persists across processes' connections and is keyed by model id.
    reopened = CachedEmbedder(static, EmbeddingCache.open(tmp_path / "cache.db"))
    reopened.embed_batch(["alpha"])
    assert reopened.misses == 1, "another model id does not reuse these vectors"
    assert reopened.cache.count() == 4


def test_embedding_text_has_the_file_name_and_symbol_not_the_folders(small_chunker) -> None:
    source = "class A:\n    def run(self):\n        return 1\n\n    def stop(self):\n        return 2\n"
    chunk = next(c for c in small_chunker.chunk_text(source, "pkg/task_runner.py").chunks if c.symbol_name == "stop")
    text = embedding_text(chunk)
    assert text.startswith("task runner\nmethod A.stop\n"), text
    assert text.endswith(chunk.content)
    assert "pkg" not in text, "folders are not embedded: a moved file keeps its vectors"
    moved = next(
        c for c in small_chunker.chunk_text(source, "lib/jobs/task_runner.py").chunks if c.symbol_name == "stop"
    )
    assert embedding_text(moved) == text
    assert embedding_text(replace(chunk, symbol_name=None, file_path="src/TaskRunner.java")).startswith("task runner\n")


def test_file_name_words_of_every_kind_of_name() -> None:
    from aintern.embed import file_name_words

    assert file_name_words("lib/cop/unused_method_argument.rb") == "unused method argument"
    assert file_name_words("Sources/HTTPServer.swift") == "http server"
    assert file_name_words("src/hono-base.ts") == "hono base"
    assert file_name_words("pkg/__init__.py") == "init"
    assert file_name_words("données_utils.py") == "données utils"  # another script's word stays whole
    assert file_name_words("文档/说明.md") == "说明"
    assert file_name_words("Makefile") == "makefile"
    assert file_name_words("...") == ""


def test_indexer_token_id_path_equals_text_path(static, chunker, tmp_path: Path) -> None:
    """The indexer embeds from the chunker's token ids; that must give the vectors the text gives."""
    from aintern.embed.cache import CachedEmbedder, EmbeddingCache
    from aintern.index import Indexer
    from aintern.store import SqliteStore

    source = Path(__file__).read_text() + "\r\n# CRLF and ünïcödé 日本語 ✓\r\n"
    chunks = chunker.chunk_text(source, "tests/test_embedding.py").chunks
    assert all(c.token_ids is not None for c in chunks)
    store = SqliteStore(tmp_path / "ids.db")
    ids = Indexer(store, static)._token_ids(chunks, [embedding_header(c) for c in chunks])
    texts = [embedding_text(c) for c in chunks]
    np.testing.assert_allclose(static.embed_token_ids(ids), static.embed_batch(texts), atol=1e-6)
    cached = CachedEmbedder(static, EmbeddingCache(store.conn))
    np.testing.assert_allclose(cached.embed_batch(texts, token_ids=ids), static.embed_batch(texts), atol=1e-6)


def test_the_manifest_names_every_shipped_model_file_by_its_hash() -> None:
    """manifest.json (scripts/build_models.py) lists the sha256 of every model file the package ships."""
    import hashlib
    import json

    from aintern.embed.tokenizer import MODELS_DIR

    listed = json.loads((MODELS_DIR / "manifest.json").read_text())["files"]
    shipped = {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in MODELS_DIR.iterdir()
        if p.suffix in {".onnx", ".npy", ".npz", ".json", ".tsv"} and p.name != "manifest.json"
    }
    assert {"file-map.npy", "static-code.npy", "minilm-l6-v2.int8.onnx", "vocab.tsv"} <= set(shipped)
    assert listed == shipped
