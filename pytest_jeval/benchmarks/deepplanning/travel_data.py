"""DeepPlanning's travel cases: from a local copy (``data_dir``) or the Hub dataset ``Qwen/DeepPlanning``.

Upstream's ``travelplanning/`` folder holds the queries, ``data/travelplanning_query_<lang>.json`` (a list
of ``{"id", "query", "meta_info": {"org", "dest", "days", "depart_date", "return_date", "people_number",
"room_number", "depart_weekday", "hard_constraints"}}``), and each case's database,
``database/database_<lang>/id_<N>/`` (unpacked from ``database_<lang>.zip``; see :mod:`.travel_db`).

A ``data_dir`` may be that folder, or hold the query file and ``database_<lang>/`` (or the zip) at its
top. Without one, the files are downloaded from the Hub dataset (found there by name); a zip is
unpacked once into the user's cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from pytest_jeval.benchmarks.deepplanning.travel_db import TravelDB
from pytest_jeval.suite.dataset import DatasetLoadError

HUB = "Qwen/DeepPlanning"


def _first(paths: list[Path]) -> Path | None:
    return next((p for p in paths if p.exists()), None)


def _hub_file(name: str) -> Path:
    """A file of the Hub dataset, found by its name anywhere in the repository."""
    try:
        from huggingface_hub import HfApi, hf_hub_download

        files = HfApi().list_repo_files(HUB, repo_type="dataset")
        match = next((f for f in files if f.rsplit("/", 1)[-1] == name), None)
        if match is None:
            raise FileNotFoundError(f"{HUB} has no file named {name}")
        return Path(hf_hub_download(repo_id=HUB, repo_type="dataset", filename=match))
    except Exception as exc:
        raise DatasetLoadError(
            f"cannot download {name} of {HUB!r} from the Hugging Face Hub for 'deepplanning' (travel): "
            f"{type(exc).__name__}: {exc}. If this machine is offline, copy upstream's travelplanning/ folder "
            f"(data/travelplanning_query_<lang>.json and database/database_<lang>/ or its zip) and set data_dir "
            "to it") from exc


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pytest-jeval" / "deepplanning"


def unzip(archive: Path, lang: str) -> Path:
    """The ``database_<lang>`` folder of a zip, unpacked once (keyed by its bytes)."""
    digest = hashlib.sha256()
    try:
        with open(archive, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    except OSError as exc:
        raise DatasetLoadError(f"deepplanning: cannot read {archive}: {exc}") from None
    target = _cache_root() / f"travel-{digest.hexdigest()[:16]}"
    if not target.is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(dir=target.parent, prefix=".unzip-"))
        try:
            with zipfile.ZipFile(archive) as zf:
                for member in zf.namelist():
                    parts = Path(member).parts
                    if Path(member).is_absolute() or ".." in parts:
                        raise DatasetLoadError(f"deepplanning: {archive} has an unsafe member {member!r}")
                zf.extractall(scratch)
            try:
                os.rename(scratch, target)
            except OSError:
                pass  # another process unpacked it first
        except (zipfile.BadZipFile, OSError) as exc:
            raise DatasetLoadError(f"deepplanning: {archive} is not a readable zip archive: {exc}") from None
        finally:
            if scratch.exists():
                shutil.rmtree(scratch, ignore_errors=True)
    folder = _first([target / f"database_{lang}", target])
    assert folder is not None
    return folder


def database_root(local: Path | None, lang: str) -> Path:
    """The folder holding the cases' ``id_<N>/`` databases."""
    name = f"database_{lang}"
    if local is None:
        return unzip(_hub_file(f"{name}.zip"), lang)
    folder = _first([local / "database" / name, local / name])
    if folder is not None and folder.is_dir():
        return folder
    archive = _first([local / "database" / f"{name}.zip", local / f"{name}.zip"])
    if archive is not None:
        return unzip(archive, lang)
    raise DatasetLoadError(f"deepplanning: {local} holds neither {name}/ nor {name}.zip (at its top or in "
                           f"database/); download {name}.zip from the Hub dataset {HUB!r}")


def query_file(local: Path | None, lang: str) -> Path:
    """The travel queries of a language."""
    name = f"travelplanning_query_{lang}.json"
    if local is None:
        return _hub_file(name)
    found = _first([local / "data" / name, local / name])
    if found is None:
        raise DatasetLoadError(f"deepplanning: {local} has no data/{name} (upstream's travelplanning/data/{name})")
    return found


def read_queries(path: Path) -> list[dict[str, Any]]:
    """The query file's cases, each checked (``id``, ``query`` and ``meta_info`` with ``org`` and ``days``)."""
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DatasetLoadError(f"deepplanning: {path} is missing") from None
    except (OSError, ValueError) as exc:
        raise DatasetLoadError(f"deepplanning: {path} is malformed: {exc}") from None
    rows = [rows] if isinstance(rows, dict) else rows
    if not isinstance(rows, list):
        raise DatasetLoadError(f"deepplanning: {path} is malformed: not a list of cases")
    for n, row in enumerate(rows):
        meta = row.get("meta_info") if isinstance(row, dict) else None
        if not isinstance(row, dict) or "id" not in row or not row.get("query") or not isinstance(meta, dict) \
                or not meta.get("org") or not meta.get("days"):
            raise DatasetLoadError(f"deepplanning: {path} case #{n} is malformed: it needs id, query and meta_info "
                                   "with org and days")
    return rows


def read_rows(local: Path | None, lang: str) -> list[dict[str, Any]]:
    """One row per travel case: its query, meta_info and database folder (checked now, before any request)."""
    root = database_root(local, lang)
    rows = []
    for case in read_queries(query_file(local, lang)):
        directory = root / f"id_{case['id']}"
        TravelDB.load(directory)
        rows.append({"domain": "travel", "language": lang, "id": str(case["id"]), "query": case["query"],
                     "meta_info": case["meta_info"], "path": str(directory)})
    return rows
