"""Secret masking (issue 47): recall on a planted set through the real index and search, and precision on
lines written like real code's (Django's among them): names, field names and other words are never masked,
and masking a secret replaces its value and nothing beside it."""

from __future__ import annotations

from pathlib import Path

import pytest
from secret_samples import PASSWORD, _Gen, planted
from workspaces import write_files

import aintern.scan.secrets as secrets_module
from aintern.knowledge import KnowledgeQueryOptions
from aintern.scan.secrets import MASK, SecretRedactor, redact
from aintern.workspace import Workspace


def test_planted_secrets_never_reach_the_index_or_what_search_shows(tmp_path: Path) -> None:
    files, secrets = planted()
    assert len(secrets) >= 100
    assert len({s.kind.split(",")[0] for s in secrets}) >= 10
    assert len({Path(p).suffix or Path(p).name for p in files}) >= 6
    root = tmp_path / "repo"
    write_files(root, files)
    db = tmp_path / "s.db"
    ws = Workspace(root, db)
    result = ws.build_index()
    assert result.success
    assert set(ws.store.get_files(ws.require_index().id)) == set(files)  # every planted file is indexed
    stored = "\n".join(r[0] for r in ws.store.conn.execute("SELECT content FROM chunks"))
    shown = ""
    for question in ("password token secret key credentials", "api key configuration", "deploy database"):
        found = ws.knowledge.query(
            question,
            KnowledgeQueryOptions(workspace_path=str(root), max_results=50, min_relevance=0.0, context_lines=20),
        )
        shown += "\n".join((c.expanded_context or "") + c.content for c in found.chunks)
        shown += ws.knowledge.build_context(question, str(root)).context
    ws.close()
    raw = db.read_bytes()
    leaked = [s for s in secrets if s.value in stored or s.value in shown or s.value.encode() in raw]
    assert len(leaked) <= len(secrets) * 0.02, [(s.path, s.kind, s.line) for s in leaked]
    # Only the value is masked: each planted line is stored as written, its values replaced by MASK.
    for line in {s.line for s in secrets}:
        expected = line
        for value in sorted((s.value for s in secrets if s.line == line), key=len, reverse=True):
            expected = expected.replace(value, MASK)
        assert expected in stored, (line, expected)


#: Lines of real code that hold no secret: Django 5.2.8's (contrib/auth/forms.py, createsuperuser.py,
#: core/checks/security/base.py, middleware/csrf.py), the dev corpora's, and the forms names and labels take.
NOT_SECRETS = {
    "django/contrib/auth/forms.py": """\
    def validate_passwords(
        self,
        password1_field_name="password1",
        password2_field_name="password2",
        usable_password_field_name="usable_password",
    ):
    def validate_password_for_user(self, user, password_field_name="password2"):
    def set_password_and_save(self, user, password_field_name="password1", commit=True):
""",
    "django/contrib/auth/management/commands/createsuperuser.py": 'PASSWORD_FIELD = "password"\n',
    "django/core/checks/security/base.py": 'SECRET_KEY_INSECURE_PREFIX = "django-insecure-"\n',
    "django/middleware/csrf.py": 'request_csrf_token = request.POST.get("csrfmiddlewaretoken", "")\n',
    "app/settings.py": """\
SECRET_KEY = os.environ["SECRET_KEY"]
PASSWORD_RESET_TIMEOUT = 259200
PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
token_type = "Bearer"
password = "password"
cache_key = "user:%s:profile"
DB_PASSWORD = "Mot de passe"
github_token_env = "GITHUB_TOKEN"
password = forms.CharField(label=_("Password"), widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}))
headers = {"Authorization": "Basic dXNlcjpwYXNz"}
DATABASE_URL = "postgres://postgres:postgres@localhost:5432/app"
DATABASE_URL = "postgres://app:${DB_PASSWORD}@db/app"
REPO = "git@github.com:org/repo.git"
CLONE = "ssh://git@github.com:22/org/repo.git"
HOME = "http://example.com"  # user@host, http://user@localhost:8000/a@b, http://[::1]:8000/
INVALID_PASSWORD = "Invalid password, try again"
DB_PASSWORD = "пароль_секрет"
""",
    "deploy/values.yaml": """\
db:
  password: ${DB_PASSWORD}
  api_key: your_api_key_here
  token: "{{ .Values.token }}"
  secretName: app-credentials
  passwordFile: /run/secrets/db_password
""",
    "deploy/run.sh": "export TOKEN_FILE=/run/secrets/token\nexport GITHUB_TOKEN=$GITHUB_TOKEN\n",
    "README.md": '<img src="https://codecov.io/gh/o/r/graph/badge.svg?token=KPPS918B0G" alt="codecov">\n',
    "docs/links.yaml": "return { authorization: opList[0]?.context.token };\n",
    "src/Encoding.swift": 'let query = "lowercase=abcdefghijklmnopqrstuvwxyz"\n',
    "src/Pinner.kt": ' *     .add("publicobject.com", "sha256/afwiKY3RxoMmLkuRW1l7QsPZTJPwDS2pdDROQjXw8ig=")\n',
    "shell.nix": '    sha256 = "162dywda2dvfj1248afxc45kcrg83appjd0nmdb541hl7rnncf02";\n',
    "src/Session.kt": 'val encryptKey = hex("00112233445566778899aabbccddeeff")\n',
    "app/pem.py": 'pem = "-----BEGIN PRIVATE KEY-----\\n" + "\\n".join(body) + "\\n-----END PRIVATE KEY-----\\n"\n',
    "models/manifest.json": '{"tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f41157aa01"}\n',
    "test/express.json.js": "test.write(Buffer.from('1f8b080000000000000aab562a2e2952b252d21b05a360148c58a0540b00', 'hex'))\n",
}


