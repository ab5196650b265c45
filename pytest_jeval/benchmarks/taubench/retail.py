"""τ²-bench's retail domain tools, written from upstream's documented semantics (``domains/retail/tools.py``).

Each tool works on the episode's database (plain JSON data, :mod:`pytest_jeval.benchmarks.taubench.db`) and
behaves as upstream's does: the same checks in the same order, the same error texts (sent to the agent as
``Error: <text>``), the same changes to the database, the same results (JSON of the changed record).
Upstream's quirks are kept, since the reward compares databases: ``modify_pending_order_items`` prices every
changed item at the last new item's price; ``exchange_delivered_order_items`` and
``return_delivered_order_items`` only record the request.
"""

from __future__ import annotations

import json
from typing import Any

from pytest_jeval.agents.tool import Tool, ToolContext, ToolError, tool
from pytest_jeval.benchmarks.taubench.common import calculate, encoded, env_of, mutating, transfer_to_human_agents
from pytest_jeval.benchmarks.taubench.db import Database

DOMAIN = "retail"
CANCEL_REASONS = ("no longer needed", "ordered by mistake")


def _db(ctx: ToolContext) -> Database:
    return env_of(ctx, DOMAIN)


def _order(db: Database, order_id: str) -> dict[str, Any]:
    if order_id not in db["orders"]:
        raise ToolError("Order not found")
    return db["orders"][order_id]  # type: ignore[no-any-return]


def _user(db: Database, user_id: str) -> dict[str, Any]:
    if user_id not in db["users"]:
        raise ToolError("User not found")
    return db["users"][user_id]  # type: ignore[no-any-return]


def _product(db: Database, product_id: str) -> dict[str, Any]:
    if product_id not in db["products"]:
        raise ToolError("Product not found")
    return db["products"][product_id]  # type: ignore[no-any-return]


def _variant(db: Database, product_id: str, item_id: str) -> dict[str, Any]:
    product = _product(db, product_id)
    if item_id not in product["variants"]:
        raise ToolError("Variant not found")
    return product["variants"][item_id]  # type: ignore[no-any-return]


def _payment_method(db: Database, user_id: str, payment_method_id: str) -> dict[str, Any]:
    user = _user(db, user_id)
    if payment_method_id not in user["payment_methods"]:
        raise ToolError("Payment method not found")
    return user["payment_methods"][payment_method_id]  # type: ignore[no-any-return]


def _is_gift_card(method: dict[str, Any]) -> bool:
    return method.get("source") == "gift_card"


def _check_counts(order: dict[str, Any], item_ids: list[str], error: str) -> None:
    """Every id of ``item_ids`` (repeats allowed) names that many items of the order."""
    present = [item["item_id"] for item in order["items"]]
    for item_id in item_ids:
        if item_ids.count(item_id) > present.count(item_id):
            raise ToolError(error.format(item_id=item_id))


def _item(order: dict[str, Any], item_id: str) -> dict[str, Any]:
    found: dict[str, Any] | None = next((item for item in order["items"] if item["item_id"] == item_id), None)
    if found is None:
        raise ToolError(f"Item {item_id} not found")
    return found


def _address(address1: str, address2: str, city: str, state: str, country: str, zip: str) -> dict[str, str]:
    return {"address1": address1, "address2": address2, "city": city, "country": country, "state": state,
            "zip": zip}


def cancel_pending_order(order_id: str, reason: str, ctx: ToolContext) -> str:
    """Cancel a pending order. A processed or delivered order cannot be cancelled. Explain the cancellation
    and get the user's explicit confirmation (yes/no) first. The order becomes 'cancelled' and every payment
    is refunded: at once to a gift card, in 5-7 business days otherwise. Returns the order after it.

    Args:
        order_id: The order id, such as '#W0000000' (with the '#').
        reason: Why the user cancels: either 'no longer needed' or 'ordered by mistake'.
    """
    db = _db(ctx)
    order = _order(db, order_id)
    if order["status"] != "pending":
        raise ToolError("Non-pending order cannot be cancelled")
    if reason not in CANCEL_REASONS:
        raise ToolError("Invalid reason")
    refunds = []
    for payment in order["payment_history"]:
        refunds.append({"transaction_type": "refund", "amount": payment["amount"],
                        "payment_method_id": payment["payment_method_id"]})
        method = _payment_method(db, order["user_id"], payment["payment_method_id"])
        if _is_gift_card(method):
            method["balance"] = round(method["balance"] + payment["amount"], 2)
    order["status"] = "cancelled"
    order["cancel_reason"] = reason
    order["payment_history"].extend(refunds)
    return encoded(order)


