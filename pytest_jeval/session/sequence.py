"""Episode mode in a pytest session: each sequence's outcomes, each episode's memory, and xdist scheduling.

A benchmark runs in episode mode when it keeps a memory (``AgentSpec.memory``) and either requires it
(``AgentSpec.sequential``) or the suite sets ``[run] episode_mode = true`` (``PlannedBenchmark.sequential``).
Its samples, in the plan's order, are then one **sequence** per model:

* the episode of the sample at position ``i`` starts only when its item runs (never ahead, as other
  episodes are prefetched), and remembers what the memory policy picks among positions ``0 .. i-1``;
* an earlier position's outcome is the one this session produced when its item ran here (an episode
  the harness could not finish is not remembered), else its stored record and trajectory in the
  output directory (``--jeval-resume``, ``-k``, ``--lf``: a selected episode gets the memory the whole
  sequence gives it); an earlier position with neither is listed as ``missing`` in the record;
* under pytest-xdist, the items of one (benchmark, model) sequence run in one worker, in order: the
  controller schedules with :class:`SequenceScheduling` (``pytest_xdist_make_scheduler``), which sends
  a whole sequence to one worker as one unit and every other item as a unit of its own (as ``load``
  does). This replaces ``--dist load``, ``worksteal`` and ``loadgroup`` only when a suite has a sequence;
  ``loadscope``, ``loadfile`` and ``each`` keep a benchmark module in one worker already.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import pytest

from pytest_jeval.agents.memory import Recall, Recollection, recall, turns_after_task
from pytest_jeval.core.sample import REFUSED, Sample
from pytest_jeval.session.keys import case_key, plan_key, runtime_key

if TYPE_CHECKING:
    from pytest_jeval.core.episode import Episode
    from pytest_jeval.suite.plan import EvalPlan

Pair = tuple[str, str]


class SequenceBook:
    """The outcomes of every sequence in this process: those run here, and the stored ones (read once per pair)."""

    def __init__(self, plan: EvalPlan) -> None:
        self.plan = plan
        self._positions: dict[str, dict[str, int]] = {}
        self._ran: dict[Pair, dict[str, Recollection | None]] = {}
        self._stored: dict[Pair, dict[str, Recollection]] = {}

    def position(self, bench: str, sample_id: str) -> int:
        """The sample's place in its benchmark's sequence (the plan's order)."""
        positions = self._positions.get(bench)
        if positions is None:
            samples = self.plan.samples(bench)[0]
            positions = self._positions[bench] = {s.id: i for i, s in enumerate(samples)}
        return positions[sample_id]

    def done(self, bench: str, model: str, sample: Sample, correct: bool | None, episode: Episode | None) -> None:
        """An episode of the sequence ran in this session: remember its verdict and conversation
        (``episode`` None: the harness could not finish it; it is not remembered)."""
        entry = None
        if episode is not None:
            entry = Recollection(sample=sample, position=self.position(bench, sample.id), correct=correct,
                                 turns=turns_after_task(episode.messages))
        self._ran.setdefault((bench, model), {})[sample.id] = entry

    def recall(self, bench: str, model: str, sample: Sample) -> Recall:
        """What the episode of ``sample`` remembers under the suite's memory policy."""
        run = self.plan.suite.run
        samples = self.plan.samples(bench)[0]
        position = self.position(bench, sample.id)
        ran = self._ran.get((bench, model), {})
        stored: dict[str, Recollection] | None = None
        earlier: list[Recollection] = []
        missing: list[str] = []
        for earlier_sample in samples[:position]:
            if REFUSED in earlier_sample.metadata:
                continue  # never runs: not part of what the sequence remembers
            if earlier_sample.id in ran:
                entry = ran[earlier_sample.id]
                if entry is not None:
                    earlier.append(entry)
                continue
            if stored is None:
                stored = self._read_stored(bench, model)
            found = stored.get(earlier_sample.id)
            if found is None:
                missing.append(earlier_sample.id)
            else:
                earlier.append(found)
        return recall(run.episode_memory, run.episode_memory_size, position, earlier, missing)

    def _read_stored(self, bench: str, model: str) -> dict[str, Recollection]:
        """The finished records of the pair in the output directory, with their trajectories (read once)."""
        pair = (bench, model)
        if pair in self._stored:
            return self._stored[pair]
        from pytest_jeval.core.paths import jsonl_path, trajectories_path
        from pytest_jeval.results.jsonl import read_jsonl

        path = jsonl_path(self.plan.output_dir, bench, model)
        records = read_jsonl(path).records
        trajectories = read_jsonl(trajectories_path(path)).records if records else {}
        by_id = {s.id: s for s in self.plan.samples(bench)[0]}
        found: dict[str, Recollection] = {}
        for rid, record in records.items():
            sample = by_id.get(rid)
            if sample is None or record.get("error") is not None:
                continue
            trajectory = record.get("trajectory") or trajectories.get(rid) or {}
            messages = trajectory.get("messages") if isinstance(trajectory, dict) else None
            correct = record.get("is_correct")
            found[rid] = Recollection(sample=sample, position=self.position(bench, rid),
                                      correct=correct if isinstance(correct, bool) else None,
                                      turns=turns_after_task(messages if isinstance(messages, list) else []))
        self._stored[pair] = found
        return found


class SequenceHooks:
    """Records each finished episode of a sequence (every process that runs items); schedules the
    sequences under xdist (controller)."""

    def __init__(self, plan: EvalPlan) -> None:
        self.plan = plan

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item,
                                  call: pytest.CallInfo[None]) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """When an item of a sequence finishes, its verdict and conversation join the sequence's outcomes."""
        report = yield
        case = item.stash.get(case_key, None)
        if case is None or case.resumed is not None or not self.plan.benchmarks[case.benchmark].sequential:
            return report
        if report.when == "call" or (report.when == "setup" and report.failed):
            book = item.config.stash[runtime_key].sequences
            if case.error is not None or case.episode is None:
                book.done(case.benchmark, case.model, case.sample, None, None)
            else:
                correct = case.score.correct if case.score is not None else report.passed
                book.done(case.benchmark, case.model, case.sample, correct, case.episode)
        return report

    @pytest.hookimpl(tryfirst=True, optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        """``-n``: a whole sequence goes to one worker, in order (see the module docstring)."""
        if config.getvalue("dist") not in ("load", "worksteal", "loadgroup"):
            return None
        return make_scheduler(config, log, {k for k, pb in self.plan.benchmarks.items() if pb.sequential})


def sequence_scope(nodeid: str, sequential: set[str]) -> str:
    """The work unit of a node id: ``<suite>::<benchmark>::<test>[<model-slug>/`` for an item of a sequence
    (all its items share it), else the node id itself."""
    parts = nodeid.split("::")
    if len(parts) >= 3 and parts[1] in sequential and "[" in parts[2]:
        head, _, param = nodeid.partition("[")
        slug = param.split("/", 1)[0]
        return f"{head}[{slug}/"
    return nodeid


def make_scheduler(config: pytest.Config, log: Any, sequential: set[str]) -> Any:
    """xdist's scope scheduler with :func:`sequence_scope` as its unit (an xdist internal: ``_split_scope``,
    checked by tests/session/test_sequence_xdist.py)."""
    from xdist.scheduler import LoadScopeScheduling

    class SequenceScheduling(LoadScopeScheduling):  # type: ignore[misc]
        """Scope scheduling whose unit is a whole sequence, or a single item outside any sequence."""

        def _split_scope(self, nodeid: str) -> str:
            return sequence_scope(nodeid, sequential)

    return SequenceScheduling(config, log)


def install(config: pytest.Config) -> None:
    """Episode mode (every process), when the suite has a sequence."""
    plan = config.stash[plan_key]
    if any(pb.sequential for pb in plan.benchmarks.values()):
        config.pluginmanager.register(SequenceHooks(plan), "jeval-sequence")
