"""The fixtures benchmark modules use: ``sample``, ``model``, ``judge``, ``response`` and ``score``.

They take :func:`jeval_item` rather than ``request``: pytest builds a new fixture definition
for ``request`` each time a fixture asks for it (a signature inspection each: 13 per item
before, 7 now); ``jeval_item`` is built once per item and then looked up.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from pytest_jeval.session.keys import case_key, runtime_key

if TYPE_CHECKING:
    from pytest_jeval.calls.client import ModelClient
    from pytest_jeval.core.case import ItemCase
    from pytest_jeval.core.chat import Reply
    from pytest_jeval.core.episode import Episode
    from pytest_jeval.core.sample import Sample
    from pytest_jeval.core.score import Score, ScoreSink
    from pytest_jeval.session.runtime import Runtime
    from pytest_jeval.suite.config import BenchmarkEntry


def _runtime(request: pytest.FixtureRequest) -> Runtime:
    runtime = request.config.stash.get(runtime_key, None)
    if runtime is None:
        raise pytest.UsageError("jeval fixtures need a suite: run pytest with --jeval-config SUITE.toml")
    return runtime


@dataclasses.dataclass(frozen=True)
class JevalItem:
    """What the plugin's fixtures need of the item they serve: the run, its case and its ``request``."""

    runtime: Runtime
    found: ItemCase | None
    """The item's case; None for a test that is not a benchmark item (only ``judge`` allows that)."""
    request: pytest.FixtureRequest

    @property
    def case(self) -> ItemCase:
        """The item's case; a usage error for a test that is not a benchmark item."""
        if self.found is None:
            raise pytest.UsageError(f"{self.request.node.nodeid} is not a jeval benchmark item")
        return self.found


@pytest.fixture
def jeval_item(request: pytest.FixtureRequest) -> JevalItem:
    """The run and the case of this item, for the plugin's own fixtures (built once per item)."""
    return JevalItem(_runtime(request), request.node.stash.get(case_key, None), request)


@pytest.fixture
def jeval_model(request: pytest.FixtureRequest) -> str:
    """The key of the model under test (its ``[[models]]`` entry's ``label``, else its ``name``);
    the plugin parametrizes it from ``[[models]]``."""
    raise pytest.UsageError("jeval_model is parametrized by the plugin in benchmark modules only")


@pytest.fixture
def sample(request: pytest.FixtureRequest) -> Sample:
    """The benchmark record of this item; the plugin parametrizes it from the dataset."""
    raise pytest.UsageError("sample is parametrized by the plugin in benchmark modules run with --jeval-config")


@pytest.fixture
def benchmark_entry(jeval_item: JevalItem) -> BenchmarkEntry:
    """This item's ``[[benchmarks]]`` entry from the suite (evaluator, kind, scale, repeats, ...)."""
    return jeval_item.runtime.plan.benchmarks[jeval_item.case.benchmark].entry


@pytest.fixture
def model(jeval_item: JevalItem, jeval_model: str) -> ModelClient:
    """A chat client for the model under test, with this benchmark's generation settings."""
    from pytest_jeval.calls.client import ModelClient
    from pytest_jeval.core.sample import repeat_nonce

    runtime = jeval_item.runtime
    case = jeval_item.case

    def failed(exc: Exception) -> None:
        if case.error is None:  # the first failure is the item's error
            case.error = str(exc)

    return ModelClient(
        runtime.plan.models[jeval_model].name,
        endpoint=runtime.endpoint(jeval_model),
        submit=runtime.submit,
        settings=runtime.plan.settings(case.benchmark, jeval_model),
        on_reply=case.replies.append,
        on_error=failed,
        nonce=repeat_nonce(case.sample),  # each repeat of a sample is its own request (and cache entry)
    )


@pytest.fixture
def judge(jeval_item: JevalItem) -> ModelClient | None:
    """A chat client for the ``[judge]`` model, or None when the suite has no judge."""
    from pytest_jeval.calls.client import ModelClient

    runtime = jeval_item.runtime
    cfg = runtime.plan.suite.judge
    if cfg is None:
        return None
    case = jeval_item.found
    settings = runtime.plan.judge_settings(case.benchmark if case is not None else None)
    assert settings is not None
    # Judge failures are not the item's error: the scorers that ask the judge keep them
    # as ``judge_error`` in the scoring metadata. A judge call the run budget refused is:
    # the item was not judged, and --jeval-resume judges it again.
    from pytest_jeval.core.chat import BudgetExhausted

    def refused(exc: Exception) -> None:
        if case is not None and isinstance(exc, BudgetExhausted) and case.error is None:
            case.error = str(exc)

    options: dict[str, Any] = dict(
        endpoint=runtime.endpoint(settings.model, judge=True),
        submit=runtime.submit,
        settings=settings,
        on_reply=case.judge_replies.append if case is not None else None,
        on_error=refused,
        role="judge",
    )
    repeats = runtime.plan.benchmarks[case.benchmark].entry.judge_repeats if case is not None else 1
    if repeats > 1 and case is not None:  # judge_repeats: the judge's noise, apart from the model's
        from pytest_jeval.calls.client import RepeatingClient

        return RepeatingClient(settings.model, repeats=repeats, on_repeats=case.judge_repeats.append, **options)
    return ModelClient(settings.model, **options)


