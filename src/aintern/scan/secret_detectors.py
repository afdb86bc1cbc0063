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
        # And the password in a URL's query (``jdbc:...?user=app&password=value``). A ``'`` inside the value is
        # the value's (``Password=ab'cd;``: cut there, its rest was left whole, unmasked).
        denylist = (
            re.compile(r"[;\"']\s*(?:password|pwd)\s*=\s*([^;\"'\s](?:[^;\"\s]*[^;\"'\s])?)\s*[;\"']", re.IGNORECASE),
            re.compile(r"[?&](?:password|pwd)=([^&#;\"'\s](?:[^&#;\"\s]*[^&#;\"'\s])?)", re.IGNORECASE),
        )

    return ConnectionStringPasswordDetector()


#: RFC 3986's userinfo characters: unreserved, percent-encoded (``%``) and sub-delims; ``:`` only in the password.
_USERINFO = r"A-Za-z0-9\-._~%!$&'()*+,;="
#: The password in a URL's userinfo (``scheme://user:password@host``, ``redis://:password@host``), whatever
#: userinfo characters it holds. detect-secrets' basic-auth plugin takes none of the sub-delims, so that it
#: missed ``postgres://admin:Xk29fLq!pz@db`` (and the empty user name). As parsers split it (urllib, libpq),
#: the userinfo ends at the authority's last ``@`` and the user at its first ``:``: a raw ``@`` in a password
#: (``p@ss``, not percent-encoded) is still the password's, not the host's.
URL_PASSWORD = re.compile(rf"://[{_USERINFO}@]*?:([{_USERINFO}:@]+)@")


def url_password_detector() -> object:
    """Passwords in URLs (``URL_PASSWORD``), in place of detect-secrets' basic-auth plugin (same kind)."""
    from detect_secrets.plugins.base import RegexBasedDetector

    class URLPasswordDetector(RegexBasedDetector):
        secret_type = "Basic Auth Credentials"
        denylist = (URL_PASSWORD,)

    return URLPasswordDetector()


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
