"""LiveCodeBench (code generation): contest problems judged on public AND private test cases.

Hub: ``livecodebench/code_generation_lite`` (split ``test``); schema as in
``lcb_runner/benchmarks/code_generation.py`` of https://github.com/LiveCodeBench/LiveCodeBench
and the hub's ``code_generation_lite.py``: ``question_title``, ``question_content``,
``platform`` (leetcode | codeforces | atcoder), ``question_id`` (the record id),
``contest_id``, ``contest_date``, ``starter_code``, ``difficulty`` (easy | medium |
hard), ``public_test_cases`` (a JSON string: a list of ``{input, output, testtype}``),
``private_test_cases`` (base64 of zlib of a pickle of such a JSON string, or plain JSON
in older dumps) and ``metadata`` (a JSON string; ``func_name`` for LeetCode problems).

The hub repository loads through a dataset script, which ``datasets`` 4 and later no
longer run: download its ``test*.jsonl`` files and point ``data_files`` at them.

Private tests are decoded with an unpickler that refuses every global (class or
function) reference: the payload is only ever a ``str``, so nothing in it can run.

Judging (one sandboxed process per test case, in parallel up to
``[run] max_exec_workers``, public tests first, stopping at the first failure):

* functional (``metadata.func_name``, LeetCode): the code plus LiveCodeBench's import
  header is loaded by the sandbox's trusted harness in a process of its own;
  ``Solution().<func_name>`` (or a top-level function of that name) is called with the
  test input, one JSON value per line. The return value leaves the sandbox only as a
  plain value (exactly a built-in type) and is compared *here*, in the runner: it
  (tuples as lists) must equal the JSON-decoded expected output.
* stdin (AtCoder, Codeforces): the program reads the test input on stdin; its stdout must
  match the expected output line by line after stripping, with whitespace inside a line
  collapsed, and lines that differ compared again token by token as decimals (``1.50`` ==
  ``1.5``), as LiveCodeBench does.

The sample is correct iff every test passes (pass@1). Expected outputs never enter
the sandbox, and the sandbox cannot see the dataset files (see docs/sandbox.md).
"""

from __future__ import annotations

import base64
import binascii
import functools
import io
import json
import pickle
import zlib
from decimal import Decimal, InvalidOperation
from typing import Any

import pytest

from pytest_jeval import Benchmark, HubDataset, LoadContext, Reply, Sample, Score
from pytest_jeval.benchmarks._codeexec import (
    excerpt,
    exec_workers,
    extract_code,
    last_error_line,
    run_jobs,
    summarize_code,
)
from pytest_jeval.sandbox import ExecResult, decode_value, encode_value, run_harness, run_python
from pytest_jeval.scoring.registry import answer_of, register_scorer

#: Wall-clock seconds per test case (LiveCodeBench's own default is 6).
TIMEOUT = 6.0
#: Address-space limit per test process, in MiB.
MEMORY_MB = 2048
#: Largest decompressed private-test payload accepted (a zlib bomb guard).
MAX_PRIVATE_BYTES = 1 << 30

SYSTEM_PROMPT = (
    "You are an expert Python programmer. You will be given a question (problem specification) and "
    "will generate a correct Python program that matches the specification and passes all tests."
)
WITH_STARTER = (
    "You will use the following starter code to write the solution to the problem and enclose your "
    "code within delimiters."
)
WITHOUT_STARTER = (
    "Read the inputs from stdin solve the problem and write the answer to stdout (do not directly test "
    "on the sample inputs). Enclose your code within delimiters as follows. Ensure that when the python "
    "program runs, it reads the inputs, runs the algorithm and writes output to STDOUT."
)

#: LiveCodeBench's ``import_string``: what its harness puts before every solution.
IMPORT_HEADER = (
    "from string import *\nfrom re import *\nfrom datetime import *\nfrom collections import *\n"
    "from heapq import *\nfrom bisect import *\nfrom copy import *\nfrom math import *\nfrom random import *\n"
    "from statistics import *\nfrom itertools import *\nfrom functools import *\nfrom operator import *\n"
    "from io import *\nfrom sys import *\nfrom json import *\nfrom builtins import *\nfrom typing import *\n"
    "import string\nimport re\nimport datetime\nimport collections\nimport heapq\nimport bisect\nimport copy\n"
    "import math\nimport random\nimport statistics\nimport itertools\nimport functools\nimport operator\n"
    "import io\nimport sys\nimport json\nsys.setrecursionlimit(50000)\n"
)


