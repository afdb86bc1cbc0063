"""What each returned hit shows: the definition the question names or means inside its chunk, the lines
around it read from the file, and the question's words highlighted; done once per question, for the
hits returned only."""

from __future__ import annotations

import os
from dataclasses import replace

from aintern.assemble.context import KnowledgeChunk
from aintern.assemble.expand import FileContextExpander, FileStat, stat_of
from aintern.assemble.snippets import matching_definition
from aintern.chunk.models import SymbolType, TextChunk, chunk_definitions
from aintern.chunk.openings import inside
from aintern.retrieve.keywords import highlights
from aintern.retrieve.question import Question
from aintern.retrieve.relevance import monotone
from aintern.retrieve.rerank import Ranked
from aintern.source_files import as_indexed
from aintern.store.masks import FileVersion


def shown_hits(
    chosen: list[Ranked],
    question: Question,
    files: dict[str, FileVersion],
    root: str,
    expander: FileContextExpander | None,
    context_lines: int,
    include_snippets: bool,
) -> list[KnowledgeChunk]:
    """The hits as the knowledge service hands them out, each marked ``stale`` as its file under ``root``
    stands now. ``files``: each file's version in the index (the lines around a hit are read from disk only
    while the file is as indexed, masked as it was); ``expander``: None for no lines around."""
    out = []
    now: dict[str, FileStat] = {}  # (one stat per file, for its lines around and its staleness)
    for r in chosen:
        c = r.chunk
        version = files.get(c.file_path)
        st = now.get(c.file_path)
        if st is None:
            st = now[c.file_path] = stat_of(os.path.join(root, c.file_path))
        k = KnowledgeChunk(
            content=c.content, file_path=c.file_path, start_line=c.start_line, end_line=c.end_line,
            relevance=r.score, language=c.language, symbol_name=c.symbol_name, symbol_type=c.symbol_type,
            parent_symbol=c.parent_symbol, original_score=r.original_score, chunk_id=r.chunk_id,
            file_hash=version.content_hash if version else None, inside=inside(c.metadata),
            indexed_stat=version.stat if version else None,
        )  # fmt: skip
        k.stale = _staleness(st, os.path.join(root, c.file_path), k.indexed_stat, k.file_hash)
        nested = _nested_definition(c, question)
        if nested is not None:
            name, kind, start, end, parent = nested
            k.symbol_name, k.symbol_type, k.parent_symbol = name, SymbolType(kind), parent
            k.symbol_start_line, k.symbol_end_line = start, end
        if expander is not None and context_lines > 0:
            masks = version.masks if version else None
            e = expander.expand(
                c.file_path, c.start_line, c.end_line, c.content, context_lines, k.file_hash, masks, now=st
            )
            if e.source == "disk":
                k.expanded_context, k.expanded_start, k.expanded_end = e.content, e.start_line, e.end_line
        if include_snippets:
            k.highlights = highlights(c.content, question.highlight_keywords, question.quoted_phrases)
        out.append(k)
    return out


def marked_stale(chunks: list[KnowledgeChunk], root: str) -> list[KnowledgeChunk]:
    """``chunks`` each marked ``stale`` as its file under ``root`` stands now: "changed" when its content differs
    from the indexed one (as `aintern status` judges: read only when its size is the indexed one and its mtime
    is not), "deleted" when it is gone. One stat per file; a chunk whose mark changes is a copy (a cached answer's
    chunks are never altered)."""
    now: dict[str, str | None] = {}
    out = []
    for c in chunks:
        if c.file_path not in now:
            path = os.path.join(root, c.file_path)
            now[c.file_path] = _staleness(stat_of(path), path, c.indexed_stat, c.file_hash)
        stale = now[c.file_path]
        out.append(c if c.stale == stale else replace(c, stale=stale))
    return out


def _staleness(st: FileStat, path: str, indexed: tuple[int, int] | None, digest: str | None) -> str | None:
    """ "deleted", "changed" or None for the file at ``path`` whose stat (``stat_of``) is ``st``."""
    if indexed is None:
        return None  # (not known: an index from another store)
    if isinstance(st, (FileNotFoundError, NotADirectoryError)):
        return "deleted"
    if not isinstance(st, os.stat_result):  # (unreadable now: not said to have changed)
        return None
    return None if as_indexed(path, (st.st_size, st.st_mtime_ns), indexed, digest) else "changed"


def _nested_definition(chunk: TextChunk, question: Question) -> tuple[str, str, int, int, str | None] | None:
    """The definition nested in ``chunk`` that the question names, or (a question in words) the one that
    holds most of its words: a hit then says which, and where it is."""
    named = question.named
    if not named:
        return matching_definition(chunk.content, chunk.start_line, chunk_definitions(chunk), question)
    if chunk.symbol_name in named:
        return None
    return next((d for d in chunk_definitions(chunk) if d[0] in named), None)


def merged_hits(
    answers: list[tuple[str, str, list[KnowledgeChunk], float]], min_relevance: float, limit: int
) -> list[KnowledgeChunk]:
    """One ranking of the hits of several repositories, each given as (its workspace, its name in the
    results, its hits, the factor of their relevance): by discounted relevance, then by rank in their own; a
    chunk two nested indexes both hold, once. Each hit keeps its own relevance, shown and judged by
    ``min_relevance`` whichever other repositories were asked: the discount orders, it does not rate."""
    merged: list[tuple[float, int, KnowledgeChunk]] = []
    for workspace, repo, chunks, discount in answers:
        # (a reranked repository's relevance may rise down its order: capped, its order stands in the merge)
        ranking = monotone([c.relevance for c in chunks])
        for rank, (c, score) in enumerate(zip(chunks, ranking)):
            merged.append((score * discount, rank, replace(c, workspace=workspace, repo=repo)))
    merged.sort(key=lambda m: (-m[0], m[1]))
    out: list[KnowledgeChunk] = []
    seen: set[tuple[str, int, int]] = set()
    for _, _, c in merged:
        # An index inside another's folder holds the same files: each chunk is shown once, where it ranks best.
        where = (os.path.join(c.workspace or "", c.file_path), c.start_line, c.end_line)
        if c.relevance >= min_relevance and where not in seen:
            seen.add(where)
            out.append(c)
    return out[:limit]
