"""Defining a benchmark: a dataset, a prompt and a scorer in an ordinary pytest module.

A benchmark module declares one module-level :class:`Benchmark` and one test
function that takes the ``sample`` fixture::

    from pytest_jeval import Benchmark, HubDataset, Sample, Score

    def to_sample(row, index, ctx):
        return Sample(id=f"capitals-{index}", input=row["q"], target=row["a"])

    BENCHMARK = Benchmark(
        name="capitals",
        dataset=HubDataset(path="my-org/capitals", split="test"),
        to_sample=to_sample,
        prompt=lambda s: f"{s.input}\\nAnswer with the city name only.",
    )

    def test_capitals(sample, response, score):
        score(Score(correct=response.text.strip().lower() == sample.target.lower()))

The plugin parametrizes ``sample`` (and the model) from the dataset, sends the
prompt ahead of time, and hands the reply to the test as ``response``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pytest_jeval.core.chat import PromptLike
from pytest_jeval.core.sample import Sample

if TYPE_CHECKING:
    from pytest_jeval.agents.spec import AgentSpec

Backend = Literal["direct", "agent"]


@dataclasses.dataclass(frozen=True)
class HubDataset:
    """Where a benchmark's data lives on the Hugging Face Hub."""

    path: str
    """Hub dataset id, e.g. ``openai/gsm8k``."""
    name: str | None = None
    """Dataset config name (``load_dataset``'s ``name``), e.g. ``main``."""
    split: str = "test"
    """Default split."""
    id_column: str | None = None
    """Column holding the dataset's own record id, if any."""
    revision: str | None = None
    """Pin a dataset revision."""


@dataclasses.dataclass(frozen=True)
class LoadContext:
    """What ``to_sample`` knows besides the row."""

    benchmark: str
    """The benchmark name (for ``<benchmark>-<index>`` ids)."""
    subset: str | None
    """The suite's ``subset`` setting."""
    seed: int
    """The suite seed, for per-record option shuffles (combine it with the record id)."""
    data_dir: Path | None
    """Directory of the first local data file (to resolve attachments), if any."""
    sandbox: str | None = None
    """The suite's ``sandbox`` setting (a provider name), for benchmarks that list ``sandboxes``."""
    options: Any = None
    """The validated ``[benchmarks.options]`` of the entry (an instance of ``Benchmark.options``), or None."""
    local_dir: Path | None = None
    """The entry's ``data_dir`` (resolved, existing), for benchmarks that read a local copy of their data."""
    split: str | None = None
    """The suite's ``split`` setting, for benchmarks that read their rows themselves (``read_rows``)."""

    def default_id(self, index: int) -> str:
        """``<benchmark>-<row index>``, the id used when the dataset has no id column."""
        return f"{self.benchmark}-{index}"


@dataclasses.dataclass(frozen=True)
class FewShot:
    """Where a benchmark takes the worked examples of ``num_fewshot = k`` from (lm-eval's ``fewshot_split`` and
    ``fewshot_config``), and how one example is shown.

    The examples are rows of ``split`` of the benchmark's own data, read by the same loader as its samples (the
    Hub dataset through ``datasets``, or the suite's ``fewshot_files`` in the same schema) and turned into samples by
    its ``to_sample``. Each example becomes a user turn (the benchmark's own prompt of that sample) and an assistant
    turn (:attr:`answer`), sent before the question as a multi-turn chat.
    """

    split: str
    """The split the examples come from (``train``, ``dev``, ``validation``); the evaluation split itself is
    allowed (a sample is then never its own example)."""
    answer: Callable[[Sample], str]
    """The assistant turn of one example: its worked answer, ending in the form the prompt asks for."""
    sampler: Literal["seeded", "first_n"] = "seeded"
    """``seeded``: the source in the order of a shuffle seeded with ``[run] seed``; ``first_n``: in source order
    (lm-eval's ``first_n`` sampler, for fixed dev-set exemplars). Either way every sample gets the first k."""
    group: Callable[[Sample], str | None] | None = None
    """Take a sample's examples only from source examples of its own group (MMLU-Pro: its category, one lm-eval
    task per category); None: one pool for every sample."""


ToSample = Callable[[dict[str, Any], int, LoadContext], Sample | None]
ReadRows = Callable[[Sequence[Path], LoadContext], Iterable[dict[str, Any]]]


