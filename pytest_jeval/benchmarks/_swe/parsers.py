"""Test log parsers of SWE-bench's Python repositories: a log in, ``{test name: status}`` out.

Written for this project to the rules of SWE-bench's ``harness/log_parsers/python.py`` as upstream
grades today (main, swebench 5.x): pytest's ``-rA`` summary lines (``PASSED path::test``), with pytest's
``SKIPPED [N] file:line`` count lines left out; the ``pytest_options`` variant that shortens parametrize
ids holding file paths; the ``pytest_v2`` variant that strips colour codes, keeps ids with spaces and
reads old pytest's ``name STATUS`` lines; Django's ``test ... ok`` runner lines; sympy's and seaborn's
own formats; matplotlib's mouse-button names. Statuses are upstream's: ``PASSED``, ``FAILED``,
``SKIPPED``, ``ERROR``, ``XFAIL``. ``tests/benchmarks/test_swe_grading.py`` checks them against the
installed ``swebench`` package's parsers on the same logs.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["PARSERS", "REPO_PARSERS", "STATUSES", "parse_log"]

STATUSES = ("FAILED", "PASSED", "SKIPPED", "ERROR", "XFAIL")
Parser = Callable[[str], dict[str, str]]
_COUNT = re.compile(r"^\[\d+\]$")
_PARAM = re.compile(r"(.*?)\[(.*)\]")
_COLOUR = re.compile(r"\[(\d+)m")
_CONTROL = {c: None for c in range(1, 32)}


def _status_of(line: str) -> str | None:
    return next((s for s in STATUSES if line.startswith(s)), None)


def _skip_count(status: str, name: str) -> bool:
    """pytest's ``SKIPPED [2] file.py:10: reason`` summary: ``[2]`` is a count, not a test."""
    return status == "SKIPPED" and bool(_COUNT.match(name))


def _summary_words(line: str, status: str) -> list[str] | None:
    """The words of a ``STATUS name ...`` line (FAILED's `` - message`` separator dropped), or None."""
    if status == "FAILED":
        line = line.replace(" - ", " ")
    words = line.split()
    if len(words) < 2 or _skip_count(words[0], words[1]):
        return None
    return words


def parse_pytest(log: str) -> dict[str, str]:
    """``PASSED tests/test_x.py::test_a`` lines: the second word is the test."""
    found: dict[str, str] = {}
    for line in log.split("\n"):
        status = _status_of(line)
        words = _summary_words(line, status) if status else None
        if words:
            found[words[1]] = words[0]
    return found


def _short_option(name: str) -> str:
    match = _PARAM.search(name)
    if not match:
        return name
    main, option = match.groups()
    if option.startswith("/") and not option.startswith("//") and "*" not in option:
        option = "/" + option.split("/")[-1]  # a path parameter: its last component only
    return f"{main}[{option}]"


def parse_pytest_options(log: str) -> dict[str, str]:
    """As :func:`parse_pytest`, with a parametrize id that is an absolute path cut to its last component."""
    found: dict[str, str] = {}
    for line in log.split("\n"):
        status = _status_of(line)
        words = _summary_words(line, status) if status else None
        if words:
            found[_short_option(words[1])] = words[0]
    return found


def parse_pytest_v2(log: str) -> dict[str, str]:
    """Colour codes and control characters removed; ``STATUS id with spaces`` (FAILED cut at `` - ``), or
    old pytest's ``id STATUS`` lines."""
    found: dict[str, str] = {}
    for raw in log.split("\n"):
        line = _COLOUR.sub("", raw).translate(_CONTROL)
        status = _status_of(line)
        if status:
            if status == "FAILED":
                line = line.split(" - ", 1)[0]
            words = line.split()
            if len(words) >= 2 and not _skip_count(words[0], words[1]):
                found[" ".join(words[1:])] = words[0]
        elif any(line.endswith(s) for s in STATUSES):
            words = line.split()
            if len(words) >= 2:
                found[" ".join(words[:-1])] = words[-1]
    return found


_DJANGO_PASS = (" ... ok", " ... OK", " ...  OK")
_DJANGO_INTERRUPTED = (
    r"^(.*?)\s\.\.\.\sTesting\ against\ Django\ installed\ in\ ((?s:.*?))\ silenced\)\.\nok$",
    r"^(.*?)\s\.\.\.\sInternal\ Server\ Error:\ \/(.*)\/\nok$",
    r"^(.*?)\s\.\.\.\sSystem check identified no issues \(0 silenced\)\nok$",
)


