"""Scanning a workspace: which files to index, and why the others are left out."""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from aintern.chunk.languages import chunk_type_for, detect_language
from aintern.chunk.models import ChunkType
from aintern.scan.generated import alnum_share as alnum_share
from aintern.scan.generated import generated_reason
from aintern.scan.generated import marked_generated as marked_generated
from aintern.scan.output import OUTPUT_DIR_NAMES, build_output, nuget_packages
from aintern.source_files import MAX_FILE_BYTES, file_kind, too_large, unreadable
from aintern.source_files import FileReadError as FileReadError
from aintern.source_files import decode_source as decode_source
from aintern.source_files import read_regular_file as read_regular_file

if TYPE_CHECKING:
    from collections.abc import Callable

    from pathspec import GitIgnoreSpec

#: Seed defaults plus the usual dependency, build and cache folders of other ecosystems. The seed's
#: "**/bin/**" and "**/obj/**" (.NET's build output), Cargo's and Maven's target/, and the seed's
#: "**/packages/**" (NuGet's restore folder) are not among them: such a folder is left out by what it
#: holds, since by name alone it may be source (scan/output.py).
DEFAULT_EXCLUDES = [
    "**/node_modules/**", "**/.git/**", "**/dist/**", "**/build/**",
    "**/*.min.js", "**/*.min.css", "**/*.map", "**/vendor/**",
    "**/.vs/**", "**/.idea/**", "**/.vscode/**",
    "**/__pycache__/**", "**/.venv/**", "**/venv/**", "**/.tox/**", "**/.mypy_cache/**", "**/.pytest_cache/**",
    "**/.ruff_cache/**", "**/.gradle/**", "**/*.lock", "**/package-lock.json", "**/*.pyc",
]  # fmt: skip

#: Files that hold credentials: never indexed unless the user opts in, because indexed text ends up in prompts.
SECRET_PATTERNS = [
    ".env", ".env.*", "*.env", "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.kdbx", "*.gpg",
    "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "*.ppk", "credentials", "credentials.*", ".netrc", ".npmrc",
    ".pypirc", ".htpasswd", "secrets.*", "*.secret", "*.secrets", "service-account*.json", ".git-credentials",
    "kubeconfig", "kubeconfig.*", "*.kubeconfig", "*kubeconfig*.yaml", "*kubeconfig*.yml",
]  # fmt: skip

#: ... as one regex: a scan asks it of every file name.
_SECRET_NAME = re.compile("|".join(fnmatch.translate(p) for p in SECRET_PATTERNS))

IGNORE_FILES = (".gitignore", ".ainternignore")
#: Why a file of no language or text type aintern knows (an image, ``blob.bin``) is left out.
NO_KNOWN_TYPE = "not a source or text file type aintern knows"
#: Why a gettext catalog (.po, .pot, .mo) is skipped. Its text is the code's own messages again, once per language
#: (Django has 2,000 of them): indexed, they would crowd a question's hits with copies of one string.
TRANSLATIONS = "a gettext translation catalog: the code's messages again, once per language"
_CATALOG = (".po", ".pot", ".mo")
#: Why a file that a scan passes over without a word is not indexed (``index -v`` does not list those).
PASSED_OVER = "ignored (.gitignore, .ainternignore), hidden, or not a file type aintern knows"


@dataclass
class ScanOptions:
    #: Globs of files to index; empty means every file whose language aintern knows.
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=lambda: list(DEFAULT_EXCLUDES))
    max_file_bytes: int = MAX_FILE_BYTES
    include_hidden: bool = False
    respect_gitignore: bool = True
    include_secrets: bool = False


@dataclass(frozen=True)
class ScannedFile:
    location: str  # the file's path on disk (a Path only when asked: a scan lists 20,000 files)
    rel: str
    size: int
    mtime_ns: int

    @property
    def path(self) -> Path:
        return Path(self.location)


