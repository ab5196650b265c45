"""Loading benchmark samples through ``datasets.load_dataset``, hub copy or local files alike."""

from __future__ import annotations

import codecs
import gzip
import logging
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pytest_jeval.benchmark import Benchmark, LoadContext
from pytest_jeval.sample import Sample

#: ``load_dataset`` builder for each local file suffix.
_BUILDERS = {
    ".jsonl": "json",
    ".json": "json",
    ".jsonl.gz": "json",
    ".json.gz": "json",
    ".csv": "csv",
    ".tsv": "csv",
    ".parquet": "parquet",
}


class DatasetLoadError(Exception):
    """The benchmark's data could not be loaded; the message says what to do."""


def builder_for(path: Path) -> str:
    """The ``datasets`` packaged builder (json, csv, parquet) for a local data file."""
    name = path.name.lower()
    for suffix, builder in sorted(_BUILDERS.items(), key=lambda kv: -len(kv[0])):
        if name.endswith(suffix):
            return builder
    raise DatasetLoadError(f"cannot tell the format of {path}; use .jsonl, .json, .csv, .tsv or .parquet")


def check_utf8(path: Path, chunk_size: int = 1 << 20) -> None:
    """Raise :class:`DatasetLoadError` naming the file, line and byte offset of the first byte that is not UTF-8.

    Text formats only (JSON lines, JSON, CSV, TSV, gzipped or not); parquet is binary.
    """
    if builder_for(path) == "parquet":
        return
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = 0  # bytes of the file read before this chunk
    lines = 1
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            while True:
                chunk = f.read(chunk_size)
                pending = len(decoder.getstate()[0])
                try:
                    decoder.decode(chunk, final=not chunk)
                except UnicodeDecodeError as exc:
                    at = offset - pending + exc.start
                    line = lines + exc.object[: exc.start].count(b"\n")
                    raise DatasetLoadError(
                        f"{path} is not UTF-8 text: byte 0x{exc.object[exc.start]:02x} at offset {at} (line {line}) "
                        f"cannot be decoded ({exc.reason}); save the file as UTF-8"
                    ) from None
                if not chunk:
                    return
                offset += len(chunk)
                lines += chunk.count(b"\n")
    except OSError as exc:
        raise DatasetLoadError(f"cannot read {path}: {exc}") from None


def _quiet_datasets() -> Any:
    import datasets

    datasets.disable_progress_bars()
    datasets.logging.set_verbosity_error()
    logging.getLogger("datasets").setLevel(logging.ERROR)
    return datasets


def load_rows(
    benchmark: Benchmark,
    files: Sequence[Path],
    split: str | None,
    subset: str | None,
) -> Any:
    """Load the raw rows as a ``datasets.Dataset``: from ``files`` when given, else from the hub."""
    datasets = _quiet_datasets()
    if files:
        builder = builder_for(files[0])
        for f in files:
            check_utf8(f)
        split_name = split or "train"
        kwargs: dict[str, Any] = {}
        if files[0].name.lower().endswith(".tsv"):
            kwargs["delimiter"] = "\t"
        try:
            return datasets.load_dataset(
                builder, data_files={split_name: [str(f) for f in files]}, split=split_name, **kwargs
            )
        except Exception as exc:  # datasets raises many types for bad files
            raise DatasetLoadError(f"cannot load {', '.join(map(str, files))} for {benchmark.name!r}: {exc}") from exc
    hub = benchmark.dataset
    if hub is None:
        raise DatasetLoadError(f"benchmark {benchmark.name!r} has no hub dataset; set data_files in the suite")
    try:
        return datasets.load_dataset(hub.path, subset or hub.name, split=split or hub.split, revision=hub.revision)
    except Exception as exc:
        raise DatasetLoadError(
            f"cannot load {hub.path!r} (split {split or hub.split!r}) from the Hugging Face Hub for "
            f"benchmark {benchmark.name!r}: {type(exc).__name__}: {exc}. If this machine is offline, download "
            f"the dataset elsewhere and point [[benchmarks]] data_files at a local copy in the same schema."
        ) from exc


