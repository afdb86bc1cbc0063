"""What a file's path says: the words it is named with (matched against a question's words on prefixes,
abbreviations, base forms and initials), and priors against files that rarely hold an answer (tests,
examples, one platform's port)."""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass

from aintern.file_kinds import is_test
from aintern.words import STOP_WORDS, identifier_parts

#: Words a run of a question's words skips ("get a user by id").
ARTICLES = {"a", "an", "the"}

DEMOTED_DIR = re.compile(r"(^|/)(_?compat|legacy|_?[Ee]xamples?|docs?_src|versioned_docs)/")
#: Type declarations by their older name (``typings/``, ``typings.ts``, ``bson.typings.ts``): a vendored
#: copy of another package's types, weighed as ``.d.ts`` files are.
TYPINGS = re.compile(r"(^|/)typings/|(^|/|\.)typings\.ts$")
#: The file of an error or exception class, by its name (``NotFoundError.ts``, ``QueryException.php``) or
#: by its folder, as PHP and Java namespaces put them (Doctrine's ``Exception/SavepointsNotSupported.php``).
#: Not ``Error/``: CakePHP's holds the error handling and its debugger, code a question may be about.
ERROR_CLASS_FILE = re.compile(r"[a-z0-9](Error|Exception)\.\w+$|(^|/)(?i:exceptions?)/[^/]+$")
SAMPLES_DIR = re.compile(
    r"(^|/)([Ss]amples?|[Bb]enchmarks?|__benchmarks__|bench|benches|[Dd]emos?|\w+Demo)/|[a-z0-9](Benchmarks?|Bench)\.\w+$"
)
#: Code in the top-level documentation folder: the programs it shows (libuv's docs/code/*/main.c) and its
#: build (Sphinx's docs/conf.py), weighed as samples are. Not a ``doc/`` folder deeper in the code (Go's
#: go/doc package), nor the documentation's prose.
DOCS_CODE = re.compile(
    r"^docs?/(.+/)?[^/]+\.(c|h|cc|cpp|hpp|py|js|mjs|ts|tsx|go|rs|rb|php|java|kt|swift|cs|scala|lua|ex|exs|hs|zig|sh)$"
)


#: Platform-specific file and folder names, by the platform a question would name.
_PLATFORMS = {
    "windows": {"win", "win32", "win64", "windows", "winnt", "mingw", "msvc"},
    "solaris": {"sunos", "solaris", "illumos"},
    "zos": {"os390", "zos"},
    "aix": {"aix"},
    "ibmi": {"ibmi", "os400"},
    "haiku": {"haiku"},
    "qnx": {"qnx"},
    "cygwin": {"cygwin", "msys"},
    "hurd": {"hurd"},
    "bsd": {"netbsd", "openbsd", "freebsd", "dragonfly", "dragonflybsd"},
    "vxworks": {"vxworks"},
    "plan9": {"plan9"},
    "emscripten": {"emscripten"},
    "webassembly": {"wasm", "wasm32", "wasm64", "wasi", "webassembly"},
    "fuchsia": {"fuchsia"},
    "bun": {"bun"},
    "deno": {"deno"},
    "cloudflare": {"cloudflare", "cloudflare-workers", "cloudflare-pages"},
    "lambda": {"lambda", "aws-lambda", "lambda-edge"},
    "vercel": {"vercel"},
    "netlify": {"netlify"},
    "fastly": {"fastly"},
}  # fmt: skip
_PLATFORM_OF = {name: platform for platform, names in _PLATFORMS.items() for name in names}


@functools.lru_cache(maxsize=1 << 16)
def platform_of(path: str) -> str | None:
    """The platform a file is written for, by its folders' or its name's words (src/win/tcp.c,
    terminal_check_windows.go, os390-syscalls.c), or None."""
    *folders, name = path.lower().split("/")
    for word in [*folders, *re.split(r"[-_.]", name)[:-1]]:
        if word in _PLATFORM_OF:
            return _PLATFORM_OF[word]
    return None