@dataclass(frozen=True)
class SkippedFile:
    rel: str
    reason: str
    #: The file's size and mtime when the scan skipped it (0 for a folder or a name it could not stat): the
    #: index remembers them, so that a file is reported again only once it changed (aintern.index.skips).
    size: int = field(default=0, compare=False)
    mtime_ns: int = field(default=0, compare=False)

    @classmethod
    def of(cls, rel: str, reason: str, st: os.stat_result) -> SkippedFile:
        """Skipped, with the stat that tells it changed (a folder's none: its mtime moves with what it holds)."""
        return cls(rel, reason) if stat.S_ISDIR(st.st_mode) else cls(rel, reason, st.st_size, st.st_mtime_ns)


@dataclass
class ScanResult:
    files: list[ScannedFile]
    skipped: list[SkippedFile]


class Scanner:
    """Walks a workspace once, applying ignore files at every level, exclusions and safety rules."""

    def __init__(self, root: str | Path, options: ScanOptions | None = None) -> None:
        self.root = Path(root).resolve()
        self.options = options or ScanOptions()
        self._exclude = _setting_spec(self.options.exclude)
        self._include = _setting_spec(self.options.include) if self.options.include else None
        self._output: set[str] = set()  # folders found to be a build's output

    def scan(self, many: tuple[int, Callable[[], object]] | None = None) -> ScanResult:
        """Every file to index, and those left out with why. ``many``: (n, f): f is called once the scan has
        found n files (the indexer starts its secret scan's process while the scan goes on)."""
        files: list[ScannedFile] = []
        skipped: list[SkippedFile] = []
        root_specs = self._root_specs()
        root_stat = os.stat(self.root)
        # Directories entered, by identity (device, inode): a symlink back to one is a loop.
        visited = {(root_stat.st_dev, root_stat.st_ino)}
        stack: list[tuple[str, str, list[tuple[str, Spec]]]] = [(str(self.root), "", root_specs)]
        while stack:
            directory, rel_dir, specs = stack.pop()
            try:
                entries = sorted(os.scandir(directory), key=lambda e: e.name)
            except OSError as exc:
                skipped.append(SkippedFile(rel_dir or ".", f"unreadable directory: {exc.strerror or exc}"))
                continue
            names = {e.name for e in entries}
            present = [n for n in IGNORE_FILES if n in names]
            if present:  # (most folders have no ignore file: no Path made for them)
                specs = specs + self._dir_specs(Path(directory), rel_dir, present)
            for entry in entries:
                rel = f"{rel_dir}{entry.name}"
                if not _encodable(entry.name):
                    # Stored paths are UTF-8 text; such a name cannot be one (nor shown faithfully).
                    skipped.append(SkippedFile(printable(rel), "file name is not valid UTF-8"))
                    continue
                try:
                    is_link = entry.is_symlink()
                    st = os.stat(entry.path)  # follows symlinks
                except OSError as exc:
                    # A dangling symlink, or a file deleted while we were looking.
                    skipped.append(SkippedFile(rel, unreadable(entry.path, exc)))
                    continue
                is_dir = stat.S_ISDIR(st.st_mode)
                reason = self._excluded(entry.name, rel, is_dir, specs)
                if reason == "":
                    continue  # silently excluded (ignored, hidden, not a known file type)
                if reason:
                    skipped.append(SkippedFile.of(rel, reason, st))
                    continue
                if is_link:
                    real = self._real(Path(entry.path))
                    if real != self.root and self.root not in real.parents:
                        skipped.append(SkippedFile.of(rel, "symlink to outside the workspace", st))
                        continue
                    if is_dir and (st.st_dev, st.st_ino) in visited:
                        skipped.append(SkippedFile(rel, "symlink loop"))
                        continue
                if is_dir:
                    visited.add((st.st_dev, st.st_ino))
                    stack.append((entry.path, rel + "/", specs))
                elif stat.S_ISREG(st.st_mode):
                    if st.st_size > self.options.max_file_bytes:
                        skipped.append(SkippedFile.of(rel, too_large(st.st_size, self.options.max_file_bytes), st))
                        continue
                    files.append(ScannedFile(entry.path, rel, st.st_size, st.st_mtime_ns))
                    if many is not None and len(files) == many[0]:
                        many[1]()
                else:
                    skipped.append(SkippedFile.of(rel, f"not a regular file ({file_kind(st.st_mode)})", st))
        files.sort(key=lambda f: f.rel)
        return ScanResult(files, skipped)

    def check(self, paths: list[str]) -> tuple[list[ScannedFile], list[SkippedFile], set[str]] | None:
        """What a scan would say of just these workspace-relative paths: (files it would take, files it
        would skip with a reason, paths it would not list: gone, ignored, out of bounds). None when one
        is a directory: only a scan of it can tell what it holds."""
        files: list[ScannedFile] = []
        skipped: list[SkippedFile] = []
        missing: set[str] = set()
        for rel in paths:
            rel = rel.strip("/")
            path = self.root / rel
            if not rel or rel.startswith("../") or "/../" in rel:
                continue
            if not _encodable(rel):
                skipped.append(SkippedFile(printable(rel), "file name is not valid UTF-8"))
                continue
            try:
                st = os.stat(path)
            except OSError:
                missing.add(rel)  # deleted (or a dangling link): a scan would not list it
                continue
            if stat.S_ISDIR(st.st_mode):
                return None
            real = self._real(path)
            if real != self.root and self.root not in real.parents:
                skipped.append(SkippedFile.of(rel, "symlink to outside the workspace", st))
                missing.add(rel)
                continue
            try:
                accepted = self.accepts(rel)
            except OSError:
                accepted = False
            if not accepted:
                reason = self._excluded(rel.rsplit("/", 1)[-1], rel, False, [])
                if reason:  # reported, as a scan reports it (a secret file)
                    skipped.append(SkippedFile.of(rel, reason, st))
                missing.add(rel)
            elif not stat.S_ISREG(st.st_mode):
                skipped.append(SkippedFile.of(rel, f"not a regular file ({file_kind(st.st_mode)})", st))
                missing.add(rel)
            elif st.st_size > self.options.max_file_bytes:
                skipped.append(SkippedFile.of(rel, too_large(st.st_size, self.options.max_file_bytes), st))
                missing.add(rel)
            else:
                files.append(ScannedFile(str(path), rel, st.st_size, st.st_mtime_ns))
        return files, skipped, missing

    def left_out(self, rel: str) -> str | None:
        """Why indexing leaves out the file at ``rel``, in the words of ``index -v`` (or :data:`PASSED_OVER`),
        or None when it would index it: the scan's rules, then the indexer's reading of its content."""
        checked = self.check([rel])
        if checked is None:
            return "a folder, not a file"
        files, skipped, _ = checked
        if skipped:
            return skipped[0].reason
        if not files:
            return PASSED_OVER
        try:
            data = read_regular_file(files[0].location, self.options.max_file_bytes)
        except (OSError, FileReadError) as exc:
            return f"unreadable: {exc.strerror or exc}" if isinstance(exc, OSError) else str(exc)
        reason = source_text(rel, data)[2]
        return PASSED_OVER if reason == "" else reason

    def accepts(self, rel: str, is_dir: bool = False) -> bool:
        """Would a scan take the file (or enter the directory) at ``rel``? Ignore files of every level apply."""
        parts = rel.split("/")
        specs = self._root_specs()
        directory, rel_dir = self.root, ""
        for part in parts[:-1]:
            specs = specs + self._dir_specs(directory, rel_dir)
            if self._excluded(part, rel_dir + part, True, specs) is not None:
                return False
            directory, rel_dir = directory / part, rel_dir + part + "/"
        specs = specs + self._dir_specs(directory, rel_dir)
        return self._excluded(parts[-1], rel, is_dir, specs) is None

    # -- rules ---------------------------------------------------------------------------------

    def _excluded(self, name: str, rel: str, is_dir: bool, specs: list[tuple[str, Spec]]) -> str | None:
        """None: take it. "": leave it out silently. Any other text: leave it out and report why."""
        hidden = name.startswith(".") and not self.options.include_hidden
        if name == ".git" or (is_dir and hidden):
            return ""
        target = rel + "/" if is_dir else rel
        excluded = self._exclude.match_file(target)
        if excluded and not is_dir:
            # Said (a 2.8 MB big.min.js was left out silently): which pattern, and how to take it back.
            return self._excluded_by(rel)
        if excluded and name != "build":
            return ""  # (a folder: node_modules/ is not news, nor every file in it)
        if self.options.respect_gitignore:
            for base, spec in specs:
                if target.startswith(base) and spec.match_file(target[len(base) :]):
                    return ""
        if excluded:
            # A build/ of code (nitro's src/core/build/) is left out by name like any build output, but
            # said, with how to take it back: a folder a user looks for should not vanish silently.
            if not self._output_folder(name, rel):
                return f'build folder left out by default; it holds source: exclude = ["!{rel}/**"] indexes it'
            return ""
        if is_dir:  # (a build/ here is one the settings took back: it is indexed whatever it holds)
            return "" if name != "build" and self._output_folder(name, rel) else None
        if _SECRET_NAME.match(os.path.normcase(name.lower())) and not _code_or_docs(name):
            # Reported even when hidden: the user should know why .env is not searchable.
            return (
                None
                if self.options.include_secrets
                else "secret (credentials are never indexed unless --include-secrets)"
            )
        if hidden or name in IGNORE_FILES:
            return ""
        if self._include is not None:
            return None if self._include.match_file(rel) else ""
        if detect_language(rel) is not None or _has_shebang_candidate(name):
            return None
        return TRANSLATIONS if name.lower().endswith(_CATALOG) else NO_KNOWN_TYPE

    def _excluded_by(self, rel: str) -> str:
        """Why the exclude patterns leave out the file at ``rel``: the last pattern that matches it decides."""
        pattern = next((p for p in reversed(self.options.exclude) if _pattern(p).match_file(rel)), "")
        return f'excluded by the pattern {pattern}; exclude = ["!{rel}"] takes it back'

    def _root_specs(self) -> list[tuple[str, Spec]]:
        exclude = self.root / ".git" / "info" / "exclude"
        try:
            if self.options.respect_gitignore and stat.S_ISREG(os.stat(exclude).st_mode):
                return [("", _read_spec(exclude))]
        except OSError:
            pass
        return []

    def _dir_specs(
        self, directory: Path, rel_dir: str, present: list[str] | tuple[str, ...] = IGNORE_FILES
    ) -> list[tuple[str, Spec]]:
        """The ignore files of ``directory`` (``present``: those of its names a listing saw)."""
        out = []
        for name in present:
            if name == ".gitignore" and not self.options.respect_gitignore:
                continue
            f = directory / name
            try:
                if not stat.S_ISREG(os.stat(f).st_mode):
                    continue
            except OSError:  # absent, or unreadable: nothing to apply (the scan reports the directory)
                continue
            out.append((rel_dir, _read_spec(f)))
        return out

    def _output_folder(self, name: str, rel: str) -> bool:
        """Is this folder (a bin/, obj/, target/ or build/) a build's output, or NuGet's packages? A yes is
        kept for the scanner's life, so a watcher does not look into an output folder at every event it
        sends; a no is asked again (a first build may write into a bin/ of scripts)."""
        if rel in self._output:
            return True
        if name.lower() == "packages":
            found = nuget_packages(self.root / rel)
        elif name in OUTPUT_DIR_NAMES or name == "build":
            found = build_output(self.root / rel)
        else:
            return False
        if found:
            self._output.add(rel)
        return found

    @staticmethod
    def _real(path: Path) -> Path:
        return Path(os.path.realpath(path))


