"""One DeepPlanning shopping case's world: its catalogue, its user, its cart, and the rules of upstream's tools.

The rules follow the published tools of ``Qwen-Agent/benchmark/deepplanning/shoppingplanning/tools`` (they
are re-implemented here): BM25 search with a score threshold of 2, exact (case-insensitive) attribute
filters, numeric range filters over dotted keys, sorting, delivery-time estimates between Chinese regions,
a cart whose products are checked against stock and whose coupons are checked against the ten valid
coupons, the user's holdings, VIP status and the cart's total against the sum of the coupons' thresholds.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from functools import reduce
from pathlib import Path
from typing import Any

from pytest_jeval.benchmarks._bm25 import BM25

VALID_COUPONS = (
    "Cross-store: ¥30 off every ¥300", "Cross-store: ¥60 off every ¥500", "Cross-store: ¥120 off every ¥900",
    "Cross-store: ¥200 off every ¥1,200", "Cross-store: ¥300 off every ¥1,500",
    "Same-brand: ¥25 off every ¥200", "Same-brand: ¥60 off every ¥400", "Same-brand: ¥180 off every ¥1,000",
    "Same-brand: ¥300 off every ¥1,200", "VIP: ¥200 off every ¥1,000",
)
SEARCH_FIELDS = ("brand", "color", "size", "thickness", "elasticity", "version_type", "collar_type",
                 "suitable_season", "target_demographic", "name")
SEARCH_THRESHOLD = 2.0
COUPON = re.compile(r"¥([\d,]+)\s+off\s+every\s+¥([\d,]+)")

# Delivery days between China's regions, the provinces in each, and the carriers' adjustments (upstream's table).
REGIONS: dict[str, tuple[str, ...]] = {
    "NC": ("beijing", "tianjin", "hebei", "shanxi", "inner mongolia"), "NE": ("liaoning", "jilin", "heilongjiang"),
    "EC": ("shanghai", "jiangsu", "zhejiang", "anhui", "fujian", "jiangxi", "shandong"),
    "CC": ("henan", "hubei", "hunan"), "SC": ("guangdong", "guangxi", "hainan", "hongkong", "macau", "taiwan"),
    "SW": ("sichuan", "chongqing", "guizhou", "yunnan", "tibet"),
    "NW": ("shaanxi", "gansu", "qinghai", "ningxia", "xinjiang"),
}
REGION_OF = {name: region for region, names in REGIONS.items() for name in names}
DAYS = {  # from (rows) to (columns), in the order NC NE EC CC SC SW NW
    "NC": (1, 2, 2, 2, 3, 3, 3), "NE": (2, 1, 3, 3, 4, 4, 4), "EC": (2, 3, 1, 2, 2, 3, 4),
    "CC": (2, 3, 2, 1, 2, 2, 3), "SC": (3, 4, 2, 2, 1, 3, 4), "SW": (3, 4, 3, 2, 3, 1, 3),
    "NW": (3, 4, 4, 3, 4, 3, 1),
}
REGION_ORDER = ("NC", "NE", "EC", "CC", "SC", "SW", "NW")
REMOTE = ("tibet", "xinjiang", "qinghai", "inner mongolia")
ALIASES = {
    "beijing": "bj 北京", "shanghai": "sh 上海", "tianjin": "tj 天津", "chongqing": "cq 重庆", "hebei": "ji 河北",
    "shanxi": "jin 山西", "liaoning": "liao 辽宁", "jilin": "ji_ln 吉林", "heilongjiang": "hei 黑龙江",
    "jiangsu": "su 江苏", "zhejiang": "zhe 浙江", "anhui": "wan 安徽", "fujian": "min 福建", "jiangxi": "gan 江西",
    "shandong": "lu 山东", "henan": "yu 河南", "hubei": "e 湖北", "hunan": "xiang 湖南", "guangdong": "yue gd 广东",
    "hainan": "qiong 海南", "sichuan": "chuan shu 四川", "guizhou": "qian gui_gz 贵州", "yunnan": "yun dian 云南",
    "shaanxi": "shan qin 陕西", "gansu": "gan_gs 甘肃", "qinghai": "qing 青海",
    "inner mongolia": "neimenggu meng 内蒙古",
    "guangxi": "gui 广西", "tibet": "xizang zang 西藏", "ningxia": "ning 宁夏", "xinjiang": "xin 新疆",
    "hongkong": "hk xianggang 香港", "macau": "mo aomen 澳门", "taiwan": "tw 台湾",
}
PROVINCE_OF: dict[str, str] = {}
for _name, _more in ALIASES.items():
    for _alias in [_name, *_more.split()]:
        PROVINCE_OF[_alias] = _name
CARRIER_DAYS = {"sf express": -2, "sf": -2, "jd logistics": -1, "jd": -1, "yto express": 1, "yto": 0,
                "zto express": 1, "zto": 0, "sto express": 1, "sto": 0, "yunda express": 1, "yunda": 0,
                "cainiao": 1, "china post": 2, "ems": 0, "deppon express": 0, "deppon": 0, "default": 0}


class ShopError(Exception):
    """A tool call the shop refuses; its message is what upstream's tool answers as ``error``."""


