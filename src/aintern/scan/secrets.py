"""Secrets inside ordinary files (an AWS key in config.py, a token in deploy.sh): found and masked.

Detection is Yelp's detect-secrets — its plugins (AWS, GitHub, GitLab, Stripe, Slack, JWT, private keys,
high-entropy strings, ...) and its false-positive filters — run on each line that could hold a secret, with
detectors it lacks (aintern.scan.secret_detectors) and, in place of its keyword plugin, our rule for values
assigned to names (aintern.scan.secret_values). Which lines could is decided by a prefilter built from the
plugins' own patterns (their regexes, the quoted-string shape the entropy plugins look at), because running
every plugin on every line costs ~0.2 ms a line: a minute for a mid-size repository. The value is masked and
the line kept, so the code around it stays searchable: only the value's own characters are replaced, never a
name or code beside it.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import math
import re
import threading
from dataclasses import dataclass
from urllib.parse import unquote

from aintern.file_kinds import is_test
from aintern.scan.secret_detectors import connection_string_detector, url_password_detector, vendor_detectors
from aintern.scan.secret_values import assignments, is_set_password, looks_random

#: What replaces a secret's value in stored chunks and in context.
MASK = "[REDACTED]"
_HEX = "Hex High Entropy String"
_ENTROPY = {_HEX, "Base64 High Entropy String"}
_PEM = "Private Key"
_INDIRECT = "detect_secrets.filters.heuristic.is_indirect_reference"
#: detect-secrets plugins left out: one finds things that are not credentials; the keyword plugin takes any
#: word after a name holding "password" for a secret (Django's ``password1_field_name="password1"``), and
#: misses unquoted values and names with "token": values assigned to names are judged by secret_values; the
#: basic-auth plugin misses passwords holding RFC 3986's sub-delims: secret_detectors.url_password_detector.
_NOT_SECRETS = {"IPPublicDetector", "KeywordDetector", "BasicAuthDetector"}
_PEM_END = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----")


#: Plugins whose patterns are slow to search a whole file with (a lookbehind, an optional group or a
#: character class at every position, IGNORECASE: 0.1-0.5 s a MB each), and fast patterns that match in
#: every line where theirs can (their literal part, which a line they match holds; an alias too short
#: to search for, like Cloudant's "cl", is found via its key word): each starts with a literal, which
#: the regex engine skips ahead to (an alternation of several would lose that).
_FAST_SUPERSETS = {
    "ArtifactoryDetector": (r"AKC[a-zA-Z0-9]{10}|AP[\dABCDEF][a-zA-Z0-9]{8}",),
    "AWSKeyDetector": (r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}",),
    "DiscordBotTokenDetector": (r"\.[a-zA-Z\d_-]{6}\.[a-zA-Z\d_-]{27}",),
    "MailchimpDetector": (r"-us[0-9]",),
    "StripeDetector": (r"k_live_",),
    "TelegramBotTokenDetector": (r":[0-9A-Za-z_-]{35}",),
}
#: The same for case-insensitive ones (and the case-insensitive pattern of AWS's), written in lower case
#: and searched in the text folded to lower case (``_fold``: much faster than IGNORECASE).
_FAST_LOWER_SUPERSETS = {
    "AWSKeyDetector": (r"aws",),
    "CloudantDetector": (r"cloudant", r"cl(?:ou)?[_-]?(?:api)?[_-]?(?:key|pwd|pw|pass|token)"),
    "IbmCloudIamDetector": (r"ibm", r"cloud[_-]?iam", r"iam[_-]?(?:api)?[_-]?(?:key|pwd|pw|pass|token)"),
    "IbmCosHmacDetector": (r"cos[_-]?(?:hmac)?[_-]?(?:secret|key)", r"secret[_-]?access[_-]?key"),
    "SlackDetector": (r"xox", r"hooks\.slack\.com"),
    "SoftlayerDetector": (r"softlayer", r"sl[_-]?(?:api)?[_-]?(?:key|pwd|pw|pass|token)"),
    "ConnectionStringPasswordDetector": (r"password\s*=", r"pwd\s*="),
}
#: What IGNORECASE matches to an ASCII letter besides its two cases (Python's re documentation): folded to
#: it, one character for one, so that the folded text's offsets are the text's.
_FOLD: dict[int, int] = {**{c: c + 32 for c in range(65, 91)}, 0x130: 105, 0x131: 105, 0x17F: 115, 0x212A: 107}


@dataclass(frozen=True)
class SecretFinding:
    line: int
    kind: str


@dataclass(frozen=True)
class Secret:
    """A secret's value as found: its line (from 1), kind, and columns in that line (``end`` exclusive)."""

    line: int
    kind: str
    value: str
    start: int
    end: int


