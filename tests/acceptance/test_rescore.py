"""``jeval rescore`` reproduces runs: one real run per built-in benchmark, rescored with its own scorer.

Each test runs a small suite through the plugin against the test server (which answers
as the model and as the judge, with replies picked from the prompt so that a run holds
right, wrong and unscored samples), then rescores the JSONL without ``--scorer`` and
checks that the new JSONL and summary equal the originals byte for byte. The code
benchmarks run the code again in the sandbox: their records differ only in the measured
``duration`` of each run (see docs/cli.md).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.cli import main
from pytest_jeval.cli._rescore import rescore_record
from pytest_jeval.scoring.registry import call_scorer, get_scorer, scorer_names
from pytest_jeval.suite.catalog import builtin_benchmarks
from pytest_jeval.testing.openai_server import Fault
from tests.support.bench import DATA, MODEL, serve

Answer = Callable[[str], str]


def pick(text: str, options: list[str]) -> str:
    """One of ``options``, chosen by the text (the same prompt always gets the same reply)."""
    return options[int(hashlib.sha256(text.encode()).hexdigest(), 16) % len(options)]


def rotate(*options: str) -> Answer:
    return lambda prompt: pick(prompt, list(options))


STRUCTURED = rotate("extracted_final_answer: 7\nreasoning: same\ncorrect: yes",
                    "extracted_final_answer: 8\nreasoning: differs\ncorrect: no", "I cannot decide.")
MCQ_MODEL = rotate("Answer: A", "Answer: B", "The answer is (C)", "Hmm, hard to say.")
MCQ_JUDGE = rotate("B", "NONE")


def gsm8k_rows(tmp: Path) -> str:
    rows = [{"question": f"Tom has {a} apples and buys {b} more. How many apples?", "answer": f"{a} + {b}\n#### {a + b}"}
            for a, b in ((3, 4), (10, 5), (8, 8), (20, 22), (6, 9), (2, 2))]
    path = tmp / "gsm8k.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def gsm8k_answer(prompt: str) -> Any:
    a, b = map(int, re.findall(r"\d+", prompt.split("How many")[0])[:2])
    if a == 20:
        return Fault("500")  # an endpoint error: the record stays errored
    return [f"So {a} + {b} = {a + b}.\nAnswer: {a + b}", f"Answer: {a + b + 1}", "I like turtles."][a % 3]


def math500_rows(tmp: Path) -> str:
    rows = [{"problem": f"Compute {a} times {b}.", "answer": str(a * b), "subject": "Algebra", "level": 1,
             "unique_id": f"test/algebra/{a}.json"} for a, b in ((2, 3), (4, 5), (6, 7), (3, 3), (5, 8))]
    path = tmp / "math500.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def math500_answer(prompt: str) -> str:
    a, b = map(int, re.findall(r"Compute (\d+) times (\d+)", prompt)[0])
    return [f"The product is \\boxed{{{a * b}}}.", f"\\boxed{{{a * b + 1}}}", "No idea."][a % 3]


def supergpqa_rows(tmp: Path) -> str:
    rows = [{"uuid": f"sg-{i}", "question": f"Which option is number {i}?", "options": ["one", "two", "three", "four"],
             "answer_letter": "ABCD"[i % 4], "discipline": "Science", "field": "Physics", "subfield": "Optics"}
            for i in range(6)]
    path = tmp / "supergpqa.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def humaneval_rows(tmp: Path) -> str:
    rows = [{"task_id": f"HumanEval/{i}", "prompt": f"def add{i}(a, b):\n    \"\"\"Return a + b.\"\"\"\n",
             "canonical_solution": "    return a + b\n", "test": "def check(candidate):\n    assert candidate(2, 3) == 5\n",
             "entry_point": f"add{i}"} for i in range(4)]
    path = tmp / "humaneval.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def humaneval_answer(prompt: str) -> str:
    name = re.findall(r"def (add\d+)", prompt)[0]
    return [f"```python\ndef {name}(a, b):\n    return a + b\n```", f"```python\ndef {name}(a, b):\n    return a - b\n```",
            "I cannot write code."][int(name[3:]) % 3]


def livecodebench_answer(prompt: str) -> str:
    if "A^B+B^A" in prompt:
        return "```python\na, b = map(int, input().split())\nprint(a ** b + b ** a)\n```"
    return "```python\nprint(input())\n```" if "set bits" in prompt else "no code here"


def gaia_judge(prompt: str) -> str:
    """Accepts "seven" for 7 and nothing else."""
    return "extracted_final_answer: seven\ncorrect: yes" if "seven" in prompt else STRUCTURED(prompt)


def coding_assistant_answer(prompt: str) -> str:
    code = re.findall(r"```python\n(.*?)```", prompt, re.S)
    return pick(prompt, [f"```python\n{code[0]}```" if code else "no code", "I would rather not."])


#: benchmark -> (data files, or a writer of them; model replies; judge replies; needs --data for rescore)
CASES: dict[str, tuple[Any, Answer, Answer | None, bool]] = {
    "gsm8k": (gsm8k_rows, gsm8k_answer, None, False),
    "math500": (math500_rows, math500_answer, None, False),
    "gpqa": ("gpqa/gpqa_diamond.csv", MCQ_MODEL, MCQ_JUDGE, False),
    "mmlu-pro": ("mmlu_pro/test.jsonl", MCQ_MODEL, MCQ_JUDGE, False),
    "supergpqa": (supergpqa_rows, MCQ_MODEL, MCQ_JUDGE, False),
    "truthfulqa-mc": ("truthfulqa_mc/validation.jsonl", MCQ_MODEL, MCQ_JUDGE, False),
    "gaia": ("gaia/2023/validation/metadata.jsonl", rotate("FINAL ANSWER: 42", "FINAL ANSWER: seven", "No idea."),
             gaia_judge, False),
    "hle": ("hle/test.jsonl", rotate("Answer: A", "Exact Answer: 42", "Explanation only."), STRUCTURED, True),
    "frames": ("frames/test.tsv", rotate("It is 7.", "Probably 8."), STRUCTURED, False),
    "natural-reasoning": ("natural_reasoning/train.jsonl", rotate("The result is 7.", "Unclear."), STRUCTURED, False),
    "simpleqa": ("simpleqa/simple_qa_test_set.csv", rotate("Paris.", "I don't know."),
                 rotate("A", "B", "C", "The grade is B", "???"), False),
    "wildchat": ("wildchat/train.jsonl", rotate("Sure, here it is.", "No."),
                 rotate("My final verdict: [[A>B]]", "[[B>A]]", "[[A=B]]", "no verdict"), False),
    "coding_task": ((), rotate("```python\ndef unrelated():\n    return 1\n```", "```text\nno code\n```"), None, False),
    "browser_assistant": ((), rotate("ANSWER: not stated\nSOURCES:", "ANSWER: 1,284 metres\nSOURCES: "
                                     "kelvara-bridge-authority", "I could not find it."), None, False),
    "loghub": ((), rotate("VERDICT: ANOMALY\nLINES: 3", "VERDICT: NORMAL\nLINES: NONE", "unsure"), None, False),
    "ipw": ((), rotate("ANSWER: not stated\nCITATIONS:\nVERDICT: NORMAL", "42", "```python\nx = 1\n```"), None, False),
    "quickstart": ((), rotate("Answer: A", "42", "Paris", "It is Tokyo."), None, False),
    "doc_qa": ((), rotate("ANSWER: not stated\nCITATIONS: none", "ANSWER: 42\nCITATIONS: [1]"), None, False),
    "email_triage": ((), rotate("CATEGORY: billing\nPRIORITY: high\nDRAFT: Thank you, we will refund you today.",
                                "CATEGORY: spam\nPRIORITY: low\nDRAFT: none"), None, False),
    "security_scanner": ((), rotate("VULNERABILITY: CWE-89\nCLASS: SQL injection\nLINES: 3",
                                    "VULNERABILITY: NONE\nCLASS: NONE\nLINES: NONE"), None, False),
    "humaneval": (humaneval_rows, humaneval_answer, None, True),
    "livecodebench": ("livecodebench/code_generation_lite_sample.jsonl", livecodebench_answer, None, True),
    "coding_assistant": ((), coding_assistant_answer, None, False),
    "daily_digest": ((), rotate("Nothing planned today.", "Budget review, design critique, expense report, slide deck."),
                     None, False),
    "morning_brief": ((), rotate("Nothing this morning.", "Leave early: sprint retro, then the press briefing."),
                      None, False),
    "research_mining": ((), rotate("CLAIM: no effect was found [A1]", "CLAIM: it reduced damage by 54 percent [A3]"),
                        None, False),
    "knowledge_base": ((), rotate("ANSWER: not stated\nDOCS: none", "ANSWER: 42\nDOCS: [d1]"), None, False),
}
CODE = {"humaneval", "livecodebench", "coding_assistant"}
#: Small bundled sets run whole (a 5-sample subset may hold a single kind of verdict).
WHOLE = {"quickstart", "doc_qa", "email_triage", "security_scanner", "daily_digest", "morning_brief", "research_mining",
         "knowledge_base"}
CODE |= {"coding_task", "ipw"}  # ipw's mix holds code items
WHOLE |= {"browser_assistant", "loghub"}


def without_durations(value: Any) -> Any:
    """``value`` without the ``duration`` keys (the measured time of a sandbox run) and with the
    sandbox's temporary directory (a new random name for each run) in tracebacks masked."""
    if isinstance(value, dict):
        return {k: without_durations(v) for k, v in value.items() if k != "duration"}
    if isinstance(value, list):
        return [without_durations(v) for v in value]
    if isinstance(value, str):
        return re.sub(r"jeval-sandbox-[A-Za-z0-9_]+", "jeval-sandbox-*", value)
    return value


