"""The SWE-bench grading rules without a sandbox: parsers, the report and the verdict, patches, recipes, mirrors.

The parsers and the verdict are checked against the installed ``swebench`` package (``make swebench``,
release 4.1.0) on the same logs; where 4.1.0 grades differently from upstream's main branch, which this
project follows, the difference itself is asserted (docs/swebench.md lists them).
"""

from __future__ import annotations

import json
import subprocess
import types
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.benchmarks._swe import grading, parsers, patches, specs
from pytest_jeval.benchmarks._swe.instances import parse_instance
from pytest_jeval.benchmarks._swe.repos import RepoError, checkout, find_mirror, git, has_commit, resolve_mirror
from tests.support.swe import DATA, REPOS, ROWS, SWEBENCH_ROWS

PYTEST_LOG = """\
============================= test session starts ==============================
collected 6 items

tests/test_a.py ..F.sx                                                   [100%]

=========================== short test summary info ============================
PASSED tests/test_a.py::test_one
PASSED tests/test_a.py::test_two[a-1]
FAILED tests/test_a.py::test_three - AssertionError: assert 1 == 2
XFAIL tests/test_a.py::test_four - reason: not yet
SKIPPED [1] tests/test_a.py:40: needs a network
ERROR tests/test_a.py::test_five - ValueError
========= 1 failed, 2 passed, 1 skipped, 1 xfailed, 1 error in 0.12s ==========
"""
OPTIONS_LOG = """\
PASSED tests/test_requests.py::test_path[/usr/lib/data.txt]
PASSED tests/test_requests.py::test_url[http://example.com/a]
FAILED tests/test_requests.py::test_plain - assert False
"""
V2_LOG = """\
\x1b[32mPASSED\x1b[0m sklearn/tests/test_x.py::test_alpha
FAILED sklearn/tests/test_x.py::test_beta - ValueError: bad
sklearn/tests/test_x.py::test_gamma PASSED
sklearn/tests/test_x.py::test_delta FAILED
"""
DJANGO_LOG = """\
test_first (model_fields.tests.BasicTests) ... ok
test_second (model_fields.tests.BasicTests) ... skipped 'no db'
test_third (model_fields.tests.BasicTests) ... FAIL
test_fourth (model_fields.tests.BasicTests) ... ERROR
test_fifth (model_fields.tests.BasicTests) ... some printed output
ok
======================================================================
FAIL: test_third (model_fields.tests.BasicTests)
----------------------------------------------------------------------
"""
SYMPY_LOG = """\
sympy/core/tests/test_basic.py[3]
test_one ok
test_two F
test_three E
________________________________ sympy/core/tests/test_basic.py:test_two _________________________________
"""
SEABORN_LOG = """\
tests/test_core.py::TestA::test_one PASSED [ 50%]
PASSED tests/test_core.py::TestA::test_two
FAILED tests/test_core.py::TestA::test_three - assert 0
"""
MATPLOTLIB_LOG = """\
PASSED lib/matplotlib/tests/test_widgets.py::test_span[MouseButton.LEFT]
FAILED lib/matplotlib/tests/test_widgets.py::test_span[MouseButton.RIGHT] - boom
"""