class SecretRedactor:
    """Masks secrets in text. Thread-safe; building it loads detect-secrets once per process."""

    _setup = threading.Lock()
    _ready = False

    def __init__(self) -> None:
        from detect_secrets.core import scan
        from detect_secrets.filters.heuristic import is_indirect_reference

        with SecretRedactor._setup:
            if not SecretRedactor._ready:
                from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
                from detect_secrets.settings import cache_bust, get_settings

                plugin_types: list[type] = list(get_mapping_from_secret_type_to_class().values())
                names = [t.__name__ for t in plugin_types]
                cache_bust()  # (it also resets the settings, so it goes first)
                get_settings().configure_plugins([{"name": n} for n in names if n not in _NOT_SECRETS])
                # It drops every finding on a line like ``x = f(...)``: a reference when the keyword plugin's
                # value is ``get_secret()``, but a vendor's token passed to a call (``Client(api_key="sk_live_...")``)
                # is still one. It applies to the entropy plugins' findings only (``_INDIRECT``).
                get_settings().disable_filters(_INDIRECT)
                SecretRedactor._ready = True
        self._scan = scan
        self._indirect = is_indirect_reference
        self.plugins = [
            *(p for p in scan.get_plugins() if type(p).__name__ not in _NOT_SECRETS),  # type: ignore[attr-defined]
            connection_string_detector(),
            url_password_detector(),
            *vendor_detectors(),
        ]
        patterns: list[str] = [p for ps in _FAST_SUPERSETS.values() for p in ps]
        for plugin in self.plugins:
            if type(plugin).__name__ in _FAST_SUPERSETS or type(plugin).__name__ in _FAST_LOWER_SUPERSETS:
                continue
            for regex in getattr(plugin, "denylist", ()) or ():
                # Each pattern keeps its own flags inside the one alternation.
                flags = "".join(
                    f for f, bit in (("i", re.I), ("x", re.X), ("s", re.S), ("m", re.M)) if regex.flags & bit
                )
                # (without a leading ``\b``, which keeps the search from skipping ahead to its literal: 6x slower;
                # a verbose pattern's group closes on a line of its own, after any comment: only there is a
                # newline no part of the pattern)
                pattern = regex.pattern.removeprefix("\\b")
                patterns.append(f"(?{flags}:{pattern}{chr(10) if 'x' in flags else ''})" if flags else pattern)
        # The entropy plugins look only inside quotes, at strings above their entropy limit (which n
        # characters can only pass if n > 2 ** limit): their own charset, limit and entropy function.
        self._entropy = [
            (p, re.compile(f"""(['"])([{re.escape(p.charset)}]{{{math.floor(2**p.entropy_limit) + 1},}})\\1"""))
            for p in self.plugins
            if hasattr(p, "entropy_limit") and hasattr(p, "charset")
        ]
        # Whole texts are searched at once, one pattern at a time (a regex over a file is far faster than
        # one per line; an alternation of many loses the literal-prefix search that makes each fast).
        self._prefilter = [re.compile(p, re.MULTILINE) for p in patterns]
        self._prefilter.append(re.compile(r"PRIVATE KEY|PuTTY-User-Key"))
        #: The case-insensitive supersets, searched in the folded text.
        self._lower = [re.compile(p) for ps in _FAST_LOWER_SUPERSETS.values() for p in ps]

    def candidate_lines(self, text: str, starts: list[int] | None = None) -> list[int]:
        """Numbers (from 1) of the lines some detect-secrets plugin could report (``starts``: the text's
        ``_line_starts``, if computed already)."""
        folded = _fold(text)
        # (most patterns match nowhere in a file: a search that finds nothing costs less than a finditer)
        spans = [m.span() for regex in self._lower if regex.search(folded) for m in regex.finditer(folded)]
        spans += [m.span() for regex in self._prefilter if regex.search(text) for m in regex.finditer(text)]
        for plugin, regex in self._entropy:
            spans.extend(
                m.span() for m in regex.finditer(text)
                if plugin.calculate_shannon_entropy(m.group(2)) > plugin.entropy_limit
            )  # fmt: skip
        if not spans:
            return []
        starts = _line_starts(text) if starts is None else starts
        found = {bisect.bisect_right(starts, a) for a, _ in spans}
        found |= {bisect.bisect_right(starts, max(a, b - 1)) for a, b in spans}
        return sorted(found)

    def find(self, text: str, filename: str) -> list[Secret]:
        """Each secret in ``text``: what detect-secrets' plugins find, and values assigned to a secret's name
        that look random (``aintern.scan.secret_values``), with where each value is in its line."""
        lines = text.split("\n")
        starts = _line_starts(text)
        found: list[Secret] = []
        for number in self.candidate_lines(text, starts):
            line = lines[number - 1]
            if len(line) <= 5000:  # a minified line: the scanner keeps such files out anyway
                found.extend(self._scan_line(lines, number, line.rstrip(), filename))
        if not _TRANSLATIONS.search(filename):  # (a keyword's value there is a label in some language)
            by_plugins = {(f.line, f.start) for f in found if f.kind not in _ENTROPY}
            by_plugins |= {(f.line, f.end) for f in found if f.kind not in _ENTROPY}
            for a in assignments(text, filename):
                number = bisect.bisect_right(starts, a.start)
                start, end = a.start - starts[number - 1], a.end - starts[number - 1]
                # (one finding for a value a vendor's pattern found too: the vendor's kind says more)
                if (
                    (number, start) not in by_plugins
                    and (number, end) not in by_plugins
                    and self._kept(lines, number, lines[number - 1], filename) is not None
                ):
                    found.append(Secret(number, NAMED, a.value, start, end))
        if found:
            # A string only the entropy plugins report is a secret only when it looks drawn at random and is
            # no digest: in a test it is test data (a git object id, a hash's test vector, a nonce, an ETag:
            # libgit2's tests had 2,775 such masked, express's and ktor's dozens), and outside tests neither
            # an alphabet, a path nor a value named as a digest (``sha256 = "..."``, ``"etag": "..."``) is one.
            others = {(f.line, f.value) for f in found if f.kind not in _ENTROPY}
            test = is_test(filename)
            found = [
                f for f in found
                if f.kind not in _ENTROPY or (f.line, f.value) in others
                or not (test or not looks_random(f.value) or _digest(lines[f.line - 1][: f.start], f.value))
            ]  # fmt: skip
        # (a PEM marker with no key after it is code that writes or checks one, not a key)
        found = [f for f in found if f.kind != _PEM or _private_key_spans(lines, f.line - 1)]
        return sorted(set(found), key=lambda f: (f.line, f.start, f.kind))

    def _kept(self, lines: list[str], number: int, line: str, filename: str) -> object | None:
        """The line's context for detect-secrets' filters, or None when its line filters leave the line alone
        (``# pragma: allowlist secret``)."""
        scan = self._scan
        snippet: object = scan.get_code_snippet(lines=lines, line_number=number)
        if scan._is_filtered_out(required_filter_parameters=["line"], filename=filename, line=line, context=snippet):
            return None
        return snippet

    def _scan_line(self, lines: list[str], number: int, line: str, filename: str) -> list[Secret]:
        scan = self._scan
        snippet = self._kept(lines, number, line, filename)
        if snippet is None:
            return []
        out = []
        for plugin in self.plugins:
            for secret in scan._scan_line(
                plugin=plugin, filename=filename, line=line, line_number=number, context=snippet
            ):
                value = str(secret.secret_value or "")
                if secret.type in _ENTROPY and self._indirect(line):
                    continue
                if value and not scan._is_filtered_out(
                    required_filter_parameters=["context"], filename=filename, secret=secret.secret_value,
                    plugin=plugin, line=line, context=snippet,
                ) and _plausible(str(secret.type), value, line):  # fmt: skip
                    # (the value as masked: GitHub's plugin reports the ``ghp`` of a token)
                    out += [Secret(number, str(secret.type), line[a:b], a, b) for a, b in _spans(plugin, line, value)]
        return out

    def redact(self, text: str, filename: str) -> tuple[str, list[SecretFinding]]:
        """``text`` with every secret's value masked (line count, the code around each value and other lines
        unchanged), and what was found."""
        spans, findings = self.masks(text, filename)
        return apply_masks(text, spans), findings

    def masks(self, text: str, filename: str) -> tuple[Masks, list[SecretFinding]]:
        """Where the secrets in ``text`` are (line index → spans to mask), and what was found."""
        found = self.find(text, filename)
        lines = text.split("\n") if found else []
        spans: Masks = {}
        for f in found:
            if f.kind == _PEM:
                for index, a, b in _private_key_spans(lines, f.line - 1):
                    spans.setdefault(index, []).append((a, b))
            else:
                spans.setdefault(f.line - 1, []).append((f.start, f.end))
        findings = {SecretFinding(f.line, f.kind) for f in found}
        return spans, sorted(findings, key=lambda f: (f.line, f.kind))


