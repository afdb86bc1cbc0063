"""Secrets inside ordinary files (an AWS key in config.py, a token in deploy.sh): found and masked.

Detection is Yelp's detect-secrets — its plugins (AWS, GitHub, GitLab, Stripe, Slack, JWT, private
keys, passwords assigned to keywords, high-entropy strings, ...) and its false-positive filters —
run on each line that could hold a secret. Which lines could is decided by a prefilter built from
the same plugins' own patterns (their regexes, the keyword list, the quoted-string shape the entropy
plugins look at), because running every plugin on every line costs ~0.2 ms a line: a minute for a
mid-size repository. The value is masked and the line kept, so the code around it stays searchable.
"""

from __future__ import annotations

import bisect
import math
import re
import threading
from dataclasses import dataclass

from aintern.scan.kinds import is_test

#: What replaces a secret's value in stored chunks and in context.
MASK = "[REDACTED]"
_HEX = "Hex High Entropy String"
#: detect-secrets plugins that find things that are not credentials.
_NOT_SECRETS = {"IPPublicDetector"}
#: Characters a token is made of: a finding is widened to the whole token (some plugins report a prefix).
_TOKEN = re.compile(r"[A-Za-z0-9_\-+/.~]*")
_TOKEN_RIGHT = re.compile(r"[A-Za-z0-9_\-+/.~=]*")
_PEM_END = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----")


#: Plugins whose patterns are slow to search a whole file with (a lookbehind or an optional group at
#: every position: 0.1-0.5 s a MB each), and a fast pattern that matches wherever theirs can (their
#: literal part; an alias too short to search for, like Cloudant's "cl", is found via its key word).
_FAST_SUPERSETS = {
    "ArtifactoryDetector": r"AKC[a-zA-Z0-9]{10}|AP[\dABCDEF][a-zA-Z0-9]{8}",
    "MailchimpDetector": r"-us[0-9]",
    "TelegramBotTokenDetector": r":[0-9A-Za-z_-]{35}",
}
#: The same for case-insensitive ones, written in lower case and searched in the lower-cased text
#: (much faster than IGNORECASE).
_FAST_LOWER_SUPERSETS = {
    "CloudantDetector": r"cloudant|cl(?:ou)?[_-]?(?:api)?[_-]?(?:key|pwd|pw|pass|token)",
    "IbmCloudIamDetector": r"ibm|cloud[_-]?iam|iam[_-]?(?:api)?[_-]?(?:key|pwd|pw|pass|token)",
    "IbmCosHmacDetector": r"cos[_-]?(?:hmac)?[_-]?(?:secret|key)|secret[_-]?access[_-]?key",
    "SoftlayerDetector": r"softlayer|sl[_-]?(?:api)?[_-]?(?:key|pwd|pw|pass|token)",
    "ConnectionStringPasswordDetector": r"(?:password|pwd)\s*=",
}


@dataclass(frozen=True)
class SecretFinding:
    line: int
    kind: str


class SecretRedactor:
    """Masks secrets in text. Thread-safe; building it loads detect-secrets once per process."""

    _setup = threading.Lock()
    _ready = False

    def __init__(self) -> None:
        from detect_secrets.core import scan
        from detect_secrets.plugins.keyword import DENYLIST

        with SecretRedactor._setup:
            if not SecretRedactor._ready:
                from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
                from detect_secrets.settings import cache_bust, get_settings

                plugin_types: list[type] = list(get_mapping_from_secret_type_to_class().values())
                names = [t.__name__ for t in plugin_types]
                cache_bust()  # (it also resets the settings, so it goes first)
                get_settings().configure_plugins([{"name": n} for n in names if n not in _NOT_SECRETS])
                SecretRedactor._ready = True
        self._scan = scan
        self.plugins = [*scan.get_plugins(), _connection_string_detector()]  # type: ignore[attr-defined]
        patterns: list[str] = list(_FAST_SUPERSETS.values())
        for plugin in self.plugins:
            if type(plugin).__name__ in _FAST_SUPERSETS or type(plugin).__name__ in _FAST_LOWER_SUPERSETS:
                continue
            for regex in getattr(plugin, "denylist", ()) or ():
                # Each pattern keeps its own flags inside the one alternation.
                flags = "".join(
                    f for f, bit in (("i", re.I), ("x", re.X), ("s", re.S), ("m", re.M)) if regex.flags & bit
                )
                patterns.append(f"(?{flags}:{regex.pattern}\n)" if flags else regex.pattern)
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
        #: The keyword plugin's words and the case-insensitive supersets, searched in the lower-cased text.
        self._lower = [
            re.compile("|".join(DENYLIST).lower()),
            re.compile("|".join(f"(?:{p})" for p in _FAST_LOWER_SUPERSETS.values())),
        ]

    def candidate_lines(self, text: str) -> list[int]:
        """Numbers (from 1) of the lines some plugin could report."""
        spans: list[tuple[int, int]] = []
        lowered = text.lower()
        for regex, where in [*((r, text) for r in self._prefilter), *((r, lowered) for r in self._lower)]:
            spans.extend(m.span() for m in regex.finditer(where))
        for plugin, regex in self._entropy:
            spans.extend(
                m.span() for m in regex.finditer(text)
                if plugin.calculate_shannon_entropy(m.group(2)) > plugin.entropy_limit
            )  # fmt: skip
        if not spans:
            return []
        starts = [0, *(m.end() for m in re.finditer("\n", text))]
        found = {bisect.bisect_right(starts, a) for a, _ in spans}
        found |= {bisect.bisect_right(starts, max(a, b - 1)) for a, b in spans}
        return sorted(found)

    def find(self, text: str, filename: str) -> list[tuple[int, str, str]]:
        """(line number, kind, value) of each secret detect-secrets finds in ``text`` (lines from 1)."""
        numbers = self.candidate_lines(text)
        if not numbers:
            return []
        lines = text.split("\n")
        found: list[tuple[int, str, str]] = []
        for number in numbers:
            line = lines[number - 1]
            if len(line) <= 5000:  # a minified line: the scanner keeps such files out anyway
                found.extend(self._scan_line(lines, number, line.rstrip(), filename))
        if found and is_test(filename):
            # A test's SHA-1 or SHA-256 in hex that only the entropy plugin reports is a digest it checks
            # (a git object id, a hash's test vector): libgit2's tests had 2,775 of them masked.
            named = {(n, v) for n, kind, v in found if kind != _HEX}
            found = [f for f in found if not (f[1] == _HEX and len(f[2]) in (40, 64) and (f[0], f[2]) not in named)]
        return found

    def _scan_line(self, lines: list[str], number: int, line: str, filename: str) -> list[tuple[int, str, str]]:
        scan = self._scan
        snippet = scan.get_code_snippet(lines=lines, line_number=number)
        if scan._is_filtered_out(required_filter_parameters=["line"], filename=filename, line=line, context=snippet):
            return []
        out = []
        for plugin in self.plugins:
            for secret in scan._scan_line(
                plugin=plugin, filename=filename, line=line, line_number=number, context=snippet
            ):
                if not scan._is_filtered_out(
                    required_filter_parameters=["context"], filename=filename, secret=secret.secret_value,
                    plugin=plugin, line=line, context=snippet,
                ) and not (secret.type == "Secret Keyword" and _TRANSLATIONS.search(filename)):  # fmt: skip
                    out.append((number, str(secret.type), str(secret.secret_value or "")))
        return out

    def redact(self, text: str, filename: str) -> tuple[str, list[SecretFinding]]:
        """``text`` with every secret's value masked (line count and other lines unchanged), and what was found."""
        found = self.find(text, filename)
        if not found:
            return text, []
        lines = text.split("\n")
        findings: dict[tuple[int, str], SecretFinding] = {}
        for number, kind, value in found:
            findings.setdefault((number, kind), SecretFinding(number, kind))
            if kind == "Private Key":
                _mask_private_key(lines, number - 1)
            else:
                lines[number - 1] = _mask_value(lines[number - 1], value)
        return "\n".join(lines), sorted(findings.values(), key=lambda f: (f.line, f.kind))


