"""The retail agent's tools: look users, orders and products up, and change orders within the policy.

Every tool reads or changes ctx.state, the episode's own copy of the database
(:func:`~pytest_jeval.benchmarks.retail.database.fresh_db`). A request the policy
does not allow raises :class:`ToolError` and leaves the database as it was: each
write tool checks everything first and changes nothing until all checks passed.
"""

from __future__ import annotations

import ast
import copy
import operator
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pytest_jeval.agents.tool import HarnessError, Tool, ToolContext, ToolError, tool
from pytest_jeval.benchmarks.retail.database import TABLES, Database
from pytest_jeval.core.sample import Sample

CANCEL_REASONS = ("no longer needed", "ordered by mistake")
CancelReason = Literal["no longer needed", "ordered by mistake"]


def _db(ctx: ToolContext) -> Database:
    state = ctx.state
    if not isinstance(state, dict) or any(not isinstance(state.get(t), dict) for t in TABLES):
        raise HarnessError("the retail tools need the episode's database as ctx.state (AgentSpec.environment)")
    return state


def _money(value: float) -> float:
    return round(value + 0.0, 2)


def _user(db: Database, user_id: str) -> dict[str, Any]:
    user = db["users"].get(user_id)
    if user is None:
        raise ToolError(f"User not found: {user_id!r}")
    return user  # type: ignore[no-any-return]


def _order(db: Database, order_id: str) -> dict[str, Any]:
    order = db["orders"].get(order_id)
    if order is None and not order_id.startswith("#"):
        order = db["orders"].get("#" + order_id)
    if order is None:
        raise ToolError(f"Order not found: {order_id!r} (order ids look like '#W0000000')")
    return order  # type: ignore[no-any-return]


def _payment_method(db: Database, order: Mapping[str, Any], payment_method_id: str) -> dict[str, Any]:
    methods = db["users"][order["user_id"]]["payment_methods"]
    if payment_method_id not in methods:
        raise ToolError(f"Payment method {payment_method_id!r} does not belong to the order's user")
    return methods[payment_method_id]  # type: ignore[no-any-return]


def _require_status(order: Mapping[str, Any], status: str, action: str) -> None:
    if order["status"] != status:
        raise ToolError(f"Order {order['order_id']} is {order['status']!r}: only {status} orders can be {action}")


def _positions(order: Mapping[str, Any], item_ids: Sequence[str]) -> list[int]:
    """The index in order["items"] of each item id (an id listed twice needs two such items)."""
    if not item_ids:
        raise ToolError("item_ids is empty: name at least one item of the order")
    taken: set[int] = set()
    out: list[int] = []
    for item_id in item_ids:
        index = next((i for i, it in enumerate(order["items"]) if it["item_id"] == item_id and i not in taken), None)
        if index is None:
            raise ToolError(f"Item {item_id!r} is not in order {order['order_id']} (or is named too often)")
        taken.add(index)
        out.append(index)
    return out


def _new_variants(db: Database, order: Mapping[str, Any], positions: Sequence[int],
                  new_item_ids: Sequence[str]) -> list[dict[str, Any]]:
    """The product variant each old item becomes: same product, another item, available."""
    if len(new_item_ids) != len(positions):
        raise ToolError("item_ids and new_item_ids must have the same length (one new item per old item)")
    out = []
    for index, new_id in zip(positions, new_item_ids):
        old = order["items"][index]
        variant = db["products"][old["product_id"]]["variants"].get(new_id)
        if variant is None:
            raise ToolError(f"New item {new_id!r} is not a variant of {old['name']} (product {old['product_id']}); "
                            "items can only change to another variant of the same product")
        if new_id == old["item_id"]:
            raise ToolError(f"New item {new_id!r} is the same as the old one")
        if not variant["available"]:
            raise ToolError(f"New item {new_id!r} is not available")
        out.append(variant)
    return out


def _charge(db: Database, order: Mapping[str, Any], payment_method_id: str, difference: float) -> dict[str, Any]:
    """Check that the payment method can cover difference (a gift card needs the balance)."""
    method = _payment_method(db, order, payment_method_id)
    if method["source"] == "gift_card" and difference > method["balance"]:
        raise ToolError(f"Gift card {payment_method_id} has a balance of {method['balance']}, "
                        f"less than the price difference of {difference}")
    return method