def test_each_parser_reads_its_format() -> None:
    assert parsers.parse_log("parse_log_pytest", PYTEST_LOG) == {
        "tests/test_a.py::test_one": "PASSED", "tests/test_a.py::test_two[a-1]": "PASSED",
        "tests/test_a.py::test_three": "FAILED", "tests/test_a.py::test_four": "XFAIL",
        "tests/test_a.py::test_five": "ERROR"}  # "SKIPPED [1] file:line" is a count, not a test
    assert parsers.parse_log("parse_log_pytest_options", OPTIONS_LOG) == {
        "tests/test_requests.py::test_path[/data.txt]": "PASSED",
        "tests/test_requests.py::test_url[http://example.com/a]": "PASSED",
        "tests/test_requests.py::test_plain": "FAILED"}
    assert parsers.parse_log("parse_log_pytest_v2", V2_LOG) == {
        "sklearn/tests/test_x.py::test_alpha": "PASSED", "sklearn/tests/test_x.py::test_beta": "FAILED",
        "sklearn/tests/test_x.py::test_gamma": "PASSED", "sklearn/tests/test_x.py::test_delta": "FAILED"}
    assert parsers.parse_log("parse_log_django", DJANGO_LOG) == {
        "test_first (model_fields.tests.BasicTests)": "PASSED", "test_second (model_fields.tests.BasicTests)": "SKIPPED",
        "test_third (model_fields.tests.BasicTests)": "FAILED", "test_fourth (model_fields.tests.BasicTests)": "ERROR",
        "test_fifth (model_fields.tests.BasicTests)": "PASSED", "test_third": "FAILED"}
    assert parsers.parse_log("parse_log_sympy", SYMPY_LOG) == {
        "test_one": "PASSED", "test_two": "FAILED", "test_three": "ERROR",
        "sympy/core/tests/test_basic.py:test_two": "FAILED"}
    assert parsers.parse_log("parse_log_seaborn", SEABORN_LOG) == {
        "tests/test_core.py::TestA::test_one": "PASSED", "tests/test_core.py::TestA::test_two": "PASSED",
        "tests/test_core.py::TestA::test_three": "FAILED"}
    assert parsers.parse_log("parse_log_matplotlib", MATPLOTLIB_LOG) == {
        "lib/matplotlib/tests/test_widgets.py::test_span[1]": "PASSED",
        "lib/matplotlib/tests/test_widgets.py::test_span[3]": "FAILED"}


def test_the_report_and_the_resolution() -> None:
    statuses = {"a": "PASSED", "b": "FAILED", "c": "XFAIL", "d": "SKIPPED", "e": "ERROR",
                "t[x-1]": "PASSED", "t[x-2]": "PASSED"}
    full = grading.grade_report(statuses, ["a", "c", "t[x-"], ["a", "d"])
    assert (full.f2p_success, full.p2p_success) == (["a", "c", "t[x-"], ["a", "d"])  # skipped keeps; a cut id
    assert grading.resolution(full) == grading.FULL
    partial = grading.grade_report(statuses, ["a", "b"], ["c"])
    assert partial.f2p_failure == ["b"] and grading.resolution(partial) == grading.PARTIAL
    skipped_f2p = grading.grade_report(statuses, ["d"], [])
    assert skipped_f2p.f2p_failure == ["d"] and grading.resolution(skipped_f2p) == grading.NO
    broken = grading.grade_report(statuses, ["a"], ["e", "missing"])
    assert broken.p2p_failure == ["e", "missing"] and grading.resolution(broken) == grading.NO
    assert grading.resolution(grading.grade_report({}, [], [])) == grading.FULL  # nothing expected


def _log(body: str, code: int = 0) -> str:
    return f"setup\n{grading.START}\n{body}\n{grading.END}\n{grading.EXIT}: {code}\n"


def test_a_log_that_cannot_be_graded_resolves_nothing() -> None:
    assert grading.extract_status_map("no markers at all", "parse_log_pytest")[1].startswith(
        "the test output markers are missing")
    statuses, why = grading.extract_status_map(_log("ImportError while loading conftest", 4), "parse_log_pytest")
    assert statuses == {} and why is not None and "never ran" in why
    forged = _log("PASSED tests/test_a.py::test_one", 1)  # a patch printing PASSED while the run failed
    statuses, why = grading.extract_status_map(forged, "parse_log_pytest")
    assert statuses == {} and why is not None and "exited with status 1" in why
    outside = "PASSED tests/test_a.py::test_one\n" + _log("", 0)  # results outside the markers still count
    assert grading.extract_status_map(outside, "parse_log_pytest") == ({"tests/test_a.py::test_one": "PASSED"}, None)


def test_the_eval_script_resets_applies_and_runs_the_directives() -> None:
    row = SWEBENCH_ROWS[0]
    script = grading.eval_script(repo="django/django", base_commit="abc123", test_patch=row["test_patch"],
                                 test_cmd="./tests/runtests.py --verbosity 2", install="pip install -e .",
                                 eval_commands=["export LANG=en_US.UTF-8"])
    lines = script.splitlines()
    assert lines[0] == "export LANG=en_US.UTF-8" and lines[1] == "pip install -e ."
    assert lines.count("git checkout abc123 tests/test_slug.py") == 2  # before the test patch and after the tests
    assert "./tests/runtests.py --verbosity 2 test_slug" in lines  # Django's directives are module names
    assert script.index(grading.START) < script.index("runtests") < script.index(grading.END) < script.index(grading.EXIT)
    assert grading.test_directives("psf/requests", row["test_patch"]) == ["tests/test_slug.py"]


