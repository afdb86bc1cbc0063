from __future__ import annotations

import itertools
import os
import random
import sysconfig
from pathlib import Path
from typing import Any

import pytest
from samples import SAMPLES

from aintern.chunk import Chunker, ChunkingOptions, ChunkType, SymbolType, chunk_definitions, detect_language
from aintern.chunk.openings import inside


def covered_lines(chunks: list) -> set[int]:
    return {n for c in chunks for n in range(c.start_line, c.end_line + 1)}


def assert_covers(text: str, chunks: list, where: str) -> None:
    lines = text.split("\n")
    missing = [i + 1 for i, line in enumerate(lines) if line.strip() and (i + 1) not in covered_lines(chunks)]
    assert not missing, f"{where}: non-blank lines in no chunk: {missing[:10]}"


@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_symbols_per_language(small_chunker: Chunker, language: str) -> None:
    file_name, source, expected = SAMPLES[language]
    result = small_chunker.chunk_text(source, file_name)
    assert result.language == language
    assert result.fallback_reason is None
    found = {(c.symbol_name, c.symbol_type.value if c.symbol_type else None, c.parent_symbol) for c in result.chunks}
    # (a container cut into its members at these tiny sizes: its header line joins the first member's chunk)
    found |= {(d[0], d[1], d[4]) for c in result.chunks for d in chunk_definitions(c)}
    for name, (kind, parent) in expected.items():
        assert (name, kind, parent) in found, f"{language}: {name} not found as {kind} in {parent}: {found}"
    assert_covers(source, result.chunks, file_name)
    # Chunk text is exactly the file's text at the recorded offsets and lines.
    for c in result.chunks:
        assert source[c.start_offset : c.end_offset] == c.content
        assert c.content.split("\n")[0] == source.split("\n")[c.start_line - 1]
        assert c.start_line <= c.end_line


def test_symbol_boundaries_python(small_chunker: Chunker) -> None:
    _, source, _ = SAMPLES["python"]
    chunks = {c.symbol_name: c for c in small_chunker.chunk_text(source, "app.py").chunks}
    init = chunks["__init__"]
    assert init.content.lstrip().startswith("def __init__")
    size = chunks["size"]
    assert size.content.lstrip().startswith("@property"), "a decorator belongs to its function"
    assert chunks["connect"].start_line == source.split("\n").index("def connect(url):") + 1


def test_default_sizes_keep_small_file_whole(chunker: Chunker) -> None:
    _, source, _ = SAMPLES["python"]
    result = chunker.chunk_text(source, "app.py")
    assert len(result.chunks) == 1
    assert {"Store", "connect"} <= set(result.chunks[0].metadata["symbols"].split(", "))


@pytest.mark.parametrize(
    ("name", "source", "first", "declared"),
    [
        ("Controller.php", "<?php\nnamespace App\\Http;\n\nuse App\\Router;\n\nclass Controller\n{\n    public function handle() {}\n}\n",
         "Controller", "App"),
        ("bench.rs", "mod support;\nuse support::*;\n\npub struct Body(u8);\n\nfn run() {}\n", "Body", "support"),
        ("Mapper.cs", "namespace Dapper;\n\npublic static class SqlMapper\n{\n    public static int Run() { return 0; }\n}\n",
         "SqlMapper", "Dapper"),
    ],
)  # fmt: skip
def test_a_namespace_statement_does_not_name_the_chunk(
    chunker: Chunker, name: str, source: str, first: str, declared: str
) -> None:
    """`namespace App\\Http;` (PHP, C#) and `mod support;` (Rust) declare, they define no code: a small
    file's one chunk is named after its first definition (it was named `App`, the first part of the
    namespace, in every file of a PHP package), and keyword search still finds the declared name."""
    result = chunker.chunk_text(source, name)
    assert len(result.chunks) == 1
    chunk = result.chunks[0]
    assert chunk.symbol_name == first and chunk.symbol_type is not SymbolType.NAMESPACE
    assert declared in chunk.metadata["symbols"].split(", ")
    # A namespace with a body of its own still names what it holds.
    block = chunker.chunk_text("mod tests {\n    fn works() {}\n}\n", "lib.rs").chunks[0]
    assert (block.symbol_name, block.symbol_type) == ("tests", SymbolType.NAMESPACE)


CPP_HEADER = """// A C++ library's header, macros and all.
#ifndef MYLIB_FORMAT_H_
#define MYLIB_FORMAT_H_

#include <string>

MYLIB_BEGIN_NAMESPACE

template <typename Context> class arg_store;  // defined in args.h

MYLIB_EXPORT template <typename Char> class basic_writer {
 public:
  MYLIB_CONSTEXPR20 void write(const Char* s) { out_ += s; }

 private:
  std::basic_string<Char> out_;
};

MYLIB_API auto format_to(std::string& out, const char* fmt) -> std::string& {
  return out.append(fmt);
}

MYLIB_END_NAMESPACE
#endif  // MYLIB_FORMAT_H_
"""

C_HEADER = """#ifndef UV_LIKE_H
#define UV_LIKE_H
struct loop_s;
typedef struct loop_s loop_t;
struct handle_s { int flags; };
UV_EXTERN int loop_run(loop_t* loop);
static inline int handle_active(const struct handle_s* h) { return h->flags & 1; }
#endif
"""


def test_c_and_cpp_headers_name_their_definitions(chunker: Chunker) -> None:
    """A `.h` that holds C++ is parsed as C++ (as C, fmt's headers were one parse error, no definition
    found); an include guard, a macro alone on a line or before a declaration (`FMT_EXPORT template`)
    hide nothing; a forward declaration (`class arg_store;`, `struct loop_s;`) defines nothing."""
    from aintern.chunk import chunk_definitions

    assert detect_language("format.h", CPP_HEADER) == "cpp" and detect_language("uv.h", C_HEADER) == "c"
    cpp = chunker.chunk_text(CPP_HEADER, "format.h")
    assert cpp.language == "cpp"
    defined = {d[0]: d[1] for c in cpp.chunks for d in chunk_definitions(c)}
    assert {"basic_writer": "class", "write": "method", "format_to": "function"}.items() <= defined.items()
    assert "arg_store" not in defined and "namespace" not in defined and not any(n.startswith("MYLIB") for n in defined)
    # Conditionals are opened without recursion: nested past Python's stack, the file still parses.
    deep = "#if A\n" * 3000 + "int answer(void) { return 42; }\n" + "#endif\n" * 3000
    nested = chunker.chunk_text(deep, "deep.c")
    assert nested.fallback_reason is None
    assert any(c.symbol_name == "answer" and c.start_line <= 3001 <= c.end_line for c in nested.chunks)
    c = chunker.chunk_text(C_HEADER, "uv.h")
    defined = {d[0] for ch in c.chunks for d in chunk_definitions(ch)}
    assert {"handle_s", "handle_active", "loop_t"} <= defined and "loop_s" not in defined


CPP_SOURCE = """namespace testing {
namespace internal {

FilePath FilePath::RemoveExtension(const char* extension) const {
  const std::string dot_extension = std::string(".") + extension;
  return FilePath(pathname_.substr(0, pathname_.length() - dot_extension.length()));
}

FilePath::~FilePath() {}

}  // namespace internal
}  // namespace testing
"""


def test_cpp_methods_defined_outside_their_class_are_found_by_name(chunker: Chunker, tmp_path: Path) -> None:
    """A .cpp file defines its methods as `FilePath FilePath::RemoveExtension(...) {...}`: the method is
    `RemoveExtension` of `FilePath` (googletest: 151 chunks were named `Class::method`, so a search for
    the method's name had no definition to boost, and `suggest` only knew the qualified name)."""
    from aintern.chunk import chunk_definitions

    chunks = chunker.chunk_text(CPP_SOURCE, "filepath.cc").chunks
    defined = {d[0]: d for c in chunks for d in chunk_definitions(c)}
    assert defined["RemoveExtension"][1:] == ("method", 4, 7, "FilePath")
    assert defined["~FilePath"][4] == "FilePath"
    other = "int main(int argc, char** argv) {\n  return RUN_ALL_TESTS();\n}\n"
    suggested, top = suggested_and_found(
        tmp_path, {"filepath.cc": CPP_SOURCE, "main.cc": other}, "RemoveE", "RemoveExtension"
    )
    assert suggested == ["RemoveExtension"]
    assert (top.file_path, top.symbol_name, top.parent_symbol) == ("filepath.cc", "RemoveExtension", "FilePath")


