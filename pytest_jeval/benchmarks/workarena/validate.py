"""The checks of a workarena task, each querying the service desk's state, as WorkArena's ``validate()`` queries
the instance: the table API for records, the list's own state (here its URL's ``sysparm_query``) for filters and
sorts, the final chat message for answers.

| ``type`` | passes when |
|---|---|
| ``record_created`` | the newest record the episode created in ``table`` has every value of ``fields`` |
| ``requested_item`` | the episode ordered ``item`` with ``quantity``, these ``options`` (and ``requested_for``) |
| ``list_filter`` | the final page is ``table``'s list, filtered ``kind`` (AND/OR) by exactly ``conditions`` |
| ``list_sort`` | the final page is ``table``'s list sorted by exactly ``sort``, in order, and filtered by nothing |
| ``answer`` | the final answer contains each of ``must_include`` (case-insensitive) |
| ``records`` | every record of ``numbers`` in ``table`` has every value of ``fields`` |
| ``unchanged`` | every seed record of ``table`` but ``except`` is as it was at the start |

A task passes when all its checks do (WorkArena's compositional tasks validate each subtask).
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_jeval.benchmarks._web.db import Database
from pytest_jeval.benchmarks.workarena.apps.desk import DeskState, parse_query, seed_rows

CHECKS = ("record_created", "requested_item", "list_filter", "list_sort", "answer", "records", "unchanged")


def check_spec(spec: Any, where: str) -> None:
    """ValueError when a check is malformed."""
    if not isinstance(spec, dict) or spec.get("type") not in CHECKS:
        raise ValueError(f"{where}: each check needs a type among {', '.join(CHECKS)}")


def _new_rows(state: DeskState, table: str) -> list[dict[str, Any]]:
    return state.db.rows(f"SELECT * FROM {table} WHERE sys_id > ? ORDER BY sys_id DESC", (state.seed_max[table],))


def _list_page(final_url: str, table: str) -> tuple[bool, str]:
    path = urllib.parse.urlparse(final_url).path
    return path.rstrip("/").endswith(f"/{table}_list.do") or path == f"/{table}_list.do", final_url


def run_check(spec: Mapping[str, Any], state: DeskState, final_url: str, answer: str) -> tuple[bool, str]:
    """``(passed, why)`` of one check."""
    kind = spec["type"]
    db: Database = state.db
    if kind == "record_created":
        rows = _new_rows(state, spec["table"])
        if not rows:
            return False, f"no {spec['table']} record was created"
        wrong = {k: rows[0].get(k) for k, v in spec["fields"].items() if str(rows[0].get(k) or "") != v}
        return not wrong, f"the new record differs in {wrong}" if wrong else "the new record matches"
    if kind == "requested_item":
        for row in _new_rows(state, "sc_req_item"):
            options = json.loads(row["options"] or "{}")
            if (row["item"] == spec["item"] and row["quantity"] == str(spec["quantity"])
                    and all(options.get(k) == v for k, v in spec.get("options", {}).items())
                    and ("requested_for" not in spec or row["requested_for"] == spec["requested_for"])):
                return True, f"{row['number']} matches"
        return False, f"no requested item matches {dict(spec)}"
    if kind in ("list_filter", "list_sort"):
        on_list, _ = _list_page(final_url, spec["table"])
        if not on_list:
            return False, f"the final page is not the {spec['table']} list: {final_url}"
        query = urllib.parse.parse_qs(urllib.parse.urlparse(final_url).query).get("sysparm_query", [""])[0]
        got_kind, conds, sorts = parse_query(query)
        if kind == "list_filter":
            want = sorted(tuple(c) for c in spec["conditions"])
            ok = bool(conds) and got_kind == spec["kind"] and sorted(conds) == want
            return ok, f"filter {got_kind} {conds}"
        ok = [list(s) for s in sorts] == [list(s) for s in spec["sort"]] and not conds
        return ok, f"sorted by {sorts}, filtered by {conds}"
    if kind == "answer":
        low = answer.lower()
        missing = [m for m in spec["must_include"] if m.lower() not in low]
        return not missing, f"the answer lacks {missing}" if missing else "the answer has it"
    if kind == "records":
        bad: list[str] = []
        for number in spec["numbers"]:
            found = db.one(f"SELECT * FROM {spec['table']} WHERE number = ?", (number,))
            if found is None or any(str(found.get(k) or "") != v for k, v in spec["fields"].items()):
                bad.append(number)
        return not bad, f"not as asked: {bad}" if bad else "every record is as asked"
    if kind == "unchanged":
        seed = seed_rows()[spec["table"]]
        changed = []
        for i, original in enumerate(seed, start=1):
            if original.get("number") in spec.get("except", []):
                continue
            now = db.one(f"SELECT * FROM {spec['table']} WHERE sys_id = ?", (i,))
            if now is None or any(str(now.get(k) or "") != str(v) for k, v in original.items()):
                changed.append(original.get("number") or i)
        return not changed, f"changed: {changed}" if changed else "nothing else changed"
    raise ValueError(f"unknown check {kind!r}")


def validate(specs: Sequence[Mapping[str, Any]], state: DeskState, final_url: str,
             answer: str) -> tuple[bool, list[dict[str, Any]]]:
    """Whether every check passes, and each check's outcome."""
    results = []
    for spec in specs:
        ok, why = run_check(spec, state, final_url, answer)
        results.append({"type": spec["type"], "passed": ok, "why": why[:300]})
    return all(r["passed"] for r in results), results
