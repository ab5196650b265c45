"""The fixtures benchmark modules use: ``sample``, ``model``, ``judge``, ``response`` and ``score``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional

import pytest

from pytest_jeval._keys import case_key, runtime_key

if TYPE_CHECKING:
    from pytest_jeval.client import ModelClient
    from pytest_jeval.config import BenchmarkEntry
    from pytest_jeval.engines.base import Reply
    from pytest_jeval.runtime import ItemCase, Runtime
    from pytest_jeval.sample import Sample
    from pytest_jeval.score import Score


def _runtime(request: pytest.FixtureRequest) -> Runtime:
    runtime = request.config.stash.get(runtime_key, None)
    if runtime is None:
        raise pytest.UsageError("jeval fixtures need a suite: run pytest with --jeval-config SUITE.toml")
    return runtime


def _case(request: pytest.FixtureRequest) -> ItemCase:
    case = request.node.stash.get(case_key, None)
    if case is None:
        raise pytest.UsageError(f"{request.node.nodeid} is not a jeval benchmark item")
    return case


@pytest.fixture
def jeval_model(request: pytest.FixtureRequest) -> str:
    """The name of the model under test; the plugin parametrizes it from ``[[models]]``."""
    raise pytest.UsageError("jeval_model is parametrized by the plugin in benchmark modules only")


@pytest.fixture
def sample(request: pytest.FixtureRequest) -> Sample:
    """The benchmark record of this item; the plugin parametrizes it from the dataset."""
    raise pytest.UsageError("sample is parametrized by the plugin in benchmark modules run with --jeval-config")


@pytest.fixture
def benchmark_entry(request: pytest.FixtureRequest) -> BenchmarkEntry:
    """This item's ``[[benchmarks]]`` entry from the suite (evaluator, kind, scale, repeats, ...)."""
    return _runtime(request).plan.benchmarks[_case(request).benchmark].entry


@pytest.fixture
def model(request: pytest.FixtureRequest, jeval_model: str) -> ModelClient:
    """A chat client for the model under test, with this benchmark's generation settings."""
    from pytest_jeval.client import ModelClient

    runtime = _runtime(request)
    case = _case(request)
    temperature, max_tokens = runtime.plan.generation(case.benchmark, jeval_model)
    entry = runtime.plan.models[jeval_model]
    return ModelClient(
        jeval_model,
        endpoint=runtime.endpoint(jeval_model),
        submit=runtime.submit,
        temperature=temperature,
        max_tokens=max_tokens,
        system_prompt=runtime.plan.suite.defaults.system_prompt,
        stream=entry.stream,
        on_reply=case.replies.append,
    )


@pytest.fixture
def judge(request: pytest.FixtureRequest) -> Optional[ModelClient]:
    """A chat client for the ``[judge]`` model, or None when the suite has no judge."""
    from pytest_jeval.client import ModelClient

    runtime = _runtime(request)
    cfg = runtime.plan.suite.judge
    if cfg is None:
        return None
    case = request.node.stash.get(case_key, None)
    name = cfg.model
    if case is not None:
        name = runtime.plan.benchmarks[case.benchmark].entry.judge_model or name
    return ModelClient(
        name,
        endpoint=runtime.endpoint(name, judge=True),
        submit=runtime.submit,
        temperature=float(cfg.temperature or 0.0),
        max_tokens=int(cfg.max_tokens or 1024),
        on_reply=case.judge_replies.append if case is not None else None,
        role="judge",
    )


@pytest.fixture
def response(request: pytest.FixtureRequest, model: ModelClient, sample: Sample) -> Optional[Reply]:
    """The model's reply to this benchmark's prompt for ``sample`` (sent ahead of time).

    None when the benchmark's prompt is None for this sample (no model call needed).
    An endpoint failure that survives the retries makes the item an *error*.
    """
    from pytest_jeval.engines.base import EndpointError, Reply

    runtime = _runtime(request)
    case = _case(request)
    if case.resumed is not None:
        return Reply(text=case.resumed.get("model_answer") or "", model=model.name, cached=True)
    definition = runtime.plan.benchmarks[case.benchmark].benchmark
    prompt = definition.prompt(sample)
    if prompt is None:
        return None
    try:
        return model.chat(prompt, **definition.request_options)
    except EndpointError as exc:
        case.error = str(exc)
        raise


def _excerpt(text: object, limit: int = 160) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 3] + "..."


def failure_message(sample: Sample, result: Score, answer: str) -> str:
    """The short readable message of a wrong or unscored sample."""
    expected = result.expected if result.expected is not None else sample.target
    lines = ["unscored: nothing could be extracted from the answer" if result.unscored else "wrong answer"]
    lines.append(f"  question:  {_excerpt(sample.input)}")
    lines.append(f"  expected:  {_excerpt(expected)}")
    if result.unscored:
        lines.append(f"  answer:    {_excerpt(answer)}")
    else:
        lines.append(f"  extracted: {_excerpt(result.extracted)}")
    return "\n".join(lines)


@pytest.fixture
def score(request: pytest.FixtureRequest) -> Callable[[Score], None]:
    """Record this sample's :class:`Score`; a wrong or unscored answer fails the item."""
    case = _case(request)

    def record(result: Score) -> None:
        case.score = result
        if result.correct is not True:
            answer = case.replies[-1].text if case.replies else ""
            pytest.fail(failure_message(case.sample, result, answer), pytrace=False)

    return record
