"""The static model trained on (doc comment -> code) pairs, contrastively: tried and dropped (docs/benchmarks.md
section 37). The shipped table is fit by regression onto MiniLM's chunk vectors (scripts/train_static.py);
this asks whether a question-like text can be pulled toward its code directly.

    python bench/probes/static_pairs.py mine PAIRS.jsonl TREE...          # a doc comment's first sentence -> its code
    python bench/probes/static_pairs.py table OUT.npy PAIRS.jsonl... [--lr 0.003 --epochs 1 --mixed]
    python bench/probes/static_pairs.py question-map OUT.npy PAIRS.jsonl... [--lr 0.001 --epochs 5]
    python bench/eval_static.py OUT.npy                             # the table, vector only, dev folds
    python bench/eval_static.py --question-map OUT.npy              # the map on questions, vector only

`mine` keeps doc comments and docstrings right before (or, for docstrings, right after) a definition line,
their first sentence of 4+ words, and pairs it with the chunk it is in, that comment removed; tests, docs,
examples and vendored code are left out. `table` fine-tunes the whole token table from the shipped one
(in-batch negatives from the same tree: the pairs a search has to tell apart); `question-map` fits a
256x256 map applied to questions only, the chunks' vectors untouched. 5 % of the pairs (by chunk) are held
out, and their mean reciprocal rank among their tree's held-out pairs is printed per epoch.
The trees must not be benchmark repositories (scripts/static_corpus.txt lists the corpus used). `table`
builds its bags of tokens with scripts/train_static.py's, which needs `pip install -e '.[build]'`.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import re
import sys
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from aintern.chunk import Chunker
from aintern.embed import embedding_text
from aintern.embed.static import StaticEmbedder
from aintern.embed.tokenizer import MODELS_DIR
from aintern.index import HEADER_TOKENS
from aintern.scan import Scanner

_LINE = re.compile(
    r"^\s*(///?|#(?![!\[]|include|define|if|endif|else|pragma|import|undef|region|endregion)|--\s*\|?|;;+|\*(?!/)|/\*\*?|\*/)\s?(.*)$"
)
_TRIPLE = re.compile(r'^\s*(?:@(?:module)?doc\s+)?[rbuRBU]?("""|\'\'\')')
_STOP = re.compile(
    r"^\s*([@:]\w+|Args:|Returns:|Raises:|Parameters|Examples?|See |TODO|FIXME|NOTE:|-{3,}|={3,}|>>>)", re.I
)
_NOISE = re.compile(
    r"copyright|licen[cs]e|all rights reserved|eslint|noqa|type: ignore|prettier|rubocop:|phpcs|nolint|@ts-", re.I
)
_WORD = re.compile(r"[A-Za-z]{2,}")
_DEFINITION = re.compile(
    r"^\s*(export\s+|pub(\(\w+\))?\s+|public\s+|private\s+|protected\s+|internal\s+|static\s+|final\s+|abstract\s+|"
    r"async\s+|override\s+|open\s+|inline\s+|virtual\s+|unsafe\s+|extern\s+|local\s+)*"
    r"(def|defp|defmacro|class|module|function|fn|func|struct|enum|trait|impl|interface|type|typedef|const|let|var|"
    r"val|fun|object|protocol|extension|instance|data|newtype|namespace|constructor|"
    r"[A-Za-z_][\w<>,\[\]:*& ]*\s+[\w:~]+\s*\()"
)
_ATTRIBUTE = re.compile(r"^\s*(@\w|#\[|\[\w)")
_SKIPPED = re.compile(
    r"(^|/)\w*[Tt]ests?/|(^|/)(test_\w+|\w+_test|\w+Tests?|\w+_spec)\.\w+$|\.(spec|test)\.\w+$|"
    r"(^|/)(spec|specs|__tests__|fixtures?|testdata|examples?|docs?|benchmarks?|vendor|third_party)/|"
    r"\.(md|rst|txt|adoc|html?|json|ya?ml|toml|xml|csv|lock|cfg|ini)$",
    re.I,
)


def _sentence(lines: list[str]) -> str | None:
    """A comment's first sentence, if it reads as one (4+ words, mostly letters, no licence or lint note)."""
    kept: list[str] = []
    for raw in lines:
        line = raw.strip().strip("*/").strip()
        if not line:
            if kept:
                break
            continue
        if _STOP.match(line):
            break
        kept.append(line)
    text = re.sub(r"\s+", " ", " ".join(kept)).strip()
    first = re.match(r"(.{20,}?[.!?])(\s|$)", text)
    if first and len(first.group(1).split()) >= 4:
        text = first.group(1)
    text = " ".join(text.split()[:40])
    words = _WORD.findall(text)
    if len(words) < 4 or _NOISE.search(text) or sum(map(len, words)) < 0.6 * len(text):
        return None
    return text