COMMONJS = """'use strict';

var res = Object.create(http.ServerResponse.prototype);

res.status = function status(code) {
  this.statusCode = code;
  return this;
};

exports.json = (obj) => JSON.stringify(obj);
Router.prototype.route = function (path) { return new Route(path); };
module.exports = function createApplication() { return app; };
handlers.count = 3;
"""


def test_functions_assigned_to_properties_are_definitions(chunker: Chunker) -> None:
    """CommonJS code defines its functions by assignment (express: 43 of its 53 chunks had no name):
    each is a definition named after the property, or after itself when assigned to module.exports."""
    from aintern.chunk import chunk_definitions

    for name in ("response.js", "response.ts"):
        chunks = chunker.chunk_text(COMMONJS, name).chunks
        assert chunks[0].symbol_name == "status"
        defined = [d[0] for c in chunks for d in chunk_definitions(c)]
        assert defined == ["status", "json", "route", "createApplication"]  # (not `count`: a number)


CLASS_FIELDS = """export class App {
  #routes = []

  #dispatch(request) {
    return this.#routes.find((r) => r.match(request))
  }

  fetch = (request, env) => {
    return this.#dispatch(request)
  }

  static create = function (options) {
    return new App(options)
  }
}
"""


def test_private_methods_and_function_fields_are_definitions(chunker: Chunker, tmp_path: Path) -> None:
    """A class's `#dispatch()` (a private name, named `dispatch` as people search for it) and its
    `fetch = (...) => {...}` (a field holding a function: Hono's `fetch`, `request`, `fire`) are methods:
    named, with their lines, so `suggest` and a search for the name find them; a field holding data
    (`#routes = []`) is not."""
    from aintern.chunk import chunk_definitions

    for name in ("app.js", "app.ts"):
        chunks = chunker.chunk_text(CLASS_FIELDS, name).chunks
        defs = {d[0]: d for c in chunks for d in chunk_definitions(c)}
        assert set(defs) | {c.symbol_name for c in chunks} == {"App", "dispatch", "fetch", "create"}, (name, defs)
        assert defs["dispatch"][1:] == ("method", 4, 6, "App")
        assert defs["fetch"][1:] == ("method", 8, 10, "App")
    suggested, top = suggested_and_found(
        tmp_path, {"app.ts": CLASS_FIELDS, "router.ts": "export function route(path) {\n  return { path }\n}\n"},
        "disp", "App.dispatch",
    )  # fmt: skip
    assert suggested == ["dispatch"]
    assert (top.file_path, top.symbol_name, top.parent_symbol) == ("app.ts", "dispatch", "App")
    assert (top.symbol_start_line, top.symbol_end_line) == (4, 6)


def test_an_object_of_functions_is_a_definition_with_its_methods(chunker: Chunker) -> None:
    """`const jsonContentTypeHandler = { isMatch(req) {...}, parse: (opts) => ... }` (tRPC's content-type
    handlers) defines its functions as a class does its methods; an object of data does not."""

    text = (
        "const jsonHandler = {\n  isMatch(req) {\n    return true\n  },\n  parse: (opts) => opts,\n}\n\n"
        "export const api = {\n  get: function (url) {\n    return fetch(url)\n  },\n}\n\n"
        "const settings = { retries: 3, label: 'x' }\n"
    )
    for name in ("handlers.js", "handlers.ts"):
        defs = definitions_in(chunker, text, name)
        assert {"jsonHandler", "isMatch", "parse", "api", "get"} <= set(defs) and "settings" not in defs, (name, defs)
        assert defs["isMatch"][1:] == ("method", 2, 4, "jsonHandler")
        assert defs["get"][1:] == ("method", 9, 11, "api")


def test_a_module_written_inside_a_function_has_its_functions_found(chunker: Chunker) -> None:
    """Older JavaScript wraps a whole file in a function (a jQuery plugin's `(function ($) {...})(jQuery)`,
    `!function () {...}()`, AMD's `define([...], function (dep) {...})`): its functions are the file's
    definitions, with their own lines. A test's `describe(..., function () {...})` is not a module."""
    body = "  function formatBytes(n) {\n    return n + ' B'\n  }\n\n  exports.truncate = function (s) {\n    return s\n  }\n"
    for name, (opening, closing) in {
        "widget.js": ("(function ($) {\n", "})(jQuery);\n"),
        "bang.js": ("!function () {\n", "}();\n"),
        "arrow.ts": (";(() => {\n", "})()\n"),
        "amd.js": ("define(['jquery'], function ($) {\n", "});\n"),
    }.items():
        defs = definitions_in(chunker, opening + body + closing, name)
        assert {"formatBytes", "truncate"} <= set(defs), (name, defs)
        assert defs["truncate"][1:4] == ("function", 6, 8), (name, defs)
    spec = "describe('bytes', function () {\n" + body + "  it('works', () => {})\n});\n"
    assert "formatBytes" not in definitions_in(chunker, spec, "bytes.test.js")


def test_definitions_after_a_syntax_error_the_grammar_cannot_recover_from_are_found(chunker: Chunker) -> None:
    """TypeScript's grammar fails on generic call signatures written without semicolons (Redux Toolkit's
    `TakePattern`), and leaves what follows as loose pieces of an ERROR node. The file is parsed again
    from the next statement, so the interface after it is found, with its own lines."""
    signature = "  <Check extends Matcher<State>>(\n    check: Check,\n{}  ): Outcome<State, Check>\n"
    text = (
        "export interface WaitFor<State> {\n"
        + "".join(signature.format(extra) for extra in ("", "    timeout: number,\n", "    timeout?: number,\n"))
        + "}\n\nexport interface StopOptions {\n  cancelRunning?: true\n}\n\n"
        "export type Stop = (options?: StopOptions) => void\n\n"
        "export function stopAll(options: StopOptions): number {\n  return 0\n}\n"
    )
    defs = definitions_in(chunker, text, "types.ts")
    assert {"WaitFor", "StopOptions", "Stop", "stopAll"} <= set(defs), defs
    assert defs["StopOptions"][1:4] == ("interface", 15, 17), defs
    assert defs["stopAll"][1:4] == ("function", 21, 23), defs


def test_typescript_newer_than_the_grammar_is_read_as_it_knows_it(chunker: Chunker) -> None:
    """`export type * from`, variance (`<in out T>`) and call signatures on lines of their own after a member
    with no `;` (Redux Toolkit's `AddListenerOverloads`, its type parameters on lines of their own) are
    parsing errors for the grammar. It reads them blanked, or with a `;` in the indentation; the chunks keep
    the file's own text."""
    from aintern.chunk.forms import typescript_text

    text = (
        "export type * from './types'\ntype Exact<in out T> = (x: T) => T\n\n"
        "export type AddOverloads<Return> = {\n  /** With a predicate. */\n  <\n    Check extends Matcher,\n  >(\n"
        "    options: { predicate: Check },\n  ): Return\n\n  /** With an action creator. */\n"
        "  <Creator extends ActionCreator>(options: { actionCreator: Creator }): Return\n"
        "  (type: string): Return\n}\n\nexport function addListener(options: Options): void {\n  return\n}\n"
    )
    assert only_rewritten_parses("typescript", text) and len(typescript_text(text)) == len(text)
    defs = definitions_in(chunker, text, "types.ts")
    assert {"Exact", "AddOverloads", "addListener"} <= set(defs), defs
    chunks = chunker.chunk_text(text, "types.ts").chunks
    assert "".join(c.content for c in chunks).count("export type * from") == 1 and "<in out T>" in chunks[0].content
    # An arrow function returning one is not a signature: nothing is added to the line after `=>`.
    curried = "export const middleware =\n  (api: Api) =>\n  (next: Next) =>\n  (action: Action) => next(action)\n"
    assert typescript_text(curried) == curried


def test_kotlin_newer_than_the_grammar_is_read_as_it_knows_it(chunker: Chunker) -> None:
    """Ktor writes Kotlin 2's `..<` ranges, multi-dollar strings (`$$"$ref"`) and context parameters; each is a
    parse error for the grammar. It reads them blanked (same lines); the chunks keep the file's own text."""
    text = (
        'private const val RefKey = $$"$ref"\n\ncontext(project: Project)\nfun reportProblem(id: String) {\n'
        "    val parts = (0..<id.length).map { id[it] }\n}\n\nclass Schema {\n    fun reference(): String = RefKey\n}\n"
    )
    assert only_rewritten_parses("kotlin", text)
    defs = definitions_in(chunker, text, "Schema.kt")
    assert {"reportProblem", "Schema", "reference"} <= set(defs), defs
    assert defs["reference"][1:] == ("method", 9, 9, "Schema"), defs
    content = "".join(c.content for c in chunker.chunk_text(text, "Schema.kt").chunks)
    assert '$$"$ref"' in content and "0..<id.length" in content and "context(project: Project)" in content


