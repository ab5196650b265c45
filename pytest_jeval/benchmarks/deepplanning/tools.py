"""The shopping tools an agent gets in a DeepPlanning case: the fifteen functions of upstream's published
schema (``shopping_tool_schema.json``), by name and parameters, over the episode's :class:`~.shop.Shop`.

A refused call (an unknown product, too little stock, a coupon the user lacks) is a tool error whose
message is upstream's. Each returns what upstream's tool returns, as indented JSON.
"""

from __future__ import annotations

from typing import Any, Literal

from pytest_jeval.agents import HarnessError, Tool, ToolContext, ToolError, tool
from pytest_jeval.benchmarks.deepplanning.shop import VALID_COUPONS, Shop, ShopError, as_json, nested

RangeKey = Literal["price", "stock_quantity", "sales_volume.monthly", "sales_volume.total", "rating.average_score",
                   "rating.total_reviews"]
SortKey = Literal["price", "sales_volume.monthly", "sales_volume.total", "rating.average_score", "stock_quantity",
                  "name"]


def _shop(ctx: ToolContext) -> Shop:
    if not isinstance(ctx.state, Shop):
        raise HarnessError("the case's shop is not open")
    return ctx.state


def _run(ctx: ToolContext, action: Any) -> str:
    try:
        return as_json(action(_shop(ctx)))
    except ShopError as exc:
        raise ToolError(str(exc)) from None


@tool
def search_products(query: str, ctx: ToolContext, limit: int = 20) -> str:
    """Search the catalogue with a natural-language query (BM25 over brand, colour, size, name and other
    attributes); returns the ids of the products that match well enough, best first.

    Args:
        query: What to look for, e.g. 'Nike running shoes'.
        limit: At most this many ids (default 20).
    """
    return _run(ctx, lambda s: {"product_ids": s.search(query, limit)})


def _attribute_filter(field: str, wanted: list[str], product_ids: list[str] | None, ctx: ToolContext) -> str:
    values = {w.lower() for w in wanted}
    return _run(ctx, lambda s: {"filtered_products_ids": [p.get("product_id") for p in s.space(product_ids)
                                                          if str(p.get(field, "")).lower() in values]})


@tool
def filter_by_brand(brand_names: list[str], ctx: ToolContext, product_ids: list[str] | None = None) -> str:
    """Keep the products of any of the brands (case-insensitive); from the given ids, else the whole catalogue.

    Args:
        brand_names: Brand names, e.g. ["Nike", "ZARA"].
        product_ids: Product ids to filter (default: every product).
    """
    return _attribute_filter("brand", brand_names, product_ids, ctx)


@tool
def filter_by_color(colors: list[str], ctx: ToolContext, product_ids: list[str] | None = None) -> str:
    """Keep the products of any of the colours (case-insensitive); from the given ids, else the whole catalogue.

    Args:
        colors: Colour names, e.g. ["Black", "Blue"].
        product_ids: Product ids to filter (default: every product).
    """
    return _attribute_filter("color", colors, product_ids, ctx)


@tool
def filter_by_size(sizes: list[str], ctx: ToolContext, product_ids: list[str] | None = None) -> str:
    """Keep the products of any of the sizes (case-insensitive, e.g. 'M', '42', '140cm'); from the given ids,
    else the whole catalogue.

    Args:
        sizes: Sizes, e.g. ["S", "M"].
        product_ids: Product ids to filter (default: every product).
    """
    return _attribute_filter("size", sizes, product_ids, ctx)


@tool
def filter_by_applicable_coupons(coupon_names: list[str], ctx: ToolContext,
                                 product_ids: list[str] | None = None) -> str:
    """Keep the products to which all the given coupons apply; from the given ids, else the whole catalogue.

    Args:
        coupon_names: Coupon names, e.g. ["Cross-store: ¥30 off every ¥300"].
        product_ids: Product ids to filter (default: every product).
    """
    def action(s: Shop) -> dict[str, Any]:
        if not all(c in VALID_COUPONS for c in coupon_names):
            raise ShopError(f"Invalid coupon names: {coupon_names}. Valid coupons are: {list(VALID_COUPONS)}")
        if not coupon_names:
            return {"filtered_products_ids": []}
        wanted = set(coupon_names)
        return {"filtered_products_ids": [p.get("product_id") for p in s.space(product_ids)
                                          if wanted <= set(p.get("applicable_coupons") or [])]}

    return _run(ctx, action)


@tool
def filter_by_range(condition_key: RangeKey, operator: Literal[">", ">=", "<", "<=", "=="], value: float,
                    ctx: ToolContext, product_ids: list[str] | None = None) -> str:
    """Keep the products whose numeric attribute compares to a value as asked; from the given ids, else the
    whole catalogue.

    Args:
        condition_key: The attribute, e.g. 'price' or 'rating.average_score'.
        operator: The comparison.
        value: The number to compare with.
        product_ids: Product ids to filter (default: every product).
    """
    compare = {">": float.__gt__, ">=": float.__ge__, "<": float.__lt__, "<=": float.__le__, "==": float.__eq__}

    def action(s: Shop) -> dict[str, Any]:
        kept = []
        for p in s.space(product_ids):
            found = nested(p, condition_key)
            if found is None:
                raise ShopError("condition_key cannot be found in product data, please check again.")
            try:
                if compare[operator](float(found), float(value)):
                    kept.append(p.get("product_id"))
            except (TypeError, ValueError):
                continue
        return {"filtered_products_ids": kept}

    return _run(ctx, action)