def exchange_delivered_order_items(order_id: str, item_ids: list[str], new_item_ids: list[str],
                                   payment_method_id: str, ctx: ToolContext) -> str:
    """Exchange items of a delivered order for other items of the same products. Return or exchange of a
    delivered order can be done only once. Explain the exchange and get the user's explicit confirmation
    (yes/no) first. Returns the order after it.

    Args:
        order_id: The order id, such as '#W0000000' (with the '#').
        item_ids: The item ids to exchange, each such as '1008292230'; an id may repeat.
        new_item_ids: The item ids to exchange for, one per item of item_ids in the same position, each of
            the same product; an id may repeat.
        payment_method_id: The payment method that pays or receives the price difference, such as
            'gift_card_0000000' or 'credit_card_0000000' (from the user's or the order's details).
    """
    db = _db(ctx)
    order = _order(db, order_id)
    if order["status"] != "delivered":
        raise ToolError("Non-delivered order cannot be exchanged")
    _check_counts(order, item_ids, "Number of {item_id} not found.")
    if len(item_ids) != len(new_item_ids):
        raise ToolError("The number of items to be exchanged should match.")
    difference: float = 0
    for item_id, new_item_id in zip(item_ids, new_item_ids):
        item = _item(order, item_id)
        variant = _variant(db, item["product_id"], new_item_id)
        if not variant["available"]:
            raise ToolError(f"New item {new_item_id} not found or available")
        difference += variant["price"] - item["price"]
    difference = round(difference, 2)
    method = _payment_method(db, order["user_id"], payment_method_id)
    if _is_gift_card(method) and method["balance"] < difference:
        raise ToolError("Insufficient gift card balance to pay for the price difference")
    order["status"] = "exchange requested"
    order["exchange_items"] = sorted(item_ids)
    order["exchange_new_items"] = sorted(new_item_ids)
    order["exchange_payment_method_id"] = payment_method_id
    order["exchange_price_difference"] = difference
    return encoded(order)


def find_user_id_by_name_zip(first_name: str, last_name: str, zip: str, ctx: ToolContext) -> str:
    """Find a user's id by first name, last name and zip code. Look users up by email first; use this only
    when the email is unknown or finds no one.

    Args:
        first_name: The user's first name, such as 'John'.
        last_name: The user's last name, such as 'Doe'.
        zip: The user's zip code, such as '12345'.
    """
    for user_id, user in _db(ctx)["users"].items():
        if (user["name"]["first_name"].lower() == first_name.lower()
                and user["name"]["last_name"].lower() == last_name.lower() and user["address"]["zip"] == zip):
            return str(user_id)
    raise ToolError("User not found")


def find_user_id_by_email(email: str, ctx: ToolContext) -> str:
    """Find a user's id by email address.

    Args:
        email: The email address, such as 'something@example.com'.
    """
    for user_id, user in _db(ctx)["users"].items():
        if user["email"].lower() == email.lower():
            return str(user_id)
    raise ToolError("User not found")


def get_order_details(order_id: str, ctx: ToolContext) -> str:
    """The status and details of an order.

    Args:
        order_id: The order id, such as '#W0000000' (with the '#').
    """
    return encoded(_order(_db(ctx), order_id))


def get_product_details(product_id: str, ctx: ToolContext) -> str:
    """The inventory of a product: its variants (items), their options, availability and prices.

    Args:
        product_id: The product id, such as '6086499569' (a product id, not an item id).
    """
    return encoded(_product(_db(ctx), product_id))


def get_item_details(item_id: str, ctx: ToolContext) -> str:
    """The inventory details of one item (a variant of a product).

    Args:
        item_id: The item id, such as '6086499569' (an item id, not a product id).
    """
    for product in _db(ctx)["products"].values():
        if item_id in product["variants"]:
            return encoded(product["variants"][item_id])
    raise ToolError("Item not found")


def get_user_details(user_id: str, ctx: ToolContext) -> str:
    """A user's details, with their orders.

    Args:
        user_id: The user id, such as 'sara_doe_496'.
    """
    return encoded(_user(_db(ctx), user_id))