def platforms_named(question: str) -> set[str]:
    """The platforms a question names ("... on Windows", "kqueue" for the BSDs, "z/OS")."""
    words = {w.lower() for w in re.findall(r"[A-Za-z0-9]+", question)}
    named = {_PLATFORM_OF[w] for w in words if w in _PLATFORM_OF}
    named |= {p for p in _PLATFORMS if p in words}
    if "kqueue" in words:  # the BSDs' event interface
        named.add("bsd")
    if "z/os" in question.lower():
        named.add("zos")
    return named


@functools.lru_cache(maxsize=1 << 16)
def path_prior(path: str, samples: bool = True) -> float:
    """Multiplicative prior against files that rarely hold the answer: tests, examples, samples, type stubs (a
    long-running process asks it of the same files query after query). A package's ``__init__.py`` that
    only re-exports is judged by its content, in ``hybrid_search``."""
    penalty = 1.0
    if is_test(path):
        penalty *= 0.3
    if DEMOTED_DIR.search(path):
        penalty *= 0.3
    if path.endswith(".d.ts") or TYPINGS.search(path):
        penalty *= 0.7
    if samples and (SAMPLES_DIR.search(path) or DOCS_CODE.search(path)):
        penalty *= 0.3
    return penalty


@functools.lru_cache(maxsize=1 << 16)
def path_words(path: str) -> frozenset[str]:
    parts = path.split("/")
    name = parts[-1].rsplit(".", 1)[0]
    words = {name.lower(), *identifier_parts(name)}
    if len(parts) > 1:
        words |= {parts[-2].lower(), *identifier_parts(parts[-2])}
    return frozenset(words)


#: How code abbreviates words in file and directory names (a query says "database", the file is db.py).
ABBREVIATIONS = {
    "database": {"db"}, "connection": {"conn"}, "configuration": {"config", "conf", "cfg"}, "request": {"req"},
    "response": {"res", "resp"}, "message": {"msg"}, "buffer": {"buf"}, "context": {"ctx"}, "error": {"err"},
    "errors": {"err", "errs"}, "string": {"str"}, "temporary": {"tmp", "temp"}, "authentication": {"auth"},
    "authorization": {"auth", "authz"}, "utility": {"util", "utils"}, "utilities": {"util", "utils"},
    "argument": {"arg"}, "arguments": {"args"}, "parameter": {"param"}, "parameters": {"params"},
    "directory": {"dir"}, "library": {"lib"}, "initialization": {"init"}, "initialize": {"init"},
    "environment": {"env"}, "information": {"info"}, "asynchronous": {"async"}, "synchronous": {"sync"},
    "expression": {"expr"}, "implementation": {"impl"}, "reference": {"ref"}, "repository": {"repo"},
    "pointer": {"ptr"}, "address": {"addr"}, "command": {"cmd"}, "certificate": {"cert"},
    "package": {"pkg"}, "statistics": {"stats"}, "template": {"tmpl", "tpl"}, "transaction": {"tx", "txn"},
    "specification": {"spec"}, "filesystem": {"fs"}, "regularexpression": {"regex", "regexp"},
    "regularexpressions": {"regex", "regexp"},
}  # fmt: skip


#: Suffixes of doers, acts and verbs, longest first ("-ization" before "-ion", "-izer" before "-er").
_SUFFIXES = ("ization", "isation", "ation", "ator", "izer", "iser", "ment", "ing", "ion", "ize", "ise", "er", "or", "ed")  # fmt: skip


@functools.lru_cache(maxsize=1 << 16)
def base_form(word: str) -> str:
    """A word without its plural and the suffix that makes a doer or an act of it: router, routing,
    routes -> rout; formatter, formats, formatting -> format; validator, validation -> valid."""
    if word.endswith("s") and not word.endswith("ss") and len(word) >= 5:
        word = word[:-1]
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "ls":
        word = word[:-1]
    if len(word) >= 4 and word.endswith("e"):
        word = word[:-1]
    return word


def question_keywords(question: str) -> set[str]:
    """Lower-cased words of a question worth matching (``file system`` also as ``filesystem``)."""
    words = [w.lower() for w in re.findall(r"[A-Za-z_]\w*", question)]
    keywords = {w for w in words if len(w) > 2 and w not in STOP_WORDS}
    keywords |= {a + b for a, b in itertools.pairwise(words) if a + b in ABBREVIATIONS}
    return keywords