@tool
def sort_products(sort_by: SortKey, ctx: ToolContext, order: Literal["asc", "desc"] = "desc",
                  product_ids: list[str] | None = None) -> str:
    """Sort products by an attribute; the given ids (unknown ones left out), else the whole catalogue.

    Args:
        sort_by: The attribute to sort by.
        order: 'asc' or 'desc' (default).
        product_ids: Product ids to sort (default: every product).
    """
    def action(s: Shop) -> dict[str, Any]:
        space = s.space(product_ids, strict=False)
        if not space:
            return {"sorted_product_ids": []}
        if nested(space[0], sort_by) is None:
            raise ShopError(f"Sort key '{sort_by}' cannot be found in product data or is null. Please check again.")

        def key(p: dict[str, Any]) -> Any:
            found = nested(p, sort_by)
            if isinstance(found, str):
                return found.lower()
            if isinstance(found, (int, float)):
                return found
            return float("-inf") if order == "desc" else float("inf")

        try:
            ordered = sorted(space, key=key, reverse=order == "desc")
        except TypeError as exc:
            raise ShopError(f"An error occurred during sorting on key '{sort_by}': {exc}") from None
        return {"sorted_product_ids": [p["product_id"] for p in ordered]}

    return _run(ctx, action)


@tool(parallel_safe=True)
def get_product_details(product_ids: list[str], ctx: ToolContext) -> str:
    """Everything known about the given products (unknown ids are left out).

    Args:
        product_ids: The product ids.
    """
    return _run(ctx, lambda s: {"products": [s.by_id[p] for p in product_ids if p in s.by_id]})


@tool(parallel_safe=True)
def calculate_transport_time(product_id: str, destination_address: str, ctx: ToolContext,
                             provider: str | None = None) -> str:
    """The estimated delivery time in days of a product to a province, from its shipping origin and carrier.

    Args:
        product_id: The product.
        destination_address: The destination province in pinyin, e.g. 'guangdong'.
        provider: Accepted as in upstream's schema; upstream's tool uses the product's own carrier, and so does this.
    """
    return _run(ctx, lambda s: s.transport_days(product_id, destination_address))


@tool(parallel_safe=True)
def get_user_info(ctx: ToolContext, user_id: str | None = None) -> str:
    """The user's profile: address, measurements, coupons held, VIP status.

    Args:
        user_id: A user id (default: the current user).
    """
    def action(s: Shop) -> Any:
        if user_id:
            if s.user.get("user_id") == user_id:
                return s.user
            raise ShopError(f"User with user_id '{user_id}' not found")
        return s.user

    return _run(ctx, action)


@tool
def add_product_to_cart(product_id: str, ctx: ToolContext, quantity: int = 1) -> str:
    """Add a product to the cart (more of it if it is there), within its stock; returns the cart.

    Args:
        product_id: The product.
        quantity: How many (default 1).
    """
    return _run(ctx, lambda s: s.add_product(product_id, quantity))


@tool
def delete_product_from_cart(product_id: str, ctx: ToolContext, quantity: int = 1) -> str:
    """Take a product out of the cart (all of it when removing as many as it holds); returns the cart.

    Args:
        product_id: The product.
        quantity: How many (default 1).
    """
    return _run(ctx, lambda s: s.remove_product(product_id, quantity))


@tool(parallel_safe=True)
def get_cart_info(ctx: ToolContext) -> str:
    """The cart: its items (product, name, quantity, price), the coupons used, and its summary."""
    return _run(ctx, lambda s: s.cart)


@tool
def add_coupon_to_cart(coupon_name: str, ctx: ToolContext, quantity: int = 1) -> str:
    """Use a coupon the user holds (more of it if used already), if the cart's total covers the thresholds of
    every coupon used; returns the cart with its discounted total.

    Args:
        coupon_name: The coupon, e.g. 'Same-brand: ¥25 off every ¥200'.
        quantity: How many (default 1).
    """
    return _run(ctx, lambda s: s.add_coupon(coupon_name, quantity))


@tool
def delete_coupon_from_cart(coupon_name: str, ctx: ToolContext, quantity: int = 1) -> str:
    """Stop using a coupon (or fewer of it); returns the cart.

    Args:
        coupon_name: The coupon.
        quantity: How many (default 1).
    """
    return _run(ctx, lambda s: s.remove_coupon(coupon_name, quantity))


TOOLS: tuple[Tool, ...] = (
    search_products, filter_by_brand, filter_by_color, filter_by_size, filter_by_applicable_coupons,
    filter_by_range, sort_products, get_product_details, calculate_transport_time, get_user_info,
    add_product_to_cart, delete_product_from_cart, get_cart_info, add_coupon_to_cart, delete_coupon_from_cart,
)
"""The fifteen tools, in the order of upstream's schema."""
