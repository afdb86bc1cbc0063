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
