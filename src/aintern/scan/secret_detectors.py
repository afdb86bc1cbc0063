"""Detectors detect-secrets 1.5 lacks, written as its plugins so that its filters apply to them as to its own:
passwords in connection strings and URLs, and vendors' token formats."""

from __future__ import annotations

import re


def connection_string_detector() -> object:
    """Passwords inside connection strings (ADO.NET, ODBC, JDBC-style ``...;Password=value;``), which
    detect-secrets' keyword plugin does not see inside a quoted string: a plugin of its own kind, so its
    filters (templates, ``${VAR}`` references, sequences) apply to it as to the others."""
    from detect_secrets.plugins.base import RegexBasedDetector

    class ConnectionStringPasswordDetector(RegexBasedDetector):
        secret_type = "Connection String Password"
        # Inside a connection string: after a ``;`` or the opening quote, ended by ``;`` or the closing
        # quote (so ``password=None,`` in a call is code, not a secret).
        # And the password in a URL's query (``jdbc:...?user=app&password=value``) or after an empty user name
        # (``redis://:value@host``, which the basic-auth plugin does not take).
        denylist = (
            re.compile(r"[;\"']\s*(?:password|pwd)\s*=\s*([^;\"'\s]+)\s*[;\"']", re.IGNORECASE),
            re.compile(r"[?&](?:password|pwd)=([^&#;\"'\s]+)", re.IGNORECASE),
            re.compile(r"://:([^:/?#\[\]@\s\"']+)@"),
        )

    return ConnectionStringPasswordDetector()


#: Vendors' token formats detect-secrets 1.5 lacks: (kind, pattern).
_VENDOR_FORMATS = (
    ("Google API Key", r"\bAIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])"),
    ("Google OAuth Client Secret", r"\bGOCSPX-[0-9A-Za-z_\-]{28}(?![0-9A-Za-z_\-])"),
    ("GitHub Fine-Grained Token", r"\bgithub_pat_[0-9A-Za-z_]{60,}"),
    ("Hugging Face Token", r"\bhf_[A-Za-z]{34}(?![A-Za-z0-9])"),
    ("DigitalOcean Token", r"\bdo[por]_v1_[a-f0-9]{64}\b"),
    ("Shopify Token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"),
    ("Anthropic API Key", r"\bsk-ant-[A-Za-z0-9_\-]{32,}"),
)


def vendor_detectors() -> list[object]:
    """A detect-secrets plugin for each of _VENDOR_FORMATS (so its filters apply to them as to the others)."""
    from detect_secrets.plugins.base import RegexBasedDetector

    return [
        type(kind.replace(" ", "") + "Detector", (RegexBasedDetector,), {
            "secret_type": kind, "denylist": (re.compile(pattern),),
        })()
        for kind, pattern in _VENDOR_FORMATS
    ]  # fmt: skip
