"""A ``max_samples``/``record_ids`` subset is chosen without a sample per row.

Two references, computed here from the raw JSON lines, independently of ``pytest_jeval.suite.dataset``:

* ``walk`` (``max_samples`` alone): ``np.random.default_rng(seed).permutation(rows)``
  walked in order, each row converted by ``to_sample``, skipped rows passed over, the
  first ``max_samples`` samples kept in source order. Only the rows looked at are read.
* ``reference`` (with ``record_ids``; and for every subset of a split where no row is
  skipped, where the two agree): every row converted, skipped rows dropped, then
  ``record_ids``, then the permutation over the samples left, ``[:max_samples]``, sorted.
"""

from __future__ import annotations

import copy
import json
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytest_jeval import Benchmark, HubDataset, LoadContext, Sample
from pytest_jeval.benchmarks.bench_gsm8k import BENCHMARK as GSM8K
from pytest_jeval.benchmarks.bench_natural_reasoning import BENCHMARK as NATURAL_REASONING
from pytest_jeval.suite.dataset import DatasetLoadError, _LazyRow, load_samples, select
from tests.support.gsm import JevalProject


def write_natural_reasoning(path: Path, n: int) -> list[dict[str, Any]]:
    """``n`` rows in natural_reasoning's format; every 7th reference null, every 5th blank (skipped)."""
    rows = []
    for i in range(n):
        reference = None if i % 7 == 3 else "  " if i % 5 == 1 else f" {i * 3} "
        rows.append({"question": f"question {i}?", "reference_answer": reference,
                     "responses": [{"response_model": "Llama-3.3-70B-Instruct", "response": f"answer {i}"}]})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return rows


def reference(benchmark: Benchmark, rows: list[dict[str, Any]], seed: int, max_samples: int | None,
              record_ids: list[str] | None = None) -> tuple[list[Sample], int]:
    """The subset as it was chosen before: convert every row, drop skipped, filter, permute the rest."""
    ctx = LoadContext(benchmark=benchmark.name, subset=None, seed=seed, data_dir=None)
    converted = [(i, benchmark.to_sample(dict(row), i, ctx)) for i, row in enumerate(rows)]
    samples = [s for _i, s in converted if s is not None]
    skipped = len(converted) - len(samples)
    if record_ids is not None:
        samples = [s for s in samples if s.id in set(record_ids)]
    if max_samples is not None and max_samples < len(samples):
        keep = np.sort(np.random.default_rng(seed).permutation(len(samples))[:max_samples])
        samples = [samples[int(k)] for k in keep]
    return samples, skipped


def walk(benchmark: Benchmark, rows: list[dict[str, Any]], seed: int, max_samples: int) -> tuple[list[Sample], int]:
    """The ``max_samples`` subset: the first samples along a seeded permutation of the rows, in source order."""
    ctx = LoadContext(benchmark=benchmark.name, subset=None, seed=seed, data_dir=None)
    chosen: list[tuple[int, Sample]] = []
    skipped = 0
    for i in np.random.default_rng(seed).permutation(len(rows)):
        if len(chosen) == max_samples:
            break
        sample = benchmark.to_sample(dict(rows[int(i)]), int(i), ctx)
        if sample is None:
            skipped += 1
        else:
            chosen.append((int(i), sample))
    return [s for _i, s in sorted(chosen, key=lambda pair: pair[0])], skipped


def check_same(got: list[Sample], want: list[Sample]) -> None:
    assert [s.id for s in got] == [s.id for s in want]
    fields = ("id", "input", "target", "choices", "subject", "metadata")
    for a, b in zip(got, want, strict=True):
        assert [getattr(a, f) for f in fields] == [getattr(b, f) for f in fields]
        assert b.index < 0 or a.index == b.index


