"""Looking at what indexing does: `aintern chunk` and `aintern embed`."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from aintern.chunk import Chunker, ChunkingOptions
from aintern.chunk.models import ChunkResult
from aintern.cli.common import (
    JsonOption,
    ModelOption,
    app,
    console,
    err,
    esc,
    fail,
    show_table,
)
from aintern.config import Settings
from aintern.embed import DEFAULT_MODEL, get_embedder
from aintern.locate import find_workspace
from aintern.plural import count
from aintern.source_files import unreadable

#: Help lists these last, apart: they show how aintern sees a file, for whoever debugs a ranking.
DEBUGGING = "Debugging"


@app.command(rich_help_panel=DEBUGGING)
def chunk(
    file: Annotated[Path, typer.Argument(help="The file to chunk.")],
    model: ModelOption = DEFAULT_MODEL,
    as_json: JsonOption = False,
    target: Annotated[int, typer.Option(help="Target chunk size in tokens.")] = ChunkingOptions.target_chunk_size,
    show_content: Annotated[
        bool, typer.Option("--content", help="Print each chunk's text (secrets masked, as the index stores it).")
    ] = False,
    include_secrets: Annotated[
        bool, typer.Option("--include-secrets", help="Show secrets' values unmasked (the index masks them).")
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Chunk the file even if the index leaves it out (minified, a secret...).")
    ] = False,
) -> None:
    """Show how FILE is chunked: lines, symbol, type and tokens of every chunk, as the index would chunk it
    (with the settings of the workspace FILE is in); a file the index leaves out is said so, with why."""
    if not file.is_file():
        try:
            file.stat()
        except OSError as exc:  # (a link to nothing, a link loop: said in `index -v`'s words)
            raise fail(f"{file}: {unreadable(file, exc) if file.is_symlink() else 'no such file'}") from None
        raise fail(f"{file}: a folder, not a file" if file.is_dir() else f"{file}: not a regular file")
    embedder = get_embedder(model)
    if target < 8:
        raise fail("--target must be at least 8 tokens")
    defaults = ChunkingOptions()
    options = ChunkingOptions(
        target_chunk_size=target,
        chunk_overlap=min(defaults.chunk_overlap, target // 4),
        min_chunk_size=min(defaults.min_chunk_size, target),
        max_chunk_size=max(target, defaults.max_chunk_size),
    )
    workspace = find_workspace(file.resolve().parent)
    settings = Settings.load(workspace)
    left_out = None if force else _left_out(file, workspace, settings)
    mask = None if include_secrets or settings.include_secrets else _masked
    chunker = Chunker(embedder.tokenizer, embedder.max_tokens, options)
    if left_out:  # (said as `index -v` says it; --force chunks it all the same)
        result = ChunkResult(file.as_posix(), [], skipped_reason=f"{left_out} (--force chunks it anyway)")
    else:
        result = chunker.chunk_file(file, file.as_posix(), settings.max_file_kb * 1024, mask)
    if as_json:
        print(
            json.dumps(
                {
                    "file": result.file_path,
                    "language": result.language,
                    "skipped_reason": result.skipped_reason,
                    "fallback_reason": result.fallback_reason,
                    "chunks": [c.to_dict() for c in result.chunks],
                },
                indent=2,
            )
        )
        raise typer.Exit(0 if result.skipped_reason is None else 3)
    if result.skipped_reason:
        err.print(f"[yellow]{esc(result.file_path)}: skipped: {esc(result.skipped_reason)}[/]", highlight=False)
        raise typer.Exit(3)
    table = Table(
        title=esc(f"{result.file_path} ({result.language or 'unknown'}): {count(len(result.chunks), 'chunk')}")
    )
    for col in ("#", "lines", "symbol", "type", "parent", "tokens"):
        table.add_column(col, justify="right" if col in ("#", "tokens") else "left")
    for i, c in enumerate(result.chunks, 1):
        table.add_row(
            str(i),
            f"{c.start_line}-{c.end_line}",
            esc(c.shown_symbols),
            c.symbol_type.value if c.symbol_type else c.chunk_type.value,
            esc(c.parent_symbol or c.metadata.get("heading_path", "")),
            str(c.token_count),
        )
    show_table(table)
    if result.fallback_reason:
        err.print(f"[yellow]note: {esc(result.fallback_reason)}[/]", highlight=False)
    if show_content:
        for i, c in enumerate(result.chunks, 1):
            console.rule(esc(f"#{i} {c.file_path}:{c.start_line}-{c.end_line}"))
            console.print(c.content, markup=False, highlight=False)


def _left_out(file: Path, workspace: Path | None, settings: Settings) -> str | None:
    """Why indexing would leave ``file`` out, or None: by the rules of its workspace (else of the git
    repository it is in, else of its folder)."""
    from aintern.scan import Scanner

    path = file.parent.resolve() / file.name  # (a link keeps its name: the scan judges where it leads)
    root = workspace or next((d for d in path.parents if (d / ".git").exists()), path.parent)
    return Scanner(root, settings.scan_options()).left_out(path.relative_to(root).as_posix())


def _masked(text: str, path: str) -> str:
    from aintern.scan.secrets import redact

    return redact(text, path)[0]


@app.command(rich_help_panel=DEBUGGING)
def embed(
    texts: Annotated[list[str], typer.Argument(help="Texts to embed ('-' reads lines from stdin).")],
    model: ModelOption = DEFAULT_MODEL,
    as_json: JsonOption = False,
) -> None:
    """Embed texts and print their vectors (JSON) or a summary with pairwise cosine similarity."""
    if texts == ["-"]:
        texts = [line.rstrip("\n") for line in sys.stdin if line.strip()]
    embedder = get_embedder(model)
    t0 = time.perf_counter()
    vectors = embedder.embed_batch(texts)
    elapsed = time.perf_counter() - t0
    if as_json:
        print(
            json.dumps(
                {
                    "model": embedder.model_id,
                    "dimension": int(vectors.shape[1]),
                    "vectors": [[round(float(x), 6) for x in v] for v in vectors],
                }
            )
        )
        return
    console.print(
        f"model [bold]{esc(embedder.model_id)}[/], dimension {vectors.shape[1]}, {len(texts)} texts in {elapsed * 1000:.1f} ms"
    )
    if len(texts) > 1:
        sims = vectors @ vectors.T
        table = Table("", *[f"#{i + 1}" for i in range(len(texts))])
        for i, text in enumerate(texts):
            table.add_row(esc(f"#{i + 1} {text[:40]}"), *[f"{sims[i, j]:.3f}" for j in range(len(texts))])
        show_table(table)
