"""pytest-jeval: LLM benchmarks as pytest test suites.

Entry point (``pytest11``). Without ``--jeval-config`` the plugin registers its
options and fixtures and otherwise stays silent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_jeval.session import gcpause
from pytest_jeval.session.fixtures import (  # noqa: F401
    benchmark_entry,
    episode,
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
# Each feature's hooks live with the feature and are registered here only when it is on
# (the list is in docs/hooks.md).


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
    from pytest_jeval.results.shipping import RecordHooks
    from pytest_jeval.session import collect
    from pytest_jeval.session.collect import suite_args
    from pytest_jeval.session.notices import Notices, choose_junit_family
    from pytest_jeval.session.redaction import install as install_redaction
    from pytest_jeval.session.runtime import Runtime, RuntimeHooks, is_dry, is_worker
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
    install_redaction(config, plan)
    junit_notice = choose_junit_family(config)  # before pytest's junitxml reads junit_family
    config.args = suite_args(config, plan.path)
    config.pluginmanager.register(collect, "jeval-collect")
    runtime = Runtime(plan, use_cache=not config.getoption("jeval_no_cache"))
    config.stash[runtime_key] = runtime
    worker = is_worker(config)
    # Registration order matters for pytest_sessionstart (pluggy calls the last registered first):
    # the writer takes the output dir and reads resumed records, then the local model starts,
    # then the runtime checks the endpoints.
    config.pluginmanager.register(RuntimeHooks(runtime), "jeval-runtime")
    config.pluginmanager.register(RecordHooks(worker=worker), "jeval-records")
    if not is_dry(config):
        runtime.start_early(config)
        from pytest_jeval.session.prefetch import Prefetch

        config.pluginmanager.register(Prefetch(), "jeval-prefetch")
        if plan.suite.run.warmup_samples:
            from pytest_jeval.session.warmup import WarmupPlugin

            config.pluginmanager.register(WarmupPlugin(), "jeval-warmup")
    if worker:
        from pytest_jeval.session.local_model import worker_base_url

        plan.local_base_url = worker_base_url(config)
    elif plan.needs_local_model:
        from pytest_jeval.session.local_model import LocalModelPlugin

        config.pluginmanager.register(LocalModelPlugin(plan), "jeval-local-model")
    resume = bool(config.getoption("jeval_resume"))
    if resume:
        from pytest_jeval.results.resume import ResumePlugin

        config.pluginmanager.register(ResumePlugin(), "jeval-resume")
    if not worker:
        from pytest_jeval.session.remote import RemoteWorkersPlugin, check_remote_specs

        check_remote_specs(config, local_model=plan.needs_local_model)
        config.pluginmanager.register(RemoteWorkersPlugin(str(plan.path)), "jeval-remote-workers")
        from pytest_jeval.results.writer import install as install_writer

        install_writer(config, plan, resume=resume)
        from pytest_jeval.exports.plugin import install as install_exports

        install_exports(config, plan)
        if not is_dry(config):
            from pytest_jeval.session.progress import install as install_progress

            install_progress(config)
        config.pluginmanager.register(Notices(junit_notice), "jeval-notices")


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop the call scheduler (each feature's plugin stops itself in its own ``pytest_unconfigure``)."""
    runtime = config.stash.get(runtime_key, None)
    if runtime is not None:
        runtime.close()
    gcpause.leave_session()