_NAMED_GROUP = re.compile(r"\(\?P<\w+>")


class Spec:
    """Git's ignore rules for some lines (pathspec's), asked of every path a scan sees: rules without a
    negation (the usual case) match as one regex, where pathspec tries each rule in turn."""

    def __init__(self, spec: GitIgnoreSpec) -> None:
        self.spec = spec
        rules = [p for p in spec.patterns if p.include is not None]
        regexes = [r.pattern for p in rules if (r := getattr(p, "regex", None)) is not None]
        self._plain = len(regexes) == len(rules) and all(p.include for p in rules)
        # Each rule's named groups would clash in one pattern; they only matter to negations.
        alternatives = [_NAMED_GROUP.sub("(?:", r) for r in regexes]
        self._any = re.compile("|".join(f"(?:{a})" for a in alternatives)) if self._plain and rules else None

    def match_file(self, path: str) -> bool:
        if not self._plain:
            return bool(self.spec.match_file(path))
        return self._any is not None and self._any.search(path) is not None


def _spec(lines: list[str]) -> Spec:
    """Git's ignore rules for ``lines`` (pathspec is imported at the first scan, not by every command)."""
    import pathspec

    return Spec(pathspec.GitIgnoreSpec.from_lines(lines))


def _setting_spec(lines: list[str]) -> Spec:
    """The ``exclude`` or ``include`` setting's patterns. ``[..]`` is a character class (as git reads it) or else
    itself, as ``--path`` reads it (store/lookups.py): in Next.js's ``app/[slug]/**`` it names a folder."""
    return _spec([variant for line in lines for variant in dict.fromkeys((line, _literal(line)))])