def test_a_file_only_its_written_text_parses_is_read_as_written(chunker: Chunker) -> None:
    """The rewrite reads Swift's `()` as a value, but in `(_: ((), ())) in` it is a tuple type, and swift-nio's
    `HTTPEncoder.swift` parsed as written and not as rewritten. Where only the written text parses, the
    chunker reads that."""
    text = (
        "extension Encoder {\n    func flush(p: Promise) {\n        w.futureResult.map { (_: ((), ())) in }.cascade(to: p)\n"
        "    }\n\n    func encode(_ data: Data) -> Int {\n        return data.count\n    }\n}\n"
    )
    from aintern.chunk.code import CodeChunker
    from aintern.chunk.forms import parser_text
    from aintern.chunk.nodes import get_parser

    parse = get_parser("swift").parse
    assert (
        not parse(text.encode()).root_node.has_error and parse(parser_text("swift", text).encode()).root_node.has_error
    )
    nodes = CodeChunker("swift", chunker.options)._top_level(text, text.split("\n"))
    assert nodes and not any(n.has_error for n in nodes)
    defs = definitions_in(chunker, text, "HTTPEncoder.swift")
    assert defs["flush"][1:] == ("method", 2, 4, "Encoder") and defs["encode"][1:] == ("method", 6, 8, "Encoder"), defs


def test_kotlin_properties_built_by_code_are_definitions(chunker: Chunker) -> None:
    """Ktor defines each plugin as `val HttpRequestRetry = createClientPlugin("HttpRequestRetry", ...) {...}`;
    that property, and one holding a lambda, are definitions; a property holding a value is not."""

    text = (
        "package x\n\n/** Retries failed requests. */\npublic val HttpRequestRetry: ClientPlugin<Config> =\n"
        '    createClientPlugin("HttpRequestRetry", ::Config) {\n        onRequest { }\n    }\n\n'
        "val size: Int = 3\n\nclass Client {\n    val handler: (Int) -> Int = { it + 1 }\n    val count = 2\n}\n"
    )
    defs = definitions_in(chunker, text, "HttpRequestRetry.kt")
    assert {"HttpRequestRetry", "Client", "handler"} <= set(defs) and not {"size", "count"} & set(defs), defs
    assert defs["handler"][1:] == ("method", 12, 12, "Client")
    # An object literal (`val GZip: Encoder = object : Encoder { ... }`) is a class with its methods.
    encoder = "val GZip: Encoder = object : Encoder {\n    override fun encode(source: Int): Int = source\n}\n"
    nested = nested_definitions(chunker.chunk_text(text + "\n" + encoder, "HttpRequestRetry.kt").chunks)
    assert nested["encode"][1:] == ("method", 17, 17, "GZip"), nested


def test_c_tables_initialised_in_place_are_definitions(chunker: Chunker) -> None:
    """nginx defines each module as `ngx_module_t ngx_http_scgi_module = {...};` and its directives as
    `static ngx_command_t ngx_http_scgi_commands[] = {...};`: named definitions; `static int x = 3;` is not."""

    text = (
        'static ngx_command_t  ngx_http_scgi_commands[] = {\n  { ngx_string("scgi_pass"), 0 },\n'
        "  ngx_null_command\n};\n\nngx_module_t ngx_http_scgi_module = { NGX_MODULE_V1, &ctx };\n"
        "static int x = 3;\nint f(void) { return 1; }\n"
    )
    defs = definitions_in(chunker, text, "ngx_http_scgi_module.c")
    assert {"ngx_http_scgi_commands", "ngx_http_scgi_module", "f"} <= set(defs) and "x" not in defs, defs
    assert defs["ngx_http_scgi_commands"][1:4] == ("other", 1, 4)


def test_rust_constants_and_statics_are_definitions(chunker: Chunker) -> None:
    """`pub const MAX_CONNECTIONS: usize = 64;` is defined by name, as Go's `const` and `var` are."""
    text = 'pub const MAX_CONNECTIONS: usize = 64;\nstatic GREETING: &str = "hi";\n\nfn main() {}\n'
    defs = definitions_in(chunker, text, "lib.rs")
    assert {"MAX_CONNECTIONS", "GREETING", "main"} <= set(defs), defs


def test_php_helpers_guarded_by_function_exists_are_definitions(chunker: Chunker) -> None:
    """PHP helper files define each function inside `if (! function_exists('url_to')) { ... }` (CodeIgniter's
    Helpers/*.php and Common.php, Laravel's helpers.php): each is a definition with its own lines."""
    text = (
        "<?php\n\nif (! function_exists('url_to')) {\n    /**\n     * The URL of a named route.\n     */\n"
        "    function url_to(string $route, ...$args): string\n    {\n        return site_url($route);\n    }\n}\n\n"
        "if (! function_exists('uri_string')) {\n    function uri_string(): string\n    {\n        return '';\n"
        "    }\n}\n\nif ($debug) {\n    ini_set('display_errors', '1');\n}\n"
    )
    defs = definitions_in(chunker, text, "url_helper.php")
    assert {"url_to", "uri_string"} <= set(defs), defs
    assert defs["uri_string"][1:4] == ("function", 14, 17)
    # Guards nest, and `else` defines too: CodeIgniter's `dd` under `function_exists`, then `class_exists`.
    nested = (
        "<?php\nif (! function_exists('dd')) {\n    if (class_exists(Kint::class)) {\n        function dd(...$vars): void\n"
        "        {\n            exit;\n        }\n    } else {\n        function dd(...$vars)\n        {\n"
        "            return 0;\n        }\n    }\n}\n"
    )
    from aintern.chunk import chunk_definitions

    found = [d[:4] for c in chunker.chunk_text(nested, "kint_helper.php").chunks for d in chunk_definitions(c)]
    assert found == [("dd", "function", 4, 7), ("dd", "function", 9, 12)], found


def test_c_function_like_macros_are_definitions(chunker: Chunker) -> None:
    """`#define uv__handle_start(h) do { ... } while (0)` works as a function and is searched for as one;
    an object-like `#define NGX_OK 0` is a constant among thousands and is left out."""
    text = (
        "#define ngx_string(str)     { sizeof(str) - 1, (u_char *) str }\n#define NGX_OK  0\n"
        "#define uv__handle_start(h)                                           \\\n"
        "  do {                                                                \\\n"
        "    (h)->flags |= UV_HANDLE_ACTIVE;                                   \\\n"
        "  }                                                                   \\\n"
        "  while (0)\nint f(void) { return 1; }\n"
    )
    for name in ("uv-common.h", "uv-common.cc"):
        defs = definitions_in(chunker, text, name)
        assert {"ngx_string", "uv__handle_start", "f"} <= set(defs) and "NGX_OK" not in defs, (name, defs)


def test_ruby_class_methods_in_class_self_are_definitions(chunker: Chunker) -> None:
    """Sinatra defines its whole DSL (`get`, `set`, `run!`) inside `class << self ... end`: those methods are the
    enclosing class's, each a definition with its own lines, and a class over the target is cut at them."""
    methods = "".join(
        f"      # Registers route number {i}.\n      def route_{i}(path)\n"
        + "".join(f"        routes[{j}] << compile(path, {j}, :route_{i})\n" for j in range(12))
        + "      end\n\n      alias r{i} route_{i}\n\n"
        for i in range(6)
    )
    text = f"module Sinatra\n  class Base\n    class << self\n{methods}      private\n\n      def compile(p, i, n)\n        p\n      end\n    end\n  end\nend\n"
    chunks = chunker.chunk_text(text, "base.rb").chunks
    assert {f"route_{i}" for i in range(6)} | {"compile"} <= set(definitions_in(chunker, text, "base.rb"))
    # A class over the target is cut at the methods (before, by lines: every piece was named `Base`).
    first = next(c for c in chunks if c.symbol_name == "route_0")
    assert (first.start_line, first.end_line, first.symbol_type, first.parent_symbol) == (
        5,
        18,
        SymbolType.METHOD,
        "Base",
    )
    # Within the target, the chunk holding them records each with its lines.
    small = "class Base\n  class << self\n    def get(path)\n      route(path)\n    end\n\n    def set(k, v)\n    end\n  end\nend\n"
    defs = nested_definitions(chunker.chunk_text(small, "base.rb").chunks)
    assert defs["get"][1:] == ("method", 3, 5, "Base") and defs["set"][1:] == ("method", 7, 8, "Base"), defs


