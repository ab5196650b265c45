"""Loading benchmark samples through ``datasets.load_dataset``, hub copy or local files alike.

A small local JSON-lines file of flat rows is read with :mod:`json` instead, where that gives the
very rows ``datasets`` would (:mod:`pytest_jeval.suite.plain_jsonl`): a second less of start-up.
"""

from __future__ import annotations

import codecs
import gzip
import itertools
import logging
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pytest_jeval.core.benchmark import Benchmark, LoadContext
from pytest_jeval.core.sample import Sample
from pytest_jeval.suite.plain_jsonl import plain_jsonl_rows

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
    A chunk of ASCII bytes is valid as it is, so only the others are decoded, and
    lines are counted only to name the bad byte's line.
    """
    if builder_for(path) == "parquet":
        return
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = 0  # bytes of the file read before this chunk
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            while True:
                chunk = f.read(chunk_size)
                pending = len(decoder.getstate()[0])
                if chunk and not pending and chunk.isascii():
                    offset += len(chunk)
                    continue
                try:
                    decoder.decode(chunk, final=not chunk)
                except UnicodeDecodeError as exc:
                    at = offset - pending + exc.start
                    line = _line_at(path, opener, offset) + exc.object[: exc.start].count(b"\n")
                    raise DatasetLoadError(
                        f"{path} is not UTF-8 text: byte 0x{exc.object[exc.start]:02x} at offset {at} (line {line}) "
                        f"cannot be decoded ({exc.reason}); save the file as UTF-8"
                    ) from None
                if not chunk:
                    return
                offset += len(chunk)
    except OSError as exc:
        raise DatasetLoadError(f"cannot read {path}: {exc}") from None


def _line_at(path: Path, opener: Any, offset: int, chunk_size: int = 1 << 20) -> int:
    """The line number (from 1) at byte ``offset`` of the (decompressed) file."""
    lines = 1
    with opener(path, "rb") as f:
        while offset > 0:
            chunk = f.read(min(chunk_size, offset))
            if not chunk:
                break
            lines += chunk.count(b"\n")
            offset -= len(chunk)
    return lines


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
        import numpy as np

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
    options: Any = None,
    local_dir: Path | None = None,
) -> tuple[list[Sample], int]:
    """Load, convert and select samples. Returns ``(samples, skipped_rows)``.

    Record ids come from ``to_sample`` and must be unique; they never depend on
    the seed or ``max_samples``. A ``max_samples`` subset of a ``datasets.Dataset``
    walks a seeded permutation of its rows and converts only the rows it looks at
    (:func:`_walk_subset`); with ``record_ids``, every row is scanned for its id
    (:func:`_load_subset`), keeping only positions and ids, and the chosen rows alone
    become samples: the same records as converting every row and calling :func:`select`.
    """
    ctx = LoadContext(
        benchmark=benchmark.name,
        subset=subset,
        seed=seed,
        data_dir=files[0].parent if files else local_dir,
        sandbox=sandbox,
        options=options,
        local_dir=local_dir,
        split=split,
    )
    rows: Any = None
    if benchmark.read_rows:
        rows = benchmark.read_rows(files, ctx)
    elif record_ids is None:
        rows = plain_jsonl_rows(files)  # None unless datasets would read exactly these rows
    if rows is None:
        rows = load_rows(benchmark, files, split, subset)
    id_column = benchmark.dataset.id_column if benchmark.dataset else None
    walkable = _is_dataset(rows) or (isinstance(rows, list) and not benchmark.read_rows)  # the plain JSONL rows
    if walkable and record_ids is None and max_samples is not None and max_samples < len(rows):
        return _walk_subset(benchmark, rows, ctx, id_column, max_samples, seed)
    if _is_dataset(rows) and record_ids is not None:
        return _load_subset(benchmark, rows, ctx, id_column, record_ids, max_samples, seed)
    samples: list[Sample] = []
    skipped = 0
    seen: set[str] = set()
    for index, row in enumerate(iter_rows(rows)):
        sample = _convert(benchmark, row, index, ctx, id_column)
        if sample is None:
            skipped += 1
            continue
        if sample.index < 0:
            sample = _with_index(sample, index)
        if sample.id in seen:
            raise DatasetLoadError(f"duplicate record id {sample.id!r} in {benchmark.name!r}")
        seen.add(sample.id)
        samples.append(sample)
    return select(samples, record_ids, max_samples, seed), skipped


def _convert(benchmark: Benchmark, row: dict[str, Any], index: int, ctx: LoadContext,
             id_column: str | None) -> Sample | None:
    """``to_sample`` of one row, with the dataset's id column (if any) as the id; None for a skipped row."""
    try:
        sample = benchmark.to_sample(row, index, ctx)
    except (KeyError, TypeError, ValueError) as exc:
        raise DatasetLoadError(
            f"row {index} of {benchmark.name!r} does not have the expected schema: {type(exc).__name__}: {exc}"
        ) from exc
    if sample is not None and id_column:
        sample = _with_id_column(sample, row, id_column)
    return sample


