"""Efficiency formulas: values, and None (never 0) for missing inputs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from pytest_jeval.telemetry.efficiency import (
    decode_throughput_tok_per_sec,
    ipj,
    ipw,
    mbu_pct,
    mfu_pct,
    summary_ipj,
    summary_ipw,
    throughput_tok_per_sec,
)


def test_throughput() -> None:
    assert throughput_tok_per_sec(120, 2.0) == pytest.approx(60.0)
    assert throughput_tok_per_sec(0, 2.0) == 0.0  # measured: nothing generated
    for tokens, seconds in [(None, 2.0), (120, None), (120, 0.0), (120, -1.0), (-1, 2.0)]:
        assert throughput_tok_per_sec(tokens, seconds) is None


def test_decode_throughput_needs_ttft() -> None:
    assert decode_throughput_tok_per_sec(100, 2.5, 0.5) == pytest.approx(50.0)
    assert decode_throughput_tok_per_sec(100, 2.5, None) is None
    assert decode_throughput_tok_per_sec(100, None, 0.5) is None
    assert decode_throughput_tok_per_sec(100, 2.5, 2.5) is None  # no decode time left


def test_mfu() -> None:
    # 8B dense model, 187 + 12 tokens in 1.34 s on one A100 (312 TFLOPS)
    expected = 2 * 8e9 * (187 + 12) / 1.34 / 312e12 * 100
    assert mfu_pct(12, 187, 1.34, 8.0, 312.0, 1) == pytest.approx(expected)
    assert mfu_pct(12, 187, 1.34, 8.0, 312.0, 4) == pytest.approx(expected / 4)


@pytest.mark.parametrize(
    "args",
    [
        (None, 187, 1.34, 8.0, 312.0, 1),
        (12, None, 1.34, 8.0, 312.0, 1),
        (12, 187, None, 8.0, 312.0, 1),
        (12, 187, 0.0, 8.0, 312.0, 1),
        (12, 187, 1.34, 0.0, 312.0, 1),  # param_count_b left at its 0.0 default
        (12, 187, 1.34, None, 312.0, 1),
        (12, 187, 1.34, 8.0, 0.0, 1),
        (12, 187, 1.34, 8.0, 312.0, 0),
    ],
)
def test_mfu_missing_inputs(args: tuple[Any, ...]) -> None:
    assert mfu_pct(*args) is None


def test_mbu() -> None:
    # 8B params at 2 bytes, 12 tokens in 1.34 s, A100 SXM 2039 GB/s
    expected = 8e9 * 2 * 12 / 1.34 / 2039e9 * 100
    assert mbu_pct(12, 1.34, 8.0, 2039.0, 1) == pytest.approx(expected)
    assert mbu_pct(12, 1.34, 8.0, 2039.0, 1, bytes_per_param=1.0) == pytest.approx(expected / 2)
    assert mbu_pct(12, 1.34, 8.0, 2039.0, 2) == pytest.approx(expected / 2)


@pytest.mark.parametrize(
    "args",
    [
        (None, 1.34, 8.0, 2039.0, 1),
        (12, None, 8.0, 2039.0, 1),
        (12, 0.0, 8.0, 2039.0, 1),
        (12, 1.34, 0.0, 2039.0, 1),
        (12, 1.34, 8.0, 0.0, 1),
        (12, 1.34, 8.0, None, 1),
        (12, 1.34, 8.0, 2039.0, None),
    ],
)
def test_mbu_missing_inputs(args: tuple[Any, ...]) -> None:
    assert mbu_pct(*args) is None


def test_ipw_ipj() -> None:
    assert ipw(1.0, 893.0) == pytest.approx(1 / 893)
    assert ipj(1.0, 250.0) == pytest.approx(0.004)
    assert ipw(0.0, 893.0) == 0.0  # incorrect sample with known power
    assert ipj(0.0, 250.0) == 0.0
    assert ipw(0.5, 100.0) == pytest.approx(0.005)  # partial credit scores


@pytest.mark.parametrize("func", [ipw, ipj, summary_ipw, summary_ipj])
def test_per_unit_none_when_unknown(func: Callable[..., float | None]) -> None:
    assert func(1.0, None) is None
    assert func(1.0, 0.0) is None
    assert func(0.0, None) is None  # incorrect, but no energy data: unknown, not 0
    assert func(None, 10.0) is None  # unscored


def test_summary_level() -> None:
    assert summary_ipw(0.7222, 892.98) == pytest.approx(0.7222 / 892.98)
    assert summary_ipj(0.7222, 28158590.26) == pytest.approx(0.7222 / 28158590.26)