ZIG_SOURCE = """const std = @import("std");

/// A pool of connections.
pub const Pool = struct {
    items: []u8,

    pub fn init(allocator: std.mem.Allocator) Pool {
        _ = allocator;
        return .{ .items = &.{} };
    }

    fn release(self: *Pool) void {
        _ = self;
    }
};

pub const Mode = enum { blocking, nonblocking };

pub fn List(comptime T: type) type {
    return struct {
        const Self = @This();
        items: []T,

        pub fn append(self: *Self, item: T) void {
            _ = self;
            _ = item;
        }
    };
}

fn helper() void {}
"""


def test_zig_struct_methods_and_generic_types_are_definitions(chunker: Chunker) -> None:
    """Zig's methods live in `const Pool = struct {...}` and in a generic type, `fn List(comptime T: type) type
    { return struct {...}; }` (how its standard library writes ArrayList): each method is a definition of its
    type, found by name; before, only `Pool` and `List` were."""
    defs = nested_definitions(chunker.chunk_text(ZIG_SOURCE, "pool.zig").chunks)
    assert defs["Pool"][1:4] == ("struct", 4, 15) and defs["Mode"][1] == "enum", defs
    assert defs["init"][1:] == ("method", 7, 10, "Pool") and defs["release"][1:] == ("method", 12, 14, "Pool")
    assert defs["List"][1] == "struct" and defs["append"][1:] == ("method", 24, 27, "List")
    assert defs["helper"][1:] == ("function", 31, 31, None)
    # The type function's parameters on lines of their own (libxev's `pub fn Intrusive(\n comptime T: type,...`).
    source = ZIG_SOURCE.replace("pub fn List(comptime T: type) type {", "pub fn List(\n    comptime T: type,\n) type {")
    defs = nested_definitions(chunker.chunk_text(source, "pool.zig").chunks)
    assert defs["List"][1] == "struct" and defs["append"][1:] == ("method", 26, 29, "List"), defs


def test_lua_tables_of_functions_are_definitions(chunker: Chunker) -> None:
    """`M.sources = { lsp = function() ... end }` and `M.locality = setmetatable({ update = function(self) ...
    end }, mt)` (nvim-cmp's comparators, lualine's sources): the table and each of its functions are defined
    there; a table of values is not."""
    text = (
        "local M = {}\n\nM.sources = {\n  vim_lsp = function()\n    return 1\n  end,\n  other = 3,\n}\n\n"
        "M.locality = setmetatable({\n  count = 10,\n  update = function(self)\n    return self\n  end,\n}, {})\n\n"
        "M.defaults = { width = 80 }\n\nreturn M\n"
    )
    defs = nested_definitions(chunker.chunk_text(text, "compare.lua").chunks)
    assert defs["vim_lsp"][1:] == ("method", 4, 6, "sources") and defs["update"][1:] == ("method", 12, 14, "locality")
    assert {"sources", "locality"} <= set(defs) and "defaults" not in defs, defs


def test_python_definitions_under_if_or_try_are_definitions(chunker: Chunker) -> None:
    """click defines `getchar` twice, under `if WIN:` and `else:`; libraries define fallbacks in `try: ...
    except ImportError:` and protocols under `if TYPE_CHECKING:`: each is a definition with its own lines."""
    text = (
        "import sys\n\nWIN = sys.platform == 'win32'\n\nif WIN:\n    def getchar(echo):\n        return 1\n\n"
        "else:\n    def getchar(echo):\n        return 2\n\n    def raw_terminal():\n        pass\n\n"
        "try:\n    from fast import speedups\nexcept ImportError:\n    class speedups:\n        pass\n\n"
        "if DEBUG:\n    level = 1\n"
    )
    chunks = chunker.chunk_text(text, "_termui_impl.py").chunks
    from aintern.chunk import chunk_definitions

    found = [d[:4] for c in chunks for d in chunk_definitions(c)]
    assert found == [
        ("getchar", "function", 6, 7),
        ("getchar", "function", 10, 11),
        ("raw_terminal", "function", 13, 14),
        ("speedups", "class", 19, 20),
    ], found


def test_scala_instances_and_package_objects_are_definitions(chunker: Chunker) -> None:
    """cats defines its type class instances as `implicit val catsStdInstancesForList: Traverse[List] = new
    Traverse[List] { ... }` and `implicit def catsStdShow[A]: Show[List[A]] = new Show[...] { ... }`: the
    instance and its methods are definitions, as are a `package object`'s members; a val of a value is not."""
    text = (
        "package cats\n\npackage object conversions {\n  object all extends AllConversions\n}\n\n"
        "trait ListInstances {\n  implicit val catsStdInstancesForList: Traverse[List] =\n"
        "    new Traverse[List] with Monad[List] {\n"
        "      override def map[A, B](fa: List[A])(f: A => B): List[B] = fa.map(f)\n"
        "      def pure[A](x: A): List[A] = x :: Nil\n    }\n  val size: Int = 3\n"
        "  implicit def catsStdShow[A]: Show[List[A]] = new Show[List[A]] {\n"
        "    def show(fa: List[A]): String = fa.toString\n  }\n}\n"
    )
    defs = nested_definitions(chunker.chunk_text(text, "list.scala").chunks)
    assert defs["conversions"][1:4] == ("namespace", 3, 5) and defs["all"][4] == "conversions", defs
    assert defs["catsStdInstancesForList"][1:] == ("class", 8, 12, "ListInstances")
    assert defs["map"][1:] == ("method", 10, 10, "catsStdInstancesForList")
    assert defs["show"][1:] == ("method", 15, 15, "catsStdShow") and "size" not in defs


def test_rust_items_inside_macro_calls_are_definitions(chunker: Chunker) -> None:
    """axum defines its rejections as `define_rejection! { pub struct JsonDataError; }`, futures as
    `pin_project! { pub struct ResponseFuture<F> {...} }`, tokio whole modules inside `cfg_rt! { ... }`:
    tree-sitter keeps a macro's body as tokens, so none of them was a definition. One item is defined as if it
    stood there; several are the macro's members, each with its own lines."""
    text = (
        'define_rejection! {\n    #[body = "Failed to parse the JSON body"]\n    pub struct JsonDataError;\n}\n\n'
        "pin_project! {\n    pub struct ResponseFuture<F> {\n        #[pin]\n        inner: F,\n    }\n}\n\n"
        "cfg_rt! {\n    pub fn spawn() {}\n\n    impl Handle {\n        pub fn enter(&self) {}\n    }\n}\n\n"
        'println!("{}", 1);\n'
    )
    chunks = chunker.chunk_text(text, "rejection.rs").chunks
    assert chunks[0].symbol_name == "JsonDataError" and chunks[0].symbol_type == SymbolType.STRUCT
    defs = definitions_in(chunker, text, "rejection.rs")
    assert {"JsonDataError", "ResponseFuture", "spawn", "Handle", "enter"} <= set(defs), defs
    nested = nested_definitions(chunks)
    assert nested["spawn"][1:] == ("function", 14, 14, None) and nested["enter"][1:] == ("method", 17, 17, "Handle")


def test_elixir_modules_under_if_are_definitions(chunker: Chunker) -> None:
    """Elixir libraries define a module only when an optional dependency is there: `if
    Code.ensure_loaded?(Dataloader) do defmodule ... else defmodule ... end`; both are definitions."""
    text = (
        "if Code.ensure_loaded?(Dataloader) do\n  defmodule A.Dataloader do\n    def run(x), do: x\n  end\n"
        'else\n  defmodule A.Dataloader do\n    def run(_), do: raise("no")\n  end\nend\n'
    )
    from aintern.chunk import chunk_definitions

    chunks = chunker.chunk_text(text, "dataloader.ex").chunks
    assert (chunks[0].symbol_name, chunks[0].start_line) == ("A.Dataloader", 1)
    found = [d[:4] for c in chunks for d in chunk_definitions(c)]
    assert found == [("run", "method", 3, 3), ("A.Dataloader", "class", 6, 8), ("run", "method", 7, 7)], found


def test_an_elixir_struct_is_named_after_its_module(chunker: Chunker) -> None:
    """`defstruct [:conf, :timer, limit: 10_000]` defines the struct of the module it is in: it was named
    after its first argument (a chunk called `[`, or `host` for `defstruct host: ...`)."""
    from aintern.chunk import chunk_definitions

    text = (
        "defmodule Oban.Pruner do\n  defstruct [\n    :conf,\n    limit: 10_000\n  ]\n\n"
        "  def start_link(opts), do: opts\nend\n\n"
        'defmodule Plug.Conn do\n  defstruct host: "www.example.com", status: nil\nend\n'
    )
    chunks = chunker.chunk_text(text, "pruner.ex").chunks
    found = {(d[0], d[1]) for c in chunks for d in chunk_definitions(c)} | {
        (c.symbol_name, c.symbol_type.value) for c in chunks if c.symbol_type
    }
    assert ("Oban.Pruner", "struct") in found and ("Plug.Conn", "struct") in found, found
    assert not any(name in ("[", "host") for name, _ in found), found


