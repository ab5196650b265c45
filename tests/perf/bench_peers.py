#!/usr/bin/env python
"""The peers sitting: pytest-jeval, a bare ``AsyncOpenAI`` loop, lm-evaluation-harness and OpenJarvis, side by side.

Run by hand from the repository root (pytest does not collect it)::

    PYTHONPATH=$PWD .venv/bin/python tests/perf/bench_peers.py                 # idle, then with a one-core hog
    PYTHONPATH=$PWD .venv/bin/python tests/perf/bench_peers.py --load idle --rounds 5
    PYTHONPATH=$PWD .venv/bin/python tests/perf/bench_peers.py --only bare,jeval --samples 500
    PYTHONPATH=$PWD .venv/bin/python tests/perf/bench_peers.py --only bare,jeval --jeval-before /tmp/before

On first use it installs the peers into their own virtual environments OUTSIDE the repository
(``--peers-dir``, default ``~/.cache/pytest-jeval/peers/<peer>``): ``lm-eval[api]`` and ``openjarvis`` at
the versions of :data:`PEERS`, with ``python -m venv`` and ``pip`` from PyPI. A peer that cannot be installed
(no network, a failed build, over ``--install-timeout``) is left out of the sitting, and the script says why.

Each run starts the repository's test server (``python -m pytest_jeval.testing.openai_server``) on
127.0.0.1 with ``--latency`` (0.2 s) and ``--slots`` (64), answering from a lookup table so that every
answer is right, and runs ONE harness against it as a fresh process, ``--concurrency`` (64) requests in
flight, on the same ``--samples`` (1,000) four-option MCQ prompts (MMLU-Pro's layout; the prompt text is
pytest-jeval's ``mmlu-pro`` prompt, sent verbatim by every harness):

  bare        an ``openai.AsyncOpenAI`` loop, ``chat.completions.create``, 64 workers (this script, ``--bare-loop``)
  jeval       ``pytest --jeval-config suite.toml`` with the built-in ``mmlu-pro`` benchmark on the local JSONL,
              ``max_concurrency = 64``, ``call_executor = "auto"``, cache off; one JSONL record per sample
  lm-eval     ``lm_eval --model local-chat-completions`` with ``num_concurrent=64``, a ``generate_until`` task
              on the same JSONL (regex ``Answer: X``, ``exact_match``), ``--log_samples``
  core        (not in the default sitting) pytest-jeval's call core alone, with no pytest: a ``CallCore`` (the
              ``openai`` client as pytest-jeval drives it: raw body, aiohttp transport, the deadline) sending
              every prompt at once, ``max_concurrency`` 64 (this script, ``--core-loop``)
  aiohttp     (not in the default sitting) a lean ``aiohttp`` loop with no ``openai`` client, what lm-eval's
              ``local-chat-completions`` does: one session, JSON bodies, a semaphore of 64 (``--aiohttp-loop``)
  openjarvis  OpenJarvis's ``EvalRunner`` (what ``python -m openjarvis.evals run`` drives) with
              ``max_workers=64``, ``JarvisDirectBackend`` on the endpoint, its ``MMLUProScorer`` (an LLM judge:
              a second call per sample, to the same endpoint), writing its JSONL (this script,
              ``--openjarvis-driver``, run by the peer's own interpreter)

``core`` and ``aiohttp`` are the floors of the in-call time: what the ``openai`` client costs per call, and
what a harness without it can reach, on the same server and machine (``--only core,aiohttp,jeval,lm-eval``).

The harnesses run interleaved, ``--rounds`` times (after one unreported warm-up run each). Per run:

  whole process   the harness process's wall time, from its start to its exit
  in-call         the server's last completion minus its first request (its stats line on SIGTERM)
  calls/s         the server's requests over the in-call time
  client CPU      user + system CPU of the harness process and every descendant it waited for (``os.wait4``)

The table gives medians (min-max). ``--load hog`` runs a ``yes > /dev/null`` process for the whole sitting
(one core busy); ``--load both`` (the default) runs an idle sitting, then one with the hog. The load average
(``uptime``) is printed before and after each sitting: on a shared machine say it beside the table.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PY = sys.executable

#: The peers and the versions the sitting installs (the issue measured these).
PEERS: dict[str, str] = {"lm-eval": "lm-eval[api]==0.4.13", "openjarvis": "openjarvis==1.0.4"}
LETTERS = "ABCD"


# --------------------------------------------------------------------------- the peers' environments

@dataclass
class Peer:
    name: str
    python: Path | None
    version: str = ""
    reason: str = ""


def ensure_peer(name: str, spec: str, root: Path, timeout: float) -> Peer:
    """The peer's virtual environment under ``root/name``, made and installed on first use."""
    venv = root / name
    python = venv / "bin" / "python"
    marker = venv / ".jeval-installed"
    if not (python.exists() and marker.exists() and marker.read_text() == spec):
        print(f"# installing {spec} into {venv} (first use; up to {timeout:.0f} s)", flush=True)
        shutil.rmtree(venv, ignore_errors=True)
        root.mkdir(parents=True, exist_ok=True)
        log = root / f"{name}-install.log"
        base = getattr(sys, "_base_executable", None) or sys.executable
        try:
            with log.open("w") as out:
                subprocess.run([base, "-m", "venv", str(venv)], check=True, stdout=out, stderr=subprocess.STDOUT)
                subprocess.run([str(python), "-m", "pip", "install", "-q", spec], check=True, stdout=out,
                               stderr=subprocess.STDOUT, timeout=timeout)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
            tail = [ln for ln in log.read_text(errors="replace").splitlines() if not ln.startswith("WARNING: Loc")]
            return Peer(name, None, reason=f"could not install {spec}: {exc}; {' | '.join(tail[-3:])} (log: {log})")
        marker.write_text(spec)
    dist = spec.split("[")[0].split("=")[0]
    try:
        version = subprocess.run([str(python), "-c", f"import importlib.metadata as m; print(m.version({dist!r}))"],
                                 capture_output=True, text=True, check=True, timeout=120).stdout.strip()
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        return Peer(name, None, reason=f"{spec} is installed in {venv} but does not import: {exc}")
    return Peer(name, python, version)


