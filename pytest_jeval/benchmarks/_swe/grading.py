"""Grading an instance as SWE-bench grades it: the test command, the status map, the report, the verdict.

The evaluation script (:func:`eval_script`) does what upstream's does after the model's patch is applied:
the recipe's ``eval_commands``, its ``install`` again, the test files of ``test_patch`` reset to the base
commit, ``test_patch`` applied, then the recipe's ``test_cmd`` with the test directives (the files
``test_patch`` touches, Django's as dotted modules) between the start and end markers, the test command's
exit status after the end marker, and the test files reset again.

The verdict follows upstream's ``grading.py`` as it grades today (main, swebench 5.x):

* the status map is parsed from the text between the markers, else from the whole log; a map that is
  still empty without a sign that a suite ran means the tests never ran (no FAIL_TO_PASS test passes);
  a test command that exited non-zero while the log shows no failure means the log does not describe
  the run (a patch printing its own ``PASSED`` lines): both are *not resolved*;
* a FAIL_TO_PASS test succeeds when it is ``PASSED`` or ``XFAIL`` and fails when missing, ``FAILED``,
  ``ERROR`` or ``SKIPPED``; a PASS_TO_PASS test is maintained when ``PASSED``, ``XFAIL`` or ``SKIPPED``;
  an expected id cut off inside its parametrize brackets matches the ids it begins when they agree;
* FULL when every FAIL_TO_PASS test succeeds and every PASS_TO_PASS test is maintained (an empty list
  counts as all), PARTIAL when some but not all FAIL_TO_PASS tests succeed and every PASS_TO_PASS test
  is maintained, NO otherwise. Only FULL counts as resolved.

Where release 4.1.0 (the package ``make swebench`` installs for its recipes) grades differently, the
difference is listed in docs/swebench.md and checked by the cross-check test.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from collections.abc import Sequence
from typing import Any

from pytest_jeval.benchmarks._swe.parsers import parse_log

__all__ = ["END", "EXIT", "FULL", "NO", "PARTIAL", "START", "TEST_PATCH_FAILED", "Report", "diff_files", "eval_script",
           "extract_status_map", "grade_report", "resolution", "test_directives", "test_files"]

START = ">>>>> Start Test Output"
END = ">>>>> End Test Output"
EXIT = ">>>>> Test Exit Code"
TEST_PATCH_FAILED = "JEVAL_TEST_PATCH_FAILED"
"""Printed when ``test_patch`` does not apply: the instance cannot be graded (a harness failure)."""
FULL, PARTIAL, NO = "RESOLVED_FULL", "RESOLVED_PARTIAL", "RESOLVED_NO"
NON_TEST_EXTS = (".json", ".png", "csv", ".txt", ".md", ".jpg", ".jpeg", ".pkl", ".yml", ".yaml", ".toml")
"""Files of ``test_patch`` that are no test directive (upstream's list, ``csv`` without its dot included)."""
HEREDOC = "EOF_114329324912"
# evidence that a runner executed when the status map is empty (upstream's SUITE_RAN, for its JS runners)
SUITE_RAN = re.compile(
    r"Executed [1-9]\d* of \d+|TOTAL: [1-9]\d* (?:SUCCESS|FAILED)|[1-9]\d* passing|Tests:\s+[1-9]\d*"
    r"|Test Suites:\s+(?:\d+ \w+, )*[1-9]\d* total|^# tests [1-9]\d*|[1-9]\d* specs?, \d+ failures?|': ok$",
    re.M)
_EXIT_CODE = re.compile(rf"{re.escape(EXIT)}:\s*(-?\d+)")
_DIFF_GIT = re.compile(r"^diff --git a/(.*) b/(.*)$", re.M)


def diff_files(diff: str) -> list[tuple[str | None, str | None]]:
    """``(old path, new path)`` of each file a unified diff touches (None for ``/dev/null``)."""
    files: list[tuple[str | None, str | None]] = []
    old: str | None = None
    lines = diff.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            old = _diff_path(line[4:])
            files.append((old, _diff_path(lines[i + 1][4:])))
    if not files:  # headers only (renames, mode changes, binary files)
        files = [(a, b) for a, b in _DIFF_GIT.findall(diff)]
    return files


def _diff_path(text: str) -> str | None:
    path = text.split("\t", 1)[0].strip()
    if path.startswith('"') and path.endswith('"'):
        path = path[1:-1]
    if path == "/dev/null":
        return None
    return path[2:] if path[:2] in ("a/", "b/") else path


def test_files(test_patch: str) -> list[str]:
    """The existing files ``test_patch`` modifies (upstream's ``get_modified_files``): reset before and after."""
    return [old for old, _ in diff_files(test_patch) if old is not None]


def test_directives(repo: str, test_patch: str) -> list[str]:
    """What the test command is given: the files ``test_patch`` touches, without data files; Django's as
    module names (``tests/a/b.py`` -> ``a.b``)."""
    directives = [d for d in re.findall(r"diff --git a/.* b/(.*)", test_patch)
                  if not any(d.endswith(ext) for ext in NON_TEST_EXTS)]
    if repo == "django/django":
        out = []
        for d in directives:
            d = d[: -len(".py")] if d.endswith(".py") else d
            d = d[len("tests/"):] if d.startswith("tests/") else d
            out.append(d.replace("/", "."))
        directives = out
    return directives


def eval_script(*, repo: str, base_commit: str, test_patch: str, test_cmd: str, install: str,
                eval_commands: Sequence[str], directives: Sequence[str] | None = None) -> str:
    """The bash script that installs, applies ``test_patch`` and runs the tests (see the module docstring)."""
    files = " ".join(shlex.quote(f) for f in test_files(test_patch))
    reset = f"git checkout {base_commit} {files}" if files else 'echo "No test files to reset"'
    command = " ".join([test_cmd, *(test_directives(repo, test_patch) if directives is None else directives)])
    lines = [*eval_commands]
    if install:
        lines.append(install)
    lines += [reset]
    if test_patch.strip():
        lines.append(f"git apply -v - <<'{HEREDOC}'\n{test_patch}\n{HEREDOC}")
        lines.append(f"[ $? -eq 0 ] || echo '{TEST_PATCH_FAILED}'")
    lines += [f"echo '{START}'", command, "jeval_rc=$?", f"echo '{END}'", f'echo "{EXIT}: $jeval_rc"', reset]
    return "\n".join(lines) + "\n"


def extract_status_map(log: str, parser: str) -> tuple[dict[str, str], str | None]:
    """``(status map, why the log cannot be graded or None)`` (see the module docstring)."""
    if START not in log or END not in log:
        return {}, "the test output markers are missing: the tests did not run to their end"
    section = log.split(START, 1)[1].split(END, 1)[0]
    statuses = parse_log(parser, section) or parse_log(parser, log)
    if not statuses and not SUITE_RAN.search(log):
        return {}, "the tests never ran: the log has no test results"
    exit_code = exit_status(log)
    if exit_code not in (None, 0) and statuses and not any(s in ("FAILED", "ERROR") for s in statuses.values()):
        return {}, (f"the test command exited with status {exit_code} but its log reports no failure: the log "
                    "does not describe the run")
    return statuses, None


def exit_status(log: str) -> int | None:
    """The test command's exit status recorded after the end marker, or None."""
    match = _EXIT_CODE.search(log)
    return int(match.group(1)) if match else None


def _resolve(case: str, statuses: dict[str, str]) -> str | None:
    """The status map's key for ``case``; an id cut off inside ``[...]`` matches the ids it begins when they
    agree on passing."""
    if case in statuses:
        return case
    if case.count("[") > case.count("]"):
        matches = [k for k in statuses if k.startswith(case)]
        if matches and len({statuses[k] in ("PASSED", "XFAIL") for k in matches}) == 1:
            return matches[0]
    return None


def passed(case: str, statuses: dict[str, str]) -> bool:
    """A FAIL_TO_PASS test that succeeded."""
    key = _resolve(case, statuses)
    return key is not None and statuses[key] in ("PASSED", "XFAIL")


def maintained(case: str, statuses: dict[str, str]) -> bool:
    """A PASS_TO_PASS test that still holds (skipped is no regression)."""
    key = _resolve(case, statuses)
    return passed(case, statuses) or (key is not None and statuses[key] == "SKIPPED")


def failed(case: str, statuses: dict[str, str]) -> bool:
    """Missing, failed, errored or skipped."""
    key = _resolve(case, statuses)
    return key is None or statuses[key] in ("FAILED", "ERROR", "SKIPPED")


@dataclasses.dataclass(frozen=True)
class Report:
    """Which expected tests succeeded and which failed."""

    f2p_success: list[str]
    f2p_failure: list[str]
    p2p_success: list[str]
    p2p_failure: list[str]

    def as_dict(self) -> dict[str, Any]:
        """Upstream's ``tests_status`` layout."""
        return {"FAIL_TO_PASS": {"success": self.f2p_success, "failure": self.f2p_failure},
                "PASS_TO_PASS": {"success": self.p2p_success, "failure": self.p2p_failure}}


def grade_report(statuses: dict[str, str], fail_to_pass: Sequence[str], pass_to_pass: Sequence[str]) -> Report:
    """The report of ``statuses`` against the expected tests."""
    f2p_s, f2p_f, p2p_s, p2p_f = [], [], [], []
    for case in fail_to_pass:
        if passed(case, statuses):
            f2p_s.append(case)
        elif failed(case, statuses):
            f2p_f.append(case)
    for case in pass_to_pass:
        if maintained(case, statuses):
            p2p_s.append(case)
        elif failed(case, statuses):
            p2p_f.append(case)
    return Report(f2p_s, f2p_f, p2p_s, p2p_f)


def _rate(success: list[str], failure: list[str]) -> float:
    total = len(success) + len(failure)
    return 1.0 if total == 0 else len(success) / total


def resolution(report: Report) -> str:
    """FULL, PARTIAL or NO (see the module docstring)."""
    f2p, p2p = _rate(report.f2p_success, report.f2p_failure), _rate(report.p2p_success, report.p2p_failure)
    if f2p == 1 and p2p == 1:
        return FULL
    if 0 < f2p < 1 and p2p == 1:
        return PARTIAL
    return NO