@tool(parallel_safe=True, blocking=False)
def find_user_id_by_email(email: str, ctx: ToolContext) -> str:
    """Find a user's id by their email address.

    Args:
        email: The email address, e.g. jane.doe1234@example.com.
    """
    wanted = email.strip().lower()
    for user_id, user in _db(ctx)["users"].items():
        if user["email"].lower() == wanted:
            return str(user_id)
    raise ToolError("User not found")


@tool(parallel_safe=True, blocking=False)
def find_user_id_by_name_zip(first_name: str, last_name: str, zip: str, ctx: ToolContext) -> str:
    """Find a user's id by first name, last name and zip code.

    Args:
        first_name: The first name, e.g. Jane.
        last_name: The last name, e.g. Doe.
        zip: The zip code of the user's address, e.g. 78701.
    """
    for user_id, user in _db(ctx)["users"].items():
        name = user["name"]
        if (name["first_name"].lower() == first_name.strip().lower()
                and name["last_name"].lower() == last_name.strip().lower()
                and user["address"]["zip"] == zip.strip()):
            return str(user_id)
    raise ToolError("User not found")


@tool(parallel_safe=True, blocking=False)
def get_user_details(user_id: str, ctx: ToolContext) -> dict[str, Any]:
    """Get a user's profile: name, email, address, payment methods and order ids.

    Args:
        user_id: The user id, e.g. jane_doe_1234.
    """
    return copy.deepcopy(_user(_db(ctx), user_id))


@tool(parallel_safe=True, blocking=False)
def get_order_details(order_id: str, ctx: ToolContext) -> dict[str, Any]:
    """Get an order: its status, items, address, fulfillments and payments.

    Args:
        order_id: The order id, with the leading '#', e.g. #W0000000.
    """
    return copy.deepcopy(_order(_db(ctx), order_id))


@tool(parallel_safe=True, blocking=False)
def get_product_details(product_id: str, ctx: ToolContext) -> dict[str, Any]:
    """Get a product and all its variants (item ids, options, price, availability).

    Args:
        product_id: The product id (not an item id), e.g. 6086499569.
    """
    product = _db(ctx)["products"].get(product_id)
    if product is None:
        raise ToolError(f"Product not found: {product_id!r} (list_all_product_types gives the product ids)")
    return copy.deepcopy(product)


@tool(parallel_safe=True, blocking=False)
def list_all_product_types(ctx: ToolContext) -> dict[str, str]:
    """List every product type the store sells: product name to product id."""
    products = _db(ctx)["products"]
    return {p["name"]: pid for pid, p in sorted(products.items(), key=lambda kv: kv[1]["name"])}


_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
}


