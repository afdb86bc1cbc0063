"""A search's options checked once, for every layer: the CLI, the web app and the MCP tools ask these and
say a :class:`SearchOptionError` their own way (``error: …`` rc 2, a 400, a tool error).

Each check takes the option's name as its layer spells it (``-k``, ``k``; ``--lang``, ``language``) so the
message names what the user typed."""

from __future__ import annotations

import enum
import math
import os
from collections.abc import Iterable
from dataclasses import replace
from functools import cache
from typing import TYPE_CHECKING, TypeVar

from aintern.errors import AinternError

if TYPE_CHECKING:
    from aintern.assemble.context import ContextBuildOptions
    from aintern.knowledge_models import KnowledgeQueryOptions

E = TypeVar("E", bound=enum.Enum)

#: Most results a search returns.
MAX_RESULTS = 100
#: A number of results (``-k``, ``k``, ``n``).
RESULTS = (1, MAX_RESULTS)
#: A calibrated relevance threshold (``--min-relevance``, ``min_relevance``).
RELEVANCE = (0.0, 1.0)
#: What every layer says of a question with no visible characters (`aintern search ""`, ``q=``, ``query``).
EMPTY_QUESTION = "the question is empty (no visible characters)"
#: Longest path glob (a long run of wildcards makes matching slow).
MAX_GLOB_CHARS = 500
#: A context's token budget (``--max-tokens``, ``max_tokens``): the same on the CLI, the web app and MCP.
CONTEXT_TOKENS = (50, 1_000_000)
#: The token budget of an MCP search's answer (``max_tokens``: it lands in the agent's window, so a tenth of a
#: context's most). Its least is a context's: under it not even one hit's first line and its place fit.
SEARCH_TOKENS = (CONTEXT_TOKENS[0], 100_000)
#: Chunks a context holds (``--max-chunks``).
CONTEXT_CHUNKS = (1, MAX_RESULTS)
#: Lines shown around each chunk of a context (``--context-lines``; 0: none).
CONTEXT_LINES = (0, 100)
#: Names people give languages that are neither aintern's name nor an extension.
LANGUAGE_NAMES = {
    "golang": "go", "c#": "csharp", "f#": "fsharp", "shell": "bash", "sh": "bash", "objective-c": "objc",
    "js": "javascript", "ts": "typescript", "node": "javascript", "docker": "dockerfile", "makefile": "make",
}  # fmt: skip


class SearchOptionError(AinternError, ValueError):
    """An option a search cannot take; the message names the option and what it takes. (An AinternError, as
    everything aintern refuses; a ValueError too: the web app answers those with a 400, and a script's
    ``except ValueError`` still catches it.)"""


class RerankNeedsLLM(SearchOptionError):
    """A search asked its LLM to rerank, and no LLM is configured. Each layer names the option as it spells
    it (:meth:`said_as`); a rerank only the `rerank` setting chose is dropped with :meth:`setting_note`."""

    FIX = (
        "set llm_endpoint (an OpenAI-compatible server) and llm_model, "
        "e.g. `aintern config set llm_endpoint http://127.0.0.1:11434/v1`"
    )

    def __init__(self) -> None:
        super().__init__(self.said_as("LLM reranking"))

    def said_as(self, option: str) -> str:
        """The error, naming the option that asked for it as the layer spells it (``--rerank llm``)."""
        return f"{option} needs an LLM: {self.FIX}"

    def setting_note(self, workspace: str | None) -> str:
        """What a search whose rerank came from the setting says, having run without it. ``workspace``: the
        folder whose .aintern.toml sets it (None: the user's config.toml does)."""
        import shlex  # (only for this note: a search loads no more than it says)

        unset = "aintern config unset rerank" + (f" -w {shlex.quote(workspace)}" if workspace else "")
        return (
            f'the `rerank = "llm"` setting needs an LLM and none is configured, so the results are not reranked: '
            f"{self.FIX}, or `{unset}`"
        )


