"""deepplanning travel's parts without a model: each commonsense check and each hard constraint (passing on
a plan that keeps it, failing with a reason on one that breaks it), the case's scores, the tools over a
case's database, the plan's extraction and conversion, and the loader."""

from __future__ import annotations

import copy
import json
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval import Sample
from pytest_jeval.agents import ToolContext
from pytest_jeval.benchmarks.deepplanning import bench_deepplanning as bench
from pytest_jeval.benchmarks.deepplanning import travel_checks as checks
from pytest_jeval.benchmarks.deepplanning import travel_tools as tools
from pytest_jeval.benchmarks.deepplanning.data import Options
from pytest_jeval.benchmarks.deepplanning.travel import summarize_travel
from pytest_jeval.benchmarks.deepplanning.travel_db import TravelDB
from pytest_jeval.benchmarks.deepplanning.travel_plan import ConversionError, extract_plan, parse_conversion
from pytest_jeval.suite.dataset import DatasetLoadError, load_samples
from tests.support.paths import TEST_DATA

DATA = TEST_DATA / "deepplanning" / "travelplanning"
DB0 = DATA / "database" / "database_en" / "id_0"
PLAN = json.loads((TEST_DATA / "deepplanning" / "travel_plan_id_0.json").read_text())
META = json.loads((DATA / "data" / "travelplanning_query_en.json").read_text())[0]["meta_info"]


@pytest.fixture(scope="module")
def db() -> TravelDB:
    return TravelDB.load(DB0)


def acts(plan: dict[str, Any], day: int) -> list[dict[str, Any]]:
    return plan["daily_plans"][day]["activities"]  # type: ignore[no-any-return]


def named(plan: dict[str, Any], name: str) -> dict[str, Any]:
    return next(a for d in plan["daily_plans"] for a in d["activities"] if a["details"].get("name") == name)


def set_(path: Callable[[dict[str, Any]], dict[str, Any]], key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(plan: dict[str, Any]) -> None:
        path(plan)[key] = value
    return change


# one breakage per commonsense check: (check, change to the passing plan, text in the reason)
BREAKAGES: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    ("valid_trip_duration", lambda p: p["daily_plans"].append(copy.deepcopy(p["daily_plans"][1])), "expected 2"),
    ("closed_loop_route_structure", set_(lambda p: p["daily_plans"][1], "current_city", "from Nanjing to Shanghai"),
     "return to Hefei"),
    ("seamless_intercity_transfers", set_(lambda p: acts(p, 0)[0]["details"], "to", "Hefei South Station"),
     "no intercity ride goes Hefei->Nanjing"),
    ("validated_accommodation", set_(lambda p: p["daily_plans"][0]["accommodation"], "price_per_night", 280),
     "plan has 280.0 != database 300"),
    ("validated_attractions", set_(lambda p: named(p, "Nanjing City Wall")["details"], "cost", 40),
     "Nanjing City Wall: plan has 40 != database 50"),
    ("validated_meals", set_(lambda p: named(p, "Lakeside Kitchen")["details"], "name", "Lakeside Diner"),
     "Restaurants not in database: ['Lakeside Diner']"),
    ("validated_transportation", set_(lambda p: acts(p, 1)[-1]["details"], "cost", 90),
     "G3031: plan has 90 != database prices [100.0]"),
    ("traceable_accommodation", lambda p: p["daily_plans"][0].pop("accommodation"),
     "Accommodation not traceable on days: [1]"),
    ("ends_with_accommodation", lambda p: acts(p, 0).pop(), "Last activity not hotel on days: [1]"),
    ("essential_meal_coverage", lambda p: acts(p, 0).pop(11), "D1: Arrival <10:00, must arrange two meals"),
    ("essential_attraction_coverage", set_(lambda p: named(p, "Xuanwu Lake"), "type", "buffer"),
     "D2: Departure time later than 16:00"),
    ("no_time_overlaps", set_(lambda p: acts(p, 0)[3], "time_slot", "08:50-09:30"), "have time overlap"),
    ("reasonable_transfer_time", set_(lambda p: named(p, "Laomendong"), "time_slot", "09:40-11:50"),
     "Orange Hotel Nanjing->Laomendong commute 20min, plan gap 10min"),
    ("attraction_visit_within_opening_hours", lambda p: [set_(lambda q: named(q, "Laomendong"), "time_slot",
                                                              "07:50-09:50")(p)], "not within 09:00-22:00"),
    ("dining_within_service_hours", set_(lambda p: named(p, "Jinling Noodle House"), "time_slot", "10:00-11:00"),
     "not within 11:00-22:00"),
    ("avoidance_of_closure_days", lambda p: None, "Nanjing City Wall on Day 1"),  # META's weekday is changed below
    ("reasonable_duration_at_attractions", set_(lambda p: named(p, "Laomendong"), "time_slot", "09:50-13:50"),
     "Laomendong: plan has 4.0h not in recommended 1.0-3.0h"),
    ("reasonable_meal_duration", set_(lambda p: named(p, "Lakeside Kitchen"), "time_slot", "12:40-13:00"),
     "meal duration 20min < minimum 30min"),
    ("cost_calculation_correctness", set_(lambda p: p["budget_summary"], "total_estimated_budget", 1000),
     "Calculated total=1300.00"),
    ("diverse_meal_options", set_(lambda p: named(p, "Lakeside Kitchen")["details"], "name", "Jinling Noodle House"),
     "Duplicate restaurant: Jinling Noodle House"),
    ("diverse_attraction_options", set_(lambda p: named(p, "Xuanwu Lake")["details"], "name", "Laomendong"),
     "Duplicate attraction: Laomendong"),
]