#: Agent benchmarks, whose rescoring needs a trajectory: each is reproduced in its own test file.
AGENT_CASES = {"toolcall15": "benchmarks/test_toolcall15.py", "retail": "benchmarks/test_retail.py",
               "bfcl": "benchmarks/test_bfcl.py", "terminal_lite": "acceptance/test_terminal_lite.py",
               "taubench": "benchmarks/test_taubench.py",
               "webchorearena": "benchmarks/test_webchorearena.py", "workarena": "benchmarks/test_workarena.py",
               "deepplanning": "acceptance/test_deepplanning_e2e.py",
               "ama-bench": "acceptance/test_ama_bench_e2e.py", "lifelong-agent": "acceptance/test_lifelong_agent_e2e.py",
               "swebench": "acceptance/test_swebench_e2e.py", "swefficiency": "acceptance/test_swefficiency_e2e.py",
               "terminalbench-v2.1": "acceptance/test_terminalbench_e2e.py",
               "terminalbench": "acceptance/test_terminalbench_e2e.py",
               "terminalbench-native": "acceptance/test_terminalbench_e2e.py",
               "liveresearch": "benchmarks/test_liveresearch.py",
               "liveresearchbench": "benchmarks/test_liveresearchbench.py",
               "paperarena": "benchmarks/test_paperarena.py", "pinchbench": "benchmarks/test_pinchbench.py"}


