"""Each feature's hooks are registered only when the feature is on, and the writer unregisters itself."""

from __future__ import annotations

import json
import textwrap

import pytest

from tests.support.gsm import JevalProject

NAMES = ("jeval-runtime", "jeval-records", "jeval-prefetch", "jeval-resume", "jeval-writer", "jeval-local-model",
         "jeval-progress", "jeval-warmup", "jeval-exports")


def _registered(p: JevalProject, *args: str) -> set[str]:
    p.pytester.makeconftest(textwrap.dedent(f"""
        import json

        def pytest_sessionstart(session):
            names = [n for n in {NAMES!r} if session.config.pluginmanager.get_plugin(n) is not None]
            (session.config.rootpath / "plugins.json").write_text(json.dumps(names))
    """))
    p.pytester.runpytest("--jeval-config", str(p.suite()), "-k", "gsm8k-0", *args)
    return set(json.loads((p.pytester.path / "plugins.json").read_text()))


@pytest.mark.parametrize(("args", "expected"), [
    ((), {"jeval-runtime", "jeval-records", "jeval-prefetch", "jeval-writer", "jeval-progress"}),
    (("--jeval-resume",), {"jeval-runtime", "jeval-records", "jeval-prefetch", "jeval-writer", "jeval-resume",
                           "jeval-progress"}),
    (("--collect-only",), {"jeval-runtime", "jeval-records", "jeval-writer"}),
    (("-o", "jeval_progress_interval=0"), {"jeval-runtime", "jeval-records", "jeval-prefetch", "jeval-writer"}),
])
def test_features_register_their_hooks_only_when_on(jeval_project: JevalProject, args: tuple[str, ...],
                                                     expected: set[str]) -> None:
    assert _registered(jeval_project, *args) == expected


def test_writer_unregisters_itself_at_unconfigure(jeval_project: JevalProject) -> None:
    p = jeval_project
    reprec = p.pytester.inline_run("--jeval-config", str(p.suite()), "-k", "gsm8k-0")
    assert [r["record_id"] for r in p.records()] == ["gsm8k-0"]  # the writer ran
    config = reprec.getcall("pytest_unconfigure").config
    assert config.pluginmanager.get_plugin("jeval-writer") is None
