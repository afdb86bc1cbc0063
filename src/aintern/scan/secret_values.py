"""The rule for a value assigned to a name: a secret when the name says it holds a key, token, secret or
password and the value looks random, whatever its format (issue 47).

The vendor formats (an AWS key id, a GitHub token) are detect-secrets' plugins' business; this is what
catches a value one character off those formats, an unquoted ``export API_TOKEN=...`` and a password of
no known format, and what keeps field names (``password1_field_name="password1"``), labels and other
words from being taken for secrets.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from aintern.file_kinds import unquoted_is_literal

#: Last words of a name that say its value is a secret (``DB_PASSWORD``, ``githubToken``, ``client_secret``).
_SECRET_HEADS = frozenset(
    [
        "password",
        "passwd",
        "passwort",
        "pwd",
        "pw",
        "pass",
        "passphrase",
        "secret",
        "token",
        "apikey",
        "credential",
        "credentials",
        "creds",
        "contrasena",
        "contraseña",
        "privatekey",
        "secretkey",
        "accesskey",
        "authkey",
    ]
)
#: Words before ``key`` that make it a credential (``API_KEY``, ``signing_key``), not a dictionary's or a
#: cache's key (``cache_key``, ``sort_key``).
_KEY_QUALIFIERS = frozenset(
    [
        "api",
        "access",
        "secret",
        "private",
        "priv",
        "client",
        "auth",
        "app",
        "master",
        "signing",
        "sign",
        "encryption",
        "encrypt",
        "crypto",
        "cipher",
        "license",
        "licence",
        "service",
        "account",
        "consumer",
        "subscription",
        "webhook",
        "hmac",
        "jwt",
        "session",
        "storage",
        "shared",
        "admin",
        "aes",
        "rsa",
        "ssh",
        "gpg",
        "pgp",
        "deploy",
        "write",
        "read",
        "root",
        "sk",
        "live",
        "prod",
        "db",
        "database",
    ]
)
#: Trailing words that say how a secret is written, not what the name holds (``SECRET_KEY_BASE64``).
_NEUTRAL_TAILS = frozenset(["value", "val", "str", "string", "b64", "base64", "hex", "raw", "plain", "base"])
#: How a value begins when it is a known vendor's token (a near-miss of its format is still that token).
_VENDOR_PREFIX = re.compile(
    r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9]|gh[pousr]_|github_pat_|glpat-|xox[abposr]-|[sr]k_(?:live|test)_"
    r"|AIza|sk-|SG\.|npm_|pypi-|dop_v1_|hf_)[A-Za-z0-9_\-./+=]{12,}"
)
#: Words of an identifier: ``PBKDF2PasswordHasher`` → PBKDF, 2, Password, Hasher.
_PIECES = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
#: A value that refers to a secret kept elsewhere (``${DB_PASSWORD}``, ``{{ token }}``, ``%(pw)s``,
#: ``#{ENV['X']}``, ``%APPDATA%``, ``<your-token>``) or stands in for one (``xxxx``, ``****``, ``changeme``).
_REFERENCE = re.compile(
    r"\$\{|\{\{|#\{|%\(|<%|\{\w*\}|^\$[\w{(]|^%\w+%$|^<[^>]*>$|xxx|\*\*\*|\.\.\.|change_?me|replace_?me|^your[_\-]",
    re.IGNORECASE,
)
#: ``Bearer ...``/``Basic ...``: an Authorization header's value is the rest.
_AUTH_SCHEME = re.compile(r"^(?:Bearer|Basic|Token|token|bearer)\s+(?=\S+$)")


def name_says_secret(name: str) -> bool:
    """Whether ``name``'s last word says its value is a key, token, secret or password: ``GITHUB_TOKEN``,
    ``dbPassword``, ``AWS_SECRET_ACCESS_KEY`` and ``AWS_ACCESS_KEY_ID`` do; ``password1_field_name``,
    ``token_type``, ``cache_key`` and ``PASSWORD_RESET_TIMEOUT`` do not."""
    words = [w.lower() for w in _PIECES.findall(name) if not w.isdigit()]
    while len(words) > 1 and words[-1] in _NEUTRAL_TAILS:
        words.pop()
    if not words:
        return False
    head = words[-1]
    if head in _SECRET_HEADS or head == "authorization":
        return True
    if head == "key":
        return len(words) > 1 and words[-2] in _KEY_QUALIFIERS
    return head == "id" and words[-3:-1] == ["access", "key"]  # AWS_ACCESS_KEY_ID


def looks_random(value: str, min_length: int = 8) -> bool:
    """Whether ``value`` looks like generated key material or a password rather than a word, a name, a
    path or a reference: ``k8Jq2vX9pL4mZ7wR``, ``s3cr3tP4ssw0rd!`` and a vendor prefix with a long tail do;
    ``password1``, ``usable_password``, ``GITHUB_TOKEN``, ``/run/secrets/db`` and ``${DB_PASSWORD}`` do not."""
    if len(value) < min_length or any(c.isspace() for c in value) or _REFERENCE.search(value):
        return False
    if len(set(value)) <= 2 or _patterned(value):
        return False
    if _VENDOR_PREFIX.match(value):
        return True
    runs = re.findall(r"[A-Za-z0-9]+", value)
    letters = sum(c.isalpha() for c in value)
    digits = sum(c.isdigit() for c in value)
    if not letters:
        return False  # a number, a date, a version
    entropy = _entropy(value)
    if entropy < min(3.0, math.log2(len(value)) - 0.3):
        return False
    symbols = sum(not c.isalnum() and c not in "_-./:" for c in value)
    if symbols and digits:  # a password (``Sup3rS3cret!Pw``), not an identifier or a path
        return True
    alnum = sum(len(r) for r in runs)
    pieces = sum(len(_PIECES.findall(r)) for r in runs)
    # Words average four or more letters a piece; random text changes case or turns to digits every 1-2.
    return pieces > 0 and alnum / pieces < 3.0  # (no piece: letters of another script, a word)


#: What a URL's or a connection string's password is written as where it is no secret: a service's default
#: or a docs example's word (``postgres://postgres:postgres@db``, ``amqp://guest:guest@``, ``Password=sa;``).
_STAND_IN_PASSWORDS = frozenset({
    "admin", "bar", "baz", "default", "empty", "example", "foo", "guest", "mysql", "none", "null", "pass",
    "passwd", "postgres", "pwd", "qux", "redis", "root", "sa", "secret", "test", "user", "username",
})  # fmt: skip


def is_set_password(value: str, user: str | None = None) -> bool:
    """Whether ``value``, found where a password goes (a URL's ``user:value@``, a connection string's
    ``Password=value``), is one: any value but a reference or placeholder (``${DB_PASSWORD}``, ``%s``,
    ``{password}``, ``<password>``, ``myPassword``), a service's default or a docs example's words (``pass+``,
    ``bar:baz``), the user's own name, a run typed in order (``123456``), or under 4 characters. The slot says
    it is a password, so words count: ``hunter2secretpw`` is one, where ``looks_random`` takes it for a word."""
    low = value.lower()
    if len(value) < 4 or any(c.isspace() for c in value) or _REFERENCE.search(value) or "passw" in low:
        return False
    words = re.findall(r"[a-z0-9]+", low)
    if all(w in _STAND_IN_PASSWORDS for w in words) or (user is not None and low == user.lower()):
        return False
    return len(set(value)) > 2 and not _patterned(value)


#: Runs typed or counted, not drawn at random.
_SEQUENCES = ("abcdefghijklmnopqrstuvwxyz", "0123456789", "qwertyuiopasdfghjklzxcvbnm")


def _patterned(value: str) -> bool:
    """An alphabet or a count written out (``abcdefgh``, ``00112233...``) or a short unit repeated."""
    squeezed = re.sub(r"(.)\1+", r"\1", value.lower())
    for i in range(len(squeezed) - 5):
        window = squeezed[i : i + 6]
        if any(window in seq or window[::-1] in seq for seq in _SEQUENCES):
            return True
    return re.fullmatch(r"(.{1,8}?)\1+", value) is not None


def _basic_password(value: str) -> str | None:
    """The password in HTTP Basic credentials (base64 of ``user:password``), when ``value`` is that."""
    import base64
    import binascii

    try:
        decoded = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    _, colon, password = decoded.partition(":")
    return password if colon and decoded.isprintable() else None


def _entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


@dataclass(frozen=True)
class Assignment:
    """A secret value assigned to a name: where its value is in the text (offsets), and the name."""

    start: int
    end: int
    name: str
    value: str


#: ``NAME op VALUE``: the name (which must hold a secret word somewhere; its last word is judged later),
#: an optional closing quote or bracket (``"password": ``, ``ENV["TOKEN"] = ``), an optional type
#: (``password: str = ``), the operator or a call's parenthesis, and the value, quoted or not (in quotes
#: it may be converted first: ``[]byte("...")``, ``b"..."``); an unquoted value followed by ``[`` or ``(`` is
#: code (``authorization: ops[0]?.token`` in a doc's example), taken whole or not at all (the lookahead).
_ASSIGNMENT = re.compile(
    r"""(?<![\w.$-])(?:[$@]|--?)?(?P<name>(?=[A-Za-z_])[\w.-]*?(?:pass|pwd|pw|secret|token|key|cred|auth|contrase)[\w.-]*)
        ["'\]]{0,2}
        (?:[ \t]*:[ \t]*[\w.\[\]|, ]{1,40}?(?=[ \t]*=[^=>]))?
        (?:[ \t]*(?P<op>:=|=>|===?|!==?|=|:|<-)[ \t]*|\((?=["'`]))
        (?:(?:\[\]byte|bytes|bytearray|Buffer\.from|String|str|SecretStr|hex|[\w.]*b64decode|atob|unhex)\((?=["'`])
        |[bBrRuU]{1,2}(?=["']))?
        (?:"(?P<dq>(?:[^"\\\n]|\\.)*)"|'(?P<sq>(?:[^'\\\n]|\\.)*)'|`(?P<bq>[^`\n]*)`
        |(?=(?P<uv>[^\s"'`,;&()}\[\]<>]+(?:[,;&}\]]+[^\s"'`,;&()}\[\]<>]+)*))(?P=uv)(?![\[(]))""",
    re.IGNORECASE | re.VERBOSE,
)
#: Forms that hold a literal in any file: ``<password>value</password>``, a Dockerfile's ``ENV NAME value``,
#: an ``Authorization: Bearer value`` header (inside a string in code), a pair of strings
#: (``props.setProperty("password", "value")``, ``headers.put("X-Api-Key", "value")``).
_LITERAL_FORMS = re.compile(
    r"<(?P<name>[\w.-]*(?:pass|pwd|secret|token|key)[\w.-]*)>(?P<uv>[^<\s]+)</(?P=name)>"
    r"|^[ \t]*ENV[ \t]+(?P<env>\w+)[ \t]+(?P<ev>[^\s\"'=]+)[ \t]*$"
    r"|\b(?P<header>Authorization|Proxy-Authorization):[ \t]*(?:Bearer|Basic|Token)[ \t]+(?P<hv>[\w.~+/=-]+)"
    r"""|["'](?P<pair>[\w.-]*(?:pass|pwd|secret|token|key)[\w.-]*)["'][ \t]*,[ \t]*(?:"(?P<pdq>[^"\n]*)"|'(?P<psq>[^'\n]*)')""",
    re.IGNORECASE | re.MULTILINE,
)


_IMAGE_QUERY = re.compile(r"\.(?:svg|png|gif)\?$")


def _secret_value(value: str, basic: bool) -> bool:
    """``looks_random``, of the password when ``value`` is HTTP Basic credentials (``dXNlcjpwYXNz`` is
    ``user:pass``: an example, not a secret)."""
    password = _basic_password(value) if basic else None
    if password is not None:
        return looks_random(password, min_length=6)
    return looks_random(value) or _key_material(value)


#: Base64 key material of a secret's length (an AWS secret access key is 40 of these characters).
_KEY_MATERIAL = re.compile(r"[A-Za-z0-9+/]{32,}={0,2}")


def _key_material(value: str) -> bool:
    """A named secret's value that is base64 of a key's length mixing cases and digits, however its letters
    group: AWS's documented example key (``wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY``) reads as words to
    ``looks_random``, and a real key may too."""
    return (
        _KEY_MATERIAL.fullmatch(value) is not None
        and any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value)
        and not _REFERENCE.search(value) and not _patterned(value)
        and re.search(r"(.)\1{3}", value) is None  # (typed test data, ``lcccccccX2k...``: random runs are short)
    )  # fmt: skip


def assignments(text: str, path: str) -> Iterator[Assignment]:
    """Every value in ``text`` (the file at ``path``) assigned to a name that says it holds a secret,
    that looks random. An unquoted value counts only where it is a literal (a shell script, a config
    file, docs), not an expression in code."""
    unquoted = unquoted_is_literal(path)
    for start, end in _lines_with_secret_words(text):
        for m in _ASSIGNMENT.finditer(text, start, end):
            group = next(g for g in ("dq", "sq", "bq", "uv") if m.group(g) is not None)
            if group == "uv" and not unquoted:
                continue
            at, value = m.start(group), m.group(group)
            scheme = _AUTH_SCHEME.match(value)
            if scheme:  # the token, not the word before it
                at, value = at + scheme.end(), value[scheme.end() :]
            if _IMAGE_QUERY.search(text, max(start, m.start() - 8), m.start()):
                continue  # a badge's token (codecov's ``badge.svg?token=``) is public by design
            if name_says_secret(m.group("name")) and _secret_value(value, bool(scheme and "asic" in scheme[0])):
                yield Assignment(at, at + len(value), m.group("name"), value)
        for m in _LITERAL_FORMS.finditer(text, start, end):
            name_group = next(g for g in ("name", "env", "header", "pair") if m.group(g) is not None)
            group = next(g for g in ("uv", "ev", "hv", "pdq", "psq") if m.group(g) is not None)
            name, value = m.group(name_group), m.group(group)
            basic = name_group == "header" and "asic" in text[m.start(group) - 7 : m.start(group)]
            if (name_group == "header" or name_says_secret(name)) and _secret_value(value, basic):
                yield Assignment(m.start(group), m.end(group), name, value)


#: Every name the patterns take holds one of these (``pw`` for ``pwd``, ``auth`` for ``Authorization``).
_SECRET_WORDS = ("pass", "pw", "secret", "token", "key", "cred", "auth", "contrase")


def _lines_with_secret_words(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the lines holding a secret word in any case: the patterns run on those only (most
    lines hold none, and ``str.find`` is far faster than a pattern tried at every position)."""
    lowered = text.lower()
    if len(lowered) != len(text):  # (a character whose lower case is longer: offsets would not match)
        return [(0, len(text))]
    starts: set[int] = set()
    for word in _SECRET_WORDS:
        at = lowered.find(word)
        while at >= 0:
            starts.add(lowered.rfind("\n", 0, at) + 1)
            end = lowered.find("\n", at)
            at = -1 if end < 0 else lowered.find(word, end)
    return [(a, len(text) if (b := text.find("\n", a)) < 0 else b) for a in sorted(starts)]