def test_names_words_and_test_data_are_not_secrets() -> None:
    """Django 5.2.8's forms.py was stored as ``[REDACTED]"[REDACTED]",``: the keyword plugin took the field
    name's value for a password and the masking ate the name with it."""
    for path, text in NOT_SECRETS.items():
        masked, found = redact(text, path)
        assert (masked, found) == (text, []), path


def test_masking_replaces_the_value_and_nothing_beside_it() -> None:
    g = _Gen(7)
    password, token, key = g.of(PASSWORD, 16), g.token(35), g.aws_secret()
    cases = {
        "app/db.py": [
            (f'    def connect(self, user, password="{password}", port=5432):', password),
            (f'password1 = "{password}"', password),
            (f'db_password_value="{password}",', password),
            (f'client = Client(api_key="{token}", timeout=30)', token),
        ],
        "deploy/env.sh": [(f"export API_TOKEN={token} # staging", token)],
        "config/app.yml": [(f"  aws_secret_access_key: {key}  # rotated monthly", key)],
    }
    for path, lines in cases.items():
        text = "\n".join(line for line, _ in lines) + "\n"
        masked, found = redact(text, path)
        assert masked == "\n".join(line.replace(value, MASK) for line, value in lines) + "\n", path
        assert [f.line for f in found] == list(range(1, len(lines) + 1)), path


def test_a_urls_password_is_masked_whatever_userinfo_characters_it_holds() -> None:
    """``postgres://admin:Xk29fLq!pz@db`` was stored as written: detect-secrets' basic-auth plugin stops at any of
    RFC 3986's sub-delims (``!$&'()*+,;=``). Every password in a URL's userinfo is masked, the user and host kept."""
    password = "Xk29fLq!pz"
    lines = [
        (f'DATABASE_URL = "postgres://admin:{password}@db.internal:5432/app"', password),
        (
            f'DATABASE_URL = "postgres://admin:{password.replace("!", "")}@db.internal:5432/app"',
            password.replace("!", ""),
        ),
        (f'CACHE_URL = "redis://:{password}@cache"', password),
        ("BROKER = 'amqp://svc:a$b&c(d)e*f+g,h;i=j:k~7@[2001:db8::1]:5672/'", "a$b&c(d)e*f+g,h;i=j:k~7"),
        ('MONGO = "mongodb://u:p%40ss%21W0rd9@[::1]:27017/db"', "p%40ss%21W0rd9"),
        ('URL = "https://me@example.com:Xk29f@Lq!pz@host/x"', "Xk29f@Lq!pz"),  # raw ``@``s: the last one ends it
        (f"git clone https://deploy:{password}@git.example.com/app.git", password),
    ]
    text = "\n".join(line for line, _ in lines) + "\n"
    masked, found = redact(text, "app/settings.py")
    assert masked == "\n".join(line.replace(f":{value}@", f":{MASK}@") for line, value in lines) + "\n"
    assert [f.line for f in found] == list(range(1, len(lines) + 1))