def test_kotlin_class_with_its_constructor_on_the_next_line(chunker: Chunker) -> None:
    """`class EmbeddedServer<...>\\nactual constructor(` and `class Interceptor\\n  @JvmOverloads\\n  constructor(`
    (how ktlint formats a long header): tree-sitter's grammar ended the class at the newline, and its
    members were no definitions; they are, on their own lines. A secondary constructor is left alone."""
    text = (
        "public actual class EmbeddedServer<\n    TEngine : ApplicationEngine,\n    >\nactual constructor(\n"
        "    properties: ServerProperties,\n) {\n    public fun start(wait: Boolean) {\n        run()\n    }\n}\n\n"
        "class HttpLoggingInterceptor\n  @JvmOverloads\n  constructor(\n    private val logger: Logger,\n"
        "  ) : Interceptor {\n    fun level(level: Level) = apply { }\n}\n\n"
        "class Foo(val x: Int) {\n    val y = 1\n    constructor(s: String) : this(s.length)\n    fun bar() = y\n}\n"
    )
    defs = nested_definitions(chunker.chunk_text(text, "EmbeddedServer.kt").chunks)
    assert defs["start"][1:] == ("method", 7, 9, "EmbeddedServer"), defs
    assert defs["level"][1:] == ("method", 17, 17, "HttpLoggingInterceptor")
    assert defs["bar"][1:] == ("method", 23, 23, "Foo")


def test_cpp_macro_calls_in_class_bodies_and_extern_c_blocks(chunker: Chunker) -> None:
    """A macro call alone on its line in a class body, without a semicolon (`CLI11_ERROR_DEF(Error, ParseError)`,
    `GTEST_DISALLOW_COPY_AND_ASSIGN_(Foo)`), made tree-sitter lose every class after it; a C API's functions
    inside `extern "C" { ... }` were no definitions. Both are read now."""
    text = (
        "namespace CLI {\n\nclass ParseError : public Error {\n    CLI11_ERROR_DEF(Error, ParseError)\n};\n\n"
        "class Success : public ParseError {\n    CLI11_ERROR_DEF(ParseError, Success)\n"
        '    Success() : Success("done", 0) {}\n};\n\nclass CallForHelp : public Success {\n'
        "    CLI11_ERROR_DEF(Success, CallForHelp)\n};\n\n}  // namespace CLI\n\n"
        'extern "C" {\n\nvoid leveldb_close(leveldb_t* db) {\n  delete db->rep;\n}\n\n'
        'int leveldb_major_version() { return 1; }\n\n}  // end extern "C"\n'
    )
    defs = definitions_in(chunker, text, "Error.cc")
    assert {"ParseError", "Success", "CallForHelp", "leveldb_close", "leveldb_major_version"} <= set(defs), defs
    nested = nested_definitions(chunker.chunk_text(text, "Error.cc").chunks)
    assert nested["CallForHelp"][1:4] == ("class", 12, 14) and nested["leveldb_close"][1:4] == ("function", 20, 22)


def only_rewritten_parses(language: str, text: str) -> bool:
    """Whether the grammar fails on ``text`` as written and parses it as the chunker rewrites it."""
    from aintern.chunk.forms import parser_text
    from aintern.chunk.nodes import get_parser

    parse = get_parser(language).parse
    return (
        bool(parse(text.encode()).root_node.has_error)
        and not parse(parser_text(language, text).encode()).root_node.has_error
    )


def definitions_in(chunker: Chunker, text: str, name: str) -> dict[str, tuple[object, ...]]:
    """Every definition in ``text`` chunked as the file ``name``: the nested ones with their kind, lines
    and parent, and each chunk's own name."""
    chunks = chunker.chunk_text(text, name).chunks
    return nested_definitions(chunks) | {c.symbol_name: (c.symbol_name,) for c in chunks if c.symbol_name}


def nested_definitions(chunks: list[Any]) -> dict[str, tuple[object, ...]]:
    """The definitions recorded in ``chunks``: name -> (name, kind, first line, last line, parent)."""
    from aintern.chunk import chunk_definitions

    return {d[0]: d for c in chunks for d in chunk_definitions(c)}


def suggested_and_found(tmp_path: Path, files: dict[str, str], partial: str, query: str) -> tuple[list[str], Any]:
    """``files`` indexed as a workspace: the names suggested for ``partial``, and the first hit for ``query``."""
    from aintern.knowledge import KnowledgeQueryOptions
    from aintern.workspace import Workspace

    root = tmp_path / "project"
    root.mkdir()
    for name, text in files.items():
        (root / name).write_text(text)
    ws = Workspace(root, tmp_path / "n.db")
    ws.build_index()
    suggested = ws.knowledge.query_suggestions(partial, str(root))
    top = ws.knowledge.query(query, KnowledgeQueryOptions(workspace_path=str(root), min_relevance=0.0)).chunks[0]
    ws.close()
    return suggested, top


LUA_MODULE = """local M = {}

---@param opts table
function M.setup(opts)
  M.options = vim.tbl_deep_extend("force", {}, opts)
end

function M:del(id)
  self.fragments[id] = nil
end

M.build = function(plugin) return plugin.build end
local run = function(cmd) return vim.fn.system(cmd) end

return M
"""


def test_lua_functions_on_a_module_table_are_named_by_field(chunker: Chunker) -> None:
    """`function M.setup()` was the definition `M.setup` (and `function M:del()` was `M`), so a search
    for `setup` found no definition; each is now named after its field, as a method elsewhere is."""
    from aintern.chunk import chunk_definitions

    chunks = chunker.chunk_text(LUA_MODULE, "config.lua").chunks
    assert [d[0] for c in chunks for d in chunk_definitions(c)] == ["setup", "del", "build", "run"]
    assert chunks[0].symbol_name == "setup"


def test_haskell_top_level_values_are_definitions(chunker: Chunker) -> None:
    """`borderWidth = 1` binds a name as much as `f x = ...` does (xmonad's Config.hs is made of them)."""
    from aintern.chunk import chunk_definitions

    source = "module Config where\n\nborderWidth :: Int\nborderWidth = 1\n\nlayout x = x + borderWidth\n"
    defined = [d[0] for c in chunker.chunk_text(source, "Config.hs").chunks for d in chunk_definitions(c)]
    assert defined == ["borderWidth", "layout"]


def test_named_exports_are_definitions(chunker: Chunker) -> None:
    """`export const upgradeWebSocket = defineWebSocketHelper((c, events) => ...)`, `export const appRouter =
    router({...})`: what a module exports by name is defined there, whatever call made it."""
    from aintern.chunk import chunk_definitions

    source = (
        "import { defineWebSocketHelper } from './helper'\n\n"
        "export const upgradeWebSocket = defineWebSocketHelper((c, events) => {\n  return c.upgrade(events)\n})\n\n"
        "export const appRouter = router({ greet: procedure.query(() => 'hi') })\n"
        "export const handler = async (req: Request) => new Response('ok')\n"
        "const internal = makeThing()\nexport { internal }\nexport default appRouter\n"
    )
    chunks = chunker.chunk_text(source, "ws.ts").chunks
    defined = {d[0]: d[1] for c in chunks for d in chunk_definitions(c)}
    assert defined == {"upgradeWebSocket": "function", "appRouter": "other", "handler": "function"}


def test_go_values_are_definitions_and_methods_name_their_type(chunker: Chunker) -> None:
    """`var ErrNotFound = errors.New(...)` and each name of a `var (...)` or `const` block is looked up by
    name; a method's parent is its receiver's type; the chunk is named after the type, not a value."""
    from aintern.chunk import chunk_definitions

    source = (
        'package chi\n\nvar ErrNotFound = errors.New("not found")\n\n'
        'var (\n\tRequestIDKey = &contextKey{"RequestID"}\n\tLogEntryKey = &contextKey{"LogEntry"}\n)\n\n'
        "const MaxSize = 10\n\ntype Middlewares []func(http.Handler) http.Handler\n\n"
        "func (mws Middlewares) Handler(h http.Handler) http.Handler { return h }\n"
    )
    chunks = chunker.chunk_text(source, "chain.go").chunks
    defined = [(d[0], d[4]) for c in chunks for d in chunk_definitions(c)]
    assert defined == [
        ("ErrNotFound", None), ("RequestIDKey", None), ("LogEntryKey", None), ("MaxSize", None),
        ("Middlewares", None), ("Handler", "Middlewares"),
    ]  # fmt: skip
    assert chunks[0].symbol_name == "Middlewares"