@pytest.fixture
def nr_file(tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    path = tmp_path / "train.jsonl"
    return path, write_natural_reasoning(path, 400)


@pytest.mark.parametrize(("seed", "max_samples"), [(42, 25), (7, 25), (42, 1), (3, 273), (42, 300)])
def test_max_samples_walks_a_seeded_permutation_of_the_rows(nr_file: tuple[Path, list[dict[str, Any]]], seed: int,
                                                             max_samples: int) -> None:
    path, rows = nr_file
    got, skipped = load_samples(NATURAL_REASONING, files=[path], seed=seed, max_samples=max_samples)
    want, want_skipped = walk(NATURAL_REASONING, rows, seed, max_samples)
    assert skipped == want_skipped
    check_same(got, want)
    assert len(got) == min(max_samples, 274)  # 126 of the 400 rows are skipped
    if max_samples >= 274:  # past the samples there are: every one, as a full load gives them
        full, _ = load_samples(NATURAL_REASONING, files=[path], seed=seed)
        assert skipped == 126
        check_same(got, full)
    assert [s.index for s in got] == [int(s.id.rsplit("-", 1)[1]) for s in got]  # row index, not rank


@pytest.mark.parametrize(("seed", "max_samples"), [(42, 25), (7, 1), (3, 399)])
def test_without_skipped_rows_max_samples_is_the_permutation_over_the_samples(tmp_path: Path, seed: int,
                                                                             max_samples: int) -> None:
    # the subset a full load then select() chooses: the same permutation over the same count
    path = tmp_path / "train.jsonl"
    rows = [r for r in write_natural_reasoning(path, 560) if (r["reference_answer"] or "").strip()][:400]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    got, skipped = load_samples(NATURAL_REASONING, files=[path], seed=seed, max_samples=max_samples)
    want, _ = reference(NATURAL_REASONING, rows, seed, max_samples)
    assert skipped == 0
    check_same(got, want)
    full, _ = load_samples(NATURAL_REASONING, files=[path], seed=seed)
    check_same(got, select(full, None, max_samples, seed))


def test_max_samples_reads_only_the_rows_it_looks_at(tmp_path: Path) -> None:
    looked: list[int] = []

    def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
        looked.append(index)
        return None if index % 2 else Sample(id=ctx.default_id(index), input=row["q"])

    bench = Benchmark(name="few", category="qa", description="", dataset=None, to_sample=to_sample,
                      prompt=lambda s: s.input, scorer="exact")
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps({"q": f"q{i}"}) + "\n" for i in range(5000)))
    got, skipped = load_samples(bench, files=[path], seed=4, max_samples=10)
    assert len(got) == 10 and len(looked) == 10 + skipped < 200
    assert looked[: len(looked)] == [int(i) for i in np.random.default_rng(4).permutation(5000)[: len(looked)]]


def test_record_ids_then_max_samples(nr_file: tuple[Path, list[dict[str, Any]]]) -> None:
    path, rows = nr_file
    ids = [f"natural-reasoning-{i}" for i in range(0, 400, 3)] + ["natural-reasoning-3", "no-such-id"]
    for max_samples in (None, 10, 1000):
        got, skipped = load_samples(NATURAL_REASONING, files=[path], seed=5, record_ids=ids, max_samples=max_samples)
        want, want_skipped = reference(NATURAL_REASONING, rows, 5, max_samples, ids)
        assert skipped == want_skipped
        check_same(got, want)
    got, _ = load_samples(NATURAL_REASONING, files=[path], seed=5, record_ids=["natural-reasoning-3"])
    assert got == []  # a skipped row is not brought back by naming it


def test_real_gsm8k_subset_matches_the_full_load(test_data: Path) -> None:
    path = test_data / "gsm8k" / "test.jsonl"
    full, _ = load_samples(GSM8K, files=[path])
    for seed in (1, 42):
        got, skipped = load_samples(GSM8K, files=[path], seed=seed, max_samples=50)
        assert skipped == 0
        check_same(got, select(full, None, 50, seed))


def _nosy_to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """Uses the row as a whole dict in every way a benchmark might."""
    if row.get("skip") or "question" not in row:
        return None
    copied = dict(row)
    meta = {"keys": sorted(row), "n": len(row), "json": json.dumps(row, sort_keys=True), "items": sorted(row.items()),
            "copy": copy.deepcopy(row) == copied, "pickle": pickle.loads(pickle.dumps(row)) == copied,
            "has_extra": "extra" in row, "extra": row.get("extra", "none"), "eq": row == copied,
            "spread": {**row} == copied, "missing": row.get("nope", "default")}
    return Sample(id=f"nosy-{row['key']}", input=str(row["question"]), target=row["tags"], metadata=meta)


NOSY = Benchmark(name="nosy", category="qa", description="reads whole rows", dataset=None, to_sample=_nosy_to_sample,
                 prompt=lambda s: s.input, scorer="exact")


