"""Static token tables with every row weighed by how common its token is in a corpus of code, for
bench/eval_static.py: SIF (a / (a + p), p the token's share of all tokens) and IDF^q over files.

    python bench/probes/reweigh_table.py /tmp/train/src --out /tmp/reweighed   # the static model's own corpus (batch 1)
    python bench/eval_static.py src/aintern/embed/models/static-code.npy /tmp/reweighed/*.npy

Section 39 found that weighing tokens by their IDF *within each index* lifts vector-only ranking; this asks
whether one global weighting, baked into the table (no per-index state), does too (docs/benchmarks.md,
section 44).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from aintern.embed.tokenizer import MODELS_DIR, WordPieceTokenizer

EXTENSIONS = {
    ".py", ".js", ".jsx", ".ts", ".tsx", ".vue", ".go", ".rs", ".java", ".kt", ".scala", ".rb", ".php", ".cs",
    ".swift", ".c", ".h", ".cc", ".cpp", ".hpp", ".ex", ".exs", ".hs", ".ml", ".lua", ".zig", ".sh", ".md",
}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", type=Path, help="a folder of source trees")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    tokenizer = WordPieceTokenizer()
    texts = [
        p.read_text(errors="ignore")[:20000]
        for p in sorted(args.corpus.rglob("*"))
        if p.suffix in EXTENSIONS and p.is_file() and p.stat().st_size < 200_000
    ]
    table = np.load(MODELS_DIR / "static-code.npy").astype(np.float32)
    counts, files = np.zeros(len(table)), np.zeros(len(table))
    for lo in range(0, len(texts), 2000):
        for ids in tokenizer.ids(texts[lo : lo + 2000]):
            counts += np.bincount(np.asarray(ids, dtype=np.int64), minlength=len(table))
            files[np.unique(np.asarray(ids, dtype=np.int64))] += 1
    share = counts / counts.sum()
    used = counts > 0
    norms = np.linalg.norm(table, axis=1)
    print(f"{len(texts)} files, {int(counts.sum())} tokens; correlation of log share and row norm: "
          f"{np.corrcoef(np.log(share[used]), norms[used])[0, 1]:.3f}")  # fmt: skip
    args.out.mkdir(parents=True, exist_ok=True)
    for a in (1e-3, 1e-4):
        np.save(args.out / f"sif{a:g}.npy", (table * (a / (a + share))[:, None]).astype(np.float16))
    idf = np.log((len(texts) + 1) / (files + 1))
    for q in (0.5, 1.0):
        np.save(args.out / f"idf{q:g}.npy", (table * (idf**q)[:, None]).astype(np.float16))


if __name__ == "__main__":
    main()