#: Line index (from 0) → the (start, end) columns to mask on that line.
Masks = dict[int, list[tuple[int, int]]]


def apply_masks(text: str, spans: Masks) -> str:
    """``text`` with the spans of ``spans`` replaced by MASK."""
    if not spans:
        return text
    lines = text.split("\n")
    for index, where in spans.items():
        lines[index] = _mask_spans(lines[index], where)
    return "\n".join(lines)


#: The kind of a random value assigned to a secret's name (in detect-secrets' words, which the index reports).
NAMED = "Secret Keyword"
#: Kinds whose value is a password by where it is (a URL's, a connection string's), whatever it looks like:
#: masked unless it is a stand-in (``postgres://postgres:postgres@db`` holds no secret; secret_values).
_ANY_FORMAT = {"Basic Auth Credentials", "Connection String Password"}


def _plausible(kind: str, value: str, line: str) -> bool:
    if kind not in _ANY_FORMAT:
        return True
    user = re.search(rf"://([^/:@\s]*):{re.escape(value)}@", line)
    return is_set_password(unquote(value), unquote(user.group(1)) if user else None)


#: What comes before a digest's value: a name saying it is one.
_DIGEST_NAME = re.compile(
    r"(?:\b|_)(?:hash|digest|checksum|sha\d*|md5|crc\d*|etag|e_tag|nonce|cnonce|opaque|integrity|fingerprint|oid"
    r"|commit|revision|uuid|guid|pk)[\"'\]]*\s*(?:=|:|=>|,|to)\s*[bBrRuU]?[\"'`]?W?/?[\"']?$",
    re.IGNORECASE,
)
#: A hash's name before the value, in the value or the text (``sha256/...``, ``sha512-...``, ``md5:...``).
_HASH_PREFIX = re.compile(r"(?:sha\d+|md5)[-/:]", re.IGNORECASE)


