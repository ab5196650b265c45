"""Config honesty: planning never mutates the validated suite; resolved values live on the planned objects."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_jeval.suite.plan import EvalPlan


def test_resolved_database_lives_on_the_plan_not_the_suite(tmp_path: Path) -> None:
    (tmp_path / "g.jsonl").write_text(json.dumps({"id": "a1", "input": "Q?", "output": "A", "gold": "yes"}) + "\n")
    (tmp_path / "db").mkdir()
    (tmp_path / "db" / "shop.sqlite").write_bytes(b"")
    (tmp_path / "suite.toml").write_text(
        '[[models]]\nname = "m"\nbase_url = "http://127.0.0.1:9/v1"\n\n'
        '[[benchmarks]]\nname = "g"\ndata_files = "g.jsonl"\nevaluator = "exact_match"\ndatabase = "db/shop.sqlite"\n')
    plan = EvalPlan.from_file(tmp_path / "suite.toml", invocation_dir=tmp_path)
    assert plan.suite.benchmarks[0].database == "db/shop.sqlite"  # as validated
    assert plan.benchmarks["g"].entry.database == str(tmp_path / "db" / "shop.sqlite")
    assert plan.benchmarks["g"].entry is not plan.suite.benchmarks[0]
