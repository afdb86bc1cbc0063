"""`find_related` through the SDK client, on a small repository built to show each case: the definitions the code
at a line uses, each with its own lines (one nested in a chunk that opens with another definition), never a name
that only a comment or a string on that line spells."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import Client
from test_mcp import index, run, text

from aintern.mcp import AinternMcp, McpConfig

HELPERS = '''def format_total(amount):
    """Format an amount of money with two decimals."""
    return f"{amount:.2f}"


def apply_discount(amount, percent):
    """Take a percentage off an amount."""
    return amount * (1 - percent / 100)
'''
PAYMENTS = '''def refund_payment(payment):
    """Give the money of a payment back."""
    return payment.reverse()


def issue_refund(order):
    """Refund every payment of an order."""
    return [refund_payment(p) for p in order.payments]
'''
CHECKOUT = '''from helpers import apply_discount, format_total


class Checkout:
    """A cart on its way to an order."""

    def total(self, cart):
        """The cart's total after its discount, formatted."""
        return format_total(apply_discount(cart.amount, cart.percent), "issue_refund")  # not refund_payment

    def describe(self, cart):
        """One line about the cart."""
        return f"{len(cart.items)} items"

    def keep(self, cart):
        """Keep the cart for later."""
        return cart.persist()
'''


def test_find_related_shows_the_definitions_the_line_uses_with_their_own_lines(web_env: Path) -> None:
    root = web_env / "shop"
    root.mkdir()
    for name, body in (("helpers.py", HELPERS), ("payments.py", PAYMENTS), ("checkout.py", CHECKOUT)):
        (root / name).write_text(body)
    for n in range(6):  # (more code than k, so the list fills with look-alikes; six namesakes of `persist`)
        (root / f"model_{n}.py").write_text(f"class Model{n}:\n    def persist(self):\n        return {n}\n")
    db = web_env / "aintern.db"
    index(root, db)
    at = next(i for i, line in enumerate(CHECKOUT.splitlines(), 1) if "return format_total(" in line)
    helper_lines = HELPERS.splitlines()
    discount = next(i for i, line in enumerate(helper_lines, 1) if line.startswith("def apply_discount"))
    server = AinternMcp(McpConfig(db=db, workspace=root, watch=False))

    keep = next(i for i, line in enumerate(CHECKOUT.splitlines(), 1) if "cart.persist()" in line)

    async def body(c: Client) -> Any:
        return [await c.call_tool("find_related", {"path": "checkout.py", "line": line, "k": 6}) for line in (at, keep)]

    found, kept = run(server, body)
    assert not found.is_error, text(found)
    related = found.structured_content["related"]
    definitions = {r["symbol"]: r for r in related if r["reason"] == "definition"}
    # The two functions the line calls, and nothing the comment or the string on it spells.
    assert set(definitions) == {"format_total", "apply_discount"}, related
    # apply_discount shares a chunk that opens with format_total: it is shown with its own lines, as itself.
    shown = definitions["apply_discount"]
    assert (shown["path"], shown["start_line"], shown["end_line"]) == ("helpers.py", discount, len(helper_lines))
    assert shown["code"].startswith("def apply_discount") and "format_total" not in shown["code"], shown
    assert definitions["format_total"]["end_line"] < discount, definitions["format_total"]
    assert len(related) == 6, related
    # The text shows each with its lines and its code fenced, as search does.
    assert (
        f"helpers.py:{discount}-{len(helper_lines)}  definition  apply_discount\n```python\ndef apply_discount"
        in text(found)
    ), text(found)
    # A name this file does not define, and six other definitions share: which one is called cannot be told.
    assert not [r for r in kept.structured_content["related"] if r["reason"] == "definition"], text(kept)


def test_a_hit_is_named_as_search_and_context_name_it() -> None:
    """MCP search's text and the extractive answer name a method with its class, as the CLI's hit line and a
    context block's header do (KnowledgeChunk.named)."""
    from aintern.answer.extractive import extractive_answer
    from aintern.assemble.context import KnowledgeChunk
    from aintern.chunk.models import SymbolType
    from aintern.mcp import output

    hit = KnowledgeChunk(
        content="def total(self, cart):\n    return cart.amount\n", file_path="checkout.py", start_line=7,
        end_line=8, relevance=0.9, language="python", symbol_name="total", symbol_type=SymbolType.METHOD,
        parent_symbol="Checkout",
    )  # fmt: skip
    _, shown, _, _ = output.hits([hit], False, 1000)
    assert shown.startswith("checkout.py:7-8  Checkout.total (method)"), shown
    answer, _ = extractive_answer("cart total", [hit], 0.5)
    assert "`Checkout.total` (method)" in answer, answer


def _guard() -> str:
    """A module whose method is long enough to be cut into several chunks (at chunk_size 128), with constants and
    an exception class defined above it, and a caller that names it at its last lines."""
    body = ['"""Request guards: a request passes when its cookie and its token agree."""', "",
            'REASON_NO_COOKIE = "cookie not set."', "REASON_BAD_TOKEN = (", '    "token is bad."', ")", "", "",
            "class Rejected(Exception):", "    def __init__(self, reason):", "        self.reason = reason", "", "",
            "class Guard:", '    """Checks each request that changes something."""', "",
            "    def check(self, request):", '        secret = request.cookies.get("secret")']  # fmt: skip
    body += [f'        field_{n} = request.headers.get("x-field-{n}", secret)' for n in range(12)]
    body += ["        if secret is None:", "            # No cookie: nothing to compare the token with.",
             "            raise Rejected(REASON_NO_COOKIE)"]  # fmt: skip
    body += [f'        check_{n} = request.form.get("form-{n}", field_{n})' for n in range(12)]
    body += ["        if request.token != secret:", "            raise Rejected(REASON_BAD_TOKEN)", "        return True",
             "", "    def process(self, request):"]  # fmt: skip
    body += [f"        step_{n} = request.step({n})" for n in range(14)]
    body += ["        try:", "            self.check(request)", "        except Rejected as exc:",
             "            return exc.reason", "        return None", ""]  # fmt: skip
    return "\n".join(body)


def test_find_related_shows_constants_never_its_own_definition_and_each_usage_at_its_line(web_env: Path) -> None:
    root = web_env / "guard"
    root.mkdir()
    source = _guard()
    (root / "guard.py").write_text(source)
    client = "const MAX_RETRIES = 3;\nexport const BASE_URL = 'http://127.0.0.1';\n\nfunction fetchAll(client) {\n" \
        "  for (let i = 0; i < MAX_RETRIES; i++) client.get(BASE_URL);\n}\n"  # fmt: skip
    (root / "client.js").write_text(client)
    (root / ".aintern.toml").write_text("chunk_size = 128\nchunk_overlap = 0\n")  # (check: several chunks)
    db = web_env / "aintern.db"
    index(root, db)
    lines = source.splitlines()

    def at(text: str) -> int:
        return next(i for i, line in enumerate(lines, 1) if text in line)

    no_cookie, bad_token, call = (
        at("raise Rejected(REASON_NO_COOKIE)"),
        at("raise Rejected(REASON_BAD_TOKEN)"),
        at("self.check(request)"),
    )
    server = AinternMcp(McpConfig(db=db, workspace=root, watch=False))

    async def body(c: Client) -> Any:
        asked = [("guard.py", n) for n in (no_cookie, bad_token, call)] + [("client.js", 5)]
        return [await c.call_tool("find_related", {"path": path, "line": n}) for path, n in asked]

    *checked, calling, fetching = run(server, body)
    # JavaScript's top-level constants (`export const` too) are the definitions of what its line uses.
    fetched = {
        (r["symbol"], r["start_line"]) for r in fetching.structured_content["related"] if r["reason"] == "definition"
    }
    assert fetched == {("MAX_RETRIES", 1), ("BASE_URL", 2)}, text(fetching)
    for found, constant in zip(checked, ("REASON_NO_COOKIE", "REASON_BAD_TOKEN"), strict=True):
        assert not found.is_error, text(found)
        related = found.structured_content["related"]
        definitions = {r["symbol"]: r for r in related if r["reason"] == "definition"}
        # What the line uses: the class it raises (its own lines, not the constants above it in its chunk) and
        # the constant it passes (a top-level assignment); never `check`, the method the line is in (another of
        # its chunks), nor `process` (a chunk that opens with check's last lines).
        assert set(definitions) == {"Rejected", constant}, text(found)
        assert (definitions["Rejected"]["start_line"], definitions["Rejected"]["end_line"]) == (
            at("class Rejected"),
            at("self.reason = reason"),
        ), text(found)
        assigned = definitions[constant]
        assert assigned["code"].startswith(f"{constant} = "), text(found)
        assert (assigned["start_line"], assigned["end_line"]) == (
            (3, 3) if constant == "REASON_NO_COOKIE" else (4, 6)
        ), text(found)
        # No other chunk of check is shown as its usage: a caller is.
        assert {r["symbol"] for r in related if r["reason"] == "usage"} <= {"process"}, text(found)
    # The caller's excerpt (longer than an excerpt shows) holds the line it is cited for.
    first = checked[0].structured_content["related"]
    caller = next(r for r in first if r["reason"] == "usage" and r["symbol"] == "process")
    assert caller["line"] == call and "self.check(request)" in caller["code"], caller
    # The method the caller calls is one definition, shown from its first line, not once per chunk of it.
    called = [r for r in calling.structured_content["related"] if r["reason"] == "definition"]
    assert [(r["symbol"], r["start_line"]) for r in called] == [("check", at("def check"))], text(calling)