class UnsafePickleError(ValueError):
    """The private-test payload asked the unpickler for a global: refused."""


class _StringOnlyUnpickler(pickle.Unpickler):
    """An unpickler that can build only plain data: every global lookup is refused.

    Classes and functions reach a pickle only through ``find_class`` (GLOBAL,
    STACK_GLOBAL, INST, OBJ and the EXT opcodes all call it), so refusing it leaves
    nothing callable for REDUCE/BUILD/NEWOBJ; persistent ids are refused too.
    """

    def find_class(self, module: str, name: str) -> Any:
        raise UnsafePickleError(f"refused to load the global {module}.{name} from a private-test payload")

    def persistent_load(self, pid: Any) -> Any:
        raise UnsafePickleError("refused a persistent id in a private-test payload")


def _check_tests(tests: Any, what: str) -> list[dict[str, str]]:
    if not isinstance(tests, list):
        raise ValueError(f"{what}: expected a JSON list of test cases, got {type(tests).__name__}")
    out = []
    for i, t in enumerate(tests):
        if not isinstance(t, dict) or not all(isinstance(t.get(k), str) for k in ("input", "output", "testtype")):
            raise ValueError(f"{what}[{i}]: expected an object with string input, output and testtype")
        if t["testtype"] not in ("functional", "stdin"):
            raise ValueError(f"{what}[{i}]: unknown testtype {t['testtype']!r}")
        out.append({"input": t["input"], "output": t["output"], "testtype": t["testtype"]})
    return out


def decode_private_tests(field: str) -> list[dict[str, str]]:
    """Decode ``private_test_cases``: plain JSON, or base64(zlib(pickle(json string))).

    The pickle is read by an unpickler that refuses every global, so a malicious
    payload raises :class:`UnsafePickleError` instead of running anything; a payload
    that is not a string, or decompresses to more than ``MAX_PRIVATE_BYTES``, raises
    ``ValueError``.
    """
    text = (field or "").strip()
    if not text:
        return []
    if text.startswith("["):
        return _check_tests(json.loads(text), "private_test_cases")
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError) as exc:
        raise ValueError(f"private_test_cases: not base64: {exc}") from None
    inflater = zlib.decompressobj()
    try:
        data = inflater.decompress(raw, MAX_PRIVATE_BYTES)
    except zlib.error as exc:
        raise ValueError(f"private_test_cases: not zlib data: {exc}") from None
    if inflater.unconsumed_tail:
        raise ValueError(f"private_test_cases: decompresses to more than {MAX_PRIVATE_BYTES} bytes")
    try:
        payload = _StringOnlyUnpickler(io.BytesIO(data)).load()
    except UnsafePickleError:
        raise
    except Exception as exc:  # a malformed pickle raises many types
        raise ValueError(f"private_test_cases: not a valid pickle: {type(exc).__name__}: {exc}") from None
    if isinstance(payload, bytes):
        payload = payload.decode("utf-8")
    if not isinstance(payload, str):
        raise ValueError(f"private_test_cases: the pickle holds a {type(payload).__name__}, not a JSON string")
    return _check_tests(json.loads(payload), "private_test_cases")


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """One problem. Tests stay encoded until the sample is scored (private tests can be large)."""
    meta = json.loads(row.get("metadata") or "{}")
    if not isinstance(meta, dict):
        raise ValueError("metadata: expected a JSON object")
    return Sample(
        id=str(row["question_id"]),
        input=row["question_content"],
        target="all public and private tests pass",
        subject=row.get("difficulty") or None,
        metadata={
            "title": row["question_title"],
            "platform": row["platform"],
            "contest_id": row.get("contest_id"),
            "contest_date": str(row.get("contest_date") or ""),
            "starter_code": row.get("starter_code") or "",
            "func_name": meta.get("func_name"),
            "public_test_cases": row["public_test_cases"],
            "private_test_cases": row["private_test_cases"],
        },
    )