def test_patches_are_extracted_from_replies() -> None:
    diff = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"
    assert patches.extract_patch(f"Here it is.\n<patch>\n{diff}</patch>\nDone.") == diff
    assert patches.extract_patch(f"Fix:\n```diff\n{diff}```\n") == diff
    assert patches.extract_patch(f"```\n{diff}```") == diff  # an unlabelled fence holding a diff
    assert patches.extract_patch(f"The change:\n{diff}") == diff
    assert patches.extract_patch("I would rename the variable.") is None
    assert patches.patch_paths("--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+x\n") == ["new.py"]


def test_a_patch_may_not_touch_the_tests_that_grade_it() -> None:
    test_patch = ROWS["jeval-fixtures__textkit-1"]["test_patch"]
    own = ROWS["jeval-fixtures__textkit-1"]["patch"]
    assert patches.test_file_violations(own, test_patch) == []
    edits = (DATA / "patches" / "textkit-1.edits-tests.diff").read_text()
    assert patches.test_file_violations(edits, test_patch) == ["tests/test_slug.py"]
    helper = "--- a/tests/helpers.py\n+++ b/tests/helpers.py\n@@ -1 +1 @@\n-a\n+b\n"
    conftest = "--- /dev/null\n+++ b/textkit/conftest.py\n@@ -0,0 +1 @@\n+x\n"
    assert patches.test_file_violations(helper + conftest, test_patch) == ["tests/helpers.py", "textkit/conftest.py"]
    for row in SWEBENCH_ROWS:  # every gold patch passes the rule
        assert patches.test_file_violations(row["patch"], row["test_patch"]) == [], row["instance_id"]


def test_instances_are_checked() -> None:
    inst = parse_instance(SWEBENCH_ROWS[0])
    assert inst.fail_to_pass[0].endswith("test_collapses_repeated_separators") and inst.version == "1.0"
    with pytest.raises(ValueError, match="missing columns base_commit, patch"):
        parse_instance({k: v for k, v in SWEBENCH_ROWS[0].items() if k not in ("base_commit", "patch")})
    with pytest.raises(ValueError, match="FAIL_TO_PASS is not a JSON list"):
        parse_instance({**SWEBENCH_ROWS[0], "FAIL_TO_PASS": "test_a, test_b"})
    with pytest.raises(ValueError, match="missing column workload"):
        parse_instance(SWEBENCH_ROWS[0], swefficiency=True)


def test_recipes_come_from_the_package_and_the_specs_file(tmp_path: Path) -> None:
    requests = specs.find_spec("psf/requests", "2.0")
    assert requests.source == f"swebench {specs.upstream_version()}" and requests.python == "3.9"
    assert requests.log_parser == "parse_log_requests" and requests.install == "python -m pip install ."
    flask = specs.find_spec("pallets/flask", "2.0")
    assert flask.packages == "requirements.txt" and flask.requirements_paths == ("requirements/dev.txt",)
    with pytest.raises(specs.SpecError, match=r"no recipe for psf/requests version '9\.9' \(it knows 0\.7, .*3\.0\)"):
        specs.find_spec("psf/requests", "9.9")
    with pytest.raises(specs.SpecError, match=r"chartjs/Chart\.js is not a Python repository"):
        specs.find_spec("chartjs/Chart.js", "4.0")
    with pytest.raises(specs.SpecError, match=r"no install recipe for jeval-fixtures/textkit version '1\.0'"):
        specs.find_spec("jeval-fixtures/textkit", "1.0")
    own = specs.find_spec("jeval-fixtures/textkit", "1.0", DATA / "specs.json")
    assert own.harness_packages == ("pytest",) and own.source.startswith("specs_file")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"o/n": {"1": {"python": "3.9", "test_cmd": "pytest", "tset_cmd": "x"}}}))
    with pytest.raises(specs.SpecError, match="unknown keys tset_cmd"):
        specs.find_spec("o/n", "1", bad)