def _literal(line: str) -> str:
    """``line`` with each bracket escaped (``\\[``), unless it escapes what it means itself."""
    return re.sub(r"[][]", r"\\\g<0>", line) if "[" in line and "\\" not in line else line


@functools.lru_cache(maxsize=256)
def _pattern(pattern: str) -> Spec:
    """One exclude pattern as a spec of its own (to say which one left a file out)."""
    return _setting_spec([pattern])


def _read_spec(path: Path) -> Spec:
    try:
        lines = read_regular_file(path, 1 << 20).decode("utf-8", errors="replace").splitlines()
    except (OSError, FileReadError):
        lines = []
    try:
        return _spec(lines)
    except ValueError:  # e.g. a lone "!": git skips a pattern it cannot read, and so do we
        return _spec([line for line in lines if _valid_pattern(line)])


def _valid_pattern(line: str) -> bool:
    try:
        _spec([line])
    except ValueError:
        return False
    return True


def source_text(rel: str, data: bytes) -> tuple[str | None, str | None, str | None]:
    """(text, language, why not): what the indexer makes of a file's bytes. ``why not`` is None for a file
    to index, ``""`` for one to leave out silently (no known language, no shebang), else the reason it
    is skipped: binary, empty, generated, minified."""
    text, reason = decode_source(data)
    if text is None:
        return None, None, reason
    language = detect_language(rel, text)
    if language is None:
        return text, None, ""
    if not text or text.isspace():  # (as ``not text.strip()``, without copying the text)
        return text, language, "empty file"
    return text, language, generated_reason(text)


def _encodable(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def printable(path: str) -> str:
    """A path that can be shown and stored: undecodable bytes as ``\\xff`` escapes."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


#: Documentation: a docs/secrets.md or a credentials.rst explains secrets, it does not hold them. (Not .txt:
#: a credentials.txt is as often the bare keys themselves, which no line pattern would know to mask.)
_DOC_SUFFIXES = (".md", ".rst", ".adoc")


def _code_or_docs(name: str) -> bool:
    """Is a file so named source code or documentation? OkHttp's ``Credentials.kt``, a ``secrets.py`` module
    or a ``docs/secrets.md`` page is named like a credentials file but is not one: it is indexed, and a key
    written in it is masked line by line as in any other file."""
    return name.lower().endswith(_DOC_SUFFIXES) or chunk_type_for(detect_language(name)) is ChunkType.CODE


def _has_shebang_candidate(name: str) -> bool:
    """Extension-less files may be scripts; the indexer decides by their shebang."""
    return "." not in name