def test_a_swift_subscript_is_not_named_after_its_type(chunker: Chunker) -> None:
    from aintern.chunk import chunk_definitions

    source = "struct HTTPHeaders {\n    var headers: [String]\n    subscript(key: String) -> Int { 0 }\n}\n"
    defined = [
        (d[0], d[4]) for c in chunker.chunk_text(source, "HTTPHeaders.swift").chunks for d in chunk_definitions(c)
    ]
    assert ("subscript", "HTTPHeaders") in defined and not any(name == "Int" for name, _ in defined)


def test_small_symbols_are_merged_up_to_target(static) -> None:
    getters = "class Point:\n" + "".join(f"    def get_{i}(self):\n        return self._{i}\n\n" for i in range(40))
    options = ChunkingOptions(target_chunk_size=120, chunk_overlap=16, min_chunk_size=20, max_chunk_size=200)
    chunks = Chunker(static.tokenizer, 512, options).chunk_text(getters, "point.py").chunks
    assert 3 <= len(chunks) < 40, "tiny getters are merged, not one chunk each"
    assert all(c.token_count <= 120 for c in chunks)
    assert all(c.parent_symbol == "Point" for c in chunks[1:])
    assert any("get_1" in c.metadata.get("symbols", "") for c in chunks)
    assert_covers(getters, chunks, "point.py")


def test_oversized_function_split_with_overlap(static) -> None:
    body = "".join(f"    value_{i} = compute(value_{i - 1}, factor={i})\n" for i in range(1, 400))
    source = f"def huge():\n    value_0 = 1\n{body}    return value_399\n"
    options = ChunkingOptions(target_chunk_size=200, chunk_overlap=32, min_chunk_size=20, max_chunk_size=256)
    chunks = Chunker(static.tokenizer, 512, options).chunk_text(source, "big.py").chunks
    assert len(chunks) > 5
    assert all(c.symbol_name == "huge" and c.symbol_type is SymbolType.FUNCTION for c in chunks)
    assert all(c.token_count <= 256 for c in chunks)
    for a, b in itertools.pairwise(chunks):
        assert b.start_line <= a.end_line, "consecutive pieces overlap"
        assert b.start_line > a.start_line
    assert_covers(source, chunks, "big.py")


def test_window_caps_chunk_size(minilm) -> None:
    source = "".join(f"def f{i}(a, b):\n    return a * {i} + b\n\n" for i in range(300))
    chunker = Chunker(minilm.tokenizer, minilm.max_tokens)
    assert chunker.options.max_chunk_size == minilm.max_tokens
    chunks = chunker.chunk_text(source, "many.py").chunks
    assert all(c.token_count <= minilm.max_tokens for c in chunks)
    # The model's tokenizer, not characters / 4, counts tokens.
    for c in chunks[:5]:
        assert c.token_count == len(minilm.tokenizer.ids([c.content])[0])


def test_markdown_sections_keep_heading_path(chunker: Chunker, static) -> None:
    text = (
        "# Guide\n\nIntro text.\n\n## Install\n\n"
        + "pip install aintern and configure it well.\n" * 30
        + "\n## Usage\n\n### Search\n\n"
        + "Run aintern search with a question about code.\n" * 30
        + "\n```python\n# not a heading\n```\n"
    )
    options = ChunkingOptions(target_chunk_size=100, chunk_overlap=10, min_chunk_size=10, max_chunk_size=200)
    chunks = Chunker(static.tokenizer, 512, options).chunk_text(text, "docs/guide.md").chunks
    assert all(c.chunk_type is ChunkType.MARKDOWN for c in chunks)
    search = [c for c in chunks if c.symbol_name == "Search"]
    assert search and search[0].metadata["heading_path"] == "Guide > Usage"
    assert not any(c.symbol_name == "not a heading" for c in chunks)
    assert_covers(text, chunks, "guide.md")


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("config.json", ChunkType.CONFIG),
        ("ci.yaml", ChunkType.CONFIG),
        ("pyproject.toml", ChunkType.CONFIG),
        ("notes.txt", ChunkType.PLAIN_TEXT),
        ("page.html", ChunkType.CONFIG),
        ("style.css", ChunkType.CONFIG),
    ],
)
def test_config_and_text_by_lines_with_overlap(static, name: str, kind: ChunkType) -> None:
    text = "".join(f'  "key_{i}": "value number {i}",\n' for i in range(300))
    options = ChunkingOptions(target_chunk_size=100, chunk_overlap=20, min_chunk_size=10, max_chunk_size=150)
    chunks = Chunker(static.tokenizer, 512, options).chunk_text(text, name).chunks
    assert len(chunks) > 5 and all(c.chunk_type is kind for c in chunks)
    assert all(c.token_count <= 150 for c in chunks)
    assert any(b.start_line <= a.end_line for a, b in itertools.pairwise(chunks)), "overlap between pieces"
    assert_covers(text, chunks, name)


def test_unknown_language_falls_back_to_lines(chunker: Chunker) -> None:
    result = chunker.chunk_text("some words\n" * 20, "data.unknownext")
    assert result.language is None and result.chunks
    assert result.chunks[0].chunk_type is ChunkType.PLAIN_TEXT


def test_unicode_crlf_tabs(chunker: Chunker) -> None:
    source = "# -*- coding: utf-8 -*-\r\nclass Café:\r\n\tdef naïve(self):\r\n\t\treturn '日本語 ✓'\r\n"
    result = chunker.chunk_text(source, "unicode.py")
    assert result.chunks
    for c in result.chunks:
        assert source[c.start_offset : c.end_offset] == c.content
    assert "日本語" in result.chunks[0].content
    assert_covers(source, result.chunks, "unicode.py")


def test_empty_and_blank_files(chunker: Chunker) -> None:
    for text in ("", "\n\n   \n\t\n"):
        result = chunker.chunk_text(text, "empty.py")
        assert result.chunks == [] and result.skipped_reason == "empty file"


def test_syntax_errors_still_chunked(chunker: Chunker) -> None:
    source = "def ok():\n    return 1\n\ndef broken(:\n    x = = 2\n    return (\n\nclass Fine:\n    pass\n"
    result = chunker.chunk_text(source, "broken.py")
    assert result.chunks
    assert_covers(source, result.chunks, "broken.py")


def test_minified_single_line(static) -> None:
    source = "var a=" + "+".join(f"f{i}(x)" for i in range(900)) + ";"
    assert len(source) > 5000
    chunker = Chunker(static.tokenizer, 256)
    result = chunker.chunk_text(source, "bundle.min.js")
    assert len(result.chunks) > 1, "one long line is cut at token boundaries"
    assert all(c.start_line == c.end_line == 1 for c in result.chunks)
    assert all(c.token_count <= 256 for c in result.chunks)
    assert "".join(c.content for c in result.chunks) == source


def test_bad_files_yield_reasons_not_exceptions(chunker: Chunker, tmp_path: Path) -> None:
    binary = tmp_path / "image.py"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    latin = tmp_path / "legacy.py"
    latin.write_bytes("# caf\xe9\n".encode("latin-1") * 10)
    huge = tmp_path / "huge.py"
    huge.write_text("x = 1\n" * 400_000)
    missing = tmp_path / "gone.py"
    directory = tmp_path / "adir.py"
    directory.mkdir()
    reasons = {p.name: chunker.chunk_file(p).skipped_reason for p in (binary, latin, huge, missing, directory)}
    assert reasons["image.py"] and "binary" in reasons["image.py"]
    assert reasons["legacy.py"] is None, "a Latin-1 file is read, as Windows-1252"
    assert chunker.chunk_file(latin).chunks[0].content.startswith("# caf\xe9\n# caf\xe9")
    assert reasons["huge.py"] and "too large" in reasons["huge.py"]
    assert reasons["gone.py"] and "unreadable" in reasons["gone.py"]
    assert reasons["adir.py"] == "not a regular file (directory)"


