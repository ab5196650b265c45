"""``num_fewshot = k`` (suite/fewshot.py): the selection (seeded, the same k for every sample, never the sample
itself, too many refused), the request's turns, and the plan-time refusals, on gsm8k's real train rows."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

from pytest_jeval.core.benchmark import Benchmark, FewShot
from pytest_jeval.core.sample import Sample
from pytest_jeval.suite.config import SuiteError
from pytest_jeval.suite.dataset import DatasetLoadError
from pytest_jeval.suite.fewshot import load_pool, with_examples
from pytest_jeval.suite.plan import EvalPlan

DATA = Path(__file__).resolve().parents[1] / "data"
TRAIN = DATA / "gsm8k" / "train.jsonl"
TEST = DATA / "gsm8k" / "test.jsonl"
TRAIN_ROWS = [json.loads(line) for line in TRAIN.read_text(encoding="utf-8").splitlines()]


def _plan(tmp_path: Path, bench: str, *, seed: int = 42, name: str = "gsm8k") -> EvalPlan:
    suite = tmp_path / "suite.toml"
    suite.write_text(textwrap.dedent(f"""
        [run]
        seed = {seed}
        cache = false

        [[models]]
        name = "m"
        base_url = "http://127.0.0.1:9/v1"
        api_key = "x"

        [[benchmarks]]
        name = "{name}"
        """) + textwrap.dedent(bench), encoding="utf-8")
    return EvalPlan.from_file(suite, invocation_dir=tmp_path)


def _gsm8k(tmp_path: Path, k: int, *, seed: int = 42, fewshot: Path = TRAIN, extra: str = "") -> EvalPlan:
    return _plan(tmp_path, f'data_files = "{TEST}"\nfewshot_files = "{fewshot}"\nnum_fewshot = {k}\n'
                           f"max_samples = 5\n{extra}", seed=seed)


def _seeded(seed: int, count: int = len(TRAIN_ROWS)) -> list[str]:
    return [f"gsm8k-{int(i)}" for i in np.random.default_rng(seed).permutation(count)]


@pytest.mark.parametrize("seed", [42, 7])
def test_the_same_seeded_k_for_every_sample(tmp_path: Path, seed: int) -> None:
    samples, _ = _gsm8k(tmp_path, 3, seed=seed).samples("gsm8k")
    assert len(samples) == 5
    for s in samples:
        assert s.metadata["fewshot_ids"] == _seeded(seed)[:3] and s.metadata["fewshot_split"] == "train"


def test_the_seed_changes_the_examples(tmp_path: Path) -> None:
    one = _gsm8k(tmp_path, 3, seed=42).samples("gsm8k")[0][0].metadata["fewshot_ids"]
    other = _gsm8k(tmp_path, 3, seed=7).samples("gsm8k")[0][0].metadata["fewshot_ids"]
    assert one != other


def test_the_request_sends_k_turn_pairs_before_the_question(tmp_path: Path) -> None:
    plan = _gsm8k(tmp_path, 3)
    sample = plan.samples("gsm8k")[0][0]
    messages = plan.sample_request("gsm8k", "m", sample).messages  # type: ignore[union-attr]
    assert [m["role"] for m in messages] == ["user", "assistant"] * 3 + ["user"]
    for n, shot in enumerate(sample.metadata["fewshot_ids"]):
        row = TRAIN_ROWS[int(shot.removeprefix("gsm8k-"))]
        assert row["question"] in messages[2 * n]["content"]
        steps, gold = row["answer"].rsplit("####", 1)
        assert messages[2 * n + 1]["content"] == f"{steps.rstrip()}\nAnswer: {gold.strip()}"
    assert sample.input in messages[-1]["content"]


def test_the_examples_change_the_cache_key(tmp_path: Path) -> None:
    from pytest_jeval.core.chat import Endpoint

    endpoint = Endpoint(base_url="http://127.0.0.1:9/v1", api_key=None)
    keys = set()
    for k in (0, 2, 3):
        plan = _gsm8k(tmp_path, k)
        keys.add(plan.sample_request("gsm8k", "m", plan.samples("gsm8k")[0][0]).cache_key(endpoint))  # type: ignore[union-attr]
    assert len(keys) == 3


def test_no_examples_with_k_zero(tmp_path: Path) -> None:
    plan = _gsm8k(tmp_path, 0)
    sample = plan.samples("gsm8k")[0][0]
    assert "fewshot_ids" not in sample.metadata
    assert len(plan.sample_request("gsm8k", "m", sample).messages) == 1  # type: ignore[union-attr]


def test_the_sample_itself_is_never_its_own_example(tmp_path: Path) -> None:
    # the few-shot source is the evaluation data itself: the first of the order is left out for itself
    plan = _plan(tmp_path, f'data_files = "{TRAIN}"\nfewshot_files = "{TRAIN}"\nnum_fewshot = 3\n')
    samples = plan.samples("gsm8k")[0]
    order = _seeded(42)
    for s in samples:
        assert s.id not in s.metadata["fewshot_ids"]
        assert s.metadata["fewshot_ids"] == [i for i in order if i != s.id][:3]
    assert len(samples) == 8  # each of the first three of the order has the fourth in its own place
    assert [s.metadata["fewshot_ids"] for s in samples if s.id == order[0]] == [order[1:4]]


def test_more_examples_than_the_source_holds_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DatasetLoadError, match=r"num_fewshot = 9 asks for more examples than its few-shot split "
                                               r"'train' holds \(8\); use num_fewshot <= 8"):
        _gsm8k(tmp_path, 9).samples("gsm8k")
    assert len(_gsm8k(tmp_path, 8).samples("gsm8k")[0][0].metadata["fewshot_ids"]) == 8
    same = _plan(tmp_path, f'data_files = "{TRAIN}"\nfewshot_files = "{TRAIN}"\nnum_fewshot = 8\n')
    with pytest.raises(DatasetLoadError, match=r"\(8, one of them the sample itself\); use num_fewshot <= 7"):
        same.samples("gsm8k")


def _toy(sampler: str = "seeded", grouped: bool = False) -> Benchmark:
    return Benchmark(
        name="toy", to_sample=lambda row, i, ctx: Sample(id=f"toy-{i}", input=row["q"], target=row["a"],
                                                        subject=row["g"]),
        prompt=lambda s: s.input, fewshot=FewShot(split="dev", answer=lambda s: f"Answer: {s.target}",
                                                  sampler=sampler, group=(lambda s: s.subject) if grouped else None))  # type: ignore[arg-type]


def _toy_rows(tmp_path: Path) -> Path:
    rows = tmp_path / "dev.jsonl"
    rows.write_text("".join(json.dumps({"q": f"q{i}", "a": str(i), "g": "ab"[i % 2]}) + "\n" for i in range(6)))
    return rows


def test_first_n_takes_the_source_order(tmp_path: Path) -> None:
    pool = load_pool(_toy("first_n"), k=2, files=[_toy_rows(tmp_path)], eval_files=[], eval_split=None, subset=None,
                     seed=42)
    assert [e.id for e in pool.choose(Sample(id="x", input="?"))] == ["toy-0", "toy-1"]
    assert pool.messages(["toy-1"]) == [{"role": "user", "content": "q1"}, {"role": "assistant", "content": "Answer: 1"}]


def test_a_grouped_source_gives_each_sample_its_groups_examples(tmp_path: Path) -> None:
    pool = load_pool(_toy("first_n", grouped=True), k=2, files=[_toy_rows(tmp_path)], eval_files=[], eval_split=None,
                     subset=None, seed=42)
    assert [e.id for e in pool.choose(Sample(id="x", input="?", subject="b"))] == ["toy-1", "toy-3"]
    assert [e.id for e in pool.choose(Sample(id="y", input="?", subject="a"))] == ["toy-0", "toy-2"]
    with pytest.raises(DatasetLoadError, match=r"holds for sample 'z' \(examples of its group 'c' only\) \(0\); use num_fewshot <= 0"):
        pool.choose(Sample(id="z", input="?", subject="c"))


def test_the_examples_go_after_a_system_message() -> None:
    shots = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]
    got = with_examples([{"role": "system", "content": "s"}, {"role": "user", "content": "Q"}], shots)
    assert [m["content"] for m in got] == ["s", "q", "a", "Q"]


# -- refused at plan time ---------------------------------------------------------------------------------------

def test_a_benchmark_without_a_source_refuses_it_naming_those_with_one(tmp_path: Path) -> None:
    with pytest.raises(SuiteError) as exc:
        _plan(tmp_path, "num_fewshot = 2\n", name="quickstart")
    assert "benchmarks[0].num_fewshot: 'quickstart' declares no few-shot source; the benchmarks that do are: " in str(
        exc.value)
    assert "gsm8k" in str(exc.value).rsplit("do are: ", 1)[1]


def test_an_agent_run_refuses_it(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match=r"benchmarks\[0\].num_fewshot: few-shot examples are for direct benchmarks; "
                                         r"'gsm8k' runs as 'agent'"):
        _gsm8k(tmp_path, 3, extra='backend = "agent"\n')


def test_fewshot_files_need_num_fewshot_and_must_exist(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match=r"benchmarks\[0\].fewshot_files: only valid with num_fewshot"):
        _plan(tmp_path, f'data_files = "{TEST}"\nfewshot_files = "{TRAIN}"\n')
    with pytest.raises(SuiteError, match=r"benchmarks\[0\].fewshot_files: file not found: "):
        _gsm8k(tmp_path, 3, fewshot=tmp_path / "missing.jsonl")


def test_a_negative_count_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match=r"benchmarks\.0\.num_fewshot|benchmarks\[0\]\.num_fewshot"):
        _gsm8k(tmp_path, -1)


# -- mmlu-pro: lm-eval's first_n from the validation split, one pool per category ---------------------------------

MMLU = DATA / "mmlu_pro"


def test_mmlu_pro_takes_the_first_k_of_its_category(tmp_path: Path) -> None:
    plan = _plan(tmp_path, f'data_files = "{MMLU / "test.jsonl"}"\nfewshot_files = "{MMLU / "validation.jsonl"}"\n'
                           'num_fewshot = 2\nrecord_ids = ["70", "71"]\n', name="mmlu-pro")
    samples = {s.id: s for s in plan.samples("mmlu-pro")[0]}
    assert samples["71"].subject == "math" and samples["71"].metadata["fewshot_ids"] == ["0", "2"]
    assert samples["70"].subject == "other" and samples["70"].metadata["fewshot_ids"] == ["1", "3"]
    messages = plan.sample_request("mmlu-pro", "m", samples["71"]).messages  # type: ignore[union-attr]
    assert "What is 7 times 8?" in messages[0]["content"] and "B) 56" in messages[0]["content"]
    assert messages[1]["content"] == ("Let's think step by step. 7 times 8 is 56, which is option (B). "
                                      "The answer is (B).\nAnswer: B")
    assert "What is the square root of 81?" in messages[2]["content"]


def test_mmlu_pro_refuses_a_category_without_examples(tmp_path: Path) -> None:
    plan = _plan(tmp_path, f'data_files = "{MMLU / "test.jsonl"}"\nfewshot_files = "{MMLU / "validation.jsonl"}"\n'
                           'num_fewshot = 2\n', name="mmlu-pro")
    with pytest.raises(DatasetLoadError, match=r"holds for sample '7\d' \(examples of its group '(chemistry|law|economics)' only\) \(0\)"):
        plan.samples("mmlu-pro")
