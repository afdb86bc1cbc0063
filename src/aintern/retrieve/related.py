"""Code related to a location (``find_related``): the definitions of the names used on its line, then
the enclosing definition's other definitions and its usages (callers), then the chunks whose vectors
are nearest to the location's own.

A name defined in the location's own file is defined there: its definitions in that file (its class's
first) are the definitions, and a namesake in another file is not (requests' ``Session.request`` is
defined in sessions.py; api.py's ``request`` function calls it, it does not define it)."""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass

from aintern.chunk.models import TextChunk, chunk_definitions, overlaps
from aintern.store import Store, VectorIndex, VectorSearchOptions

IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")


@dataclass
class RelatedChunk:
    chunk: TextChunk
    chunk_id: int
    #: ``definition`` (defines a name used at the location), ``usage`` (names the location's enclosing
    #: definition: a caller) or ``similar`` (nearest vectors).
    reason: str
    score: float


def find_related(store: Store, index: VectorIndex, path: str, line: int, k: int = 10) -> list[RelatedChunk]:
    """Up to ``k`` chunks related to ``path:line``; ValueError when the file is not indexed."""
    chunk_id = store.chunk_at(index.id, path, line)
    if chunk_id is None:
        raise ValueError(f"{path} is not indexed in {index.workspace_path}")
    here = store.get_chunks([chunk_id])[chunk_id]
    symbol, parent = _symbol_at(here, line)
    own = {d[0] for d in chunk_definitions(here)} | ({here.symbol_name} if here.symbol_name else set())
    found: list[RelatedChunk] = []

    def definitions(name: str) -> None:
        """The chunks that define ``name``: those of this file when it defines it (its class's first)."""
        ids = store.chunks_defining(index.id, name, options, k)
        chunks = store.get_chunks(ids)
        ids = [cid for cid in ids if cid in chunks]
        local = [cid for cid in ids if chunks[cid].file_path == here.file_path]
        ids = local if local or name in own else ids
        add(sorted(ids, key=lambda cid: (chunks[cid].file_path != here.file_path, _parent(chunks[cid], name) != parent)),
            "definition")  # fmt: skip

    def add(ids: list[int], reason: str, scores: dict[int, float] | None = None) -> None:
        chunks = store.get_chunks(ids)
        for cid in ids:
            c = chunks.get(cid)
            if c is None or len(found) >= k or overlaps(c, here) or any(overlaps(c, r.chunk) for r in found):
                continue
            found.append(RelatedChunk(c, cid, reason, (scores or {}).get(cid, 1.0)))

    options = VectorSearchOptions(top_k=k)
    lines = here.content.splitlines()
    text = lines[line - here.start_line] if 0 <= line - here.start_line < len(lines) else ""
    for name in dict.fromkeys(IDENTIFIER.findall(text)):
        if name != symbol and len(name) > 2:
            definitions(name)
    if symbol:
        definitions(symbol)
        # Usages: chunks whose text names the symbol as a whole word (keyword search finds candidates).
        word = re.compile(rf"(?<![\w$]){re.escape(symbol)}(?![\w$])")
        usages = [r for r in store.keyword_search(index.id, symbol, VectorSearchOptions(top_k=k * 3))
                  if word.search(r.chunk.content)]  # fmt: skip
        add([r.chunk_id for r in usages], "usage", {r.chunk_id: r.score for r in usages})
    stored = store.vectors(index.id, [chunk_id]).get(chunk_id)
    if stored is not None and len(found) < k:
        vector = array("f")
        vector.frombytes(stored)
        near = store.knn(index.id, vector, k * 2 + 1, VectorSearchOptions(top_k=k * 2 + 1))
        add([cid for cid, _ in near if cid != chunk_id], "similar", dict(near))
    return found


def _symbol_at(chunk: TextChunk, line: int) -> tuple[str | None, str | None]:
    """The innermost definition at ``line`` in ``chunk`` (a method of a merged class), else the chunk's own,
    with the name of what it is defined in (its class)."""
    best: tuple[int, str, str | None] | None = None
    for name, _kind, start, end, parent in chunk_definitions(chunk):
        if start <= line <= end and (best is None or end - start < best[0]):
            best = (end - start, name, parent)
    return (best[1], best[2]) if best else (chunk.symbol_name, chunk.parent_symbol)


def _parent(chunk: TextChunk, name: str) -> str | None:
    """What ``chunk`` defines ``name`` in (a class), as far as it records it."""
    return next((p for n, _k, _a, _b, p in chunk_definitions(chunk) if n == name), chunk.parent_symbol)
