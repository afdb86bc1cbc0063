"""A planted set of secrets for the masking tests: generated values (a seeded RNG, never real credentials,
and none written in this file) in the shapes real ones take, in many file kinds, quoted and unquoted, with
near-misses of the vendors' formats (a key one character short of AWS's, a GitHub token one short).

``planted()`` gives the files of a workspace and, for each secret, the file, the line as written and the value;
the masked line must be the same line with only the value replaced.
"""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass

UPPER_DIGITS = string.ascii_uppercase + string.digits
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
#: Characters a password written in quotes may hold (no quote, backslash, ``$`` or braces: those are code).
PASSWORD = ALNUM + "!@#%^&*-_+=~"
#: Characters a URL's password may hold unencoded (RFC 3986 userinfo: unreserved, sub-delims, ``:``).
URL_PASSWORD = ALNUM + "-._~!$&'()*+,;=:"


@dataclass(frozen=True)
class Planted:
    path: str
    line: str
    value: str
    kind: str


class _Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def of(self, alphabet: str, n: int) -> str:
        while True:  # every class of a mixed alphabet present, as generated keys have
            value = "".join(self.rng.choice(alphabet) for _ in range(n))
            if not (set(alphabet) & set(string.digits)) or any(c.isdigit() for c in value):
                return value

    # Vendors' formats, and one character short of them.
    def aws_id(self, short: bool = False) -> str:
        return "AKIA" + self.of(UPPER_DIGITS, 15 if short else 16)

    def aws_secret(self, short: bool = False) -> str:
        return self.of(B64, 39 if short else 40)

    def github(self, prefix: str = "ghp_", short: bool = False) -> str:
        return prefix + self.of(ALNUM, 35 if short else 36)

    def github_pat(self) -> str:
        return "github_pat_" + self.of(ALNUM, 22) + "_" + self.of(ALNUM, 59)

    def slack(self) -> str:
        return f"xoxb-{self.of(string.digits, 12)}-{self.of(string.digits, 13)}-{self.of(ALNUM, 24)}"

    def slack_webhook(self) -> str:
        return f"https://hooks.slack.com/services/T{self.of(UPPER_DIGITS, 8)}/B{self.of(UPPER_DIGITS, 8)}/{self.of(ALNUM, 24)}"

    def stripe(self, short: bool = False) -> str:
        return "sk_live_" + self.of(ALNUM, 23 if short else 24)

    def google(self) -> str:
        return "AIza" + self.of(URLSAFE, 35)

    def jwt(self) -> str:
        def part(data: dict[str, object]) -> str:
            return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")

        payload = {"sub": self.of(string.digits, 10), "name": "svc", "iat": 1700000000 + self.rng.randrange(10**6)}
        return f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{part(payload)}.{self.of(URLSAFE, 43)}"

    def sendgrid(self) -> str:
        return f"SG.{self.of(URLSAFE, 22)}.{self.of(URLSAFE, 43)}"

    def pem_body(self) -> list[str]:
        return [self.of(B64, 64) for _ in range(4)] + [self.of(B64, 20) + "=="]

    # No vendor's format: random strings, and passwords.
    def token(self, n: int = 32) -> str:
        return self.of(ALNUM, n)

    def hex(self, n: int = 40) -> str:
        return self.of(HEX, n)

    def password(self, n: int = 14) -> str:
        return self.of(PASSWORD, n)

    def unquoted_password(self, n: int = 16) -> str:
        return self.of(ALNUM + "-_.", n)

    def url_password(self, n: int = 14) -> str:
        """A URL's password with sub-delims in it (detect-secrets' basic-auth plugin stops at any of them)."""
        return self.of(URL_PASSWORD, n - 2) + "!7"


