"""What the plugin changed on the user's behalf, said once in the terminal; and the junit family.

* Requests adapted to what a model accepts (reasoning models: ``max_completion_tokens``,
  no temperature): :meth:`pytest_jeval.suite.plan.EvalPlan.adaptations`.
* The junit XML family. The plugin gives every sample's test case ``<properties>``
  (record id, benchmark, model, score, latency). pytest's default family, ``xunit2``,
  does not allow ``<properties>`` inside ``<testcase>``, so unless the user chose a
  family, ``xunit1`` is selected; under a chosen ``xunit2`` the properties are left out.
* Requests that could not be sent ahead of time (prefetch), counted over all workers.
"""

from __future__ import annotations

from typing import Any

import pytest

junit_properties_key = pytest.StashKey[bool]()
"""Whether this process adds per-sample ``user_properties`` to its reports (``config.stash``)."""


def _family_chosen(config: pytest.Config) -> bool:
    """True when ``junit_family`` is set in the ini file or with ``-o``."""
    inicfg = getattr(config, "_inicfg", None)  # pytest >= 9 (``inicfg`` is deprecated there)
    if inicfg is None:
        inicfg = getattr(config, "inicfg", {})
    if "junit_family" in inicfg:
        return True
    overrides = getattr(config, "_override_ini", None) or ()  # pytest < 9 keeps -o apart
    return any(str(o).split("=", 1)[0].strip() == "junit_family" for o in overrides)


def choose_junit_family(config: pytest.Config) -> str | None:
    """Select the junit family for per-sample properties; return the terminal notice, if any.

    Called from the plugin's ``pytest_configure``, before pytest's junitxml plugin reads
    ``junit_family``. Stores in ``config.stash`` whether this process adds the properties.
    """
    if _family_chosen(config):
        keep = config.getini("junit_family") != "xunit2"
        config.stash[junit_properties_key] = keep
        if keep:
            return None
        return ("junit_family = xunit2 (as configured) allows no <properties> in a <testcase>: the per-sample "
                "properties are left out of the junit XML (the JSONL records hold them)")
    cache = getattr(config, "_inicache", None)
    if isinstance(cache, dict):
        cache["junit_family"] = "xunit1"
    keep = config.getini("junit_family") in ("xunit1", "legacy")
    config.stash[junit_properties_key] = keep
    if keep:
        return ("junit XML uses junit_family = xunit1, which allows the per-sample <properties> in each "
                "<testcase> (set junit_family in your pytest configuration to choose)")
    return ("junit XML keeps pytest's junit_family, which allows no <properties> in a <testcase>: the "
            "per-sample properties are left out (the JSONL records hold them)")


class Notices:
    """Registered on the controller: prints the notices once, in the terminal summary."""

    def __init__(self, junit: str | None) -> None:
        self.junit = junit

    def lines(self, config: pytest.Config) -> list[str]:
        """The notice lines for this run."""
        from pytest_jeval.results.writer import worker_stats_key
        from pytest_jeval.session.keys import runtime_key

        runtime = config.stash.get(runtime_key, None)
        out: list[str] = []
        if config.option.collectonly:
            return out
        if runtime is not None:
            out += [f"jeval: {line}" for line in runtime.plan.adaptations()]
        if self.junit is not None and config.option.xmlpath:
            out.append(f"jeval: {self.junit}")
        stats: list[dict[str, Any]] = config.stash.get(worker_stats_key, []) or (
            [dict(vars(runtime.stats))] if runtime is not None else [])
        failed = sum(int(s.get("prefetch_failed", 0)) for s in stats)
        if failed:
            reasons = [r for s in stats for r in s.get("prefetch_errors", ())]
            out.append(f"jeval: {failed} request(s) could not be built ahead of time (prefetch); each of those "
                       "items built its own and recorded any error:")
            out += [f"  {r}" for r in reasons[:3]]
        return out

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
        """Print the notices after the results."""
        for line in self.lines(config):
            terminalreporter.write_line(line, yellow=True)


def install(config: pytest.Config) -> None:
    """Choose the junit family now (before pytest's junitxml reads it) and print the notices on the controller."""
    junit_notice = choose_junit_family(config)
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(Notices(junit_notice), "jeval-notices")