def select(samples: list[Sample], record_ids: Sequence[str] | None, max_samples: int | None, seed: int) -> list[Sample]:
    """Apply ``record_ids`` then a seeded ``max_samples`` subset, keeping source order."""
    if record_ids is not None:
        wanted = set(record_ids)
        samples = [s for s in samples if s.id in wanted]
    if max_samples is not None and max_samples < len(samples):
        rng = np.random.default_rng(seed)
        keep = np.sort(rng.permutation(len(samples))[:max_samples])
        samples = [samples[int(i)] for i in keep]
    return samples


def load_samples(
    benchmark: Benchmark,
    *,
    files: Sequence[Path] = (),
    split: str | None = None,
    subset: str | None = None,
    seed: int = 42,
    record_ids: Sequence[str] | None = None,
    max_samples: int | None = None,
    sandbox: str | None = None,
) -> tuple[list[Sample], int]:
    """Load, convert and select samples. Returns ``(samples, skipped_rows)``.

    Record ids come from ``to_sample`` and must be unique; they never depend on
    the seed or ``max_samples`` because the subset is chosen after conversion.
    """
    ctx = LoadContext(
        benchmark=benchmark.name,
        subset=subset,
        seed=seed,
        data_dir=files[0].parent if files else None,
        sandbox=sandbox,
    )
    rows = benchmark.read_rows(files, ctx) if benchmark.read_rows else load_rows(benchmark, files, split, subset)
    samples: list[Sample] = []
    skipped = 0
    seen: set[str] = set()
    id_column = benchmark.dataset.id_column if benchmark.dataset else None
    for index, row in enumerate(iter_rows(rows)):
        try:
            sample = benchmark.to_sample(row, index, ctx)
        except (KeyError, TypeError, ValueError) as exc:
            raise DatasetLoadError(
                f"row {index} of {benchmark.name!r} does not have the expected schema: {type(exc).__name__}: {exc}"
            ) from exc
        if sample is None:
            skipped += 1
            continue
        if id_column and row.get(id_column) not in (None, "") and sample.id != str(row[id_column]):
            sample = _with(sample, id=str(row[id_column]))
        if sample.index < 0:
            sample = _with_index(sample, index)
        if sample.id in seen:
            raise DatasetLoadError(f"duplicate record id {sample.id!r} in {benchmark.name!r}")
        seen.add(sample.id)
        samples.append(sample)
    return select(samples, record_ids, max_samples, seed), skipped


def iter_rows(rows: Any, batch_size: int = 1000) -> Iterator[dict[str, Any]]:
    """The rows of a ``datasets.Dataset`` as dicts, like ``iter(rows)``, read a batch at a time.

    Formatting whole batches is several times faster than formatting row by row,
    which dominated loading a 100,000-sample benchmark. Anything that is not a
    ``Dataset`` (a list of dicts, say) is iterated as it is.
    """
    batches = getattr(rows, "iter", None)
    if batches is None or not getattr(rows, "column_names", None):
        yield from rows
        return
    for batch in batches(batch_size=batch_size):
        keys = list(batch)
        for values in zip(*(batch[k] for k in keys)):
            yield dict(zip(keys, values))


def _with_index(sample: Sample, index: int) -> Sample:
    """``sample`` with its row index set: a copy, at a fraction of ``dataclasses.replace``'s cost."""
    state = getattr(sample, "__dict__", None)
    if state is None:  # a subclass with __slots__
        return _with(sample, index=index)
    out = object.__new__(type(sample))
    out.__dict__.update(state)
    out.__dict__["index"] = index
    return out


def _with(sample: Sample, **changes: Any) -> Sample:
    import dataclasses

    return dataclasses.replace(sample, **changes)