def test_the_passing_plan_passes_every_check(db: TravelDB) -> None:
    result = checks.commonsense(PLAN, META, db)
    assert set(result) == {n for names in checks.DIMENSIONS.values() for n in names}
    assert {n: ok for n, (ok, _) in result.items() if ok is not True} == {}
    assert all(ok is True for ok, _ in checks.hard(PLAN, META).values())


@pytest.mark.parametrize(("name", "change", "reason"), BREAKAGES, ids=[b[0] for b in BREAKAGES])
def test_each_commonsense_check_fails_on_a_plan_that_breaks_it(db: TravelDB, name: str,
                                                                change: Callable[[dict[str, Any]], None],
                                                                reason: str) -> None:
    plan = copy.deepcopy(PLAN)
    change(plan)
    meta = {**META, "depart_weekday": 1} if name == "avoidance_of_closure_days" else META  # day 1 a Monday
    ok, why = checks.commonsense(plan, meta, db)[name]
    assert ok is False and why is not None and reason in why, why
    assert checks.case_scores(plan, meta, db)["case_acc"] == 0.0
    assert any(f["check"] == name and f["reason"] == why for f in checks.case_scores(plan, meta, db)["failed_constraints"])


def test_transfer_time_tolerance_and_skips(db: TravelDB) -> None:
    plan = copy.deepcopy(PLAN)
    acts(plan, 0)[4]["time_slot"] = "09:30-09:55"  # 25 minutes for a 20-minute ride: the upper bound
    named(plan, "Laomendong")["time_slot"] = "09:55-11:50"
    assert checks.reasonable_transfer_time(plan["daily_plans"], db) == (True, None)
    named(plan, "Laomendong")["details"]["name"] = "Nowhere"  # no coordinates: skipped, noted
    ok, note = checks.reasonable_transfer_time(plan["daily_plans"], db)
    assert ok is True and note is not None and "Nowhere" in note


def test_no_daily_plans_fails_every_check_but_closure_days(db: TravelDB) -> None:
    result = checks.commonsense({"budget_summary": {}}, META, db)
    assert "avoidance_of_closure_days" not in result and all(r == (False, "Missing daily_plans") for r in result.values())
    scores = checks.case_scores({}, META, db)
    assert scores["commonsense_score"] == 0.0 and scores["personalized_score"] == 0.0


HARD = [
    ("train_seat_status", lambda p: acts(p, 1)[-1]["details"].update(number="G7712"), "Required inbound train not found: G3031"),
    ("train_seat_status", lambda p: acts(p, 0)[0]["details"].update(mode="flight"), "Required outbound train not found: G7798"),
    ("hotel_star_service_required", lambda p: p["daily_plans"][0]["accommodation"].update(name="Ji Hotel Nanjing Xinjiekou"),
     "Required hotel not found (hotel_star_service_required): Orange Hotel Nanjing"),
    ("restaurant_must_eat_named", lambda p: named(p, "Six Dynasties Teahouse")["details"].update(name="Other"),
     "Required restaurant not found (restaurant_must_eat_named): Six Dynasties Teahouse"),
    ("attraction_must_visit_named", lambda p: named(p, "Nanjing City Wall")["details"].update(name="Other"),
     "Missing attractions (attraction_must_visit_named): Nanjing City Wall"),
    ("budget_constraint", lambda p: p["daily_plans"][0]["accommodation"].update(price_per_night=2000),
     "Actual budget exceeds limit: 3000.00 > 3000.00"),
]


