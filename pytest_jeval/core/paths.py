"""The one place that names results files.

Layout of an output directory::

    {benchmark}_{model-slug}.jsonl               one record per line, per (benchmark, model)
    {benchmark}_{model-slug}.jsonl.summary.json  that pair's summary
    summary.json                                 the aggregate over every pair
    .jeval.lock                                  held while a run writes here

``benchmark`` and ``model`` are the suite entries' keys: their ``label``, else their ``name``.
The model slug keeps letters and digits of every script (``модель`` stays
``модель``) and replaces other characters by ``-``. A suite whose pairs would
share a file name (``calc`` + ``hard_m`` and ``calc_hard`` + ``m``; two models
whose names differ only in punctuation or case) is refused before any request by
:func:`colliding_pairs`, naming both entries.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from pathlib import Path

__all__ = [
    "AGGREGATE_NAME",
    "LOCK_NAME",
    "aggregate_path",
    "benchmark_name_problem",
    "colliding_pairs",
    "jsonl_files",
    "jsonl_path",
    "lock_path",
    "model_slug",
    "rescored_path",
    "results_stem",
    "summary_path",
    "trajectories_path",
]

AGGREGATE_NAME = "summary.json"
LOCK_NAME = ".jeval.lock"
SUMMARY_SUFFIX = ".summary.json"
TRAJECTORIES_SUFFIX = ".trajectories.jsonl"
_MAX_NAME_BYTES = 255  # one path component on Linux, macOS and Windows file systems

_UNSAFE = re.compile(r"[^\w.-]+")
_BENCHMARK_NAME = re.compile(r"[^\W_][\w.+-]*")


def model_slug(name: str) -> str:
    """``qwen3:8b`` -> ``qwen3-8b``: characters other than letters, digits, ``_``, ``.`` and ``-``
    become ``-`` (letters and digits of every script are kept)."""
    return _UNSAFE.sub("-", name).strip("-") or "model"


def results_stem(benchmark: str, model: str) -> str:
    """``{benchmark}_{model-slug}``, the shared start of a pair's file names."""
    return f"{benchmark}_{model_slug(model)}"


def jsonl_path(output_dir: Path, benchmark: str, model: str) -> Path:
    """``{output_dir}/{benchmark}_{model-slug}.jsonl``."""
    return output_dir / f"{results_stem(benchmark, model)}.jsonl"


def summary_path(jsonl: Path) -> Path:
    """``{jsonl}.summary.json``, the summary written beside a JSONL file."""
    return jsonl.with_name(jsonl.name + SUMMARY_SUFFIX)


def trajectories_path(jsonl: Path) -> Path:
    """``{jsonl}.trajectories.jsonl``, the agent trajectories written beside a JSONL file."""
    return jsonl.with_name(jsonl.name + TRAJECTORIES_SUFFIX)


def aggregate_path(output_dir: Path) -> Path:
    """``{output_dir}/summary.json``."""
    return output_dir / AGGREGATE_NAME


def jsonl_files(directory: Path) -> list[Path]:
    """Every ``*.jsonl`` file of a results directory, sorted by name."""
    return sorted(p for p in directory.glob("*.jsonl") if not p.name.endswith(TRAJECTORIES_SUFFIX))


def rescored_path(jsonl: Path, scorer: str) -> Path:
    """``{stem}.rescored-{scorer}.jsonl`` beside ``jsonl`` (where ``jeval rescore`` writes by default)."""
    return jsonl.with_name(f"{jsonl.stem}.rescored-{scorer}.jsonl")


def lock_path(output_dir: Path) -> Path:
    """``{output_dir}/.jeval.lock``."""
    return output_dir / LOCK_NAME


def benchmark_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a benchmark name (it is part of file names and test ids), or None."""
    if not _BENCHMARK_NAME.fullmatch(name):
        return (f"{name!r} is not usable as a file name: use letters, digits and '_', '-', '.', '+' "
                "(starting with a letter or digit; no '/', '..' or spaces)")
    return None


def _fold(name: str) -> str:
    """The key under which two names share a file on case-insensitive, normalizing file systems."""
    return unicodedata.normalize("NFC", name).casefold()


def colliding_pairs(benchmarks: Sequence[str], models: Sequence[str]) -> list[str]:
    """One message per pair of (benchmark, model) entries whose results files would coincide.

    Names that differ only in case or Unicode normalization count as the same file
    (they are on macOS and Windows). A name too long for the file system is reported too.
    """
    problems: list[str] = []
    seen: dict[str, tuple[int, int]] = {}
    for bi, bench in enumerate(benchmarks):
        for mi, model in enumerate(models):
            stem = results_stem(bench, model)
            longest = f"{stem}.jsonl{max(SUMMARY_SUFFIX, TRAJECTORIES_SUFFIX, key=len)}"
            if len(longest.encode("utf-8")) > _MAX_NAME_BYTES:
                problems.append(f"benchmarks[{bi}] {bench!r} with models[{mi}] {model!r}: the file name "
                                f"{longest!r} is longer than {_MAX_NAME_BYTES} bytes")
                continue
            key = _fold(stem)
            if key in seen:
                ob, om = seen[key]
                problems.append(
                    f"benchmarks[{ob}] {benchmarks[ob]!r} with models[{om}] {models[om]!r} and "
                    f"benchmarks[{bi}] {bench!r} with models[{mi}] {model!r} would both write {stem}.jsonl"
                )
            else:
                seen[key] = (bi, mi)
    return problems