def _documents(lines: list[str], start: int, end: int, docstring: bool) -> bool:
    """Whether the comment at ``start..end`` documents a definition: a docstring right after a definition's
    line (or a module's first), a comment right before one (attributes between them allowed)."""
    if docstring:
        before = start - 1
        while before >= 0 and not lines[before].strip():
            before -= 1
        return before < 0 or bool(_DEFINITION.match(lines[before])) or lines[before].rstrip().endswith(":")
    after = end + 1
    while after < len(lines) and (not lines[after].strip() or _ATTRIBUTE.match(lines[after])):
        after += 1
    return after < len(lines) and bool(_DEFINITION.match(lines[after]))


def _doc_comments(lines: list[str]) -> Iterator[tuple[int, int, str]]:
    """(first line, last line, sentence) of each doc comment in ``lines``."""
    i = 0
    while i < len(lines):
        triple = _TRIPLE.match(lines[i])
        if triple:
            quote, rest = triple.group(1), lines[i][triple.end() :]
            j, body = i, [rest.split(quote)[0]]
            if quote not in rest:
                j += 1
                while j < len(lines) and quote not in lines[j]:
                    body.append(lines[j])
                    j += 1
                if j < len(lines):
                    body.append(lines[j].split(quote)[0])
            text = _sentence(body)
            if text and _documents(lines, i, j, True):
                yield i, j, text
            i = j + 1
        elif _LINE.match(lines[i]):
            j, body = i, []
            while j < len(lines) and (m := _LINE.match(lines[j])):
                body.append(m.group(2))
                j += 1
            text = _sentence(body)
            if text and _documents(lines, i, j - 1, False):
                yield i, j - 1, text
            i = j
        else:
            i += 1


def mine(out: Path, trees: list[Path]) -> None:
    embedder = StaticEmbedder()
    chunker = Chunker(embedder.tokenizer, embedder.max_tokens - HEADER_TOKENS)
    with out.open("w") as sink:
        for tree in trees:
            seen: set[bytes] = set()
            for f in Scanner(tree).scan().files:
                if _SKIPPED.search(f.rel):
                    continue
                for chunk in chunker.chunk_file(f.path, f.rel).chunks:
                    lines = chunk.content.split("\n")
                    for start, end, question in _doc_comments(lines):
                        code = "\n".join(lines[:start] + lines[end + 1 :])
                        if len(code.strip()) < 80:
                            continue
                        document = embedding_text(dataclasses.replace(chunk, content=code))
                        key = hashlib.sha1((question + document).encode()).digest()
                        if key not in seen:
                            seen.add(key)
                            row = {"tree": tree.name, "q": question, "d": document, "at": f"{f.rel}:{chunk.start_line}"}
                            sink.write(json.dumps(row) + "\n")
            print(f"{tree.name}: {len(seen)} pairs", flush=True)


