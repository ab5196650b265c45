"""DeepPlanning travel's hard (personalised) constraints, as upstream's ``constraints_hard.py`` defines them:
each names the train/flight numbers, hotel, restaurant or attractions a plan must use, or a budget."""

from __future__ import annotations

from typing import Any

from pytest_jeval.benchmarks.deepplanning.travel_reading import (
    FLIGHT_MODES,
    TRAIN_MODES,
    Check,
    _float,
    activities,
    details,
    plan_cost,
)


def _names(plan: dict[str, Any], kind: str, key: str = "name", modes: tuple[str, ...] = ()) -> set[str]:
    found: set[str] = set()
    for day in plan.get("daily_plans") or []:
        if not isinstance(day, dict):
            continue
        if kind == "accommodation":
            stay = day.get("accommodation")
            if isinstance(stay, dict):
                found.add(str(stay.get("name", "")))
            continue
        for act in activities(day):
            if act.get("type") != kind:
                continue
            info = details(act)
            if modes and str(info.get("mode", "")).lower() not in modes:
                continue
            found.add(str(info.get(key, "")))
    return found


def _required(present: set[str], wanted: list[tuple[str, Any]], what: str) -> Check:
    for direction, value in wanted:
        if value not in present:
            return False, f"Required {direction}{what} not found: {value}"
    return True, None


def hard_check(key: str, data: dict[str, Any], plan: dict[str, Any], meta: dict[str, Any]) -> Check:
    """One hard constraint: the plan uses the flight/train numbers, hotel, restaurant or every attraction
    the constraint names (its type only words the reason), or its computed cost is within ``max_budget``."""
    if key.startswith("flight_") or key.startswith("train_"):
        flight = key.startswith("flight_")
        present = _names(plan, "travel_intercity_public", "number", FLIGHT_MODES if flight else TRAIN_MODES)
        field = "flight_no" if flight else "train_no"
        wanted = [(d, data[f"{d}_{field}"]) for d in ("outbound", "inbound") if f"{d}_{field}" in data]
        return _required(present, [(d + " ", v) for d, v in wanted], "flight" if flight else "train")
    if key.startswith("hotel_"):
        hotel = data.get("hotel_name")
        if not hotel:
            return False, "No hotel name specified in constraint data"
        if hotel in _names(plan, "accommodation"):
            return True, None
        return False, f"Required hotel not found ({key}): {hotel}"
    if key.startswith("restaurant_"):
        restaurant = data.get("restaurant_name")
        if not restaurant:
            return False, "No restaurant name specified in constraint data"
        if restaurant in _names(plan, "meal"):
            return True, None
        return False, f"Required restaurant not found ({key}): {restaurant}"
    if key.startswith("attraction_"):
        wanted_names = list(data.get("attraction_names") or [])
        if not wanted_names:
            return False, "No attraction names specified in constraint data"
        missing = [n for n in wanted_names if n not in _names(plan, "attraction")]
        return (False, f"Missing attractions ({key}): {', '.join(missing)}") if missing else (True, None)
    if key == "budget_constraint":
        limit = _float(data.get("max_budget"))
        if limit is None:
            return False, f"Invalid or missing max_budget: {data.get('max_budget')}"
        days = [d for d in (plan.get("daily_plans") or []) if isinstance(d, dict)]
        if not days:
            return False, "Plan missing daily_plans"
        total = plan_cost(days, meta)["total"]
        return (True, None) if total <= limit else (False, f"Actual budget exceeds limit: {total:.2f} > {limit:.2f}")
    return None, f"Unknown constraint type: {key}"


def hard(plan: dict[str, Any], meta: dict[str, Any]) -> dict[str, Check]:
    """Every hard constraint of the case (``meta.hard_constraints``) against the plan."""
    result: dict[str, Check] = {}
    for key, data in (meta.get("hard_constraints") or {}).items():
        try:
            result[key] = hard_check(key, data if isinstance(data, dict) else {}, plan, meta)
        except (KeyError, TypeError, ValueError) as exc:
            result[key] = (False, f"Evaluation error: {exc}")
    return result