def test_the_parser_of_each_repository_is_upstreams() -> None:
    log_parsers = upstream("swebench.harness.log_parsers")
    base = {parsers.parse_pytest: "parse_log_pytest", parsers.parse_pytest_options: "parse_log_pytest_options",
            parsers.parse_pytest_v2: "parse_log_pytest_v2", parsers.parse_django: "parse_log_django",
            parsers.parse_seaborn: "parse_log_seaborn", parsers.parse_sympy: "parse_log_sympy",
            parsers.parse_matplotlib: "parse_log_matplotlib"}
    python_repos = {repo: fn for repo, fn in log_parsers.MAP_REPO_TO_PARSER.items()
                    if repo in upstream("swebench.harness.constants").MAP_REPO_VERSION_TO_SPECS_PY}
    assert set(python_repos) == set(parsers.REPO_PARSERS)
    for repo, fn in python_repos.items():
        assert base[parsers.PARSERS[parsers.REPO_PARSERS[repo]]] == fn.__name__, repo


def upstream(module: str) -> Any:
    """A module of the installed swebench package (its package ``__init__`` bypassed, as the harness does)."""
    if specs.upstream_constants() is None:
        pytest.fail("the cross-check needs the swebench package: run `make swebench`")
    found = specs.upstream_module(module)  # the bare packages again, should an in-process run have dropped them
    if found is None:
        pytest.fail(f"swebench's {module} cannot be imported: run `make swebench`")
    return found


LOGS = [("parse_log_pytest", "pytest-dev/pytest", PYTEST_LOG), ("parse_log_pytest_options", "psf/requests", OPTIONS_LOG),
        ("parse_log_pytest_v2", "scikit-learn/scikit-learn", V2_LOG), ("parse_log_django", "django/django", DJANGO_LOG),
        ("parse_log_sympy", "sympy/sympy", SYMPY_LOG), ("parse_log_seaborn", "mwaskom/seaborn", SEABORN_LOG),
        ("parse_log_matplotlib", "matplotlib/matplotlib", MATPLOTLIB_LOG)]


@pytest.mark.parametrize(("parser", "repo", "log"), LOGS, ids=[p for p, _, _ in LOGS])
def test_the_parsers_agree_with_the_installed_package(parser: str, repo: str, log: str) -> None:
    theirs = upstream("swebench.harness.log_parsers").MAP_REPO_TO_PARSER[repo](log, None)
    ours = parsers.parse_log(parser, log)
    if parser in ("parse_log_pytest", "parse_log_pytest_options"):
        # 4.1.0 reads pytest's "SKIPPED [1] file:line: reason" count line as a test named "[1]"; main does not
        assert theirs.pop("[1]", None) == ("SKIPPED" if "SKIPPED [1]" in log else None)
    assert ours == theirs


def test_the_verdict_agrees_with_the_installed_package(tmp_path: Path) -> None:
    grading_module = upstream("swebench.harness.grading")
    f2p = ["tests/test_a.py::test_one", "tests/test_a.py::test_three"]
    cases = [([], ["tests/test_a.py::test_one"]), (["tests/test_a.py::test_one"], []), (f2p, []),
             (["tests/test_a.py::test_four"], ["tests/test_a.py::test_two[a-1]"]), (["tests/test_a.py::gone"], [])]
    for i, (fail, keep) in enumerate(cases):
        log = tmp_path / f"{i}.log"
        log.write_text(_log(PYTEST_LOG, 1))
        spec = types.SimpleNamespace(instance_id="x", repo="pytest-dev/pytest", version="5.4", FAIL_TO_PASS=fail,
                                     PASS_TO_PASS=keep)
        report = grading_module.get_eval_report(spec, {"instance_id": "x", "model_patch": "p"}, str(log), True)["x"]
        statuses, why = grading.extract_status_map(log.read_text(), "parse_log_pytest")
        ours = grading.grade_report(statuses, fail, keep)
        assert why is None and report["tests_status"]["FAIL_TO_PASS"] == ours.as_dict()["FAIL_TO_PASS"], (fail, keep)
        assert report["tests_status"]["PASS_TO_PASS"] == ours.as_dict()["PASS_TO_PASS"], (fail, keep)
        assert report["resolved"] == (grading.resolution(ours) == grading.FULL), (fail, keep)