@pytest.fixture
def response(jeval_item: JevalItem, model: ModelClient, sample: Sample) -> Reply | None:
    """The model's reply to this benchmark's prompt for ``sample`` (sent ahead of time).

    None when the benchmark's prompt is None for this sample (no model call needed).
    An endpoint failure that survives the retries makes the item an *error*.
    """
    from pytest_jeval.core.chat import Reply

    runtime = jeval_item.runtime
    case = jeval_item.case
    _skip_refused(sample)
    if case.resumed is not None:
        return Reply(text=case.resumed.get("model_answer") or "", model=model.name, cached=True)
    if runtime.plan.benchmarks[case.benchmark].is_agent:
        ran: Episode = jeval_item.request.getfixturevalue("episode")
        return ran.replies[-1] if ran.replies else None
    definition = runtime.plan.benchmarks[case.benchmark].benchmark
    prompt = runtime.plan.sample_prompt(case.benchmark, sample)  # with its few-shot examples, if any
    if prompt is None:
        return None
    return model.chat(prompt, **definition.request_options)  # a failure is the item's error (see ``model``)


def _skip_refused(sample: Sample) -> None:
    """A sample its benchmark cannot run here (``metadata["refused"]``) is skipped with the reason; nothing is sent."""
    from pytest_jeval.core.sample import REFUSED

    reason = sample.metadata.get(REFUSED)
    if reason:
        pytest.skip(f"refused: {reason}")


class EpisodeError(Exception):
    """The harness failed during an agent episode (endpoint down after retries, sandbox unavailable)."""


@pytest.fixture
def episode(jeval_item: JevalItem, jeval_model: str, sample: Sample) -> Iterator[Episode]:
    """The agent episode of this sample (started ahead of time), after it ended.

    Only for benchmarks that run with ``backend = "agent"``. An episode the harness could
    not finish (``stop_reason = "error"``) makes the item an *error*; one stopped by a
    limit is handed to the test and scored like any other.
    """
    from pytest_jeval.core.episode import Episode

    runtime = jeval_item.runtime
    case = jeval_item.case
    _skip_refused(sample)
    planned = runtime.plan.benchmarks[case.benchmark]
    if not planned.is_agent:
        raise pytest.UsageError(f'{case.benchmark} does not run as an agent here; set backend = "agent" to use episode')
    if case.resumed is not None:  # not run again: the item keeps its stored verdict
        yield Episode(stop_reason=(case.resumed.get("agent") or {}).get("stop_reason") or "final")
        return
    try:
        ran = runtime.start_episode(case.benchmark, jeval_model, sample).result()
    except Exception as exc:
        case.error = f"the episode could not run: {type(exc).__name__}: {exc}"
        raise
    cleanup = planned.agent_spec.cleanup
    try:
        case.episode = ran
        case.replies.extend(ran.replies)
        if ran.stop_reason == "error":
            case.error = ran.error or "the episode failed"
            raise EpisodeError(case.error)
        yield ran
    finally:  # the benchmark releases the episode's state (servers, a browser) once the test is done with it
        if cleanup is not None and ran.state is not None:
            cleanup(ran.state)


def _excerpt(text: object, limit: int = 160) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 3] + "..."


#: Characters of the scorer's reason shown in a failure message (the record keeps all of it).
REASON_CHARS = 400


def stop_text(case: ItemCase) -> str | None:
    """How the model's answer ended: an agent episode's stop reason (with its turns and tool calls), or a
    direct reply's finish reason; None when unknown."""
    episode = case.episode
    if episode is not None:
        detail = episode.limit_detail or episode.error
        counts = f"{episode.turns} turn(s), {len(episode.tool_calls)} tool call(s)"
        return f"{episode.stop_reason} ({counts}{'; ' + detail if detail else ''})"
    finish = case.replies[-1].finish_reason if case.replies else None
    if finish == "length":
        return "length (the reply reached max_tokens)"
    return finish if finish not in (None, "", "stop") else None


def failure_message(sample: Sample, result: Score, answer: str, *, stop: str | None = None) -> str:
    """The short readable message of a wrong or unscored sample: the question, the gold answer, what was
    extracted (or the answer), the scorer's reason (:attr:`Score.reason`, capped) and how the answer ended."""
    expected = result.expected if result.expected is not None else sample.target
    lines = ["unscored: nothing could be extracted from the answer" if result.unscored else "wrong answer"]
    lines.append(f"  question:  {_excerpt(sample.input)}")
    lines.append(f"  expected:  {_excerpt(expected)}")
    if result.unscored:
        lines.append(f"  answer:    {_excerpt(answer)}")
    else:
        lines.append(f"  extracted: {_excerpt(result.extracted)}")
    reason = result.reason
    if reason:
        lines.append(f"  reason:    {_excerpt(reason, REASON_CHARS)}")
    if stop:
        lines.append(f"  stopped:   {_excerpt(stop)}")
    return "\n".join(lines)


@pytest.fixture
def score(jeval_item: JevalItem) -> ScoreSink:
    """Record this sample's :class:`Score`; a wrong or unscored answer fails the item, its message
    saying why (:func:`failure_message`)."""
    case = jeval_item.case

    def record(result: Score) -> None:
        case.score = result
        if result.correct is not True:
            answer = case.replies[-1].text if case.replies else ""
            pytest.fail(failure_message(case.sample, result, answer, stop=stop_text(case)), pytrace=False)

    return record
