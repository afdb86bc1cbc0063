"""aintern.search_checks on its own: the names a language filter takes and the ranges it holds (the layers'
tests check that the CLI, the web app and the MCP tools say its messages)."""

from __future__ import annotations

import math

import pytest

from aintern import search_checks
from aintern.chunk.languages import known_languages
from aintern.search_checks import SearchOptionError


def test_languages_by_name_short_name_or_extension() -> None:
    asked = ["Python", "py", ".PY", " pyi ", "js", "ts", "rb", "rs", "golang", "c#", "sh", "r", "", "  "]
    assert search_checks.languages(asked) == (
        "python", "javascript", "typescript", "ruby", "rust", "go", "csharp", "bash", "r",
    )  # fmt: skip
    # Every language's own name is itself (an extension of another's never shadows it).
    assert all(search_checks.language(name) == name for name in known_languages())
    with pytest.raises(SearchOptionError, match=r"^language: 'klingon' is not a language aintern knows; one of"):
        search_checks.language("klingon", "language")


def test_counts_relevances_and_globs_out_of_range_are_refused() -> None:
    assert search_checks.result_count(1) == 1 and search_checks.result_count(100.0) == 100
    for bad, said in ((0, "k: between 1 and 100, not 0"), (101, "not 101"), (2.5, "a whole number"), (True, "whole")):
        with pytest.raises(SearchOptionError, match=said):
            search_checks.result_count(bad)
    assert search_checks.relevance(0) == 0.0 and search_checks.relevance(1) == 1.0
    for value in (-0.01, 1.01, math.nan, math.inf):
        with pytest.raises(SearchOptionError, match=r"^--min-relevance: between 0 and 1"):
            search_checks.relevance(value, "--min-relevance")
    assert search_checks.globs([" src/**/*.py ", "", "*.md"]) == ("src/**/*.py", "*.md")
    for bad in ("a\x00b", "*" * 501):
        with pytest.raises(SearchOptionError, match=r"^path: a glob"):
            search_checks.globs([bad])
