"""Every measured figure in the README and docs/ sits next to the command that reproduces it (issue 33).

A *section* (the text from one Markdown heading to the next) states a measured figure when its prose says
so (``measured on/with/by ...``, ``took 12 s``, ``takes about 8 s``, ``timed with``, ``median``) and one of
its lines holds a time or a rate (``5 min 37 s``, ``0.476s``, ``18.4 tok/s``, ``1.15×``). Such a section
must name a command: inline code or a line of a code block that starts with one (``make``, ``python``,
``.venv/bin/...``, ``pytest``, ``jeval``, ``tests/perf/...``, ``/usr/bin/time``, ...). Design values (a
timeout of 10 s, a 64 KiB cap) carry no measurement words and are not asked for a command.

Also: ``make demo``'s expected first-run duration, printed by the Makefile at the start of the build,
is the range the README states.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

FIGURE = re.compile(
    r"\b\d+(?:[.,]\d+)?(?:-\d+(?:\.\d+)?)? ?(?:ms|s|min|minutes|seconds|hours)\b"
    r"|\d ?(?:tok|requests|calls|samples|episodes|actions)/s\b|\d(?:\.\d+)? ?×"
)
MEASURED = re.compile(
    r"\b(?:[Mm]easured (?:on|with|by|here|in|at|under|over|the)\b|[Tt]ook (?:about |the same )?\d"
    r"|takes? about \d|[Tt]imed (?:with|by|on)\b|medians?\b)"
)
_PREFIXES = (
    r"(?:\$ )?(?:make |\.venv[\w-]*/|python3? |PYTHONPATH=|pytest |jeval |tests/perf/|/usr/bin/time|bash |"
    r"cd |nice |time |git |mmdebstrap|uptime)"
)
COMMAND = re.compile(rf"`{_PREFIXES}[^`]*`")
BLOCK_COMMAND = re.compile(rf"^{_PREFIXES}")


def sections(text: str) -> list[tuple[int, str, list[tuple[int, str, bool]]]]:
    """``(first line, heading, [(line number, line, in a code block)])`` per section."""
    out: list[tuple[int, str, list[tuple[int, str, bool]]]] = []
    head, start, lines, fenced = "(top)", 1, [], False
    for number, line in enumerate(text.splitlines(), 1):
        fence = line.startswith("```")
        if not fenced and not fence and re.match(r"#{1,6} ", line):
            out.append((start, head, lines))
            head, start, lines = line, number, []
        lines.append((number, line, fenced or fence))
        if fence:
            fenced = not fenced
    out.append((start, head, lines))
    return out


def unsourced(text: str) -> list[str]:
    """``line: heading`` of each section that states a measured figure and names no command."""
    found = []
    for start, head, lines in sections(text):
        prose = "\n".join(line for _, line, code in lines if not code)
        figures = [number for number, line, _ in lines if FIGURE.search(line)]
        if not figures or not MEASURED.search(prose):
            continue
        if COMMAND.search(prose) or any(code and BLOCK_COMMAND.match(line) for _, line, code in lines):
            continue
        found.append(f"{start}: {head} (figures on lines {figures[:6]})")
    return found


def test_every_measured_figure_names_its_command() -> None:
    missing = {page.relative_to(ROOT).as_posix(): hits for page in PAGES if (hits := unsourced(page.read_text()))}
    assert missing == {}, "sections stating measured figures without the command that reproduces them"


def test_the_check_sees_a_figure_without_its_command() -> None:
    bare = "# Setup\n\nOn a fresh clone the demo took 5 min 37 s on two cores.\n"
    assert unsourced(bare) == ["1: # Setup (figures on lines [3])"]
    assert unsourced(bare + "\nMeasured with `python3 tests/perf/bench_demo.py --cold`.\n") == []
    assert unsourced(bare + "\n```sh\nmake demo\n```\n") == []
    # a design value is not a measurement, and a command inside a code block's prose does not count twice
    assert unsourced("# Limits\n\nEach call may run 10 s; the cap is 64 KiB.\n") == []
    assert unsourced("# A\n\nThe median call took 3 ms.\n\n# B\n\n`make demo`\n") == ["1: # A (figures on lines [3])"]


def _minutes_range(text: str, where: str) -> tuple[int, int]:
    found = re.search(r"about (\d+)-(\d+) minutes on two cores", text)
    assert found, f"{where} states no 'about N-M minutes on two cores' for make demo's first run"
    return int(found[1]), int(found[2])


def test_make_demo_prints_the_range_the_readme_states() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("$(VENV)/.installed:", 1)[1].split("\n\n", 1)[0]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert _minutes_range(recipe, "the Makefile's install recipe") == _minutes_range(readme, "README.md")
