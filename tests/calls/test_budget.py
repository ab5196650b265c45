"""The run budget's admission check (pytest_jeval.calls.budget): worst cases, settling, the shared ledger."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_jeval.calls.budget import Budget, BudgetSpec, create_ledger, prompt_chars, read_totals, set_baseline
from pytest_jeval.core.chat import BudgetExhausted, ChatRequest, Reply
from pytest_jeval.session.budget import baseline

PRICES = {"m": (1000.0, 2000.0)}  # USD per million tokens: 0.001 in, 0.002 out per token


def request(text: str = "x" * 300, max_tokens: int = 100, model: str = "m") -> ChatRequest:
    return ChatRequest(model=model, messages=[{"role": "user", "content": text}], max_tokens=max_tokens)


def reply(prompt: int, completion: int) -> Reply:
    return Reply(text="ok", model="m", prompt_tokens=prompt, completion_tokens=completion)


def test_a_call_reserves_its_worst_case() -> None:
    budget = Budget(BudgetSpec(max_cost_usd=None, max_total_tokens=10_000, prices=PRICES))
    held = budget.estimate(request())
    assert prompt_chars(request()) == 308  # the content and 8 for the message framing
    assert held.tokens == 103 + 100  # ceil(308 / 3) prompt tokens and the whole max_tokens
    assert held.cost == pytest.approx((103 * 1000 + 100 * 2000) / 1e6)


def test_admission_settling_and_refusal() -> None:
    budget = Budget(BudgetSpec(max_cost_usd=None, max_total_tokens=500, prices=PRICES))
    first = budget.admit(request())  # 203 reserved
    second = budget.admit(request())  # 406 reserved
    with pytest.raises(BudgetExhausted, match=r"budget exhausted: .*max_total_tokens 500: 0 spent, 406 in flight, "
                                              r"this call up to 203"):
        budget.admit(request())
    budget.settle(first, reply(50, 10))  # 60 used instead of 203
    budget.release(second)  # a failed call gives its reservation back
    assert budget.totals() == (pytest.approx(0.05 + 0.02), 60.0)
    budget.admit(request())  # 60 + 203 <= 500
    assert budget.refused == 1


def test_a_reply_without_token_counts_costs_its_reservation() -> None:
    budget = Budget(BudgetSpec(max_cost_usd=1.0, max_total_tokens=None, prices=PRICES))
    held = budget.admit(request())
    budget.settle(held, Reply(text="ok", model="m"))
    assert budget.totals() == (pytest.approx(held.cost), held.tokens)


def test_the_prompt_estimate_learns_a_denser_tokenizer() -> None:
    budget = Budget(BudgetSpec(max_cost_usd=None, max_total_tokens=10_000, prices=PRICES))
    held = budget.admit(request())
    budget.settle(held, reply(prompt=308, completion=1))  # one token per character (e.g. CJK text)
    assert budget.estimate(request()).tokens == 308 + 100


def test_an_unlisted_model_is_priced_as_the_dearest() -> None:
    budget = Budget(BudgetSpec(max_cost_usd=10.0, max_total_tokens=None, prices=PRICES))
    assert budget.estimate(request(model="other")).cost == pytest.approx((103 + 100) * 2000 / 1e6)


def test_processes_share_one_ledger(tmp_path: Path) -> None:
    path = str(tmp_path / "run.ledger")
    create_ledger(path)
    set_baseline(path, 0.0, 200)  # records kept from an earlier run
    spec = BudgetSpec(max_cost_usd=None, max_total_tokens=600, prices=PRICES, ledger=path)
    worker_a = Budget(spec)
    worker_b = Budget(BudgetSpec(**{**spec.__dict__, "slot": 3}))
    held = worker_a.admit(request())  # 200 spent + 203 reserved
    with pytest.raises(BudgetExhausted, match="200 spent, 203 in flight"):
        worker_b.admit(request())  # 200 + 203 in flight in another process + 203 > 600
    worker_a.settle(held, reply(100, 0))
    assert read_totals(path) == (pytest.approx(0.1), 300.0)
    worker_b.admit(request())  # 300 + 203 <= 600


def test_a_process_without_the_ledger_gets_its_share(tmp_path: Path) -> None:
    spec = BudgetSpec(max_cost_usd=None, max_total_tokens=1000, prices=PRICES, ledger=str(tmp_path / "absent"),
                      slot=2, share=4)
    budget = Budget(spec)
    assert not budget.ledger.shared and budget.max_tokens == 250
    budget.admit(request())
    with pytest.raises(BudgetExhausted):
        budget.admit(request())


def test_baseline_of_kept_records() -> None:
    resumed = {("b", "m"): {"1": {"cost_usd": 0.5, "judge_cost_usd": 0.25, "prompt_tokens": 10,
                                  "completion_tokens": 5, "judge_prompt_tokens": 3, "judge_completion_tokens": None},
                            "2": {"cost_usd": None, "prompt_tokens": 7, "completion_tokens": 1}}}
    assert baseline(resumed) == (0.75, 26)
