"""Kinds of files known by their paths, shared by the scan (secrets) and the ranking's priors: a leaf outside
the scan package, so that a search ranking by them does not import the scan (issue 49: 5 ms of a CLI search)."""

from __future__ import annotations

import re

TEST_FILE = re.compile(
    r"(^|/)((test_[^/]*|[^/]*_test)\.(py|c|cc|cpp|go|rb|dart|lua|rs|ex|exs)|[^/]*_spec\.(rb|lua)"
    r"|[^/]*\.(test|spec)(-d)?\.[cm]?[jt]sx?|[^/]*(Tests?|Spec|Suite)(\.[a-z][A-Za-z]*)?\.(java|kt|swift|cs|scala|php)|test_helpers?[^/]*)$"
)
#: Test folders: test/, tests/, Tests/ (Swift, .NET), Foo.Tests/ and Foo.UnitTests/ (.NET test projects),
#: commonTest/, jvmTest/ and androidUnitTest/ (Kotlin source sets; a test file in one may end in .jvm.kt),
#: spec/, testdata/, fixtures/, and Jest's folders beside the code (__tests__/, __mocks__/ of manual
#: mocks, __fixtures__/, __snapshots__/, __typetests__/). Not `Test/`:
#: singular and capitalised, it is a PHP framework's test-support library (CodeIgniter, Symfony components).
TEST_DIR = re.compile(
    r"(^|/)(tests?|Tests|__(tests?|mocks|fixtures|snapshots|typetests)__|[Ss]pecs?|testing|testdata|fixtures"
    r"|regress|regressions?|test-?suite|e2e"
    r"|[^/]+\.(\w+)?Tests|[a-z]+(?:[A-Z][a-z]+)*Test)/"
)


def is_test(path: str) -> bool:
    """Whether the file at ``path`` (relative, ``/``-separated) is a test, by its name or its folder."""
    return bool(TEST_FILE.search(path) or TEST_DIR.search(path))


#: Source files where the right side of ``name = value`` is an expression unless quoted: an unquoted
#: ``token = ghp_abc`` there is code (a name), not a literal secret.
CODE_FILE = re.compile(
    r"\.(py|pyi|pyx|js|mjs|cjs|jsx|ts|mts|cts|tsx|vue|svelte|go|java|kt|kts|scala|groovy|gradle|rb|php|c|h|cc|cpp"
    r"|cxx|hpp|hh|cs|fs|swift|m|mm|rs|dart|lua|ex|exs|erl|hs|ml|clj|jl|r|pl|pm|zig|nim|sol|v|sv)$",
    re.IGNORECASE,
)


def unquoted_is_literal(path: str) -> bool:
    """Whether an unquoted value assigned in the file at ``path`` is a literal: in a shell script, a
    Dockerfile, YAML, .env, .properties, INI, TOML or docs it is; in code it is an expression."""
    return not CODE_FILE.search(path)
