"""A model's patch: taken from a reply, checked against the tests that grade it, applied as upstream applies it.

**Extraction** (``backend = "direct"``): the text between ``<patch>`` and ``</patch>`` (the tags of
upstream's own prompts), else the fenced blocks that hold a diff (```` ```diff ````, ```` ```patch ````,
or any fence whose body starts like one), joined, else the reply from its first ``diff --git`` or
``--- `` line. A reply with none of these has no patch.

**The test-file rule:** a patch may not touch the tests that grade it: a file ``test_patch`` touches, any
file below the test folders holding those files (the nearest ancestor named ``test``, ``tests``,
``testing`` or ``e2e``: ``tests/`` for Django, ``sklearn/linear_model/tests/``), or any ``conftest.py``.
Such a patch fails with the paths named, before anything runs. (The gold patches satisfy the rule:
upstream split each pull request into ``patch`` and ``test_patch`` by these folder names.)

**Applying** (in the sandbox, in a fresh copy of the instance's checkout): SWE-bench tries ``git apply
--verbose``, ``git apply --verbose --reject`` and ``patch --batch --fuzz=5 -p1 -i`` in turn, SWE-fficiency
``git apply --allow-empty -v`` and ``patch --batch --fuzz=5 -p1 -i``; the first that exits 0 applied it.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from pytest_jeval.benchmarks._swe.grading import diff_files

__all__ = ["SWEBENCH_APPLY", "SWEFFICIENCY_APPLY", "apply_script", "extract_patch", "patch_paths",
           "test_file_violations"]

SWEBENCH_APPLY = ("git apply --verbose", "git apply --verbose --reject", "patch --batch --fuzz=5 -p1 -i")
SWEFFICIENCY_APPLY = ("git apply --allow-empty -v", "patch --batch --fuzz=5 -p1 -i")
TEST_FOLDERS = ("test", "tests", "testing", "e2e")
PATCH_FILE = ".jeval/model.patch"
"""Where the patch is written in the checkout (a folder git is told to ignore)."""
APPLIED = "JEVAL_APPLIED_WITH:"
_TAGGED = re.compile(r"<patch>\n?(.*?)</patch>", re.S)
_FENCE = re.compile(r"```([^\n`]*)\n(.*?)```", re.S)
_START = re.compile(r"^(diff --git |--- )", re.M)


def _looks_like_diff(text: str) -> bool:
    return bool(re.search(r"^(diff --git |--- \S|@@ )", text, re.M))


def _ending(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def extract_patch(reply: str) -> str | None:
    """The unified diff in a model's reply (see the module docstring), or None."""
    tagged = _TAGGED.findall(reply)
    if tagged:
        return _ending("\n".join(t.strip("\n") for t in tagged))
    fenced = [body for lang, body in _FENCE.findall(reply)
              if lang.strip().lower() in ("diff", "patch") or _looks_like_diff(body)]
    if fenced:
        return _ending("\n".join(f.strip("\n") for f in fenced))
    start = _START.search(reply)
    if start is not None:
        return _ending(reply[start.start():].rstrip())
    return None


def patch_paths(diff: str) -> list[str]:
    """Every path a diff touches (old and new names)."""
    paths: list[str] = []
    for old, new in diff_files(diff):
        for p in (old, new):
            if p is not None and p not in paths:
                paths.append(p)
    return paths


def _test_folders(test_patch: str) -> set[str]:
    folders: set[str] = set()
    for path in patch_paths(test_patch):
        parents = PurePosixPath(path).parents
        for parent in parents:
            if parent.name in TEST_FOLDERS:
                folders.add(parent.as_posix())
                break
    return folders


def test_file_violations(diff: str, test_patch: str) -> list[str]:
    """The paths of ``diff`` that are tests grading the instance (see the module docstring); empty when none."""
    protected = set(patch_paths(test_patch))
    folders = _test_folders(test_patch)
    bad = []
    for path in patch_paths(diff):
        p = PurePosixPath(path)
        if path in protected or p.name == "conftest.py" or any(
                f == path or path.startswith(f + "/") for f in folders):
            bad.append(path)
    return bad


def apply_script(methods: tuple[str, ...]) -> str:
    """Bash that tries each method on :data:`PATCH_FILE` until one works and says which (exit 1: none did)."""
    lines = []
    for method in methods:
        lines.append(f"echo '>>>>> {method}'")
        lines.append(f"if {method} {PATCH_FILE} 2>&1; then echo '{APPLIED} {method}'; exit 0; fi")
    lines.append("exit 1")
    return "\n".join(lines) + "\n"