def not_a_number(value: object, name: str, bounds: tuple[int, int] | None = None) -> SearchOptionError:
    """What every layer says of a value that is not the number wanted (``-k ten``, ``k=2.5``, ``"k": true``): a
    whole number within ``bounds``, or (None) any number."""
    wanted = f"a whole number between {bounds[0]:,} and {bounds[1]:,}" if bounds else "a number"
    if isinstance(value, str):
        return SearchOptionError(f"{name}: {wanted}, not {value[:60]!r}")
    if isinstance(value, bool):  # (JSON's true: a flag, never the number 1)
        return SearchOptionError(f"{name}: {wanted}, not {str(value).lower()}")
    return SearchOptionError(f"{name}: {wanted}, not {value}")


def shown(value: float) -> str:
    """A number as a person typed it: a whole one in full (``2000000``, not ``2e+06``), else as Python reads it."""
    number = float(value)
    if math.isfinite(number) and number.is_integer() and abs(number) < 1e16:
        return str(int(number))
    return repr(number)


def whole_number(value: float, name: str, bounds: tuple[int, int]) -> int:
    """A whole number from ``bounds[0]`` to ``bounds[1]`` (one of the ranges above)."""
    low, high = bounds
    if not _is_number(value) or not (isinstance(value, int) or float(value).is_integer()):
        raise not_a_number(value, name, bounds)
    if not low <= value <= high:
        raise SearchOptionError(f"{name}: between {low:,} and {high:,}, not {shown(value)}")
    return int(value)


def result_count(value: float, name: str = "k") -> int:
    """A number of results: a whole number from 1 to :data:`MAX_RESULTS`."""
    return whole_number(value, name, RESULTS)


def _is_number(value: object) -> bool:
    """An int or a float (a script may pass anything: ``"10"``, ``True``, None)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def relevance(value: float, name: str = "min_relevance") -> float:
    """A calibrated relevance threshold: 0 to 1."""
    if not _is_number(value):
        raise not_a_number(value, name)
    low, high = RELEVANCE
    if not (math.isfinite(value) and low <= value <= high):
        raise SearchOptionError(f"{name}: between {shown(low)} and {shown(high)}, not {shown(value)}")
    return float(value)


@cache
def language_aliases() -> dict[str, str]:
    """Every name a language filter takes, to the language it means: aintern's names, extensions (``py``,
    ``.rb``) and :data:`LANGUAGE_NAMES`. A language's own name wins over another's extension."""
    from aintern.chunk.languages import EXTENSIONS, known_languages

    aliases = {ext.lstrip("."): lang for ext, lang in EXTENSIONS.items()}
    aliases |= {ext: lang for ext, lang in EXTENSIONS.items()}
    aliases |= LANGUAGE_NAMES
    return aliases | {lang: lang for lang in known_languages()}


def language(value: str, name: str = "lang") -> str:
    """The language ``value`` names (``py``, ``Python``, ``.py`` are ``python``); else the error lists them."""
    from aintern.chunk.languages import known_languages

    found = language_aliases().get(value.strip().lower())
    if found is None:
        raise SearchOptionError(
            f"{name}: {value[:60]!r} is not a language aintern knows; one of {', '.join(known_languages())} "
            "(or an extension such as py)"
        )
    return found


def languages(values: Iterable[str] | None, name: str = "lang") -> tuple[str, ...]:
    """Each language asked for, once, by aintern's name; blank values are none."""
    found = (language(v, name) for v in values or () if v.strip())
    return tuple(dict.fromkeys(found))


def globs(values: Iterable[str] | None, name: str = "path") -> tuple[str, ...]:
    """Path globs as given (trimmed); blank ones are none, a NUL or an overlong one an error."""
    checked = []
    for value in values or ():
        pattern = value.strip()
        if not pattern:
            continue
        if len(pattern) > MAX_GLOB_CHARS or "\x00" in pattern:
            raise SearchOptionError(f"{name}: a glob such as src/**/*.py, of at most {MAX_GLOB_CHARS} characters")
        checked.append(pattern)
    return tuple(checked)


