"""The bundled local model's server: prompt-cache reuse at fixed boundaries only, its threads, its start-up."""

from __future__ import annotations

import pytest

from pytest_jeval.calls.engines.local_server import boundary_at_or_below, next_boundary, reuse_point


@pytest.mark.parametrize(("n", "expected"), [(0, 0), (7, 0), (8, 8), (27, 24), (31, 24), (32, 32), (63, 32),
                                             (64, 64), (511, 480), (512, 512), (1500, 1024)])
def test_boundaries_are_every_8_below_32_every_32_below_512_then_every_512(n: int, expected: int) -> None:
    assert boundary_at_or_below(n) == expected


@pytest.mark.parametrize(("position", "expected"), [(0, 8), (5, 8), (24, 32), (31, 32), (32, 64), (60, 64),
                                                    (480, 512), (500, 512), (512, 1024)])
def test_a_prompt_piece_ends_at_the_next_boundary(position: int, expected: int) -> None:
    assert next_boundary(position) == expected
    assert boundary_at_or_below(expected) == expected


def test_reuse_stops_at_the_last_boundary_of_the_common_prefix() -> None:
    cached = list(range(40))
    assert reuse_point(cached, list(range(27)) + [999] * 20) == 24
    assert reuse_point(cached, list(range(7)) + [999] * 20) == 0
    assert reuse_point([], list(range(50))) == 0
    assert reuse_point(cached[:16], list(range(50))) == 16  # only what was cached in whole pieces


def test_an_identical_prompt_still_evaluates_its_last_piece() -> None:
    """Sampling needs fresh logits: a prompt is never taken whole from the cache."""
    prompt = list(range(48))
    assert reuse_point(prompt, prompt) == 32
    assert reuse_point(prompt[:30], prompt[:30]) == 24
    assert reuse_point(prompt[:8], prompt[:8]) == 0
    assert reuse_point([1], []) == 0


@pytest.fixture(scope="module")
def model() -> object:
    from pytest_jeval.calls.engines.local import find_bundled_gguf
    from pytest_jeval.calls.engines.local_server import LocalModel

    return LocalModel(str(find_bundled_gguf()), name="smollm2-135m")


def _ask(model: object, text: str, max_tokens: int = 16) -> str:
    body = {"messages": [{"role": "user", "content": text}], "temperature": 0, "max_tokens": max_tokens}
    reply = model.complete(body)  # type: ignore[attr-defined]
    return str(reply["choices"][0]["message"]["content"])


@pytest.mark.local_model
def test_prompt_evaluation_uses_the_generation_thread_count(model: object) -> None:
    """llama-cpp-python's default for prompt threads is every core; spinning threads then fight on a busy machine."""
    llm = model.llm  # type: ignore[attr-defined]
    assert llm.context_params.n_threads == model.n_threads  # type: ignore[attr-defined]
    assert llm.context_params.n_threads_batch == model.n_threads  # type: ignore[attr-defined]


@pytest.mark.slow
@pytest.mark.local_model
def test_the_chat_template_start_is_reused_and_answers_do_not_change(model: object) -> None:
    """After other prompts, the same request reuses whole cached pieces and answers exactly as the first time."""
    from pytest_jeval.calls.engines.local import find_bundled_gguf
    from pytest_jeval.calls.engines.local_server import LocalModel

    ask = "Write one sentence about the sea and the sky."
    fresh = LocalModel(str(find_bundled_gguf()), name="fresh")
    first = _ask(fresh, ask)
    assert fresh.llm.reused_tokens == 0
    for other in ("Write one sentence about the sea.", "Write one sentence about the sea and the moon.",
                  "What is 2 + 3?"):
        _ask(model, other)
        assert _ask(model, ask) == first
        reused = model.llm.reused_tokens  # type: ignore[attr-defined]
        assert reused > 0 and reused % 8 == 0, reused  # at least the chat template's system start


@pytest.mark.local_model
def test_a_server_that_cannot_start_is_a_usage_error_and_collect_only_starts_none(pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("broken.gguf").write_bytes(b"not a gguf file")
    pytester.path.joinpath("suite.toml").write_text(
        '[run]\noutput_dir = "out"\n[[models]]\nname = "smollm2-135m"\nengine = "local"\nmodel_path = "broken.gguf"\n'
        '[[benchmarks]]\nname = "quickstart"\nrecord_ids = ["qs-fact-01"]\n'
    )
    result = pytester.runpytest_subprocess("--jeval-config", "suite.toml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*the local model server did not start*"])
    collected = pytester.runpytest_subprocess("--jeval-config", "suite.toml", "--collect-only", "-q")
    assert collected.ret == pytest.ExitCode.OK, collected.stderr.str()
    collected.stdout.fnmatch_lines(["*1 test collected*"])
