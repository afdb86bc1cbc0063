"""The full tier: a stronger model's vectors for an index that is already searchable.

The static model makes an index searchable in seconds; the transformer (``minilm``) reads code
better but embeds ~70 chunks/s on a laptop CPU (far more on a GPU). So its vectors are a second
tier, added after the fast index is written and kept up to date with it: queries use the tier,
with fusion weights of its own, once it covers every chunk (docs/benchmarks.md has the numbers).
A chunk of up to 512 tokens is read whole, as the mean of its windows (``embed_windows``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from aintern.embed import TIER_MODELS, Embedder, embedding_text
from aintern.embed.cache import content_hash
from aintern.store import Store

#: The model of the full tier (a name for aintern.embed.get_embedder).
TIER_MODEL = TIER_MODELS[0]
TIERS = ("fast", "full")
#: Chunks embedded and written together: small enough that Ctrl-C or a search waits little.
BATCH = 64


@dataclass
class TierResult:
    vectors_added: int = 0
    #: Chunks the model embedded (the rest came from the embedding cache).
    chunks_embedded: int = 0
    missing: int = 0
    complete: bool = False
    cancelled: bool = False
    duration: float = 0.0


def cache_key(model_id: str) -> str:
    """The embedding cache's model id for windowed vectors (they differ from truncated ones)."""
    return f"{model_id}#windows"


def fill_tier(
    store: Store,
    index_id: int,
    embedder: Embedder,
    progress: Callable[[int, int], None] | None = None,
    cancel: threading.Event | None = None,
    paths: list[str] | None = None,
) -> TierResult:
    """Embed the chunks that have no tier vector yet (only those of ``paths`` when given), in batches
    that each commit: a cancelled or crashed run keeps what it finished and the next one goes on."""
    started = time.perf_counter()
    result = TierResult()
    tier = store.vector_tier(index_id)
    if tier is None:
        return result
    missing = store.chunks_missing_tier(index_id, paths)
    import numpy as np  # here: `aintern update` imports this module, and a run that changed nothing needs no numpy

    cache = store.embedding_cache()
    key = cache_key(embedder.model_id)
    embed = getattr(embedder, "embed_windows", embedder.embed_batch)
    done = 0
    if progress:
        progress(0, len(missing))
    for lo in range(0, len(missing), BATCH):
        if cancel is not None and cancel.is_set():
            result.cancelled = True
            break
        chunks = store.get_chunks(missing[lo : lo + BATCH])  # a chunk re-indexed meanwhile is gone: skipped
        ids = list(chunks)
        texts = [embedding_text(chunks[i]) for i in ids]
        hashes = [content_hash(t) for t in texts]
        found = cache.get_many(key, list(set(hashes)))
        todo = {h: t for h, t in zip(hashes, texts) if h not in found}
        new = list(zip(todo, embed(list(todo.values())))) if todo else []
        found.update(new)
        vectors = np.vstack([found[h] for h in hashes]) if ids else np.zeros((0, tier.dimension), np.float32)
        with store.transaction():
            cache.put_many(key, new)
            result.vectors_added += store.add_tier_vectors(index_id, ids, vectors)
        result.chunks_embedded += len(new)
        done = min(lo + BATCH, len(missing))
        if progress:
            progress(done, len(missing))
    after = store.vector_tier(index_id)
    result.missing = after.missing if after else 0
    result.complete = after is not None and after.complete
    result.duration = time.perf_counter() - started
    return result