# --------------------------------------------------------------------------- data

def mcq_prompt(question: str, options: list[str]) -> str:
    """pytest-jeval's ``mmlu-pro`` prompt for a four-option question (``choice_prompt`` with ``MCQ_PROMPT``)."""
    from pytest_jeval.core.sample import Sample
    from pytest_jeval.scoring.choice_prompt import MCQ_PROMPT, choice_prompt

    return choice_prompt(Sample(id="x", input=question, target="A", choices=tuple(options)), MCQ_PROMPT)


def write_mcq(directory: Path, n: int, seed: int = 0) -> tuple[Path, Path, Path]:
    """``n`` synthetic four-option questions: MMLU-Pro rows (pytest-jeval), prompts (the others), answers (server).

    Every reply starts with the gold letter and ends with ``Answer: X``, so each harness's own extraction
    (pytest-jeval's and lm-eval's regex, OpenJarvis's judge reading the first letter of the judge's reply,
    which is the same reply) reads the right letter.
    """
    rng = random.Random(seed)
    rows, prompts, table = directory / f"mcq_{n}.jsonl", directory / f"prompts_{n}.jsonl", {}
    with rows.open("w", encoding="utf-8") as fr, prompts.open("w", encoding="utf-8") as fp:
        for i in range(n):
            a, b = rng.randint(2, 999), rng.randint(2, 999)
            tag = f"[q{i:07d}]"
            question = f"{tag} Tom has {a} marbles and wins {b} more. How many marbles does he have now?"
            gold = rng.randrange(4)
            wrong = iter(x for x in rng.sample(range(2, 2000), 8) if x != a + b)
            options = [str(a + b) if k == gold else str(next(wrong)) for k in range(4)]
            letter = LETTERS[gold]
            fr.write(json.dumps({"question_id": i, "question": question, "options": options, "answer": letter,
                                 "answer_index": gold, "category": "math", "src": "synthetic"}) + "\n")
            fp.write(json.dumps({"id": i, "prompt": mcq_prompt(question, options), "answer": letter,
                                 "options": options}) + "\n")
            table[tag] = f"{letter} is the sum: {a} + {b} = {a + b}.\nAnswer: {letter}"
    answers = directory / f"answers_{n}.json"
    answers.write_text(json.dumps(table))
    return rows, prompts, answers