def prompt(sample: Sample) -> list[dict[str, str]]:
    """LiveCodeBench's generic code-generation prompt (system + user)."""
    text = f"### Question:\n{sample.input}\n\n"
    starter = sample.metadata["starter_code"]
    if starter:
        text += f"### Format: {WITH_STARTER}\n```python\n{starter}\n```\n\n"
    else:
        text += f"### Format: {WITHOUT_STARTER}\n```python\n# YOUR CODE HERE\n```\n\n"
    text += "### Answer: (use the provided format with backticks)\n\n"
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": text}]


def problem_tests(sample: Sample) -> list[dict[str, Any]]:
    """Public then private test cases, each marked ``public``."""
    public = _check_tests(json.loads(sample.metadata["public_test_cases"] or "[]"), "public_test_cases")
    private = decode_private_tests(sample.metadata["private_test_cases"])
    return [{**t, "public": True} for t in public] + [{**t, "public": False} for t in private]


# --------------------------------------------------------------------------- judging


def stdin_program(code: str) -> str:
    """The solution as a script (LiveCodeBench's import header first)."""
    return IMPORT_HEADER + "\n" + code


def _lines(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.strip().split("\n")]


def _decimals(line: str) -> list[Decimal] | None:
    try:
        return [Decimal(tok) for tok in line.split()]
    except (InvalidOperation, ValueError):
        return None


def stdout_matches(got: str, expected: str) -> bool:
    """LiveCodeBench's stdin comparison, with whitespace inside lines normalised."""
    a, b = _lines(got), _lines(expected)
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x == y:
            continue
        dx, dy = _decimals(x), _decimals(y)
        if dx is None or dy is None or dx != dy:
            return False
    return True


def _status_verdict(result: ExecResult) -> str:
    return {"timeout": "timeout", "memory": "memory", "killed": "killed"}.get(result.status, "exception")


def _returned_value(result: ExecResult) -> tuple[bool, Any]:
    """``(True, value)`` for the plain value a functional run returned (tuples as lists, JSON round trip)."""
    verdict = result.verdict or {}
    try:
        value = decode_value(verdict.get("value"))
        if isinstance(value, tuple):
            value = list(value)
        return True, json.loads(json.dumps(value))
    except (ValueError, TypeError, OverflowError, RecursionError):
        return False, None


def judge_test(result: ExecResult, test: dict[str, Any], kind: str) -> dict[str, Any]:
    """Verdict of one test case from its sandboxed run (the expected output never enters the sandbox)."""
    verdict: dict[str, Any] = {"public": test["public"], "duration": round(result.duration, 4)}
    if kind == "functional" and result.verdict is not None and result.verdict.get("reason") == "wrong answer":
        verdict.update(verdict="wrong answer", detail=excerpt(result.verdict.get("detail", ""), 200))
        return verdict
    if result.status != "ok":
        verdict["verdict"] = _status_verdict(result)
        if result.status == "timeout":
            verdict["detail"] = f"stopped after {result.duration:.1f} s"
        elif result.verdict is not None and result.verdict.get("detail"):
            verdict["detail"] = excerpt(result.verdict["detail"], 300)
        elif result.returncode < 0 and not last_error_line(result.stderr):
            verdict["detail"] = f"killed by signal {-result.returncode}"
        else:
            verdict["detail"] = last_error_line(result.stderr) or f"exit status {result.returncode}"
        return verdict
    if kind == "functional":
        readable, got = _returned_value(result)
        ok = readable and got == json.loads(test["output"])
        verdict["verdict"] = "passed" if ok else "wrong answer"
        if not ok:
            shown = json.dumps(got) if readable else "a value that is not JSON"
            verdict["detail"] = f"expected {excerpt(test['output'], 120)}, got {excerpt(shown, 120)}"
        return verdict
    ok = stdout_matches(result.stdout, test["output"])
    verdict["verdict"] = "passed" if ok else "wrong answer"
    if not ok:
        verdict["detail"] = f"expected {excerpt(test['output'], 120)}, got {excerpt(result.stdout, 120)}"
    return verdict


def _functional_args(text: str) -> list[Any]:
    return [json.loads(line) for line in text.split("\n") if line.strip()]