def coupon_terms(name: str) -> tuple[float, float] | None:
    """(discount, threshold) of a coupon name such as ``Cross-store: ¥30 off every ¥300``."""
    found = COUPON.search(name)
    if found is None:
        return None
    return float(found.group(1).replace(",", "")), float(found.group(2).replace(",", ""))


def province(address: str | None) -> str | None:
    """The province an address names (pinyin, abbreviation or Chinese), as upstream normalizes it."""
    if not address:
        return None
    text = address.lower().replace(" ", "").replace("province", "").replace("city", "")
    if text in PROVINCE_OF:
        return PROVINCE_OF[text]
    return next((name for alias, name in PROVINCE_OF.items() if alias in text), None)


def nested(obj: Any, dotted: str) -> Any:
    """``obj["a"]["b"]`` for ``"a.b"`` (None where a level is missing)."""
    return reduce(lambda d, key: d.get(key) if isinstance(d, dict) else None, dotted.split("."), obj)


@dataclasses.dataclass
class Case:
    """One case's files: the catalogue, the user, the initial cart, the validation (gold)."""

    directory: Path
    products: list[dict[str, Any]]
    user: dict[str, Any]
    cart: dict[str, Any]
    validation: dict[str, Any]


@dataclasses.dataclass
class Shop:
    """One episode's shop (``episode.state``): the case's catalogue and a fresh copy of its cart."""

    products: list[dict[str, Any]]
    user: dict[str, Any]
    cart: dict[str, Any]
    by_id: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    index: BM25 | None = None

    @classmethod
    def of(cls, case: Case) -> Shop:
        """A shop over the case's catalogue with its own copy of the initial cart."""
        shop = cls(products=case.products, user=case.user, cart=copy.deepcopy(case.cart))
        shop.by_id = {p["product_id"]: p for p in case.products}
        shop.cart.setdefault("items", [])
        shop.cart.setdefault("summary", {"total_items_count": 0, "total_price": 0.0})
        return shop

    # -- the catalogue -------------------------------------------------------------------------------------------
    def search(self, query: str, limit: int = 20) -> list[str]:
        """Product ids whose BM25 score for ``query`` is above the threshold, best first, at most ``limit``."""
        if self.index is None:
            self.index = BM25([" ".join(str(p.get(f, "")) for f in SEARCH_FIELDS).lower().split()
                               for p in self.products])
        if not query:
            return []
        scores = self.index.scores(query.lower().split())
        hits = sorted((i for i, s in enumerate(scores) if s > SEARCH_THRESHOLD), key=lambda i: -scores[i])
        return [self.products[i]["product_id"] for i in hits[:limit]]

    def space(self, product_ids: list[str] | None, strict: bool = True) -> list[dict[str, Any]]:
        """The products a filter looks at: the given ids (unknown ones refused when ``strict``), else all."""
        if not product_ids:
            return self.products
        missing = [pid for pid in product_ids if pid not in self.by_id]
        if missing and strict:
            raise ShopError(f"Some product_ids not found in database: {missing}")
        return [self.by_id[pid] for pid in product_ids if pid in self.by_id]

    def transport_days(self, product_id: str, destination: str) -> dict[str, Any]:
        """Upstream's delivery estimate: base days between the regions, +2 for a remote province, the product's
        carrier's adjustment, at least one day."""
        product = self.by_id.get(product_id)
        if product is None:
            raise ShopError(f"Product with ID '{product_id}' not found.")
        shipping = product.get("shipping_info") or {}
        origin = shipping.get("origin")
        carrier = str(shipping.get("provider", "default")).lower()
        if not origin:
            raise ShopError(f"Shipping origin not found for product '{product_id}'.")
        start, end = province(origin), province(destination)
        if start is None:
            raise ShopError(f"Could not determine a valid province from origin address: '{origin}'.")
        if end is None:
            raise ShopError(f"Could not determine a valid province from destination address: '{destination}'. "
                            "Please provide a valid Chinese province name.")
        days = DAYS[REGION_OF[start]][REGION_ORDER.index(REGION_OF[end])]
        if start in REMOTE or end in REMOTE:
            days += 2
        days += CARRIER_DAYS.get(carrier, 0)
        return {"product_id": product_id, "origin": origin, "destination": destination,
                "estimated_delivery_days": max(1, days)}

    # -- the cart ------------------------------------------------------------------------------------------------
    def base_total(self) -> float:
        """The cart's price before coupons."""
        return round(sum(float(i.get("price") or 0.0) * int(i.get("quantity", 0)) for i in self.cart["items"]), 2)

    def _summarize(self, with_coupons: bool) -> None:
        """Upstream's summary: the product tools write the total before coupons, the coupon tools after them."""
        count = sum(int(i.get("quantity", 0)) for i in self.cart["items"])
        total = self.base_total()
        if with_coupons:
            off = sum((coupon_terms(c.get("coupon_name", "")) or (0.0, 0.0))[0] * int(c.get("quantity", 0))
                      for c in self.cart.get("used_coupons", []))
            total = round(max(0.0, total - round(off, 2)), 2)
        self.cart["summary"] = {**self.cart.get("summary", {}), "total_items_count": count, "total_price": total}

    def add_product(self, product_id: str, quantity: int) -> dict[str, Any]:
        """Add ``quantity`` of a product (within its stock, counting what the cart holds)."""
        if not product_id:
            raise ShopError("product_id is required")
        if quantity <= 0:
            raise ShopError("quantity must be a positive number")
        product = self.by_id.get(product_id)
        if product is None:
            raise ShopError(f"Product not found: product_id '{product_id}'")
        name, price = product.get("name", ""), float(product.get("price", 0.0))
        stock = int(product.get("stock_quantity", 0))
        item = next((i for i in self.cart["items"] if i.get("product_id") == product_id), None)
        have = int(item.get("quantity", 0)) if item else 0
        if have + quantity > stock:
            raise ShopError(f"Insufficient stock: Product '{name}' (ID: {product_id}) has {stock} in stock, cart "
                            f"already has {have}, cannot add {quantity} more")
        if item is not None:
            item.update(quantity=have + quantity, price=price)
        else:
            self.cart["items"].append({"product_id": product_id, "name": name, "quantity": quantity, "price": price})
        self._summarize(with_coupons=False)
        return self.cart

    def remove_product(self, product_id: str, quantity: int) -> dict[str, Any]:
        """Take ``quantity`` of a product out of the cart (all of it when it holds no more)."""
        if not product_id:
            raise ShopError("product_id is required")
        if quantity <= 0:
            raise ShopError("quantity must be a positive number")
        if product_id not in self.by_id:
            raise ShopError(f"Product not found: product_id '{product_id}'")
        item = next((i for i in self.cart["items"] if i.get("product_id") == product_id), None)
        if item is None:
            raise ShopError(f"Product not in cart: product_id '{product_id}'")
        item["quantity"] = max(0, int(item.get("quantity", 0)) - quantity)
        self.cart["items"] = [i for i in self.cart["items"] if int(i.get("quantity", 0)) > 0]
        self._summarize(with_coupons=False)
        return self.cart

    def add_coupon(self, name: str, quantity: int) -> dict[str, Any]:
        """Use ``quantity`` more of a coupon: a valid one the user holds enough of (VIP ones need VIP status), and
        only while the cart's total covers the sum of every used coupon's threshold times its quantity."""
        if not name:
            raise ShopError("coupon_name is required")
        if quantity <= 0:
            raise ShopError("quantity must be a positive number")
        if name not in VALID_COUPONS:
            raise ShopError(f"Coupon not found: '{name}'. Valid coupons are: {', '.join(VALID_COUPONS)}")
        owned = int((self.user.get("coupons") or {}).get(name, 0))
        used = self.cart.setdefault("used_coupons", [])
        current = sum(int(c.get("quantity", 0)) for c in used if c.get("coupon_name") == name)
        if current + quantity > owned:
            raise ShopError(f"Insufficient coupon quantity: User owns {owned} of '{name}', cart already uses "
                            f"{current}, cannot add {quantity} more")
        if name.startswith("VIP:") and not self.user.get("is_vip", False):
            raise ShopError(f"VIP coupon '{name}' requires VIP status, but user is not a VIP")
        wanted = coupon_counts(used)
        wanted[name] = current + quantity
        needed = sum((coupon_terms(n) or (0.0, 0.0))[1] * q for n, q in wanted.items())
        if self.base_total() < needed:
            raise ShopError(f"Cart total {self.base_total()} is insufficient for this combination of coupons "
                            f"(requires at least {needed})")
        entry = next((c for c in used if c.get("coupon_name") == name), None)
        if entry is not None:
            entry["quantity"] = current + quantity
        else:
            used.append({"coupon_name": name, "quantity": quantity})
        self._summarize(with_coupons=True)
        return self.cart

    def remove_coupon(self, name: str, quantity: int) -> dict[str, Any]:
        """Stop using ``quantity`` of a coupon the cart uses (no more than it uses)."""
        if not name:
            raise ShopError("coupon_name is required")
        if quantity <= 0:
            raise ShopError("quantity must be a positive number")
        if name not in VALID_COUPONS:
            raise ShopError(f"Invalid coupon name: '{name}'. Valid coupons are: {', '.join(VALID_COUPONS)}")
        used = self.cart.setdefault("used_coupons", [])
        entry = next((c for c in used if c.get("coupon_name") == name), None)
        if entry is None:
            raise ShopError(f"Coupon not in cart: '{name}'")
        have = int(entry.get("quantity", 0))
        if have < quantity:
            raise ShopError(f"Insufficient coupon quantity in cart: Cart has {have} of '{name}', cannot remove "
                            f"{quantity}")
        entry["quantity"] = have - quantity
        self.cart["used_coupons"] = [c for c in used if int(c.get("quantity", 0)) > 0]
        self._summarize(with_coupons=True)
        return self.cart


def coupon_counts(used: list[dict[str, Any]]) -> dict[str, int]:
    """Coupon name -> quantity used, summed over the cart's entries."""
    out: dict[str, int] = {}
    for c in used:
        out[str(c.get("coupon_name", ""))] = out.get(str(c.get("coupon_name", "")), 0) + int(c.get("quantity", 0))
    return out


def as_json(value: Any) -> str:
    """A tool's result as upstream prints it (indented JSON, non-ASCII kept)."""
    return json.dumps(value, ensure_ascii=False, indent=2)