@pytest.mark.parametrize(("name", "change", "reason"), HARD, ids=[f"{h[0]}-{i}" for i, h in enumerate(HARD)])
def test_each_hard_constraint_fails_on_a_plan_that_breaks_it(name: str, change: Callable[[dict[str, Any]], None],
                                                             reason: str) -> None:
    plan = copy.deepcopy(PLAN)
    change(plan)
    if name == "budget_constraint":
        plan["daily_plans"][0]["accommodation"]["price_per_night"] = 2001  # 1300 - 300 + 2001 = 3001 > 3000
        reason = "Actual budget exceeds limit: 3001.00 > 3000.00"
    result = checks.hard(plan, META)
    assert result[name] == (False, reason)
    assert all(ok is True for key, (ok, _) in result.items() if key != name)


def test_flight_constraints_and_an_unknown_constraint_is_not_counted(db: TravelDB) -> None:
    flight = {"daily_plans": [{"activities": [{"type": "travel_intercity_public",
                                               "details": {"mode": "Flight", "number": "MU5131"}}]}]}
    assert checks.hard_check("flight_cheapest_direct", {"outbound_flight_no": "MU5131"}, flight, {}) == (True, None)
    assert checks.hard_check("flight_seat_class", {"outbound_flight_no": "MU5131", "inbound_flight_no": "CA1858"},
                             flight, {}) == (False, "Required inbound flight not found: CA1858")
    meta = {**META, "hard_constraints": {**META["hard_constraints"], "visa_required": {"x": 1}}}
    result = checks.hard(PLAN, meta)
    assert result["visa_required"] == (None, "Unknown constraint type: visa_required")
    assert checks.case_scores(PLAN, meta, db)["personalized_score"] == 1.0  # not counted, as upstream


def test_case_scores_weight_each_dimension_one_eighth(db: TravelDB) -> None:
    plan = copy.deepcopy(PLAN)
    named(plan, "Xuanwu Lake")["details"]["name"] = "Laomendong"  # a duplicate, and Laomendong's hours/duration
    scores = checks.case_scores(plan, META, db)
    failed_dimensions = [d for d, v in scores["dimension_scores"].items() if v == 0.0]
    assert "Activity Diversity" in failed_dimensions
    assert scores["commonsense_score"] == pytest.approx(1 - len(failed_dimensions) / 8)
    assert scores["composite_score"] == pytest.approx((scores["commonsense_score"] + scores["personalized_score"]) / 2)


# ---------------------------------------------------------------- tools


def call(db: TravelDB, fn: Any, **arguments: Any) -> str:
    ctx = ToolContext(sample=Sample(id="travel-en-id_0", input=""), workspace=Path("."), state=db)
    return str(fn.fn(**arguments, ctx=ctx))


def test_the_tools_answer_from_the_case_database(db: TravelDB) -> None:
    trains = json.loads(call(db, tools.query_train_info, origin="Hefei", destination="Nanjing", depDate="2025-11-12"))
    assert [r[0]["Segment 1"]["marketingTransportNo"] for r in trains] == ["G7798", "G7712"]
    assert trains[0][0]["price"] == 100.0 and trains[1][0]["Segment 1"]["Remaining Seats"] == "Available"
    assert call(db, tools.query_train_info, origin="Hefei", destination="Nanjing", depDate="2025-11-14") == \
        "No train information found from Hefei to Nanjing on 2025-11-14"
    assert call(db, tools.query_flight_info, origin="Hefei", destination="Nanjing", depDate="2025-11-12").startswith(
        "No flight information found")
    hotels = json.loads(call(db, tools.query_hotel_info, destination="Nanjing", checkinDate="2025-11-12",
                             checkoutDate="2025-11-13", hotelBrands="Orange Hotel"))
    assert [h["name"] for h in hotels] == ["Orange Hotel Nanjing"] and hotels[0]["services"] == ["Swimming Pool", "Free WiFi"]
    details = call(db, tools.query_attraction_details, attraction_name="Nanjing City Wall")
    assert "Opening Hours：08:00 to 18:00" in details and "Ticket Price：50.0 yuan" in details
    assert "Closed Dates：Monday" in details
    assert "Xuanwu Lake" in call(db, tools.recommend_attractions, city="Nanjing", attraction_type="Natural Scenery")
    assert "Laomendong" not in call(db, tools.recommend_attractions, city="Nanjing", attraction_type="Natural Scenery")
    where = json.loads(call(db, tools.search_location, place_name="Xuanwu Lake"))
    assert (where["latitude"], where["longitude"]) == ("32.075621", "118.799204")
    route = json.loads(call(db, tools.query_road_route_info, origin="32.021544,118.788912",
                            destination="32.075621,118.799204"))
    assert route == {"origin": "32.021544,118.788912", "destination": "32.075621,118.799204",
                     "distance_in_meters": 6100, "duration_in_minutes": 25, "cost": 25}
    assert call(db, tools.query_road_route_info, origin="1,2", destination="32.075621,118.799204").startswith(
        "Coordinate 1,2 is not in query range")
    near = json.loads(call(db, tools.recommend_restaurants, latitude="32.013276", longitude="118.781209"))
    assert [r["name"] for r in near] == ["Six Dynasties Teahouse"] and near[0]["tags"] == ["Birthday Package", "Tea"]
    assert json.loads(call(db, tools.query_restaurant_details, restaurant_name="Lakeside Kitchen"))["price_per_person"] == "60"
    assert "not found" in json.loads(call(db, tools.query_restaurant_details, restaurant_name="X"))["message"]