def test_rows_behave_as_plain_dicts_while_scanning(tmp_path: Path) -> None:
    rows = [{"key": i, "question": f"q{i}", "tags": [i, i + 1], "skip": i % 4 == 0,
             **({"extra": {"n": i}} if i % 2 else {})} for i in range(60)]
    path = tmp_path / "nosy.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    full, _ = load_samples(NOSY, files=[path])
    ids = [f"nosy-{i}" for i in range(0, 60, 3)]
    got, skipped = load_samples(NOSY, files=[path], seed=1, record_ids=ids, max_samples=10)  # scanned rows
    assert skipped == 15 and len(got) == 10
    check_same(got, select(full, ids, 10, 1))


def test_lazy_row_reads_columns_on_demand(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []

    def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample:
        seen.append(row)
        if index == 2:
            row["question"] = "changed"  # a change makes it a plain dict of every column
        return Sample(id=str(row["key"]), input=str(row["question"]))

    bench = Benchmark(name="lazy", category="qa", description="", dataset=None, to_sample=to_sample,
                      prompt=lambda s: s.input, scorer="exact")
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps({"key": i, "question": f"q{i}", "big": ["x"] * 3}) + "\n" for i in range(5)))
    load_samples(bench, files=[path], record_ids=["1", "3"])
    scanned = [r for r in seen if isinstance(r, _LazyRow)]
    assert len(scanned) == 5
    assert "big" not in dict.keys(scanned[0])  # never read, never converted
    assert "big" in scanned[0] and scanned[0]["big"] == ["x"] * 3
    assert dict(scanned[2]) == {"key": 2, "question": "changed", "big": ["x"] * 3}
    assert scanned[2].get("nope") is None and "nope" not in scanned[2]


def test_errors_in_rows_outside_a_record_ids_subset_are_still_reported(tmp_path: Path) -> None:
    bench = Benchmark(name="numbers", category="qa", description="", dataset=None,
                      to_sample=lambda row, i, ctx: Sample(id=ctx.default_id(i), input=row["q"], target=int(row["n"])),
                      prompt=lambda s: s.input, scorer="exact")
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps({"q": f"q{i}", "n": "forty-five" if i == 45 else str(i)}) + "\n"
                            for i in range(50)))
    with pytest.raises(DatasetLoadError) as full_error:
        load_samples(bench, files=[path])
    with pytest.raises(DatasetLoadError) as subset_error:
        load_samples(bench, files=[path], record_ids=["numbers-1"])
    assert str(subset_error.value) == str(full_error.value)
    assert "row 45 of 'numbers' does not have the expected schema: ValueError" in str(full_error.value)
    # a max_samples subset reads only the rows it looks at: row 45 is not among seed 0's first two
    got, _ = load_samples(bench, files=[path], max_samples=2, seed=0)
    assert 45 not in [s.index for s in got] and len(got) == 2
    with pytest.raises(DatasetLoadError, match="row 45 of 'numbers'"):  # ... and reports it when it looks at it
        load_samples(bench, files=[path], max_samples=49, seed=0)


def test_a_to_sample_that_refuses_a_dict_subclass_gets_a_plain_dict(tmp_path: Path) -> None:
    def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample:
        if type(row) is not dict:
            raise TypeError("a plain dict, please")
        return Sample(id=ctx.default_id(index), input=row["q"])

    bench = Benchmark(name="strict", category="qa", description="", dataset=None, to_sample=to_sample,
                      prompt=lambda s: s.input, scorer="exact")
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps({"q": f"q{i}"}) + "\n" for i in range(30)))
    full, _ = load_samples(bench, files=[path])
    got, _ = load_samples(bench, files=[path], record_ids=["strict-3", "strict-9"])
    check_same(got, select(full, ["strict-3", "strict-9"], None, 2))


def test_duplicate_ids_outside_the_subset_are_still_reported(tmp_path: Path) -> None:
    bench = Benchmark(name="dup", category="qa", description="", dataset=HubDataset(path="x/y", id_column="uid"),
                      to_sample=lambda row, i, ctx: Sample(id=ctx.default_id(i), input=row["q"]),
                      prompt=lambda s: s.input, scorer="exact")
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps({"uid": f"u{i if i != 30 else 29}", "q": f"q{i}"}) + "\n" for i in range(40)))
    for kwargs in ({}, {"record_ids": ["u1"]}, {"max_samples": 40}):
        with pytest.raises(DatasetLoadError, match="duplicate record id 'u29' in 'dup'"):
            load_samples(bench, files=[path], **kwargs)  # type: ignore[arg-type]


