"""``jeval rescore``: score stored answers again; no model is queried.

The scorer is ``--scorer NAME`` or, by default, the one the benchmark of the records
names (``Benchmark.scorer``, a key of :mod:`pytest_jeval.scoring.registry`). Errored
records stay as they are. Every other record gets the scorer's verdict in the fields
the plugin fills from a ``Score`` (``is_correct``, ``score``, ``extracted``,
``expected``, ``unscored``, ``scoring_metadata`` and the score's extra fields); a
scorer that raises makes the record wrong with the exception in ``scoring_metadata``,
as a crashing scorer does during a run. Where the scoring asks the judge, the stored
judge verdict is kept; ``--reparse-judge`` parses the stored judge reply again with
the current parser. The new JSONL gets its ``.summary.json``, computed the way the
results writer computes one, with the run facts (start, end, skipped rows) of the
original summary.
"""

from __future__ import annotations

import argparse
import importlib
import shutil
import sys
from pathlib import Path
from typing import Any

from pytest_jeval.cli._read import FAILED, report_problems
from pytest_jeval.core.paths import rescored_path, trajectories_path
from pytest_jeval.core.sample import Sample
from pytest_jeval.results.jsonl import write_records
from pytest_jeval.results.reader import (
    ResultFile,
    ResultFileError,
    load_result,
    recompute_summary,
    summary_differences,
    summary_path,
)
from pytest_jeval.results.records import plain, verdict_fields
from pytest_jeval.results.summary import write_summary
from pytest_jeval.scoring.registry import (
    call_scorer,
    scorer_names,
    scorer_needs_sample,
)


def rescore_record(record: dict[str, Any], scorer: str, *, sample: Sample | None = None,
                   reparse_judge: bool = False, workers: int | None = None) -> dict[str, Any]:
    """A copy of ``record`` with the verdict of the scorer registered as ``scorer``
    (an errored record is returned unchanged)."""
    out = dict(record)
    if record.get("error") is not None:
        return out
    try:
        score = call_scorer(scorer, record, sample=sample, reparse_judge=reparse_judge, workers=workers)
    except Exception as exc:
        out.update(verdict_fields(None, expected=record.get("expected"),
                                  failure=f"{type(exc).__name__}: {exc}"[:2000]))
        return out
    out.update(verdict_fields(score, expected=record.get("expected")))
    return {k: plain(v) for k, v in out.items()}


def default_output(path: Path, scorer: str) -> Path:
    """``{stem}.rescored-{scorer}.jsonl`` beside the input."""
    return rescored_path(path, scorer)


def benchmark_of(source: ResultFile) -> str | None:
    """The one benchmark the records name (else the stored summary's); ResultFileError for several."""
    names = {r["benchmark"] for r in source.records if r.get("benchmark") is not None}
    if len(names) > 1:
        raise ResultFileError(f"{source.path}: records of several benchmarks ({', '.join(sorted(names))}); "
                              "rescore one benchmark's file at a time")
    if names:
        return str(names.pop())
    stored = (source.stored or {}).get("benchmark")
    return stored if isinstance(stored, str) else None


def builtin(name: str | None) -> Any:
    """The built-in :class:`Benchmark` called ``name`` and its module, or (None, None)."""
    from pytest_jeval.core.benchmark import find_benchmark
    from pytest_jeval.suite.catalog import builtin_index

    module_name = builtin_index().get(name) if name else None
    if module_name is None:
        return None, None
    module = importlib.import_module(module_name)
    return find_benchmark(module), module


def choose_scorer(requested: str | None, benchmark: str | None) -> str:
    """``requested``, or the scorer the built-in ``benchmark`` names; ResultFileError otherwise."""
    from pytest_jeval.suite.catalog import all_scorer_names, load_scorer

    if requested:
        try:
            load_scorer(requested)
        except KeyError as exc:  # the message names the known ones
            raise ResultFileError(str(exc)) from None
        return requested
    bench, _ = builtin(benchmark)
    if bench is None:
        raise ResultFileError(f"{benchmark or 'the records'}: not a built-in benchmark, so its scorer is unknown; "
                              f"name one with --scorer ({', '.join(all_scorer_names())})")
    if bench.scorer not in scorer_names():
        raise ResultFileError(f"benchmark {benchmark!r} names no registered scorer ({bench.scorer!r}); "
                              f"name one with --scorer ({', '.join(all_scorer_names())})")
    return str(bench.scorer)


def load_samples_for(benchmark: str | None, data: list[str], split: str | None) -> dict[str, Sample]:
    """The benchmark's samples by record id, from ``data`` (else its bundled files, else the Hub)."""
    from pytest_jeval.suite.dataset import DatasetLoadError, load_samples

    bench, module = builtin(benchmark)
    if bench is None:
        raise ResultFileError(f"this scorer needs the samples, and {benchmark!r} is not a built-in benchmark")
    files = [Path(p) for p in data] or bench.default_files(getattr(module, "__file__", None))
    for f in files:
        if not f.is_file():
            raise ResultFileError(f"{f}: no such data file")
    try:
        samples, _ = load_samples(bench, files=files, split=split)
    except DatasetLoadError as exc:
        raise ResultFileError(
            f"cannot load the samples of {benchmark!r} ({exc}); give the run's data with --data") from exc
    return {s.id: s for s in samples}


