"""What the steps of hybrid retrieval do to a ranking held as plain tuples (−score, path, start line, chunk
id): cuts that never split a tie, tied ranks, file evidence, one chunk per file before the second, the file
vectors' reordering, a definition's pieces in order."""

from __future__ import annotations

import math

from aintern.chunk.models import TextChunk
from aintern.retrieve.config import HybridConfig


def by_file_vectors(
    scored: list[tuple[float, str, int, int]], nearest: list[str], cfg: HybridConfig
) -> list[tuple[float, str, int, int]]:
    """The first ``file_vector_files`` files reordered: (1 - w) / (k + the file's place) + w / (k + its place
    among the file vectors' ``nearest``). Each file's first hit takes the place of the file it now follows;
    every other hit keeps its own place."""
    firsts: list[int] = []  # where each of the first files has its first hit
    seen: set[str] = set()
    for i, (_, path, _, _) in enumerate(scored):
        if path not in seen:
            seen.add(path)
            firsts.append(i)
            if len(firsts) == cfg.file_vector_files:
                break
    near = {path: place for place, path in enumerate(nearest)}
    w, k = cfg.file_vector_weight, cfg.file_vector_k

    def fused(place: int) -> float:
        path = scored[firsts[place]][1]
        return (1 - w) / (k + place) + (w / (k + near[path]) if path in near else 0.0)

    order = sorted(range(len(firsts)), key=lambda place: -fused(place))  # (stable: ties keep their order)
    out = list(scored)
    for slot, place in zip(firsts, order):
        out[slot] = scored[firsts[place]]
    return out


def cut(ranked: list[tuple[int, float]], k: int) -> list[tuple[int, float]]:
    """The first ``k`` of ``k + 1`` ranked candidates, without a group of equal scores that the cut would
    split: which of equal chunks (copies of a file) fall inside would depend on their storage order."""
    if len(ranked) <= k:
        return ranked
    last = tie_key(ranked[k][1])
    if tie_key(ranked[k - 1][1]) != last:
        return ranked[:k]
    return [(cid, score) for cid, score in ranked[:k] if tie_key(score) != last]


def tie_key(score: float) -> float:
    """Scores equal to 12 digits are one score (two retrieval paths may differ in the last bits)."""
    return round(score, 12)


def tied_ranks(ranked: list[tuple[int, float]]) -> list[tuple[int, int]]:
    """(rank from 0, chunk id) with equal scores sharing the rank of the first of them."""
    out: list[tuple[int, int]] = []
    previous: float | None = None
    rank = 0
    for position, (cid, score) in enumerate(ranked):
        if previous is None or not tied(previous, score):
            rank = position
        previous = score
        out.append((rank, cid))
    return out


def tied_ranks_at(ranked: list[tuple[int, float]], places: list[int]) -> list[tuple[int, int]]:
    """``tied_ranks(ranked)`` at these places only (ascending): each one's rank is the place where its run
    of equal scores starts."""
    out: list[tuple[int, int]] = []
    for place in places:
        rank = place
        # (``tied`` inline: most neighbours differ by more than its 1e-11, and a call per place adds up)
        while (
            rank and abs(ranked[rank][1] - ranked[rank - 1][1]) < 1e-11 and tied(ranked[rank - 1][1], ranked[rank][1])
        ):
            rank -= 1
        out.append((rank, ranked[place][0]))
    return out


def tied(previous: float, score: float) -> bool:
    """Whether two neighbouring scores share a rank."""
    # Scores 1e-11 apart never round to one 12-digit key: only close ones are rounded (most are not).
    return abs(score - previous) < 1e-11 and tie_key(score) == tie_key(previous)


def with_file_evidence(
    scored: list[tuple[float, str, int, int]], weight: float, top: int
) -> list[tuple[float, str, int, int]]:
    """``scored`` (−score, path, line, chunk id) with each file's scores raised by how many of the ``top``
    best chunks it holds, in the order of the scores before (a sort of the new ones then has little to do)."""
    ranked = sorted(scored)  # (C's sort: ~3x heapq.nsmallest's Python loop over a few hundred)
    per_file: dict[str, int] = {}
    for _, path, _, _ in ranked[:top] if top else ranked:
        per_file[path] = per_file.get(path, 0) + 1
    # (a file of one such chunk keeps its scores: ln 1 = 0)
    raised = {path: 1 + weight * math.log(n) for path, n in per_file.items() if n > 1}
    return [(neg * raised[path], path, line, cid) if path in raised else (neg, path, line, cid)
            for neg, path, line, cid in ranked]  # fmt: skip


def first_pieces_first(
    scored: list[tuple[float, str, int, int]], defining: dict[int, TextChunk]
) -> list[tuple[float, str, int, int]]:
    """A definition cut into pieces (chunks named after it, ``defining``) is shown from its first, the
    signature and the doc comment: where a later piece ranks above an earlier one, they trade places and
    the scores stay with the places, so every file keeps its place (docs section 47)."""
    pieces: dict[tuple[str, str | None], list[int]] = {}
    for place, (_, _, _, cid) in enumerate(scored):
        if cid in defining:
            pieces.setdefault((defining[cid].file_path, defining[cid].symbol_name), []).append(place)
    out = list(scored)
    for places in pieces.values():
        ids = sorted((scored[p][3] for p in places), key=lambda cid: defining[cid].start_line)
        for place, cid in zip(places, ids, strict=True):
            neg, path, _, _ = scored[place]
            out[place] = (neg, path, defining[cid].start_line, cid)
    return out


def diversify(scored: list[tuple[float, str, int, int]], cfg: HybridConfig) -> list[tuple[float, str, int, int]]:
    """Decay every chunk of a file beyond the first ``file_saturation`` ones; ``scored`` holds
    (−score, path, start line, chunk id), and is returned best first, equal scores by location (the
    chunk id, which depends on the index's history, only parts two chunks at one place)."""
    scored.sort()
    if cfg.file_saturation <= 0:
        return scored
    per_file: dict[str, int] = {}
    out = []
    for neg, path, line, cid in scored:
        seen = per_file.get(path, 0)
        if seen >= cfg.file_saturation:
            neg *= cfg.saturation_decay ** (seen - cfg.file_saturation + 1)
        per_file[path] = seen + 1
        out.append((neg, path, line, cid))
    out.sort()
    return out