def test_id_column_ids_and_record_ids(tmp_path: Path) -> None:
    bench = Benchmark(name="uid", category="qa", description="", dataset=HubDataset(path="x/y", id_column="uid"),
                      to_sample=lambda row, i, ctx: None if i % 3 == 0 else Sample(id=ctx.default_id(i), input=row["q"]),
                      prompt=lambda s: s.input, scorer="exact")
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps({"uid": f"u{i}" if i % 10 else "", "q": f"q{i}"}) + "\n" for i in range(90)))
    full, skipped_full = load_samples(bench, files=[path])
    wanted = [f"u{i}" for i in range(1, 90, 2)] + ["uid-20", "uid-50"]  # rows 20, 50 have no uid: default ids
    got, skipped = load_samples(bench, files=[path], seed=9, record_ids=wanted, max_samples=12)
    assert skipped == skipped_full == 30
    check_same(got, select(full, wanted, 12, 9))
    assert {s.id for s in got} <= set(wanted)


def test_a_to_sample_whose_ids_change_between_calls_is_a_clear_error(tmp_path: Path) -> None:
    calls = iter(range(10**6))
    bench = Benchmark(name="drift", category="qa", description="", dataset=None,
                      to_sample=lambda row, i, ctx: Sample(id=f"d-{next(calls)}", input=row["q"]),
                      prompt=lambda s: s.input, scorer="exact")
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps({"q": f"q{i}"}) + "\n" for i in range(20)))
    with pytest.raises(DatasetLoadError, match=r"to_sample gave row .* the id 'd-.*', then 'd-.*' for the same row"):
        load_samples(bench, files=[path], record_ids=[f"d-{i}" for i in range(20)])