def test_every_builtin_names_a_registered_scorer() -> None:
    benches = builtin_benchmarks()  # imports every benchmark module: each registers its own scorer
    names = set(scorer_names())
    assert {b.name: b.scorer for b in benches if b.scorer not in names} == {}
    # a reproduction test below for each one, or in the agent benchmark's own test file
    assert {b.name for b in benches} == set(CASES) | {b.name for b in benches if b.name in AGENT_CASES}
    assert set(CASES).isdisjoint(AGENT_CASES)
    for name, file in AGENT_CASES.items():
        if name in {b.name for b in benches}:
            text = (Path(__file__).resolve().parents[1] / file).read_text()
            assert re.search(r'(main|jeval)\(\["rescore"|call_scorer\(', text), f"{file} does not rescore {name}"


@pytest.mark.parametrize("benchmark", sorted(CASES))
def test_rescore_reproduces_the_run(benchmark: str, pytester: pytest.Pytester, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    data, model, judge, needs_data = CASES[benchmark]
    files = data(tmp_path) if callable(data) else data
    with serve(pytester, model, judge) as p:
        extra = "" if benchmark in WHOLE else "max_samples = 5"
        # one sandbox run at a time: with more, how many tests of a failing problem ran before
        # the stop at the first failure depends on timing, in a run as in a rescore
        run_extra = "max_exec_workers = 1"
        suite = p.suite(benchmark, files, judge=judge is not None, extra=extra, run_extra=run_extra) if files else \
            p.suite(benchmark, [], judge=False, extra=extra, run_extra=run_extra)
        result = pytester.runpytest("--jeval-config", str(suite), "-p", "no:randomly")
        assert result.ret in (0, 1), result.stdout.str()[-3000:]
        requests = p.server.request_count
        source = pytester.path / "out" / f"{benchmark}_{MODEL}.jsonl"
        records = [json.loads(line) for line in source.read_text().splitlines()]
        assert len(records) >= 3
        # the run holds more than one kind of verdict, so a wrong scorer would show
        assert len({(r["is_correct"], r["score"]) for r in records}) >= 2, records
        target = tmp_path / "rescored" / source.name
        argv = ["rescore", str(source), "-o", str(target), "--exec-workers", "1"]
        if needs_data:
            argv += ["--data", files if Path(files).is_absolute() else str(DATA / files)]
        capsys.readouterr()
        code = main(argv)
        out, err = capsys.readouterr()
        assert code == 0, err
        assert "0 verdicts changed" in out and "summary fields changed: none" in out, out
        assert p.server.request_count == requests  # no model or judge was queried
    original, rescored = source.read_bytes(), target.read_bytes()
    if benchmark in CODE:
        new = [without_durations(json.loads(x)) for x in rescored.splitlines()]
        old = [without_durations(json.loads(x)) for x in original.splitlines()]
        assert len(new) == len(old)
        for a, b in zip(new, old):
            assert {k: (a.get(k), b.get(k)) for k in a.keys() | b.keys() if a.get(k) != b.get(k)} == {}
            assert list(a) == list(b)
    else:
        assert rescored == original
    summary = source.with_name(source.name + ".summary.json")
    assert target.with_name(target.name + ".summary.json").read_bytes() == summary.read_bytes()


def test_another_scorer_changes_verdicts_not_errors(pytester: pytest.Pytester, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    with serve(pytester, gsm8k_answer) as p:
        p.pytester.runpytest("--jeval-config", str(p.suite("gsm8k", gsm8k_rows(tmp_path), judge=False)))
        source = pytester.path / "out" / f"gsm8k_{MODEL}.jsonl"
        requests = p.server.request_count
        assert main(["rescore", str(source), "--scorer", "exact"]) == 0
        assert p.server.request_count == requests
    out = capsys.readouterr().out
    before = {r["record_id"]: r for r in map(json.loads, source.read_text().splitlines())}
    target = source.with_name(f"gsm8k_{MODEL}.rescored-exact.jsonl")
    after = {r["record_id"]: r for r in map(json.loads, target.read_text().splitlines())}
    assert after["gsm8k-3"] == before["gsm8k-3"] and after["gsm8k-3"]["error"]  # errored stays errored
    assert before["gsm8k-0"]["is_correct"] is True and after["gsm8k-0"]["is_correct"] is False  # not exactly "7"
    assert before["gsm8k-2"]["unscored"] is True and after["gsm8k-2"]["is_correct"] is False  # an answer to exact
    summary = json.loads(target.with_name(target.name + ".summary.json").read_text())
    assert (summary["correct"], summary["errors"], summary["unscored"]) == (0, 1, 0)
    assert "with 'exact'" in out and "-> 0.0000" in out


def test_rescore_without_scorer_needs_a_builtin_benchmark(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "mine_m.jsonl"
    path.write_text(json.dumps({"record_id": "x", "benchmark": "mine", "model": "m", "model_answer": "4",
                                "expected": "4", "error": None, "is_correct": True, "score": 1.0}) + "\n")
    assert main(["rescore", str(path)]) == 2
    err = capsys.readouterr().err
    assert "not a built-in benchmark" in err and "--scorer" in err
    assert main(["rescore", str(path), "--scorer", "numeric"]) == 0
    assert (tmp_path / "mine_m.rescored-numeric.jsonl").is_file()


# -- judge verdicts ------------------------------------------------------------------------------

def gaia_judged(output: str, verdict: bool | None, answer: str = "seven", gold: str = "7") -> dict[str, Any]:
    """A GAIA record whose exact match failed and whose judge gave ``output``."""
    meta = {"extracted": answer, "method": "judge" if verdict is not None else "exact_match",
            "judge_model": "j", "judge_output": output, "judge_verdict": verdict, "judge_parse": "correct_line",
            "judge_extracted": answer}
    return {"record_id": "g1", "benchmark": "gaia", "model": "m", "model_answer": f"FINAL ANSWER: {answer}",
            "question": "How many?", "expected": gold, "error": None, "is_correct": bool(verdict),
            "score": 1.0 if verdict else 0.0, "scoring_metadata": meta, "extracted": answer, "unscored": False}


def test_gaia_keeps_the_judge_verdict() -> None:
    record = gaia_judged("extracted_final_answer: seven\ncorrect: yes", True)
    out = rescore_record(record, "gaia")
    assert out["is_correct"] is True and out["scoring_metadata"] == record["scoring_metadata"]
    # the plain exact match alone would say wrong: "seven" is not 7
    from pytest_jeval.scoring.gaia import score_gaia
    assert score_gaia(record["model_answer"], "7").correct is False


def test_reparse_judge_reads_the_stored_reply_with_the_current_parser() -> None:
    # The run's parser did not read this reply (verdict None, exact-match verdict kept); today's does.
    record = gaia_judged("**Correct:** yes", None)
    record["scoring_metadata"]["judge_parse"] = "none"
    kept = rescore_record(record, "gaia")
    assert kept["is_correct"] is False and kept["scoring_metadata"] == record["scoring_metadata"]
    reparsed = rescore_record(record, "gaia", reparse_judge=True)
    assert reparsed["is_correct"] is True
    assert reparsed["scoring_metadata"]["method"] == "judge"
    assert reparsed["scoring_metadata"]["judge_verdict"] is True


def test_deterministic_part_is_recomputed_before_the_judge() -> None:
    # an exact match never reaches the judge: its stored "no" does not make the record wrong
    record = gaia_judged("correct: no", False, answer="7")
    out = rescore_record(record, "gaia")
    assert out["is_correct"] is True and out["scoring_metadata"]["method"] == "exact_match"


def test_mcq_judge_error_and_choice_are_replayed() -> None:
    failed = {"record_id": "m", "model_answer": "hmm", "expected": "B", "error": None, "is_correct": None,
              "score": None, "scoring_metadata": {"reference_letter": "B", "candidate_letter": None,
                                                  "valid_letters": "ABCD", "extraction": "regex",
                                                  "unscored_reason": "no answer letter found",
                                                  "judge_error": "HTTP 500"}}
    score = get_scorer("mcq")(failed)
    assert score.correct is None and score.metadata["judge_error"] == "HTTP 500"
    assert call_scorer("mcq", failed, reparse_judge=True).metadata == failed["scoring_metadata"]


def test_simpleqa_reparse_recovers_a_grade() -> None:
    record = {"record_id": "s", "benchmark": "simpleqa", "model_answer": "Paris", "question": "Capital?",
              "expected": "Paris", "error": None, "is_correct": None, "score": None, "grade": None,
              "scoring_metadata": {"unscored_reason": "no grade in the judge's reply", "judge_model": "j",
                                   "judge_output": "CORRECT", "grade": None}}
    assert rescore_record(record, "simpleqa")["is_correct"] is None  # kept
    out = rescore_record(record, "simpleqa", reparse_judge=True)
    assert out["is_correct"] is True and out["grade"] == "CORRECT"