def _with_id_column(sample: Sample, row: dict[str, Any], id_column: str) -> Sample:
    """``sample`` with the row's ``id_column`` value as its id, when the row has one."""
    if row.get(id_column) not in (None, "") and sample.id != str(row[id_column]):
        return _with(sample, id=str(row[id_column]))
    return sample


def _is_dataset(rows: Any) -> bool:
    """True for a ``datasets.Dataset`` (rows that can be counted, scanned by column and picked by position)."""
    module = sys.modules.get("datasets")
    return module is not None and isinstance(rows, module.Dataset)


def _walk_subset(benchmark: Benchmark, rows: Any, ctx: LoadContext, id_column: str | None,
                 max_samples: int, seed: int) -> tuple[list[Sample], int]:
    """``max_samples`` samples of a ``datasets.Dataset`` (or of the same rows as a list): the first that
    convert along a seeded permutation of its rows, in source order; ``skipped`` counts the rows skipped.

    Only the rows looked at are read and converted (about ``max_samples`` of a million-row
    split), so a schema error or a duplicate id elsewhere in the split goes unnoticed. When
    no row is skipped this is exactly :func:`select` over the whole split (the same
    permutation over the same count); a skipped row is passed over for the next one of the
    permutation, so the subset never depends on rows it does not contain.
    """
    import numpy as np

    n = len(rows) if isinstance(rows, list) else int(rows.num_rows)
    order = np.random.default_rng(seed).permutation(n)
    chosen: list[tuple[int, Sample]] = []
    seen: set[str] = set()
    skipped = 0
    start = 0
    step = max(64, max_samples + max_samples // 4)  # a few skipped rows cost no second read
    while len(chosen) < max_samples and start < n:
        block = [int(i) for i in order[start:start + step]]
        start += len(block)
        picked = [rows[i] for i in block] if isinstance(rows, list) else rows.select(block, keep_in_memory=True)
        for row, index in zip(iter_rows(picked), block, strict=True):
            sample = _convert(benchmark, row, index, ctx, id_column)
            if sample is None:
                skipped += 1
                continue
            if sample.id in seen:
                raise DatasetLoadError(f"duplicate record id {sample.id!r} in {benchmark.name!r}")
            seen.add(sample.id)
            chosen.append((index, sample if sample.index >= 0 else _with_index(sample, index)))
            if len(chosen) == max_samples:
                break
    chosen.sort(key=lambda pair: pair[0])
    return [sample for _, sample in chosen], skipped


def _load_subset(benchmark: Benchmark, rows: Any, ctx: LoadContext, id_column: str | None,
                 record_ids: Sequence[str] | None, max_samples: int | None, seed: int) -> tuple[list[Sample], int]:
    """The samples :func:`select` would keep, without keeping a sample for every row.

    Pass one calls ``to_sample`` on every row, as the full load does (so the skipped
    rows, schema errors and duplicate ids are the same), but on rows that convert
    only the columns ``to_sample`` reads (:class:`_LazyRow`), and keeps just the
    row position and id of each sample that ``record_ids`` lets through. The seeded
    permutation then runs over that count, exactly as :func:`select` runs it over
    the list of samples, and pass two converts the chosen rows again, as plain
    dicts, into the samples returned.
    """
    wanted = set(record_ids) if record_ids is not None else None
    to_sample = benchmark.to_sample
    positions: list[int] = []
    ids: list[str] = []
    skipped = 0
    seen: set[str] = set()
    for index, row in enumerate(itertools.chain.from_iterable(_scan_batches(rows))):
        try:
            sample = to_sample(row, index, ctx)
        except (KeyError, TypeError, ValueError):
            # Once more on the plain dict, as the full load calls it: its error, or its sample.
            sample = _convert(benchmark, row.fresh() if isinstance(row, _LazyRow) else row, index, ctx, id_column)
        else:
            if id_column and sample is not None:
                sample = _with_id_column(sample, row, id_column)
        if sample is None:
            skipped += 1
            continue
        sid = sample.id
        if sid in seen:
            raise DatasetLoadError(f"duplicate record id {sid!r} in {benchmark.name!r}")
        seen.add(sid)
        if wanted is None or sid in wanted:
            positions.append(index)
            ids.append(sid)
    del seen
    if max_samples is not None and max_samples < len(positions):
        import numpy as np

        rng = np.random.default_rng(seed)
        keep = np.sort(rng.permutation(len(positions))[:max_samples])
        positions = [positions[int(i)] for i in keep]
        ids = [ids[int(i)] for i in keep]
    picked = rows.select(positions, keep_in_memory=True) if positions else []
    samples: list[Sample] = []
    for row, index, sid in zip(iter_rows(picked), positions, ids, strict=True):
        sample = _convert(benchmark, row, index, ctx, id_column)
        if sample is None or sample.id != sid:
            raise DatasetLoadError(
                f"{benchmark.name!r}: to_sample gave row {index} the id {sid!r}, then "
                f"{'no sample' if sample is None else repr(sample.id)} for the same row; "
                f"a record's id and whether it is skipped must depend only on the row"
            )
        if sample.index < 0:
            sample = _with_index(sample, index)
        samples.append(sample)
    return samples, skipped


def _scan_batches(rows: Any, batch_size: int = 1000) -> Iterator[Sequence[dict[str, Any]]]:
    """The rows of a ``datasets.Dataset`` for a scan, a batch at a time: :class:`_LazyRow` where the values
    are plain Arrow values (no feature to decode, no output format set), else the dicts of :func:`iter_rows`."""
    from datasets.features.features import require_decoding

    names = list(rows.column_names)
    if not names or rows.format.get("type") is not None or any(require_decoding(f) for f in rows.features.values()):
        plain = iter_rows(rows, batch_size)
        while chunk := list(itertools.islice(plain, batch_size)):
            yield chunk
        return
    # One column at least, so that a row is never an empty dict to C code that looks at its size
    # before calling its methods (json.dumps does).
    hot: list[str] = names[:1]
    for table in rows.with_format("arrow").iter(batch_size=batch_size):
        batch = _Batch(table, names)
        made: list[_LazyRow] = list(map(_LazyRow, map(zip, itertools.repeat(hot),
                                                      zip(*(batch.column(n) for n in hot)))))
        for at, row in enumerate(made):
            row._batch = batch
            row._at = at
        yield made
        # The columns read in this batch (these included) are converted up front in the next one.
        hot = [name for name in names if name in batch.read]


class _Batch:
    """One Arrow batch of rows, converted to Python a column at a time, when a row asks for it."""

    __slots__ = ("columns", "names", "read", "table")

    def __init__(self, table: Any, names: list[str]) -> None:
        self.table = table
        self.names = frozenset(names)
        self.columns: dict[str, list[Any]] = {}
        self.read: set[str] = set()

    def column(self, name: str) -> list[Any]:
        """The column's values as Python objects (``pyarrow`` ``to_pylist``, as ``datasets`` formats them)."""
        values = self.columns.get(name)
        if values is None:
            values = self.columns[name] = self.table.column(name).to_pylist()
            self.read.add(name)
        return values

    def row(self, at: int) -> dict[str, Any]:
        """Row ``at`` as a new plain dict of every column, converted afresh."""
        return dict(self.table.slice(at, 1).to_pylist()[0])


class _LazyRow(dict):  # type: ignore[type-arg]
    """A row that is a ``dict`` and converts a column's value the first time it is read.

    ``row[key]``, ``row.get(key)`` and ``key in row`` read one column; anything that
    needs the whole row (iterating, ``len``, ``items``, comparing, copying, changing it)
    first fills in every column, and from then on it is a plain dict. Rows are made
    by :func:`_scan_batches`, which sets their batch and position in it.
    """

    __slots__ = ("_at", "_batch", "_full")

    _batch: _Batch
    _at: int

    def __missing__(self, key: Any) -> Any:
        batch = self._batch
        if key not in batch.names or self._is_full():
            raise KeyError(key)
        value = batch.column(key)[self._at]
        dict.__setitem__(self, key, value)
        return value

    def get(self, key: Any, default: Any = None) -> Any:
        """``row[key]`` if the row has the column, else ``default``."""
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, key) if self._is_full() else key in self._batch.names

    def fresh(self) -> dict[str, Any]:
        """A new plain dict of the whole row, converted again (for a second try that must see it unchanged)."""
        return self._batch.row(self._at)

    def _is_full(self) -> bool:
        return getattr(self, "_full", False)

    def _fill(self) -> None:
        if not self._is_full():
            batch = self._batch
            at = self._at
            for name in batch.table.column_names:
                if not dict.__contains__(self, name):
                    dict.__setitem__(self, name, batch.column(name)[at])
            self._full = True

    def __reduce_ex__(self, protocol: Any) -> Any:
        self._fill()
        return (dict, (dict(dict.items(self)),))


def _whole(name: str) -> Any:
    method = getattr(dict, name)

    def whole(self: _LazyRow, *args: Any, **kwargs: Any) -> Any:
        self._fill()
        return method(self, *args, **kwargs)

    whole.__name__ = name
    whole.__doc__ = method.__doc__
    return whole


for _name in ("__iter__", "__len__", "__eq__", "__ne__", "__repr__", "__reversed__", "__setitem__", "__delitem__",
              "__or__", "__ror__", "__ior__", "keys", "values", "items", "copy", "pop", "popitem", "setdefault",
              "update", "clear"):
    setattr(_LazyRow, _name, _whole(_name))
del _name


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