def test_the_tools_follow_upstreams_schema() -> None:
    required = {"query_train_info": ["origin", "destination", "depDate"],
                "query_flight_info": ["origin", "destination", "depDate"],
                "query_hotel_info": ["destination", "checkinDate", "checkoutDate"],
                "query_attraction_details": ["attraction_name"], "recommend_attractions": ["city"],
                "search_location": ["place_name"], "query_road_route_info": ["origin", "destination"],
                "recommend_restaurants": ["latitude", "longitude"], "query_restaurant_details": ["restaurant_name"]}
    assert {t.name: sorted(t.parameters.get("required", [])) for t in tools.TRAVEL_TOOLS} == \
        {k: sorted(v) for k, v in required.items()}


# ---------------------------------------------------------------- plan text and conversion


def test_the_plan_is_inside_plan_tags_after_thinking() -> None:
    assert extract_plan("<think>draft <plan>no</plan></think>Here:<plan> Day 1 </plan>and<plan>Day 2</plan>") == \
        "Day 1\n\nDay 2"
    assert extract_plan("no tags here") == ""
    assert parse_conversion('ok <JSON>{"daily_plans": []}</JSON>') == {"daily_plans": []}
    assert parse_conversion('```json\n{"a": 1}\n```') == {"a": 1}
    with pytest.raises(ConversionError):
        parse_conversion("<JSON>[1, 2]</JSON>")
    with pytest.raises(ConversionError):
        parse_conversion("sorry")


def test_summary_averages_over_scored_cases_and_counts_the_rest() -> None:
    def record(acc: float | None, delivered: bool = True, failed: tuple[str, ...] = ()) -> dict[str, Any]:
        meta = {"domain": "travel", "delivered": delivered, "case_acc": acc or 0.0, "commonsense_score": acc or 0.0,
                "personalized_score": acc or 0.0, "composite_score": acc or 0.0,
                "dimension_scores": {d: acc or 0.0 for d in checks.DIMENSIONS},
                "failed_constraints": [{"kind": "hard", "check": f} for f in failed]}
        return {"is_correct": None if acc is None else acc == 1.0, "error": None, "scoring_metadata": meta}
    summary = summarize_travel([record(1.0), record(0.0, failed=("budget_constraint",)), record(0.0, delivered=False),
                                record(None)])["travel"]
    assert summary["total_cases"] == 4 and summary["scored_cases"] == 3 and summary["unscored_cases"] == 1
    assert summary["case_acc"] == pytest.approx(1 / 3) and summary["delivery_rate"] == pytest.approx(2 / 3)
    assert summary["error_statistics"] == {"[hard] budget_constraint": 1}


# ---------------------------------------------------------------- loading


