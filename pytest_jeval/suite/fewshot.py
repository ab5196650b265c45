"""Few-shot examples (``num_fewshot = k``): a benchmark's few-shot source, chosen and shown as lm-eval does.

The source (:class:`~pytest_jeval.core.benchmark.FewShot`) is one split of the benchmark's data, loaded by the
same loader as its samples (the Hub through ``datasets``, or the suite's ``fewshot_files``). Its examples are put
in one order, a shuffle seeded with ``[run] seed`` (lm-eval's default sampler) or the source order (``first_n``),
and every sample gets the first k of that order (of its group's, where the benchmark groups them), leaving the
sample itself out when the source is the evaluation data. So the examples of a sample never depend on which other
samples run (``-k``, ``--lf``, xdist), where lm-eval draws anew for each document from one seeded generator.

Each example is sent as a user turn (the benchmark's prompt of that example) and an assistant turn (its worked
answer) before the question: lm-eval's ``--apply_chat_template --fewshot_as_multiturn``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_jeval.core.benchmark import Benchmark, FewShot
from pytest_jeval.core.chat import Messages, PromptLike, as_messages
from pytest_jeval.core.sample import Sample
from pytest_jeval.suite.dataset import DatasetLoadError, load_samples

#: ``Sample.metadata`` keys (and record fields) of a sample sent with few-shot examples.
IDS = "fewshot_ids"
SPLIT = "fewshot_split"


@dataclasses.dataclass(frozen=True)
class Example:
    """One worked example of the few-shot source, ready to send."""

    id: str
    """Its record id in the few-shot split."""
    group: str | None
    """Its group (``FewShot.group``), or None."""
    turns: tuple[dict[str, Any], ...]
    """The user turn(s) and the assistant turn."""


@dataclasses.dataclass
class FewShotPool:
    """The few-shot source of one benchmark entry, in selection order."""

    benchmark: str
    k: int
    split: str
    examples: list[Example]
    """In selection order (seeded shuffle, or source order for ``first_n``)."""
    same_source: bool
    """True when the source is the evaluation data itself: a sample is never its own example."""
    declaration: FewShot

    def choose(self, sample: Sample) -> list[Example]:
        """The k examples of ``sample``: the first k of the order (of its group), never the sample itself when the
        source is the evaluation data; too few is a :class:`DatasetLoadError`."""
        group = self.declaration.group(sample) if self.declaration.group is not None else None
        chosen: list[Example] = []
        for example in self.examples:
            if self.declaration.group is not None and example.group != group:
                continue
            if self.same_source and example.id == sample.id:
                continue
            chosen.append(example)
            if len(chosen) == self.k:
                return chosen
        where = f" (examples of its group {group!r} only)" if self.declaration.group is not None else ""
        raise DatasetLoadError(
            f"{self.benchmark!r}: num_fewshot = {self.k} asks for more examples than its few-shot split "
            f"{self.split!r} holds for sample {sample.id!r}{where} ({len(chosen)}"
            f"{', the sample itself left out' if self.same_source else ''}); use num_fewshot <= {len(chosen)}")

    def attach(self, sample: Sample) -> Sample:
        """``sample`` with its examples' ids (and their split) in its metadata, for the request and the record."""
        ids = [e.id for e in self.choose(sample)]
        return dataclasses.replace(sample, metadata={**sample.metadata, IDS: ids, SPLIT: self.split})

    def messages(self, ids: Sequence[str]) -> Messages:
        """The turns of the examples ``ids``, in that order."""
        by_id = {e.id: e for e in self.examples}
        return [dict(turn) for i in ids for turn in by_id[i].turns]