@pytest.mark.parametrize(
    ("path", "first_line", "language"),
    [
        ("src/app.py", None, "python"),
        ("Makefile", None, "make"),
        ("Dockerfile", None, "dockerfile"),
        ("web/App.tsx", None, "tsx"),
        ("lib/x.hpp", None, "cpp"),
        ("bin/tool", "#!/usr/bin/env python3", "python"),
        ("bin/run", "#!/bin/bash", "bash"),
        ("bin/srv", "#!/usr/bin/env node", "javascript"),
        ("README", None, "markdown"),
        ("data.bin", None, None),
        ("script", "no shebang", None),
        # Dialects read by a grammar above, and files chunked by lines that a project's questions may be about.
        ("kernels/add.cu", None, "cpp"),
        ("sketch/blink.ino", None, "cpp"),
        ("src/Posix.hsc", None, "haskell"),
        ("django/conf/project_template/project_name/settings.py-tpl", None, "python"),
        ("app/views/users/show.html.erb", None, "erb"),
        ("lib/app_web/components/core_components.heex", None, "eex"),
        ("Pages/Index.cshtml", None, "razor"),
        ("schema.graphql", None, "graphql"),
        ("rules/defs.bzl", None, "starlark"),
        ("build.ps1", None, "powershell"),
        ("scrapy/templates/spiders/basic.tmpl", None, "gotmpl"),
        ("man/HCAR.tex", None, "latex"),
        ("stack.cabal", None, "cabal"),
        ("cmd-parse.y", None, "yacc"),
        ("app/views/layouts/application.html.haml", None, "haml"),
    ],
)
def test_language_detection(path: str, first_line: str | None, language: str | None) -> None:
    assert detect_language(path, first_line) == language


def test_cuda_kernels_are_chunked_as_cpp(chunker: Chunker) -> None:
    """A .cu file is indexed (it was skipped as an unknown type), and the C++ grammar names its kernels."""
    from aintern.chunk import chunk_definitions

    cuda = (
        "__global__ void vector_add(const float *a, const float *b, float *c, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) c[i] = a[i] + b[i];\n"
        "}\n\n"
        "void launch_vector_add(const float *a, const float *b, float *c, int n) {\n"
        "    vector_add<<<(n + 255) / 256, 256>>>(a, b, c, n);\n"
        "}\n"
    )
    result = chunker.chunk_text(cuda, "kernels/add.cu")
    assert result.language == "cpp" and result.fallback_reason is None
    names = [c.symbol_name for c in result.chunks] + [d[0] for c in result.chunks for d in chunk_definitions(c)]
    assert names == ["vector_add", "launch_vector_add"]


def _stdlib_files(count: int) -> list[Path]:
    files = sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py"))
    files = [f for f in files if "site-packages" not in f.parts]
    random.Random(7).shuffle(files)
    return files[:count]


def test_every_line_covered_on_real_files(chunker: Chunker, minilm) -> None:
    """Property: every non-blank line of a real source file is in at least one chunk."""
    from aintern.scan import decode_source

    files = _stdlib_files(int(os.environ.get("AINTERN_COVERAGE_FILES", "250")))
    files += sorted(Path(__file__).resolve().parents[1].joinpath("src").rglob("*.py"))
    assert len(files) > 100
    small = Chunker(minilm.tokenizer, minilm.max_tokens)
    checked = 0
    for f in files:
        for ch in (chunker, small):
            result = ch.chunk_file(f)
            if result.skipped_reason:
                continue
            text = decode_source(f.read_bytes())[0]
            assert text is not None
            assert_covers(text, result.chunks, str(f))
            assert all(c.token_count <= ch.options.max_chunk_size for c in result.chunks), f
            checked += 1
    assert checked > 150


@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_every_line_covered_multi_language(chunker: Chunker, small_chunker: Chunker, language: str) -> None:
    file_name, source, _ = SAMPLES[language]
    # Repeat the sample so it has to be split, under both default and tiny sizes.
    big = "\n".join([source] * 12)
    for ch in (chunker, small_chunker):
        result = ch.chunk_text(big, file_name)
        assert_covers(big, result.chunks, file_name)


NESTED = """class DatabaseConnection:
    def __init__(self, url):
        self.url = url

    def open_connection(self):
        return connect(self.url)


def load_settings(path):
    with open(path) as f:
        return f.read()


SETTINGS = load_settings("x")
"""


def test_nested_definitions_are_recorded_with_their_lines(chunker: Chunker) -> None:
    """A class merged with a function into one chunk still names its methods, each with its own lines."""
    from aintern.chunk import chunk_definitions

    result = chunker.chunk_text(NESTED, "db.py")
    assert len(result.chunks) == 1
    defs = {d[0]: d for d in chunk_definitions(result.chunks[0])}
    assert defs["__init__"] == ("__init__", "method", 2, 3, "DatabaseConnection")
    assert defs["open_connection"] == ("open_connection", "method", 5, 6, "DatabaseConnection")
    assert defs["load_settings"][2:4] == (9, 11)


def test_nested_definition_is_suggested_boosted_and_reported(tmp_path: Path) -> None:
    other = "def open_file(path):\n    return open(path)\n\n\ndef connect_all():\n    pass\n"
    suggested, top = suggested_and_found(tmp_path, {"db.py": NESTED, "other.py": other}, "open_con", "open_connection")
    assert suggested == ["open_connection"]
    assert (top.file_path, top.symbol_name, top.parent_symbol) == ("db.py", "open_connection", "DatabaseConnection")
    assert (top.symbol_start_line, top.symbol_end_line) == (5, 6)


CACHER = """class FileCacher:
    def __init__(self, writer, cache):
        self.writer = writer
        self.cache = cache

    # Cache a page: the response written as an HTML file on disk.
    def cache_page(self, request, content):
        path = self.path_of(request.url)
        self.writer.write(path, content)

    def forget(self, url):
        self.cache.forget(url)
"""


def test_a_question_in_words_reports_the_merged_definition_it_is_about(chunker: Chunker, tmp_path: Path) -> None:
    """A chunk of several methods answers "writing whole pages as HTML files to disk" with the method whose
    lines (and comment) hold those words, `cache_page`, and its lines: not the constructor it starts with.
    A question no method answers better than the first keeps the chunk's own name."""
    from aintern.assemble.snippets import matching_definition
    from aintern.chunk import chunk_definitions

    _, top = suggested_and_found(tmp_path, {"cacher.py": CACHER}, "cache", "writing whole pages as HTML files to disk")
    assert (top.symbol_name, top.parent_symbol, top.symbol_start_line, top.symbol_end_line) == (
        "cache_page",
        "FileCacher",
        7,
        9,
    )
    chunk = chunker.chunk_text(CACHER, "cacher.py").chunks[0]
    definitions = chunk_definitions(chunk)
    assert matching_definition(chunk.content, chunk.start_line, definitions, "the file cacher class") is None
    assert matching_definition(chunk.content, chunk.start_line, definitions, "forget a cached url")[0] == "forget"


def test_a_one_line_fragment_joins_its_neighbour(chunker: Chunker) -> None:
    """A container cut into its members left its header (`extension ByteBuffer {`, `module Cop`), a lone
    `#if`/`#endif`, `#[test]` or `private` as a chunk of one line, named after the container: as a search
    result it says nothing, and for a search of the type's name it outranked the type (swift-nio's
    `ByteBuffer`). Each now joins the chunk it opens or closes; the definitions stay recorded."""
    from aintern.chunk import chunk_definitions

    body = "".join(
        f"    /// Reads {i} bytes and moves the reader index past them.\n"
        f"    public mutating func read{i}(length: Int) -> [UInt8]? {{\n"
        f"        let bytes = self.getBytes(at: self.readerIndex, length: length + {i})\n"
        f"        self.moveReaderIndex(forwardBy: length)\n        return bytes\n    }}\n\n"
        for i in range(14)
    )
    swift = f"extension ByteBuffer {{\n    #if canImport(Dispatch)\n{body}    #endif\n}}\n"
    rust = (
        "mod tests {\n    use super::*;\n\n"
        + "".join(
            f"    #[test]\n    fn adds_{i}() {{\n        let total = add({i}, 2) + add(3, {i});\n"
            f'        assert_eq!(total, {2 * i + 5}, "sum {i}");\n    }}\n\n'
            for i in range(30)
        )
        + "}\n"
    )
    ruby = (
        "module RuboCop\n  module Cop\n    class VariableTable\n"
        + "".join(
            f"      def scope_{i}(node)\n        @scopes[{i}] ||= Scope.new(node, {i})\n        @scopes[{i}].push(node)\n      end\n\n"
            + ("      private\n\n" if i == 20 else "")
            for i in range(40)
        )
        + "    end\n  end\nend\n"
    )
    for text, path, kept in ((swift, "ByteBuffer+Read.swift", "ByteBuffer"), (rust, "lib.rs", "tests"),
                             (ruby, "variable_table.rb", "VariableTable")):  # fmt: skip
        chunks = chunker.chunk_text(text, path).chunks
        assert len(chunks) > 2, path  # (the container was cut into its members)
        lone = [c.content for c in chunks if sum(1 for line in c.content.splitlines() if line.strip()) <= 1]
        assert not lone, (path, lone)
        assert all(c.symbol_name not in ("RuboCop", "Cop") for c in chunks), [c.symbol_name for c in chunks]
        found = {c.symbol_name for c in chunks} | {d[0] for c in chunks for d in chunk_definitions(c)}
        assert kept in found, (path, found)
    first = chunker.chunk_text(swift, "ByteBuffer+Read.swift").chunks[0]
    assert first.content.startswith("extension ByteBuffer {") and "func read0" in first.content, first.content
    assert all(
        "#[test]\n    fn" in c.content for c in chunker.chunk_text(rust, "lib.rs").chunks if "#[test]" in c.content
    )