# --------------------------------------------------------------------------- the harnesses

@dataclass
class Harness:
    name: str
    label: str
    command: Callable[[str, Path, Path, Path], list[str]]
    """(base_url, work, rows, prompts) -> the command line."""
    correct: Callable[[str, Path], int | None]
    """(output, work) -> samples answered right."""
    env: dict[str, str] = field(default_factory=dict)


def bare_harness(concurrency: int) -> Harness:
    def command(url: str, work: Path, rows: Path, prompts: Path) -> list[str]:
        return [PY, str(Path(__file__).resolve()), "--bare-loop", url, str(prompts), str(concurrency)]

    return Harness("bare", f"bare AsyncOpenAI loop ({concurrency} in flight)", command, _json_correct)


def loop_harness(mode: str, label: str, concurrency: int) -> Harness:
    """One of this script's own loops (``--core-loop``, ``--aiohttp-loop``) as a harness."""

    def command(url: str, work: Path, rows: Path, prompts: Path) -> list[str]:
        return [PY, str(Path(__file__).resolve()), f"--{mode}-loop", url, str(prompts), str(concurrency)]

    return Harness(mode, label, command, _json_correct)


def jeval_harness(concurrency: int, checkout: Path | None = None) -> Harness:
    """pytest-jeval from this checkout, or (``checkout``) from another one (``--jeval-before``)."""

    def command(url: str, work: Path, rows: Path, prompts: Path) -> list[str]:
        run = work / f"jeval-{time.monotonic_ns()}"
        run.mkdir()
        suite = run / "suite.toml"
        suite.write_text(
            f'[meta]\nname = "peers"\n\n[run]\noutput_dir = "out"\ncache = false\nmax_concurrency = {concurrency}\n'
            f'max_retries = 2\nrequest_timeout = 60\n\n[[models]]\nname = "test-model"\nbase_url = "{url}"\n'
            f'api_key = "bench"\n\n[[benchmarks]]\nname = "mmlu-pro"\ndata_files = "{rows}"\n'
        )
        return [PY, "-m", "pytest", "--jeval-config", str(suite), "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                "--rootdir", str(run)]

    def correct(output: str, work: Path) -> int | None:
        found = re.search(r"(\d+) passed", output)
        return int(found.group(1)) if found else None

    if checkout is not None:
        return Harness("jeval-before", f"pytest-jeval from {checkout} (max_concurrency = {concurrency})", command,
                       correct, env={"PYTHONPATH": str(checkout)})
    return Harness("jeval", f"pytest-jeval (max_concurrency = {concurrency})", command, correct)


def lm_eval_harness(peer: Peer, concurrency: int) -> Harness:
    assert peer.python is not None

    def command(url: str, work: Path, rows: Path, prompts: Path) -> list[str]:
        run = work / f"lmeval-{time.monotonic_ns()}"
        (run / "tasks").mkdir(parents=True)
        (run / "tasks" / "jeval_mcq.yaml").write_text(
            "task: jeval_mcq\ndataset_path: json\ndataset_kwargs:\n  data_files:\n"
            f"    test: {json.dumps(str(prompts))}\n"
            "test_split: test\noutput_type: generate_until\ndoc_to_text: \"{{prompt}}\"\n"
            "doc_to_target: \"{{answer}}\"\n"
            "generation_kwargs:\n  until: []\n  max_gen_toks: 2048\n  temperature: 0.0\n  do_sample: false\n"
            "filter_list:\n  - name: answer\n    filter:\n      - function: regex\n"
            "        regex_pattern: \"Answer:\\\\s*([A-D])\"\n      - function: take_first\n"
            "metric_list:\n  - metric: exact_match\n    aggregation: mean\n    higher_is_better: true\n"
        )
        args = (f"model=test-model,base_url={url}/chat/completions,num_concurrent={concurrency},"
                "max_retries=2,tokenized_requests=False,timeout=60")
        return [str(peer.python.parent / "lm_eval"), "--model", "local-chat-completions", "--model_args", args,
                "--tasks", "jeval_mcq", "--include_path", str(run / "tasks"), "--apply_chat_template",
                "--output_path", str(run / "out"), "--log_samples"]

    def correct(output: str, work: Path) -> int | None:
        found = re.search(r"exact_match\s*\|[^|]*\|\s*([0-9.]+)", output)
        return None if not found else round(float(found.group(1)) * _samples(work))

    return Harness("lm-eval", f"lm-evaluation-harness {peer.version} (local-chat-completions, "
                   f"num_concurrent={concurrency})", command, correct,
                   env={"OPENAI_API_KEY": "bench", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
                        "PYTHONPATH": "", "HF_DATASETS_CACHE": str(peer.python.parents[1] / "hf-cache")})


def openjarvis_harness(peer: Peer, concurrency: int) -> Harness:
    assert peer.python is not None

    def command(url: str, work: Path, rows: Path, prompts: Path) -> list[str]:
        run = work / f"oj-{time.monotonic_ns()}"
        run.mkdir()
        return [str(peer.python), str(Path(__file__).resolve()), "--openjarvis-driver", url, str(prompts),
                str(concurrency), str(run / "results.jsonl")]

    return Harness("openjarvis", f"OpenJarvis {peer.version} (EvalRunner, {concurrency} workers, its LLM-judge "
                   "scorer: 2 calls per sample)", command, _json_correct,
                   env={"JARVIS_BACKEND_API_KEY": "bench", "HF_DATASETS_OFFLINE": "1", "PYTHONPATH": ""})


def _json_correct(output: str, work: Path) -> int | None:
    for line in reversed(output.strip().splitlines()):
        if line.startswith("{"):
            try:
                return int(json.loads(line)["correct"])
            except (ValueError, KeyError, TypeError):
                return None
    return None


_SAMPLES: dict[Path, int] = {}


def _samples(work: Path) -> int:
    return _SAMPLES.get(work, 0)


# --------------------------------------------------------------------------- the bare loop and the OpenJarvis driver

def _letter_correct(text: str, row: dict[str, Any]) -> bool:
    found = re.findall(r"Answer:\s*([A-D])", text)
    return bool(found) and found[-1] == row["answer"]


def bare_main(url: str, prompts: Path, concurrency: int) -> int:
    import asyncio

    from bench_throughput import bare_loop  # tests/perf, the directory of this script

    rows = [json.loads(line) for line in prompts.read_text(encoding="utf-8").splitlines()]
    print(json.dumps(asyncio.run(bare_loop(url, rows, lambda row: row["prompt"], _letter_correct, concurrency))))
    return 0


def core_main(url: str, prompts: Path, concurrency: int) -> int:
    """pytest-jeval's ``CallCore`` alone: every prompt submitted at once, as the call helper gets them."""
    import asyncio

    from pydantic import SecretStr

    from pytest_jeval.calls.scheduler import CallCore
    from pytest_jeval.core.chat import ChatRequest, Endpoint

    rows = [json.loads(line) for line in prompts.read_text(encoding="utf-8").splitlines()]
    endpoint = Endpoint(base_url=url, api_key=SecretStr("bench"), max_concurrency=concurrency, timeout=60,
                        max_retries=2)

    async def run() -> int:
        core = CallCore()
        replies = await asyncio.gather(*(core.call(endpoint, ChatRequest(
            model="test-model", messages=({"role": "user", "content": row["prompt"]},))) for row in rows))
        await core.aclose()
        return sum(_letter_correct(reply.text, row) for reply, row in zip(replies, rows))

    print(json.dumps({"samples": len(rows), "correct": asyncio.run(run())}))
    return 0


def aiohttp_main(url: str, prompts: Path, concurrency: int) -> int:
    """A lean ``aiohttp`` loop, no ``openai`` client: what lm-eval's ``local-chat-completions`` sends with."""
    import asyncio

    import aiohttp

    rows = [json.loads(line) for line in prompts.read_text(encoding="utf-8").splitlines()]

    async def run() -> int:
        slots = asyncio.Semaphore(concurrency)
        headers = {"Authorization": "Bearer bench"}
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:
            async def one(row: dict[str, Any]) -> bool:
                body = {"model": "test-model", "messages": [{"role": "user", "content": row["prompt"]}],
                        "temperature": 0.0, "max_tokens": 2048}
                async with slots, session.post(f"{url}/chat/completions", json=body, headers=headers) as response:
                    reply = json.loads(await response.read())
                return _letter_correct(reply["choices"][0]["message"]["content"] or "", row)

            return sum(await asyncio.gather(*(one(row) for row in rows)))

    print(json.dumps({"samples": len(rows), "correct": asyncio.run(run())}))
    return 0


def openjarvis_main(url: str, prompts: Path, workers: int, output: Path) -> int:
    """OpenJarvis's own eval runner on the prompts (run by the peer's interpreter, not the repository's)."""
    from openjarvis.evals.backends.jarvis_direct import JarvisDirectBackend
    from openjarvis.evals.core.dataset import DatasetProvider
    from openjarvis.evals.core.runner import EvalRunner
    from openjarvis.evals.core.types import EvalRecord, RunConfig
    from openjarvis.evals.scorers.mmlu_pro_mcq import MMLUProScorer

    class Prompts(DatasetProvider):  # type: ignore[misc]
        """The sitting's prompts, as OpenJarvis's MMLU-Pro records (the prompt text verbatim)."""

        dataset_id = "mmlu-pro"
        dataset_name = "MMLU-Pro (sitting)"

        def __init__(self) -> None:
            self._records: list[Any] = []

        def load(self, *, max_samples: int | None = None, split: str | None = None, seed: int | None = None) -> None:
            rows = [json.loads(line) for line in prompts.read_text(encoding="utf-8").splitlines()]
            self._records = [EvalRecord(record_id=f"mmlu-pro-{r['id']}", problem=r["prompt"], reference=r["answer"],
                                        category="reasoning", subject="math", metadata={"options": r["options"]})
                             for r in rows]

        def iter_records(self) -> Any:
            return iter(self._records)

        def size(self) -> int:
            return len(self._records)

    api_key = os.environ.get("JARVIS_BACKEND_API_KEY", "bench")
    backend = JarvisDirectBackend(base_url=url, api_key=api_key)
    judge = JarvisDirectBackend(base_url=url, api_key=api_key)
    config = RunConfig(benchmark="mmlu-pro", backend="jarvis-direct", model="test-model", max_workers=workers,
                       temperature=0.0, max_tokens=2048, judge_model="test-model", output_path=str(output))
    runner = EvalRunner(config, Prompts(), backend, MMLUProScorer(judge, "test-model"))
    try:
        runner.run()
    finally:
        backend.close()
        judge.close()
    results = runner.results
    print(json.dumps({"samples": len(results), "correct": sum(1 for r in results if r.is_correct)}))
    return 0


# --------------------------------------------------------------------------- the sitting

@dataclass
class Result:
    wall: float
    in_call: float
    calls: int
    cpu: float
    correct: int | None
    max_in_flight: int


def one_run(h: Harness, work: Path, rows: Path, prompts: Path, answers: Path, n: int, latency: float, slots: int,
            base_env: dict[str, str]) -> Result:
    from bench_throughput import Server, run_measured  # tests/perf/bench_throughput.py

    _SAMPLES[work] = n
    with Server(answers, latency, slots, default="no idea") as server:
        m = run_measured(h.command(server.url, work, rows, prompts), work, dict(base_env, **h.env))
        stats = server.stop()
    correct = h.correct(m.output, work) if m.returncode == 0 else None
    if m.returncode != 0 or correct != n:
        print(f"  !! {h.name}: rc={m.returncode} correct={correct}/{n} requests={stats['request_count']}\n"
              + m.output[-2500:], file=sys.stderr, flush=True)
    return Result(m.wall, stats["in_call_seconds"] or float("nan"), stats["request_count"], m.cpu, correct,
                  stats["max_in_flight"])


def spread(values: list[float], fmt: str = "{:.2f}") -> str:
    values = sorted(values)
    if len(values) == 1:
        return fmt.format(values[0])
    return f"{fmt.format(statistics.median(values))} ({fmt.format(values[0])}-{fmt.format(values[-1])})"


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def sitting(harnesses: list[Harness], args: argparse.Namespace, work: Path, env: dict[str, str], hog: bool) -> None:
    n = args.samples
    rows, prompts, answers = write_mcq(work, n)
    wrows, wprompts, wanswers = write_mcq(work, 64, seed=1)
    hog_proc = subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) if hog else None
    try:
        print(f"\n# sitting: {'one core busy (`yes > /dev/null`)' if hog else 'no hog'}; {n} MCQ samples; "
              f"server latency {args.latency} s, {args.slots} slots (ideal in-call {n / args.slots * args.latency:.3f} s "
              f"for one call per sample); {args.concurrency} in flight; {args.rounds} rounds, interleaved; "
              f"{os.cpu_count()} CPUs", flush=True)
        print(f"# before: {uptime()}", flush=True)
        for h in harnesses:  # warm-up (.pyc files, page cache), not reported
            one_run(h, work, wrows, wprompts, wanswers, 64, 0.0, args.slots, env)
        results: dict[str, list[Result]] = {h.name: [] for h in harnesses}
        for r in range(args.rounds):
            for h in harnesses:
                res = one_run(h, work, rows, prompts, answers, n, args.latency, args.slots, env)
                results[h.name].append(res)
                print(f"  round {r + 1} {h.name:10s} whole {res.wall:6.2f} s  in-call {res.in_call:6.2f} s  "
                      f"calls {res.calls:5d}  cpu {res.cpu:6.2f} s  peak in flight {res.max_in_flight:3d}  "
                      f"correct {res.correct}/{n}", flush=True)
        print(f"# after: {uptime()}", flush=True)
    finally:
        if hog_proc is not None:
            hog_proc.kill()
            hog_proc.wait()
    print_table(harnesses, results, n)