#: A file's name as the key of a value: the value is that file's digest (``"tokenizer.json": "8acc..."``).
_FILE_KEY = re.compile(r"""["'][\w./-]+\.[A-Za-z0-9]{1,5}["']\s*[:=,]\s*["']$""")


def _digest(before: str, value: str) -> bool:
    return bool(
        _DIGEST_NAME.search(before) or _FILE_KEY.search(before) or _HASH_PREFIX.match(value)
        or _HASH_PREFIX.search(before[-7:])
    )  # fmt: skip


#: Translation files (in a folder of translations, in a format translations are kept in), where a keyword's
#: value is a label in some language ("Mot de passe"): Statamic's lang/ had 442 such values taken for
#: secrets. Other plugins still apply there, and code in such a folder (a .py, a .go) is scanned as usual.
_TRANSLATIONS = re.compile(
    r"(?:^|[/\\])(?:lang|langs|languages|locales?|i18n|l10n|translations?)[/\\]"
    r"(?:.*[/\\])?[^/\\]+\.(?:json|ya?ml|php|js|ts|po|pot|properties|xml|strings|arb|resx|ftl|toml|ini|xliff|xlf)$",
    re.IGNORECASE,
)
#: What a token a vendor's pattern matched the start of goes on with (a key longer than the format).
_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_+/=-]*")
_PEM_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|PuTTY-User-Key-File-\d:[^\n]*")
#: A run of base64 inside a key's text (after a ``\n`` escape too), never a piece of a word around it.
_KEY_TEXT = re.compile(r"(?:(?<=\\[nr])|(?<![\w\\]))[A-Za-z0-9+/=]{4,}(?!\w)")
_KEY_LINE = re.compile(r"""^\s*["']?(?:[A-Za-z0-9+/=]{16,}(?:\\n)?)+["']?,?\s*$""")


