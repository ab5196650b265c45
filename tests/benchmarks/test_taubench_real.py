"""taubench on τ²-bench's real retail and airline data (installed by ``make taubench``), through the full plugin:
the oracle scores 1 on every task of every split, with the DB component from its own replay; nop scores 0
wherever the gold changes the database or requires communication, and the summary says how many tasks a
do-nothing agent passes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_jeval.benchmarks.taubench.data import CARRIERS, INSTALL, locate, split_ids


def _installed(distribution: str) -> bool:
    import importlib.metadata

    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


pytestmark = pytest.mark.skipif(not all(_installed(dist) for dist, _ in CARRIERS.values()),
                                reason=f"τ²-bench's data is not installed ({INSTALL})")

SUITE = """
[run]
output_dir = "{agent}"
trajectories = "inline"

[[models]]
name = "m"
base_url = "http://127.0.0.1:9/v1"   # nothing listens here: oracle and nop never call a model

[[benchmarks]]
name = "taubench"
agent = "{agent}"
options = {{ nl_assertions = "skip" }}
"""


def run(pytester: pytest.Pytester, agent: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    (pytester.path / "suite.toml").write_text(SUITE.format(agent=agent))
    pytester.runpytest("--jeval-config", "suite.toml", "-p", "no:cacheprovider", "-q")
    out = pytester.path / agent
    rows = [json.loads(line) for line in (out / "taubench_m.jsonl").read_text().splitlines()]
    return rows, json.loads((out / "taubench_m.jsonl.summary.json").read_text())


@pytest.mark.slow
def test_the_oracle_scores_one_and_nop_zero_on_the_real_data(pytester: pytest.Pytester) -> None:
    expected = {f"{d}-{i}" for d in CARRIERS for i in split_ids(locate(d, None), "base")}
    for domain in CARRIERS:  # every split is a part of base
        data = locate(domain, None)
        splits = json.loads((data.folder / "split_tasks.json").read_text())
        assert set().union(*map(set, splits.values())) == set(splits["base"])
    assert len(expected) == 164

    oracle, summary = run(pytester, "oracle")
    assert {r["record_id"] for r in oracle} == expected
    failed = {r["record_id"]: r["reward_info"] for r in oracle if r["reward"] != 1.0}
    assert not failed
    for r in oracle:
        db = r["reward_info"]["db"]
        assert db["match"] is True and (db.get("hash") == db.get("gold_hash") or "reason" in db)
        assert r["taubench_data"]["source"].startswith("pypi:tau2-")
    assert summary["taubench"]["data"]["retail"]["sha256"]["tasks.json"]

    nop, nop_summary = run(pytester, "nop")
    assert {r["record_id"] for r in nop} == expected
    passed = {r["record_id"] for r in nop if r["is_correct"]}
    for r in nop:
        db, criteria = r["reward_info"]["db"], r["expected"]
        gold_changes_db = db.get("gold_hash") is not None and db["gold_hash"] != db["hash"]
        needs_saying = "COMMUNICATE" in criteria["reward_basis"] and bool(criteria["communicate_info"])
        if gold_changes_db or needs_saying:
            assert r["reward"] == 0.0, r["record_id"]
        if r["record_id"] in passed:
            assert db["match"] is True and not needs_saying
    domains = nop_summary["taubench"]["domains"]
    assert sum(d["do_nothing_passes"] for d in domains.values()) == len(passed) > 0