def parse_django(log: str) -> dict[str, str]:
    """Django's runner at verbosity 2: ``test (module.Class) ... ok|skipped|FAIL|ERROR`` and ``FAIL: test``."""
    found: dict[str, str] = {}
    previous: str | None = None
    for raw in log.split("\n"):
        line = raw.strip()
        if "--version is equivalent to version" in line:
            found["--version is equivalent to version"] = "PASSED"
        if " ... " in line:
            previous = line.split(" ... ")[0]
        for suffix in _DJANGO_PASS:
            if line.endswith(suffix):
                if line.strip().startswith("Applying sites.0002_alter_domain_unique...test_no_migrations"):
                    line = line.split("...", 1)[-1].strip()  # django__django-7188: a migration line runs into it
                found[line.rsplit(suffix, 1)[0]] = "PASSED"
                break
        if " ... skipped" in line:
            found[line.split(" ... skipped")[0]] = "SKIPPED"
        if line.endswith(" ... FAIL"):
            found[line.split(" ... FAIL")[0]] = "FAILED"
        if line.startswith("FAIL:"):
            found[line.split()[1].strip()] = "FAILED"
        if line.endswith(" ... ERROR"):
            found[line.split(" ... ERROR")[0]] = "ERROR"
        if line.startswith("ERROR:"):
            found[line.split()[1].strip()] = "ERROR"
        if line.lstrip().startswith("ok") and previous is not None:
            found[previous] = "PASSED"  # output printed between " ... " and its "ok"
    for pattern in _DJANGO_INTERRUPTED:
        for match in re.finditer(pattern, log, re.MULTILINE):
            found[match.group(1)] = "PASSED"
    return found


def parse_seaborn(log: str) -> dict[str, str]:
    """seaborn: ``FAILED id``, ``PASSED id``, or ``id PASSED ...`` lines."""
    found: dict[str, str] = {}
    for line in log.split("\n"):
        words = line.split()
        if len(words) < 2:
            continue
        if line.startswith("FAILED"):
            found[words[1]] = "FAILED"
        elif " PASSED " in line:
            if words[1] == "PASSED":
                found[words[0]] = "PASSED"
        elif line.startswith("PASSED"):
            found[words[1]] = "PASSED"
    return found


def parse_sympy(log: str) -> dict[str, str]:
    """sympy's ``bin/test``: ``___ file.py:test_name ___`` failure headers, then ``test_x ok|F|E`` lines."""
    found: dict[str, str] = {}
    for match in re.findall(r"(_*) (.*)\.py:(.*) (_*)", log):
        found[f"{match[1]}.py:{match[2]}"] = "FAILED"
    for raw in log.split("\n"):
        line = raw.strip()
        if not line.startswith("test_"):
            continue
        if line.endswith(" E"):
            found[line.split()[0]] = "ERROR"
        if line.endswith(" F"):
            found[line.split()[0]] = "FAILED"
        if line.endswith(" ok"):
            found[line.split()[0]] = "PASSED"
    return found


def parse_matplotlib(log: str) -> dict[str, str]:
    """As :func:`parse_pytest`, with ``MouseButton.LEFT``/``RIGHT`` written as 1 and 3 first."""
    return parse_pytest(log.replace("MouseButton.LEFT", "1").replace("MouseButton.RIGHT", "3"))


PARSERS: dict[str, Parser] = {
    "parse_log_pytest": parse_pytest,
    "parse_log_pytest_options": parse_pytest_options,
    "parse_log_pytest_v2": parse_pytest_v2,
    "parse_log_django": parse_django,
    "parse_log_seaborn": parse_seaborn,
    "parse_log_sympy": parse_sympy,
    "parse_log_matplotlib": parse_matplotlib,
    # upstream's per-repository names for the same parsers
    **dict.fromkeys(("parse_log_astroid", "parse_log_flask", "parse_log_marshmallow", "parse_log_pvlib",
                     "parse_log_pyvista", "parse_log_sqlfluff", "parse_log_xarray"), parse_pytest),
    **dict.fromkeys(("parse_log_pydicom", "parse_log_requests", "parse_log_pylint"), parse_pytest_options),
    **dict.fromkeys(("parse_log_astropy", "parse_log_scikit", "parse_log_sphinx"), parse_pytest_v2),
}
"""Every parser by upstream's function name."""

REPO_PARSERS: dict[str, str] = {
    "astropy/astropy": "parse_log_astropy",
    "django/django": "parse_log_django",
    "marshmallow-code/marshmallow": "parse_log_marshmallow",
    "matplotlib/matplotlib": "parse_log_matplotlib",
    "mwaskom/seaborn": "parse_log_seaborn",
    "pallets/flask": "parse_log_flask",
    "psf/requests": "parse_log_requests",
    "pvlib/pvlib-python": "parse_log_pvlib",
    "pydata/xarray": "parse_log_xarray",
    "pydicom/pydicom": "parse_log_pydicom",
    "pylint-dev/astroid": "parse_log_astroid",
    "pylint-dev/pylint": "parse_log_pylint",
    "pytest-dev/pytest": "parse_log_pytest",
    "pyvista/pyvista": "parse_log_pyvista",
    "scikit-learn/scikit-learn": "parse_log_scikit",
    "sqlfluff/sqlfluff": "parse_log_sqlfluff",
    "sphinx-doc/sphinx": "parse_log_sphinx",
    "sympy/sympy": "parse_log_sympy",
}
"""Upstream's parser of each Python repository (``MAP_REPO_TO_PARSER_PY``)."""


def parse_log(name: str, log: str) -> dict[str, str]:
    """The status map of ``log`` by the parser called ``name``."""
    return PARSERS[name](log)
