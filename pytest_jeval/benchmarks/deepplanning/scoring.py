"""DeepPlanning shopping's scores, as upstream's ``evaluation_pipeline.py`` and ``score_statistics.py`` compute them.

A case: ``matched`` is the ground-truth product ids found in the cart plus the ground-truth coupons used
in exactly their quantity; ``expected`` is the ground-truth products plus coupons; the case is
**correct** (``case_score`` 1) when ``matched == expected``. Products in the cart beyond the ground truth
are reported (``extra_products``) but, as upstream, do not fail a case; a product's quantity is not
compared. A case is *incomplete* when its episode ended in the middle of tool calls (a limit stopped
it); upstream counts a run invalid when more than 10% of a level's cases are incomplete.
"""

from __future__ import annotations

from typing import Any

INCOMPLETE_LIMIT = 0.1


def case_score(cart: dict[str, Any], products: list[str], coupons: dict[str, int]) -> dict[str, Any]:
    """Upstream's per-case figures for a final ``cart`` against the ground truth (ids, coupon -> quantity)."""
    in_cart = {str(i.get("product_id")) for i in cart.get("items") or [] if i.get("product_id")}
    gold = set(products)
    matched_products = in_cart & gold
    matched_coupons = []
    used = []
    for c in cart.get("used_coupons") or []:
        name, quantity = str(c.get("coupon_name", "")), int(c.get("quantity", 0))
        used.append({"coupon_name": name, "quantity": quantity})
        if name in coupons and quantity == coupons[name]:
            matched_coupons.append(name)
    matched = len(matched_products) + len(matched_coupons)
    expected = len(gold) + len(coupons)
    extra = sorted((in_cart | {str(u["coupon_name"]) for u in used}) - (gold | set(coupons)))
    return {
        "matched_count": matched,
        "expected_count": expected,
        "score": matched / expected if expected else 0.0,
        "case_score": 1.0 if matched == expected else 0.0,
        "matched_products": sorted(matched_products),
        "missing_products": sorted(gold - in_cart),
        "matched_coupons": matched_coupons,
        "used_coupons": used,
        "extra_products": [e for e in extra if e in in_cart],
        "extra_products_count": len([e for e in extra if e in in_cart]),
    }


def _figures(records: list[dict[str, Any]]) -> dict[str, Any]:
    metas = [r.get("scoring_metadata") or {} for r in records]
    cases = len(records)
    ok = sum(1 for r in records if r.get("is_correct") is True)
    matched = sum(int(m.get("matched_count") or 0) for m in metas)
    expected = sum(int(m.get("expected_count") or 0) for m in metas)
    incomplete = sum(1 for m in metas if m.get("completed") is False)
    rate = incomplete / cases if cases else 0.0
    return {"total_cases": cases, "successful_cases": ok, "average_case_score": ok / cases if cases else None,
            "total_matched": matched, "total_expected": expected,
            "match_rate": matched / expected if expected else None,
            "total_extra_products": sum(int(m.get("extra_products_count") or 0) for m in metas),
            "incomplete_cases": incomplete, "incomplete_rate": rate, "valid": rate <= INCOMPLETE_LIMIT}


def summarize_shopping(records: list[dict[str, Any]]) -> dict[str, Any]:
    """``levels`` (upstream's statistics per level), ``shopping`` (over every level; its
    ``average_case_score`` is upstream's case-weighted average) and ``do_nothing_passes``. Errored
    episodes (harness failures) are left out."""
    kept = [r for r in records if r.get("error") is None]
    by_level: dict[str, list[dict[str, Any]]] = {}
    for r in kept:
        level = (r.get("scoring_metadata") or {}).get("level")
        by_level.setdefault(f"level_{level}", []).append(r)
    levels = {name: _figures(rs) for name, rs in sorted(by_level.items())}
    total = _figures(kept)
    total["valid"] = all(v["valid"] for v in levels.values())
    return {"levels": levels, "shopping": total,
            "do_nothing_passes": sum(1 for r in kept if (r.get("scoring_metadata") or {}).get("do_nothing_passes"))}
