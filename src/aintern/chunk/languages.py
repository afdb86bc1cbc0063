"""Which language a file is written in: by extension, by file name, then by shebang."""

from __future__ import annotations

import os
import re
from pathlib import PurePath

from aintern.chunk.models import ChunkType

EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".cs": "csharp",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".ipp": "cpp",
    ".inl": "cpp",
    ".tpp": "cpp",
    ".txx": "cpp",
    ".rb": "ruby",
    ".rake": "ruby",
    ".gemspec": "ruby",
    ".ru": "ruby",
    ".php": "php",
    ".phtml": "php",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".swift": "swift",
    ".scala": "scala",
    ".sc": "scala",
    ".sbt": "scala",
    ".lua": "lua",
    ".luau": "lua",
    ".sh": "bash",
    ".bash": "bash",
    ".zsh": "bash",
    ".bats": "bash",
    ".ex": "elixir",
    ".exs": "elixir",
    ".hs": "haskell",
    ".lhs": "haskell",
    ".zig": "zig",
    ".zon": "zig",
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "markdown",
    ".rst": "rst",
    ".txt": "text",
    ".adoc": "text",
    ".json": "json",
    ".jsonc": "json",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".xml": "xml",
    ".xsd": "xml",
    ".csproj": "xml",
    ".props": "xml",
    ".targets": "xml",
    ".plist": "xml",
    ".html": "html",
    ".htm": "html",
    ".css": "css",
    ".scss": "css",
    ".less": "css",
    ".ini": "ini",
    ".cfg": "ini",
    ".conf": "ini",
    ".sql": "sql",
    ".proto": "proto",
    ".vue": "vue",
    ".svelte": "svelte",
    ".dart": "dart",
    ".r": "r",
    ".jl": "julia",
    ".m": "objc",
    ".mm": "objc",
    ".fs": "fsharp",
    ".fsi": "fsharp",
    ".fsx": "fsharp",
    ".vb": "vb",
    ".pl": "perl",
    ".pm": "perl",
    ".erl": "erlang",
    ".hrl": "erlang",
    ".clj": "clojure",
    ".ml": "ocaml",
    ".mli": "ocaml",
    ".nim": "nim",
    ".tf": "hcl",
    ".gradle": "groovy",
    ".groovy": "groovy",
    ".cmake": "cmake",
    ".mk": "make",
    # Dialects a grammar above reads: CUDA and Arduino sketches as C++, C# scripts, hsc2hs modules,
    # LuaRocks specs, ClojureScript, Django's project templates (settings.py-tpl).
    ".py-tpl": "python",
    ".thor": "ruby",
    ".gemfile": "ruby",
    ".cu": "cpp",
    ".cuh": "cpp",
    ".ino": "cpp",
    ".tcc": "cpp",
    ".h++": "cpp",
    ".c++": "cpp",
    ".csx": "csharp",
    ".hsc": "haskell",
    ".rockspec": "lua",
    ".cljs": "clojure",
    ".cljc": "clojure",
    ".edn": "clojure",
    ".tfvars": "hcl",
    ".hcl": "hcl",
    ".properties": "ini",
    ".json5": "json",
    # Chunked by lines: templates (Rails, Phoenix, ASP.NET, Symfony, Go, Jinja, Handlebars), schemas, and
    # the languages of build files, shells, shaders and editors.
    ".erb": "erb",
    ".eex": "eex",
    ".heex": "eex",
    ".leex": "eex",
    ".razor": "razor",
    ".cshtml": "razor",
    ".twig": "twig",
    ".tmpl": "gotmpl",
    ".gotmpl": "gotmpl",
    ".j2": "jinja",
    ".jinja": "jinja",
    ".jinja2": "jinja",
    ".hbs": "handlebars",
    ".handlebars": "handlebars",
    ".mustache": "handlebars",
    ".liquid": "liquid",
    ".ejs": "ejs",
    ".haml": "haml",
    ".slim": "slim",
    ".tpl": "template",
    ".stub": "template",
    ".astro": "astro",
    ".graphql": "graphql",
    ".gql": "graphql",
    ".prisma": "prisma",
    ".thrift": "thrift",
    ".cabal": "cabal",
    ".jsonnet": "jsonnet",
    ".libsonnet": "jsonnet",
    ".feature": "gherkin",
    ".m4": "m4",
    ".y": "yacc",
    ".yy": "yacc",
    ".l": "lex",
    ".jq": "jq",
    ".bzl": "starlark",
    ".star": "starlark",
    ".nix": "nix",
    ".pyx": "cython",
    ".pxd": "cython",
    ".fish": "fish",
    ".ps1": "powershell",
    ".psm1": "powershell",
    ".bat": "batch",
    ".cmd": "batch",
    ".s": "assembly",
    ".asm": "assembly",
    ".glsl": "glsl",
    ".wgsl": "wgsl",
    ".hlsl": "hlsl",
    ".metal": "metal",
    ".sol": "solidity",
    ".vim": "vim",
    ".el": "elisp",
    ".elm": "elm",
    ".cr": "crystal",
    ".gleam": "gleam",
    ".rkt": "racket",
    ".scm": "scheme",
    ".lisp": "lisp",
    ".f90": "fortran",
    ".f95": "fortran",
    ".tcl": "tcl",
    ".sv": "verilog",
    ".svh": "verilog",
    ".tex": "latex",
}

