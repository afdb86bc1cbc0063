"""The answer without an LLM: where the code is, what it defines, and the lines that match."""

from __future__ import annotations

from aintern.assemble.context import KnowledgeChunk

#: How to get written answers; printed under every extractive answer.
CONFIGURE_HINT = (
    "For a written answer, configure an LLM: --endpoint http://127.0.0.1:11434/v1 (Ollama, llama.cpp server, "
    "vLLM or any OpenAI-compatible server; or AINTERN_LLM_ENDPOINT), or --model path/to/model.gguf "
    "(pip install 'aintern[llm]')."
)


def matching_lines(chunk: KnowledgeChunk, limit: int = 3) -> list[tuple[int, str]]:
    """The chunk's lines that hold a highlighted keyword (else its first lines), numbered as in the file."""
    lines = chunk.content.split("\n")
    rows: list[int] = []
    for h in chunk.highlights:
        row = chunk.content.count("\n", 0, h.start)
        if row not in rows:
            rows.append(row)
    if not rows:
        rows = [i for i, line in enumerate(lines) if line.strip()][:limit]
    return [(chunk.start_line + r, lines[r].rstrip()) for r in sorted(rows[:limit]) if r < len(lines)]


def _quoted(line: str) -> str:
    """A code line as the answer quotes it: its indentation kept (it shows the nesting), its text cut at 160."""
    text = line.lstrip()
    return line[: len(line) - len(text)] + text[:160]


#: Calibrated relevance (docs/benchmarks.md): from 0.5 a hit is more likely than not in a file that answers.
LIKELY = 0.5


def extractive_answer(
    question: str, chunks: list[KnowledgeChunk], min_relevance: float = LIKELY, at_least: int = 3
) -> tuple[str, list[KnowledgeChunk]]:
    """Markdown naming each relevant location, its symbol and its matching lines, best first; and the
    chunks it names. Under ``at_least`` confident hits, the next best follow as less certain."""
    confident = [c for c in chunks if c.relevance >= min_relevance]
    others = [c for c in chunks if c.relevance < min_relevance][: max(0, at_least - len(confident))]
    if not confident and not others:
        return f"Extractive answer (no LLM): nothing in the index matches “{question}”.\n\n{CONFIGURE_HINT}\n", []
    out = [f"Extractive answer (no LLM): the code most relevant to “{question}”:", ""]
    if not confident:
        out[0] = (
            f"Extractive answer (no LLM): nothing reached relevance {min_relevance:.2f} for “{question}”; the closest matches:"
        )
    for i, c in enumerate([*confident, *others], 1):
        if confident and i == len(confident) + 1:
            out += ["", "Less certain:"]
        symbol = c.named  # (as search names the hit)
        kind = f" ({c.symbol_type.value})" if c.symbol_type and symbol else ""
        named = f" `{symbol}`{kind}" if symbol else ""
        out.append(f"{i}. {c.file_path}:{c.start_line}-{c.end_line}{named} — relevance {c.relevance:.2f}")
        out += [f"   {n:>5} | {_quoted(text)}" for n, text in matching_lines(c)]
    out += ["", CONFIGURE_HINT]
    return "\n".join(out) + "\n", [*confident, *others]