def test_a_password_in_a_url_or_connection_string_is_masked_even_when_it_reads_as_words() -> None:
    """A URL's or a connection string's password slot says what its value is: ``hunter2secretpw`` was stored and
    shown because it reads as words (``looks_random``). Only stand-ins stay: a service's default or a docs
    example's word, the user's own name, a reference, a run typed in order."""
    secret = [
        'DATABASE_URL = "postgres://app:hunter2secretpw@db.example.com:5432/app"',
        'CACHE = "redis://:tigerlily9@cache:6379/0"',
        'conn = "Server=db;User Id=app;Password=correcthorse;"',
        'url = "jdbc:postgresql://db/app?user=app&password=summer2024&ssl=1"',
    ]
    kept = [
        'DB = "postgres://postgres:postgres@localhost:5432/app"',
        'DB = "mysql://svc:svc@localhost/x"',
        'BROKER = "amqp://guest:guest@rabbit//"',
        'DB = "http://user:pass@host/x"',
        'DB = "postgres://app:${DB_PASSWORD}@db/app"',
        'DB = f"postgres://{user}:{password}@{host}/db"',
        'DB = "redis://:mypassword@cache"',
        'conn = "Server=db;User Id=app;Password=sa;"',
        'DB = "http://foo:bar@baz@example.com"',
        'DB = "postgres://app:123456@db"',
    ]
    masked, _ = redact("\n".join(secret + kept) + "\n", "app/settings.py")
    lines = masked.split("\n")
    for line in lines[: len(secret)]:
        assert MASK in line, line
    assert lines[len(secret) : len(secret) + len(kept)] == kept
    assert "app:[REDACTED]@db.example.com" in lines[0]  # (the user and the host are kept)


def test_a_named_secrets_base64_key_is_masked_however_its_letters_group() -> None:
    """``AWS_SECRET_ACCESS_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"`` (AWS's documented example key) was
    shown: its long upper-case run reads as words to ``looks_random``. A named secret's value that is base64 of a
    key's length, mixing cases and digits, is key material; a class name or typed test data is not."""
    text = (
        'AWS_SECRET_ACCESS_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"\n'
        'aws_secret_access_key: "Je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY"\n'
        'SECRET_KEY = "PBKDF2PasswordHasher"\n'
        'CSRF_SECRET = "lcccccccX2kcccccccY2jcccccccssIC"\n'
    )
    masked, _ = redact(text, "config/settings.py")
    lines = masked.split("\n")
    assert lines[0] == f'AWS_SECRET_ACCESS_KEY = "{MASK}"' and lines[1] == f'aws_secret_access_key: "{MASK}"'
    assert lines[2:4] == text.split("\n")[2:4]


def test_a_value_is_masked_whole_not_cut_at_punctuation() -> None:
    """A value cut at a punctuation character left its rest, and a cut value too short to look random left all
    of it: ``password: Xk29f,Lq!pz`` in YAML, ``"Xk29f\\"Lq!pz"`` with an escaped quote, ``Password=Xk29f'Lq!pz;``."""
    value = "Xk29f{}Lq!pz"
    cases = {
        "config/app.yml": [f"password: {value.format(c)}" for c in ",&;}]"],
        "deploy/env.sh": [f"export DB_PASSWORD={value.format(',')}"],
        "app/settings.py": [
            f'DB_PASSWORD = "{value.format(chr(92) + chr(34))}"',
            f"DB_PASSWORD = '{value.format(chr(92) + chr(39))}'",
            f'conn = "Server=db;User Id=app;Password={value.format(chr(39))};"',
            f'url = "jdbc:postgresql://db/app?user=app&password={value.format(chr(39))}&ssl=1"',
        ],
    }
    for path, lines in cases.items():
        masked, found = redact("\n".join(lines) + "\n", path)
        assert "Lq!pz" not in masked and "Xk29f" not in masked, (path, masked)
        assert len(found) >= len(lines), path
    # (a YAML flow mapping's comma and a docs example's code stay as they are)
    flow = "db: {password: Xk29fLq!pz, user: app}\n"
    assert redact(flow, "config/app.yml")[0] == "db: {password: [REDACTED], user: app}\n"


