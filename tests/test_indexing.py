from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from samples import SAMPLES
from workspaces import db_consistent, index_and_kill, make_workspace, write_files

from aintern.chunk.lines import Document
from aintern.index import Indexer, IndexingErrorType, IndexingOptions, IndexingPhase
from aintern.scan import Scanner, ScanOptions
from aintern.store import SqliteStore, VectorSearchOptions


@pytest.fixture
def store(tmp_path: Path):  # type: ignore[no-untyped-def]
    s = SqliteStore(tmp_path / "db" / "aintern.db")
    yield s
    s.close()


def indexer(store: SqliteStore, static, **options) -> Indexer:  # type: ignore[no-untyped-def]
    return Indexer(store, static, IndexingOptions(**options))


def test_full_index_then_search(store, static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ws = make_workspace(tmp_path / "ws")
    phases = []
    result = indexer(store, static).index(ws, progress=lambda p: phases.append(p.phase))
    assert result.success and not result.errors, result.errors
    assert result.files_indexed == 22 and result.chunks_created >= 22
    assert result.chunks_embedded == result.chunks_created
    assert phases[0] is IndexingPhase.SCANNING and phases[-1] is IndexingPhase.COMPLETE
    assert IndexingPhase.EMBEDDING in phases and IndexingPhase.STORING in phases
    index = store.get_index_for_workspace(ws)
    db_consistent(store, index.id)
    hits = store.search(index.id, static.embed("HTTP server listen and serve address"), VectorSearchOptions(top_k=3))
    assert "src/go/server.go" in [h.chunk.file_path for h in hits]
    # A second run with nothing changed reads nothing.
    again = indexer(store, static).index(ws)
    assert again.files_indexed == 0 and again.files_unchanged == 22 and again.chunks_embedded == 0


def test_modify_delete_rename(store, static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ws = make_workspace(tmp_path / "ws")
    ix = indexer(store, static)
    ix.index(ws)
    app = ws / "src/python/app.py"
    app.write_text(app.read_text() + "\n\ndef brand_new_function():\n    return 'fresh'\n")
    result = ix.index(ws)
    assert result.files_indexed == 1 and result.files_unchanged == 21
    assert 1 <= result.chunks_embedded <= 2, "only the changed file's new chunk text is embedded"
    index = store.get_index_for_workspace(ws)
    assert store.search_symbols(index.id, "brand_new")
    # Touch without change: only the mtime record moves, nothing is re-chunked.
    os.utime(ws / "src/go/server.go", None)
    touched = ix.index(ws)
    assert touched.files_indexed == 0 and touched.chunks_embedded == 0
    # Delete.
    (ws / "src/rust/lib.rs").unlink()
    deleted = ix.index(ws)
    assert deleted.files_removed == 1
    assert "src/rust/lib.rs" not in store.get_files(index.id)
    # Move and copy under the same name: re-chunked under the new path, but no chunk is embedded again
    # (a chunk's embedding text has its file's name, not its folders).
    (ws / "src/java/util").mkdir()
    (ws / "src/java/Cache.java").rename(ws / "src/java/util/Cache.java")
    (ws / "src/c/extra").mkdir()
    (ws / "src/c/extra/buf.c").write_text((ws / "src/c/buf.c").read_text())
    moved = ix.index(ws)
    assert moved.files_indexed == 2 and moved.files_removed == 1
    assert moved.chunks_embedded == 0, "vectors come from the embedding cache"
    files = store.get_files(index.id)
    assert "src/java/util/Cache.java" in files and "src/java/Cache.java" not in files
    db_consistent(store, index.id)
    # A new name is new text: only that file's chunks are embedded.
    (ws / "src/java/util/Cache.java").rename(ws / "src/java/util/LruCache.java")
    renamed = ix.index(ws)
    assert renamed.files_indexed == 1 and renamed.files_removed == 1
    assert renamed.chunks_embedded == store.get_files(index.id)["src/java/util/LruCache.java"].chunk_count
    files = store.get_files(index.id)
    forced = indexer(store, static, force_reindex=True).index(ws)
    assert forced.files_indexed == len(files) and forced.chunks_embedded == 0


def test_ignore_rules_secrets_and_bad_files(store, static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ws = make_workspace(tmp_path / "ws")
    (ws / ".gitignore").write_text("*.log\n/generated/\n")
    (ws / "src/python/.gitignore").write_text("local_*.py\n")
    (ws / ".git/info").mkdir(parents=True)
    (ws / ".git/info/exclude").write_text("scratch.py\n")
    (ws / ".ainternignore").write_text("src/lua/\n")
    (ws / "debug.log").write_text("log line\n")
    (ws / "generated").mkdir()
    (ws / "generated/api.py").write_text("x = 1\n")
    (ws / "src/python/local_settings.py").write_text("DEBUG = True\n")
    (ws / "scratch.py").write_text("print(1)\n")
    (ws / "node_modules/pkg").mkdir(parents=True)
    (ws / "node_modules/pkg/index.js").write_text("module.exports = 1\n")
    (ws / ".hidden").mkdir()
    (ws / ".hidden/tool.py").write_text("x = 2\n")
    (ws / ".env").write_text("API_KEY=sk-secret\n")
    (ws / "server.pem").write_text("-----BEGIN PRIVATE KEY-----\nabc\n")
    (ws / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    (ws / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (ws / "blob.py").write_bytes(b"\x00\x01binary\x00")
    (ws / "latin1.py").write_bytes("# caf\xe9\n".encode("latin-1"))
    (ws / "huge.txt").write_text("word " * 300_000)
    (ws / "bundle.js").write_text("var a=" + "+".join(f"f{i}(x)" for i in range(3000)) + ";")
    (ws / "tool").write_text("#!/usr/bin/env python3\nprint('a script without extension')\n")
    (ws / "LICENSE.unknownext").write_text("no language\n")

    result = indexer(store, static).index(ws)
    files = set(store.get_files(result.index_id))
    for gone in ("debug.log", "generated/api.py", "src/python/local_settings.py", "scratch.py", "node_modules/pkg/index.js",
                 ".hidden/tool.py", ".env", "server.pem", "id_rsa", "src/lua/util.lua", "blob.py",
                 "huge.txt", "bundle.js", "logo.png"):  # fmt: skip
        assert gone not in files, gone
    assert "tool" in files, "an extension-less script is recognised by its shebang"
    assert "src/python/app.py" in files
    reasons = {s.rel: s.reason for s in result.skipped}
    assert "secret" in reasons[".env"] and "secret" in reasons["server.pem"] and "secret" in reasons["id_rsa"]
    assert "binary" in reasons["blob.py"] and "latin1.py" in files and "latin1.py" not in reasons
    from aintern.workspace import read_indexed_file

    index = store.get_index(result.index_id)
    assert index is not None and read_indexed_file(store, index, "latin1.py") == "# caf\xe9\n"
    assert "too large" in reasons["huge.txt"] and "minified" in reasons["bundle.js"]
    assert "debug.log" not in reasons, "ignored files are not reported one by one"
    # Skipped-for-content files are remembered: the next run does not read them again.
    again = indexer(store, static).index(ws)
    assert again.files_indexed == 0 and {s.rel for s in again.skipped} >= {"blob.py", "bundle.js", ".env"}
    # Secrets only with the explicit opt-in.
    opted = indexer(store, static, scan=ScanOptions(include_secrets=True)).index(ws)
    assert opted.success and ".env" in store.get_files(opted.index_id)


def test_symlinks_loops_and_escapes(store, static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ws = make_workspace(tmp_path / "ws")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret_code.py").write_text("def outside(): pass\n")
    (ws / "loop").symlink_to(ws, target_is_directory=True)
    (ws / "escape").symlink_to(outside, target_is_directory=True)
    (ws / "dangling.py").symlink_to(tmp_path / "missing.py")
    (ws / "linked_app.py").symlink_to(ws / "src/python/app.py")
    result = indexer(store, static).index(ws)
    assert result.success
    files = set(store.get_files(result.index_id))
    assert not any(f.startswith(("loop/", "escape/")) for f in files)
    assert "linked_app.py" in files, "a symlink inside the workspace is followed"
    reasons = {s.rel: s.reason for s in result.skipped}
    assert reasons["loop"] == "symlink loop"
    assert reasons["escape"] == "symlink to outside the workspace"
    assert reasons["dangling.py"] == "broken symlink (what it points to does not exist)"


def test_file_deleted_mid_run_is_an_error_not_a_crash(store, static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ws = make_workspace(tmp_path / "ws")
    victim = ws / "src/ruby/user.rb"

    def on_progress(p) -> None:  # type: ignore[no-untyped-def]
        if p.phase is IndexingPhase.ANALYZING and victim.exists():
            victim.unlink()  # after the scan saw it, before it is read

    result = indexer(store, static).index(ws, progress=on_progress)
    assert result.success and result.files_indexed == 21
    assert [(e.file_path, e.type) for e in result.errors] == [("src/ruby/user.rb", IndexingErrorType.FILE_READ)]


def test_cancel_keeps_a_consistent_index_and_resumes(store, static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ws = make_workspace(tmp_path / "ws", copies=6)
    cancel = threading.Event()
    stored = []

    def on_progress(p) -> None:  # type: ignore[no-untyped-def]
        if p.phase is IndexingPhase.STORING:
            stored.append(p)
            if len(stored) == 2:
                cancel.set()

    first = indexer(store, static, batch_size=8).index(ws, progress=on_progress, cancel=cancel)
    assert first.cancelled and not first.success
    done = len(store.get_files(first.index_id))
    assert 0 < done < 6 * len(SAMPLES) + 2
    db_consistent(store, first.index_id)
    second = indexer(store, static, batch_size=8).index(ws)
    assert second.success and second.files_unchanged == done
    assert second.files_indexed + done == 6 * len(SAMPLES) + 2


def test_git_commit_recorded(store, static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ws = make_workspace(tmp_path / "ws")
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    subprocess.run(["git", "init", "-q", str(ws)], check=True, env=env)
    subprocess.run(["git", "-C", str(ws), "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", str(ws), "commit", "-qm", "init"], check=True, env=env)
    sha = subprocess.run(
        ["git", "-C", str(ws), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    result = indexer(store, static).index(ws)
    assert result.git_commit == sha
    assert store.get_index(result.index_id).git_commit == sha
    subprocess.run(["git", "-C", str(ws), "pack-refs", "--all"], check=True)
    from aintern.index.git import head_commit

    assert head_commit(ws / "src") == sha, "found from a subdirectory, through packed refs"


def test_scanner_accepts_matches_scan(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws")
    (ws / ".gitignore").write_text("ignored/\n")
    (ws / "ignored").mkdir()
    (ws / "ignored/a.py").write_text("x = 1\n")
    scanner = Scanner(ws)
    assert scanner.accepts("src/python/app.py")
    assert not scanner.accepts("ignored/a.py")
    assert not scanner.accepts(".env")
    assert not scanner.accepts("node_modules/x/index.js")


def test_monorepo_packages_are_source_nuget_packages_are_not(store, static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # A JavaScript monorepo keeps its code in packages/<name>/src; NuGet restores into packages/<Id>.<ver>/.
    ws = tmp_path / "ws"
    (ws / "packages/server/src").mkdir(parents=True)
    (ws / "packages/server/src/router.ts").write_text("export function createRouter() { return {}; }\n")
    (ws / "dotnet/packages/Newtonsoft.Json.13.0.1/lib").mkdir(parents=True)
    (ws / "dotnet/packages/Newtonsoft.Json.13.0.1/newtonsoft.json.13.0.1.nupkg").write_bytes(b"PK\x03\x04")
    (ws / "dotnet/packages/Newtonsoft.Json.13.0.1/lib/readme.txt").write_text("package readme\n")
    (ws / "dotnet/App.cs").write_text("class App { }\n")
    files = set(store.get_files(indexer(store, static).index(ws).index_id))
    assert files == {"packages/server/src/router.ts", "dotnet/App.cs"}
    scanner = Scanner(ws)
    assert scanner.accepts("packages/server/src/router.ts")
    assert not scanner.accepts("dotnet/packages/Newtonsoft.Json.13.0.1/lib/readme.txt")


def test_a_build_folder_of_source_is_left_out_and_said(tmp_path: Path) -> None:
    """build/ stays excluded by name, but one that holds code (nitro's src/core/build/) is reported with
    the line that takes it back, and that line works; a build/ a build wrote stays silent."""
    from aintern.config import Settings

    ws = tmp_path / "ws"
    write_files(ws, {
        "src/core/build/prod.ts": "export async function buildProduction() { return 'dist'; }\n",
        "src/app.ts": "export const app = 1;\n",
        "native/build/CMakeCache.txt": "CMAKE_BUILD_TYPE:STRING=Release\n",
        "native/build/config.h": "#define VERSION 1\n",
    })  # fmt: skip
    scan = Scanner(ws, Settings.load(ws).scan_options()).scan()
    assert [f.rel for f in scan.files] == ["src/app.ts"]
    [said] = scan.skipped
    assert said.rel == "src/core/build" and 'exclude = ["!src/core/build/**"]' in said.reason
    (ws / ".aintern.toml").write_text('exclude = ["!src/core/build/**"]\n')
    scan = Scanner(ws, Settings.load(ws).scan_options()).scan()
    assert [f.rel for f in scan.files] == ["src/app.ts", "src/core/build/prod.ts"] and not scan.skipped


def test_output_folders_are_left_out_by_what_they_hold(store, static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """bin/, obj/ and target/ are left out when a build wrote them, and indexed when they are source: a
    Python package's bin/ (celery's command line), a Rust crate's src/bin/, a gem's bin/ script."""
    ws = tmp_path / "ws"
    source = {
        "celery/bin/worker.py": "def worker() -> None:\n    print('start a worker from the command line')\n",
        "src/bin/grep.rs": 'fn main() {\n    println!("search");\n}\n',
        "bin/rubocop": "#!/usr/bin/env ruby\nrequire 'rubocop'\nexit RuboCop::CLI.new.run\n",
        "target/specs/entity.ts": "export class Target { name = 'a folder of source named target'; }\n",
    }
    built: dict[str, str | bytes] = {
        # .NET: a configuration folder under bin/ and obj/.
        "App/bin/Debug/net8.0/App.deps.json": '{"runtimeTarget": {}}\n',
        "App/obj/project.assets.json": '{"version": 3}\n',
        "App/obj/Debug/net8.0/App.AssemblyInfo.cs": '[assembly: System.Reflection.AssemblyTitle("App")]\n',
        # Cargo, Maven.
        "rs/target/CACHEDIR.TAG": "Signature: 8a477f597d28d172789f06886806bc55\n",
        "rs/target/debug/build/x/out/gen.rs": "pub const GENERATED: u32 = 1;\n",
        "java/target/classes/com/acme/App.class": b"\xca\xfe\xba\xbe",
        "java/target/generated-sources/annotations/Gen.java": "public class Gen {}\n",
        # An Eclipse project's bin/: class files deep in package folders.
        "eclipse/bin/org/acme/deep/Main.class": b"\xca\xfe\xba\xbe",
        "eclipse/bin/org/acme/deep/messages.properties": "hello=world\n",
        # TypeScript compiled into bin/: each .js beside its .d.ts.
        "cli/bin/index.js": "export function greet() { return 'hi'; }\n",
        "cli/bin/index.d.ts": "export declare function greet(): string;\n",
        # go build into bin/: an executable, and a script beside it.
        "go/bin/server": b"\x7fELF\x02\x01\x01",
        "go/bin/run.sh": "#!/bin/sh\nexec ./server\n",
    }
    write_files(ws, {**source, **built})
    files = set(store.get_files(indexer(store, static).index(ws).index_id))
    assert files == set(source), sorted(files)
    scanner = Scanner(ws)
    assert scanner.accepts("celery/bin/worker.py") and scanner.accepts("src/bin/grep.rs")
    assert not scanner.accepts("App/obj/Debug/net8.0/App.AssemblyInfo.cs")
    assert not scanner.accepts("java/target/generated-sources/annotations/Gen.java")
    assert not scanner.accepts("go/bin/run.sh")
    # A bin/ of scripts that a build later writes into is left out from then on (a watcher's scanner).
    assert scanner.accepts("bin/rubocop")
    (ws / "bin/Release").mkdir()
    assert not scanner.accepts("bin/rubocop")


def test_generated_files_are_known_by_a_mark_at_their_top(store, static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A generator's mark in a file's leading comments skips it (Go's convention, protoc's, `@generated`);
    code that only mentions one is indexed: Jekyll's `@generated_permalink` ivar in lib/jekyll/url.rb and
    nginx's bpfgen.sh, which writes `/* AUTO-GENERATED, DO NOT EDIT. */` into its output, were skipped.
    Data is told by its share of letters and digits among visible characters, not among spaces too."""
    ws = tmp_path / "ws"
    files = {
        "api.pb.go": "// Copyright 2024 The Authors.\n\n// Code generated by protoc-gen-go. DO NOT EDIT.\n\npackage api\n",
        "schema.php": "<?php\n\n/**\n * @generated by the schema tool\n */\nclass Schema {}\n",
        "tables.c": "/*\n   AUTO-GENERATED FILE. DO NOT EDIT.\n*/\nint table[] = {1, 2, 3};\n",
        "url.rb": "class URL\n  def to_s\n    (@generated_permalink ||= generate_url(@permalink))\n  end\nend\n",
        "bpfgen.sh": "#!/bin/bash\nset -e\ngenerate_head()\n{\n    cat << END\n/* AUTO-GENERATED, DO NOT EDIT. */\nEND\n}\n",
        "routes.py": "import os\n\n# DO NOT EDIT the order below: the router matches top to bottom.\nROUTES = ['/a', '/b']\n",
        # Data, not code: spinner frames. A Markdown table padded with spaces (Vite's docs/guide/cli.md) is prose.
        "spinners.py": "SPINNERS = {\n" + '    "dots": ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧"],\n' * 60 + "}\n",
        "docs/cli.md": "# Command line\n\n| Option | |\n| --- | --- |\n"
        + "".join(f"| `--opt{i}` {' ' * 40} | Set option {i} {' ' * 90} |\n" for i in range(40)),
    }
    write_files(ws, files)
    result = indexer(store, static).index(ws)
    assert set(store.get_files(result.index_id)) == {"url.rb", "bpfgen.sh", "routes.py", "docs/cli.md"}
    reasons = {s.rel: s.reason for s in result.skipped}
    assert all(reasons[f] == "generated file (marked as generated)" for f in ("api.pb.go", "schema.php", "tables.c"))
    assert reasons["spinners.py"].startswith("generated data")


def test_the_share_of_letters_and_digits_is_counted_as_str_counts_them() -> None:
    """``alnum_share`` counts ASCII text in C (bytes.translate), the rest character by character: both as
    ``str.isspace`` and ``str.isalnum`` say, for every ASCII character (ASCII's odd white space
    ``\\x1c``-``\\x1f`` too) and beside others."""
    import random

    from aintern.scan import alnum_share

    def by_str(text: str) -> float:
        visible = [c for c in text if not c.isspace()]
        return sum(c.isalnum() for c in visible) / max(len(visible), 1)

    rng = random.Random(7)
    ascii_chars = "".join(map(chr, range(128)))
    texts = ["", " \t\n", ascii_chars, "é" + ascii_chars, "x = [0x1f, 0x2e] \x1c\x1d\x1e\x1f\x85\xa0 ⠋ ½ ٣"]
    texts += ["".join(rng.choice(ascii_chars) for _ in range(rng.randint(1, 80))) for _ in range(300)]
    texts += [
        "".join(
            rng.choice(ascii_chars + "é½٣\xa0\u2028⠋\u3000\u1680\u205f\ufeff\U0001d7ce")
            for _ in range(rng.randint(1, 80))
        )
        for _ in range(300)
    ]
    assert [alnum_share(t) for t in texts] == [by_str(t) for t in texts]


def test_sigkill_at_any_moment_leaves_a_consistent_index(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ws = make_workspace(tmp_path / "ws", copies=8)
    db = tmp_path / "crash.db"
    total = 8 * len(SAMPLES) + 2
    completed_before = 0
    for kill_after in (1, 4, 9, 15):
        index_and_kill(db, ws, kill_after)
        store = SqliteStore(db)
        try:
            index = store.get_index_for_workspace(ws)
            assert index is not None
            db_consistent(store, index.id)
            completed = len(store.get_files(index.id))
            assert completed >= completed_before, "finished files stay finished"
            completed_before = completed
        finally:
            store.close()
    store = SqliteStore(db)
    result = Indexer(store, static).index(ws)
    assert result.success and result.files_unchanged == completed_before
    assert result.files_indexed == total - completed_before, "the next run does not redo finished files"
    db_consistent(store, result.index_id)
    store.close()


READER_SCRIPT = """
import sys, time
from aintern.embed import get_embedder
from aintern.store import SqliteStore, VectorSearchOptions
store = SqliteStore(sys.argv[1])
emb = get_embedder("static")
q = emb.embed("http server")
deadline = time.time() + 60
searches = 0
while time.time() < deadline:
    index = store.get_index_for_workspace(sys.argv[2])
    if index is not None:
        store.search(index.id, q, VectorSearchOptions(top_k=5))
        store.keyword_search(index.id, "server")
        searches += 1
    if open(sys.argv[3]).read() == "stop":
        break
    time.sleep(0.01)
print(searches)
"""


def test_search_from_another_process_while_indexing(static, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ws = make_workspace(tmp_path / "ws", copies=10)
    db = tmp_path / "shared.db"
    flag = tmp_path / "flag"
    flag.write_text("go")
    SqliteStore(db).close()
    reader = subprocess.Popen([sys.executable, "-c", READER_SCRIPT, str(db), str(ws.resolve()), str(flag)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        store = SqliteStore(db)
        time.sleep(0.5)
        result = Indexer(store, static, IndexingOptions(batch_size=8)).index(ws)
        assert result.success
        store.close()
    finally:
        flag.write_text("stop")
        out, errs = reader.communicate(timeout=90)
    assert reader.returncode == 0, errs
    assert int(out.strip()) > 0, "the reader searched while the writer indexed"


def test_ignore_rules_match_as_pathspec_does() -> None:
    """The scanner's one-regex matching of ignore rules (negation-free ones) and of secret file names
    decides exactly as pathspec's rule-by-rule matching and fnmatch do, on tricky rules and paths."""
    import fnmatch
    import itertools

    import pathspec

    from aintern.scan import DEFAULT_EXCLUDES, SECRET_PATTERNS, _spec

    rule_sets = [
        DEFAULT_EXCLUDES,
        ["*.log", "/build", "docs/**/*.md", "a?c", "[ab]*.txt", "**/tmp", "dir/", "# comment", "", "\\#hash"],
        ["*.py", "!keep.py", "sub/", "!sub/keep/"],  # negations: pathspec decides
        ["!only-negation"],
        [],
    ]
    paths = ["a.py", "keep.py", "build", "build/", "src/build/x.js", "docs/a/b/c.md", "docs/c.md", "abc", "axc",
             "b1.txt", "c1.txt", "x/tmp", "x/tmp/", "dir/", "dir/f", "x/dir/", "#hash", "app.log", "src/a.min.js",
             "node_modules/", "x/node_modules/y.js", "sub/", "sub/keep/", "sub/keep/a.py", "only-negation",
             "vendor/lib.go", "a/__pycache__/b.pyc", "Cargo.lock", "target/", "x/target/debug/a"]  # fmt: skip
    for rules, path in itertools.product(rule_sets, paths):
        assert _spec(rules).match_file(path) == pathspec.GitIgnoreSpec.from_lines(rules).match_file(path), (rules, path)
    from aintern.scan import _SECRET_NAME

    for name in [".env", ".env.local", "prod.env", "server.PEM", "id_rsa", "id_rsa.pub", "credentials", "secrets.yaml",
                 "kubeconfig", "my-kubeconfig.yaml", "service-account-x.json", "env", "README.md", "key.py", "a.keys"]:  # fmt: skip
        expected = any(fnmatch.fnmatch(name.lower(), p) for p in SECRET_PATTERNS)
        assert (_SECRET_NAME.match(name.lower()) is not None) == expected, name


def test_a_workspace_can_take_a_default_exclusion_back(tmp_path: Path) -> None:
    """dist/ is excluded by default (a bundler's output), but a project may keep code there: `exclude =
    ["!**/dist/**"]` in .aintern.toml indexes it again (README, configuration)."""
    from aintern.config import Settings

    ws = tmp_path / "ws"
    (ws / "pkg/dist").mkdir(parents=True)
    (ws / "pkg/dist/cli.py").write_text("def main() -> None:\n    print('the command line')\n")
    (ws / "pkg/core.py").write_text("def run() -> int:\n    return 0\n")
    assert [f.rel for f in Scanner(ws, Settings.load(ws).scan_options()).scan().files] == ["pkg/core.py"]
    (ws / ".aintern.toml").write_text('exclude = ["!**/dist/**"]\n')
    assert sorted(f.rel for f in Scanner(ws, Settings.load(ws).scan_options()).scan().files) == [
        "pkg/core.py",
        "pkg/dist/cli.py",
    ]


def test_the_chunker_tokenisation_is_the_tokenizers_with_each_tokens_line(static) -> None:  # type: ignore[no-untyped-def]
    """``encode_many`` reads each newline as a token of its own instead of computing offsets: the ids are the
    plain tokenizer's, and each token's line is the line its offset is on, for every kind of text."""
    import numpy as np

    tokenizer = static.tokenizer
    long_word = "x" * 150  # (past WordPiece's 100 characters a word is one [UNK])
    texts = [
        "def f(a, b):\n    return a + b\n", "no newline at all", "\n\n\nafter blank lines\n\n", "",
        "windows\r\nline endings\r\n", "tabs\tand\x0bvertical\x0cfeeds\n\x1c separators\x85 nel",
        "accents: café naïve Ångström\nCJK: 你好世界 中文\n", "emoji 🎉 and [SEP] [CLS] literal\n[MASK]",
        f"{long_word}\n{long_word} tail\n", "\n", "a\n\nb\n\n\nc", "trailing spaces   \n   \n  x",
        # The ways around the fast ones: a pilcrow of its own, added tokens in ASCII text, lower-cased ones.
        "para\u00b6graph\nmark\u00b6\n", "x = '[CLS]'\ny = [SEP]\n", "[cls] and [sep]\nlower\n",
        "Mixed CASE\x00nul\x7fdel\x01\nUPPER\tTAB\r\n", "ASCII \u00b6 and accents \u00e9\n", "\u00b6", "\x0c\n\x0b",
    ]  # fmt: skip
    # Random ASCII: every character, control ones and whitespace included (the fast way's own pre-tokenizer).
    import random

    rng = random.Random(49)
    alphabet = [chr(c) for c in range(128)] + list("aeiouxyz_ .(\n") * 8
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 300))) for _ in range(400)]
    # Real files too: this repository's code, tests and docs.
    repo = Path(__file__).resolve().parent.parent
    texts += [p.read_text(encoding="utf-8") for p in sorted(repo.glob("src/aintern/**/*.py"))[:80]]
    texts += [p.read_text(encoding="utf-8") for p in sorted(repo.glob("docs/*.md"))]
    assert tokenizer._fast is not None  # (the shipped tokenizer is BERT's: the fast ways are taken)
    encoded = tokenizer.encode_many(texts)
    reference = tokenizer._tok.encode_batch(texts, add_special_tokens=False)
    for text, (ids, starts), plain in zip(texts, encoded, reference):
        assert ids.tolist() == plain.ids, text[:200]
        line_starts = np.array([0] + [i + 1 for i, c in enumerate(text) if c == "\n"])
        offsets = np.array([start for start, _ in plain.offsets], dtype=np.int64)
        expected = line_starts[np.searchsorted(line_starts, offsets, side="right") - 1] if len(offsets) else offsets
        assert starts.tolist() == expected.tolist(), text[:200]
        # A line range's ids and count are those of the tokens on its lines (read from per-line counts).
        doc = Document.from_encoding(text, ids, starts, tokenizer)
        n = len(doc.lines)
        for first in range(0, n, max(1, n // 12)):
            for last in (first, first + 1, (first + n) // 2, n - 1):
                if first <= last < n:
                    on = (doc.token_lines >= first) & (doc.token_lines <= last)
                    assert doc.ids_of(first, last).tolist() == ids[on].tolist(), (text[:80], first, last)
                    assert doc.tokens(first, last) == int(on.sum()), (text[:80], first, last)


def test_repeated_reindexes_do_not_grow_the_database(tmp_path: Path) -> None:
    """A forced re-index replaces every row: the pages of those it replaced, and the keyword table's entries of
    them, are given back, so the file stays the size of one index however often it is rebuilt. A database made
    before aintern set auto_vacuum keeps working (its free pages are reused, as before)."""
    import sqlite3

    from aintern.knowledge import KnowledgeQueryOptions
    from aintern.workspace import Workspace

    root = tmp_path / "ledger"
    write_files(root, {
        f"posting_{i}.py": "".join(f"def post_{i}_{j}(order_{j}, ledger):\n    return ledger.entry_{i * j}(order_{j}.total)"
                                   f" + fee_{j}_{i}\n\n" for j in range(30))
        for i in range(40)
    })  # fmt: skip
    db = tmp_path / "aintern.db"
    sizes = []
    for force in (False, True, True, True):
        ws = Workspace(root, db)
        assert ws.build_index(force=force).success
        ws.close()  # (the last connection's checkpoint writes the WAL back: the file is its size)
        sizes.append(db.stat().st_size)
    assert all(size <= sizes[0] * 1.02 for size in sizes[1:]), sizes  # (without: +8 %, +12 %, +15 %)
    ws = Workspace(root, db)
    assert ws.clear()
    ws.close()
    assert db.stat().st_size < sizes[0] / 2, (db.stat().st_size, sizes)  # (a removed index's pages too)

    conn = sqlite3.connect(db, isolation_level=None)  # the database as an older aintern made it
    conn.execute("PRAGMA auto_vacuum = NONE")
    conn.execute("VACUUM")
    assert conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 0
    conn.close()
    ws = Workspace(root, db)
    assert ws.build_index(force=True).success
    found = ws.knowledge.query("post_7_3", KnowledgeQueryOptions(workspace_path=str(root), max_results=1))
    assert found.chunks and found.chunks[0].file_path == "posting_7.py"
    ws.close()