def _fold(text: str) -> str:
    """``text`` in lower case as IGNORECASE matches ASCII letters, with the same offsets (``str.lower`` of
    ASCII; else a translation, as ``lower`` makes two characters of one, U+0130)."""
    return text.lower() if text.isascii() else text.translate(_FOLD)


def _line_starts(text: str) -> list[int]:
    """Where each line of ``text`` starts (in C: a regex's match objects cost several times more)."""
    return list(itertools.accumulate(map((1).__add__, map(len, text.split("\n")[:-1])), initial=0))


def _spans(plugin: object, line: str, value: str) -> list[tuple[int, int]]:
    """Where in ``line`` the plugin found ``value``: the group of its own pattern that matched it (to the end of
    the match when the group is the match's start: GitHub's pattern reports the ``ghp`` of a token), else the
    quoted ``value`` (the entropy plugins), else ``value`` where no word goes on around it; never a
    neighbouring identifier."""
    found: list[tuple[int, int]] = []
    for regex in getattr(plugin, "denylist", ()) or ():
        for m in regex.finditer(line):
            for i in range(1, m.re.groups + 1) if m.re.groups else [0]:
                if m.group(i) == value:
                    end = m.end() if m.start(i) == m.start() else m.end(i)
                    tail = _TOKEN_TAIL.match(line, end)
                    found.append((m.start(i), tail.end() if tail else end))
    if found:
        return found
    occurrences = [m.start() for m in re.finditer(re.escape(value), line)]
    quoted = [
        a
        for a in occurrences
        if a > 0 and line[a - 1] in "\"'`" and line[a + len(value) : a + len(value) + 1] == line[a - 1]
    ]
    bounded = [
        a for a in occurrences
        if not (a > 0 and _word(line[a - 1]) and _word(value[0]))
        and not (a + len(value) < len(line) and _word(line[a + len(value)]) and _word(value[-1]))
    ]  # fmt: skip
    return [(a, a + len(value)) for a in quoted or bounded or occurrences]


def _word(c: str) -> bool:
    return c.isalnum() or c == "_"


def _mask_spans(line: str, spans: list[tuple[int, int]]) -> str:
    """``line`` with each span (overlapping ones merged) replaced by MASK."""
    out: list[str] = []
    pos = 0
    for a, b in sorted(spans):
        if b <= pos:
            continue
        if a < pos:  # overlaps the one before: that one is widened
            out[-1] = MASK
        else:
            out += [line[pos:a], MASK]
        pos = b
    return "".join([*out, line[pos:]])