def load_pool(benchmark: Benchmark, *, k: int, files: Sequence[Path], eval_files: Sequence[Path],
              eval_split: str | None, subset: str | None, seed: int, options: Any = None,
              local_dir: Path | None = None, sandbox: str | None = None) -> FewShotPool:
    """The few-shot source of ``benchmark`` (its ``fewshot`` declaration): ``files`` (the suite's
    ``fewshot_files``) when given, else its split of the Hub dataset (or what its ``read_rows`` reads for it)."""
    declaration = benchmark.fewshot
    assert declaration is not None
    try:
        rows, _skipped = load_samples(benchmark, files=files, split=declaration.split, subset=subset, seed=seed,
                                      options=options, local_dir=local_dir, sandbox=sandbox)
    except DatasetLoadError as exc:
        raise DatasetLoadError(f"{benchmark.name!r}: num_fewshot = {k}: its few-shot split {declaration.split!r} "
                               f"could not be loaded (give fewshot_files, a local copy in the Hub's schema): {exc}"
                               ) from exc
    if files:
        same = [Path(f).resolve() for f in files] == [Path(f).resolve() for f in eval_files]
    else:
        hub_split = benchmark.dataset.split if benchmark.dataset is not None else None
        same = not eval_files and declaration.split == (eval_split or hub_split)
    if declaration.sampler == "seeded":
        import numpy as np

        rows = [rows[int(i)] for i in np.random.default_rng(seed).permutation(len(rows))]
    examples = [_example(benchmark, declaration, s) for s in rows]
    pool = FewShotPool(benchmark=benchmark.name, k=k, split=declaration.split, examples=examples,
                       same_source=same, declaration=declaration)
    if declaration.group is None and len(examples) - int(same) < k:
        raise DatasetLoadError(
            f"{benchmark.name!r}: num_fewshot = {k} asks for more examples than its few-shot split "
            f"{declaration.split!r} holds ({len(examples)}{', one of them the sample itself' if same else ''}); "
            f"use num_fewshot <= {len(examples) - int(same)}")
    return pool


def _example(benchmark: Benchmark, declaration: FewShot, sample: Sample) -> Example:
    prompt = benchmark.prompt(sample)
    if prompt is None:
        raise DatasetLoadError(f"{benchmark.name!r}: few-shot example {sample.id!r} has no prompt")
    user = [m for m in as_messages(prompt) if m.get("role") != "system"]
    group = declaration.group(sample) if declaration.group is not None else None
    return Example(id=sample.id, group=group,
                   turns=(*user, {"role": "assistant", "content": declaration.answer(sample)}))


def with_examples(prompt: PromptLike, examples: Messages) -> Messages:
    """``prompt`` as messages with the example turns before it (after any system message)."""
    messages = as_messages(prompt)
    head = 0
    while head < len(messages) and messages[head].get("role") == "system":
        head += 1
    return [*messages[:head], *examples, *messages[head:]]


def check_entry(where: str, entry: Any, benchmark: Benchmark, backend: str) -> str | None:
    """The plan's check of ``num_fewshot`` / ``fewshot_files`` on one entry: a usage-error text, or None.
    A benchmark without a few-shot source, or one run as an agent, refuses a k above 0."""
    k = entry.num_fewshot
    if entry.fewshot_files is not None and k is None:
        return f"{where}.fewshot_files: only valid with num_fewshot = k"
    if not k:
        return None
    if backend != "direct":
        return (f"{where}.num_fewshot: few-shot examples are for direct benchmarks; {entry.name!r} runs as "
                f"{backend!r} (remove num_fewshot or set backend = \"direct\")")
    if benchmark.fewshot is None:
        return (f"{where}.num_fewshot: {entry.name!r} declares no few-shot source; the benchmarks that do are: "
                f"{', '.join(fewshot_benchmarks()) or '(none installed)'}")
    return None


def fewshot_benchmarks() -> list[str]:
    """The names of the benchmarks (built-in and installed) that declare a few-shot source."""
    from pytest_jeval.suite.catalog import builtin_benchmarks, installed_benchmarks

    try:
        benches = builtin_benchmarks() + installed_benchmarks()
    except Exception:  # a broken module elsewhere must not hide this message
        return []
    return sorted({b.name for b in benches if b.fewshot is not None})