def planted(seed: int = 47) -> tuple[dict[str, str], list[Planted]]:
    """The workspace's files and the secrets planted in them (the same for the same seed)."""
    g = _Gen(seed)
    files: dict[str, list[str]] = {}
    secrets: list[Planted] = []

    def put(path: str, template: str, value: str, kind: str) -> None:
        line = template.replace("VALUE", value)
        files.setdefault(path, []).append(line)
        secrets.append(Planted(path, line, value, kind))

    def code(path: str, line: str) -> None:
        files.setdefault(path, []).append(line)

    # Python
    py = "app/settings.py"
    code(py, "import os\n\nfrom app.client import Client\n")
    put(py, 'AWS_ACCESS_KEY_ID = "VALUE"', g.aws_id(short=True), "aws id, one short")
    put(py, 'AWS_SECRET_ACCESS_KEY = "VALUE"', g.aws_secret(short=True), "aws secret, one short")
    put(py, 'AWS_ACCESS_KEY_ID = "VALUE"', g.aws_id(), "aws id")
    put(py, "AWS_SECRET_ACCESS_KEY = 'VALUE'", g.aws_secret(), "aws secret")
    put(py, 'SECRET_KEY = "VALUE"', g.password(50), "password")
    put(py, 'STRIPE_API_KEY = "VALUE"', g.stripe(), "stripe")
    put(py, 'client = Client(api_key="VALUE", timeout=30)', g.token(40), "random")
    put(py, 'headers = {"Authorization": "Bearer VALUE"}', g.token(40), "bearer")
    put(py, 'DATABASES = {"default": {"ENGINE": "postgres", "PASSWORD": "VALUE"}}', g.password(), "password")
    put(py, 'DATABASE_URL = "postgresql://app:VALUE@db.internal:5432/app"', g.unquoted_password(), "connection string")
    put(py, 'GOOGLE_MAPS_KEY = "VALUE"', g.google(), "google")
    put(py, 'SLACK_WEBHOOK = "VALUE"', g.slack_webhook(), "slack webhook")
    put(py, "    password: str = 'VALUE'", g.password(16), "password")
    put(py, 'os.environ["GITHUB_TOKEN"] = "VALUE"', g.github(), "github")
    code(py, "\n\ndef client() -> Client:\n    return Client(api_key=os.environ.get('API_KEY', ''))\n")
    # JavaScript / TypeScript
    js = "web/src/config.js"
    code(js, "// configuration of the web client\n")
    put(js, 'const GITHUB_TOKEN = "VALUE";', g.github("gho_"), "github")
    put(js, "export const stripeKey = 'VALUE';", g.stripe(short=True), "stripe, one short")
    put(js, "const slackToken = `VALUE`;", g.slack(), "slack")
    put(js, 'const firebase = { apiKey: "VALUE", authDomain: "app.example.com" };', g.google(), "google")
    put(js, 'fetch(url, { headers: { Authorization: "Bearer VALUE" } });', g.jwt(), "jwt")
    put(
        js,
        'const mongo = "mongodb+srv://admin:VALUE@cluster0.example.net/app";',
        g.unquoted_password(),
        "connection string",
    )
    put(js, 'module.exports = { secret: "VALUE" };', g.hex(64), "hex")
    ts = "web/src/api.ts"
    code(ts, "import { Client } from './client';\n")
    put(ts, 'export const API_TOKEN: string = "VALUE";', g.token(35), "random")
    put(ts, 'const client = new Client({ accessToken: "VALUE" });', g.github_pat(), "github pat")
    put(ts, "private readonly clientSecret = 'VALUE';", g.password(24), "password")
    put(ts, 'const sendgrid = "VALUE";', g.sendgrid(), "sendgrid")
    # Shell, unquoted and quoted
    sh = "deploy/deploy.sh"
    code(sh, "#!/usr/bin/env bash\nset -euo pipefail\n")
    put(sh, "export GITHUB_TOKEN=VALUE", g.github(short=True), "github, one short, unquoted")
    put(sh, "export API_TOKEN=VALUE", g.token(35), "random, unquoted")
    put(sh, "export AWS_ACCESS_KEY_ID=VALUE", g.aws_id(short=True), "aws id, one short, unquoted")
    put(sh, "export AWS_SECRET_ACCESS_KEY=VALUE", g.of(ALNUM, 39), "aws secret, one short, unquoted")
    put(sh, 'DB_PASSWORD="VALUE"', g.password(), "password")
    put(sh, "NPM_TOKEN='VALUE'", "npm_" + g.token(36), "npm")
    put(sh, 'curl -H "Authorization: Bearer VALUE" https://api.example.com/v1/deploy', g.token(40), "bearer")
    put(sh, "mysql -h db -u root --password=VALUE app < dump.sql", g.unquoted_password(), "password, unquoted")
    put(sh, "git clone https://deploy:VALUE@git.example.com/app.git", g.token(40), "basic auth url")
    put(sh, "export SLACK_BOT_TOKEN=VALUE", g.slack(), "slack, unquoted")
    code(sh, 'echo "deployed"\n')
    # YAML
    yml = "deploy/values.yaml"
    code(yml, "app:\n  replicas: 2\n  env:")
    put(yml, "    POSTGRES_PASSWORD: VALUE", g.unquoted_password(), "password, unquoted")
    put(yml, '    API_KEY: "VALUE"', g.token(32), "random")
    put(yml, "    github_token: VALUE", g.github(), "github, unquoted")
    put(yml, "    aws_secret_access_key: VALUE", g.aws_secret(short=True), "aws secret, one short, unquoted")
    put(yml, "    redis_url: redis://:VALUE@redis:6379/0", g.token(24), "basic auth url")
    put(yml, "    stripe_secret: 'VALUE'", g.stripe(), "stripe")
    put(yml, "    jwt_signing_key: VALUE", g.hex(64), "hex, unquoted")
    # JSON
    jsn = "config/app.json"
    code(jsn, "{")
    put(jsn, '  "apiKey": "VALUE",', g.token(32), "random")
    put(jsn, '  "client_secret": "VALUE",', "GOCSPX-" + g.of(URLSAFE, 28), "google oauth")
    put(jsn, '  "slack": {"token": "VALUE"},', g.slack(), "slack")
    put(jsn, '  "db": {"password": "VALUE"},', g.password(), "password")
    put(jsn, '  "aws_access_key_id": "VALUE",', g.aws_id(), "aws id")
    put(jsn, '  "webhook": "VALUE",', g.slack_webhook(), "slack webhook")
    body = g.pem_body()
    pem_inline = "-----BEGIN PRIVATE KEY-----\\n" + "\\n".join(body) + "\\n-----END PRIVATE KEY-----\\n"
    put(jsn, f'  "private_key": "{pem_inline}",', body[0], "pem, inline")
    secrets += [Planted(jsn, files[jsn][-1], b, "pem, inline") for b in body[1:]]
    code(jsn, '  "name": "app"\n}')
    # Go
    go = "internal/config/config.go"
    code(go, "package config\n")
    put(go, 'const apiToken = "VALUE"', g.token(40), "random")
    put(go, '\ttoken := "VALUE"', g.github(short=True), "github, one short")
    put(go, '\tcfg := Config{Password: "VALUE", User: "app"}', g.password(), "password")
    put(go, 'var awsSecretAccessKey = "VALUE"', g.aws_secret(), "aws secret")
    put(
        go,
        'const dsn = "postgres://app:VALUE@localhost:5432/app?sslmode=disable"',
        g.unquoted_password(),
        "connection string",
    )
    put(go, 'var signingKey = []byte("VALUE")', g.token(32), "random")
    # Java
    java = "src/main/java/com/example/Config.java"
    code(java, "package com.example;\n\npublic class Config {")
    put(java, '    private static final String API_KEY = "VALUE";', g.token(32), "random")
    put(java, '    private static final String AWS_SECRET = "VALUE";', g.aws_secret(), "aws secret")
    put(
        java, '    String url = "jdbc:postgresql://db:5432/app?user=app&password=VALUE";', g.unquoted_password(), "jdbc"
    )
    put(java, '        props.setProperty("password", "VALUE");', g.password(), "password")
    put(java, '        headers.put("X-Api-Key", "VALUE");', g.token(40), "random")
    put(java, '        builder.clientSecret("VALUE");', g.password(24), "password")
    code(java, "}")
    # Ruby
    rb = "config/initializers/services.rb"
    put(rb, "Stripe.api_key = 'VALUE'", g.stripe(), "stripe")
    put(rb, 'config.access_token = "VALUE"', g.token(40), "random")
    put(rb, "Octokit.configure { |c| c.access_token = 'VALUE' }", g.github(), "github")
    put(rb, "SMTP = { user_name: 'mailer', password: 'VALUE' }", g.password(), "password")
    put(rb, "Aws.config.update(credentials: Aws::Credentials.new('VALUE', 'x'))", g.aws_id(), "aws id")
    put(rb, ":secret_key_base => 'VALUE',", g.hex(128), "hex")
    # .properties, INI
    props = "src/main/resources/application.properties"
    code(props, "server.port=8080")
    put(props, "spring.datasource.password=VALUE", g.unquoted_password(), "password, unquoted")
    put(props, "mail.smtp.password: VALUE", g.unquoted_password(20), "password, unquoted")
    put(props, "app.api.token=VALUE", g.token(35), "random, unquoted")
    put(props, "aws.secretKey=VALUE", g.aws_secret(), "aws secret, unquoted")
    put(props, "jwt.secret=VALUE", g.of(B64, 44), "base64, unquoted")
    ini = "deploy/app.ini"
    code(ini, "[database]\nhost = db")
    put(ini, "password = VALUE", g.unquoted_password(), "password, unquoted")
    put(ini, "api_key = VALUE", g.token(32), "random, unquoted")
    # Dockerfile
    dock = "Dockerfile"
    code(dock, "FROM python:3.12-slim")
    put(dock, "ENV API_TOKEN VALUE", g.token(35), "random, unquoted")
    put(dock, "ENV DB_PASSWORD=VALUE", g.unquoted_password(), "password, unquoted")
    put(dock, "ARG NPM_TOKEN=VALUE", "npm_" + g.token(36), "npm, unquoted")
    put(dock, "ENV GITHUB_TOKEN=VALUE", g.github(), "github, unquoted")
    code(dock, 'CMD ["python", "-m", "app"]')
    # PHP, Terraform, XML, Markdown, C#
    php = "config/services.php"
    code(php, "<?php\nreturn [")
    put(php, "    'secret' => 'VALUE',", g.stripe(), "stripe")
    put(php, "    'password' => 'VALUE',", g.password(), "password")
    put(php, '$apiKey = "VALUE";', g.token(32), "random")
    code(php, "];")
    tf = "infra/main.tf"
    put(tf, 'provider "github" { token = "VALUE" }', g.github(), "github")
    put(tf, '  master_password = "VALUE"', g.password(20), "password")
    put(tf, '  access_key = "VALUE"', g.aws_id(short=True), "aws id, one short")
    xml = "config/settings.xml"
    put(xml, "  <password>VALUE</password>", g.unquoted_password(), "password, unquoted")
    put(xml, "  <apiToken>VALUE</apiToken>", g.token(35), "random, unquoted")
    cs = "src/App/Settings.cs"
    put(cs, '    "Server=db;Database=app;User Id=sa;Password=VALUE;"', g.password(), "connection string")
    put(cs, '    public const string ApiKey = "VALUE";', g.token(32), "random")
    md = "docs/setup.md"
    code(md, "# Setup\n\n```sh")
    put(md, "export OPENAI_API_KEY=VALUE", "sk-" + g.token(48), "random, unquoted")
    put(md, "export HF_TOKEN=VALUE", "hf_" + g.of(string.ascii_letters, 34), "hugging face, unquoted")
    code(md, "```\n")
    put(md, "Use the Stripe key `VALUE` for the demo shop.", g.stripe(), "stripe in prose")
    # A PEM private key across lines, in code and in a key file's usual text.
    key_py = "app/keys.py"
    lines = ["-----BEGIN RSA PRIVATE KEY-----", *g.pem_body(), "-----END RSA PRIVATE KEY-----"]
    code(key_py, 'SIGNING_KEY = """' + lines[0])
    for body_line in lines[1:-1]:
        put(key_py, "VALUE", body_line, "pem")
    code(key_py, lines[-1] + '"""\n\n\ndef sign(data: bytes) -> bytes:\n    return data\n')
    # URLs whose passwords hold RFC 3986's sub-delims or percent-escapes (drawn last: the values above stay).
    urls = "app/urls.py"
    put(urls, 'DATABASE_URL = "postgres://admin:VALUE@db.internal:5432/app"', g.url_password(), "url, sub-delims")
    put(urls, 'CACHE_URL = "redis://:VALUE@cache"', g.url_password(), "url, no user")
    put(urls, 'BROKER_URL = "amqp://svc:VALUE@[2001:db8::1]:5672/"', g.url_password(), "url, ipv6 host")
    put(
        urls,
        'MONGO_URL = "mongodb://me%40corp.com:VALUE@[::1]:27017/db"',
        g.token(10) + "%21%40" + g.token(6),
        "url, encoded",
    )
    return {path: "\n".join(text) + "\n" for path, text in files.items()}, secrets
