"""Open registries: every registered evaluator and benchmark is well formed, and installed packages add their own.

The built-in evaluators are the modules of ``pytest_jeval.judge_bench.evaluators`` and the built-in
benchmarks the ``bench_*.py`` modules of ``pytest_jeval.benchmarks``; installed packages add theirs
through the ``pytest_jeval.evaluators`` and ``pytest_jeval.benchmarks`` entry-point groups. The
installed-package tests write a real package with a ``*.dist-info`` folder (``entry_points.txt``) onto
the ``PYTHONPATH`` of a subprocess, where ``importlib.metadata`` finds it as it finds any install.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_jeval.judge_bench import CodeEvaluator, evaluator_classes, register
from pytest_jeval.scoring.judging.cases import CASE_KINDS
from pytest_jeval.scoring.judging.registry import check_evaluator, check_scale
from pytest_jeval.scoring.registry import scorer_names
from pytest_jeval.suite.catalog import CatalogError, builtin_benchmarks, builtin_index, package_index
from pytest_jeval.testing.openai_server import FakeOpenAIServer

KEY = "sk-registry-test-key"


# -- every registered item -----------------------------------------------------------------------
def test_every_evaluator_is_well_formed() -> None:
    classes = evaluator_classes()
    assert classes, "no evaluator registered"
    for name, cls in classes.items():
        assert cls.name == name
        assert cls.description.strip(), name
        assert cls.kinds and set(cls.kinds) <= set(CASE_KINDS), name
        if cls.default_scale is not None:
            assert check_scale(cls.default_scale) == tuple(cls.default_scale), name
        if "choice" in cls.kinds:
            assert len(set(cls.choice_labels)) >= 2, name
        ev = cls()
        spec = ev.spec(None, None) if cls.kinds[0] != "score" or cls.default_scale else ev.spec(None, [0, 4])
        assert spec.kind == cls.kinds[0], name
    assert len({c.__module__ + "." + c.__qualname__ for c in classes.values()}) == len(classes)


def test_every_builtin_evaluator_module_registers_something() -> None:
    import pkgutil

    import pytest_jeval.judge_bench.evaluators as package

    modules = {m.name for m in pkgutil.iter_modules(package.__path__) if not m.name.startswith("_")}
    registered = {c.__module__.rsplit(".", 1)[-1] for c in evaluator_classes().values()}
    assert modules and modules == registered


def test_every_benchmark_is_well_formed() -> None:
    benches = builtin_benchmarks()
    names = [b.name for b in benches]
    assert len(names) == len(set(names)) == len(builtin_index())
    scorers = set(scorer_names())
    for b in benches:
        assert b.description.strip() and b.category, b.name
        assert (b.dataset is not None or b.read_rows is not None
                or b.default_files(sys.modules[builtin_index()[b.name]].__file__)), b.name
        assert b.scorer in scorers, f"{b.name}: scorer {b.scorer!r} is not in the scorer registry"


# -- guards of the registry ---------------------------------------------------------------------
def _evaluator(**attrs: object) -> type[CodeEvaluator]:
    body: dict[str, object] = {"name": "tmp_eval", "description": "A test evaluator.", **attrs}
    return type("TmpEval", (CodeEvaluator,), body)


@pytest.mark.parametrize(("attrs", "message"), [
    ({"name": ""}, "name ''"),
    ({"name": "has space"}, "name 'has space'"),
    ({"description": "  "}, "has no description"),
    ({"kinds": ()}, "kinds ()"),
    ({"kinds": ("boolean", "fuzzy")}, "kinds ('boolean', 'fuzzy')"),
    ({"kinds": ("choice",), "choice_labels": ("A",)}, "at least two distinct choice_labels"),
    ({"kinds": ("score",), "default_scale": (4, 0)}, "default_scale: scale must satisfy"),
])
def test_register_refuses_an_incomplete_evaluator(attrs: dict[str, object], message: str) -> None:
    cls = _evaluator(**attrs)
    with pytest.raises(ValueError, match="TmpEval") as info:
        register(cls)
    assert message in str(info.value)
    assert "tmp_eval" not in evaluator_classes()
    check_evaluator(_evaluator())  # the same class, complete, passes


def test_register_refuses_a_taken_name() -> None:
    with pytest.raises(ValueError, match=r"'exact_match' .* already taken by pytest_jeval\.judge_bench\.evaluators\.code"):
        register(_evaluator(name="exact_match"))
    assert evaluator_classes()["exact_match"].__module__ == "pytest_jeval.judge_bench.evaluators.code"


def test_package_index_refuses_two_benchmarks_of_one_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "twin_benches"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for mod in ("bench_a", "bench_b"):
        (pkg / f"{mod}.py").write_text(BENCH_MODULE.format(name="twin"))
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(CatalogError, match=r"twin_benches\.bench_b and twin_benches\.bench_a both define .*'twin'"):
        package_index("twin_benches")


# -- an installed package -----------------------------------------------------------------------
SHOUTING = '''
from pytest_jeval.judge_bench import CodeEvaluator, register


@register
class Shouting(CodeEvaluator):
    """Is the output in capitals?"""

    name = "shouting"
    description = "Is the output written in capitals?"

    def judge(self, item, spec):
        return self.decided(str(item.output).isupper())
'''

BENCH_MODULE = '''
from pytest_jeval import Benchmark, Sample, Score


def to_sample(row, index, ctx):
    return Sample(id=f"echo-{{index}}", input=row["q"], target=row["a"])


BENCHMARK = Benchmark(name="{name}", description="Echo the answer.", category="test", to_sample=to_sample,
                      prompt=lambda s: s.input, scorer="exact")


def test_echo(sample, response, score):
    text = response.text.strip()
    score(Score(correct=text == sample.target, extracted=text, expected=sample.target))
'''


def install_package(site: Path, entry_points: str, modules: dict[str, str] | None = None) -> None:
    """Write package ``acme_evals`` (its modules) and an ``acme_evals-1.0.dist-info`` with ``entry_points``."""
    pkg = site / "acme_evals"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    for name, text in (modules or {}).items():
        (pkg / f"{name}.py").write_text(textwrap.dedent(text))
    info = site / "acme_evals-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-evals\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points))


@pytest.fixture
def site(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder on the subprocesses' PYTHONPATH, where :func:`install_package` installs."""
    folder = pytester.path / "site"
    folder.mkdir()
    monkeypatch.setenv("PYTHONPATH", str(folder))
    monkeypatch.setenv("JEVAL_KEY", KEY)
    return folder


