"""DeepPlanning's shopping cases: from a local copy (``data_dir``) or the Hub dataset ``Qwen/DeepPlanning``.

Upstream publishes one archive per level, ``database_level{1,2,3}.tar.gz``, each unpacking to
``database_level<L>/case_<id>/`` with the case's files:

* ``validation_cases.json``: ``query``, ``ground_truth_products`` (``product_id``, ...),
  ``ground_truth_coupons`` (coupon name -> quantity), ``meta_info``;
* ``products.jsonl``: the case's catalogue, one product a line;
* ``user_info.json``: the user (address, measurements, ``coupons`` held, ``is_vip``);
* ``cart.json``: the initial cart (``items``, ``used_coupons``, ``summary``).

A ``data_dir`` may hold the unpacked ``database_level<L>/`` folders, or the archives (at its top or in
``database_zip/``, as upstream's README places them); without one the archives are downloaded from the
Hub. Archives are unpacked once into the user's cache (``~/.cache/pytest-jeval/deepplanning``). A query
missing from ``validation_cases.json`` is read from upstream's ``data/level_<L>_query_meta.json`` when the
``data_dir`` has it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tarfile
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator

from pytest_jeval import LoadContext, Sample
from pytest_jeval.benchmarks.deepplanning import travel_data
from pytest_jeval.benchmarks.deepplanning.shop import Case
from pytest_jeval.suite.dataset import DatasetLoadError

HUB = "Qwen/DeepPlanning"
LEVELS = (1, 2, 3)
class Options(BaseModel):
    """``[benchmarks.options]`` of ``deepplanning``."""

    model_config = ConfigDict(extra="forbid")

    domain: Literal["shopping", "travel"] = "shopping"
    """``shopping`` (levels 1-3, the cart is scored) or ``travel`` (the plan is scored by the constraint checks)."""
    levels: list[int] = [1, 2, 3]
    """The shopping levels to run (1: cheapest products; 2: within a budget; 3: with coupons)."""
    language: Literal["en", "zh"] = "en"
    """The travel set's language (upstream's ``travelplanning_query_<lang>.json`` and ``database_<lang>``)."""

    @field_validator("levels")
    @classmethod
    def _levels(cls, value: list[int]) -> list[int]:
        bad = [v for v in value if v not in LEVELS]
        if bad or not value or len(set(value)) != len(value):
            raise ValueError(f"levels must be distinct values among 1, 2, 3 (got {value})")
        return sorted(value)


def cache_root() -> Path:
    """Where archives are unpacked (``$XDG_CACHE_HOME`` or ``~/.cache``, then ``pytest-jeval/deepplanning``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pytest-jeval" / "deepplanning"


def _extract(tar: tarfile.TarFile, target: Path) -> None:
    """Extract files and folders only, below ``target`` (tarfile's ``data`` filter; checked by hand on a
    Python without it)."""
    if hasattr(tarfile, "data_filter"):
        tar.extractall(target, filter="data")
        return
    for member in tar.getmembers():  # pragma: no cover - Python < 3.10.12
        name = Path(member.name)
        if name.is_absolute() or ".." in name.parts or not (member.isfile() or member.isdir()):
            raise tarfile.TarError(f"unsafe member {member.name!r}")
    tar.extractall(target)  # every member was checked above


def unpack(archive: Path, level: int) -> Path:
    """The ``database_level<L>`` folder of an archive, unpacked once (keyed by the archive's bytes)."""
    digest = hashlib.sha256()
    try:
        with open(archive, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    except OSError as exc:
        raise DatasetLoadError(f"deepplanning: cannot read {archive}: {exc}") from None
    target = cache_root() / digest.hexdigest()[:16]
    folder = target / f"database_level{level}"
    if folder.is_dir():
        return folder
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(dir=target.parent, prefix=".unpack-"))
    try:
        with tarfile.open(archive, "r:gz") as tar:
            _extract(tar, scratch)
        found = scratch / f"database_level{level}"
        if not found.is_dir():
            raise DatasetLoadError(f"deepplanning: {archive} has no database_level{level}/ folder")
        try:
            os.rename(scratch, target)  # another process may have unpacked it first: keep that one
        except OSError:
            pass
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise DatasetLoadError(f"deepplanning: {archive} is not a readable .tar.gz archive: {exc}") from None
    finally:
        if scratch.exists():
            shutil.rmtree(scratch, ignore_errors=True)
    return folder


def _hub_archive(level: int) -> Path:
    name = f"database_level{level}.tar.gz"
    try:
        from huggingface_hub import hf_hub_download

        return Path(hf_hub_download(repo_id=HUB, repo_type="dataset", filename=name))
    except Exception as exc:
        raise DatasetLoadError(
            f"cannot download {name} of {HUB!r} from the Hugging Face Hub for 'deepplanning': "
            f"{type(exc).__name__}: {exc}. If this machine is offline, download the archives elsewhere and set "
            "data_dir to the folder holding them (or their unpacked database_level<N>/ folders)") from exc


def level_folder(local: Path | None, level: int) -> Path:
    """The unpacked ``database_level<L>`` folder of a level (see the module docstring)."""
    if local is None:
        return unpack(_hub_archive(level), level)
    folder = local / f"database_level{level}"
    if folder.is_dir():
        return folder
    for archive in (local / f"database_level{level}.tar.gz", local / "database_zip" / f"database_level{level}.tar.gz"):
        if archive.is_file():
            return unpack(archive, level)
    raise DatasetLoadError(f"deepplanning: {local} holds neither database_level{level}/ nor "
                           f"database_level{level}.tar.gz (at its top or in database_zip/); download it from "
                           f"the Hub dataset {HUB!r}, or leave level {level} out with [benchmarks.options] levels")


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DatasetLoadError(f"deepplanning: {path} is missing") from None
    except (OSError, ValueError) as exc:
        raise DatasetLoadError(f"deepplanning: {path} is malformed: {exc}") from None


def read_case(directory: Path) -> Case:
    """A case's files, checked: each must exist and parse (a clear error names the file)."""
    products: list[dict[str, Any]] = []
    path = directory / "products.jsonl"
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise DatasetLoadError(f"deepplanning: {path} is missing") from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            product = json.loads(line)
        except ValueError as exc:
            raise DatasetLoadError(f"deepplanning: {path} line {n} is malformed: {exc}") from None
        if not isinstance(product, dict) or "product_id" not in product:
            raise DatasetLoadError(f"deepplanning: {path} line {n} is not a product (no product_id)")
        products.append(product)
    user, cart, validation = (_json(directory / name) for name in ("user_info.json", "cart.json",
                                                                   "validation_cases.json"))
    for name, value in (("user_info.json", user), ("cart.json", cart), ("validation_cases.json", validation)):
        if not isinstance(value, dict):
            raise DatasetLoadError(f"deepplanning: {directory / name} is malformed: not a JSON object")
    if not isinstance(validation.get("ground_truth_products", []), list):
        raise DatasetLoadError(f"deepplanning: {directory / 'validation_cases.json'} is malformed: "
                               "ground_truth_products is not a list")
    return Case(directory=directory, products=products, user=user, cart=cart, validation=validation)


def _queries(local: Path | None, level: int) -> dict[str, str]:
    if local is None:
        return {}
    path = local / "data" / f"level_{level}_query_meta.json"
    if not path.is_file():
        return {}
    rows = _json(path)
    return {str(r["id"]): str(r["query"]) for r in rows if isinstance(r, dict) and "id" in r}


def _case_key(path: Path) -> tuple[int, str]:
    suffix = path.name.removeprefix("case_")
    return (int(suffix), "") if suffix.isdigit() else (1 << 30, suffix)


def read_rows(files: Sequence[Path], ctx: LoadContext) -> Iterable[dict[str, Any]]:
    """One row per case of the chosen levels: its level, its folder and its query."""
    options = ctx.options if isinstance(ctx.options, Options) else Options()
    if options.domain == "travel":
        return travel_data.read_rows(ctx.local_dir, options.language)
    rows = []
    for level in options.levels:
        folder = level_folder(ctx.local_dir, level)
        queries = _queries(ctx.local_dir, level)
        cases = sorted((p for p in folder.iterdir() if p.is_dir() and p.name.startswith("case_")), key=_case_key)
        if not cases:
            raise DatasetLoadError(f"deepplanning: {folder} holds no case_<id>/ folders")
        for directory in cases:
            rows.append({"level": level, "case": directory.name, "path": str(directory),
                         "query": queries.get(directory.name.removeprefix("case_"))})
    return rows


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample:
    """One case (its files are read and checked here, before any request)."""
    if row.get("domain") == "travel":
        meta = row["meta_info"]
        return Sample(id=f"travel-{row['language']}-id_{row['id']}", input=str(row["query"]),
                      target={"meta_info": meta}, subject=f"travel-{row['language']}",
                      metadata={"domain": "travel", "case_dir": row["path"], "case_id": row["id"],
                                "language": row["language"]})
    directory = Path(row["path"])
    case = read_case(directory)
    query = case.validation.get("query") or row.get("query")
    if not query:
        raise DatasetLoadError(f"deepplanning: {directory / 'validation_cases.json'} has no query (and no "
                               f"data/level_{row['level']}_query_meta.json gives one)")
    level = int(row["level"])
    gold = case.validation.get("ground_truth_products") or []
    return Sample(id=f"level{level}-{row['case']}", input=str(query),
                  target={"products": sorted({str(p.get("product_id")) for p in gold if p.get("product_id")}),
                          "coupons": dict(case.validation.get("ground_truth_coupons") or {})},
                  subject=f"level{level}", metadata={"level": level, "case_dir": str(directory)})