def test_where_4_1_0_grades_differently_we_follow_upstream_main(tmp_path: Path) -> None:
    """A skipped FAIL_TO_PASS test: 4.1.0 counts it nowhere (so resolved), main counts it failed."""
    grading_module = upstream("swebench.harness.grading")
    log = tmp_path / "skip.log"
    log.write_text(_log("SKIPPED tests/test_a.py::test_one", 0))
    spec = types.SimpleNamespace(instance_id="x", repo="pytest-dev/pytest", version="5.4",
                                 FAIL_TO_PASS=["tests/test_a.py::test_one"], PASS_TO_PASS=[])
    assert grading_module.get_eval_report(spec, {"instance_id": "x", "model_patch": "p"}, str(log), True)["x"]["resolved"]
    statuses, _ = grading.extract_status_map(log.read_text(), "parse_log_pytest")
    assert grading.resolution(grading.grade_report(statuses, ["tests/test_a.py::test_one"], [])) == grading.NO


def test_a_mirror_is_found_and_a_missing_one_says_how_to_add_it(tmp_path: Path) -> None:
    assert find_mirror(REPOS, "jeval-fixtures/textkit") == REPOS / "jeval-fixtures__textkit.bundle"
    bare = tmp_path / "jeval-fixtures__textkit.git"
    git("clone", "--quiet", "--mirror", str(REPOS / "jeval-fixtures__textkit.bundle"), str(bare))
    assert find_mirror(tmp_path, "jeval-fixtures/textkit") == bare
    with pytest.raises(RepoError) as err:
        resolve_mirror("jeval-fixtures/ledger", tmp_path, False, tmp_path / "cache")
    text = str(err.value)
    assert "repository jeval-fixtures/ledger is not in the mirrors" in text
    assert f"git clone --mirror https://github.com/jeval-fixtures/ledger {tmp_path}/jeval-fixtures__ledger.git" in text
    assert "fetch_repos = true" in text
    with pytest.raises(RepoError, match="not a repository name"):
        find_mirror(tmp_path, "../etc")


def test_a_checkout_shows_no_commit_after_its_base(tmp_path: Path) -> None:
    mirror = tmp_path / "m.git"
    git("clone", "--quiet", "--mirror", str(REPOS / "jeval-fixtures__textkit.bundle"), str(mirror))
    row = ROWS["jeval-fixtures__textkit-1"]
    later = ROWS["jeval-fixtures__textkit-2"]["base_commit"]  # the fix of textkit-1
    assert has_commit(mirror, row["base_commit"]) and has_commit(mirror, later)
    assert not has_commit(mirror, "0" * 40)
    tree = tmp_path / "tree"
    tree.mkdir()
    checkout(mirror, row["base_commit"], tree)
    log = subprocess.run(["git", "-C", str(tree), "log", "--all", "--format=%H"], capture_output=True, text=True)
    assert log.stdout.split() == [row["base_commit"]]
    assert not has_commit(tree, later)  # pruned, not merely unreferenced
    assert "slugify" in (tree / "textkit" / "slug.py").read_text()


def test_the_fixture_readme_lists_every_file_with_its_checksum() -> None:
    import hashlib

    readme = (DATA / "README.md").read_text(encoding="utf-8")
    assert "Source:" in readme and "Subset rule:" in readme and "Apache-2.0" in readme
    files = sorted(p for p in DATA.rglob("*") if p.is_file() and p.name != "README.md")
    assert {p.relative_to(DATA).as_posix() for p in files} >= {"swebench.jsonl", "swefficiency.jsonl", "specs.json"}
    for path in files:
        line = f"| `{path.relative_to(DATA).as_posix()}` | {path.stat().st_size} | "
        assert line + hashlib.sha256(path.read_bytes()).hexdigest() in readme, path


def test_fetch_repos_clones_a_missing_repository_into_the_cache(tmp_path: Path) -> None:
    served = tmp_path / "served" / "jeval-fixtures" / "textkit"  # <clone_base>/owner/name, as a host serves it
    git("clone", "--quiet", "--mirror", str(REPOS / "jeval-fixtures__textkit.bundle"), str(served))
    cache = tmp_path / "cache"
    base = f"file://{tmp_path / 'served'}"
    mirror = resolve_mirror("jeval-fixtures/textkit", tmp_path / "empty", True, cache, base)
    assert mirror.is_relative_to(cache / "mirrors") and has_commit(mirror, ROWS["jeval-fixtures__textkit-1"]["base_commit"])
    assert resolve_mirror("jeval-fixtures/textkit", None, True, cache, base) == mirror  # cloned once
    with pytest.raises(RepoError, match=r"jeval-fixtures/ledger could not be cloned from file://.*fetch_repos = true"):
        resolve_mirror("jeval-fixtures/ledger", None, True, cache, base)