@dataclasses.dataclass(frozen=True)
class Benchmark:
    """A benchmark definition. Put exactly one at module level of a benchmark module."""

    name: str
    """The key users write in ``[[benchmarks]] name``."""
    to_sample: ToSample
    """Turn one dataset row into a :class:`Sample`; return None to skip the row (it is counted)."""
    prompt: Callable[[Sample], PromptLike | None]
    """The chat prompt for a sample; the plugin sends it ahead of time. None means the
    sample needs no model call (``response`` is then None)."""
    dataset: HubDataset | None = None
    """Hub location; None for benchmarks that only ship local data."""
    bundled_files: Sequence[str] = ()
    """Data files shipped next to the module, used when the suite gives no ``data_files``."""
    category: str = "other"
    """Catalog category (reasoning, math, chat, coding, ...)."""
    description: str = ""
    """One line for ``--jeval-list``."""
    scorer: str = ""
    """The scorer's key in :mod:`pytest_jeval.scoring.registry`: what ``jeval rescore`` uses
    when no ``--scorer`` is given. Empty (or an unregistered name) for a benchmark that
    cannot be rescored from its records."""
    scoring: str = ""
    """How the benchmark scores, in words, for the catalog (defaults to ``scorer``)."""
    needs_judge: bool = False
    """True when scoring always needs the ``[judge]`` model."""
    sample_count: int | None = None
    """Size of the default split, if known (catalog only)."""
    request_options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """Extra chat parameters for the prefetched request (e.g. ``logprobs=True, top_logprobs=10``)."""
    summarize_extra: Callable[[list[dict[str, Any]]], dict[str, Any]] | None = None
    """Benchmark-specific summary fields computed from the JSONL records (e.g. SimpleQA's
    attempted rate); merged into the summary."""
    backends: tuple[Backend, ...] = ("direct", "agent")
    """How the benchmark can run; the first is used when the suite sets no ``backend``.
    ``("agent",)`` for benchmarks that only make sense as agents (ToolCall-15, BFCL, retail),
    ``("direct",)`` for those that cannot run as one (logprob scoring)."""
    agent: AgentSpec | None = None
    """The benchmark's tools, environment and user when it runs as an agent (see
    :class:`~pytest_jeval.agents.spec.AgentSpec`); None runs its prompt with the suite's ``tools``."""
    options: Any = None
    """A pydantic model class (``extra="forbid"``) of the benchmark's own settings, the keys a suite may set in
    ``[benchmarks.options]``; the validated instance reaches ``to_sample``/``read_rows`` as ``ctx.options``.
    Path fields may use :data:`~pytest_jeval.suite.options.SuitePath` (resolved against the suite file).
    None: the benchmark takes no options."""
    data_dir: str = ""
    """What a local copy given as ``data_dir`` must hold, in words (its upstream layout); empty when the
    benchmark takes no ``data_dir``. The resolved directory reaches it as ``ctx.local_dir``."""
    configure: Callable[[Any], Benchmark] | None = None
    """A template for benchmarks built from their suite entry: called with the ``[[benchmarks]]``
    entry, it returns the benchmark that entry runs (the judge family builds one per gold set
    and evaluator this way; such an entry may name itself as it likes)."""
    read_rows: ReadRows | None = None
    """Read the raw rows itself (from the suite's ``data_files``, possibly none) instead of
    ``datasets.load_dataset``; raise :class:`~pytest_jeval.suite.dataset.DatasetLoadError` saying what
    to do when the data is missing. For data that ships in a Python package (BFCL)."""
    sandboxes: tuple[str, ...] = ()
    """Sandbox providers the suite's ``sandbox`` key may name for this benchmark (empty: the key is refused)."""
    data_source: str = ""
    """Where the data comes from, in words, for the catalog when it is neither the Hub nor
    bundled, one word (e.g. ``pypi:bfcl-eval``, a PyPI package)."""
    fewshot: FewShot | None = None
    """The benchmark's few-shot source (``num_fewshot = k`` in the suite); None refuses ``num_fewshot``."""
    aliases: tuple[str, ...] = ()
    """Other names a suite may use for this benchmark (``deepresearch`` for ``liveresearch``). An entry naming
    an alias runs this benchmark under its ``name``, the alias becoming the entry's label (results file,
    ``benchmark_label``) unless it sets one."""

    def default_files(self, module_file: str | None) -> list[Path]:
        """Absolute paths of ``bundled_files`` next to the defining module."""
        if not self.bundled_files or module_file is None:
            return []
        base = Path(module_file).parent
        return [base / f for f in self.bundled_files]


def find_benchmark(module: Any) -> Benchmark | None:
    """The single :class:`Benchmark` defined at module level, or None."""
    found = [v for v in vars(module).values() if isinstance(v, Benchmark)]
    if len(found) > 1:
        names = ", ".join(b.name for b in found)
        raise ValueError(f"{module.__name__} defines more than one Benchmark ({names})")
    return found[0] if found else None