def sample_of(record: dict[str, Any], samples: dict[str, Sample]) -> Sample | None:
    """The sample a record was made from; a repeated run (``<id>@<n>``, ``repeat_of``, or an agent record's
    ``agent.repeat_of``) gets its sample as the run had it (the repeat's id and ``repeat`` / ``repeat_of``
    metadata)."""
    found = samples.get(str(record["record_id"]))
    if found is not None:
        return found
    from pytest_jeval.results.repeats import repeat_of

    repeat = repeat_of(record)
    base = samples.get(repeat[0]) if repeat is not None else None
    if base is None or repeat is None:
        return None
    import dataclasses

    return dataclasses.replace(base, id=str(record["record_id"]),
                               metadata={**base.metadata, "repeat": repeat[1], "repeat_of": base.id})


def run(args: argparse.Namespace) -> int:
    """Rescore one file, write the JSONL and its summary, print what changed."""
    source = load_result(args.file, trajectories=True)  # an agent run's sidecar holds what its rescorer replays
    if source.bad_lines:
        report_problems([source])
        print(f"jeval: error: {source.path}: {source.bad_lines} line(s) cannot be read; rescoring would "
              "drop them, so nothing was written", file=sys.stderr)
        return FAILED
    status = report_problems([source])  # a stored summary that was ignored
    benchmark = benchmark_of(source)
    name = choose_scorer(args.scorer, benchmark)
    out = Path(args.output) if args.output else default_output(source.path, name)
    if out.resolve() == source.path.resolve():
        raise ResultFileError("the output would overwrite the input; choose another -o")
    samples: dict[str, Sample] = {}
    if scorer_needs_sample(name):
        samples = load_samples_for(benchmark, args.data or [], args.split)
        missing = [str(r["record_id"]) for r in source.records
                   if r.get("error") is None and sample_of(r, samples) is None]
        if missing:
            raise ResultFileError(f"{len(missing)} record(s) not in the benchmark's data (first: {missing[0]!r}); "
                                  "give the run's data files with --data")
    records = [_without_sidecar(rescore_record(with_trajectory(r, source), name, sample=sample_of(r, samples),
                                               reparse_judge=args.reparse_judge, workers=args.exec_workers), r)
               for r in source.records]
    write_records(out, records)
    sidecar = trajectories_path(source.path)
    if sidecar.is_file() and any(r.get("trajectory") is None for r in source.records):
        shutil.copyfile(sidecar, trajectories_path(out))  # the report of the new file shows the same episodes
    summary = recompute_summary(records, source.stored)
    write_summary(summary_path(out), summary)
    changed = sum(1 for old, new in zip(source.records, records)
                  if (old.get("is_correct"), old.get("score")) != (new.get("is_correct"), new.get("score")))
    before = source.summary
    how = " (judge replies parsed again)" if args.reparse_judge else ""
    kept = not_rescored(records)
    print(f"rescored {len(records)} records of {source.path} with {name!r}{how}: {changed} verdicts changed"
          + _kept_text(kept))
    print(f"accuracy: {_acc(before)} -> {_acc(summary)}  (correct {before['correct']} -> {summary['correct']}, "
          f"unscored {before['unscored']} -> {summary['unscored']}, errors {summary['errors']})")
    diffs = [key for key, _, _ in summary_differences(before, summary)]
    print(f"summary fields changed: {', '.join(diffs) if diffs else 'none'}")
    print(f"wrote {out} and {summary_path(out).name}")
    return status


def with_trajectory(record: dict[str, Any], source: ResultFile) -> dict[str, Any]:
    """``record`` with its trajectory inline: its own, else the one the ``.trajectories.jsonl`` sidecar
    beside the file holds for its id (the default ``[run] trajectories``), else none."""
    if record.get("trajectory") is not None:
        return record
    found = source.trajectories.get(str(record.get("record_id")))
    return record if found is None else {**record, "trajectory": found}


def _without_sidecar(rescored: dict[str, Any], original: dict[str, Any]) -> dict[str, Any]:
    """The rescored record as the input stored it: a trajectory read from the sidecar stays there."""
    if original.get("trajectory") is None and "trajectory" in rescored:
        rescored = {k: v for k, v in rescored.items() if k != "trajectory"}
        if "trajectory" in original:
            rescored["trajectory"] = original["trajectory"]
    return rescored


def not_rescored_reason(record: dict[str, Any]) -> str | None:
    """Why the scorer kept ``record``'s stored verdict instead of scoring it again, or None.

    Rescorers say so in the new ``scoring_metadata``: ``rescore_note`` ("not rescored: why") or
    ``rescore = "stored"`` with ``rescore_reason``.
    """
    meta = record.get("scoring_metadata")
    if record.get("error") is not None or not isinstance(meta, dict):
        return None
    note = meta.get("rescore_note")
    if isinstance(note, str) and note.startswith("not rescored"):
        return note.removeprefix("not rescored").lstrip(": ") or "the scorer kept the stored verdict"
    if meta.get("rescore") == "stored":
        return str(meta.get("rescore_reason") or "the record holds no trajectory")
    return None


def not_rescored(records: list[dict[str, Any]]) -> dict[str, int]:
    """How many records kept their stored verdict, by reason."""
    counts: dict[str, int] = {}
    for record in records:
        reason = not_rescored_reason(record)
        if reason is not None:
            counts[reason] = counts.get(reason, 0) + 1
    return counts


def _kept_text(kept: dict[str, int]) -> str:
    if not kept:
        return ""
    why = "; ".join(f"{n} {reason}" for reason, n in sorted(kept.items(), key=lambda item: -item[1]))
    return f"; {sum(kept.values())} record(s) not rescored, their stored verdicts kept ({why})"


def _acc(summary: dict[str, Any]) -> str:
    value = summary.get("accuracy")
    return "-" if value is None else f"{value:.4f}"


__all__ = ["benchmark_of", "choose_scorer", "default_output", "not_rescored", "not_rescored_reason", "rescore_record",
           "run", "with_trajectory"]