def test_lines_shown_around_hits_come_masked_from_the_index_never_scanned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 49: the lines around a search hit are read from disk and were scanned for secrets again for every
    question; now the index records where it masked each file, and a search applies that: a process that did
    not index (a server, a CLI search) scans nothing. An index without the masks (written before schema 10)
    has each file version scanned once in a process, not once per question."""
    files, secrets = planted()
    few = {p: files[p] for p in ("app/settings.py", "deploy/deploy.sh", "config/app.json")}
    root = tmp_path / "repo"
    write_files(root, few)
    db = tmp_path / "s.db"
    ws = Workspace(root, db)
    assert ws.build_index().success
    scanned: list[str] = []
    find = SecretRedactor.find
    monkeypatch.setattr(SecretRedactor, "find", lambda self, text, name: scanned.append(name) or find(self, text, name))

    def shown(w: Workspace, question: str) -> str:
        options = KnowledgeQueryOptions(workspace_path=str(root), max_results=20, min_relevance=0.0, context_lines=40)
        chunks = w.knowledge.query(question, options).chunks
        assert any(c.expanded_context for c in chunks)
        return "\n".join(c.expanded_context or "" for c in chunks)

    questions = ["aws access key settings", "deploy token", "private key json"]
    text = "".join(shown(ws, q) for q in questions)
    ws.close()
    assert MASK in text and not [s.value for s in secrets if s.path in few and s.value in text]
    assert scanned == []  # indexed in this process: no file scanned to show it
    # A process that did not index (a new service, a CLI search): the scanner is never called.
    secrets_module.MASKS.clear()

    def refused(self: SecretRedactor, text: str, name: str) -> list[object]:
        raise AssertionError(f"{name} scanned for secrets at query time")

    with monkeypatch.context() as patched:
        patched.setattr(SecretRedactor, "find", refused)
        w = Workspace(root, db)
        text = "".join(shown(w, q) for q in questions)
        w.close()
    assert any(s.line.replace(s.value, MASK) in text for s in secrets if s.path in few)  # the line, its value masked
    assert not [s.value for s in secrets if s.path in few and s.value in text]
    # An index written before the masks were recorded (or a damaged record): each file version is scanned
    # once, not per question.
    w = Workspace(root, db)
    damaged = {"app/settings.py": None, "deploy/deploy.sh": "not json", "config/app.json": "[[100000, 0, 4]]"}
    w.store.conn.executemany("UPDATE files SET secret_masks = ? WHERE path = ?", [(m, p) for p, m in damaged.items()])
    w.store.conn.commit()
    w.close()
    for question in questions * 2:
        w = Workspace(root, db)
        text = shown(w, question)
        w.close()
        assert not [s.value for s in secrets if s.path in few and s.value in text]
    assert scanned and len(scanned) == len(set(scanned)) <= len(few)


def test_an_index_older_than_the_masks_gets_them_at_its_next_update(tmp_path: Path) -> None:
    """Issue 49: an index written before schema 10 has no masks recorded (its files are scanned when first
    shown); the next indexing run records them, as indexing would have, without indexing the files again."""
    files, _ = planted()
    few = {p: files[p] for p in ("app/settings.py", "deploy/deploy.sh")} | {
        "README.md": "# The app\n\nHow to run it.\n"
    }
    root = tmp_path / "repo"
    write_files(root, few)
    ws = Workspace(root, tmp_path / "s.db")
    assert ws.build_index().success
    sql = "SELECT path, secret_masks FROM files ORDER BY path"
    recorded = ws.store.conn.execute(sql).fetchall()
    assert len(recorded) == 3 and all(m is not None for _, m in recorded)
    assert any(m != "[]" for _, m in recorded), "the planted secrets' masks"
    ws.store.conn.execute("UPDATE files SET secret_masks = NULL")
    ws.store.conn.commit()
    (root / "README.md").write_text("changed since\n")  # (indexed again by the run, its masks with it)
    result = ws.build_index()
    assert result.success and result.files_indexed == 1
    assert ws.store.conn.execute(sql).fetchall() == [(p, m) if p != "README.md" else (p, "[]") for p, m in recorded]
    ws.close()


def test_a_file_shown_whole_is_masked_as_search_shows_it(web_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A whole file (the MCP server's ``aintern://file`` resource, the web app's file page and its JSON) comes
    masked from the masks its index recorded, nothing scanned; a file changed since indexing is scanned as it is
    now (the recorded masks are of other lines), so no secret shows either way."""
    import asyncio

    from mcp import Client
    from web_server import WebServer

    from aintern.mcp import AinternMcp, McpConfig

    files, secrets = planted()
    few = {p: files[p] for p in ("app/settings.py", "deploy/deploy.sh")}
    values = [s.value for s in secrets if s.path in few]
    root = web_env / "repo"
    write_files(root, few)
    db = web_env / "aintern.db"
    ws = Workspace(root, db)
    assert ws.build_index().success
    ws.close()

    async def read_mcp(rel: str) -> str:
        async with Client(AinternMcp(McpConfig(db=db, workspace=root, watch=False)).server) as client:
            return str((await client.read_resource(f"aintern://file/repo/{rel}")).contents[0].text)

    def refused(self: SecretRedactor, text: str, name: str) -> list[object]:
        raise AssertionError(f"{name} scanned for secrets to show it")

    secrets_module.MASKS.clear()
    with WebServer(db, workspace=root, watch=False) as server, server.client() as http:

        def shown(rel: str) -> list[str]:
            page = http.get("/file", params={"path": rel})
            data = http.get("/api/file", params={"path": rel})
            assert page.status_code == data.status_code == 200
            return [asyncio.run(read_mcp(rel)), data.json()["content"], page.text]

        with monkeypatch.context() as patched:
            patched.setattr(SecretRedactor, "find", refused)
            for rel in few:
                mcp_text, json_text, html = shown(rel)
                assert mcp_text == json_text and MASK in mcp_text and MASK in html
                assert len(mcp_text.split("\n")) == len(few[rel].split("\n"))  # only values masked
                assert not [v for v in values if v in mcp_text or v in html]
        # Changed since indexing: a line above moves every secret down one line, off the recorded masks.
        (root / "app/settings.py").write_text("# moved down\n" + few["app/settings.py"])
        for text in shown("app/settings.py"):
            assert "moved down" in text and MASK in text
            assert not [v for v in values if v in text]