def _key_runs(line: str, start: int, end: int) -> list[tuple[int, int]]:
    """The key material between ``start`` and ``end``: base64 runs of a key's line length, or shorter ones that
    look random (a last line), not the code of a program that writes PEM markers (``"\\n".join(body)``)."""
    return [
        m.span() for m in _KEY_TEXT.finditer(line, start, end)
        if len(m.group()) >= 16 or looks_random(m.group(), min_length=4)
    ]  # fmt: skip


def _private_key_spans(lines: list[str], first: int) -> list[tuple[int, int, int]]:
    """(line index, start, end) of a private key's text: from its BEGIN marker to its END marker (on the same
    line when it is written with ``\n`` escapes in a string), or, with no END within 200 lines, the lines
    of key text after the marker."""
    begin = _PEM_BEGIN.search(lines[first])
    if begin is None:
        return []
    spans: list[tuple[int, int, int]] = []
    start = begin.end()
    last = min(len(lines), first + 200)
    for i in range(first, last):
        end = _PEM_END.search(lines[i], start if i == first else 0)
        segment_end = end.start() if end else len(lines[i])
        spans += [(i, a, b) for a, b in _key_runs(lines[i], start, segment_end)]
        if end:
            return spans
        start = 0
    # No END: only the key's own lines (base64, PuTTY's), never the code after it.
    spans = [s for s in spans if s[0] == first]
    for i in range(first + 1, last):
        if not (_KEY_LINE.match(lines[i]) or lines[i].startswith(("Private-Lines:", "Private-MAC:"))):
            break
        spans += [(i, a, b) for a, b in _key_runs(lines[i], 0, len(lines[i]))]
    return spans


_REDACTOR: SecretRedactor | None = None
_REDACTOR_LOCK = threading.Lock()


def redactor() -> SecretRedactor:
    """The process's redactor (detect-secrets is configured once)."""
    global _REDACTOR
    with _REDACTOR_LOCK:
        if _REDACTOR is None:
            _REDACTOR = SecretRedactor()
        return _REDACTOR


class _MaskCache:
    """Where each file version's secrets are, by a digest of its path and text (most versions: nowhere), so a
    version is scanned once in a process, when it is indexed or first shown, never once per question."""

    def __init__(self, most: int = 50_000) -> None:
        self.most = most
        self._spans: dict[bytes, Masks] = {}
        self._lock = threading.Lock()

    @staticmethod
    def key(text: str, filename: str) -> bytes:
        return hashlib.blake2b(f"{filename}\0{text}".encode("utf-8", "surrogatepass"), digest_size=16).digest()

    def get(self, key: bytes) -> Masks | None:
        with self._lock:
            return self._spans.get(key)

    def put(self, key: bytes, spans: Masks) -> None:
        with self._lock:
            if len(self._spans) >= self.most:
                self._spans.pop(next(iter(self._spans)))
            self._spans[key] = spans

    def clear(self) -> None:
        with self._lock:
            self._spans.clear()


MASKS = _MaskCache()


def redact(text: str, filename: str) -> tuple[str, list[SecretFinding]]:
    """``text`` with its secrets masked, and what was found; where they are is remembered for ``masked``."""
    spans, findings = redactor().masks(text, filename)
    MASKS.put(MASKS.key(text, filename), spans)
    return apply_masks(text, spans), findings


def masked(text: str, filename: str) -> str:
    """``text`` masked as ``redact`` masks it: without a scan when this version of the file was indexed or
    shown before in this process (the lines around a search hit are shown masked, not re-scanned per question)."""
    spans = MASKS.get(MASKS.key(text, filename))
    return redact(text, filename)[0] if spans is None else apply_masks(text, spans)


def masked_as_indexed(text: str, filename: str, masks: Masks | None) -> str:
    """``text`` masked as the index masked it: by ``masks``, those it recorded for this version of the file, or
    (None: none recorded) as ``masked`` masks it; a record that does not fit the text (lines the file lacks,
    a damaged row) is ignored and the text scanned."""
    if masks is None:
        return masked(text, filename)
    try:
        return apply_masks(text, masks)
    except IndexError:
        return masked(text, filename)