def test_a_module_around_one_class_is_named_after_the_class(chunker: Chunker) -> None:
    """Every file of a Ruby gem wraps its class in `module RuboCop` and `module Cop`: the file's chunk was
    called `RuboCop`, in every file. It is named after the class, in the innermost module."""
    text = (
        "# frozen_string_literal: true\n\nmodule RuboCop\n  module Cop\n    module Metrics\n"
        "      # Checks if the length of a method exceeds some maximum value.\n"
        "      class MethodLength < Base\n        def on_def(node)\n          check_code_length(node)\n"
        "        end\n      end\n    end\n  end\nend\n"
    )
    (chunk,) = chunker.chunk_text(text, "method_length.rb").chunks
    assert (chunk.symbol_name, chunk.symbol_type, chunk.parent_symbol) == ("MethodLength", SymbolType.CLASS, "Metrics")
    two = text.replace("      class MethodLength", "      class Other < Base\n      end\n\n      class MethodLength")
    (chunk,) = chunker.chunk_text(two, "method_length.rb").chunks
    assert chunk.symbol_name == "RuboCop"  # (a module of two classes is named after itself)


def test_a_class_cut_into_members_keeps_its_doc_comment_and_its_modules(small_chunker: Chunker) -> None:
    """A class too large for one chunk is cut into its members. Its doc comment sits between `module
    Style` and `class Alias`, where tree-sitter puts it beside the module's body, not in it: it went to
    the module's header, and 585 of RuboCop's files opened with a chunk of the cop's description named
    `Style`. The comment goes with the class, and the module lines above join it (docs section 42)."""
    methods = "".join(
        f"        def check_{i}(node)\n          add_offense(node) if node.kind_{i}?\n        end\n\n" for i in range(4)
    )
    text = (
        "# frozen_string_literal: true\n\nmodule RuboCop\n  module Cop\n    module Style\n"
        "      # Enforces the use of either `#alias` or `#alias_method`\n"
        "      # depending on configuration, so that one of them is used throughout.\n"
        f"      class Alias < Base\n        MSG = 'Use alias.'\n\n{methods}      end\n    end\n  end\nend\n"
    )
    chunks = small_chunker.chunk_text(text, "alias.rb").chunks
    first = chunks[0]
    assert (first.symbol_name, first.symbol_type, first.parent_symbol) == ("Alias", SymbolType.CLASS, "Style")
    assert first.start_line == 1 and "Enforces the use of" in first.content and "class Alias" in first.content
    assert not any(c.symbol_name in ("RuboCop", "Cop", "Style") for c in chunks)
    assert [c.symbol_name for c in chunks[1:]] == [f"check_{i}" for i in range(4)]
    # A comment on the class's own line stays with its header.
    marked = text.replace("class Alias < Base\n", "class Alias < Base # rubocop:disable Metrics/ClassLength\n")
    first, *rest = small_chunker.chunk_text(marked, "alias.rb").chunks
    assert first.symbol_name == "Alias" and "class Alias < Base # rubocop:disable" in first.content
    assert [c.symbol_name for c in rest] == [f"check_{i}" for i in range(4)]  # (still cut into its members)


def test_swift_written_for_a_newer_compiler_keeps_its_definitions(chunker: Chunker) -> None:
    """One `()` statement in a `switch` made the whole of swift-nio's `FileSystem.swift` one parse error, and
    typed throws, `sending` and `nonisolated(unsafe)` made others; the definitions after them had no names.
    The parser now reads such syntax blanked (same lines), and the chunks keep the file's own text."""
    text = (
        "public struct FileSystem {\n"
        "    func move(_ r: Result) {\n        switch r {\n        case .moved:\n            ()\n"
        "        case .failed:\n            promise.succeed(())\n        }\n    }\n\n"
        "    func copy<E>(_ body: () throws(E) -> Int) throws(E) -> Int {\n        try body()\n    }\n\n"
        "    func take(_ value: sending Value) -> sending Value {\n        value\n    }\n\n"
        "    func nonisolated() -> Int {\n        1\n    }\n"
        "}\n\nnonisolated(unsafe) private let sharedKey = malloc(1)!\n\n"
        "public func removeItem(at path: FilePath) {\n    _ = path\n}\n"
    )
    assert only_rewritten_parses("swift", text)
    defs = definitions_in(chunker, text, "FileSystem.swift")
    assert {"FileSystem", "move", "copy", "take", "nonisolated", "removeItem"} <= set(defs), defs
    assert defs["take"][1:] == ("method", 15, 17, "FileSystem") and defs["removeItem"][1:4] == ("function", 26, 28)
    chunks = chunker.chunk_text(text, "FileSystem.swift").chunks
    assert "".join(c.content for c in chunks).count("throws(E)") == 2 and "promise.succeed(())" in chunks[0].content


def test_swift_members_after_a_compiler_directive_stay_members(small_chunker: Chunker) -> None:
    """tree-sitter's Swift grammar read an `#if` inside a type's body as the end of the type: the members
    after it were functions of the file, not methods of `ByteBuffer` (half of swift-nio's files with a
    directive did not parse). The directive lines are read as blank; both branches stay, as written."""
    from aintern.chunk.forms import swift_directives

    text = (
        "extension ByteBuffer {\n    #if os(Linux)\n    func readLinux() -> Int { return 1 }\n    #else\n"
        "    func readDarwin() -> Int { return 2 }\n    #endif\n\n    func peekBytes() -> Int { return 3 }\n}\n"
    )
    assert swift_directives(text).splitlines()[1] == " " * len("    #if os(Linux)")
    chunks = small_chunker.chunk_text(text, "ByteBuffer+Read.swift").chunks
    found = {(c.symbol_name, c.parent_symbol) for c in chunks} | {
        (d[0], d[4]) for c in chunks for d in chunk_definitions(c)
    }
    for method in ("readLinux", "readDarwin", "peekBytes"):
        assert (method, "ByteBuffer") in found, found
    assert "".join(c.content for c in chunks).count("#if os(Linux)") == 1  # (the text is the file's)


def test_a_piece_begun_inside_a_string_or_comment_knows_where_it_opens(static) -> None:
    """A long docstring, block comment or template string cut into pieces: each piece that begins inside it
    records the line it opens on (its text too); a piece that begins at its opening or closing line shows
    the mark itself and records none."""
    words = "explains the behaviour of the parser in detail, word after word"
    doc = "\n".join(f"    Paragraph {i} {words}." for i in range(40))
    rows = "\n".join(f"row {i} of a template string that goes on" for i in range(40))
    stars = "\n".join(f" * Line {i} of a long licence header comment." for i in range(40))
    files = {
        "p.py": f'import os\n\n\ndef parse(text):\n    """Parse the text.\n\n{doc}\n    """\n    return text.split()\n',
        "j.js": f"/*\n{stars}\n */\nfunction render() {{\n  return `<table>\n{rows}\n`;\n}}\n",
        "r.rs": f'/// One line of docs.\nfn main() {{\n    let sql = r#"SELECT\n{rows}\n"#;\n}}\n',
    }
    #: (file, how a line inside begins) → where what it is inside opens.
    opened = {("p.py", "Paragraph"): (5, '"""Parse the text.'), ("j.js", "* Line"): (1, "/*"),
              ("j.js", "row"): (44, "return `<table>"), ("r.rs", "row"): (3, 'let sql = r#"SELECT')}  # fmt: skip
    options = ChunkingOptions(target_chunk_size=64, chunk_overlap=8, min_chunk_size=16, max_chunk_size=128)
    chunker = Chunker(static.tokenizer, 512, options)
    for name, text in files.items():
        chunks = chunker.chunk_text(text, name).chunks
        assert len(chunks) > 3, name
        lines = text.split("\n")
        for c in chunks:
            first = lines[c.start_line - 1].strip()
            kind = next((k for f, k in opened if f == name and first.startswith(k)), None)
            assert inside(c.metadata) == opened.get((name, kind or "")), (name, c.start_line, first)
        assert sum(1 for c in chunks if inside(c.metadata)) >= 2, name
