#!/usr/bin/env python
"""Cross-check deepplanning travel's constraint checks against upstream DeepPlanning's own code, run by hand.

Upstream's ``evaluation/constraints_commonsense.py`` and ``constraints_hard.py`` (from a Qwen-Agent checkout,
imported at run time, never copied; they need only the standard library) and pytest-jeval's
:mod:`pytest_jeval.benchmarks.deepplanning.travel_checks` judge the same plans: the team's passing plan for
test case ``id_0`` and ``--plans`` random breakages of it (times, costs, names, cities, removed, duplicated
or retyped activities, budgets, hotels, train numbers, extra days). The script prints how many plans it
compared and every check whose pass/fail differs::

    python scripts/deepplanning_travel_crosscheck.py \\
        --upstream ~/Qwen-Agent/benchmark/deepplanning/travelplanning --plans 2000 --seed 1
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "deepplanning"


def breakage(plan: dict[str, Any], rnd: random.Random) -> dict[str, Any]:
    """One to three random changes to a copy of the plan."""
    plan = copy.deepcopy(plan)
    for _ in range(rnd.randint(1, 3)):
        day = rnd.choice(plan["daily_plans"])
        acts = day["activities"]
        act = rnd.choice(acts)
        kind = rnd.randint(0, 13)
        if kind == 0:
            act["time_slot"] = (f"{rnd.randint(0, 23):02d}:{rnd.choice([0, 5, 30, 45]):02d}-"
                                f"{rnd.randint(0, 23):02d}:{rnd.choice([0, 15, 30, 50]):02d}")
        elif kind == 1:
            act["details"]["cost"] = rnd.choice([0, 1, 55, 99, "x", None, 100.4])
        elif kind == 2:
            act["details"]["name"] = rnd.choice(["Laomendong", "Confucius Temple", "Nowhere", "Lakeside Kitchen"])
        elif kind == 3:
            acts.remove(act)
        elif kind == 4:
            day["current_city"] = rnd.choice(["Nanjing", "Hefei", "from Hefei to Nanjing", "from Nanjing to Shanghai"])
        elif kind == 5:
            plan["budget_summary"]["total_estimated_budget"] = rnd.choice([0, 1200, 1500, 2000, "abc"])
        elif kind == 6:
            day["accommodation"] = rnd.choice([{"name": "-"}, {"name": "Ji Hotel Nanjing Xinjiekou",
                                                              "price_per_night": 260},
                                               {"name": "Orange Hotel Nanjing", "price_per_night": 299}, None])
        elif kind == 7:
            act["type"] = rnd.choice(["meal", "attraction", "hotel", "buffer", "travel_city"])
        elif kind == 8:
            acts.append(copy.deepcopy(act))
        elif kind == 9:
            act["details"]["number"] = rnd.choice(["G7712", "G0000", "G3031", ""])
        elif kind == 10:
            act["details"]["from"] = rnd.choice(["Hefei South Station", "Nanjing South Station", "Nanjing City Wall"])
        elif kind == 11:
            plan["daily_plans"].append(copy.deepcopy(day))
        elif kind == 12:
            act["details"]["mode"] = rnd.choice(["train", "flight", "bus"])
        else:
            acts.insert(rnd.randint(0, len(acts)), {"time_slot": f"{rnd.randint(6, 20):02d}:00-"
                                                                 f"{rnd.randint(6, 22):02d}:30",
                                                    "type": "buffer", "details": {}})
    return plan


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--upstream", type=Path, required=True, help="upstream's travelplanning/ folder")
    parser.add_argument("--plans", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    sys.path.insert(0, str(args.upstream))
    sys.path.insert(0, str(ROOT))
    from evaluation.constraints_commonsense import eval_commonsense  # upstream's, imported at run time
    from evaluation.constraints_hard import eval_hard

    from pytest_jeval.benchmarks.deepplanning import travel_checks
    from pytest_jeval.benchmarks.deepplanning.travel_db import TravelDB

    travel = DATA / "travelplanning"
    meta = json.loads((travel / "data" / "travelplanning_query_en.json").read_text())[0]["meta_info"]
    good = json.loads((DATA / "travel_plan_id_0.json").read_text())
    database = travel / "database" / "database_en" / "id_0"
    db = TravelDB.load(database)
    rnd = random.Random(args.seed)
    differences = 0
    for n in range(args.plans):
        plan = good if n == 0 else breakage(good, rnd)
        with contextlib.redirect_stdout(io.StringIO()):  # upstream prints skipped pairs
            theirs = {**eval_commonsense(copy.deepcopy(plan), meta, database_dir=database),
                      **eval_hard(copy.deepcopy(plan), meta)}
        ours = {**travel_checks.commonsense(copy.deepcopy(plan), meta, db),
                **travel_checks.hard(copy.deepcopy(plan), meta)}
        for name in sorted(set(theirs) | set(ours)):
            if (theirs.get(name) or (None,))[0] != (ours.get(name) or (None,))[0]:
                differences += 1
                print(f"plan {n}: {name}: upstream {theirs.get(name)} | ours {ours.get(name)}")
    print(f"{args.plans} plans compared, {differences} check verdicts differ")
    return 1 if differences else 0


if __name__ == "__main__":
    raise SystemExit(main())