def jeval(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.run(sys.executable, "-m", "pytest_jeval", *args)


@pytest.mark.slow
def test_installed_evaluator_and_benchmark_are_listed_and_run(pytester: pytest.Pytester, site: Path) -> None:
    install_package(site, """
        [pytest_jeval.evaluators]
        shouting = acme_evals.shouting:Shouting
        [pytest_jeval.benchmarks]
        acme_echo = acme_evals.bench_echo
    """, {"shouting": SHOUTING, "bench_echo": BENCH_MODULE.format(name="acme_echo")})
    listed = jeval(pytester, "list", "--json")
    assert listed.ret == 0, listed.stderr.str()
    catalog = json.loads(listed.stdout.str())
    shouting = next(e for e in catalog["evaluators"] if e["name"] == "shouting")
    assert shouting == {"name": "shouting", "category": "code", "dataset": None, "kind": "boolean",
                        "scale": "true/false", "description": "Is the output written in capitals?"}
    assert {"exact_match", "llm_judge"} <= {e["name"] for e in catalog["evaluators"]}  # the built-ins stay
    echo = next(b for b in catalog["benchmarks"] if b["name"] == "acme_echo")
    assert echo["category"] == "test" and echo["scorer"] == "exact"
    table = jeval(pytester, "list")
    assert table.ret == 0
    table.stdout.fnmatch_lines(["*acme_echo*test*(bundled)*", "evaluators:", "*shouting*code*boolean*true/false*"])

    gold = [{"id": "g1", "input": "say hi", "output": "HELLO", "gold": True},
            {"id": "g2", "input": "say hi", "output": "hello", "gold": False},
            {"id": "g3", "input": "say hi", "output": "Hello", "gold": True}]  # the evaluator says False: a miss
    (pytester.path / "gold.jsonl").write_text("".join(json.dumps(r) + "\n" for r in gold))
    (pytester.path / "echo.jsonl").write_text(json.dumps({"q": "Say yes.", "a": "yes"}) + "\n")
    with FakeOpenAIServer(lambda body, attempt: "yes") as server:
        (pytester.path / "suite.toml").write_text(textwrap.dedent(f"""
            [run]
            output_dir = "out"

            [[models]]
            name = "m"
            base_url = "{server.base_url}"
            api_key_env = "JEVAL_KEY"

            [[benchmarks]]
            name = "shout"
            evaluator = "shouting"
            data_files = "gold.jsonl"

            [[benchmarks]]
            name = "acme_echo"
            data_files = "echo.jsonl"
        """))
        result = pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-p", "no:cacheprovider", "-rA")
    result.assert_outcomes(passed=3, failed=1)
    records = {r["record_id"]: r for r in map(json.loads, (pytester.path / "out" / "shout_m.jsonl").read_text().splitlines())}
    assert {k: r["is_correct"] for k, r in records.items()} == {"g1": True, "g2": True, "g3": False}
    echo_records = (pytester.path / "out" / "acme_echo_m.jsonl").read_text().splitlines()
    assert [json.loads(line)["is_correct"] for line in echo_records] == [True]


@pytest.mark.parametrize(("entry_points", "modules", "message"), [
    ("[pytest_jeval.evaluators]\nshouting = acme_evals.missing:Shouting\n", {},
     "entry point shouting = 'acme_evals.missing:Shouting' (group pytest_jeval.evaluators of acme-evals 1.0) "
     "failed to load: ModuleNotFoundError"),
    ("[pytest_jeval.evaluators]\nloud = acme_evals.shouting:Shouting\n", {"shouting": SHOUTING},
     "the entry point's name must be the evaluator's name 'shouting'"),
    ("[pytest_jeval.evaluators]\nempty = acme_evals.empty\n", {"empty": "X = 1\n"},
     "module acme_evals.empty registers no evaluator"),
    ("[pytest_jeval.benchmarks]\ngsm8k = acme_evals.bench_echo\n", {"bench_echo": BENCH_MODULE.format(name="gsm8k")},
     "'gsm8k' is the name of a built-in benchmark"),
    ("[pytest_jeval.benchmarks]\nacme_echo = acme_evals.bench_echo\n", {"bench_echo": BENCH_MODULE.format(name="other")},
     "installed benchmark 'acme_echo': module acme_evals.bench_echo defines the Benchmark 'other'"),
])
@pytest.mark.slow
def test_a_broken_installed_package_is_a_clear_error(pytester: pytest.Pytester, site: Path, entry_points: str,
                                                      modules: dict[str, str], message: str) -> None:
    install_package(site, entry_points, modules)
    result = jeval(pytester, "list")
    assert result.ret == 2
    err = result.stderr.str()
    assert err.startswith("jeval: error: ") and message in err, err
    assert "Traceback" not in err


def test_a_suite_naming_a_broken_evaluator_is_a_usage_error(pytester: pytest.Pytester, site: Path) -> None:
    install_package(site, "[pytest_jeval.evaluators]\nshouting = acme_evals.missing:Shouting\n")
    (pytester.path / "gold.jsonl").write_text(json.dumps({"id": "g1", "input": "q", "output": "A", "gold": True}) + "\n")
    (pytester.path / "suite.toml").write_text(textwrap.dedent("""
        [[models]]
        name = "m"
        base_url = "http://127.0.0.1:9/v1"
        api_key_env = "JEVAL_KEY"

        [[benchmarks]]
        name = "shout"
        evaluator = "shouting"
        data_files = "gold.jsonl"
    """))
    result = pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*benchmarks[[]0[]].evaluator: entry point shouting = 'acme_evals.missing:Shouting'*"])
    assert "Traceback" not in result.stderr.str()



def test_every_evaluator_has_a_row_in_the_docs() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "judges.md").read_text(encoding="utf-8")
    section = text.split("\n## The evaluators\n", 1)[1].split("\n## ", 1)[0]
    documented = {line.split("`")[1] for line in section.splitlines() if line.startswith("| `")}
    missing = set(evaluator_classes()) - documented
    assert not missing, f"docs/judges.md 'The evaluators' table lacks: {sorted(missing)}"