def test_the_prefilter_keeps_every_line_a_plugin_flags() -> None:
    """The plugins run only on the lines the prefilter picks (``candidate_lines``): what is found must be what
    running every plugin on every line finds, on each plugin's shapes (in upper and lower case, and with the
    letters IGNORECASE takes for ASCII ones: long s, Kelvin sign, dotted and dotless i), after a line whose
    lower case is longer than itself (U+0130), in the planted workspace and in real files."""

    class Unfiltered(SecretRedactor):
        def candidate_lines(self, text: str, starts: list[int] | None = None) -> list[int]:
            return list(range(1, text.count("\n") + 2))

    g = _Gen(11)
    hex64, b40, n = g.of("0123456789abcdef", 64), g.of(PASSWORD[:62] + "/+", 40), g.of("0123456789", 10)
    lines = [
        f'aws_secret = "{b40}"', f"AWS_SECRET_ACCESS_KEY: '{b40}'", f"Aws.Token = '{b40}'", f"aw\u017f_key = '{b40}'",
        f"AWS_\u212aEY = '{b40}'", f"key = AKIA{g.of('ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789', 16)}",
        f"token = 'xoxb-{n}-{n}-{g.of('abcdefghij0123456789', 24)}'", f"TOKEN = XOXP-{n}-{n}-{g.token(24).upper()}",
        f"url = 'https://hooks.slack.com/services/T{n}/B{n}/{g.token(24)}'",
        f"URL = HTTPS://HOOKS.SLACK.COM/SERVICES/T{n}/B{n}/{g.token(24)}",
        f"bot = '{'M' + g.token(23)}.{g.token(6)}.{g.token(27)}'", f"bot = {'O' + g.token(25)}.{g.token(6)}.{g.token(27)}",
        f"stripe = 'sk_live_{g.token(24)}'", f"stripe = rk_live_{g.token(24)}",
        f"cloudant_password = '{hex64}'", f"CL_API_KEY={hex64}", f"url = https://acct:{hex64}@acct.cloudant.com",
        f"ibm_cloud_iam_api_key = '{g.token(44)}'", f"IBM-COS-HMAC-SECRET-KEY = {hex64[:48]}",
        f"secret_access_key='{hex64[:48]}'", f"softlayer_api_key = {hex64}", f"SL-API-KEY: {hex64}",
        f"\u017foftlayer_api_key = {hex64}", f"\u0131bm_cloud_\u0130am_api_key = {g.token(44)}",
        f'conn = "Server=db;Password={g.token(20)};"', f"url = '/login?password={g.token(20)}&next=/'",
        f"dsn = postgres://:{g.token(20)}@db/app",
    ]  # fmt: skip
    texts = {f"sample{i}.py": line + "\n" for i, line in enumerate(lines)}
    texts["all.py"] = "\n".join(lines) + "\n"
    texts["turkish.py"] = "# " + "\u0130" * 60 + "\nx = 1\ny = 2\n" + "\n".join(lines) + "\n"
    texts.update(planted()[0])
    root = Path(__file__).resolve().parent.parent
    for rel in ["tests/secret_samples.py", "src/aintern/scan/secrets.py", "src/aintern/scan/secret_values.py"]:
        texts[rel] = (root / rel).read_text(encoding="utf-8")
    fast, every = SecretRedactor(), Unfiltered()
    for name, text in texts.items():
        assert fast.find(text, name) == every.find(text, name), name