def test_collected_items_are_the_subset(jeval_project: JevalProject, test_data: Path) -> None:
    p = jeval_project
    rows = [json.loads(line) for line in (test_data / "gsm8k" / "test.jsonl").read_text().splitlines()[:300]]
    (p.pytester.path / "gsm.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    suite = p.suite(extra_run="seed = 11", bench_extra="max_samples = 7")
    result = p.pytester.runpytest_subprocess("--jeval-config", str(suite), "--collect-only", "-q")
    assert result.ret == 0
    want, _ = walk(GSM8K, rows, 11, 7)
    collected = [line.rsplit("/", 1)[1].rstrip("]") for line in result.outlines if "::" in line]
    assert collected == [s.id for s in want]


def _key_error(row: dict[str, Any], key: str) -> str:
    try:
        row[key]
    except KeyError as exc:
        return repr(exc)
    return "no KeyError"


ROW_OPERATIONS: list[tuple[str, Any]] = [
    ("json.dumps", json.dumps),
    ("json.dumps sorted", lambda r: json.dumps(r, sort_keys=True)),
    ("dict()", dict),
    ("{**row}", lambda r: {**r}),
    ("f(**row)", lambda r: (lambda **kw: kw)(**r)),
    ("len", len),
    ("bool", bool),
    ("iter", list),
    ("keys", lambda r: list(r.keys())),
    ("values", lambda r: list(r.values())),
    ("items", lambda r: list(r.items())),
    ("==", lambda r: r == {"q": "q", "n": 1, "nested": {"a": [1, 2]}, "none": None}),
    ("!=", lambda r: r != {"q": "q"}),
    ("repr", repr),
    ("copy()", lambda r: (type(r.copy()), r.copy())),
    ("copy.copy", lambda r: (type(copy.copy(r)), copy.copy(r))),
    ("deepcopy", copy.deepcopy),
    ("pickle", lambda r: pickle.loads(pickle.dumps(r))),
    ("get", lambda r: (r.get("n"), r.get("none", "d"), r.get("nope"), r.get("nope", 3))),
    ("in", lambda r: ("n" in r, "none" in r, "nope" in r)),
    ("%", lambda r: "%(q)s-%(n)d" % r),  # noqa: UP031 (a mapping for %-formatting)
    ("format_map", lambda r: "{q}-{n}".format_map(r)),
    ("pop then read", lambda r: (r.pop("n"), "n" in r, r.get("n"), dict(r))),
    ("del then read", lambda r: (r.__delitem__("q"), "q" in r, r.get("q"), dict(r))),
    ("setdefault", lambda r: (r.setdefault("n", 9), r.setdefault("x", 9), dict(r))),
    ("update", lambda r: (r.update(n=5), r["n"], dict(r))),
    ("set then items", lambda r: (r.__setitem__("z", 1), sorted(r.items(), key=str))),
    ("missing key", lambda r: _key_error(r, "nope")),
    ("|", lambda r: r | {"w": 1}),
    ("reversed", lambda r: list(reversed(r))),
    ("clear", lambda r: (r.clear(), len(r), r.get("q"), "q" in r)),
    ("nested mutation", lambda r: (r["nested"]["a"].append(3), r["nested"], dict(r))),
]


@pytest.mark.parametrize(("name", "operation"), ROW_OPERATIONS, ids=[n for n, _ in ROW_OPERATIONS])
def test_a_scanned_row_answers_like_the_plain_dict(name: str, operation: Any) -> None:
    import datasets

    from pytest_jeval.suite.dataset import _scan_batches

    plain = [{"q": "q", "n": i, "nested": {"a": [1, 2]}, "none": None} for i in range(3)]
    [rows] = list(_scan_batches(datasets.Dataset.from_list(plain)))
    for row, want in zip(rows, plain, strict=True):
        assert isinstance(row, _LazyRow) and isinstance(row, dict)
        assert operation(row) == operation(dict(want)), name


def test_a_row_that_reads_no_column_is_not_an_empty_dict_later(tmp_path: Path) -> None:
    def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample:
        # The first batch (1000 rows) reads nothing; then the row is only ever dumped whole.
        return Sample(id=ctx.default_id(index), input="x" if index < 1000 else json.dumps(row))

    bench = Benchmark(name="dump", category="qa", description="", dataset=None, to_sample=to_sample,
                      prompt=lambda s: s.input, scorer="exact")
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps({"q": f"q{i}", "n": i}) + "\n" for i in range(1500)))
    full, _ = load_samples(bench, files=[path])
    got, _ = load_samples(bench, files=[path], max_samples=300, seed=4)
    check_same(got, select(full, None, 300, 4))
    assert any(s.input.startswith('{"q": "q1') for s in got)


def test_sample_init_keeps_the_dataclass_semantics() -> None:
    import dataclasses

    a, b = Sample("a", "q"), Sample(id="a", input="q")
    assert a == b and hash(a) == hash(b) and a.metadata == {} and a.metadata is not b.metadata
    assert (a.target, a.choices, a.subject, a.index) == (None, (), None, -1)
    assert Sample("a", "q", metadata=None).metadata is None  # an explicit value is kept as given
    full = Sample("i", "q", "t", ("x", "y"), "s", {"m": 1}, 5)
    assert dataclasses.asdict(full) == {"id": "i", "input": "q", "target": "t", "choices": ("x", "y"),
                                        "subject": "s", "metadata": {"m": 1}, "index": 5}
    assert dataclasses.replace(full, index=7).index == 7 and dataclasses.replace(full, index=7).metadata == {"m": 1}
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.id = "b"  # type: ignore[misc]


@pytest.mark.parametrize("chunk_size", [1, 7, 16, 1 << 20])
def test_utf8_check_names_the_line_and_offset_past_the_first_chunk(tmp_path: Path, chunk_size: int) -> None:
    from pytest_jeval.suite.dataset import check_utf8

    good = tmp_path / "good.jsonl"
    good.write_text("".join(json.dumps({"q": f"café {i} ☃"}, ensure_ascii=False) + "\n" for i in range(6)),
                    encoding="utf-8")
    check_utf8(good, chunk_size=chunk_size)  # multi-byte characters split across chunks are fine
    bad = tmp_path / "bad.jsonl"
    head = "".join(json.dumps({"q": f"line {i} ☃"}, ensure_ascii=False) + "\n" for i in range(4)).encode()
    bad.write_bytes(head + b'{"q": "caf\xe9"}\n')
    with pytest.raises(DatasetLoadError, match=rf"byte 0xe9 at offset {len(head) + 10} \(line 5\)"):
        check_utf8(bad, chunk_size=chunk_size)
