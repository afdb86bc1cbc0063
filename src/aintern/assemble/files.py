"""The files a question is about: its hits grouped by file, ranked by each file's best hit."""

from __future__ import annotations

from dataclasses import dataclass, field

from aintern.assemble.context import KnowledgeChunk


@dataclass
class RelevantFile:
    file_path: str
    relevance: float
    match_count: int
    summary: str | None = None
    language: str | None = None
    match_lines: list[int] = field(default_factory=list)
    #: Ranked here only to fill the list: its relevance is under the threshold asked for.
    below_threshold: bool = False
    #: The workspace and its index's name, when a query searched several.
    workspace: str | None = None
    repo: str | None = None

    def to_dict(self) -> dict[str, object]:
        repo = {"repo": self.repo, "workspace": self.workspace} if self.workspace else {}
        return repo | {"path": self.file_path, "relevance": round(self.relevance, 4), "match_count": self.match_count,
                "match_lines": self.match_lines, "language": self.language, "summary": self.summary,
                "below_threshold": self.below_threshold}  # fmt: skip


class RelevantFiles(list[RelevantFile]):
    """The files listed, best first, and (``short``) why fewer than were asked for are listed though more files
    might match: the search's ranking held no more of them."""

    short: str | None = None


def ranking_short(listed: int, asked: int, ranked: int, depth: int, chunks: int) -> str | None:
    """Why ``listed`` files and not ``asked`` are there when the ranking had no more: it held ``ranked`` chunks,
    fewer than the ``depth`` asked of it (all it ranks for a question) and fewer than the index's ``chunks`` (a
    small index, all ranked, has no more files to list). None when the list is full or short for another reason."""
    if listed >= asked or ranked >= depth or ranked >= chunks:
        return None
    return (
        f"only {listed} files, not {asked}: the search ranked {ranked} chunks for this question (all it ranks for "
        f"one) and they are in these {listed} files"
    )


#: A file's matches are its chunks among the ranking's first MATCH_DEPTH (and the best one that lists it): the
#: same count however many files are listed (the hits read for ten files, the default).
MATCH_DEPTH = 30


def relevant_files(chunks: list[KnowledgeChunk], max_files: int, min_relevance: float) -> list[RelevantFile]:
    """The files of ranked ``chunks``, by their best chunk, with the lines that matched (MATCH_DEPTH); those
    under ``min_relevance`` marked ``below_threshold``."""
    groups: dict[str, list[KnowledgeChunk]] = {}  # in the order of each file's best chunk
    for rank, c in enumerate(chunks):
        group = groups.setdefault(c.display_path, [])
        if rank < MATCH_DEPTH or not group:
            group.append(c)
    files = [
        RelevantFile(
            file_path=cs[0].file_path,
            relevance=max(c.relevance for c in cs),
            match_count=len(cs),
            summary=cs[0].content[:100] + ("..." if len(cs[0].content) > 100 else ""),
            language=cs[0].language,
            match_lines=sorted({c.start_line for c in cs}),
            workspace=cs[0].workspace,
            repo=cs[0].repo,
        )
        for cs in groups.values()
    ]
    # Files stay in the ranking's order (by each one's best chunk): in one repository relevance never rises down
    # it, and over several the ranking weighs each repository's fit, which a hit's own relevance leaves out.
    for f in files:
        f.below_threshold = f.relevance < min_relevance
    return files[:max_files]