FILE_NAMES: dict[str, str] = {
    "makefile": "make",
    "gnumakefile": "make",
    "dockerfile": "dockerfile",
    "containerfile": "dockerfile",
    "rakefile": "ruby",
    "gemfile": "ruby",
    "podfile": "ruby",
    "vagrantfile": "ruby",
    "cmakelists.txt": "cmake",
    "justfile": "make",
    "jenkinsfile": "groovy",
    ".bashrc": "bash",
    ".zshrc": "bash",
    ".profile": "bash",
    "build": "text",
    "license": "text",
    "readme": "markdown",
    "pipfile": "toml",
    "cargo.lock": "toml",
    "go.mod": "text",
}

SHEBANGS: dict[str, str] = {
    "python": "python",
    "python3": "python",
    "node": "javascript",
    "deno": "typescript",
    "bun": "javascript",
    "bash": "bash",
    "sh": "bash",
    "zsh": "bash",
    "dash": "bash",
    "ruby": "ruby",
    "php": "php",
    "lua": "lua",
    "elixir": "elixir",
    "runhaskell": "haskell",
    "perl": "perl",
}

#: Languages chunked by their tree-sitter grammar (the name is the grammar's, in tree-sitter-language-pack).
CODE_LANGUAGES = frozenset(
    [
        "python",
        "javascript",
        "typescript",
        "tsx",
        "go",
        "rust",
        "java",
        "csharp",
        "c",
        "cpp",
        "ruby",
        "php",
        "kotlin",
        "swift",
        "scala",
        "lua",
        "bash",
        "elixir",
        "haskell",
        "zig",
    ]
)
CONFIG_LANGUAGES = frozenset(
    ["json", "yaml", "toml", "xml", "html", "css", "ini", "proto", "hcl", "cmake", "make", "dockerfile", "graphql",
     "prisma", "thrift", "starlark", "nix", "cabal", "jsonnet", "m4"]
)  # fmt: skip

_SHEBANG = re.compile(r"^#!\s*(?:/usr)?(?:/local)?/bin/(?:env\s+(?:-\S+\s+)*)?([A-Za-z0-9_.+-]+)")


#: What only C++ writes, in a ``.h`` file (C++ libraries use the extension too; the C grammar then
#: fails on the whole header and finds no definitions in it).
_CPP_HEADER = re.compile(
    r"^[ \t]*(template[ \t]*<|namespace[ \t]+[\w:]*[ \t]*\{|(public|private|protected)[ \t]*:|using[ \t]+namespace[ \t])"
    r"|\bstd::\w",
    re.MULTILINE,
)


def detect_language(path: str | PurePath, text: str | None = None) -> str | None:
    """Language name for ``path``; the start of its ``text`` lets a shebang decide for extension-less
    scripts, and C++ in a ``.h`` header make it C++."""
    first_line = text[:200].split("\n", 1)[0] if text else None
    name = os.path.basename(os.fspath(path)).lower()  # (not PurePath: a scan asks this of every file)
    if name in FILE_NAMES:
        return FILE_NAMES[name]
    if name.startswith("dockerfile") or name.endswith(".dockerfile"):
        return "dockerfile"
    if name.startswith(".env"):
        return "ini"
    dot = name.rfind(".")
    lang = EXTENSIONS.get(name[dot:]) if 0 < dot < len(name) - 1 else None  # PurePath.suffix
    if lang == "c" and text and name.endswith(".h") and _CPP_HEADER.search(text, 0, 50_000):
        return "cpp"
    if lang:
        return lang
    if first_line and first_line.startswith("#!"):
        m = _SHEBANG.match(first_line)
        if m:
            interpreter = re.sub(r"[\d.]+$", "", m.group(1)) or m.group(1)
            return SHEBANGS.get(m.group(1), SHEBANGS.get(interpreter))
    return None


def chunk_type_for(language: str | None) -> ChunkType:
    if language in CODE_LANGUAGES:
        return ChunkType.CODE
    if language == "markdown":
        return ChunkType.MARKDOWN
    if language in ("rst", "latex"):
        return ChunkType.DOCUMENTATION
    if language in CONFIG_LANGUAGES:
        return ChunkType.CONFIG
    if language is None or language == "text":
        return ChunkType.PLAIN_TEXT
    return ChunkType.CODE


def known_languages() -> list[str]:
    """Every language name a file can be detected as: what a language filter can match."""
    return sorted({*EXTENSIONS.values(), *FILE_NAMES.values(), *SHEBANGS.values(), *CODE_LANGUAGES, *CONFIG_LANGUAGES})