def _evaluate(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        value = _evaluate(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    raise ToolError("Only numbers, + - * / and parentheses are allowed")


@tool(parallel_safe=True, blocking=False)
def calculate(expression: str, ctx: ToolContext) -> str:
    """Calculate an arithmetic expression (numbers, + - * / and parentheses); the result is rounded to 2 decimals.

    Args:
        expression: The expression, e.g. (24.5 + 13.25) * 2.
    """
    if len(expression) > 500:
        raise ToolError("The expression is too long (500 characters at most)")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise ToolError(f"Not an arithmetic expression: {exc.msg}") from None
    try:
        value = _evaluate(tree)
    except ZeroDivisionError:
        raise ToolError("Division by zero") from None
    return str(_money(value))


@tool(blocking=False)
def cancel_pending_order(order_id: str, reason: CancelReason, ctx: ToolContext) -> dict[str, Any]:
    """Cancel a pending order; the payment is refunded to the original payment method (a gift card at once).

    Args:
        order_id: The order id, e.g. #W0000000.
        reason: Why the user cancels: 'no longer needed' or 'ordered by mistake'.
    """
    db = _db(ctx)
    order = _order(db, order_id)
    _require_status(order, "pending", "cancelled")
    if reason not in CANCEL_REASONS:
        raise ToolError(f"Reason must be one of {', '.join(repr(r) for r in CANCEL_REASONS)}")
    refunds = [{"transaction_type": "refund", "amount": p["amount"], "payment_method_id": p["payment_method_id"]}
               for p in order["payment_history"] if p["transaction_type"] == "payment"]
    methods = db["users"][order["user_id"]]["payment_methods"]
    for refund in refunds:
        method = methods.get(refund["payment_method_id"])
        if method is not None and method["source"] == "gift_card":
            method["balance"] = _money(method["balance"] + refund["amount"])
    order["payment_history"].extend(refunds)
    order["status"] = "cancelled"
    order["cancel_reason"] = reason
    return copy.deepcopy(order)


def _address(address1: str, address2: str, city: str, state: str, country: str, zip: str) -> dict[str, str]:
    return {"address1": address1, "address2": address2, "city": city, "country": country, "state": state, "zip": zip}


@tool(blocking=False)
def modify_pending_order_address(order_id: str, address1: str, address2: str, city: str, state: str,
                                 country: str, zip: str, ctx: ToolContext) -> dict[str, Any]:
    """Change the shipping address of a pending order.

    Args:
        order_id: The order id, e.g. #W0000000.
        address1: The first address line, e.g. 123 Main Street.
        address2: The second address line, e.g. Apt 4 ('' when none).
        city: The city, e.g. Austin.
        state: The state, e.g. TX.
        country: The country, e.g. USA.
        zip: The zip code, e.g. 78701.
    """
    order = _order(_db(ctx), order_id)
    _require_status(order, "pending", "modified")
    order["address"] = _address(address1, address2, city, state, country, zip)
    return copy.deepcopy(order)


@tool(blocking=False)
def modify_pending_order_items(order_id: str, item_ids: list[str], new_item_ids: list[str],
                               payment_method_id: str, ctx: ToolContext) -> dict[str, Any]:
    """Change items of a pending order to other variants of the same products (once per order).

    The price difference is charged to, or refunded to, the given payment method.

    Args:
        order_id: The order id, e.g. #W0000000.
        item_ids: The item ids to change, e.g. ["1008292230"].
        new_item_ids: The new item ids, one per old item, in the same order.
        payment_method_id: The user's payment method that pays or receives the difference, e.g. gift_card_0000000.
    """
    db = _db(ctx)
    order = _order(db, order_id)
    _require_status(order, "pending", "modified")
    positions = _positions(order, item_ids)
    variants = _new_variants(db, order, positions, new_item_ids)
    difference = _money(sum(v["price"] for v in variants) - sum(order["items"][i]["price"] for i in positions))
    method = _charge(db, order, payment_method_id, difference)
    for index, variant in zip(positions, variants):
        item = order["items"][index]
        item.update(item_id=variant["item_id"], price=variant["price"], options=copy.deepcopy(variant["options"]))
    if difference != 0:
        order["payment_history"].append({"transaction_type": "payment" if difference > 0 else "refund",
                                         "amount": abs(difference), "payment_method_id": payment_method_id})
        if method["source"] == "gift_card":
            method["balance"] = _money(method["balance"] - difference)
    order["status"] = "pending (item modified)"
    return copy.deepcopy(order)


@tool(blocking=False)
def return_delivered_order_items(order_id: str, item_ids: list[str], payment_method_id: str,
                                 ctx: ToolContext) -> dict[str, Any]:
    """Request a return of items of a delivered order; the refund goes to the original payment method or a gift card.

    Args:
        order_id: The order id, e.g. #W0000000.
        item_ids: The item ids to return, e.g. ["1008292230"].
        payment_method_id: The original payment method of the order, or one of the user's gift cards.
    """
    db = _db(ctx)
    order = _order(db, order_id)
    _require_status(order, "delivered", "returned")
    _positions(order, item_ids)
    method = _payment_method(db, order, payment_method_id)
    original = order["payment_history"][0]["payment_method_id"]
    if payment_method_id != original and method["source"] != "gift_card":
        raise ToolError(f"A refund goes to the original payment method ({original}) or a gift card, "
                        f"not {payment_method_id}")
    order["status"] = "return requested"
    order["return_items"] = sorted(item_ids)
    order["return_payment_method_id"] = payment_method_id
    return copy.deepcopy(order)


@tool(blocking=False)
def exchange_delivered_order_items(order_id: str, item_ids: list[str], new_item_ids: list[str],
                                   payment_method_id: str, ctx: ToolContext) -> dict[str, Any]:
    """Request an exchange of items of a delivered order for other variants of the same products (once per order).

    Args:
        order_id: The order id, e.g. #W0000000.
        item_ids: The item ids to exchange, e.g. ["1008292230"].
        new_item_ids: The new item ids, one per old item, in the same order.
        payment_method_id: The user's payment method that pays or receives the price difference.
    """
    db = _db(ctx)
    order = _order(db, order_id)
    _require_status(order, "delivered", "exchanged")
    positions = _positions(order, item_ids)
    variants = _new_variants(db, order, positions, new_item_ids)
    difference = _money(sum(v["price"] for v in variants) - sum(order["items"][i]["price"] for i in positions))
    _charge(db, order, payment_method_id, difference)
    order["status"] = "exchange requested"
    order["exchange_items"] = sorted(item_ids)
    order["exchange_new_items"] = sorted(new_item_ids)
    order["exchange_payment_method_id"] = payment_method_id
    order["exchange_price_difference"] = difference
    return copy.deepcopy(order)


@tool(blocking=False)
def modify_user_address(user_id: str, address1: str, address2: str, city: str, state: str, country: str,
                        zip: str, ctx: ToolContext) -> dict[str, Any]:
    """Change a user's default address (the address of existing orders stays as it is).

    Args:
        user_id: The user id, e.g. jane_doe_1234.
        address1: The first address line, e.g. 123 Main Street.
        address2: The second address line, e.g. Apt 4 ('' when none).
        city: The city, e.g. Austin.
        state: The state, e.g. TX.
        country: The country, e.g. USA.
        zip: The zip code, e.g. 78701.
    """
    user = _user(_db(ctx), user_id)
    user["address"] = _address(address1, address2, city, state, country, zip)
    return copy.deepcopy(user)


@tool(parallel_safe=True, blocking=False)
def transfer_to_human_agents(summary: str, ctx: ToolContext) -> str:
    """Transfer the user to a human agent, with a summary of the issue. Only when the request is outside the policy
    and the user asks for a human, or the tools cannot solve it.

    Args:
        summary: A short summary of the user's issue.
    """
    _db(ctx)
    return "Transfer successful"


TOOLS: tuple[Tool, ...] = (
    find_user_id_by_email, find_user_id_by_name_zip, get_user_details, get_order_details, get_product_details,
    list_all_product_types, calculate, cancel_pending_order, modify_pending_order_address,
    modify_pending_order_items, return_delivered_order_items, exchange_delivered_order_items, modify_user_address,
    transfer_to_human_agents,
)
"""Every retail tool, in the order offered to the model."""

TOOLS_BY_NAME: dict[str, Tool] = {t.name: t for t in TOOLS}
WRITE_TOOLS = frozenset({
    "cancel_pending_order", "modify_pending_order_address", "modify_pending_order_items",
    "return_delivered_order_items", "exchange_delivered_order_items", "modify_user_address",
})
"""The tools that change the database (the others only read it, and are parallel-safe)."""

_REPLAY_SAMPLE = Sample(id="retail-replay", input="")


def call_tool(name: str, arguments: Mapping[str, Any], state: Database, sample: Sample | None = None) -> Any:
    """Run one retail tool directly on state (no model, no loop): how the gold actions are replayed.

    Raises :class:`ToolError` when the policy refuses the call, KeyError for an unknown tool.
    """
    found = TOOLS_BY_NAME.get(name)
    if found is None or found.fn is None:
        raise KeyError(f"no retail tool named {name!r}")
    ctx = ToolContext(sample=sample or _REPLAY_SAMPLE, workspace=Path("."), state=state)
    return found.fn(**dict(arguments), **{found.context_param or "ctx": ctx})