def list_all_product_types(ctx: ToolContext) -> str:
    """The name and product id of every product type (50 in the store), as a JSON object from product name
    to product id, sorted by name. Each product type has items with their own item ids and options."""
    products = {p["name"]: p["product_id"] for p in _db(ctx)["products"].values()}
    return json.dumps(products, sort_keys=True)


def modify_pending_order_address(order_id: str, address1: str, address2: str, city: str, state: str,
                                 country: str, zip: str, ctx: ToolContext) -> str:
    """Change the shipping address of a pending order. Explain the change and get the user's explicit
    confirmation (yes/no) first. Returns the order after it.

    Args:
        order_id: The order id, such as '#W0000000' (with the '#').
        address1: The first address line, such as '123 Main St'.
        address2: The second address line, such as 'Apt 1' or ''.
        city: The city, such as 'San Francisco'.
        state: The state, such as 'CA'.
        country: The country, such as 'USA'.
        zip: The zip code, such as '12345'.
    """
    order = _order(_db(ctx), order_id)
    if "pending" not in order["status"]:
        raise ToolError("Non-pending order cannot be modified")
    order["address"] = _address(address1, address2, city, state, country, zip)
    return encoded(order)


def modify_pending_order_items(order_id: str, item_ids: list[str], new_item_ids: list[str],
                               payment_method_id: str, ctx: ToolContext) -> str:
    """Change items of a pending order to other items of the same products; possible only once per pending
    order. Explain the change and get the user's explicit confirmation (yes/no) first. Returns the order.

    Args:
        order_id: The order id, such as '#W0000000' (with the '#').
        item_ids: The item ids to change, each such as '1008292230'; an id may repeat.
        new_item_ids: The item ids to change to, one per item of item_ids in the same position, each of the
            same product; an id may repeat.
        payment_method_id: The payment method that pays or receives the price difference, such as
            'gift_card_0000000' or 'credit_card_0000000' (from the user's or the order's details).
    """
    db = _db(ctx)
    order = _order(db, order_id)
    if order["status"] != "pending":
        raise ToolError("Non-pending order cannot be modified")
    _check_counts(order, item_ids, "{item_id} not found")
    if len(item_ids) != len(new_item_ids):
        raise ToolError("The number of items to be exchanged should match")
    difference: float = 0
    variant: dict[str, Any] | None = None
    for item_id, new_item_id in zip(item_ids, new_item_ids):
        if item_id == new_item_id:
            raise ToolError("The new item id should be different from the old item id")
        item = _item(order, item_id)
        variant = _variant(db, item["product_id"], new_item_id)
        if not variant["available"]:
            raise ToolError(f"New item {new_item_id} not found or available")
        difference += variant["price"] - item["price"]
    method = _payment_method(db, order["user_id"], payment_method_id)
    if _is_gift_card(method) and method["balance"] < difference:
        raise ToolError("Insufficient gift card balance to pay for the new item")
    order["payment_history"].append({"transaction_type": "payment" if difference > 0 else "refund",
                                     "amount": float(abs(difference)), "payment_method_id": payment_method_id})
    if _is_gift_card(method):
        method["balance"] = round(method["balance"] - difference, 2)
    for item_id, new_item_id in zip(item_ids, new_item_ids):
        item = _item(order, item_id)
        assert variant is not None
        # upstream's rule: every changed item takes the price and options of the LAST new item
        item["item_id"] = new_item_id
        item["price"] = variant["price"]
        item["options"] = variant["options"]
    order["status"] = "pending (item modified)"
    return encoded(order)


def modify_pending_order_payment(order_id: str, payment_method_id: str, ctx: ToolContext) -> str:
    """Change the payment method of a pending order. Explain the change and get the user's explicit
    confirmation (yes/no) first. Returns the order after it.

    Args:
        order_id: The order id, such as '#W0000000' (with the '#').
        payment_method_id: The new payment method, such as 'gift_card_0000000' or 'credit_card_0000000'
            (from the user's or the order's details).
    """
    db = _db(ctx)
    order = _order(db, order_id)
    if "pending" not in order["status"]:
        raise ToolError("Non-pending order cannot be modified")
    method = _payment_method(db, order["user_id"], payment_method_id)
    history = order["payment_history"]
    if len(history) != 1 or history[0]["transaction_type"] != "payment":
        raise ToolError("There should be exactly one payment for a pending order")
    if history[0]["payment_method_id"] == payment_method_id:
        raise ToolError("The new payment method should be different from the current one")
    amount = history[0]["amount"]
    if _is_gift_card(method) and method["balance"] < amount:
        raise ToolError("Insufficient gift card balance to pay for the order")
    history.extend([{"transaction_type": "payment", "amount": amount, "payment_method_id": payment_method_id},
                    {"transaction_type": "refund", "amount": amount,
                     "payment_method_id": history[0]["payment_method_id"]}])
    if _is_gift_card(method):
        method["balance"] = round(method["balance"] - amount, 2)
    old = _payment_method(db, order["user_id"], history[0]["payment_method_id"])
    if _is_gift_card(old):
        old["balance"] = round(old["balance"] + amount, 2)
    return encoded(order)