def print_table(harnesses: list[Harness], results: dict[str, list[Result]], n: int) -> None:
    print("\n| harness | whole process (s) | in-call (s) | calls/s in-call | client CPU (s) | CPU per sample (ms) "
          "| calls | correct |")
    print("|---|---|---|---|---|---|---|---|")
    for h in harnesses:
        rs = results[h.name]
        print(f"| {h.label} | {spread([r.wall for r in rs])} | {spread([r.in_call for r in rs])} | "
              f"{spread([r.calls / r.in_call for r in rs], '{:.0f}')} | {spread([r.cpu for r in rs])} | "
              f"{spread([r.cpu / n * 1000 for r in rs], '{:.1f}')} | {'/'.join(sorted({str(r.calls) for r in rs}))} | "
              f"{'/'.join(sorted({str(r.correct) for r in rs}))} |")
    print("(medians (min-max) over the rounds)")
    med = {name: (statistics.median(r.wall for r in rs), statistics.median(r.calls / r.in_call for r in rs),
                  statistics.median(r.cpu for r in rs)) for name, rs in results.items() if rs}
    if "jeval" in med and "lm-eval" in med:
        ratio = med["jeval"][1] / med["lm-eval"][1]
        print(f"goal: in-call rate at least lm-eval's: {ratio:.2f}x ({'met' if ratio >= 1 else 'NOT met'})")
    if "jeval" in med and "bare" in med:
        ratio = med["jeval"][0] / med["bare"][0]
        extra = (med["jeval"][2] - med["bare"][2]) / n * 1000
        print(f"goal: whole process at most the bare loop's: {ratio:.2f}x ({'met' if ratio <= 1 else 'NOT met'})")
        print(f"goal: client CPU per sample at most the bare loop's + 2 ms: {extra:+.2f} ms "
              f"({'met' if extra <= 2 else 'NOT met'})")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--bare-loop":
        return bare_main(argv[1], Path(argv[2]), int(argv[3]))
    if argv and argv[0] in ("--core-loop", "--aiohttp-loop"):
        main_of = core_main if argv[0] == "--core-loop" else aiohttp_main
        return main_of(argv[1], Path(argv[2]), int(argv[3]))
    if argv and argv[0] == "--openjarvis-driver":
        return openjarvis_main(argv[1], Path(argv[2]), int(argv[3]), Path(argv[4]))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=1000, help="MCQ samples, default 1000")
    parser.add_argument("--latency", type=float, default=0.2, help="server latency per request, default 0.2 s")
    parser.add_argument("--slots", type=int, default=64, help="requests the server serves at once, default 64")
    parser.add_argument("--concurrency", type=int, default=64, help="requests each harness keeps in flight, default 64")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds, default 3")
    parser.add_argument("--load", choices=("idle", "hog", "both"), default="both",
                        help="no hog, a `yes > /dev/null` hog on one core, or both sittings (default)")
    parser.add_argument("--only", default="bare,jeval,lm-eval,openjarvis",
                        help="comma-separated harnesses, default bare,jeval,lm-eval,openjarvis; also core, aiohttp "
                             "(the in-call floors with and without the openai client)")
    parser.add_argument("--peers-dir", type=Path, default=Path.home() / ".cache" / "pytest-jeval" / "peers",
                        help="where the peers' virtual environments live (default ~/.cache/pytest-jeval/peers)")
    parser.add_argument("--install-timeout", type=float, default=1500, help="seconds per peer install, default 1500")
    parser.add_argument("--jeval-before", type=Path, default=None, metavar="CHECKOUT",
                        help="also run pytest-jeval from another checkout (the code before a change), after this one's")
    parser.add_argument("--keep", type=Path, default=None, help="work in this directory and keep it")
    args = parser.parse_args(argv)
    only = [x.strip() for x in args.only.split(",") if x.strip()]
    harnesses: list[Harness] = []
    for name in only:
        if name == "bare":
            harnesses.append(bare_harness(args.concurrency))
        elif name == "core":
            harnesses.append(loop_harness("core", f"pytest-jeval's call core alone, no pytest (CallCore, "
                                          f"max_concurrency = {args.concurrency})", args.concurrency))
        elif name == "aiohttp":
            harnesses.append(loop_harness("aiohttp", f"a lean aiohttp loop, no openai client ({args.concurrency} "
                                          "in flight)", args.concurrency))
        elif name == "jeval":
            harnesses.append(jeval_harness(args.concurrency))
            if args.jeval_before is not None:
                harnesses.append(jeval_harness(args.concurrency, args.jeval_before.resolve()))
        elif name in PEERS:
            peer = ensure_peer(name, PEERS[name], args.peers_dir, args.install_timeout)
            if peer.python is None:
                print(f"# {name} left out: {peer.reason}", flush=True)
                continue
            harnesses.append(lm_eval_harness(peer, args.concurrency) if name == "lm-eval"
                             else openjarvis_harness(peer, args.concurrency))
        else:
            parser.error(f"--only: unknown harness {name!r} (bare, jeval, lm-eval, openjarvis, core, aiohttp)")
    sys.path.insert(0, str(HERE))
    env = dict(os.environ)
    for key in ("PYTHONDONTWRITEBYTECODE", "PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER"):
        env.pop(key, None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    with tempfile.TemporaryDirectory(prefix="jeval-peers-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        env.setdefault("HF_DATASETS_CACHE", str(work / "hf-cache"))
        print(f"# python {sys.version.split()[0]}; harnesses: {', '.join(h.label for h in harnesses)}", flush=True)
        for hog in {"idle": (False,), "hog": (True,), "both": (False, True)}[args.load]:
            sitting(harnesses, args, work, env, hog)
    return 0


if __name__ == "__main__":
    sys.exit(main())