def _unit(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    norm = np.linalg.norm(x, axis=1, keepdims=True) + 1e-9
    return x / norm, norm


class _Pairs:
    """The pairs (at most ``most`` per tree), split into training and held-out by chunk."""

    def __init__(self, files: list[Path], most: int, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        by_tree: dict[str, list[dict[str, str]]] = {}
        for file in files:
            for line in file.open():
                row = json.loads(line)
                by_tree.setdefault(row["tree"], []).append(row)
        self.rows: list[dict[str, str]] = []
        for rows in by_tree.values():
            if len(rows) > most:
                rows = [rows[i] for i in sorted(rng.choice(len(rows), most, replace=False))]
            self.rows += rows
        self.trees = np.array([r["tree"] for r in self.rows])
        held = np.array([zlib.crc32((r["tree"] + r["at"]).encode()) % 20 == 0 for r in self.rows])
        self.held, self.train = np.where(held)[0], np.where(~held)[0]
        self.rng = rng

    def batches(self, size: int, mixed: bool) -> list[np.ndarray]:
        if mixed:
            order = self.rng.permutation(self.train)
            return [order[i : i + size] for i in range(0, len(order), size)]
        out = []
        for tree in np.unique(self.trees[self.train]):
            order = self.rng.permutation(self.train[self.trees[self.train] == tree])
            out += [order[i : i + size] for i in range(0, len(order), size) if len(order[i : i + size]) >= 8]
        self.rng.shuffle(out)  # type: ignore[arg-type]
        return out

    def held_out_mrr(self, questions: np.ndarray, documents: np.ndarray) -> float:
        """Mean reciprocal rank of each held-out pair's code among its tree's held-out pairs."""
        q, d = _unit(questions[self.held])[0], _unit(documents[self.held])[0]
        ranks: list[float] = []
        for tree in np.unique(self.trees[self.held]):
            k = np.where(self.trees[self.held] == tree)[0]
            if len(k) > 1:
                s = q[k] @ d[k].T
                ranks += list(1.0 / ((s > np.diag(s)[:, None]).sum(1) + 1))
        return float(np.mean(ranks))


def _contrastive_grads(q: np.ndarray, d: np.ndarray, scale: float) -> tuple[float, np.ndarray, np.ndarray]:
    """Loss and gradients (w.r.t. the unit vectors) of in-batch softmax both ways: each question's own code
    against the batch's other code, and each code's own question against the batch's other questions."""
    s = scale * q @ d.T
    rows = np.exp(s - s.max(1, keepdims=True))
    rows /= rows.sum(1, keepdims=True)
    cols = np.exp(s - s.max(0, keepdims=True))
    cols /= cols.sum(0, keepdims=True)
    eye = np.eye(len(q), dtype=np.float32)
    loss = -(np.log(np.diag(rows) + 1e-12).mean() + np.log(np.diag(cols) + 1e-12).mean()) / 2
    ds = ((rows - eye) + (cols - eye)) / (2 * len(q))
    return float(loss), scale * ds @ d, scale * ds.T @ q


def _through_unit(grad: np.ndarray, unit: np.ndarray, norm: np.ndarray) -> np.ndarray:
    return (grad - unit * (unit * grad).sum(1, keepdims=True)) / norm


class _Adam:
    def __init__(self, shape: tuple[int, ...], lr: float) -> None:
        self.m, self.v, self.lr, self.t = np.zeros(shape, np.float32), np.zeros(shape, np.float32), lr, 0

    def step(self, grad: np.ndarray, rows: np.ndarray | slice = slice(None)) -> np.ndarray:
        self.t += 1
        self.m[rows] = 0.9 * self.m[rows] + 0.1 * grad
        self.v[rows] = 0.999 * self.v[rows] + 0.001 * grad * grad
        m, v = self.m[rows] / (1 - 0.9**self.t), self.v[rows] / (1 - 0.999**self.t)
        update: np.ndarray = self.lr * m / (np.sqrt(v) + 1e-8)
        return update


def tune_table(out: Path, pairs: _Pairs, args: argparse.Namespace) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
    from train_static import bag_of_tokens  # the same bags the shipped table was fit on

    table = np.load(MODELS_DIR / "static-code.npy").astype(np.float32)
    start = table.copy()
    tokenizer = MODELS_DIR / "tokenizer.json"
    questions = bag_of_tokens([r["q"] for r in pairs.rows], table.shape[0], tokenizer)
    documents = bag_of_tokens([r["d"] for r in pairs.rows], table.shape[0], tokenizer)
    print(f"held-out MRR before: {pairs.held_out_mrr(questions @ table, documents @ table):.4f}", flush=True)
    adam = _Adam(table.shape, args.lr)
    for epoch in range(args.epochs):
        t0, losses = time.perf_counter(), []
        for batch in pairs.batches(args.batch, args.mixed):
            aq, ad = questions[batch], documents[batch]
            q, nq = _unit(aq @ table)
            d, nd = _unit(ad @ table)
            loss, gq, gd = _contrastive_grads(q, d, args.scale)
            grad = np.asarray(aq.T @ _through_unit(gq, q, nq)) + np.asarray(ad.T @ _through_unit(gd, d, nd))
            rows = np.unique(np.concatenate([aq.indices, ad.indices]))
            table[rows] -= adam.step(grad[rows] + args.reg * (table[rows] - start[rows]), rows)
            losses.append(loss)
        mrr = pairs.held_out_mrr(questions @ table, documents @ table)
        print(
            f"epoch {epoch + 1}: loss {np.mean(losses):.4f}, held-out MRR {mrr:.4f} ({time.perf_counter() - t0:.0f}s)"
        )
    np.save(out, table.astype(np.float16))


def tune_question_map(out: Path, pairs: _Pairs, args: argparse.Namespace) -> None:
    embedder = StaticEmbedder()
    questions = embedder.embed_batch([r["q"] for r in pairs.rows])
    documents = embedder.embed_batch([r["d"] for r in pairs.rows])
    w = np.eye(questions.shape[1], dtype=np.float32)
    print(f"held-out MRR before: {pairs.held_out_mrr(questions, documents):.4f}", flush=True)
    adam = _Adam(w.shape, args.lr)
    for epoch in range(args.epochs):
        for batch in pairs.batches(args.batch, args.mixed):
            x = questions[batch]
            q, nq = _unit(x @ w.T)
            _, gq, _ = _contrastive_grads(q, documents[batch], args.scale)
            w -= adam.step(_through_unit(gq, q, nq).T @ x + args.reg * (w - np.eye(len(w), dtype=np.float32)))
        print(f"epoch {epoch + 1}: held-out MRR {pairs.held_out_mrr(questions @ w.T, documents):.4f}", flush=True)
    np.save(out, w)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("step", choices=["mine", "table", "question-map"])
    ap.add_argument("out", type=Path)
    ap.add_argument("inputs", nargs="+", type=Path, help="mine: source trees; else: pair files")
    ap.add_argument("--lr", type=float, default=0.003)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--scale", type=float, default=20.0, help="the softmax's inverse temperature")
    ap.add_argument("--reg", type=float, default=0.0, help="pull toward the starting table (or the identity)")
    ap.add_argument("--most", type=int, default=1500, help="pairs per tree at most")
    ap.add_argument("--mixed", action="store_true", help="batches across trees instead of within one")
    args = ap.parse_args()
    if args.step == "mine":
        mine(args.out, args.inputs)
    elif args.step == "table":
        tune_table(args.out, _Pairs(args.inputs, args.most), args)
    else:
        tune_question_map(args.out, _Pairs(args.inputs, args.most), args)


if __name__ == "__main__":
    main()