def score_livecodebench(
    reply_text: str,
    sample: Sample,
    *,
    workers: int = 1,
    timeout: float = TIMEOUT,
    memory_mb: int = MEMORY_MB,
    stop_at_first_failure: bool = True,
) -> Score:
    """Extract the last Python block, run every test case in the sandbox, correct iff all pass."""
    tests = problem_tests(sample)
    func_name = sample.metadata.get("func_name")
    kind = "functional" if func_name else "stdin"
    expected = f"all {len(tests)} tests pass ({sum(t['public'] for t in tests)} public)"
    code, how = extract_code(reply_text)
    if code is None or not code.strip():
        return Score.unscorable("no Python code in the reply", expected=expected, extraction=how, kind=kind)
    if kind == "functional" and not str(func_name).isidentifier():
        raise ValueError(f"func_name must be an identifier, got {func_name!r}")
    program = stdin_program(code)
    jobs: list[Any] = []
    for t in tests:
        if t["testtype"] != kind:
            raise ValueError(f"{sample.id}: a {t['testtype']} test in a {kind} problem")
        out_cap = 2 * len(t["output"].encode("utf-8")) + 65_536
        if kind == "functional":
            job = {"mode": "call", "code": program, "func_name": func_name,
                   "args": encode_value(_functional_args(t["input"]))}
            jobs.append(functools.partial(run_harness, job, timeout=timeout, memory_mb=memory_mb))
        else:
            jobs.append(functools.partial(
                run_python, program, stdin=t["input"], timeout=timeout, memory_mb=memory_mb,
                max_output=out_cap, file_size_mb=max(64, out_cap // (1 << 20) + 1)))

    def judged(job: Any, test: dict[str, Any]) -> dict[str, Any]:
        return judge_test(job(), test, kind)

    stop = (lambda v: v["verdict"] != "passed") if stop_at_first_failure else None
    results = run_jobs([functools.partial(judged, j, t) for j, t in zip(jobs, tests)], workers, stop=stop)
    verdicts = [r if r is not None else {"public": t["public"], "verdict": "not run"} for r, t in zip(results, tests)]
    for i, v in enumerate(verdicts):
        v["index"] = i
    passed = sum(v["verdict"] == "passed" for v in verdicts)
    failures = [v for v in verdicts if v["verdict"] not in ("passed", "not run")]
    first = failures[0] if failures else None
    reason = "passed" if passed == len(tests) else (first["verdict"] if first else "not run")
    metadata: dict[str, Any] = {
        "kind": kind,
        "extraction": how,
        "reason": reason,
        "passed": passed,
        "total": len(tests),
        "public_passed": sum(v["verdict"] == "passed" and v["public"] for v in verdicts),
        "public_total": sum(t["public"] for t in tests),
        "not_run": sum(v["verdict"] == "not run" for v in verdicts),
        "tests": [{k: v[k] for k in ("index", "public", "verdict", "duration") if k in v} for v in verdicts],
    }
    if first is not None:
        t = tests[first["index"]]
        metadata["first_failure"] = {
            "index": first["index"], "public": first["public"], "verdict": first["verdict"],
            "detail": first.get("detail", ""), "input": excerpt(t["input"], 200),
        }
    extracted = f"{passed}/{len(tests)} tests passed"
    if first:
        extracted += f"; test {first['index']}: {first['verdict']}"
    return Score(correct=bool(tests) and passed == len(tests), extracted=extracted, expected=expected,
                 metadata=metadata)


BENCHMARK = Benchmark(
    name="livecodebench",
    category="coding",
    description="Contest problems (LeetCode, AtCoder, Codeforces) judged on public and private tests in the sandbox",
    dataset=HubDataset(path="livecodebench/code_generation_lite", split="test", id_column="question_id"),
    to_sample=to_sample,
    prompt=prompt,
    scorer="livecodebench",
    scoring="sandboxed public+private tests (pass@1)",
    sample_count=1055,
    summarize_extra=summarize_code,
)


def test_livecodebench(sample: Sample, response: Reply, score: Any, request: pytest.FixtureRequest) -> None:
    """Correct iff the extracted program passes every public and private test case."""
    score(score_livecodebench(response.text, sample, workers=exec_workers(request.config)))


@register_scorer("livecodebench", needs_sample=True, runs_code=True)
def record_livecodebench(record: dict[str, Any], sample: Sample, workers: int | None = None) -> Score:
    """LiveCodeBench: the public and private tests, in the sandbox (``workers`` at once; default
    the run's default, one per CPU core)."""
    from pytest_jeval.benchmarks._codeexec import exec_workers

    result: Score = score_livecodebench(answer_of(record), sample, workers=workers or exec_workers())
    return result