def test_samples_from_a_data_dir(tmp_path: Path) -> None:
    samples = load_samples(bench.BENCHMARK, local_dir=DATA, options=Options(domain="travel"))[0]
    assert [s.id for s in samples] == ["travel-en-id_0", "travel-en-id_1"]
    assert samples[0].metadata["case_dir"] == str(DB0) and samples[0].target["meta_info"]["org"] == "Hefei"
    assert [t.name for t in bench.tools_of(samples[0])] == [t.name for t in tools.TRAVEL_TOOLS]
    # the database may be upstream's zip instead of the unpacked folder
    root = tmp_path / "copy"
    (root / "data").mkdir(parents=True)
    shutil.copy(DATA / "data" / "travelplanning_query_en.json", root / "data")
    with zipfile.ZipFile(root / "database_en.zip", "w") as zf:
        for path in sorted((DATA / "database").rglob("*")):
            zf.write(path, path.relative_to(DATA / "database"))
    import os
    os.environ["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    try:
        zipped = load_samples(bench.BENCHMARK, local_dir=root, options=Options(domain="travel"))[0]
    finally:
        del os.environ["XDG_CACHE_HOME"]
    assert [s.id for s in zipped] == ["travel-en-id_0", "travel-en-id_1"]
    assert Path(zipped[0].metadata["case_dir"]).is_relative_to(tmp_path / "cache")


def test_bad_input_names_what_is_wrong(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy_ = tmp_path / "copy"
    shutil.copytree(DATA, copy_)
    (copy_ / "data" / "travelplanning_query_en.json").unlink()
    with pytest.raises(DatasetLoadError, match=r"has no data/travelplanning_query_en.json"):
        load_samples(bench.BENCHMARK, local_dir=copy_, options=Options(domain="travel"))
    shutil.copy(DATA / "data" / "travelplanning_query_en.json", copy_ / "data")
    shutil.rmtree(copy_ / "database" / "database_en" / "id_1")
    with pytest.raises(DatasetLoadError, match=r"database_en/id_1 is missing"):
        load_samples(bench.BENCHMARK, local_dir=copy_, options=Options(domain="travel"))
    shutil.rmtree(copy_ / "database")
    with pytest.raises(DatasetLoadError, match=r"holds neither database_en/ nor database_en.zip"):
        load_samples(bench.BENCHMARK, local_dir=copy_, options=Options(domain="travel"))
    with pytest.raises(DatasetLoadError, match=r"holds neither database_zh/ nor database_zh.zip"):
        load_samples(bench.BENCHMARK, local_dir=DATA, options=Options(domain="travel", language="zh"))
    import datasets
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    with pytest.raises(DatasetLoadError, match=r"cannot download database_en.zip of 'Qwen/DeepPlanning'.*set data_dir"):
        load_samples(bench.BENCHMARK, options=Options(domain="travel"))


# ---------------------------------------------------------------- upstream's time thresholds, at their edges


def ride(start: str, end: str) -> dict[str, Any]:
    return {"time_slot": f"{start}-{end}", "type": "travel_intercity_public", "details": {}}


def meal(start: str, end: str) -> dict[str, Any]:
    return {"time_slot": f"{start}-{end}", "type": "meal", "details": {"name": f"R{start}"}}


def sight(start: str, end: str, name: str = "A") -> dict[str, Any]:
    return {"time_slot": f"{start}-{end}", "type": "attraction", "details": {"name": name}}


ARRIVE_LATE = {"current_city": "from Hefei to Nanjing", "activities": [ride("18:00", "19:00")]}


@pytest.mark.parametrize(("day", "ok"), [
    # leaving a visited city: before 9:00 no meal, before 15:00 at most one, from 15:00 at least one
    ({"current_city": "from Nanjing to Hefei", "activities": [meal("07:00", "08:00"), ride("08:59", "10:00")]}, False),
    ({"current_city": "from Nanjing to Hefei", "activities": [meal("07:00", "08:00"), ride("09:00", "10:00")]}, True),
    ({"current_city": "from Nanjing to Hefei", "activities": [ride("14:59", "16:00")]}, True),
    ({"current_city": "from Nanjing to Hefei", "activities": [ride("15:00", "16:00")]}, False),
    ({"current_city": "from Nanjing to Hefei",
      "activities": [meal("10:00", "11:00"), meal("13:00", "14:00"), ride("14:59", "16:00")]}, False),
])
def test_meal_coverage_when_leaving_at_upstreams_edges(day: dict[str, Any], ok: bool) -> None:
    assert checks.essential_meal_coverage([ARRIVE_LATE, day], META)[0] is ok


@pytest.mark.parametrize(("day", "ok"), [
    # arriving in a city to visit: before 10:00 two meals, before 15:00 at least one, from 15:00 at most one
    ({"current_city": "from Hefei to Nanjing", "activities": [ride("08:00", "09:59"), meal("12:00", "13:00")]}, False),
    ({"current_city": "from Hefei to Nanjing", "activities": [ride("08:00", "10:00"), meal("12:00", "13:00")]}, True),
    ({"current_city": "from Hefei to Nanjing", "activities": [ride("08:00", "14:59")]}, False),
    ({"current_city": "from Hefei to Nanjing", "activities": [ride("08:00", "15:00")]}, True),
    ({"current_city": "from Hefei to Nanjing",
      "activities": [ride("08:00", "15:00"), meal("16:00", "17:00"), meal("19:00", "20:00")]}, False),
    # a day in one city: two meals at least 120 minutes apart
    ({"current_city": "Hefei", "activities": [meal("11:00", "12:00"), meal("13:59", "15:00")]}, False),
    ({"current_city": "Hefei", "activities": [meal("11:00", "12:00"), meal("14:00", "15:00")]}, True),
])
def test_meal_coverage_when_arriving_or_staying_at_upstreams_edges(day: dict[str, Any], ok: bool) -> None:
    assert checks.essential_meal_coverage([day], META)[0] is ok


@pytest.mark.parametrize(("days", "ok"), [
    # leaving a visited city after 16:00 needs an attraction; arriving before 12:00 needs one
    ([ARRIVE_LATE, {"current_city": "from Nanjing to Hefei", "activities": [ride("16:00", "17:00")]}], True),
    ([ARRIVE_LATE, {"current_city": "from Nanjing to Hefei", "activities": [ride("16:01", "17:00")]}], False),
    ([{"current_city": "from Hefei to Nanjing", "activities": [ride("08:00", "11:59")]}], False),
    ([{"current_city": "from Hefei to Nanjing", "activities": [ride("08:00", "12:00")]}], True),
    # a day in one city: four hours of sightseeing (rides to an attraction count) or two attractions
    ([{"current_city": "Hefei", "activities": [sight("09:00", "12:59")]}], False),
    ([{"current_city": "Hefei", "activities": [
        {"time_slot": "08:30-09:00", "type": "travel_city", "details": {"from": "H", "to": "A"}},
        sight("09:00", "12:30")]}], True),
    # upstream truncates fractional hours to minutes: 31 + 209 minutes count as 30 + 208
    ([{"current_city": "Hefei", "activities": [
        {"time_slot": "08:30-09:01", "type": "travel_city", "details": {"from": "H", "to": "A"}},
        sight("09:01", "12:30")]}], False),
    ([{"current_city": "Hefei", "activities": [sight("09:00", "10:00"), sight("10:00", "11:00", "B")]}], True),
])
def test_attraction_coverage_at_upstreams_edges(days: list[dict[str, Any]], ok: bool) -> None:
    assert checks.essential_attraction_coverage(days, META)[0] is ok


@pytest.mark.parametrize(("slot", "ok"), [("12:00-12:29", False), ("12:00-12:30", True), ("12:00-14:30", True),
                                          ("12:00-14:31", False), ("23:30-00:30", True)])
def test_meal_duration_edges(slot: str, ok: bool) -> None:
    day = {"activities": [{"time_slot": slot, "type": "meal", "details": {"name": "R"}}]}
    assert checks.reasonable_meal_duration([day])[0] is ok


@pytest.mark.parametrize(("total", "ok"), [(1300 / 1.1 - 0.5, False), (1300 / 1.1 + 0.5, True), (1444, True),
                                           (1300 / 0.9 + 0.5, False)])
def test_the_budget_summary_may_be_ten_percent_off(total: float, ok: bool) -> None:
    plan = copy.deepcopy(PLAN)
    plan["budget_summary"]["total_estimated_budget"] = total
    assert checks.cost_calculation_correctness(plan, plan["daily_plans"], META)[0] is ok


@pytest.mark.parametrize(("slot", "hours", "ok"), [
    ("16:30-03:00", ("16:00", "03:30"), True), ("15:30-17:00", ("16:00", "03:30"), False),
    ("01:00-03:00", ("16:00", "03:30"), True), ("09:00-24:00", ("09:00", "24:00"), True),
    ("21:00-22:30", ("09:00", "22:00"), False)])
def test_business_hours_past_midnight(slot: str, hours: tuple[str, str], ok: bool) -> None:
    start, end = checks.slot(slot)
    opens, closes = checks.clock(hours[0]), checks.clock(hours[1])
    assert start is not None and end is not None and opens is not None and closes is not None
    assert checks.within_hours(start, end, opens, closes) is ok