def one_of(kind: type[E], value: E | str, name: str) -> E:
    """The member of ``kind`` that ``value`` is or names (``"keyword"``); else the error lists them."""
    try:
        return kind(value)
    except ValueError:
        wanted = ", ".join(str(m.value) for m in kind)
        raise SearchOptionError(f"{name}: one of {wanted}, not {str(value)[:60]!r}") from None


def names(values: Iterable[str] | str | None, name: str) -> tuple[str, ...]:
    """A tuple of names as given: a lone string is refused (``languages="python"`` would be six letters)."""
    if isinstance(values, (str, bytes)):
        raise SearchOptionError(f"{name}: a tuple of names, such as ({str(values)[:60]!r},), not a string")
    if not all(isinstance(v, str) for v in values or ()):
        raise SearchOptionError(f"{name}: each one a string")
    return tuple(values or ())


def folder(value: str | os.PathLike[str], name: str = "workspace_path") -> str:
    """The folder of an index as a string (a Path as well); an empty one is an error."""
    path = os.fspath(value) if isinstance(value, (str, os.PathLike)) else None
    if not isinstance(path, str) or not path.strip():
        raise SearchOptionError(f"{name}: the folder of an indexed repository (or workspace_paths: several)")
    return path


def query_options(o: KnowledgeQueryOptions) -> KnowledgeQueryOptions:
    """A script's KnowledgeQueryOptions checked against the limits the CLI, the web app and MCP apply, each error
    naming the field; strings taken as the enums they name (``reranking="rrf"``), a Path as a folder."""
    from aintern.chunk.models import SymbolType
    from aintern.retrieve.rerank import RerankingStrategy

    several = tuple(folder(p, "workspace_paths") for p in names(o.workspace_paths, "workspace_paths"))
    return replace(
        o, workspace_path="" if several else folder(o.workspace_path), workspace_paths=several,
        max_results=result_count(o.max_results, "max_results"), min_relevance=relevance(o.min_relevance),
        context_lines=whole_number(o.context_lines, "context_lines", CONTEXT_LINES),
        file_patterns=globs(names(o.file_patterns, "file_patterns"), "file_patterns"),
        languages=languages(names(o.languages, "languages"), "languages"),
        directory_filters=names(o.directory_filters, "directory_filters"),
        symbol_types=tuple(one_of(SymbolType, t, "symbol_types") for t in names(o.symbol_types, "symbol_types")),
        reranking=None if o.reranking is None else one_of(RerankingStrategy, o.reranking, "reranking"),
    )  # fmt: skip


def context_options(o: ContextBuildOptions) -> ContextBuildOptions:
    """A script's ContextBuildOptions checked as ``aintern context`` checks its flags."""
    from aintern.assemble.context import ContextFormat
    from aintern.assemble.tokens import TokenEstimation
    from aintern.retrieve.rerank import RerankingStrategy

    return replace(
        o, max_tokens=whole_number(o.max_tokens, "max_tokens", CONTEXT_TOKENS),
        max_chunks=whole_number(o.max_chunks, "max_chunks", CONTEXT_CHUNKS), min_relevance=relevance(o.min_relevance),
        context_lines=whole_number(o.context_lines, "context_lines", CONTEXT_LINES),
        file_patterns=globs(names(o.file_patterns, "file_patterns"), "file_patterns"),
        languages=languages(names(o.languages, "languages"), "languages"),
        reranking=one_of(RerankingStrategy, o.reranking, "reranking"), format=one_of(ContextFormat, o.format, "format"),
        token_estimation=one_of(TokenEstimation, o.token_estimation, "token_estimation"),
    )  # fmt: skip
