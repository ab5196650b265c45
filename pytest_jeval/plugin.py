"""pytest-jeval: LLM benchmarks as pytest test suites.

Entry point (``pytest11``). Without ``--jeval-config`` the plugin registers its
options and fixtures and otherwise stays silent.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from pytest_jeval.session import gcpause
from pytest_jeval.session.fixtures import (  # noqa: F401
    benchmark_entry,
    episode,
    jeval_item,
    jeval_model,
    judge,
    model,
    response,
    sample,
    score,
)
from pytest_jeval.session.keys import plan_key, runtime_key

# Heavy modules (pydantic, numpy, asyncio, openai) are imported inside the hooks, once
# --jeval-config is given: installing the plugin must not slow down every other pytest run.

FEATURES: tuple[str, ...] = (
    "pytest_jeval.session.redaction",   # keys out of reports, records, logs (every process)
    "pytest_jeval.session.notices",     # the junit family, chosen before junitxml reads it; notices (controller)
    "pytest_jeval.session.collect",     # the suite file collected as benchmark modules
    "pytest_jeval.session.runtime",     # the per-process runtime: data check, endpoint check, cases
    "pytest_jeval.results.shipping",    # records built where items run, shipped to the controller
    "pytest_jeval.session.prefetch",    # calls sent ahead of their items
    "pytest_jeval.session.sequence",    # episode mode: sequences, memory, their xdist scheduling
    "pytest_jeval.session.warmup",      # [run] warmup_samples
    "pytest_jeval.session.local_model", # the bundled local model's server
    "pytest_jeval.results.resume",      # --jeval-resume
    "pytest_jeval.session.remote",      # what xdist workers are sent (controller)
    "pytest_jeval.results.writer",      # the results writer (controller)
    "pytest_jeval.exports.plugin",      # W&B, Sheets and installed exporters (controller)
    "pytest_jeval.session.progress",    # the progress line (controller)
)
"""pytest-jeval's features, as pytest's own ``default_plugins``: each module's ``install(config)`` registers
its plugin when the feature is on for this process. Hook order comes from ``tryfirst``/``trylast`` on the
hooks themselves (docs/hooks.md), never from this order."""


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """pytest-jeval's own hooks (:mod:`pytest_jeval.hookspecs`)."""
    from pytest_jeval import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    """The ``jeval`` option group and its ini twins."""
    group = parser.getgroup("jeval", "LLM benchmarks as tests (pytest-jeval)")
    group.addoption("--jeval-config", dest="jeval_config", metavar="SUITE.toml", default=None,
                    help="run the models x benchmarks matrix of this suite file")
    group.addoption("--jeval-output", dest="jeval_output", metavar="DIR", default=None,
                    help="write results here instead of [run] output_dir")
    group.addoption("--jeval-resume", dest="jeval_resume", action="store_true", default=False,
                    help="skip samples with a finished record; errored ones, and those -k/--lf/--sw rerun, run again")
    group.addoption("--jeval-no-cache", dest="jeval_no_cache", action="store_true", default=False,
                    help="do not read or write the on-disk response cache")
    group.addoption("--jeval-list", dest="jeval_list", action="store_true", default=False,
                    help="print the benchmark and evaluator catalogs and exit")
    group.addoption("--jeval-set", dest="jeval_set", action="append", metavar="KEY=VALUE", default=None,
                    help="override a suite key, e.g. run.seed=7 or benchmarks.gsm8k.max_samples=20 (repeatable)")
    group.addoption("--jeval-energy", dest="jeval_energy", action="store_true", default=False,
                    help="measure GPU energy around model calls (NVML), like [run] telemetry = true")
    parser.addini("jeval_config", "default suite file for --jeval-config", default=None)
    parser.addini("jeval_output", "default output directory for --jeval-output", default=None)
    parser.addini("jeval_progress_interval", "seconds between the progress lines of a long run (default 15; 0: none)",
                  default=None)


def _option(config: pytest.Config, name: str) -> str | None:
    value = config.getoption(name)
    if value is None:
        value = config.getini(name)
    return str(value) if value else None


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """``--jeval-list`` prints the benchmark and evaluator catalogs (like ``jeval list``) and exits."""
    if not config.getoption("jeval_list"):
        return None
    import argparse

    from pytest_jeval.cli._list import run

    return run(argparse.Namespace(json=False))


def pytest_configure(config: pytest.Config) -> None:
    """Load and validate the suite once; set up the runtime; register the hooks of each feature in use."""
    gcpause.enter_session()
    from pytest_jeval.session.remote import suite_option

    suite = suite_option(config, _option(config, "jeval_config"))
    if not suite:
        if config.getoption("jeval_set"):
            raise pytest.UsageError("--jeval-set overrides a key of the suite: it needs --jeval-config SUITE.toml")
        return
    gcpause.pause()  # until the end of collection (pytest_jeval.session.gcpause)
    from pytest_jeval.suite.config import SuiteError
    from pytest_jeval.suite.plan import EvalPlan

    try:
        plan = EvalPlan.from_file(
            Path(suite),
            invocation_dir=config.invocation_params.dir,
            output_dir=_option(config, "jeval_output"),
            use_cache=not config.getoption("jeval_no_cache"),
            overrides=config.getoption("jeval_set") or (),
        )
    except SuiteError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[plan_key] = plan
    for name in FEATURES:
        importlib.import_module(name).install(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop the call scheduler (each feature's plugin stops itself in its own ``pytest_unconfigure``)."""
    runtime = config.stash.get(runtime_key, None)
    if runtime is not None:
        runtime.close()
    gcpause.leave_session()