def initialisms(question: str) -> dict[str, set[str]]:
    """Initials of 3-4 words in a row (neither first nor last a stop word), with the words they stand for:
    "server-side rendering" -> {"ssr": {server, side, rendering}}."""
    words = [w.lower() for w in re.findall(r"[A-Za-z]+", question) if w.lower() not in ARTICLES]
    found: dict[str, set[str]] = {}
    for n in (3, 4):
        for i in range(len(words) - n + 1):
            run = words[i : i + n]
            if run[0] in STOP_WORDS or run[-1] in STOP_WORDS:
                continue
            found.setdefault("".join(w[0] for w in run), set()).update(w for w in run if w not in STOP_WORDS)
    return found


#: What most path words match (one shared set, not one per word).
_NO_KEYWORDS: frozenset[str] = frozenset()


class PathMatcher:
    """The share of a query's keywords found among a file's path words: a shared prefix of 3+ letters
    counts (route ~ routing), and so do a usual abbreviation (database ~ db), a shared base form
    (logging ~ logger) and initials (ssr ~ server-side rendering: all three words). Each path word is compared
    with the keywords once per query, however many files use it."""

    def __init__(
        self,
        keywords: set[str],
        abbreviations: bool = True,
        bases: bool = False,
        initials: dict[str, set[str]] | None = None,
    ) -> None:
        self.count = len(keywords)
        self._initials = {a: frozenset(ws & keywords) for a, ws in (initials or {}).items()}
        # Per keyword: the words it matches exactly (itself, its 3+ letter prefixes, its abbreviations)
        # and the start a longer word may have (itself, when 3+ letters).
        self._keywords = [
            (
                k,
                {k, *(k[:i] for i in range(3, len(k)))} | (ABBREVIATIONS.get(k, set()) if abbreviations else set()),
                k if len(k) >= 3 else None,
            )
            for k in keywords
        ]
        # The same matches by look-up: the keywords each exact word stands for, and every start at once (one
        # ``startswith`` of a tuple turns away most path words, which match nothing).
        self._exact: dict[str, set[str]] = {}
        for k, exact, _ in self._keywords:
            for w in exact:
                self._exact.setdefault(w, set()).add(k)
        self._starts = tuple(start for _, _, start in self._keywords if start)
        self._by_word: dict[str, frozenset[str]] = {}
        self._bases: dict[str, set[str]] = {}
        for k in keywords if bases else ():
            if len(k) >= 4:
                self._bases.setdefault(base_form(k), set()).add(k)

    def share(self, words: frozenset[str]) -> float:
        matched: set[str] = set()
        by_word = self._by_word
        for w in words:
            found = by_word.get(w)
            if found is None:
                found = by_word[w] = self._matched(w)
            if found:
                matched |= found
        return len(matched) / self.count

    def _matched(self, w: str) -> frozenset[str]:
        """The keywords the path word ``w`` matches."""
        exact = self._exact.get(w)
        starts = self._starts and w.startswith(self._starts)
        based = self._bases.get(base_form(w)) if self._bases and len(w) >= 4 else None
        initials = self._initials.get(w)
        if not (exact or starts or based or initials):
            return _NO_KEYWORDS
        found = set(exact or ())
        if starts:
            found.update(k for k, _, start in self._keywords if start and w.startswith(start))
        return frozenset(found.union(based or (), initials or ()))


@dataclass(frozen=True, slots=True)
class PathFacts:
    """What a search asks of a file's path whatever the question: read once per path and process."""

    words: frozenset[str]
    stem: str
    platform: str | None
    error_class: bool
    package_init: bool


@functools.lru_cache(maxsize=1 << 16)
def path_facts(path: str) -> PathFacts:
    return PathFacts(
        path_words(path), file_stem(path), platform_of(path), ERROR_CLASS_FILE.search(path) is not None,
        path == "__init__.py" or path.endswith("/__init__.py"),
    )  # fmt: skip


def file_stem(path: str) -> str:
    """A file's name without its last extension, lower case, underscores dropped (http_client.py: httpclient)."""
    return path.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower().replace("_", "")