def modify_user_address(user_id: str, address1: str, address2: str, city: str, state: str, country: str,
                        zip: str, ctx: ToolContext) -> str:
    """Change a user's default address. Explain the change and get the user's explicit confirmation (yes/no)
    first. Returns the user after it.

    Args:
        user_id: The user id, such as 'sara_doe_496'.
        address1: The first address line, such as '123 Main St'.
        address2: The second address line, such as 'Apt 1' or ''.
        city: The city, such as 'San Francisco'.
        state: The state, such as 'CA'.
        country: The country, such as 'USA'.
        zip: The zip code, such as '12345'.
    """
    user = _user(_db(ctx), user_id)
    user["address"] = _address(address1, address2, city, state, country, zip)
    return encoded(user)


def return_delivered_order_items(order_id: str, item_ids: list[str], payment_method_id: str,
                                 ctx: ToolContext) -> str:
    """Return items of a delivered order; the order becomes 'return requested' and the user gets an email on
    how and where to return them. Explain the return and get the user's explicit confirmation (yes/no)
    first. Returns the order after it.

    Args:
        order_id: The order id, such as '#W0000000' (with the '#').
        item_ids: The item ids to return, each such as '1008292230'; an id may repeat.
        payment_method_id: The payment method that receives the refund: the order's original payment
            method or a gift card, such as 'gift_card_0000000' or 'credit_card_0000000'.
    """
    db = _db(ctx)
    order = _order(db, order_id)
    if order["status"] != "delivered":
        raise ToolError("Non-delivered order cannot be returned")
    method = _payment_method(db, order["user_id"], payment_method_id)
    if not _is_gift_card(method) and payment_method_id != order["payment_history"][0]["payment_method_id"]:
        raise ToolError("Payment method should be the original payment method")
    _check_counts(order, item_ids, "Some item not found")
    order["status"] = "return requested"
    order["return_items"] = sorted(item_ids)
    order["return_payment_method_id"] = payment_method_id
    return encoded(order)


_READ = (find_user_id_by_name_zip, find_user_id_by_email, get_order_details, get_product_details,
         get_item_details, get_user_details, list_all_product_types)
_WRITE = (cancel_pending_order, exchange_delivered_order_items, modify_pending_order_address,
          modify_pending_order_items, modify_pending_order_payment, modify_user_address,
          return_delivered_order_items)


def _tools() -> tuple[Tool, ...]:
    reads = {f.__name__: tool(parallel_safe=True, blocking=False)(f) for f in _READ}
    writes = {f.__name__: tool(blocking=False)(f) for f in _WRITE}
    calc = tool(name="calculate", parallel_safe=True, blocking=False)(calculate)
    transfer = tool(name="transfer_to_human_agents", parallel_safe=True, blocking=False)(transfer_to_human_agents)
    every = {"calculate": calc, **reads, **writes, "transfer_to_human_agents": transfer}
    order = ("calculate", "cancel_pending_order", "exchange_delivered_order_items", "find_user_id_by_name_zip",
             "find_user_id_by_email", "get_order_details", "get_product_details", "get_item_details",
             "get_user_details", "list_all_product_types", "modify_pending_order_address",
             "modify_pending_order_items", "modify_pending_order_payment", "modify_user_address",
             "return_delivered_order_items", "transfer_to_human_agents")
    return tuple(every[name] for name in order)


TOOLS: tuple[Tool, ...] = _tools()
"""The retail tools, in upstream's order."""
TOOLS_BY_NAME: dict[str, Tool] = {t.name: t for t in TOOLS}
WRITE_TOOLS = mutating(TOOLS_BY_NAME, frozenset(f.__name__ for f in _WRITE))
"""The tools that change the database (upstream's WRITE tools)."""
