"""``--jeval-set KEY=VALUE``: every section overridable, with the file's own validation and messages."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.suite.config import SuiteError
from pytest_jeval.suite.overrides import OverrideError, parse_override
from pytest_jeval.suite.plan import EvalPlan
from tests.support.gsm import SECRET, JevalProject, chat_requests

SUITE = """
[meta]
name = "file"

[run]
seed = 42

[[models]]
name = "m"

[[models]]
name = "gpt-4.1"
temperature = 0.9

[[benchmarks]]
name = "gsm8k"

[[benchmarks]]
name = "quickstart"
"""

ENV = ("JEVAL_BASE_URL", "JEVAL_API_KEY", "JARVIS_BACKEND_BASE_URL", "JARVIS_BACKEND_API_KEY", "VLLM_HOST")


@pytest.fixture(autouse=True)
def _no_endpoint_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)


def _plan(tmp_path: Path, *overrides: str, text: str = SUITE) -> EvalPlan:
    (tmp_path / "s.toml").write_text(text)
    return EvalPlan.from_file(tmp_path / "s.toml", invocation_dir=tmp_path, overrides=overrides)


def _error(tmp_path: Path, *overrides: str, text: str = SUITE) -> str:
    with pytest.raises(SuiteError) as info:
        _plan(tmp_path, *overrides, text=text)
    return str(info.value)


def _user_endpoint(p: EvalPlan) -> Any:
    return p.endpoint_for(None, user=True).base_url


SECTIONS: list[tuple[str, Callable[[EvalPlan], Any], Any]] = [
    ('meta.name="cli"', lambda p: p.suite.meta.name, "cli"),
    ('meta.description=a bare string', lambda p: p.suite.meta.description, "a bare string"),
    ("defaults.temperature=0.3", lambda p: p.generation("gsm8k", "m"), (0.3, 2048)),
    ("judge.model=gpt-5-mini", lambda p: p.suite.judge.model if p.suite.judge else None, "gpt-5-mini"),
    ("user.model=sim", lambda p: p.suite.user.model if p.suite.user else None, "sim"),
    ("run.seed=7", lambda p: p.suite.run.seed, 7),
    ("run.cache=false", lambda p: p.cache_dir, None),
    ('backend.external.base_url="http://ext:1/v1"', lambda p: p.endpoint_for(p.models["m"]).base_url,
     "http://ext:1/v1"),
    ("models.m.max_tokens=99", lambda p: p.generation("gsm8k", "m"), (0.0, 99)),
    ('models."gpt-4.1".temperature=0', lambda p: p.generation("gsm8k", "gpt-4.1"), (0.0, 2048)),
    ("models.1.max_tokens=7", lambda p: p.models["gpt-4.1"].max_tokens, 7),
    ("benchmarks.gsm8k.max_samples=20", lambda p: p.benchmarks["gsm8k"].entry.max_samples, 20),
    ('benchmarks.quickstart.record_ids=["a", "b"]', lambda p: p.benchmarks["quickstart"].entry.record_ids,
     ["a", "b"]),
    ("benchmarks[1].split=dev", lambda p: p.benchmarks["quickstart"].entry.split, "dev"),
]


@pytest.mark.parametrize(("override", "read", "expected"), SECTIONS, ids=[s[0].split("=")[0] for s in SECTIONS])
def test_an_override_changes_the_plan(tmp_path: Path, override: str, read: Callable[[EvalPlan], Any],
                                      expected: Any) -> None:
    assert read(_plan(tmp_path)) != expected  # the file alone says otherwise
    plan = _plan(tmp_path, override)
    assert read(plan) == expected
    assert plan.overrides == (override,)


def test_overrides_apply_in_order_and_leave_the_rest_of_the_file_alone(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "run.seed=1", "models.m.temperature=0.5", "run.seed=2")
    assert plan.suite.run.seed == 2
    assert plan.generation("gsm8k", "m") == (0.5, 2048)
    assert plan.generation("gsm8k", "gpt-4.1") == (0.9, 2048)  # the other entry keeps its own
    assert plan.suite.meta.name == "file"


def test_a_selector_names_the_label_of_an_entry_that_has_one(tmp_path: Path) -> None:
    from pytest_jeval.suite.overrides import apply_overrides, parse_overrides

    data: dict[str, Any] = {"benchmarks": [{"name": "gpqa", "label": "diamond"}, {"name": "gpqa", "label": "main"}]}
    applied = apply_overrides(data, parse_overrides(["benchmarks.main.max_samples=5"]))
    assert data["benchmarks"][1]["max_samples"] == 5 and "max_samples" not in data["benchmarks"][0]
    assert applied.annotate("  benchmarks[1].max_samples: bad") == \
        "  benchmarks[1].max_samples: bad (from --jeval-set benchmarks.main.max_samples=…)"  # values never shown
    with pytest.raises(OverrideError, match=r"no benchmarks entry has the label or name 'gpqa'.*'diamond', 'main'"):
        apply_overrides(data, parse_overrides(["benchmarks.gpqa.max_samples=5"]))


def _file_error(tmp_path: Path, old: str, new: str) -> str:
    assert old in SUITE
    return _error(tmp_path, text=SUITE.replace(old, new, 1))


@pytest.mark.parametrize(("override", "old", "new"), [
    ("run.seed=x", "seed = 42", 'seed = "x"'),
    ("run.seed=-1", "seed = 42", "seed = -1"),
    ("models.gpt-4.1.temperature=hot", "temperature = 0.9", 'temperature = "hot"'),
    ("benchmarks.gsm8k.max_samples=0", 'name = "gsm8k"', 'name = "gsm8k"\nmax_samples = 0'),
    ('models.m.engine="olama"', 'name = "m"', 'name = "m"\nengine = "olama"'),
    ("run.sed=7", "seed = 42", "seed = 42\nsed = 7"),
    ("models.m.tempreature=1", 'name = "m"', 'name = "m"\ntempreature = 1'),
    ("runn.seed=1", "[run]", "[runn]"),
    ("benchmarks.gsm8k.name=gsm8kk", 'name = "gsm8k"', 'name = "gsm8kk"'),
    ("models.m.api_key_env=JEVAL_NOT_SET_ANYWHERE", 'name = "m"', 'name = "m"\napi_key_env = "JEVAL_NOT_SET_ANYWHERE"'),
], ids=["wrong-type", "out-of-range", "quoted-key-wrong-type", "entry-out-of-range", "bad-engine", "unknown-key",
        "unknown-entry-key", "unknown-section", "unknown-benchmark", "unset-key-env"])
def test_a_bad_value_gets_the_files_message_and_names_the_override(tmp_path: Path, override: str, old: str,
                                                                   new: str) -> None:
    from_file = _file_error(tmp_path, old, new)
    override = override.replace("gpt-4.1.", '"gpt-4.1".')
    from_cli = _error(tmp_path, "meta.name=fine", override)
    assert from_cli == f"{from_file} (from --jeval-set {override.split('=')[0]}=…)"
    assert "meta.name" not in from_cli  # only the override that set the key is named


def test_the_wrong_type_and_unknown_key_messages_read_as_documented(tmp_path: Path) -> None:
    assert _error(tmp_path, "run.seed=x").endswith(
        "  run.seed: Input should be a valid integer, unable to parse string as an integer (got 'x') "
        "(from --jeval-set run.seed=…)")
    assert _error(tmp_path, "defaults.temprature=1").endswith(
        "  defaults.temprature: unknown key (from --jeval-set defaults.temprature=…)")


@pytest.mark.parametrize(("override", "message"), [
    ("benchmarks.nope.max_samples=1",
     "no benchmarks entry has the label or name 'nope'; the benchmarks are: 'gsm8k', 'quickstart' (or an index 0..1)"),
    ("models.2.max_tokens=1", "models[2] does not exist; the models are: 'm', 'gpt-4.1'"),
    ("models.m=1", "name a key of the entry (models.m.KEY=VALUE)"),
    ("run.seed.deeper=1", "run.seed is not a table"),
])
def test_a_selector_or_path_that_names_nothing_is_refused(tmp_path: Path, override: str, message: str) -> None:
    assert f"--jeval-set {override.split('=')[0]}=…: {message}" in _error(tmp_path, override)


def test_a_selector_matching_two_entries_is_refused(tmp_path: Path) -> None:
    text = SUITE.replace('name = "gpt-4.1"', 'name = "m"')
    assert "2 models entries are named 'm'; select one by index (models.0.KEY=VALUE) or give them a label" in \
        _error(tmp_path, "models.m.max_tokens=5", text=text)


@pytest.mark.parametrize(("text", "message"), [
    ("run.seed", "expected KEY=VALUE"),
    ("=7", "the key is empty"),
    ("  =7", "the key is empty"),
    ("run..seed=7", "not a dotted key"),
    ('models."gpt-4.1.temperature=0', 'the key has an unclosed "'),
])
def test_malformed_syntax_is_a_usage_error(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(OverrideError, match=message):
        parse_override(text)
    assert message in _error(tmp_path, text)


@pytest.mark.parametrize(("text", "key", "value"), [
    ("run.seed=7", ("run", "seed"), 7),
    ("defaults.temperature=0.3", ("defaults", "temperature"), 0.3),
    ("run.cache=true", ("run", "cache"), True),
    ('meta.name="a = b"', ("meta", "name"), "a = b"),
    ("meta.name=a = b", ("meta", "name"), "a = b"),
    ('benchmarks.x.tools=["bash", "python"]', ("benchmarks", "x", "tools"), ["bash", "python"]),
    ("judge.model=gpt-5-mini", ("judge", "model"), "gpt-5-mini"),
    ('models."a=b.c".temperature=0', ("models", "a=b.c", "temperature"), 0),
    ("models.'x'.name=y", ("models", "x", "name"), "y"),
    ("benchmarks[3].split=test", ("benchmarks", "3", "split"), "test"),
    ("meta.name=", ("meta", "name"), ""),
    ("meta.name=1\n[run]\nseed = 3", ("meta", "name"), "1\n[run]\nseed = 3"),  # one value, never more keys
])
def test_key_and_value_syntax(text: str, key: tuple[str, ...], value: Any) -> None:
    parsed = parse_override(text)
    assert (parsed.key, parsed.value) == (key, value)


@pytest.mark.parametrize("text", [
    "models.m.api_key=sk-live-0123456789", "judge.api_key=sk-live-0123456789",
    "backend.external.api_key=sk-live-0123456789", 'backend.external={api_key="sk-live-0123456789"}',
    'models.m={temperature=0, api_key="sk-live-0123456789"}',
])
def test_a_key_on_the_command_line_is_refused_without_repeating_it(tmp_path: Path, text: str) -> None:
    message = _error(tmp_path, text)
    assert "api_key_env" in message and "readable by every process" in message
    assert "sk-live-0123456789" not in message


# -- through pytest ----------------------------------------------------------------------

def _two_model_suite(p: JevalProject) -> Path:
    models = "".join(f"""
        [[models]]
        name = "{name}"
        base_url = "{p.server.base_url}"
        api_key_env = "JEVAL_TEST_KEY"
        """ for name in ("model-a", "model-b"))
    path = p.pytester.path / "suite.toml"
    path.write_text(textwrap.dedent(f"""
        [run]
        output_dir = "out"
        max_retries = 0
        request_timeout = 5
        cache = false
        {models}
        [[benchmarks]]
        name = "gsm8k"
        data_files = "gsm.jsonl"
        """))
    return path


@pytest.mark.slow
@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_max_samples_from_the_command_line_runs_that_many_items_per_model(jeval_project: JevalProject,
                                                                          workers: list[str]) -> None:
    p = jeval_project
    suite = _two_model_suite(p)
    run = p.pytester.runpytest_subprocess if workers else p.pytester.runpytest
    result = run("--jeval-config", str(suite), "--jeval-set", "benchmarks.gsm8k.max_samples=3", *workers,
                 "-p", "no:randomly")
    outcomes = result.parseoutcomes()
    assert sum(outcomes.get(k, 0) for k in ("passed", "failed", "error", "errors")) == 6, result.outlines[-5:]
    ids = {}
    for model in ("model-a", "model-b"):
        records = p.records(model=model)
        assert len(records) == 3
        ids[model] = {r["record_id"] for r in records}
    assert ids["model-a"] == ids["model-b"]
    assert len(chat_requests(p.server)) == 6
    aggregate = json.loads((p.pytester.path / "out" / "summary.json").read_text())
    assert aggregate["overrides"] == ["benchmarks.gsm8k.max_samples=3"]


def test_a_bad_override_stops_the_run_before_any_request(jeval_project: JevalProject) -> None:
    p = jeval_project
    suite = p.suite()
    result = p.pytester.runpytest_subprocess("--jeval-config", str(suite), "--jeval-set", "run.seed=7",
                                             "--jeval-set", "benchmarks.gsm8k.max_samples=many")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "benchmarks[0].max_samples: Input should be a valid integer" in err
    assert "(from --jeval-set benchmarks.gsm8k.max_samples=…)" in err
    assert "Traceback" not in err
    assert not p.server.requests
    assert not (p.pytester.path / "out").exists()


def test_malformed_and_secret_overrides_are_usage_errors(jeval_project: JevalProject) -> None:
    p = jeval_project
    suite = p.suite()
    for bad, message in (("run.seed", "expected KEY=VALUE"), (f"models.test-model.api_key={SECRET}", "api_key_env")):
        result = p.pytester.runpytest("--jeval-config", str(suite), "--jeval-set", bad)
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        err = result.stderr.str()
        assert message in err and SECRET not in err and SECRET not in result.stdout.str()
    assert not p.server.requests


def test_an_override_without_a_suite_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_x(): pass")
    result = pytester.runpytest("--jeval-set", "run.seed=7")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--jeval-set overrides a key of the suite: it needs --jeval-config" in result.stderr.str()
