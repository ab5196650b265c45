"""What the run budget's check costs per call: admit + settle on a shared ledger, against no budget.

Run: ``python tests/perf/bench_budget.py [--calls N] [--workers N]``. Prints microseconds per call for a
budget on the run's shared ledger file (the slots of the baseline, the controller and N workers summed at
each admission) and the worst-case estimate alone.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from pytest_jeval.calls.budget import Budget, BudgetSpec, create_ledger
from pytest_jeval.core.chat import ChatRequest, Reply


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--workers", type=int, default=8)
    args = parser.parse_args()
    request = ChatRequest(model="m", messages=[{"role": "system", "content": "s" * 200},
                                               {"role": "user", "content": "q" * 1500}], max_tokens=512)
    reply = Reply(text="ok", model="m", prompt_tokens=400, completion_tokens=100)
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "run.ledger")
        create_ledger(path)
        budget = Budget(BudgetSpec(max_cost_usd=1e9, max_total_tokens=10**15, prices={"m": (1.0, 2.0)},
                                   ledger=path, slot=2, slots=2 + args.workers))
        start = time.perf_counter()
        for _ in range(args.calls):
            budget.settle(budget.admit(request), reply)
        shared = (time.perf_counter() - start) / args.calls * 1e6
        start = time.perf_counter()
        for _ in range(args.calls):
            budget.estimate(request)
        estimate = (time.perf_counter() - start) / args.calls * 1e6
    print(f"budget check (admit + settle, shared ledger, {2 + args.workers} slots): {shared:.1f} us per call")
    print(f"  of which the worst-case estimate: {estimate:.1f} us per call")
    print("no budget: the scheduler tests `budget is None` once per call")


if __name__ == "__main__":
    main()
