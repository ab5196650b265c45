#!/usr/bin/env python
"""Cross-check taubench's tools and database hash against upstream τ²-bench's own code, run by hand.

For every task of the retail and airline data, upstream's toolkit (from a tau2-bench checkout, imported at run
time, never copied) and pytest-jeval's tools each replay the gold actions on a fresh database; the script
compares the database hash before and after, and every tool result text, and prints the counts::

    python scripts/taubench_crosscheck.py --tau2-src ~/tau2-bench/src --upstream-python /tmp/up/bin/python

``--upstream-python`` is a Python with upstream's few imports for these modules (pydantic, loguru,
docstring-parser, addict, deepdiff, python-dotenv, toml, pyyaml); the data is what taubench itself reads
(``--data-dir``, else the installed PyPI carriers). Only upstream's ``utils``, ``environment`` (db, tool,
toolkit) and ``domains/{retail,airline}`` modules are imported, from a temporary stub package.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

UPSTREAM_SIDE = r'''
import json, sys
sys.path.insert(0, sys.argv[1])
from loguru import logger
logger.remove()
from pydantic import BaseModel
from tau2.domains.retail.tools import RetailTools
from tau2.domains.retail.data_model import RetailDB
from tau2.domains.airline.tools import AirlineTools
from tau2.domains.airline.data_model import FlightDB

def plain(r):
    if isinstance(r, BaseModel): return r.model_dump()
    if isinstance(r, (int, float, bool)) and not isinstance(r, str): return str(r)
    if isinstance(r, (list, tuple)): return [plain(i) for i in r]
    if isinstance(r, dict): return {k: plain(v) for k, v in r.items()}
    return r

folders = json.loads(sys.argv[2])
out = {}
for domain, kit, model in (("retail", RetailTools, RetailDB), ("airline", AirlineTools, FlightDB)):
    folder = folders[domain]
    for task in json.load(open(folder + "/tasks.json")):
        tools = kit(model.load(folder + "/db.json"))
        start = tools.get_db_hash()
        results = []
        for a in (task.get("evaluation_criteria") or {}).get("actions") or []:
            try:
                r = tools.use_tool(a["name"], **a["arguments"])
                results.append(r if isinstance(r, str) else json.dumps(plain(r), default=str))
            except Exception as e:
                results.append(f"Error: {e}")
        out[f"{domain}-{task['id']}"] = {"initial": start, "gold": tools.get_db_hash(), "results": results}
json.dump(out, open(sys.argv[3], "w"))
'''


def stub_package(src: Path, into: Path) -> None:
    """Upstream's modules these checks need, under an empty ``tau2`` package (its own ``__init__`` imports all)."""
    up = src / "tau2"
    for sub in ("", "environment", "domains", "domains/retail", "domains/airline", "utils"):
        (into / "tau2" / sub).mkdir(parents=True, exist_ok=True)
        (into / "tau2" / sub / "__init__.py").write_text("")
    for name in ("__init__", "io_utils", "pydantic_utils", "utils"):
        shutil.copy(up / "utils" / f"{name}.py", into / "tau2" / "utils")
    for name in ("db", "tool", "toolkit"):
        shutil.copy(up / "environment" / f"{name}.py", into / "tau2" / "environment")
    for domain in ("retail", "airline"):
        for name in ("data_model", "tools", "utils"):
            shutil.copy(up / "domains" / domain / f"{name}.py", into / "tau2" / "domains" / domain)


def ours(data_dir: Path | None) -> tuple[dict[str, dict[str, object]], dict[str, str]]:
    """pytest-jeval's side: the same replay with taubench's tools."""
    from pytest_jeval.agents.tool import ToolContext, ToolError
    from pytest_jeval.benchmarks.taubench import bench_taubench as bench
    from pytest_jeval.benchmarks.taubench.reward import domain_tools, initial_env
    from pytest_jeval.core.benchmark import LoadContext

    ctx = LoadContext(benchmark="taubench", subset=None, seed=0, data_dir=None, local_dir=data_dir)
    rows = bench.read_rows([], ctx)
    folders = {row["domain"]: row["folder"] for row in rows}
    out: dict[str, dict[str, object]] = {}
    for i, row in enumerate(rows):
        sample = bench.to_sample(row, i, ctx)
        assert sample is not None
        env = initial_env(sample)
        start = env.hash()
        results = []
        for action in (sample.target or {}).get("actions") or []:
            fn = domain_tools(env.domain)[action["name"]].fn
            assert fn is not None
            try:
                ctx = ToolContext(sample=sample, workspace=Path("."), state=env)
                results.append(fn(**action["arguments"], ctx=ctx))
            except ToolError as exc:
                results.append(f"Error: {exc}")
        out[sample.id] = {"initial": start, "gold": env.hash(), "results": results}
    return out, folders


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tau2-src", type=Path, required=True, help="a tau2-bench checkout's src/ folder")
    parser.add_argument("--upstream-python", default=sys.executable, help="a Python with upstream's imports")
    parser.add_argument("--data-dir", type=Path, default=None, help="taubench's data_dir (default: the carriers)")
    args = parser.parse_args()
    mine, folders = ours(args.data_dir)
    with tempfile.TemporaryDirectory(prefix="tau2-crosscheck-") as tmp:
        stub_package(args.tau2_src, Path(tmp))
        result = Path(tmp) / "upstream.json"
        subprocess.run([args.upstream_python, "-c", UPSTREAM_SIDE, tmp, json.dumps(folders), str(result)], check=True)
        theirs = json.loads(result.read_text())
    hashes = sum(1 for k, v in mine.items() if (v["initial"], v["gold"]) != (theirs[k]["initial"], theirs[k]["gold"]))
    texts = [(k, i) for k, v in mine.items() for i, (a, b) in enumerate(zip(v["results"], theirs[k]["results"]))
             if a != b]
    calls = sum(len(v["results"]) for v in mine.values())  # type: ignore[arg-type]
    print(f"tasks: {len(mine)}; gold tool calls: {calls}")
    print(f"database hash differs (before or after the gold actions): {hashes} tasks")
    print(f"tool result text differs: {len(texts)} calls {texts[:5]}")
    return 1 if hashes or texts else 0


if __name__ == "__main__":
    sys.exit(main())