#: Translation files (in a folder of translations, in a format translations are kept in), where a keyword's
#: value is a label in some language ("Mot de passe"): Statamic's lang/ had 442 such values taken for
#: secrets. Other plugins still apply there, and code in such a folder (a .py, a .go) is scanned as usual.
_TRANSLATIONS = re.compile(
    r"(?:^|[/\\])(?:lang|langs|languages|locales?|i18n|l10n|translations?)[/\\]"
    r"(?:.*[/\\])?[^/\\]+\.(?:json|ya?ml|php|js|ts|po|pot|properties|xml|strings|arb|resx|ftl|toml|ini|xliff|xlf)$",
    re.IGNORECASE,
)


def _mask_value(line: str, value: str) -> str:
    """Every occurrence of ``value`` in ``line``, widened to its whole token, replaced by MASK."""
    if not value or MASK in value:
        return line
    out: list[str] = []
    pos = 0
    while True:
        at = line.find(value, pos)
        if at < 0:
            break
        start = at
        while start > 0 and _TOKEN.fullmatch(line[start - 1]) and line[start - 1] != "=":
            start -= 1
        if start < pos:
            start = pos
        end_match = _TOKEN_RIGHT.match(line, at + len(value))
        end = end_match.end() if end_match else at + len(value)
        out.append(line[pos:start])
        out.append(MASK)
        pos = end
    out.append(line[pos:])
    return "".join(out)


def _mask_private_key(lines: list[str], first: int) -> None:
    """A PEM private key: the lines after its BEGIN line, up to its END line, become MASK."""
    for i in range(first + 1, min(len(lines), first + 200)):
        if _PEM_END.search(lines[i]):
            return
        indent = len(lines[i]) - len(lines[i].lstrip())
        if lines[i].strip():
            lines[i] = lines[i][:indent] + MASK


def _connection_string_detector() -> object:
    """Passwords inside connection strings (ADO.NET, ODBC, JDBC-style ``...;Password=value;``), which
    detect-secrets' keyword plugin does not see inside a quoted string: a plugin of its own kind, so its
    filters (templates, ``${VAR}`` references, sequences) apply to it as to the others."""
    from detect_secrets.plugins.base import RegexBasedDetector

    class ConnectionStringPasswordDetector(RegexBasedDetector):
        secret_type = "Connection String Password"
        # Inside a connection string: after a ``;`` or the opening quote, ended by ``;`` or the closing
        # quote (so ``password=None,`` in a call is code, not a secret).
        denylist = (re.compile(r"[;\"']\s*(?:password|pwd)\s*=\s*([^;\"'\s]+)\s*[;\"']", re.IGNORECASE),)

    return ConnectionStringPasswordDetector()


_REDACTOR: SecretRedactor | None = None
_REDACTOR_LOCK = threading.Lock()


def redactor() -> SecretRedactor:
    """The process's redactor (detect-secrets is configured once)."""
    global _REDACTOR
    with _REDACTOR_LOCK:
        if _REDACTOR is None:
            _REDACTOR = SecretRedactor()
        return _REDACTOR


def redact(text: str, filename: str) -> tuple[str, list[SecretFinding]]:
    return redactor().redact(text, filename)
