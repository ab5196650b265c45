"""SWE-bench-format instances: the schema, checked, and where they come from.

SWE-bench's columns (``princeton-nlp/SWE-bench``, ``princeton-nlp/SWE-bench_Lite``,
``SWE-bench/SWE-bench_Verified``, ``MariusHobbhahn/swe-bench-verified-mini``): ``instance_id, repo,
base_commit, patch, test_patch, problem_statement, hints_text, created_at, version,
environment_setup_commit, FAIL_TO_PASS, PASS_TO_PASS``, the two test lists JSON-encoded strings.
SWE-fficiency (``swefficiency/swefficiency``) adds ``workload`` (a Python script timing the slow path with
``timeit.repeat``), ``covering_tests`` (the test files guarding the changed code), ``speedup`` (the expert
patch's measured speedup) and ``single_thread_tests``; its lists may be lists or JSON strings.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["HUB_IDS", "Instance", "parse_instance", "read_instance_rows"]

HUB_IDS = {
    "mini": "MariusHobbhahn/swe-bench-verified-mini",
    "verified": "SWE-bench/SWE-bench_Verified",
    "lite": "princeton-nlp/SWE-bench_Lite",
    "full": "princeton-nlp/SWE-bench",
    "swefficiency": "swefficiency/swefficiency",
}
"""``subset`` names and the Hub datasets they load (any ``owner/name`` is taken as a Hub id itself)."""
REQUIRED = ("instance_id", "repo", "base_commit", "patch", "test_patch", "problem_statement", "version",
            "FAIL_TO_PASS", "PASS_TO_PASS")


@dataclasses.dataclass(frozen=True)
class Instance:
    """One instance, its lists decoded."""

    instance_id: str
    repo: str
    base_commit: str
    patch: str
    test_patch: str
    problem_statement: str
    version: str
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    environment_setup_commit: str
    hints_text: str = ""
    created_at: str = ""
    workload: str = ""
    covering_tests: tuple[str, ...] = ()
    single_thread_tests: tuple[str, ...] = ()
    speedup: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON builtins (a sample's metadata)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Instance:
        """The inverse of :meth:`as_dict`."""
        fields = {f.name for f in dataclasses.fields(cls)}
        values: dict[str, Any] = {k: (tuple(v) if isinstance(v, list) else v) for k, v in data.items() if k in fields}
        return cls(**values)


def _tests(value: Any, key: str) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise ValueError(f"{key} is not a JSON list: {value[:80]!r}") from None
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{key} must be a list of test names")
    return tuple(value)


def _version(value: Any) -> str:
    if isinstance(value, float):
        text = repr(value)
        return text
    return str(value)


def parse_instance(row: dict[str, Any], *, swefficiency: bool = False) -> Instance:
    """An :class:`Instance` from one dataset row (ValueError naming what is missing or wrong)."""
    missing = [k for k in REQUIRED if k not in row]
    if swefficiency and "workload" not in row:
        missing.append("workload")
    if missing:
        raise ValueError(f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    iid = str(row["instance_id"])
    for key in ("repo", "base_commit", "instance_id"):
        if not str(row[key]).strip():
            raise ValueError(f"{iid}: {key} is empty")
    speedup = row.get("speedup")
    return Instance(
        instance_id=iid, repo=str(row["repo"]), base_commit=str(row["base_commit"]).strip(),
        patch=str(row["patch"] or ""), test_patch=str(row["test_patch"] or ""),
        problem_statement=str(row["problem_statement"] or ""), version=_version(row["version"]),
        fail_to_pass=_tests(row["FAIL_TO_PASS"], "FAIL_TO_PASS"),
        pass_to_pass=_tests(row["PASS_TO_PASS"], "PASS_TO_PASS"),
        environment_setup_commit=str(row.get("environment_setup_commit") or row["base_commit"]).strip(),
        hints_text=str(row.get("hints_text") or ""), created_at=str(row.get("created_at") or ""),
        workload=str(row.get("workload") or ""), covering_tests=_tests(row.get("covering_tests"), "covering_tests"),
        single_thread_tests=_tests(row.get("single_thread_tests"), "single_thread_tests"),
        speedup=float(speedup) if isinstance(speedup, (int, float)) and not isinstance(speedup, bool) else None,
    )


def read_instance_rows(benchmark: Any, files: Sequence[Path], subset: str | None, default: str) -> Any:
    """The rows of ``files`` (JSON, JSONL, parquet, ...) or of the Hub dataset ``subset`` names
    (:data:`HUB_IDS`, or an ``owner/name`` id; ``default`` when unset), through ``datasets.load_dataset``."""
    from pytest_jeval.core.benchmark import HubDataset
    from pytest_jeval.suite.dataset import DatasetLoadError, load_rows

    if files:
        return load_rows(benchmark, files, None, None)
    name = subset or default
    hub = HUB_IDS.get(name, name)
    if "/" not in hub:
        raise DatasetLoadError(f"{benchmark.name}: subset {name!r} is neither one of {', '.join(HUB_IDS)} nor a Hub "
                               "dataset id owner/name")
    return load_rows(dataclasses.replace(benchmark, dataset=HubDataset(path=hub, split="test")), [], None, None)
